"""repair_arguments: each rule when it fires and when it must not, malformed schemas,
the result contract (no mutation, no sharing, idempotence) and feedback."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamrepair.schema._values import MAX_EMBEDDED_JSON_CHARS
from streamrepair.schema.report import (
    MAX_FEEDBACK_ISSUES,
    ArgumentRepair,
    RepairNote,
    SchemaIssue,
    SchemaRule,
)
from streamrepair.schema.rules import MAX_VALIDATION_DEPTH, repair_arguments

R = SchemaRule


def obj(required: list[str] | None = None, **props: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required is not None:
        schema["required"] = required
    return schema


STR = {"type": "string"}
INT = {"type": "integer"}
NUM = {"type": "number"}
BOOL = {"type": "boolean"}
ARR = {"type": "array", "items": STR}
OBJ = {"type": "object"}


def rules(result: ArgumentRepair) -> list[tuple[SchemaRule, str]]:
    return [(note.rule, note.location) for note in result.notes]


def assert_untouched(args: Any, schema: Any, **kw: Any) -> ArgumentRepair:
    result = repair_arguments(args, schema, **kw)
    assert result.value == args
    assert result.notes == ()
    return result


# ------------------------------------------------------------------ valid input


@pytest.mark.parametrize(
    ("args", "schema"),
    [
        ({"content": "[1, 2]"}, obj(content=STR)),  # the CommandCode write_file lesson
        ({"content": '{"a": 1}'}, obj(content=STR)),
        ({"n": "30"}, obj(n=STR)),
        ({"flag": "true"}, obj(flag=STR)),
        ({"note": "null"}, obj(note=STR)),
        ({"files": "a.txt"}, obj(files={"type": ["string", "array"]})),
        ({"opts": {}}, obj(opts={"anyOf": [{"type": "array"}, {"type": "object"}]})),
        ({"tags": None}, obj(tags={"type": ["array", "null"]})),
        ({"tags": None}, obj(tags={"anyOf": [ARR, {"type": "null"}]})),
        ({"x": None}, obj(x={"type": "null"})),
        ({"anything": None}, obj()),
        ({"content": "[example.com](http://example.com)"}, obj(content=STR)),
    ],
)
def test_valid_input_is_returned_unchanged_without_notes(args: Any, schema: Any) -> None:
    result = assert_untouched(args, schema)
    assert result.ok
    assert result.errors == ()
    assert not result.repaired


def test_without_schema_only_path_autolinks_are_repaired() -> None:
    args = {"limit": None, "files": '["a"]', "n": "3", "content": "[x.md](http://x.md)"}
    assert_untouched(args, None)
    result = repair_arguments({"path": "/a/[b.md](http://b.md)", "limit": None})
    assert result.value == {"path": "/a/b.md", "limit": None}
    assert rules(result) == [(R.UNWRAP_AUTOLINK, "$.path")]


# ------------------------------------------------------------------ rule 1: null


def test_null_on_optional_field_is_dropped() -> None:
    result = repair_arguments({"command": "ls", "timeout": None}, obj(command=STR, timeout=INT))
    assert result.value == {"command": "ls"}
    assert result.notes == (
        RepairNote(rule=R.DROP_NULL, path=("timeout",), before="null", after="(removed)"),
    )
    assert result.ok


def test_null_is_dropped_at_any_depth() -> None:
    schema = obj(
        options=obj(timeout=INT),
        edits={"type": "array", "items": obj(["old"], old=STR, count=INT)},
    )
    args = {"options": {"timeout": None}, "edits": [{"old": "a", "count": None}]}
    result = repair_arguments(args, schema)
    assert result.value == {"options": {}, "edits": [{"old": "a"}]}
    assert rules(result) == [(R.DROP_NULL, "$.options.timeout"), (R.DROP_NULL, "$.edits[0].count")]


def test_null_is_dropped_through_refs_and_additional_properties() -> None:
    schema = {
        "$defs": {"opts": {"type": "object", "additionalProperties": INT}},
        "type": "object",
        "properties": {"opts": {"$ref": "#/$defs/opts"}},
    }
    result = repair_arguments({"opts": {"retries": None, "n": 1}}, schema)
    assert result.value == {"opts": {"n": 1}}
    assert result.ok


def test_null_on_required_field_stays_and_is_reported() -> None:
    schema = obj(["name"], name=STR, timeout=INT)
    result = repair_arguments({"name": None, "timeout": None}, schema)
    assert result.value == {"name": None}
    assert rules(result) == [(R.DROP_NULL, "$.timeout")]
    assert [(e.location, e.keyword) for e in result.errors] == [("$.name", "type")]


@pytest.mark.parametrize(
    "schema",
    [
        {"allOf": [obj(a=STR), {"required": ["a"]}]},
        {"properties": {"a": STR, "b": STR}, "dependentRequired": {"b": ["a"]}},
        {
            "properties": {"a": STR},
            "if": {"properties": {"b": {"const": "x"}}, "required": ["b"]},
            "then": {"required": ["a"]},
        },
        {"properties": {"a": STR}, "minProperties": 2},
        {"anyOf": [obj(["a"], a=STR), obj(["c"], c=STR)]},
    ],
)
def test_null_stays_when_dropping_it_makes_the_object_fail(schema: Any) -> None:
    args = {"a": None, "b": "x"}
    result = repair_arguments(args, schema)
    assert result.value == args
    assert result.notes == ()
    assert not result.ok


def test_null_put_back_keeps_key_order() -> None:
    result = repair_arguments({"a": None, "b": "x"}, obj(["a"], a=STR, b=STR))
    assert list(result.value) == ["a", "b"]


def test_null_inside_an_array_is_never_removed() -> None:
    result = repair_arguments({"ns": [1, None, 2]}, obj(ns={"type": "array", "items": INT}))
    assert result.value == {"ns": [1, None, 2]}
    assert result.notes == ()
    assert [e.location for e in result.errors] == ["$.ns[1]"]


def test_null_rejected_by_enum_or_not_is_dropped() -> None:
    schema = obj(mode={"enum": ["a", "b"]}, x={"not": {"type": "null"}})
    result = repair_arguments({"mode": None, "x": None}, schema)
    assert result.value == {}
    assert result.ok


# ------------------------------------------------------------------ rule 2: JSON strings


@pytest.mark.parametrize(
    ("text", "schema", "expected"),
    [
        ('["a","b"]', ARR, ["a", "b"]),
        ('  ["a"]\n', ARR, ["a"]),
        ("[]", ARR, []),
        ('{"k": 1}', OBJ, {"k": 1}),
        ('"[\\"*.ts\\",\\"*.js\\"]"', ARR, ["*.ts", "*.js"]),  # doubly encoded
        ('["a"]', {"anyOf": [ARR, {"type": "null"}]}, ["a"]),
        ('["a"]', {"type": ["array", "null"]}, ["a"]),
    ],
)
def test_json_string_becomes_the_container_the_schema_expects(
    text: str, schema: Any, expected: Any
) -> None:
    result = repair_arguments({"v": text}, obj(v=schema))
    assert result.value == {"v": expected}
    assert rules(result) == [(R.PARSE_JSON_STRING, "$.v")]
    assert result.ok


def test_glm_all_values_stringified() -> None:
    """wire-formats #42: GLM's <arg_value> format sends every value as a string."""
    args = {
        "n": "5",
        "fl": "1.5",
        "b": "true",
        "a": "[1, 2]",
        "o": '{"k": 1}',
        "s": "7",
        "nul": "null",
    }
    schema = obj(
        n=INT,
        fl=NUM,
        b=BOOL,
        a={"type": "array", "items": INT},
        o=OBJ,
        s=STR,
        nul={"type": ["integer", "null"]},
    )
    result = repair_arguments(args, schema)
    assert result.value == {
        "n": 5,
        "fl": 1.5,
        "b": True,
        "a": [1, 2],
        "o": {"k": 1},
        "s": "7",
        "nul": None,
    }
    assert result.ok


