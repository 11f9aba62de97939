"""Values of tool calls written as text: which JSON types a parameter takes, and turning a
raw-text or Python-literal value into JSON text.

Used by the format readers whose values are not JSON as written:
Qwen3-Coder ``<parameter=k>`` and DSML parameters without ``string="true"`` (raw text),
GLM ``<arg_value>`` (raw text for strings, JSON for the rest), pythonic keyword arguments
(Python literals). The schema is read without ``jsonschema``: only ``type``, ``anyOf`` /
``oneOf``, ``enum``, ``const`` and local ``$ref`` are looked at, which is all a type needs.

Rules (those of vLLM's ``qwen3_coder`` and ``glm45`` parsers, made strict where they guess):

* a parameter whose only type is ``string``, or whose type is unknown (no schema, a name
  the schema does not declare), is a string; it is streamed as it arrives;
* otherwise the whole value is read first, then: ``null``/``None`` (any case) where null
  is allowed; where ``string`` is also allowed, only text that is strict JSON of another
  type the schema allows (``{"a": 1}`` for ``["string", "object"]``, ``42`` for
  ``["string", "integer"]``) is read as that type, the rest stays the string it is (the
  markup cannot tell a string from a JSON value: the templates write both raw, and
  llama.cpp, Ollama and vLLM read such text as the other type); otherwise strict JSON,
  then a Python literal (``True``, ``{'k': 1}``), then, for an array or object, JSON
  written with escaped quotes as inside a JSON string (``[{\\"id\\": 1}]``: SGLang
  reads it so), kept when its JSON type is one the schema allows; anything else stays a
  string (the schema check then says what is wrong with it);
* GLM writes non-string values with ``tojson``: without a schema, a value that is valid
  JSON is read as JSON (vLLM does the same);
* type names that are no JSON Schema types but Python's (``float``, ``int``, ``bool``,
  ``str``, ``dict``, ``list``; and ``double``) are read as the JSON type they name, as
  vLLM's parsers read them: tools generated from Python signatures declare them.

Every conversion to something other than a string is reported by the caller as a
:attr:`~streamrepair.RepairKind.MARKUP_VALUE` repair with the description made here.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final

from ...schema._values import json_type

__all__: list[str] = []

#: How deep a ``$ref`` chain or ``anyOf`` nesting is followed when reading a type.
_MAX_SCHEMA_DEPTH: Final = 8
#: Longest value shown in a repair description.
_SHOWN: Final = 40
_JSON_TYPES: Final = frozenset(
    {"string", "number", "integer", "boolean", "null", "object", "array"}
)
_INTEGER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)")
#: Type names that are not JSON Schema's, as tools built from Python signatures write
#: them, and the JSON type each names (vLLM's Qwen3-Coder parser reads them so).
_TYPE_NAMES: Final = {
    "float": "number",
    "double": "number",
    "int": "integer",
    "bool": "boolean",
    "str": "string",
    "dict": "object",
    "list": "array",
}


def param_types(schema: Mapping[str, Any] | None, name: str) -> frozenset[str] | None:
    """The JSON types the tool's ``schema`` allows for property ``name``; None when the
    schema says nothing usable about it (no schema, an undeclared name, no ``type``)."""
    if not isinstance(schema, Mapping):
        return None
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return None
    sub = properties.get(name)
    if not isinstance(sub, Mapping):
        return None
    found = _types(sub, schema, 0)
    return frozenset(found) if found else None


def child_schema(
    sub: Mapping[str, Any] | None, root: Mapping[str, Any] | None, key: str | None
) -> Mapping[str, Any] | None:
    """The schema of member ``key`` (``None``: of an item) of a value whose schema is
    ``sub`` (``root``, the tool's schema, resolves local ``$ref``), looking through
    ``$ref`` and ``anyOf``/``oneOf``; None when it says nothing."""
    if not isinstance(sub, Mapping) or not isinstance(root, Mapping):
        return None
    for node in _alternatives(sub, root, 0):
        if key is None:
            items = node.get("items")
            if isinstance(items, Mapping):
                return items
            continue
        props = node.get("properties")
        if isinstance(props, Mapping) and isinstance(props.get(key), Mapping):
            found: Mapping[str, Any] = props[key]
            return found
    return None


def schema_types(
    sub: Mapping[str, Any] | None, root: Mapping[str, Any] | None
) -> frozenset[str] | None:
    """The JSON types schema ``sub`` allows (``root`` resolves ``$ref``); None when it
    says nothing usable."""
    if not isinstance(sub, Mapping) or not isinstance(root, Mapping):
        return None
    found = _types(sub, root, 0)
    return frozenset(found) if found else None


def _alternatives(
    sub: Mapping[str, Any], root: Mapping[str, Any], depth: int
) -> list[Mapping[str, Any]]:
    if depth > _MAX_SCHEMA_DEPTH:
        return []
    ref = sub.get("$ref")
    if isinstance(ref, str):
        target = _resolve(ref, root)
        return _alternatives(target, root, depth + 1) if target is not None else []
    out = [sub]
    for key in ("anyOf", "oneOf"):
        options = sub.get(key)
        if isinstance(options, list):
            for option in options:
                if isinstance(option, Mapping):
                    out += _alternatives(option, root, depth + 1)
    return out


def _types(sub: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> set[str]:
    if depth > _MAX_SCHEMA_DEPTH:
        return set()
    ref = sub.get("$ref")
    if isinstance(ref, str):
        target = _resolve(ref, root)
        return _types(target, root, depth + 1) if target is not None else set()
    out: set[str] = set()
    kind = sub.get("type")
    if isinstance(kind, str):
        out.add(_TYPE_NAMES.get(kind, kind))
    elif isinstance(kind, list):
        out.update(_TYPE_NAMES.get(k, k) for k in kind if isinstance(k, str))
    for key in ("anyOf", "oneOf"):
        options = sub.get(key)
        if isinstance(options, list):
            for option in options:
                if isinstance(option, Mapping):
                    out |= _types(option, root, depth + 1)
    if not out:
        values: list[Any] = []
        if "const" in sub:
            values.append(sub["const"])
        enum = sub.get("enum")
        if isinstance(enum, list):
            values.extend(enum)
        out.update(json_type(v) for v in values)
    return out & _JSON_TYPES


def _resolve(ref: str, root: Mapping[str, Any]) -> Mapping[str, Any] | None:
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, Mapping) else None


def streams_as_string(types: frozenset[str] | None) -> bool:
    """True when a raw-text value for these types is a string whatever it says, so it can
    be streamed as it arrives (no schema, or ``string`` the only type)."""
    return types is None or types == {"string"}


def _allowed(value: Any, types: frozenset[str]) -> bool:
    kind = json_type(value)
    if kind in types:
        return True
    if kind == "integer" and "number" in types:
        return True
    return kind == "number" and "integer" in types and float(value).is_integer()


def _shown(text: str) -> str:
    return repr(text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "...")


def python_literal(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is a Python literal whose value JSON can hold
    (``True``, ``None``, ``'single'``, ``(1, 2)``, ``{'k': [1]}``), else ``(False, None)``.
    ``ast.literal_eval`` evaluates nothing but literals; nesting too deep for it is a
    plain refusal here."""
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None
    try:
        return True, _jsonable(value, 0)
    except (ValueError, RecursionError):
        return False, None


def _jsonable(value: Any, depth: int) -> Any:
    if depth > 512:
        raise ValueError("too deep")
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("not a JSON number")
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v, depth + 1) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ValueError("JSON object keys are strings")
        return {k: _jsonable(v, depth + 1) for k, v in value.items()}
    raise ValueError(f"{type(value).__name__} has no JSON form")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(text: str) -> Any:
    """Strict ``json.loads``: ``NaN`` and ``Infinity`` are not JSON."""
    return json.loads(text, parse_constant=_no_constant)


