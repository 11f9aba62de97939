"""The tool-repair skill's documented cases, run against streamrepair.compat.tool_repair.

Row numbers refer to the tables in shared/reference/seed-origins.md section (a.4):
"py N" is the Python suite (v1.0.1-v1.0.5), "ts N" the TS parity suite where the
Python port is documented to behave the same, "self" the module's __main__ self-test.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamrepair.compat import tool_repair as compat_package_module
from streamrepair.compat.tool_repair import (
    deduplicate_repair_notes,
    make_repair_note_block,
    repair_function_args,
)

ARRAY_SCHEMA: dict[str, Any] = {"properties": {"files": {"type": "array"}}}
ARR_ITEMS: dict[str, Any] = {
    "properties": {"files": {"type": "array", "items": {"type": "string"}}}
}
NULL_NOTE = "[repair: null values removed for optional fields]"
AUTOLINK_NOTE = "[repair: unwrapped markdown autolinks in file paths]"
EMPTY_NOTE = "[repair: empty objects replaced with empty arrays]"
BARE_NOTE = "[repair: bare strings wrapped as single-element arrays]"


def repair(args: dict[str, Any], schema: Any = None) -> tuple[dict[str, Any], list[str]]:
    return repair_function_args("t", dict(args), schema)


def test_package_reexports_the_module_functions() -> None:
    import streamrepair.compat as compat

    assert compat.repair_function_args is compat_package_module.repair_function_args
    assert compat.make_repair_note_block is make_repair_note_block
    assert compat.deduplicate_repair_notes is deduplicate_repair_notes


# ------------------------------------------------------------------ nulls (py 1-6)


def test_py1_null_on_optional_field_is_removed() -> None:
    schema = {"properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}}}
    out, notes = repair({"command": "ls", "timeout": None}, schema)
    assert out == {"command": "ls"}
    assert notes == [NULL_NOTE]


def test_py2_null_on_required_field_is_kept() -> None:
    schema = {"properties": {"name": {"type": "string"}}, "required": ["name"]}
    assert repair({"name": None}, schema) == ({"name": None}, [])


@pytest.mark.parametrize(
    "prop",
    [
        {"type": ["array", "null"]},  # py 3
        {"anyOf": [{"type": "array"}, {"type": "null"}]},  # py 4
        {"oneOf": [{"type": "null"}, {"type": "string"}]},
        {"type": "null"},  # py 5
    ],
)
def test_py3_to_5_null_on_nullable_field_is_kept(prop: dict[str, Any]) -> None:
    assert repair({"x": None}, {"properties": {"x": prop}}) == ({"x": None}, [])


def test_py6_without_schema_every_null_goes() -> None:
    assert repair({"timeout": None}) == ({}, [NULL_NOTE])


def test_ts16_required_given_as_a_string_is_ignored() -> None:
    schema = {"required": "files", "properties": {"z": {"type": "number"}}}
    assert repair({"z": None}, schema) == ({}, [NULL_NOTE])


def test_ts13_15_required_and_nullable_vs_plain_number() -> None:
    required = {"required": ["limit"], "properties": {"limit": {"type": "number"}}}
    assert repair({"limit": None}, required) == ({"limit": None}, [])
    nullable = {"properties": {"limit": {"type": ["number", "null"]}}}
    assert repair({"limit": None}, nullable) == ({"limit": None}, [])
    plain = {"properties": {"limit": {"type": "number"}}}
    assert repair({"limit": None}, plain) == ({}, [NULL_NOTE])


# ------------------------------------------------------------------ arrays


def test_py9_stringified_array_is_parsed_with_its_note() -> None:
    out, notes = repair({"files": '["a.txt","b.txt"]'}, ARRAY_SCHEMA)
    assert out == {"files": ["a.txt", "b.txt"]}
    assert notes == ["[repair: string values parsed as arrays for: files]"]


def test_stringified_note_lists_every_key_in_order() -> None:
    out, notes = repair({"b": "[1]", "a": '["x"]', "c": "plain"})
    assert out == {"b": [1], "a": ["x"], "c": "plain"}
    assert notes == ["[repair: string values parsed as arrays for: b, a]"]


def test_py10_bare_string_is_wrapped() -> None:
    assert repair({"files": "foo.txt"}, ARRAY_SCHEMA) == ({"files": ["foo.txt"]}, [BARE_NOTE])


def test_py11_empty_object_becomes_empty_array() -> None:
    assert repair({"files": {}}, ARRAY_SCHEMA) == ({"files": []}, [EMPTY_NOTE])


@pytest.mark.parametrize("text", ['["a.txt"]', ' ["a.txt"]', '["a.txt"] ', ' ["a.txt"] '])
def test_py7_py28_stringified_array_with_surrounding_space(text: str) -> None:
    out, notes = repair({"files": text}, ARRAY_SCHEMA)
    assert out == {"files": ["a.txt"]}
    assert len(notes) == 1


@pytest.mark.parametrize(
    "text", [" [not json] ", "[not json]", "[1, 2] and [3, 4]", "[a.md] and [b.md]"]
)
@pytest.mark.parametrize("schema", [ARRAY_SCHEMA, ARR_ITEMS])
def test_py8_py27_ts23_bracket_junk_is_never_wrapped(text: str, schema: Any) -> None:
    assert repair({"files": text}, schema) == ({"files": text}, [])


def test_py29_ts24_bare_string_is_wrapped_without_trimming() -> None:
    assert repair({"files": " foo.txt "}, ARRAY_SCHEMA) == ({"files": [" foo.txt "]}, [BARE_NOTE])


def test_py18_ts19_anyof_with_a_none_entry_still_finds_the_array() -> None:
    schema = {"properties": {"files": {"anyOf": [None, {"type": "array"}]}}}
    assert repair({"files": "a.txt"}, schema) == ({"files": ["a.txt"]}, [BARE_NOTE])


@pytest.mark.parametrize("types", [["string", "array"], ["array", "string"]])
def test_py19_ts20_type_lists_naming_array(types: list[str]) -> None:
    schema = {"properties": {"files": {"type": types}}}
    assert repair({"files": "a.txt"}, schema)[0] == {"files": ["a.txt"]}
    assert repair({"files": {}}, schema)[0] == {"files": []}


def test_ts4_ts5_anyof_and_oneof_unions() -> None:
    for keyword in ("anyOf", "oneOf"):
        schema = {"properties": {"files": {keyword: [{"type": "array"}, {"type": "string"}]}}}
        assert repair({"files": "a.txt"}, schema)[0] == {"files": ["a.txt"]}


@pytest.mark.parametrize(
    "args", [{"files": {}}, {"files": "foo.txt"}, {"files": " [not json] "}, {"files": {"a": 1}}]
)
@pytest.mark.parametrize("schema", [None, {}, {"type": "object"}, {"required": ["files"]}])
def test_py20_py21_ts21_ts22_no_array_fields_no_array_repairs(
    args: dict[str, Any], schema: Any
) -> None:
    assert repair(args, schema) == (args, [])


def test_ts21_real_array_stays() -> None:
    assert repair({"files": ["a.txt"]}) == ({"files": ["a.txt"]}, [])


# ------------------------------------------------------------------ autolinks


def test_py12_autolink_in_a_path_is_unwrapped() -> None:
    out, notes = repair({"filePath": "/Users/x/[notes.md](http://notes.md)"})
    assert out == {"filePath": "/Users/x/notes.md"}
    assert notes == [AUTOLINK_NOTE]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/x/[notes.md](http://notes.md)", "/x/notes.md"),  # ts 6
        ("[notes.md](https://example.com/notes.md)", "notes.md"),  # ts 7
        ("/x/[notes.md](https://notes.md)", "/x/notes.md"),  # ts 8
        ("[notes.md](http://localhost:3000/notes.md)", "notes.md"),  # ts 9
        ("/data/[nötés.md](http://nötés.md)", "/data/nötés.md"),  # ts 10
        ("[a.md](https://x.com/a.md) and [b.md](https://x.com/b.md)", "a.md and b.md"),  # ts 12
    ],
)
def test_ts6_to_12_autolink_forms(text: str, expected: str) -> None:
    assert repair({"p": text}) == ({"p": expected}, [AUTOLINK_NOTE])


@pytest.mark.parametrize(
    "text",
    [
        "see [click](https://example.com)",  # py 13
        "[click here](https://example.com/docs)",  # ts 11
        "[notes.md](https://example.com/docs/notes.md)",
        "[notes.md](http://notes.md?raw=1)",
    ],
)
def test_py13_ts11_real_links_are_untouched(text: str) -> None:
    assert repair({"content": text}) == ({"content": text}, [])


def test_py14_bracketed_prose_is_not_parsed() -> None:
    assert repair({"content": "[1, 2] and [3, 4]"}) == ({"content": "[1, 2] and [3, 4]"}, [])


def test_skill_parses_json_shaped_content_even_when_valid() -> None:
    """The skill's known looseness, kept for compatibility (the native API does not)."""
    assert repair({"content": "[1, 2]"}) == (
        {"content": [1, 2]},
        ["[repair: string values parsed as arrays for: content]"],
    )


