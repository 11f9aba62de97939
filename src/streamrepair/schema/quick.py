"""A fast, conservative answer to "is there anything to repair here?", without jsonschema.

A harness hook runs once per tool call in a fresh process, and most calls need nothing.
Loading jsonschema costs tens of milliseconds per call, so :func:`surely_clean` first
checks the value against the common subset of JSON Schema in plain Python. It answers
``True`` only when :func:`~streamrepair.repair_arguments` would certainly make no repair
and find no error: the schema uses only the keywords below, the value satisfies them, and
no string holds a markdown link (``](``, which every autolink the path rule unwraps
contains). Anything else answers ``False`` and the caller takes the full path, so a wrong
``False`` costs time and never correctness.

Supported keywords: ``type`` (a name or a list), ``properties``, ``required``,
``additionalProperties`` (a boolean or a schema), ``items`` (one schema), ``enum``,
``const``, and annotations that never fail (``description``, ``title``, ``default``,
``examples``, ``$comment``, ``$schema``, ``deprecated``, ``readOnly``, ``writeOnly``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["MAX_QUICK_DEPTH", "MAX_QUICK_NODES", "surely_clean"]

#: Most values and schema nodes one check visits before it gives up (answers False).
MAX_QUICK_NODES: Final = 10_000
#: Deepest value checked here (below the schema rules' own validation depth bound, so a
#: value too deep to validate is always left to them).
MAX_QUICK_DEPTH: Final = 64

_ANNOTATIONS: Final = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "$comment",
        "$schema",
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)
_CHECKED: Final = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "enum", "const"}
)
_KNOWN: Final = _ANNOTATIONS | _CHECKED


class _Unsure(Exception):
    """The quick check cannot decide; take the full path."""


def surely_clean(value: Any, schema: Any) -> bool:
    """True when ``value`` certainly needs no repair and satisfies ``schema`` (a JSON
    Schema dict, ``True``, or ``None`` for no schema). False means "cannot tell here"."""
    budget = [MAX_QUICK_NODES]
    try:
        _check(value, schema, budget, 0)
    except (_Unsure, RecursionError):
        return False
    return True


def _check(value: Any, schema: Any, budget: list[int], depth: int) -> None:
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_QUICK_DEPTH:
        raise _Unsure
    if schema is None or schema is True:
        schema = {}
    if not isinstance(schema, Mapping) or not set(schema) <= _KNOWN:
        raise _Unsure
    if "type" in schema and not _type_ok(value, schema["type"]):
        raise _Unsure
    if "enum" in schema and not _member(value, schema["enum"]):
        raise _Unsure
    if "const" in schema and not _same(value, schema["const"]):
        raise _Unsure
    if isinstance(value, str):
        if "](" in value:
            raise _Unsure
    elif isinstance(value, dict):
        _object(value, schema, budget, depth)
    elif isinstance(value, list):
        items = schema.get("items", True)
        if isinstance(items, list):  # the old tuple form: not in the subset
            raise _Unsure
        for item in value:
            _check(item, items, budget, depth + 1)
    elif not (value is None or isinstance(value, bool | int | float)):
        raise _Unsure  # not JSON data


def _object(
    value: dict[Any, Any], schema: Mapping[str, Any], budget: list[int], depth: int
) -> None:
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, Mapping) or not isinstance(required, list):
        raise _Unsure
    for name in required:
        if not isinstance(name, str) or name not in value:
            raise _Unsure
    for key, item in value.items():
        if not isinstance(key, str):
            raise _Unsure
        if key in properties:
            _check(item, properties[key], budget, depth + 1)
        elif extra is False:
            raise _Unsure
        else:
            _check(item, extra, budget, depth + 1)


def _type_ok(value: Any, expected: Any) -> bool:
    names = [expected] if isinstance(expected, str) else expected
    if not isinstance(names, list) or not names:
        raise _Unsure
    return any(_is(value, name) for name in names)


def _is(value: Any, name: Any) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "integer":
        # A float such as 1.0 is an integer to jsonschema; stay on the safe side.
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    raise _Unsure  # an unknown type name


def _member(value: Any, options: Any) -> bool:
    if not isinstance(options, list):
        raise _Unsure
    return any(_same(value, option) for option in options)


def _same(a: Any, b: Any) -> bool:
    # JSON equality for the scalars enum and const usually hold; containers: undecided.
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        raise _Unsure
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)
