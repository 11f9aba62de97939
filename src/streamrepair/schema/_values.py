"""JSON-value helpers for :mod:`streamrepair.schema.rules`: copying caller data,
addressing it by path, reading literals and containers embedded in strings (strictly),
unwrapping markdown autolinks, and short renderings for notes and issues.

Nothing here is public API.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

JsonPath = tuple[str | int, ...]

#: Longest string that is tried as embedded JSON (DeepSeek-TUI's
#: ``normalize_schema_json_containers`` uses the same 64 KiB cap).
MAX_EMBEDDED_JSON_CHARS: Final = 64 * 1024
#: Most JSON-string layers unwrapped for one value (``"\\"[1]\\""`` is two layers).
MAX_DECODE_LAYERS: Final = 4
#: Deepest caller object copied (deeper means a reference cycle, or absurd input).
MAX_COPY_DEPTH: Final = 10_000
#: Longest summary of a value in notes and issues.
MAX_SUMMARY_CHARS: Final = 80
#: Longest rendering of a schema part ("valid shape") in an issue.
MAX_SHAPE_CHARS: Final = 300
#: Longest jsonschema message quoted as is (its messages embed the whole instance).
_MAX_NATIVE_MESSAGE: Final = 120
#: Longest string tried as a number literal.
_MAX_NUMBER_CHARS: Final = 100
#: Most rounds of autolink unwrapping on one string (links nested in links).
_MAX_AUTOLINK_ROUNDS: Final = 4


# --------------------------------------------------------------------------- values


def copy_json(value: Any) -> tuple[Any, int]:
    """A fresh copy of JSON data and its depth (a scalar is depth 0). Tuples are read
    as lists. Raises ``TypeError`` naming the path of anything that is not JSON data."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value, 0
    if not isinstance(value, (dict, list, tuple)):
        raise TypeError(f"args must be JSON data; found {type(value).__name__} at $")
    root: Any = {} if isinstance(value, dict) else []
    deepest = 1
    stack: list[tuple[Any, Any, int, JsonPath]] = [(value, root, 1, ())]
    while stack:
        source, target, depth, path = stack.pop()
        if depth > MAX_COPY_DEPTH:
            raise TypeError(
                f"args nest deeper than {MAX_COPY_DEPTH} levels at {path_text(path)} "
                "(a reference cycle?)"
            )
        deepest = max(deepest, depth)
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in items:
            if isinstance(source, dict) and not isinstance(key, str):
                raise TypeError(
                    f"args must be JSON data; found a {type(key).__name__} key at {path_text(path)}"
                )
            if isinstance(item, (dict, list, tuple)):
                child: Any = {} if isinstance(item, dict) else []
                stack.append((item, child, depth + 1, (*path, key)))
            elif isinstance(item, (str, int, float, bool)) or item is None:
                child = item
            else:
                raise TypeError(
                    f"args must be JSON data; found {type(item).__name__} at "
                    f"{path_text((*path, key))}"
                )
            if isinstance(target, dict):
                target[key] = child
            else:
                target.append(child)
    return root, deepest


def get_at(root: Any, path: JsonPath) -> tuple[bool, Any]:
    """``(True, value)`` at ``path`` in ``root``, or ``(False, None)``."""
    current = root
    for step in path:
        in_object = isinstance(current, dict) and isinstance(step, str) and step in current
        in_array = isinstance(current, list) and isinstance(step, int) and 0 <= step < len(current)
        if not (in_object or in_array):
            return False, None
        current = current[step]
    return True, current


def replace_at(root: Any, path: JsonPath, new: Any) -> Any:
    """Put ``new`` at ``path`` (which must exist); returns the (possibly new) root."""
    if not path:
        return new
    _, parent = get_at(root, path[:-1])
    parent[path[-1]] = new
    return root


def delete_key(parent: dict[str, Any], key: str) -> None:
    del parent[key]


def restore_keys(parent: dict[str, Any], order: tuple[str, ...], restored: dict[str, Any]) -> None:
    """Put ``restored`` keys back into ``parent``, in ``order`` where possible."""
    current = dict(parent)
    current.update(restored)
    rebuilt = {key: current.pop(key) for key in order if key in current}
    rebuilt.update(current)
    parent.clear()
    parent.update(rebuilt)


# --------------------------------------------------------------------------- text