# ------------------------------------------------------------------ order, scope, copies


def test_notes_come_in_the_skills_order() -> None:
    args: dict[str, Any] = {
        "files": "a.txt",
        "opts": {},
        "tags": '["x"]',
        "limit": None,
        "path": "[n.md](http://n.md)",
    }
    schema = {"properties": {"files": {"type": "array"}, "opts": {"type": "array"}}}
    out, notes = repair(args, schema)
    assert out == {"files": ["a.txt"], "opts": [], "tags": ["x"], "path": "n.md"}
    assert notes == [
        AUTOLINK_NOTE,
        NULL_NOTE,
        "[repair: string values parsed as arrays for: tags]",
        EMPTY_NOTE,
        BARE_NOTE,
    ]


def test_stringified_parse_runs_before_bare_wrap() -> None:
    assert repair({"files": '["a", "b"]'}, ARRAY_SCHEMA)[0] == {"files": ["a", "b"]}


def test_ts27_nested_objects_are_never_touched() -> None:
    args: dict[str, Any] = {"outer": {"files": {}, "limit": None, "p": "[n.md](http://n.md)"}}
    assert repair(args, ARR_ITEMS) == (args, [])


def test_py15_py16_valid_input_and_callers_dict_unchanged() -> None:
    original = {"command": "ls", "timeout": 30}
    out, notes = repair_function_args("t", original)
    assert (out, notes) == ({"command": "ls", "timeout": 30}, [])
    assert original == {"command": "ls", "timeout": 30}