def dumps(value: Any) -> str:
    """Compact-ish JSON text, the way ``json.dumps`` writes it, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False)


def convert_text(
    text: str, key: str, types: frozenset[str] | None, *, json_when_untyped: bool
) -> tuple[str, str | None]:
    """``(JSON text, description)`` for a raw-text parameter value ``text``.

    ``description`` is None when the value was read as a string (the text as written),
    else it says what the text was read as and why (for the ``markup_value`` repair).
    ``json_when_untyped`` is GLM's rule: without a type, valid JSON is read as JSON.
    """
    if types is None:
        if json_when_untyped:
            try:
                value = loads(text)
            except ValueError:
                return dumps(text), None
            if isinstance(value, str):
                return dumps(value), (
                    f"parameter {key!r}: the JSON string {_shown(text)} read as its content "
                    "(no schema; GLM writes non-string values as JSON)"
                )
            return dumps(value), (
                f"parameter {key!r}: text {_shown(text)} read as {json_type(value)} "
                "(no schema; GLM writes non-string values as JSON)"
            )
        return dumps(text), None
    stripped = text.strip()
    lowered = stripped.lower()
    if "null" in types and lowered in ("null", "none"):
        return "null", f"parameter {key!r}: text {_shown(text)} read as null (the tool's schema)"
    if "string" in types:
        return _union_with_string(text, stripped, key, types)
    if "boolean" in types and lowered in ("true", "false"):
        return lowered, (
            f"parameter {key!r}: text {_shown(text)} read as boolean (the tool's schema)"
        )
    candidate: Any = None
    found = False
    source = ""
    if _INTEGER.fullmatch(stripped) and len(stripped) <= 4000:
        candidate, found = int(stripped), True
    else:
        try:
            candidate, found = loads(stripped), True
        except (ValueError, RecursionError):
            found, candidate = python_literal(stripped)
            source = " from a Python literal"
    if not (found and _allowed(candidate, types)) and '\\"' in stripped and types & _CONTAINERS:
        found, candidate = _escaped_json(stripped)
        source = " written with escaped quotes, as inside a JSON string"
    if found and _allowed(candidate, types):
        return dumps(candidate), (
            f"parameter {key!r}: text {_shown(text)} read as {json_type(candidate)}"
            f"{source} (the tool's schema)"
        )
    return dumps(text), None


_CONTAINERS: Final = frozenset({"array", "object"})


def _union_with_string(
    text: str, stripped: str, key: str, types: frozenset[str]
) -> tuple[str, str | None]:
    """A value whose schema allows a string and other types: strict JSON of one of the
    others is read as it, anything else is the string it is."""
    if stripped[:1] not in _JSON_FIRST:
        return dumps(text), None  # no JSON value but a string begins so
    try:
        value = loads(stripped)
    except (ValueError, RecursionError):
        return dumps(text), None
    if isinstance(value, str) or not _allowed(value, types - {"string"}):
        return dumps(text), None
    return dumps(value), (
        f"parameter {key!r}: text {_shown(text)} read as {json_type(value)}: strict JSON of "
        "a type the tool's schema allows beside string"
    )


_JSON_FIRST: Final = frozenset('{["-0123456789tfn')


def _escaped_json(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is the inside of a JSON string whose content is
    JSON (``[{\\"id\\": 1}]``): the quotes escaped once too often, nothing guessed."""
    try:
        inner = loads('"' + text + '"')
        return True, loads(inner)
    except (ValueError, RecursionError):
        return False, None


def convert_python(text: str, key: str) -> tuple[str, str | None]:
    """``(JSON text, description)`` for a pythonic keyword argument's value ``text``.

    Valid JSON as written is kept as written (description None). A Python literal is
    converted (described). Anything else is passed on as written, for the assembler to
    repair (a bare word) or refuse."""
    stripped = text.strip()
    try:
        loads(stripped)
    except (ValueError, RecursionError):
        pass
    else:
        return stripped, None
    ok, value = python_literal(stripped)
    if ok:
        return dumps(value), (
            f"parameter {key!r}: Python literal {_shown(stripped)} read as {json_type(value)}"
        )
    return stripped, None