def test_a_whole_argument_object_sent_as_a_string_is_parsed() -> None:
    result = repair_arguments('{"path": "a"}', obj(path=STR))
    assert result.value == {"path": "a"}
    assert rules(result) == [(R.PARSE_JSON_STRING, "$")]


def test_parsed_containers_are_repaired_inside_too() -> None:
    schema = obj(edits={"type": "array", "items": obj(n=INT, t=STR)})
    result = repair_arguments({"edits": '[{"n": "3", "t": null}]'}, schema)
    assert result.value == {"edits": [{"n": 3}]}
    assert [r for r, _ in rules(result)] == [
        R.PARSE_JSON_STRING,
        R.PARSE_SCALAR_STRING,
        R.DROP_NULL,
    ]


@pytest.mark.parametrize(
    "text",
    [
        "[not json]",
        " [not json] ",
        "[1, 2] and [3, 4]",
        "[a.md] and [b.md]",
        '{"a": 1}',  # an object where an array is expected
        "[NaN]",
        "[1e400]",
        '[{"a": 1, "a": 2}]',
        "[[1], [2]] [3]",
    ],
)
def test_bracket_junk_is_neither_parsed_nor_wrapped(text: str) -> None:
    result = repair_arguments({"files": text}, obj(files={"type": "array"}))
    assert result.value == {"files": text}
    assert result.notes == ()
    assert [e.location for e in result.errors] == ["$.files"]


