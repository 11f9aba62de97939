"""append_repair_notes: the block, its once-per-conversation dedup, and history shapes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamrepair.schema.notes import (
    MAX_PATHS_PER_NOTE,
    append_repair_notes,
    repair_note_fingerprints,
)
from streamrepair.schema.report import RepairNote, SchemaRule
from streamrepair.schema.rules import repair_arguments

R = SchemaRule


def note(rule: SchemaRule, *path: str | int) -> RepairNote:
    return RepairNote(rule=rule, path=tuple(path), before="x", after="y")


NULL_LIMIT = note(R.DROP_NULL, "limit")
NULL_OFFSET = note(R.DROP_NULL, "offset")
PARSED_FILES = note(R.PARSE_JSON_STRING, "files")


def test_block_format() -> None:
    out = append_repair_notes("file body", [NULL_LIMIT, PARSED_FILES, NULL_OFFSET], "read_file")
    assert out == (
        "file body\n\n"
        "[streamrepair: arguments of read_file were repaired]\n"
        "- drop_null at $.limit, $.offset: omit optional fields instead of sending null.\n"
        "- parse_json_string at $.files: send arrays and objects as JSON values, "
        "not as strings that contain JSON.\n"
        "Send the types the schema expects directly next time."
    )


def test_no_notes_or_empty_result() -> None:
    assert append_repair_notes("body", [], "t") == "body"
    out = append_repair_notes("", [NULL_LIMIT], "t")
    assert out.startswith("[streamrepair: arguments of t were repaired]\n")


def test_without_a_tool_name() -> None:
    out = append_repair_notes("body", [NULL_LIMIT], None)
    assert "\n[streamrepair: arguments were repaired]\n" in out
    assert append_repair_notes(out, [NULL_LIMIT], None) == out
    assert append_repair_notes(out, [NULL_LIMIT], "t") != out


def test_many_paths_are_counted_not_listed() -> None:
    notes = [note(R.DROP_NULL, f"k{i}") for i in range(MAX_PATHS_PER_NOTE + 3)]
    notes.append(note(R.DROP_NULL, "k0"))  # a repeated path is listed once
    line = append_repair_notes("", notes, "t").splitlines()[1]
    assert line.startswith("- drop_null at $.k0, $.k1, $.k2, $.k3, $.k4 and 3 more: ")


def test_appending_twice_equals_once() -> None:
    once = append_repair_notes("body", [NULL_LIMIT, PARSED_FILES], "t")
    assert append_repair_notes(once, [NULL_LIMIT, PARSED_FILES], "t") == once


def test_a_note_seen_earlier_in_the_conversation_is_not_repeated() -> None:
    earlier = append_repair_notes("old result", [NULL_LIMIT], "read_file")
    out = append_repair_notes("new", [NULL_OFFSET], "read_file", history=[earlier])
    assert out == "new"


def test_only_new_rules_are_added() -> None:
    earlier = append_repair_notes("old", [NULL_LIMIT], "read_file")
    out = append_repair_notes("new", [NULL_OFFSET, PARSED_FILES], "read_file", history=[earlier])
    assert "drop_null" not in out
    assert "- parse_json_string at $.files:" in out


def test_the_same_rule_for_another_tool_is_still_added() -> None:
    earlier = append_repair_notes("old", [NULL_LIMIT], "read_file")
    out = append_repair_notes("new", [NULL_LIMIT], "write_file", history=[earlier])
    assert "[streamrepair: arguments of write_file were repaired]" in out


def test_rule_words_outside_a_block_do_not_count() -> None:
    history = ["- drop_null at $.limit: the user typed this", "drop_null read_file"]
    assert append_repair_notes("new", [NULL_LIMIT], "read_file", history=history) != "new"


@pytest.mark.parametrize(
    "wrap",
    [
        lambda text: text,
        lambda text: {"role": "tool", "tool_call_id": "c1", "content": text},
        lambda text: {"role": "user", "content": [{"type": "text", "text": text}]},
        lambda text: {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "text", "text": text}],
                }
            ],
        },
        lambda text: {"role": "user", "content": [{"type": "tool_result", "content": text}]},
        lambda text: {"type": "function_call_output", "call_id": "c1", "output": text},
    ],
)
def test_history_shapes(wrap: Any) -> None:
    earlier = append_repair_notes("old", [NULL_LIMIT], "read_file")
    history = [{"role": "assistant", "content": None}, wrap(earlier)]
    assert append_repair_notes("new", [NULL_LIMIT], "read_file", history=history) == "new"


def test_history_is_read_lazily_from_any_iterable() -> None:
    earlier = append_repair_notes("old", [NULL_LIMIT], "read_file")
    history = (text for text in ["x", earlier])
    assert append_repair_notes("new", [NULL_LIMIT], "read_file", history=history) == "new"


@pytest.mark.parametrize("item", [3, None, ["text"], b"bytes"])
def test_other_history_items_raise(item: Any) -> None:
    with pytest.raises(TypeError, match="history items"):
        append_repair_notes("new", [NULL_LIMIT], "t", history=[item])


def test_notes_must_be_records() -> None:
    with pytest.raises(TypeError, match="RepairNote"):
        append_repair_notes("new", ["[repair: null]"], "t")  # type: ignore[list-item]


def test_tool_names_are_normalised_to_one_line() -> None:
    out = append_repair_notes("", [NULL_LIMIT], "odd\ntool  name")
    assert out.splitlines()[0] == "[streamrepair: arguments of odd tool name were repaired]"
    assert append_repair_notes(out, [NULL_LIMIT], "odd tool name") == out


def test_fingerprints() -> None:
    text = (
        append_repair_notes("a", [NULL_LIMIT, PARSED_FILES], "t1")
        + "\n"
        + append_repair_notes("b", [note(R.WRAP_BARE_STRING, "x")], "t2")
        + "\n- empty_object_to_array at $.x: not part of a block"
    )
    assert repair_note_fingerprints(text) == {
        ("drop_null", "t1"),
        ("parse_json_string", "t1"),
        ("wrap_bare_string", "t2"),
    }


def test_with_a_real_repair() -> None:
    schema = {
        "type": "object",
        "properties": {"limit": {"type": "integer"}, "path": {"type": "string"}},
    }
    result = repair_arguments({"path": "/x/[a.md](http://a.md)", "limit": None}, schema)
    out = append_repair_notes("contents", result.notes, "read_file")
    assert "- unwrap_autolink at $.path: write file paths as plain text" in out
    assert "- drop_null at $.limit:" in out


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.builds(note, st.sampled_from(list(SchemaRule)), st.sampled_from(["a", "b"])), max_size=6
    ),
    st.text(max_size=12),
    st.one_of(st.none(), st.text(max_size=8)),
)
def test_idempotent_and_prefix_preserving(
    notes: list[RepairNote], body: str, tool: str | None
) -> None:
    once = append_repair_notes(body, notes, tool)
    assert once.startswith(body)
    assert append_repair_notes(once, notes, tool) == once
    assert append_repair_notes("next", notes, tool, history=[once]) == "next"


def test_syntax_repairs_become_notes_with_guidance_and_are_deduplicated() -> None:
    from streamrepair import RepairKind, repair

    result = repair("{'path': 'a.md', 'overwrite': True,}")
    text = append_repair_notes("ok", result.repairs, "write_file")
    assert text.splitlines()[2:] == [
        "[streamrepair: arguments of write_file were repaired]",
        "- single_quotes at character 1: quote strings and keys with double quotes.",
        "- python_literal at character 30: write true, false and null, not True, False and None.",
        "- trailing_comma at character 34: put no comma after the last member of an object "
        "or array.",
        "Send plain, valid JSON of the expected types directly next time.",
    ]
    assert [r.kind for r in result.repairs] == [
        RepairKind.SINGLE_QUOTES,
        RepairKind.PYTHON_LITERAL,
        RepairKind.TRAILING_COMMA,
    ]
    # a later call with the same mistakes, same tool: nothing is repeated
    assert append_repair_notes("ok", result.repairs, "write_file", history=[text]) == "ok"
    # another tool still hears about it
    assert "single_quotes" in append_repair_notes("ok", result.repairs, "read", history=[text])


def test_every_repair_kind_has_guidance() -> None:
    from streamrepair import RepairKind

    for kind in RepairKind:
        assert kind.guidance
        assert not kind.guidance.endswith(".")
