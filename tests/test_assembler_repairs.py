"""Each repair rule of the assembler: what it does whole, one character at a time and at
random splits (assert_same_everywhere), what it records, and where it must not fire."""

from __future__ import annotations

import json

import pytest

from _support import assert_same_everywhere, run
from streamrepair import ConcatenatedValuesError, RepairKind, UnrepairableError, repair

# (input, expected value, expected repair kinds in order, structure_synthesized)
CASES = [
    # trailing commas, string-aware
    ('{"a": 1,}', {"a": 1}, [RepairKind.TRAILING_COMMA], False),
    ("[1, 2, ]", [1, 2], [RepairKind.TRAILING_COMMA], False),
    ('{"a": [1,],}', {"a": [1]}, [RepairKind.TRAILING_COMMA] * 2, False),
    ('{"a": 1},', {"a": 1}, [RepairKind.TRAILING_COMMA], False),
    ('{"s": ",}"}', {"s": ",}"}, [], False),
    # raw control characters
    ('{"s": "a\nb\tc\rd"}', {"s": "a\nb\tc\rd"}, [RepairKind.RAW_CONTROL_CHARACTER], False),
    ('{"s": "a\x00b\x1fc"}', {"s": "abc"}, [RepairKind.CONTROL_CHARACTER_DROPPED], False),
    # invalid escapes keep their backslash; valid ones are decoded
    ('{"p": "C:\\Users\\dev"}', {"p": "C:\\Users\\dev"}, [RepairKind.INVALID_ESCAPE], False),
    ('{"p": "\\s+\\d"}', {"p": "\\s+\\d"}, [RepairKind.INVALID_ESCAPE], False),
    ('{"p": "\\u12g4"}', {"p": "\\u12g4"}, [RepairKind.INVALID_ESCAPE], False),
    ('{"p": "\\u12"}', {"p": "\\u12"}, [RepairKind.INVALID_ESCAPE], False),
    ('{"p": "a\\"b\\\\c\\/\\n\\u00e9"}', {"p": 'a"b\\c/\né'}, [], False),
    # surrogates
    ('{"e": "\\ud83d\\ude00"}', {"e": "😀"}, [], False),
    ('{"e": "\\ud83dx"}', {"e": "\ufffdx"}, [RepairKind.LONE_SURROGATE], False),
    ('{"e": "\\ude00"}', {"e": "\ufffd"}, [RepairKind.LONE_SURROGATE], False),
    ('{"e": "\\ud83d\\ud83d\\ude00"}', {"e": "\ufffd😀"}, [RepairKind.LONE_SURROGATE], False),
    ('{"e": "\\ud83d"}', {"e": "\ufffd"}, [RepairKind.LONE_SURROGATE], False),
    ('{"e": "\ud83d"}', {"e": "\ufffd"}, [RepairKind.LONE_SURROGATE], False),
    # Python literals
    (
        '{"a": True, "b": False, "c": None}',
        {"a": True, "b": False, "c": None},
        [RepairKind.PYTHON_LITERAL],
        False,
    ),
    ("True", True, [RepairKind.PYTHON_LITERAL], False),
    # single quotes, with apostrophes inside
    ("{'a': 'b'}", {"a": "b"}, [RepairKind.SINGLE_QUOTES], False),
    ("{'a': 'it's'}", {"a": "it's"}, [RepairKind.SINGLE_QUOTES], False),
    (
        "{'a': 'say \"hi\"', 'b': 'x\\'y'}",
        {"a": 'say "hi"', "b": "x'y"},
        [RepairKind.SINGLE_QUOTES],
        False,
    ),
    ("['rock 'n' roll' ]", ["rock 'n' roll"], [RepairKind.SINGLE_QUOTES], False),
    ('{"a": "it\'s"}', {"a": "it's"}, [], False),
    # bare words in value position
    ('{"direction": both}', {"direction": "both"}, [RepairKind.BARE_WORD], False),
    (
        '{"id": 123e4567-e89b-12d3-a456-426614174000}',
        {"id": "123e4567-e89b-12d3-a456-426614174000"},
        [RepairKind.BARE_WORD],
        False,
    ),
    ("[north, south]", ["north", "south"], [RepairKind.BARE_WORD] * 2, False),
    # fences
    ('```json\n{"a": 1}\n```', {"a": 1}, [RepairKind.CODE_FENCE], False),
    ('```\n{"a": 1}\n```\n', {"a": 1}, [RepairKind.CODE_FENCE], False),
    ('  ```JSON {"a": "```"}```', {"a": "```"}, [RepairKind.CODE_FENCE], False),
    ('```json\n{"a": 1}', {"a": 1}, [RepairKind.CODE_FENCE], False),
    # double encoding
    ('"{\\"a\\": [1, 2]}"', {"a": [1, 2]}, [RepairKind.DOUBLE_ENCODED], False),
    ('"{\\"a\\": 1,}"', {"a": 1}, [RepairKind.DOUBLE_ENCODED, RepairKind.TRAILING_COMMA], False),
    (
        '"\\"{\\\\\\"a\\\\\\": 1}\\""',
        {"a": 1},
        [RepairKind.DOUBLE_ENCODED, RepairKind.DOUBLE_ENCODED],
        False,
    ),
    ('"{not json"', "{not json", [], False),
    ('"hello"', "hello", [], False),
    # excess closers
    ('{"a": 1}}', {"a": 1}, [RepairKind.EXCESS_CLOSER], True),
    ("[1]]}", [1], [RepairKind.EXCESS_CLOSER] * 2, True),
    # cut off at the end
    ('{"a": "hel', {"a": "hel"}, [RepairKind.UNCLOSED_STRING, RepairKind.MISSING_CLOSERS], True),
    (
        '{"a": [1, {"b": ',
        {"a": [1, {}]},
        [RepairKind.DANGLING_DROPPED, RepairKind.MISSING_CLOSERS],
        True,
    ),
    ('{"a": 1, "b"', {"a": 1}, [RepairKind.DANGLING_DROPPED, RepairKind.MISSING_CLOSERS], True),
    ('{"a": 1, "b', {"a": 1}, [RepairKind.DANGLING_DROPPED, RepairKind.MISSING_CLOSERS], True),
    ('{"a": fal', {}, [RepairKind.DANGLING_DROPPED, RepairKind.MISSING_CLOSERS], True),
    ('{"a": 1.5e', {}, [RepairKind.DANGLING_DROPPED, RepairKind.MISSING_CLOSERS], True),
    ('{"a": "x\\u00e', {"a": "x"}, [RepairKind.UNCLOSED_STRING, RepairKind.MISSING_CLOSERS], True),
    ('{"a": "x\\ud83d', {"a": "x"}, [RepairKind.UNCLOSED_STRING, RepairKind.MISSING_CLOSERS], True),
    ('{"a": [1, 2,', {"a": [1, 2]}, [RepairKind.TRAILING_COMMA, RepairKind.MISSING_CLOSERS], True),
    ('"abc', "abc", [RepairKind.UNCLOSED_STRING], True),
    # concatenated values that reduce to one
    ('{"a": 1}{"a": 1}{"a": 1}', {"a": 1}, [RepairKind.DUPLICATE_VALUE], False),
    ('{}{"city": "A"}', {"city": "A"}, [RepairKind.EMPTY_PLACEHOLDER], False),
    ('{"a": 1}\n{"a": 1}', {"a": 1}, [RepairKind.DUPLICATE_VALUE], False),
]