def test_strings_above_the_embedded_json_cap_are_not_parsed() -> None:
    big = json.dumps(["x" * (MAX_EMBEDDED_JSON_CHARS // 2)] * 3)
    assert len(big) > MAX_EMBEDDED_JSON_CHARS
    result = repair_arguments({"files": big}, obj(files=ARR))
    assert result.value == {"files": big}
    assert not result.ok
    small = json.dumps(["x" * 100])
    assert repair_arguments({"files": small}, obj(files=ARR)).value == {"files": ["x" * 100]}


def test_parse_that_would_exceed_the_depth_bound_is_refused() -> None:
    deep = "[" * MAX_VALIDATION_DEPTH + "]" * MAX_VALIDATION_DEPTH
    result = repair_arguments({"v": deep}, obj(v={"type": "array"}))
    assert result.value == {"v": deep}
    assert not result.ok


# ------------------------------------------------------------------ rule 3: {} -> []


def test_empty_object_becomes_empty_array() -> None:
    result = repair_arguments({"files": {}}, obj(files=ARR))
    assert result.value == {"files": []}
    assert rules(result) == [(R.EMPTY_OBJECT_TO_ARRAY, "$.files")]


def test_non_empty_object_where_array_expected_is_reported_not_changed() -> None:
    result = repair_arguments({"files": {"a": 1}}, obj(files=ARR))
    assert result.value == {"files": {"a": 1}}
    assert result.notes == ()
    assert result.errors[0].keyword == "type"


# ------------------------------------------------------------------ rule 4: wrap


def test_bare_string_is_wrapped() -> None:
    result = repair_arguments({"files": "main.ts"}, obj(files=ARR))
    assert result.value == {"files": ["main.ts"]}
    assert rules(result) == [(R.WRAP_BARE_STRING, "$.files")]


def test_wrapped_item_is_then_converted_to_the_item_type() -> None:
    result = repair_arguments({"lines": "5"}, obj(lines={"type": "array", "items": INT}))
    assert result.value == {"lines": [5]}
    assert [r for r, _ in rules(result)] == [R.WRAP_BARE_STRING, R.PARSE_SCALAR_STRING]


@pytest.mark.parametrize("text", ["", "   ", "{not json}", "[x]", "null"])
def test_empty_or_container_shaped_strings_are_not_wrapped(text: str) -> None:
    result = repair_arguments({"files": text}, obj(["files"], files=ARR))
    assert result.value == {"files": text}
    assert result.notes == ()
    assert not result.ok


def test_wrap_is_undone_when_the_item_has_a_type_no_rule_fixes() -> None:
    result = repair_arguments({"ns": "abc"}, obj(ns={"type": "array", "items": INT}))
    assert result.value == {"ns": "abc"}
    assert result.notes == ()
    assert [(e.location, e.keyword) for e in result.errors] == [("$.ns", "type")]


def test_wrap_never_nests() -> None:
    schema = {"type": "array", "items": {"$ref": "#"}}
    result = repair_arguments("a.txt", schema)
    assert result.value == "a.txt"
    assert result.notes == ()
    assert not result.ok


def test_wrapped_item_failing_another_check_stays_wrapped() -> None:
    schema = obj(modes={"type": "array", "items": {"enum": ["read", "write"]}})
    result = repair_arguments({"modes": "delete"}, schema)
    assert result.value == {"modes": ["delete"]}
    assert [(e.location, e.keyword) for e in result.errors] == [("$.modes[0]", "enum")]


def test_wrap_prefers_the_alternative_the_value_already_fits() -> None:
    schema = obj(v={"anyOf": [{"type": "string", "enum": ["a", "b"]}, ARR]})
    result = repair_arguments({"v": "c"}, schema)
    assert result.value == {"v": "c"}
    assert result.notes == ()
    assert result.errors[0].keyword == "anyOf"


# ------------------------------------------------------------------ rule 5: scalars


@pytest.mark.parametrize(
    ("text", "schema", "expected"),
    [
        ("30", INT, 30),
        ("-7", INT, -7),
        ("30", NUM, 30),
        ("1.5", NUM, 1.5),
        ("1e3", NUM, 1000.0),
        ("true", BOOL, True),
        ("false", BOOL, False),
        ("null", {"type": ["integer", "null"]}, None),
        ("2", {"type": ["boolean", "integer"]}, 2),
    ],
)
def test_scalar_literal_strings_are_converted(text: str, schema: Any, expected: Any) -> None:
    result = repair_arguments({"v": text}, obj(v=schema))
    assert result.value == {"v": expected}
    assert type(result.value["v"]) is type(expected)
    assert rules(result) == [(R.PARSE_SCALAR_STRING, "$.v")]


@pytest.mark.parametrize(
    ("text", "schema"),
    [
        ("1.5", INT),
        ("1e3", INT),
        (" 30", INT),
        ("30 ", NUM),
        ("+5", INT),
        ("05", INT),
        ("0x10", INT),
        ("NaN", NUM),
        ("Infinity", NUM),
        ("1e400", NUM),
        ("1" * 101, INT),
        ("True", BOOL),
        ("yes", BOOL),
        ("1", BOOL),
        ("٣", INT),  # a non-ASCII digit
    ],
)
def test_near_literals_are_not_converted(text: str, schema: Any) -> None:
    result = repair_arguments({"v": text}, obj(v=schema))
    assert result.value == {"v": text}
    assert result.notes == ()
    assert not result.ok


def test_enum_of_numbers_is_not_coerced() -> None:
    result = repair_arguments({"v": "2"}, obj(v={"enum": [1, 2, 3]}))
    assert result.value == {"v": "2"}
    assert not result.ok


def test_null_string_on_optional_field_is_dropped() -> None:
    result = repair_arguments({"limit": "null", "path": "p"}, obj(limit=INT, path=STR))
    assert result.value == {"path": "p"}
    assert rules(result) == [(R.DROP_NULL_STRING, "$.limit")]


def test_null_string_on_required_field_stays() -> None:
    result = repair_arguments({"limit": "null"}, obj(["limit"], limit=INT))
    assert result.value == {"limit": "null"}
    assert result.notes == ()
    assert not result.ok


# ------------------------------------------------------------------ rule 6: aliases

PATH_TOOL = obj(["path"], path=STR, limit=INT)
ALIASES = {"path": ["file_path", "filePath"]}


def test_alias_is_renamed_when_the_expected_key_is_missing() -> None:
    result = repair_arguments({"limit": 5, "filePath": "a"}, PATH_TOOL, aliases=ALIASES)
    assert result.value == {"limit": 5, "path": "a"}
    assert result.notes == (
        RepairNote(rule=R.RENAME_ALIAS, path=("filePath",), before='"filePath"', after='"path"'),
    )


def test_alias_is_renamed_in_place() -> None:
    result = repair_arguments({"file_path": "a", "limit": 5}, PATH_TOOL, aliases=ALIASES)
    assert list(result.value) == ["path", "limit"]


def test_alias_rejected_by_additional_properties_is_renamed() -> None:
    schema = {**obj(path=STR), "additionalProperties": False}
    result = repair_arguments({"file_path": "a"}, schema, aliases={"path": "file_path"})
    assert result.value == {"path": "a"}


def test_aliases_are_left_alone_when_not_needed() -> None:
    assert_untouched({"path": "a", "file_path": "b"}, PATH_TOOL, aliases=ALIASES)
    assert_untouched({"file_path": "b"}, obj(path=STR), aliases=ALIASES)
    result = repair_arguments({"file_path": "b"}, PATH_TOOL)
    assert result.notes == ()
    assert result.errors[0].location == "$.path"


@pytest.mark.parametrize("bad", [["path"], {"path": [3]}, {3: ["x"]}])
def test_bad_aliases_raise_type_error(bad: Any) -> None:
    with pytest.raises(TypeError):
        repair_arguments({}, PATH_TOOL, aliases=bad)


# ------------------------------------------------------------------ keys spelled differently

READ_TOOL = {**obj(["file_path"], file_path=STR, offset=INT), "additionalProperties": False}


@pytest.mark.parametrize("key", ["filePath", "FilePath", "file-path", "FILE_PATH", "filepath"])
def test_a_key_spelled_like_one_missing_property_is_renamed(key: str) -> None:
    # Issue 21: Claude Code refuses `filePath` for Read's `file_path` ("An unexpected
    # parameter `filePath` was provided"); OpenCode models write the other spelling.
    args = {"offset": 3, key: "a.md"}
    result = repair_arguments(args, READ_TOOL)
    assert result.ok
    assert result.value == {"offset": 3, "file_path": "a.md"}
    assert list(result.value) == ["offset", "file_path"]  # renamed in place
    assert result.notes == (
        RepairNote(
            rule=R.RENAME_SPELLING, path=(key,), before=json.dumps(key), after='"file_path"'
        ),
    )
    assert args == {"offset": 3, key: "a.md"}  # the caller's value is not mutated
    assert repair_arguments(result.value, READ_TOOL).notes == ()  # idempotent


def test_spelling_renames_work_where_the_key_is_only_refused_as_extra() -> None:
    schema = {**obj(path=STR, old_string=STR), "additionalProperties": False}
    result = repair_arguments({"path": "a", "oldString": "x"}, schema)
    assert result.value == {"path": "a", "old_string": "x"}
    assert rules(result) == [(R.RENAME_SPELLING, "$.oldString")]


def test_spelling_renames_reach_nested_objects() -> None:
    schema = obj(edits={"type": "array", "items": {**obj(["new_text"], new_text=STR)}})
    result = repair_arguments({"edits": [{"newText": "x"}, {"new_text": "y"}]}, schema)
    assert result.value == {"edits": [{"new_text": "x"}, {"new_text": "y"}]}
    assert rules(result) == [(R.RENAME_SPELLING, "$.edits[0].newText")]


@pytest.mark.parametrize(
    ("args", "schema"),
    [
        # valid as it is: extra keys allowed and nothing required is missing
        ({"filePath": "a"}, obj(file_path=STR)),
        # the property is there already: the extra key is the model's, not a misspelling
        ({"file_path": "a", "filePath": "b"}, obj(["file_path"], file_path=STR)),
        # two keys spell the same property: which one was meant is not known
        ({"filePath": "a", "file-path": "b"}, obj(["file_path"], file_path=STR)),
        # two declared properties share the spelling
        ({"FILEPATH": "a"}, obj(["file_path"], file_path=STR, filePath=STR)),
        # a different word, not a different spelling
        ({"path": "a"}, obj(["file_path"], file_path=STR)),
        ({"file_paths": "a"}, obj(["file_path"], file_path=STR)),
        # patternProperties admits the key
        (
            {"filePath": "a"},
            {**obj(["file_path"], file_path=STR), "patternProperties": {"^f": STR}},
        ),
    ],
)
def test_spelling_is_not_guessed(args: dict[str, Any], schema: dict[str, Any]) -> None:
    before = copy.deepcopy(args)
    result = repair_arguments(args, schema)
    assert all(note.rule is not R.RENAME_SPELLING for note in result.notes)
    assert result.value == before
    assert args == before


def test_a_caller_alias_wins_over_a_spelling() -> None:
    schema = {**obj(["path"], path=STR, file_path=STR), "additionalProperties": False}
    result = repair_arguments({"filePath": "a"}, schema, aliases={"path": ["filePath"]})
    assert result.value == {"path": "a"}
    assert rules(result) == [(R.RENAME_ALIAS, "$.filePath")]


@settings(max_examples=200, deadline=None)
@given(
    key=st.sampled_from(["file_path", "old_string", "max_results"]),
    data=st.data(),
)
def test_any_spelling_variant_is_renamed_back(key: str, data: st.DataObject) -> None:
    words = key.split("_")
    sep = data.draw(st.sampled_from(["", "_", "-"]))
    cased = [data.draw(st.sampled_from([w, w.upper(), w.capitalize()])) for w in words]
    variant = sep.join(cased)
    schema = {**obj([key], **{key: STR}), "additionalProperties": False}
    result = repair_arguments({variant: "v"}, schema)
    assert result.value == {key: "v"}
    assert result.ok
    expected = () if variant == key else ((R.RENAME_SPELLING, (variant,)),)
    assert tuple((note.rule, note.path) for note in result.notes) == expected


# ------------------------------------------------------------------ autolinks


@pytest.mark.parametrize(
    "key", ["path", "filePath", "file_path", "paths", "files", "cwd", "target_dir", "fileName"]
)
def test_autolinks_are_unwrapped_in_path_like_fields(key: str) -> None:
    result = repair_arguments({key: "/Users/x/[notes.md](http://notes.md)"})
    assert result.value == {key: "/Users/x/notes.md"}
    assert rules(result) == [(R.UNWRAP_AUTOLINK, f"$.{key}")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[notes.md](https://host/notes.md)", "notes.md"),
        ("[notes.md](http://localhost:3000/notes.md)", "notes.md"),
        ("/data/[nötés.md](http://nötés.md)", "/data/nötés.md"),
        ("[a.md](http://a.md) [b.md](http://b.md)", "a.md b.md"),
        # Claude Code resolves a file path before its hooks see it: // becomes /
        ("/home/u/p/[new.md](http:/new.md)", "/home/u/p/new.md"),
        ("/home/u/p/[docs/a.md](https:/docs/a.md)", "/home/u/p/docs/a.md"),
        ("/home/u/p/[a.md](http:/localhost:3000/a.md)", "/home/u/p/a.md"),
    ],
)
def test_autolink_forms(text: str, expected: str) -> None:
    assert repair_arguments({"path": text}).value == {"path": expected}


@pytest.mark.parametrize(
    "text",
    [
        "see [click](https://example.com)",
        "[notes.md](https://example.com/docs/notes.md)",
        "[notes.md](http://notes.md?raw=1)",
        "[a\nb](http://a\nb)",
        "/p/[notes.md](http:/example.com/docs/notes.md)",
        "/p/[notes.md](http:notes.md)",
        "/p/[notes.md](http:///notes.md)",
    ],
)
def test_real_links_are_never_touched(text: str) -> None:
    assert_untouched({"path": text}, None)


@pytest.mark.parametrize("key", ["content", "new_string", "file_content", "profile", "url", "body"])
def test_autolinks_in_content_fields_are_kept(key: str) -> None:
    schema = {"type": "object", "properties": {key: STR}}
    assert_untouched({key: "[example.com](http://example.com)"}, schema)


def test_autolinks_in_nested_and_array_path_fields() -> None:
    args = {
        "files": ["[a.md](http://a.md)", "b.md"],
        "edits": [{"file_path": "/x/[c.md](http://c.md)", "content": "[d.md](http://d.md)"}],
    }
    result = repair_arguments(args)
    assert result.value == {
        "files": ["a.md", "b.md"],
        "edits": [{"file_path": "/x/c.md", "content": "[d.md](http://d.md)"}],
    }
    assert [loc for _, loc in rules(result)] == ["$.edits[0].file_path", "$.files[0]"]


def test_schema_format_marks_a_field_as_a_path() -> None:
    schema = {
        "$defs": {"p": {"type": "string", "format": "file-path"}},
        **obj(target={"$ref": "#/$defs/p"}, other={"type": "array", "items": {"format": "path"}}),
    }
    args = {"target": "[a.md](http://a.md)", "other": ["[b.md](http://b.md)"], "t": "[c](http://c)"}
    result = repair_arguments(args, schema)
    assert result.value == {"target": "a.md", "other": ["b.md"], "t": "[c](http://c)"}


def test_nested_autolinks_are_unwrapped_to_a_fixed_point() -> None:
    result = repair_arguments({"path": "[[a](http://a)](http://a)"})
    assert result.value == {"path": "a"}
    assert repair_arguments(result.value).notes == ()


def test_autolinks_inside_parsed_strings_are_unwrapped_too() -> None:
    result = repair_arguments({"files": '["[a.md](http://a.md)"]'}, obj(files=ARR))
    assert result.value == {"files": ["a.md"]}
    assert [r for r, _ in rules(result)] == [R.UNWRAP_AUTOLINK, R.PARSE_JSON_STRING]


def test_autolinks_in_containers_parsed_from_other_fields_are_unwrapped() -> None:
    schema = obj(edits={"type": "array", "items": obj(path=STR)})
    result = repair_arguments({"edits": '[{"path": "[a.md](http://a.md)"}]'}, schema)
    assert result.value == {"edits": [{"path": "a.md"}]}
    assert rules(result) == [
        (R.PARSE_JSON_STRING, "$.edits"),
        (R.UNWRAP_AUTOLINK, "$.edits[0].path"),
    ]


# ------------------------------------------------------------------ malformed schemas

MALFORMED = [
    {"type": "object", "properties": None},
    {"properties": {"files": None}},
    {"properties": {"files": 3}},
    {"properties": {"files": "array"}},
    {"properties": {"files": {"anyOf": {}}}},
    {"properties": {"files": {"anyOf": None}}},
    {"properties": {"files": {"anyOf": "array"}}},
    {"properties": {"files": {"oneOf": [None]}}},
    {"properties": {"files": {"type": "arrray"}}},
    {"properties": {"files": {"type": ["array", 3]}}},
    {"properties": {"files": {"pattern": "["}}},
    {"properties": {"files": {"minLength": -1}}},
    {"properties": {"files": {"prefixItems": [3]}}},
    {"patternProperties": {"(": STR}},
    {"required": "files"},
    {"required": None},
    {"$schema": 3},
    {"$schema": ["x"]},
    {"$ref": "#"},
    {"$ref": "#/$defs/missing"},
    {"$ref": "https://example.com/remote.json"},
    {"allOf": [{"$ref": "#/allOf/0"}]},
]
ODD_BUT_READABLE = [
    {"properties": {"files": True}},
    {"properties": {"files": False}},
    {"properties": {"files": {"$ref": "#/properties"}}},
    {"properties": {"files": {}}, "const": {"properties": {"x": False}}},
]


@pytest.mark.parametrize("schema", ODD_BUT_READABLE)
def test_odd_but_readable_schemas_never_raise(schema: Any) -> None:
    snapshot = copy.deepcopy(schema)
    args: dict[str, Any]
    for args in ({"files": "a.txt"}, {"files": None, "x": {}}, {"files": '["a"]'}):
        result = repair_arguments(args, schema)
        assert result.schema_skipped == ()
    assert schema == snapshot


@pytest.mark.parametrize("schema", MALFORMED)
def test_malformed_schemas_never_raise_and_record_what_was_skipped(schema: Any) -> None:
    snapshot = copy.deepcopy(schema)
    args: dict[str, Any]
    for args in ({"files": "a.txt"}, {"files": None, "x": {}}, {"files": '["a"]'}):
        result = repair_arguments(args, schema)
        assert isinstance(result, ArgumentRepair)
        assert result.schema_skipped
        assert all(isinstance(entry, str) and entry for entry in result.schema_skipped)
    assert schema == snapshot


@pytest.mark.parametrize(
    "schema", [{"properties": None}, {"properties": {"files": 3}}, {"required": "files"}]
)
def test_unreadable_parts_are_skipped_and_the_rest_is_used(schema: Any) -> None:
    full = {**schema, "type": "object", "properties": schema.get("properties")}
    full["properties"] = {**(full["properties"] if isinstance(full["properties"], dict) else {})}
    full["properties"]["limit"] = INT
    result = repair_arguments({"files": "a.txt", "limit": None}, full)
    assert result.value == {"files": "a.txt"}
    assert rules(result) == [(R.DROP_NULL, "$.limit")]


def test_a_broken_alternative_is_dropped_and_the_others_used() -> None:
    result = repair_arguments({"files": "a.txt"}, obj(files={"anyOf": [None, {"type": "array"}]}))
    assert result.value == {"files": ["a.txt"]}
    assert result.schema_skipped == (
        "#/properties/files/anyOf/0: null is not valid there; ignored",
    )


@pytest.mark.parametrize("schema", [3, "array", [], 1.5])
def test_non_schema_values_mean_no_validation(schema: Any) -> None:
    result = assert_untouched({"files": None}, schema)
    assert result.ok
    assert result.schema_skipped


def test_boolean_schemas() -> None:
    assert_untouched({"files": "a"}, True)
    result = repair_arguments({"files": "a"}, False)
    assert result.value == {"files": "a"}
    assert not result.ok
    assert result.errors[0].keyword == "false"


def test_false_property_schema_drops_an_optional_null_and_reports_others() -> None:
    result = repair_arguments({"x": None, "y": 1}, obj(x=False, y=INT))
    assert result.value == {"y": 1}
    result = repair_arguments({"x": 3}, obj(x=False))
    assert [(e.location, e.keyword) for e in result.errors] == [("$.x", "not")]


def test_data_keywords_are_never_rewritten() -> None:
    schema = {"const": {"properties": {"x": False}}}
    assert repair_arguments({"properties": {"x": False}}, schema).ok


# ------------------------------------------------------------------ dialects

DRAFT4 = "http://json-schema.org/draft-04/schema#"


def test_schema_dialect_is_honoured() -> None:
    n5 = {"type": "number", "maximum": 5, "exclusiveMaximum": True}
    draft4 = repair_arguments({"n": 5}, {"$schema": DRAFT4, **obj(n=n5)})
    assert not draft4.ok
    assert draft4.schema_skipped == ()
    default = repair_arguments({"n": 5}, obj(n=n5))  # 2020-12: a boolean here is invalid
    assert default.ok
    assert default.schema_skipped == (
        "#/properties/n/exclusiveMaximum: true is not valid there; ignored",
    )


def test_draft7_tuple_items_and_dependencies() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema",
        "type": "object",
        "properties": {"pair": {"type": "array", "items": [INT, STR]}, "a": STR, "b": STR},
        "dependencies": {"a": ["b"]},
    }
    result = repair_arguments({"pair": ["1", "x"], "a": "y", "b": None}, schema)
    assert result.value == {"pair": [1, "x"], "a": "y", "b": None}
    assert [e.location for e in result.errors] == ["$.b"]


def test_unknown_dialect_is_validated_as_2020_12() -> None:
    result = repair_arguments(
        {"files": "a"}, {"$schema": "https://example.com/s", **obj(files=ARR)}
    )
    assert result.value == {"files": ["a"]}
    assert "unknown dialect" in result.schema_skipped[0]


def test_remote_references_are_never_fetched() -> None:
    schema = obj(files={"$ref": "https://example.com/schemas/files.json"}, n=INT)
    result = repair_arguments({"files": 3, "n": "4"}, schema)
    assert result.value == {"files": 3, "n": 4}
    assert "does not resolve" in result.schema_skipped[0]


def test_a_schema_is_prepared_once_and_no_call_changes_it_for_the_next() -> None:
    """The cleaned schema and its validator are built once per schema and shared; a call
    whose value reaches a reference that does not resolve drops it in a copy of its own,
    so what the next call gets does not depend on which calls came before."""
    from streamrepair.schema import _access

    schema = obj(files={"$ref": "#/$defs/missing"}, n=INT)
    _access._prepared.cache_clear()
    cold = repair_arguments({"n": "4"}, schema)  # never reaches the reference
    reaching = repair_arguments({"files": 3, "n": "4"}, schema)
    assert "does not resolve" in reaching.schema_skipped[0]
    again = repair_arguments({"n": "4"}, schema)
    assert (again.value, again.notes, again.schema_skipped) == (
        cold.value,
        cold.notes,
        cold.schema_skipped,
    )
    assert repair_arguments({"files": 3, "n": "4"}, schema) == reaching
    info = _access._prepared.cache_info()
    assert (info.misses, info.hits) == (1, 3)  # prepared once, for all four calls
    assert info.maxsize == _access.SCHEMA_CACHE_SIZE


# ------------------------------------------------------------------ result contract


def test_errors_describe_what_is_still_wrong() -> None:
    schema = obj(["path"], path=STR, files=ARR, mode={"enum": ["r", "w"]})
    result = repair_arguments({"files": "[not json]", "mode": "x"}, schema)
    assert not result.ok
    by_path = {issue.location: issue for issue in result.errors}
    assert set(by_path) == {"$.path", "$.files", "$.mode"}
    assert by_path["$.path"].keyword == "required"
    assert by_path["$.path"].valid_shape == '{"type":"string"}'
    assert by_path["$.files"].expected == "an array"
    assert by_path["$.files"].received == 'string "[not json]"'
    assert by_path["$.mode"].expected == 'one of ["r","w"]'


def test_feedback_is_readable_and_bounded() -> None:
    result = repair_arguments({"files": "[not json]"}, obj(["path"], path=STR, files=ARR))
    text = result.feedback("write_file")
    assert text.splitlines()[0] == 'Invalid input for tool "write_file". Please correct and retry:'
    assert '  * $.files: expected an array, received string "[not json]".' in text
    assert "Valid shape: " in text
    assert "  * $.path: required property is missing." in text
    assert "Traceback" not in text
    assert "Error:" not in text
    assert repair_arguments({}, obj()).feedback("t") == ""
    named = repair_arguments({"x": 1}, obj(x=STR), tool_name="read_file")
    assert named.feedback().startswith('Invalid input for tool "read_file"')
    assert repair_arguments({"x": 1}, obj(x=STR)).feedback().startswith("Invalid tool input.")


def test_feedback_lists_at_most_the_bound() -> None:
    args = {"xs": list(range(MAX_FEEDBACK_ISSUES + 5))}
    result = repair_arguments(args, obj(xs={"type": "array", "items": STR}))
    lines = result.feedback("t").splitlines()
    assert len(lines) == 1 + MAX_FEEDBACK_ISSUES + 1
    assert lines[-1] == "  * ... and 5 more"


def test_summaries_never_hold_the_whole_content() -> None:
    big = "x" * 100_000
    result = repair_arguments({"content": big, "n": "1"}, obj(content={"maxLength": 3}, n=INT))
    assert all(len(note.before) < 200 for note in result.notes)
    for issue in result.errors:
        assert len(issue.message) < 400
        assert len(issue.received) < 200
    assert "(100000 chars)" in result.errors[0].received


def test_too_deep_values_get_a_clear_error_not_a_crash() -> None:
    deep: Any = "leaf"
    for _ in range(MAX_VALIDATION_DEPTH + 1):
        deep = [deep]
    result = repair_arguments({"v": deep}, obj(v={"type": "array"}))
    assert not result.ok
    assert result.errors[0].keyword == "depth"
    assert result.value == {"v": deep}
    assert repair_arguments({"v": deep}).ok  # without a schema nothing is validated


@pytest.mark.parametrize(
    "args", [{"s": {1, 2}}, {1: "x"}, {"o": object()}, object(), {"a": [b"bytes"]}]
)
def test_non_json_arguments_raise_type_error(args: Any) -> None:
    with pytest.raises(TypeError, match="JSON data"):
        repair_arguments(args, obj())


def test_reference_cycles_in_args_raise_type_error() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    with pytest.raises(TypeError, match="cycle"):
        repair_arguments(cyclic)


def test_tuples_are_read_as_arrays() -> None:
    assert repair_arguments({"files": ("a",)}, obj(files=ARR)).value == {"files": ["a"]}


def test_records_are_frozen_and_checked() -> None:
    note = RepairNote(rule=R.DROP_NULL, path=("a", 0, "b c"), before="null", after="(removed)")
    assert note.location == '$.a[0]["b c"]'
    with pytest.raises(AttributeError):
        note.rule = R.RENAME_ALIAS  # type: ignore[misc]
    with pytest.raises(TypeError):
        RepairNote(rule="drop_null", path=(), before="", after="")  # type: ignore[arg-type]
    issue = SchemaIssue(path=('we"ird',), keyword="type", message="m")
    assert issue.location == '$["we\\"ird"]'
    assert all(rule.guidance for rule in SchemaRule)


# ------------------------------------------------------------------ properties

_strings = st.sampled_from(
    [
        "a.txt",
        '["a.txt"]',
        ' ["a"] ',
        "[not json]",
        '{"k": 1}',
        '{"k": null}',
        "30",
        "1.5",
        "true",
        "null",
        "",
        "[n.md](http://n.md)",
        '"[\\"x\\"]"',
    ]
)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), _strings, st.text(max_size=5))
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "n", "path", "files"]), inner, max_size=3)
    ),
    max_leaves=10,
)
_keys = st.sampled_from(["files", "path", "limit", "content", "opts", "flag", "n", "file_path"])
_args = st.dictionaries(_keys, _values, max_size=6)
_TOOL = obj(
    ["path"],
    files=ARR,
    path=STR,
    limit=INT,
    content=STR,
    opts=obj(["a"], a={"type": ["integer", "null"]}, n=NUM, files={"type": "array", "items": INT}),
    flag=BOOL,
    n={"anyOf": [INT, {"type": "array", "items": INT}, {"type": "null"}]},
)
_schemas = st.sampled_from(
    [
        None,
        _TOOL,
        {**_TOOL, "additionalProperties": False},
        obj(files={"type": "array", "items": obj(n=INT)}, limit={"type": ["integer", "null"]}),
        {"type": "object", "additionalProperties": {"type": "array", "items": BOOL}},
        MALFORMED[0],
        MALFORMED[5],
    ]
)


