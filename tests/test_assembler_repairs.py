"""Each repair rule of the assembler: what it does whole, one character at a time and at
random splits (assert_same_everywhere), what it records, and where it must not fire."""

from __future__ import annotations

import json

import pytest

from _support import assert_same_everywhere, chunkings, run
from streamrepair import (
    ArgumentAssembler,
    ConcatenatedValuesError,
    RepairKind,
    Status,
    TooDeepError,
    UnrepairableError,
    repair,
)

# (input, expected value, expected repair kinds in order, structure_synthesized)
CASES = [
    # trailing commas, string-aware
    ('{"a": 1,}', {"a": 1}, [RepairKind.TRAILING_COMMA], False),
    ("[1, 2, ]", [1, 2], [RepairKind.TRAILING_COMMA], False),
    ('{"a": [1,],}', {"a": [1]}, [RepairKind.TRAILING_COMMA], False),  # one record, count 2
    ('{"a": 1},', {"a": 1}, [RepairKind.TRAILING_COMMA], False),
    ('{"s": ",}"}', {"s": ",}"}, [], False),
    # raw control characters
    ('{"s": "a\nb\tc\rd"}', {"s": "a\nb\tc\rd"}, [RepairKind.RAW_CONTROL_CHARACTER], False),
    # other raw controls are kept too (never lose content): an ANSI colour code, a form feed
    ('{"s": "a\x00b\x1fc"}', {"s": "a\x00b\x1fc"}, [RepairKind.RAW_CONTROL_CHARACTER], False),
    (
        '{"s": "\x1b[31mred\x0c"}',
        {"s": "\x1b[31mred\x0c"},
        [RepairKind.RAW_CONTROL_CHARACTER],
        False,
    ),
    # invalid escapes keep their backslash; valid ones are decoded
    ('{"p": "C:\\Users\\dev"}', {"p": "C:\\Users\\dev"}, [RepairKind.INVALID_ESCAPE], False),
    ('{"p": "\\s+\\d"}', {"p": "\\s+\\d"}, [RepairKind.INVALID_ESCAPE], False),
    ('{"p": "\\u12g4"}', {"p": "\\u12g4"}, [RepairKind.INVALID_ESCAPE], False),
    ('{"p": "\\u12"}', {"p": "\\u12"}, [RepairKind.INVALID_ESCAPE], False),
    ('{"p": "a\\"b\\\\c\\/\\n\\u00e9"}', {"p": 'a"b\\c/\né'}, [], False),
    # a string that shows a raw backslash is ambiguous about its \b \f \n \r \t: under a
    # path-like key they are read literally, elsewhere as JSON reads them; either way the
    # ambiguity is recorded (docs/repairs.md)
    (
        '{"path": "C:\\Users\\new\\file.txt"}',
        {"path": "C:\\Users\\new\\file.txt"},
        [RepairKind.AMBIGUOUS_ESCAPES, RepairKind.INVALID_ESCAPE],
        False,
    ),
    (
        '{"file_path": "C:\\temp\\Users\\bin"}',  # the control escape comes first
        {"file_path": "C:\\temp\\Users\\bin"},
        [RepairKind.AMBIGUOUS_ESCAPES, RepairKind.INVALID_ESCAPE],
        False,
    ),
    (
        '{"paths": ["C:\\bin\\app.exe", "D:\\x"]}',
        {"paths": ["C:\\bin\\app.exe", "D:\\x"]},
        [RepairKind.AMBIGUOUS_ESCAPES, RepairKind.INVALID_ESCAPE],
        False,
    ),
    (
        '{"content": "line\\nre.compile(\'\\d+\')\\n"}',  # code: JSON's reading stays
        {"content": "line\nre.compile('\\d+')\n"},
        [RepairKind.AMBIGUOUS_ESCAPES, RepairKind.INVALID_ESCAPE],
        False,
    ),
    (
        '{"path": "C:\\Users\\new\tdir"}',  # a raw tab too: no literal reading to give
        {"path": "C:\\Users\n" + "ew\tdir"},
        [RepairKind.AMBIGUOUS_ESCAPES, RepairKind.INVALID_ESCAPE, RepairKind.RAW_CONTROL_CHARACTER],
        False,
    ),
    ('{"path": "C:\\new\\file"}', {"path": "C:\n" + "ew\x0cile"}, [], False),  # valid JSON
    ('{"path": "C:\\Users\\dev"}', {"path": "C:\\Users\\dev"}, [RepairKind.INVALID_ESCAPE], False),
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
    # a literal in any letter case is that literal, not a truthy string
    (
        '{"confirm": FALSE, "dry_run": TRUE, "a": NULL, "b": none, "c": Null}',
        {"confirm": False, "dry_run": True, "a": None, "b": None, "c": None},
        [RepairKind.LITERAL_CASE],
        False,
    ),
    ("NULL", None, [RepairKind.LITERAL_CASE], False),
    ("[False, FALSE]", [False, False], [RepairKind.PYTHON_LITERAL, RepairKind.LITERAL_CASE], False),
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
    ("[north, south]", ["north", "south"], [RepairKind.BARE_WORD], False),
    # unquoted identifier keys
    ('{path: "foo.txt"}', {"path": "foo.txt"}, [RepairKind.UNQUOTED_KEY], False),
    (
        "{a: 1, b_2: [x], $c: true, \u540d: 'v'}",
        {"a": 1, "b_2": ["x"], "$c": True, "\u540d": "v"},
        [RepairKind.UNQUOTED_KEY, RepairKind.BARE_WORD, RepairKind.SINGLE_QUOTES],
        False,
    ),
    ("{true: 1}", {"true": 1}, [RepairKind.UNQUOTED_KEY], False),
    # \n \r \t written with a real backslash between tokens (Qwen3.5-Flash)
    ('{\\n"a": 1}', {"a": 1}, [RepairKind.ESCAPED_WHITESPACE], False),
    (
        '{"command": "view", "view_range": \\n[2142, 2250]\\n\\n}',
        {"command": "view", "view_range": [2142, 2250]},
        [RepairKind.ESCAPED_WHITESPACE],
        False,
    ),
    ("[1,\\t2\\r\\n]\\n", [1, 2], [RepairKind.ESCAPED_WHITESPACE], False),
    # fences
    ('```json\n{"a": 1}\n```', {"a": 1}, [RepairKind.CODE_FENCE], False),
    ('```\n{"a": 1}\n```\n', {"a": 1}, [RepairKind.CODE_FENCE], False),
    ('  ```JSON {"a": "```"}```', {"a": "```"}, [RepairKind.CODE_FENCE], False),
    ('```json\n{"a": 1}', {"a": 1}, [RepairKind.CODE_FENCE], False),
    ('````json\n{"a": 1}\n`````', {"a": 1}, [RepairKind.CODE_FENCE], False),
    # double encoding
    ('"{\\"a\\": [1, 2]}"', {"a": [1, 2]}, [RepairKind.DOUBLE_ENCODED], False),
    ('"{\\"a\\": 1,}"', {"a": 1}, [RepairKind.DOUBLE_ENCODED, RepairKind.TRAILING_COMMA], False),
    (
        '"\\"{\\\\\\"a\\\\\\": 1}\\""',
        {"a": 1},
        [RepairKind.DOUBLE_ENCODED],  # twice, one record
        False,
    ),
    ('"{not json"', "{not json", [], False),
    ('"hello"', "hello", [], False),
    # excess closers after the complete value: nothing is invented, nothing is cut off
    ('{"a": 1}}', {"a": 1}, [RepairKind.EXCESS_CLOSER], False),
    ("[1]]}", [1], [RepairKind.EXCESS_CLOSER], False),
    ('{"path": "a.md"}}\n', {"path": "a.md"}, [RepairKind.EXCESS_CLOSER], False),
    # prose after the complete value is not part of it
    (
        '{"path": "a.txt"} I will now read it',
        {"path": "a.txt"},
        [RepairKind.TRAILING_TEXT],
        False,
    ),
    (
        '```json\n{"a": 1}\n```\nDone.',
        {"a": 1},
        [RepairKind.CODE_FENCE, RepairKind.TRAILING_TEXT],
        False,
    ),
    ('{"a": 1}\n\nnull is fine [x]', {"a": 1}, [RepairKind.TRAILING_TEXT], False),
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
    # the repeat's own repairs are reported too
    (
        '{"cmd":"x"}{"cmd":"x",}',
        {"cmd": "x"},
        [RepairKind.DUPLICATE_VALUE, RepairKind.TRAILING_COMMA],
        False,
    ),
    # however many placeholders come first
    ('{}{}{"a":1}', {"a": 1}, [RepairKind.EMPTY_PLACEHOLDER], False),
    (
        '{"a":1}{}{"a":1}',
        {"a": 1},
        [RepairKind.EMPTY_PLACEHOLDER, RepairKind.DUPLICATE_VALUE],
        False,
    ),
    ("{}{}", {}, [RepairKind.DUPLICATE_VALUE], False),
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
        "[01, 2]",  # a leading zero: not a number (a UUID may begin so)
        "[-01]",
        '{"a": 0123}',
        "[0.5, -0.25, 10, 1.5e3, 1e30, 1e308, 1e3090]",  # digits after an exponent
        "[12345678-1234, 123e4567-e89b-12d3-a456-426614174000]",  # UUIDs, bare
        "[" + "7" * 4990 + "1234567890123, 2]",  # past MAX_SCALAR_CHARS, one digit at a time
        "7" * 5003,  # at the top level the bound holds
    ],
)
def test_digits_continuing_a_number_read_as_the_machine_reads_them(text: str) -> None:
    # feed() takes digits that continue a number itself; everything else it leaves to the
    # machine. One character at a time, whole and at random splits agree.
    whole = run([text])
    for chunks in chunkings(text):
        assert run(chunks).outcome() == whole.outcome(), text


