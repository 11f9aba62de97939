"""Bad input: the documented error with its position, at the first impossible character,
under every chunking; the limits; and the assembler's life cycle."""

from __future__ import annotations

import copy
import pickle

import pytest

from _support import assert_same_everywhere, run
from streamrepair import (
    REPAIR_MAX_SIZE,
    ArgumentAssembler,
    ConcatenatedValuesError,
    Repaired,
    Status,
    TooDeepError,
    TooLargeError,
    UnrepairableError,
    repair,
)
from streamrepair import errors as errors_module
from streamrepair.errors import (
    AbortFenceError,
    ChangeOrderError,
    ClosedError,
    EventStreamError,
    HistoryError,
    InstallError,
    ServiceLimitError,
    SSEDecodeError,
    SSEError,
    SSELimitError,
    StreamRepairError,
    UnansweredCallsError,
    UnsupportedChunkError,
    UpstreamBroken,
    UpstreamError,
    UpstreamTimeout,
    UpstreamUnreachable,
)
from streamrepair.syntax import Closed

# (input, offset of the first impossible character, expected text fragment)
ERRORS = [
    ('{"a" 1}', 5, "':'"),
    ("[1,,2]", 4, "one ','"),
    ('{"seconds": 60*60}', 14, "',' or '}'"),
    ('{"a": 1 "b": 2}', 8, "',' or '}'"),
    ("[1 2]", 3, "',' or ']'"),
    ('{"a": 1} garbage {', 17, "end of input"),  # prose may not hold an object
    ("{a-b: 1}", 2, "':'"),  # an unquoted key is an identifier
    ('{"a": NaN}', 9, "number"),
    ('{"a": tru}', 9, "number"),
    ("[1.2.3]", 4, "number"),
    ("[+1]", 1, "a value"),
    ("01", 1, "JSON value"),
    ("not json at all", 2, "JSON value"),  # "no" may still become "none"
    ('{"a": }', 6, "a value"),
    ("[,1]", 1, "a value or ']'"),
    ("{,}", 1, "a key"),
    ('{"a": [1}', 8, "',' or ']'"),
    ("]", 0, "JSON value"),
    ('{"a": 1},{"b": 2}', 9, "one JSON value"),
    ('```json\n{"a": 1}\n``` {"b": 2}', 21, "end of input"),
    ("``{}", 2, "JSON value"),
    ("\ufeff{}", 0, "JSON value"),
    ('{"a": 1}\x0b', 8, "end of input"),
    # words with no JSON meaning stay refused, in any case; so do cut-short literals
    ('{"a": nan}', 9, "number"),
    ('{"a": Inf}', 9, "number"),
    ("[undefined]", 10, "number"),
    ("[no]", 3, "number"),  # "no" is the start of none, not a word
    # numbers past a float's range, at the digit that puts them there
    ("[1.5e400]", 7, "number"),
    ("1e400", 4, "JSON value"),
    # ... or where they end, when more could still have saved them: 1e400 may begin an
    # unquoted UUID (1e400000-...), 1000...0.5 may take an exponent
    ("[1e400]", 6, "number"),
    ('{"a": 1e309}', 11, "number"),
    ("[1" + "0" * 400 + ".5]", 404, "number"),
    # an over-long fence info string, at its first character past the bound
    ("```" + "j" * 40 + "\n{}", 35, ""),
    # a closing fence shorter than the opening one
    ('````json\n{"a": 1}\n``` x', 21, "'````'"),
    # a backslash between tokens stands only for whitespace
    ("{\\x}", 2, "'n', 'r' or 't'"),
    ("{a b: 1}", 3, "':'"),
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


@pytest.mark.parametrize(
    ("text", "offset", "reason"),
    [
        ("tru", 3, "not a JSON value"),
        ("\n\n  tru", 7, "not a JSON value"),
        ("-", 1, "not a JSON value"),
        ("```json\n{}\n`", 12, "closing code fence"),
        ('````json\n{"a": 1}\n```', 21, "closing code fence"),
        ("```json\n", 8, "empty argument"),
        ("", 0, "empty argument"),
    ],
)
def test_errors_found_at_the_end_point_at_the_end(text: str, offset: int, reason: str) -> None:
    # Nothing was impossible until the text ended (status INCOMPLETE); the end of input
    # is where it became so, and offset, line and column all describe that place.
    whole = assert_same_everywhere(text)
    assert whole.error is not None
    _, error_reason, error_offset, line, column = whole.error
    assert reason in error_reason
    assert error_offset == offset == len(text)
    assert line == text.count("\n") + 1
    assert column == len(text) - (text.rfind("\n") + 1) + 1
    assembler = ArgumentAssembler()
    assembler.feed(text)
    assert assembler.status is Status.INCOMPLETE
    with pytest.raises(UnrepairableError) as info:
        repair(text)
    assert (info.value.offset, info.value.line, info.value.column) == (offset, line, column)


def test_an_error_in_a_big_text_is_that_error() -> None:
    # Past the repair bound an error is still reported where it is, not as "too large".
    text = '{"a" 1, "b": "' + "x" * (2 * REPAIR_MAX_SIZE) + '"}'
    with pytest.raises(UnrepairableError) as info:
        repair(text)
    assert not isinstance(info.value, TooLargeError)
    assert (info.value.offset, info.value.line, info.value.column) == (5, 1, 6)
    assert "':'" in info.value.expected
    distinct = '{"a": 1}{"b": "' + "x" * (2 * REPAIR_MAX_SIZE) + '"}'
    with pytest.raises(ConcatenatedValuesError):
        repair(distinct)
    # a text that needs a repair past the bound is too large
    with pytest.raises(TooLargeError):
        repair('{"b": "' + "x" * (2 * REPAIR_MAX_SIZE) + '",}')


def _errors() -> list[StreamRepairError]:
    values = (Repaired(value={"a": 1}, structure_synthesized=False),) * 2
    return [
        UnrepairableError("bad", offset=3, line=1, column=4, expected="':'"),
        TooLargeError("big", limit=10, offset=10, line=2, column=1),
        TooDeepError("deep", limit=3, offset=3, line=1, column=4),
        ConcatenatedValuesError(values, offset=16, line=1, column=17),
        SSEError("bad stream", offset=5, line=2),
        SSELimitError("long line", limit=9, offset=9, line=1),
        SSEDecodeError("not UTF-8", offset=1, line=1),
        EventStreamError("bad checksum", offset=12, limit=None),
        ChangeOrderError(
            "a value closed while nothing is open",
            change=Closed(()),
            index=2,
            events=(("", "start_map", None),),
        ),
        UnsupportedChunkError("odd chunk"),
        ClosedError("closed"),
        HistoryError("bad history"),
        UnansweredCallsError(("c1", "c2")),
        AbortFenceError("no phase"),
        InstallError("bad settings"),
        UpstreamError("ClientOSError"),
        UpstreamTimeout("ConnectTimeout"),
        UpstreamUnreachable("ClientConnectorError"),
        UpstreamBroken("ServerDisconnectedError"),
        ServiceLimitError("busy", limit="upstream_connections", capacity=8, retry_after=2),
    ]


@pytest.mark.parametrize("error", _errors(), ids=lambda e: type(e).__name__)
def test_every_error_pickles_and_copies_with_its_attributes(error: StreamRepairError) -> None:
    # Errors cross process boundaries (worker pools, telemetry queues).
    for twin in (
        pickle.loads(pickle.dumps(error)),
        copy.deepcopy(error),
        copy.copy(error),
    ):
        assert type(twin) is type(error)
        assert str(twin) == str(error)
        assert twin.args == error.args
        assert vars(twin) == vars(error)
    # the package's own errors are all here
    assert {type(e) for e in _errors()} >= {
        getattr(errors_module, name)
        for name in errors_module.__all__
        if name != "StreamRepairError"
    }


def test_an_assembler_error_pickles_with_its_position() -> None:
    assembler = ArgumentAssembler()
    assembler.feed('{\n "a" 1}')
    error = assembler.error
    assert error is not None
    twin = pickle.loads(pickle.dumps(error))
    assert (twin.reason, twin.offset, twin.line, twin.column, twin.expected) == (
        error.reason,
        error.offset,
        error.line,
        error.column,
        error.expected,
    )


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
    with pytest.raises(ClosedError):
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
    with pytest.raises(ClosedError):
        assembler.feed("def")
    assert assembler.preview() == {"content": "abc"}