def _containers(value: Any) -> list[int]:
    found: list[int] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, (dict, list)):
            found.append(id(node))
            stack.extend(node.values() if isinstance(node, dict) else node)
    return found


@settings(max_examples=200, deadline=None)
@given(_args, _schemas)
def test_idempotent_and_never_mutates_or_shares(args: dict[str, Any], schema: Any) -> None:
    snapshot = copy.deepcopy(args)
    schema_snapshot = copy.deepcopy(schema)
    once = repair_arguments(args, schema, aliases={"path": ["file_path"]})
    assert args == snapshot
    assert schema == schema_snapshot
    assert not set(_containers(once.value)) & set(_containers(args))
    twice = repair_arguments(once.value, schema, aliases={"path": ["file_path"]})
    assert twice.value == once.value
    assert twice.notes == ()
    assert twice.errors == once.errors


@settings(max_examples=200, deadline=None)
@given(_args, _schemas)
def test_valid_arguments_are_never_repaired(args: dict[str, Any], schema: Any) -> None:
    if not isinstance(schema, dict) or "](" in json.dumps(args):
        return
    try:
        if not jsonschema.Draft202012Validator(schema).is_valid(args):
            return
    except (AttributeError, TypeError):  # a malformed schema jsonschema cannot use
        return
    result = repair_arguments(args, schema)
    assert result.value == args
    assert result.notes == ()
    assert result.ok