def test_py22_caller_is_not_mutated_and_result_is_fixed() -> None:
    caller = {"path": "/data/x", "limit": None, "files": '["a.txt"]'}
    snapshot = copy.deepcopy(caller)
    fixed, notes = repair_function_args("readFile", caller, ARRAY_SCHEMA)
    assert fixed == {"path": "/data/x", "files": ["a.txt"]}
    assert notes
    assert caller == snapshot


def test_py23_result_is_a_new_object() -> None:
    parsed = {"command": "ls", "timeout": None}
    fixed, _ = repair_function_args("t", parsed, None)
    assert fixed is not parsed
    assert parsed == {"command": "ls", "timeout": None}


def test_py24_py25_write_back_pattern() -> None:
    schema = {"properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}
    parsed = json.loads('{"path":"/data/x","limit":null}')
    fixed, notes = repair_function_args("readFile", parsed, schema)
    assert fixed != parsed
    assert notes
    assert json.loads(json.dumps(fixed)) == {"path": "/data/x"}
    clean = json.loads('{"path":"/data/x"}')
    fixed, notes = repair_function_args("readFile", clean, None)
    assert fixed == clean
    assert notes == []


def test_py26_nested_values_are_not_shared() -> None:
    caller = {"opts": {"nested": ["keep"]}}
    fixed, _ = repair_function_args("t", caller, None)
    assert fixed["opts"] is not caller["opts"]
    assert fixed["opts"]["nested"] is not caller["opts"]["nested"]


def test_ts25_repairing_twice_changes_nothing_more() -> None:
    once, _ = repair({"files": '["a.txt"]', "p": "/x/[n.md](http://n.md)"}, ARR_ITEMS)
    twice, notes = repair(once, ARR_ITEMS)
    assert twice == once
    assert notes == []


def test_ts26_valid_array_no_notes_no_mutation() -> None:
    caller = {"files": ["a.txt"], "limit": 5}
    assert repair_function_args("t", caller, ARR_ITEMS) == ({"files": ["a.txt"], "limit": 5}, [])
    assert caller == {"files": ["a.txt"], "limit": 5}


def test_non_dict_arguments_are_returned_as_a_copy() -> None:
    args: Any = ["a", None]
    fixed: Any
    fixed, notes = repair_function_args("t", args)
    assert fixed == ["a", None]
    assert notes == []
    assert fixed is not args


# ------------------------------------------------------------------ malformed schemas

MALFORMED_PY17 = [
    {"type": "object", "properties": None},
    {"properties": {"files": None}},
    {"properties": {"files": True}},
    {"properties": {"files": False}},
    {"properties": {"files": "array"}},
    {"properties": {"files": 3}},
    {"properties": {"files": {"anyOf": None}}},
    {"properties": {"files": {"anyOf": {"type": "array"}}}},
    {"properties": {"files": {"oneOf": [None]}}},
]
MALFORMED_TS17_EXTRA = [
    {"properties": {"files": {"anyOf": [None, {"type": "array"}]}}},
    {"properties": {"files": {"anyOf": "array"}}},
    {"required": "files", "properties": {"files": {"type": "array"}}},
    {"required": None, "properties": {"files": {"type": "array"}}},
    True,
    False,
    [],
    "array",
]


@pytest.mark.parametrize("schema", [*MALFORMED_PY17, {"properties": {"files": {"anyOf": "array"}}}])
def test_py17_ts18_malformed_schemas_leave_args_unchanged(schema: Any) -> None:
    assert repair({"files": "a.txt"}, schema) == ({"files": "a.txt"}, [])


@pytest.mark.parametrize("schema", [*MALFORMED_PY17, *MALFORMED_TS17_EXTRA])
def test_ts17_malformed_schemas_never_raise(schema: Any) -> None:
    args: dict[str, Any]
    for args in ({"files": "a.txt"}, {"files": None, "x": {}}, {"files": '["a"]'}):
        fixed, notes = repair(args, schema)
        assert isinstance(fixed, dict)
        assert all(isinstance(n, str) for n in notes)


def test_required_string_with_array_field_still_wraps() -> None:
    schema = {"required": "files", "properties": {"files": {"type": "array"}}}
    assert repair({"files": "a.txt"}, schema) == ({"files": ["a.txt"]}, [BARE_NOTE])


def test_self_test_note_counts() -> None:
    cases: list[tuple[dict[str, Any], Any, int]] = [
        ({"command": "ls", "timeout": None}, None, 1),
        ({"files": '["a.txt","b.txt"]'}, ARRAY_SCHEMA, 1),
        ({"files": {}}, ARRAY_SCHEMA, 1),
        ({"files": "foo.txt"}, ARRAY_SCHEMA, 1),
        ({"filePath": "/Users/x/[notes.md](http://notes.md)"}, None, 1),
        ({"command": "ls", "timeout": 30}, None, 0),
    ]
    for args, schema, expected in cases:
        assert len(repair(args, schema)[1]) == expected


# ------------------------------------------------------------------ note blocks (py 30-33)


def test_py30_note_block_carries_the_tool_name() -> None:
    block = make_repair_note_block(["[repair: null values removed]"], "terminal")
    assert block == (
        "\n\n[Hermes repaired: terminal]\n  • [repair: null values removed]\n"
        "Next time use the correct format directly — the schema expects these types."
    )


def test_note_block_is_none_without_notes() -> None:
    assert make_repair_note_block([], "terminal") is None


def test_py31_dedup_keeps_the_tool_name() -> None:
    out = deduplicate_repair_notes("", ["[repair: null values removed]"], "terminal")
    assert "[Hermes repaired: terminal]" in out


def test_py32_dedup_twice_equals_once() -> None:
    note = ["[repair: null values removed]"]
    once = deduplicate_repair_notes("", note, "terminal")
    assert deduplicate_repair_notes(once, note, "terminal") == once


def test_py33_dedup_without_notes_is_a_noop() -> None:
    assert deduplicate_repair_notes("body", [], "terminal") == "body"


def test_dedup_appends_only_the_new_notes() -> None:
    content = "result" + (make_repair_note_block([NULL_NOTE], "t") or "")
    out = deduplicate_repair_notes(content, [NULL_NOTE, BARE_NOTE], "t")
    assert out == content + (make_repair_note_block([BARE_NOTE], "t") or "")


def test_dedup_fingerprint_of_a_note_without_brackets_is_its_first_40_chars() -> None:
    note = "plain note without brackets that is quite long indeed"
    assert deduplicate_repair_notes(note[:40], [note], "t") == note[:40]
    assert deduplicate_repair_notes(note[:39], [note], "t") != note[:39]


def test_dedup_two_argument_form_still_works() -> None:
    assert deduplicate_repair_notes("x", [NULL_NOTE]).startswith("x\n\n[Hermes repaired: ]")


# ------------------------------------------------------------------ properties

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(["a.txt", '["a"]', " [x] ", "[n.md](http://n.md)", "{}", "30"]),
    st.text(max_size=8),
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
_args = st.dictionaries(st.sampled_from(["files", "path", "limit", "content", "x"]), _values)
_schemas = st.sampled_from([None, ARRAY_SCHEMA, ARR_ITEMS, *MALFORMED_PY17, True, {}])


@settings(max_examples=150, deadline=None)
@given(_args, _schemas)
def test_never_mutates_and_is_idempotent(args: dict[str, Any], schema: Any) -> None:
    snapshot = copy.deepcopy(args)
    once, _ = repair_function_args("t", args, schema)
    assert args == snapshot
    twice, notes = repair_function_args("t", once, schema)
    assert twice == once
    assert notes == []
