"""Bad input: the documented error with its position, at the first impossible character,
under every chunking; the limits; and the assembler's life cycle."""

from __future__ import annotations

import pytest

from _support import assert_same_everywhere, run
from streamrepair import (
    ArgumentAssembler,
    AssemblerFinishedError,
    Status,
    TooDeepError,
    TooLargeError,
    UnrepairableError,
    repair,
)

# (input, offset of the first impossible character, expected text fragment)
ERRORS = [
    ('{"a" 1}', 5, "':'"),
    ("[1,,2]", 4, "one ','"),
    ('{"seconds": 60*60}', 14, "',' or '}'"),
    ('{"a": 1 "b": 2}', 8, "',' or '}'"),
    ("[1 2]", 3, "',' or ']'"),
    ('{"a": 1} garbage', 9, "JSON value"),
    ("{a: 1}", 1, "quoted key"),
    ('{"a": NaN}', 9, "number"),
    ('{"a": tru}', 9, "number"),
    ("[1.2.3]", 4, "number"),
    ("[+1]", 1, "a value"),
    ("01", 1, "JSON value"),
    ("not json at all", 1, "JSON value"),
    ('{"a": }', 6, "a value"),
    ("[,1]", 1, "a value or ']'"),
    ("{,}", 1, "quoted key"),
    ('{"a": [1}', 8, "',' or ']'"),
    ("]", 0, "JSON value"),
    ('{"a": 1},{"b": 2}', 9, "one JSON value"),
    ('```json\n{"a": 1}\n``` trailing', 21, "end of input"),
    ("``{}", 2, "JSON value"),
    ("\ufeff{}", 0, "JSON value"),
    ('{"a": 1}\x0b', 8, "end of input"),
]


@pytest.mark.parametrize(("text", "offset", "expected"), ERRORS)
def test_unrepairable_at_the_first_impossible_character(
    text: str, offset: int, expected: str
) -> None:
    whole = assert_same_everywhere(text)
    assert whole.error is not None
    kind, reason, error_offset, _line, _column = whole.error
    assert kind is UnrepairableError
    assert error_offset == offset, (text, reason)
    # the verdict is given as soon as the character arrives, not only at the end
    assembler = ArgumentAssembler()
    assembler.feed(text[: offset + 1])
    assert assembler.status is Status.UNREPAIRABLE
    assert assembler.error is not None
    assert expected in assembler.error.expected
    assembler_before = ArgumentAssembler()
    assembler_before.feed(text[:offset])
    assert assembler_before.status is not Status.UNREPAIRABLE
    with pytest.raises(UnrepairableError) as info:
        repair(text)
    assert info.value.offset == offset


def test_line_and_column_are_counted_across_deltas() -> None:
    text = '{\n  "a": 1,\n  "b" 2\n}'
    for chunks in ([text], list(text), [text[:5], text[5:14], text[14:]]):
        outcome = run(chunks)
        assert outcome.error is not None
        _, _, offset, line, column = outcome.error
        assert (offset, line, column) == (18, 3, 7)


def test_empty_and_blank_input() -> None:
    for text in ["", "   \n\t", "```json\n", "```"]:
        with pytest.raises(UnrepairableError, match="empty argument"):
            repair(text)


def test_an_unrepairable_assembler_stays_so_and_says_so_on_every_call() -> None:
    assembler = ArgumentAssembler()
    assembler.feed('{"a" ')
    assert assembler.feed("1") is Status.UNREPAIRABLE
    error = assembler.error
    assert error is not None
    with pytest.raises(UnrepairableError) as again:
        assembler.feed("}")
    assert again.value is error
    assert assembler.status is Status.UNREPAIRABLE
    with pytest.raises(UnrepairableError) as at_finish:
        assembler.finish()
    assert at_finish.value is error


def test_feed_after_finish_raises() -> None:
    assembler = ArgumentAssembler()
    assembler.feed('{"a": 1}')
    first = assembler.finish()
    assert assembler.finish() is first  # finishing twice returns the same result
    with pytest.raises(AssemblerFinishedError):
        assembler.feed(" ")


def test_feed_takes_only_text() -> None:
    assembler = ArgumentAssembler()
    with pytest.raises(TypeError):
        assembler.feed(b"{}")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        repair(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_depth"):
        ArgumentAssembler(max_depth=0)


def test_max_size_turns_unrepairable_at_the_bound_under_any_chunking() -> None:
    text = '{"content": "' + "x" * 100 + '"}'
    for chunks in ([text], list(text), [text[:50], text[50:]]):
        outcome = run(chunks, max_size=64)
        assert outcome.error is not None
        kind, _, offset, _, _ = outcome.error
        assert kind is TooLargeError
        assert offset == 64
    # an earlier impossible character wins over the size bound
    outcome = run(['{"a" 1' + "x" * 100], max_size=64)
    assert outcome.error is not None
    assert outcome.error[0] is UnrepairableError


def test_max_depth_is_named_and_reported() -> None:
    assembler = ArgumentAssembler(max_depth=3)
    assembler.feed("[[[")
    assert assembler.status is Status.INCOMPLETE
    assembler.feed("[")
    assert isinstance(assembler.error, TooDeepError)
    assert assembler.error.limit == 3
    assert assembler.error.offset == 3


def test_no_input_raises_recursion_error_at_any_depth() -> None:
    depth = 100_000
    text = '{"a": ' * depth + "1" + "}" * depth
    assembler = ArgumentAssembler(max_depth=depth + 1)
    for start in range(0, len(text), 4096):
        assembler.feed(text[start : start + 4096])
    assert assembler.status is Status.COMPLETE
    result = assembler.finish()
    node, levels = result.value, 0
    while isinstance(node, dict):
        node, levels = node["a"], levels + 1
    assert (levels, node) == (depth, 1)
    # cut off deep inside: the preview and the synthesized finish are iterative too
    cut = ArgumentAssembler(max_depth=depth + 1)
    cut.feed("[" * depth)
    assert isinstance(cut.preview(), list)
    assert cut.finish().structure_synthesized
    with pytest.raises(TooDeepError):
        repair("[" * 10_000 + "]" * 10_000)


def test_preview_before_a_value_is_none() -> None:
    assembler = ArgumentAssembler()
    assert assembler.preview() is None
    assembler.feed("  ```json\n ")
    assert assembler.preview() is None
    assembler.feed("{")
    assert assembler.preview() == {}


def test_feed_after_finish_raises_even_when_cut_inside_a_string() -> None:
    assembler = ArgumentAssembler()
    assembler.feed('{"content": "abc')
    assert assembler.finish().structure_synthesized
    with pytest.raises(AssemblerFinishedError):
        assembler.feed("def")
    assert assembler.preview() == {"content": "abc"}