@settings(max_examples=100, deadline=None)
@given(_args)
def test_ok_means_valid(args: dict[str, Any]) -> None:
    result = repair_arguments(args, _TOOL)
    assert result.ok == jsonschema.Draft202012Validator(_TOOL).is_valid(result.value)


_leaf_types = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])
_names = st.sampled_from(["a", "path", "files", "n", "content"])
_random_schemas = st.recursive(
    st.one_of(
        st.builds(lambda t: {"type": t}, _leaf_types),
        st.builds(lambda ts: {"type": ts}, st.lists(_leaf_types, min_size=1, max_size=3)),
        st.sampled_from(
            [
                {"enum": ["a", "b", None]},
                {"type": "string", "format": "path"},
                True,
                False,
                3,
                None,
                {"anyOf": {}},
                {"$ref": "#"},
                {"$ref": "#/$defs/x"},
            ]
        ),
    ),
    lambda inner: st.one_of(
        st.builds(
            lambda props, req: {"type": "object", "properties": props, "required": req},
            st.dictionaries(_names, inner, max_size=4),
            st.lists(_names, max_size=2, unique=True),
        ),
        st.builds(lambda it: {"type": "array", "items": it}, inner),
        st.builds(lambda alts: {"anyOf": alts}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda alts: {"oneOf": alts}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda alts: {"allOf": alts}, st.lists(inner, min_size=1, max_size=2)),
        st.builds(lambda s: {"type": "object", "additionalProperties": s}, inner),
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(_values, _random_schemas)
def test_random_schemas_never_raise_and_stay_idempotent(args: Any, schema: Any) -> None:
    snapshot, schema_snapshot = copy.deepcopy(args), copy.deepcopy(schema)
    once = repair_arguments(args, schema, aliases={"path": ["file_path"]})
    assert (args, schema) == (snapshot, schema_snapshot)
    assert isinstance(once.feedback("t"), str)
    twice = repair_arguments(once.value, schema, aliases={"path": ["file_path"]})
    assert twice.value == once.value
    assert twice.notes == ()
    assert twice.errors == once.errors


# ------------------------------------------------------------------ docs


def test_docs_rules_examples_run() -> None:
    docs = Path(__file__).resolve().parent.parent / "docs" / "rules.md"
    blocks = re.findall(r"```python\n(.*?)```", docs.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) >= 3
    for block in blocks:
        exec(compile(block, str(docs), "exec"), {})
