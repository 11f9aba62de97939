"""The SSE decoder and the JSON-lines splitter: framing rules, bounds, chunking invariance."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamrepair import SSEDecoder, SSEError, SSEEvent, SSELimitError, StreamRepairError
from streamrepair.errors import SSEDecodeError
from streamrepair.stream.sse import JSONLinesDecoder


def decode(chunks: list[bytes], **kwargs: int) -> list[SSEEvent]:
    decoder = SSEDecoder(**kwargs)
    events: list[SSEEvent] = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    events.extend(decoder.finish())
    return events


def every_chunking(data: bytes) -> list[list[bytes]]:
    return [
        [data],
        [data[i : i + 1] for i in range(len(data))],
        [data[i : i + 3] for i in range(0, len(data), 3)],
    ]


def datas(data: bytes) -> list[str]:
    """The data of the events, the same for every chunking (asserted)."""
    results = [[e.data for e in decode(chunks)] for chunks in every_chunking(data)]
    assert all(r == results[0] for r in results)
    return results[0]


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"])
def test_each_line_ending(eol: bytes) -> None:
    data = b"data: one" + eol + eol + b"data: two" + eol + eol
    assert datas(data) == ["one", "two"]


def test_mixed_line_endings_in_one_stream() -> None:
    assert datas(b"data: a\r\n\r\ndata: b\n\ndata: c\r\r") == ["a", "b", "c"]


def test_cr_at_chunk_end_then_lf_is_one_line_end() -> None:
    # rexxars/eventsource-parser#17: a decoder that sees "\r" then "\n" in the next
    # chunk as two line ends dispatches early (a blank line) and splits the event.
    chunks = [b"data: A\r\n", b"data: B\r", b"data: C\r\n", b"\n"]
    assert [e.data for e in decode(chunks)] == ["A\nB\nC"]
    assert [e.data for e in decode([b"data: A\r", b"\ndata: B\r\n\r\n"])] == ["A\nB"]


def test_no_space_after_colon_and_only_one_space_stripped() -> None:
    assert datas(b'data:{"a":1}\n\ndata:  two spaces\n\n') == ['{"a":1}', " two spaces"]


def test_comments_and_keep_alives_are_skipped() -> None:
    data = b": keep-alive\n\n: OPENROUTER PROCESSING\n\ndata: x\n: inside an event\n\n"
    assert datas(data) == ["x"]


def test_multi_line_data_is_joined_with_newlines() -> None:
    # openai-python tests/test_streaming.py
    data = b'event: ping\ndata: {\ndata: "foo":\ndata: \ndata:\ndata: true}\n\n'
    events = decode([data])
    assert [(e.event, e.data) for e in events] == [("ping", '{\n"foo":\n\n\ntrue}')]


def test_escaped_newlines_and_u2028_do_not_split_an_event() -> None:
    data = b'data: {"foo": "my long\\n\\ncontent"}\n\ndata: {"content":" \xe2\x80\xa8"}\n\n'
    assert datas(data) == ['{"foo": "my long\\n\\ncontent"}', '{"content":" \u2028"}']


def test_utf8_split_across_chunks() -> None:
    data = 'data: {"content":"извините ☃ 🌨"}\n\n'.encode()
    assert datas(data) == ['{"content":"извините ☃ 🌨"}']


def test_bom_is_dropped_only_at_the_start() -> None:
    bom = b"\xef\xbb\xbf"
    assert datas(bom + b"data: a\n\n") == ["a"]
    # A BOM later in the stream is content of the line it is on (an unknown field here).
    assert datas(b"data: a\n\n" + bom + b"data: b\n\n") == ["a"]
    # Bytes that start like a BOM but are not one are kept (here: not UTF-8).
    with pytest.raises(SSEDecodeError):
        decode([b"\xef", b"data: x\n\n"])
    assert decode([b"\xef\xbb"]) == []


def test_event_id_and_retry_fields() -> None:
    data = b"retry: 3000\nid: 7\nevent: delta\ndata: x\n\ndata: y\n\nretry: soon\nid: a\x00b\ndata: z\n\n"
    events = decode([data])
    assert [(e.event, e.data, e.id, e.retry) for e in events] == [
        ("delta", "x", "7", 3000),
        (None, "y", "7", None),  # the id persists; retry and event do not
        (None, "z", "7", None),  # an id holding NUL is ignored; a bad retry too
    ]


def test_event_without_data_is_not_dispatched_and_unknown_fields_are_ignored() -> None:
    assert datas(b"event: ping\n\nfoo: bar\ndata: x\n\n") == ["x"]


def test_finish_dispatches_an_unterminated_last_event() -> None:
    assert datas(b"data: a\n\ndata: b") == ["a", "b"]
    assert datas(b"data: a\n\ndata: b\n") == ["a", "b"]


def test_over_long_line_is_a_clear_error_with_a_bounded_buffer() -> None:
    decoder = SSEDecoder(max_line_bytes=64)
    assert decoder.feed(b"data: ok\n\n") != []
    error: SSELimitError | None = None
    for _ in range(100):
        try:
            decoder.feed(b"x" * 10)
        except SSELimitError as exc:
            error = exc
            break
        # What is buffered never passes the limit by more than one chunk.
        assert decoder.bytes_seen - 10 <= 64 + 10
    assert error is not None
    assert (error.limit, error.offset, error.line) == (64, 10, 3)
    assert isinstance(error, StreamRepairError)
    # A failed decoder stays failed.
    with pytest.raises(SSELimitError):
        decoder.feed(b"\n\n")
    with pytest.raises(SSELimitError):
        decoder.finish()


def test_over_long_line_found_whole_in_one_chunk() -> None:
    with pytest.raises(SSELimitError):
        SSEDecoder(max_line_bytes=8).feed(b"data: 0123456789\n\n")


def test_over_large_event_data_is_a_clear_error() -> None:
    decoder = SSEDecoder(max_line_bytes=100, max_event_bytes=50)
    with pytest.raises(SSELimitError) as info:
        decoder.feed(b"data: 0123456789\n" * 10)
    assert info.value.limit == 50


def test_invalid_utf8_is_a_clear_error() -> None:
    decoder = SSEDecoder()
    with pytest.raises(SSEDecodeError) as info:
        decoder.feed(b"data: ok\n\ndata: \xff\xfe\n\n")
    assert info.value.offset == 16
    assert isinstance(info.value, SSEError)


def test_bad_calls() -> None:
    decoder = SSEDecoder()
    with pytest.raises(TypeError):
        decoder.feed("data: x\n\n")  # type: ignore[arg-type]
    decoder.finish()
    with pytest.raises(RuntimeError):
        decoder.feed(b"data: x\n\n")
    with pytest.raises(ValueError, match="positive"):
        SSEDecoder(max_line_bytes=0)
    with pytest.raises(TypeError):
        SSEEvent(data=b"x")  # type: ignore[arg-type]


def test_input_is_not_mutated() -> None:
    chunk = bytearray(b"data: x\r")
    before = bytes(chunk)
    decode([chunk, b"\n\n"])
    assert bytes(chunk) == before


_LINE_ENDS = st.sampled_from([b"\n", b"\r", b"\r\n"])
_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=12
)


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[tuple[str | None, str]]]:
    """A random stream and the events it must give."""
    out = bytearray(draw(st.sampled_from([b"", b"\xef\xbb\xbf"])))
    expected: list[tuple[str | None, str]] = []
    for _ in range(draw(st.integers(0, 5))):
        eol = draw(_LINE_ENDS)
        if draw(st.booleans()):
            out += b": " + draw(_TEXT).encode() + eol
        event = draw(st.one_of(st.none(), _TEXT.filter(lambda t: t != "")))
        if event is not None:
            out += b"event: " + event.encode() + eol
        lines = draw(st.lists(_TEXT, min_size=1, max_size=3))
        for line in lines:
            sep = draw(st.sampled_from([b"data: ", b"data:"]))
            if sep == b"data:" and line.startswith(" "):
                sep = b"data: "  # "data:" + " x" would lose the space, as the spec says
            out += sep + line.encode() + eol
        out += eol
        expected.append((event, "\n".join(lines)))
    return bytes(out), expected


@settings(max_examples=150, deadline=None)
@given(streams(), st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_any_chunking_gives_the_expected_events(
    case: tuple[bytes, list[tuple[str | None, str]]], cuts: list[int]
) -> None:
    data, expected = case
    points = sorted({c for c in cuts if 0 < c < len(data)})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert [(e.event, e.data) for e in decode(chunks)] == expected


def _outcome(chunks: list[bytes], **kwargs: int) -> tuple[list[SSEEvent], tuple[object, ...]]:
    """Every event (all its fields) and the error that stopped the decoder, if any."""
    decoder = SSEDecoder(comments=True, **kwargs)  # type: ignore[arg-type]
    events: list[SSEEvent] = []
    try:
        for chunk in chunks:
            events.extend(decoder.feed(chunk))
        events.extend(decoder.finish())
    except SSEError as exc:
        return events, (type(exc), exc.offset, exc.line, getattr(exc, "limit", None))
    return events, ()


_FIELDS = st.sampled_from(
    [
        *(b"data: ", b"data:", b"data:  ", b"event: ", b"event:", b"id: ", b"retry: "),
        *(b": ", b":", b"other: ", b"", b"dat", b"\xef\xbb\xbf"),
    ]
)
_VALUES = st.one_of(
    st.sampled_from([b"", b"x", b" x", b"{}", b"\xff", b"\xc3", b"\xc3\xa9", b"12"]),
    st.binary(max_size=6).filter(lambda b: b"\n" not in b and b"\r" not in b),
)


@st.composite
def raw_streams(draw: st.DrawFn) -> bytes:
    """Events of the usual shapes (``data:``, ``event:`` and ``data:``), of other
    fields, values and line ends, blank lines between most: well-formed events, and
    everything a decoder must refuse. CR line ends are rare (a CR anywhere ahead makes
    the decoder read line by line)."""
    eols = [b"\n"] if draw(st.integers(0, 4)) else [b"\n", b"\n", b"\r\n", b"\r"]
    out = bytearray()
    for _ in range(draw(st.integers(0, 8))):
        shape = draw(st.integers(0, 3))
        if shape == 0:
            fields = [b"data: "]
        elif shape == 1:
            fields = [b"event: ", b"data: "]
        else:
            fields = draw(st.lists(_FIELDS, min_size=1, max_size=3))
        for name in fields:
            out += name + draw(_VALUES) + draw(st.sampled_from(eols))
        if draw(st.integers(0, 4)):
            out += draw(st.sampled_from(eols))  # the blank line that ends the event
    return bytes(out)


@settings(max_examples=300, deadline=None)
@given(
    raw_streams(),
    st.sampled_from([{}, {"max_line_bytes": 8}, {"max_event_bytes": 9}, {"max_line_bytes": 3}]),
)
def test_whole_events_read_at_once_give_what_reading_line_by_line_gives(
    data: bytes, bounds: dict[str, int]
) -> None:
    """Whole input takes the decoder's reading of whole events at once; one byte at a
    time never has a whole event in one piece, so it reads every line on its own. The
    events (every field), the line numbers and offsets of any error are the same (a
    ``feed`` that raises returns none of its events: one byte at a time has returned
    those before the error already)."""
    events, error = _outcome([data], **bounds)
    by_byte, byte_error = _outcome([data[i : i + 1] for i in range(len(data))], **bounds)
    assert byte_error == error
    assert by_byte[: len(events)] == events
    if not error:
        assert by_byte == events


def lines_of(chunks: list[bytes], **kwargs: int) -> list[str]:
    decoder = JSONLinesDecoder(**kwargs)
    out: list[str] = []
    for chunk in chunks:
        out.extend(decoder.feed(chunk))
    out.extend(decoder.finish())
    return out


def test_json_lines_splitter() -> None:
    data = '{"a": 1}\r\n\n  \n{"b": "ü"}\n{"c": 3}'.encode()
    for chunks in every_chunking(data):
        assert lines_of(chunks) == ['{"a": 1}', '{"b": "ü"}', '{"c": 3}']


def test_json_lines_bounds_and_errors() -> None:
    decoder = JSONLinesDecoder(max_line_bytes=8)
    with pytest.raises(SSELimitError):
        decoder.feed(b"0123456789")
    with pytest.raises(SSELimitError):  # stays failed
        decoder.feed(b"\n")
    with pytest.raises(SSEDecodeError):
        lines_of([b'{"a": "\xff"}\n'])
    finished = JSONLinesDecoder()
    finished.finish()
    with pytest.raises(RuntimeError):
        finished.feed(b"{}\n")
    with pytest.raises(ValueError, match="positive"):
        JSONLinesDecoder(max_line_bytes=0)