@pytest.mark.parametrize(("text", "value", "kinds", "synthesized"), CASES)
def test_repair_rule(text: str, value: object, kinds: list[RepairKind], synthesized: bool) -> None:
    whole = assert_same_everywhere(text)
    assert whole.result is not None, whole.error
    result = whole.result
    assert json.dumps(result.value) == json.dumps(value)
    assert [r.kind for r in result.repairs] == kinds
    assert result.structure_synthesized is synthesized
    assert repair(text) == result
    for rec in result.repairs:
        assert 0 <= rec.offset <= len(text)
        assert rec.description


def test_repeated_repairs_in_one_string_are_coalesced_with_a_count() -> None:
    text = '{"content": "' + "line\n" * 1000 + '"}'
    result = repair(text)
    assert len(result.repairs) == 1
    assert result.repairs[0].count == 1000
    assert result.repairs[0].offset == text.index("\n")


def test_repair_offsets_point_at_the_character() -> None:
    text = '{"a": [1, 2,], "p": "C:\\Users"}'
    result = repair(text)
    by_kind = {r.kind: r.offset for r in result.repairs}
    assert text[by_kind[RepairKind.TRAILING_COMMA]] == ","
    assert text[by_kind[RepairKind.INVALID_ESCAPE]] == "\\"