_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def path_text(path: JsonPath) -> str:
    """``("files", 0, "path")`` -> ``$.files[0].path``; odd keys as ``$["a b"]``."""
    parts = ["$"]
    for step in path:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif _IDENTIFIER.fullmatch(step):
            parts.append(f".{step}")
        else:
            parts.append(f"[{json.dumps(step, ensure_ascii=False)}]")
    return "".join(parts)


def pointer(path: JsonPath) -> str:
    return "#" + "".join("/" + str(s).replace("~", "~0").replace("/", "~1") for s in path)


def json_type(value: Any) -> str:
    """The JSON type name of a value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _render(value: Any, budget: int) -> str:
    """Compact JSON of ``value``, stopping soon after ``budget`` characters."""
    if isinstance(value, str):
        text = json.dumps(value[: max(budget, 0)], ensure_ascii=False)
        return text if len(value) <= budget else text[:-1] + '..."'
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return json.dumps(value)
        except ValueError:  # beyond the int-to-string conversion limit
            return f"<integer of {value.bit_length()} bits>"
    if value is None or isinstance(value, (bool, float)):
        return json.dumps(value)
    if isinstance(value, (Mapping, list, tuple)):
        is_map = isinstance(value, Mapping)
        items: Iterator[Any] = iter(value.items() if is_map else value)  # type: ignore[union-attr]
        parts: list[str] = []
        used = 2
        for item in items:
            if used >= budget:
                parts.append("...")
                break
            if is_map:
                key, val = item
                part = f"{_render(str(key), budget - used)}:{_render(val, budget - used)}"
            else:
                part = _render(item, budget - used)
            parts.append(part)
            used += len(part) + 1
        inner = ",".join(parts)
        return "{" + inner + "}" if is_map else "[" + inner + "]"
    return f"<{type(value).__name__}>"


def summary(value: Any, limit: int = MAX_SUMMARY_CHARS) -> str:
    """A short compact-JSON rendering of ``value``; long ones end in ``...`` and long
    strings say their length. Never renders more than about ``limit`` characters."""
    text = _render(value, limit)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    if isinstance(value, str) and len(value) > limit:
        text += f" ({len(value)} chars)"
    return text


def _shape(schema: Any) -> str:
    return summary(schema, MAX_SHAPE_CHARS)


_ARTICLE: Final = {"array": "an array", "object": "an object", "integer": "an integer"}


def _types_phrase(types: Any) -> str:
    names = [types] if isinstance(types, str) else [t for t in types or () if isinstance(t, str)]
    words = [_ARTICLE.get(name, "null" if name == "null" else f"a {name}") for name in names]
    return " or ".join(words) if words else "a valid value"


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    return f"{json_type(value)} {summary(value)}"


def _schema_phrase(schema: Any) -> str:
    if schema is True:
        return "any value"
    if isinstance(schema, Mapping):
        if "type" in schema:
            return _types_phrase(schema["type"])
        if "const" in schema:
            return summary(schema["const"], 40)
        if "enum" in schema:
            return "one of " + summary(schema["enum"], 40)
    return "a value matching " + summary(schema, 60)


def issue_fields(error: Any) -> dict[str, Any]:
    """The fields of a ``SchemaIssue`` for one ``jsonschema`` error. Built from the
    error's parts, never from its message alone, which quotes the whole instance."""
    path: JsonPath = tuple(error.absolute_path)
    keyword = error.validator if isinstance(error.validator, str) else "false"
    received = _describe(error.instance)
    shape = _shape(error.schema)
    if keyword == "type":
        expected = _types_phrase(error.validator_value)
        message = f"expected {expected}, received {received}."
    elif keyword == "required":
        required = error.validator_value if isinstance(error.validator_value, list) else []
        missing = next(
            (k for k in required if error.message == f"{k!r} is a required property"), None
        )
        if isinstance(missing, str):
            path = (*path, missing)
            declared = error.schema.get("properties") if isinstance(error.schema, dict) else None
            if isinstance(declared, dict) and missing in declared:
                shape = _shape(declared[missing])
        expected, received = "a value", "nothing"
        message = "required property is missing."
    elif keyword in ("anyOf", "oneOf"):
        alternatives = error.validator_value if isinstance(error.validator_value, list) else []
        expected = "one of: " + "; ".join(_schema_phrase(alt) for alt in alternatives[:6])
        if keyword == "oneOf" and not error.context:
            message = f"matches more than one alternative ({expected}); received {received}."
        else:
            message = f"expected {expected}, received {received}."
    elif keyword in ("enum", "const"):
        expected = ("one of " if keyword == "enum" else "") + summary(error.validator_value, 60)
        message = f"expected {expected}, received {received}."
    elif keyword == "false":
        expected = "no value"
        message = f"no value is allowed here; received {received}."
    else:
        expected = f"{keyword} {summary(error.validator_value, 40)}"
        message = f"does not satisfy {expected}; received {received}."
        if len(error.message) <= _MAX_NATIVE_MESSAGE:  # jsonschema's own words when short
            message = f"{error.message} ({keyword})."
    return {
        "path": path,
        "keyword": keyword,
        "message": message,
        "expected": expected,
        "received": received,
        "valid_shape": shape,
    }


