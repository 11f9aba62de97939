"""The quick check (schema/quick.py) only ever says "clean" when the full schema rules
would change nothing and find nothing, so a hook can skip jsonschema for such calls."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamrepair import repair_arguments
from streamrepair.integrations.builtin_schemas import CLAUDE_CODE_SCHEMAS, OPENCODE_SCHEMAS
from streamrepair.integrations.calls import Decision, inspect_call
from streamrepair.schema.quick import MAX_QUICK_DEPTH, surely_clean

SCHEMAS: list[Any] = [
    None,
    True,
    {},
    {"type": "object"},
    {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "a file"},
            "limit": {"type": "integer"},
            "ratio": {"type": ["number", "null"]},
            "mode": {"enum": ["a", "b", 1]},
            "flag": {"type": "boolean", "default": False},
            "tags": {"type": "array", "items": {"type": "string"}},
            "meta": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    {"type": "object", "properties": {"x": {"const": 3}}, "required": ["x"]},
    {"type": "object", "properties": {"p": {"anyOf": [{"type": "string"}, {"type": "null"}]}}},
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}},
    *CLAUDE_CODE_SCHEMAS.values(),
    *OPENCODE_SCHEMAS.values(),
]

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from([0.5, 1.0, -2.5, 3.0]),
    st.floats(allow_nan=False, allow_infinity=False, width=16),
    st.sampled_from(["a", "b", "x", "[a](http://a)", "[a.md](http:/a.md)", "](", "/tmp/f"]),
    st.text(max_size=6),
)
_keys = st.sampled_from(
    ["path", "limit", "ratio", "mode", "flag", "tags", "meta", "x", "p", "n", "file_path",
     "command", "content", "pattern", "todos", "filePath", "extra"]
)  # fmt: skip
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=5),
    max_leaves=12,
)
_objects = st.dictionaries(_keys, _values, max_size=6)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(value=_objects, schema=st.sampled_from(SCHEMAS))
def test_clean_means_the_full_rules_change_nothing(value: dict[str, Any], schema: Any) -> None:
    before = copy.deepcopy(value)
    clean = surely_clean(value, schema)
    assert value == before  # nothing the caller passed is mutated
    if clean:
        result = repair_arguments(value, schema)
        assert result.ok, result.errors
        assert result.notes == ()
        assert result.value == value


_numbers = st.one_of(
    st.integers(-3, 3), st.sampled_from([0.5, 1.0, -2.5]), st.none(), st.text(max_size=2)
)
_near_valid = st.fixed_dictionaries(
    {"path": st.one_of(st.sampled_from(["a.txt", "[a](http://a)", "/tmp/f"]), _scalars)},
    optional={
        "limit": _numbers,
        "ratio": _numbers,
        "mode": st.sampled_from(["a", "b", "c", 1, 1.0, True, False, 0, None]),
        "flag": st.one_of(st.booleans(), st.none(), st.integers(0, 1)),
        "tags": st.one_of(st.lists(_scalars, max_size=3), _scalars),
        "meta": st.dictionaries(st.text(max_size=2), _numbers, max_size=3),
        "other": _scalars,
    },
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(value=_near_valid)
def test_clean_means_the_full_rules_change_nothing_near_valid(value: dict[str, Any]) -> None:
    # Mostly-valid objects reach every keyword of the subset (random dicts rarely do).
    schema = SCHEMAS[4]
    if surely_clean(value, schema):
        result = repair_arguments(value, schema)
        assert result.ok, result.errors
        assert result.notes == ()


@pytest.mark.parametrize(
    ("value", "schema"),
    [
        ({"path": "a.txt"}, SCHEMAS[4]),
        ({"path": "a.txt", "tags": ["x"], "meta": {"k": 1}, "mode": 1}, SCHEMAS[4]),
        ({"file_path": "/tmp/a.txt", "limit": 10}, CLAUDE_CODE_SCHEMAS["Read"]),
        ({"anything": [1, {"b": None}]}, None),
    ],
)
def test_common_valid_calls_are_decided_quickly(value: Any, schema: Any) -> None:
    assert surely_clean(value, schema)


@pytest.mark.parametrize(
    ("value", "schema", "why"),
    [
        ({"path": "a.txt", "limit": None}, SCHEMAS[4], "a null to drop"),
        ({"path": "[a.txt](http://a.txt)"}, SCHEMAS[4], "a markdown link"),
        ({"path": "a", "limit": "3"}, SCHEMAS[4], "a number sent as a string"),
        ({"path": "a", "limit": 1.0}, SCHEMAS[4], "1.0 is an integer only to jsonschema"),
        ({"path": "a", "tags": "x"}, SCHEMAS[4], "a bare string for an array"),
        ({"path": "a", "mode": True}, SCHEMAS[4], "true is not 1 to JSON Schema"),
        ({"path": "a", "flag": 0}, SCHEMAS[4], "0 is not a boolean"),
        ({"limit": 1}, SCHEMAS[4], "a required key missing"),
        ({"path": "a", "other": 1}, SCHEMAS[4], "an extra key where none is allowed"),
        ({"p": "a"}, SCHEMAS[6], "anyOf is not in the subset"),
        ({"n": 1}, SCHEMAS[7], "minimum is not in the subset"),
        ({"x": [[[]]]}, {"type": "object", "properties": {"x": {"type": "wat"}}}, "unknown type"),
        ({"k": (1, 2)}, None, "a tuple is not JSON data"),
    ],
)
def test_anything_else_takes_the_full_path(value: Any, schema: Any, why: str) -> None:
    assert not surely_clean(value, schema), why


def test_deep_and_wide_values_take_the_full_path() -> None:
    deep: Any = "x"
    for _ in range(MAX_QUICK_DEPTH + 2):
        deep = {"a": deep}
    assert not surely_clean(deep, {"type": "object"})
    very_deep: Any = 1
    for _ in range(100_000):
        very_deep = [very_deep]
    assert not surely_clean({"a": very_deep}, None)
    assert not surely_clean({"a": list(range(20_000))}, None)


def test_inspect_call_passes_clean_calls_and_repairs_the_others() -> None:
    schema = CLAUDE_CODE_SCHEMAS["Read"]
    clean = {"file_path": "/tmp/a.txt"}
    verdict = inspect_call("Read", clean, schema=schema)
    assert verdict.decision is Decision.PASS
    assert verdict.arguments is clean
    assert verdict.schema_known
    repaired = inspect_call("Read", {"file_path": "/tmp/a.txt", "limit": None}, schema=schema)
    assert repaired.decision is Decision.REWRITE
    assert repaired.arguments == {"file_path": "/tmp/a.txt"}