@pytest.mark.parametrize(
    "value",
    [
        {"s": '中文 😀 x\x01y é\\/"\n\t' * 2},
        {"s": "\\u00e9 \\\\u12 \ud83d x \ude00 \ud83d\ud83d\ude00"},  # lone halves too
        ["\\", "\\\\", "a\\", "\\u", "u1234"],
    ],
)
def test_escapes_at_every_split(value: object) -> None:
    # The string fast path decodes runs of escapes in one step, \\u runs included, and
    # leaves an escape cut by the end of a delta open (a backslash, \\u and some of its
    # digits); every two-way and three-way split must read like the whole text.
    for ensure_ascii in (True, False):
        text = json.dumps(value, ensure_ascii=ensure_ascii)
        whole = run([text])
        for i in range(len(text) + 1):
            for j in range(i, len(text) + 1, 3):
                outcome = run([text[:i], text[i:j], text[j:]])
                assert outcome.outcome() == whole.outcome(), (text, i, j)


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


def test_repeated_repairs_outside_strings_are_merged() -> None:
    # One record per kind per value, however many times it happens: 100,000 excess
    # closers, trailing commas or bare words are one record each, with a count.
    closers = repair('{"a": 1}' + "}" * 100_000)
    (rec,) = closers.repairs
    assert (rec.kind, rec.count, rec.offset) == (RepairKind.EXCESS_CLOSER, 100_000, 8)
    assert not closers.structure_synthesized
    many = repair("[" + ",".join(["[x, 1,]"] * 20_000) + "]")
    assert [(r.kind, r.count) for r in many.repairs] == [
        (RepairKind.BARE_WORD, 20_000),
        (RepairKind.TRAILING_COMMA, 20_000),
    ]
    escapes = repair(json.dumps(["C:\\Users"] * 5_000).replace("\\\\", "\\"))
    assert [(r.kind, r.count) for r in escapes.repairs] == [(RepairKind.INVALID_ESCAPE, 5_000)]