# --------------------------------------------------------------------------- embedded values


class No:
    """Marker for "this rule does not fit"."""


NO: Final = No()
_INTEGER_RE: Final = re.compile(r"-?(?:0|[1-9][0-9]*)")
_NUMBER_RE: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_JSON_SPACE: Final = " \t\n\r"
# TR v1.0.3+ regex (link text equal to the URL minus scheme, or to its one path segment
# after the host), narrowed: no newline in the text, no space or brackets in the host;
# widened to one slash after the scheme, because Claude Code normalises a file path like
# ``path.resolve`` before its hooks see it, collapsing ``http://`` to ``http:/``
# (measured with 2.1.332: ``[a.md](http://a.md)`` arrives as ``<cwd>/[a.md](http:/a.md)``).
_AUTOLINK_RE: Final = re.compile(r"\[([^\]\n]+)\]\(https?:/{1,2}(?:[^/\s()\[\]]+/)?\1\)")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        raise ValueError("number out of range")
    return number


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("duplicate key")
    return result


def _strict_loads(text: str) -> Any:
    return json.loads(
        text,
        parse_constant=_reject_constant,
        parse_float=_finite_float,
        object_pairs_hook=_no_duplicate_keys,
    )


def parse_container(text: str, expected: frozenset[str], depth_budget: int) -> Any:
    """Rule 2: the container ``text`` strictly encodes (through up to
    :data:`MAX_DECODE_LAYERS` string layers), when it is of an expected type."""
    wanted: tuple[type, ...] = ()
    if "array" in expected:
        wanted += (list,)
    if "object" in expected:
        wanted += (dict,)
    if not wanted:
        return NO
    current = text
    for _ in range(MAX_DECODE_LAYERS):
        if len(current) > MAX_EMBEDDED_JSON_CHARS:
            return NO
        stripped = current.strip(_JSON_SPACE)
        if not stripped or stripped[0] not in '[{"':
            return NO
        try:
            parsed = _strict_loads(stripped)
        except (ValueError, RecursionError):
            return NO
        if isinstance(parsed, str):
            current = parsed
            continue
        if isinstance(parsed, wanted) and copy_json(parsed)[1] <= depth_budget:
            return parsed
        return NO
    return NO


def parse_scalar(text: str, expected: frozenset[str]) -> Any:
    """Rule 5: the number, integer, boolean or null ``text`` is exactly, when that type
    is expected. ``"1.5"`` is not an integer; ``" 30"``, ``"+5"``, ``"True"`` are not
    literals."""
    if len(text) > _MAX_NUMBER_CHARS:
        return NO
    if "integer" in expected and _INTEGER_RE.fullmatch(text):
        try:
            return int(text)
        except ValueError:  # beyond the int-string conversion limit
            return NO
    if "number" in expected and _NUMBER_RE.fullmatch(text):
        try:
            return _strict_loads(text)
        except ValueError:
            return NO
    if "boolean" in expected and text in ("true", "false"):
        return text == "true"
    if "null" in expected and text == "null":
        return None
    return NO


def container_shaped(text: str) -> bool:
    stripped = text.strip()
    return (stripped[:1], stripped[-1:]) in (("[", "]"), ("{", "}"))


def unwrap_autolinks(text: str) -> str:
    """``text`` with every degenerate markdown autolink unwrapped, or unchanged when
    there is none or the links nest deeper than a few levels (all or nothing, so a
    second call never finds more)."""
    current = text
    for _ in range(_MAX_AUTOLINK_ROUNDS):
        unwrapped = _AUTOLINK_RE.sub(r"\1", current)
        if unwrapped == current:
            return current
        current = unwrapped
    return current if _AUTOLINK_RE.search(current) is None else text