def test_valid_json_shaped_content_is_never_touched() -> None:
    content = 'x = {"a": 1,}\n[1,,2] True None \\d ```json'
    text = json.dumps({"path": "a.py", "content": content})
    result = repair(text)
    assert result.value["content"] == content
    assert result.repairs == ()


def test_distinct_concatenated_values_are_never_merged() -> None:
    text = '{"city": "A"}{"city": "B"}'
    with pytest.raises(ConcatenatedValuesError) as info:
        repair(text)
    assert info.value.count == 2
    assert [v.value for v in info.value.values] == [{"city": "A"}, {"city": "B"}]
    assert "2 distinct" in str(info.value)
    assert isinstance(info.value, UnrepairableError)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "value",
    [
        {"s": [1.5, -20, 3e5, 0, 123456789, -0.25, 7, True, None, "x", ""]},
        {"a": 1, "b": -2.5, "c": "d", "e": False, "f": [10, 20], "g": {"h": 300}},
        [[1, 2], [3, [4, 5]], {"k": [6]}],
    ],
)
def test_well_formed_members_at_every_split(value: object) -> None:
    # The regex lanes read whole members inside one delta and finish numbers cut by a
    # delta boundary; every two-way and three-way split must read like the whole text.
    text = json.dumps(value)
    for i in range(len(text) + 1):
        for j in range(i, len(text) + 1, 3):
            outcome = run([text[:i], text[i:j], text[j:]])
            assert outcome.result is not None
            assert outcome.result.value == value, (i, j)
            assert outcome.result.repairs == ()


@pytest.mark.parametrize(
    "text",
    [
        # the surrogate is the last of many nodes: the value walk gives up, the scan finds it
        json.dumps([*range(2000), "x\ud800y"]),
        json.dumps({"a": "ascii", "b": "caf\u00e9 \ud83d"}),  # a non-ASCII string
        '{"a": "ok", "b": ["\\ud83d", "\\ude00"]}',  # escaped halves in separate strings
    ],
)
def test_repair_of_valid_json_still_replaces_lone_surrogates(text: str) -> None:
    result = repair(text)
    assert result.repairs
    assert {r.kind for r in result.repairs} == {RepairKind.LONE_SURROGATE}
    json.dumps(result.value, ensure_ascii=False).encode("utf-8")  # writable as UTF-8
    assert result == assert_same_everywhere(text).result


def test_the_code_fence_repair_points_at_the_opening_fence() -> None:
    text = '  ```json\n{"a": "x"}\n```'
    for chunks in ([text], list(text)):
        outcome = run(chunks)
        assert outcome.result is not None
        (fence,) = outcome.result.repairs
        assert fence.kind is RepairKind.CODE_FENCE
        assert text[fence.offset : fence.offset + 3] == "```"
        assert fence.offset == 2