def _machine(text: str) -> object:
    """What the assembler gives for ``text`` under each chunking (whole, at random
    splits, one character at a time when short), which must agree; no previews, so deep
    and long texts stay cheap."""
    outcomes = set()
    cuts = chunkings(text) if len(text) <= 2_000 else [*chunkings(text)[2:], [text]]
    for chunks in cuts:
        assembler = ArgumentAssembler()
        for piece in chunks:
            if assembler.status is Status.UNREPAIRABLE:
                break
            assembler.feed(piece)
        try:
            result = assembler.finish()
        except UnrepairableError as exc:
            outcomes.add((type(exc), exc.offset, exc.line, exc.column))
        else:
            outcomes.add(("ok", json.dumps(result.value), result.repairs))
    assert len(outcomes) == 1, outcomes
    return outcomes.pop()


@pytest.mark.parametrize(
    "text",
    [
        "[" * 512 + "]" * 512,  # as deep as max_depth allows
        '{"a": [0.' + "1" * 6000 + "]}",  # a number longer than MAX_SCALAR_CHARS
        "[" + "1" * 4000 + ", -0.0, 1e-400, 1E+300]",
        '["\ud83d\ude00", "\\ud83d\\ude00"]',  # a raw pair is joined as an escaped one is
        json.dumps({"a": [{"b": {"c": [i, str(i), None, True]}} for i in range(600)]}),
        json.dumps([[i, 1.5e300, "x[y]"] for i in range(600)]),
    ],
)
def test_repair_and_the_assembler_agree_on_valid_text(text: str) -> None:
    # One contract: repair() reads valid JSON with json.loads only when the machine would
    # read the same.
    result = repair(text)
    assert _machine(text) == ("ok", json.dumps(result.value), result.repairs)
    assert result.repairs == () or {r.kind for r in result.repairs} == {RepairKind.LONE_SURROGATE}


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[" * 513 + "]" * 513, TooDeepError),  # json.loads reads it; both refuse it
        (json.dumps([[[[1]]]] * 200)[:-1] + ", " + "[" * 600 + "]" * 600 + "]", TooDeepError),
        ("[" + "1" * 5000 + "]", UnrepairableError),  # past MAX_INTEGER_DIGITS
        ("[1e400, 2]", UnrepairableError),  # json.loads gives inf
        (json.dumps([[i, 1e300] for i in range(600)])[:-1] + ", [1e+400]]", UnrepairableError),
        (json.dumps([[i] for i in range(600)])[:-1] + ", 1" + "0" * 400 + ".5]", UnrepairableError),
    ],
)
def test_repair_and_the_assembler_refuse_the_same_valid_text(
    text: str, error: type[UnrepairableError]
) -> None:
    with pytest.raises(error) as info:
        repair(text)
    found = info.value
    assert _machine(text) == (type(found), found.offset, found.line, found.column)
