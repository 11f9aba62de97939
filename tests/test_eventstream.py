"""AWS event streams (Bedrock's binary framing): the decoder against the frames the fixtures
were written from and against botocore's own decoder and parser (when botocore is
installed), at any chunking; every bad input is a clear error that names the framing."""

from __future__ import annotations

import base64
import binascii
import json
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eventstream_frames import encode, frame, payload_bytes, read_frames
from streamrepair import Done, StreamFailed, ToolCallReady, ToolCallStream, iter_events
from streamrepair.errors import ClosedError, EventStreamError
from streamrepair.stream.eventstream import (
    EventStreamDecoder,
    EventStreamMessage,
    frame_chunk,
    looks_like_eventstream,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sse"
SOURCES = sorted(FIXTURES.glob("*.frames.jsonl"))
EVENT = {
    ":event-type": "messageStop",
    ":content-type": "application/json",
    ":message-type": "event",
}


def fixture(source: Path) -> Path:
    return source.with_name(source.name.split(".")[0] + ".eventstream")


def decode(data: bytes, size: int) -> list[EventStreamMessage]:
    decoder = EventStreamDecoder()
    out: list[EventStreamMessage] = []
    for i in range(0, len(data), size):
        out.extend(decoder.feed(data[i : i + size]))
        assert decoder.error is None
    out.extend(decoder.finish())
    return out


def as_frames(messages: list[EventStreamMessage]) -> list[dict[str, Any]]:
    return [{"headers": dict(m.headers), "payload": json.loads(m.payload)} for m in messages]


@pytest.mark.parametrize("source", SOURCES, ids=[s.name for s in SOURCES])
def test_fixture_bytes_are_what_their_frames_give(source: Path) -> None:
    assert fixture(source).read_bytes() == encode(read_frames(source))


@pytest.mark.parametrize("source", SOURCES, ids=[s.name for s in SOURCES])
@pytest.mark.parametrize("size", [1, 7, 11, 4096])
def test_decoder_gives_the_frames_at_any_chunking(source: Path, size: int) -> None:
    data = fixture(source).read_bytes()
    messages = decode(data, size)
    assert as_frames(messages) == read_frames(source)
    offsets = [m.offset for m in messages]
    assert offsets[0] == 0
    assert offsets == sorted(offsets)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(SOURCES), st.lists(st.integers(min_value=1, max_value=3000), max_size=30))
def test_decoder_at_random_splits(source: Path, cuts: list[int]) -> None:
    data = fixture(source).read_bytes()
    points = sorted({c % len(data) for c in cuts} - {0})
    decoder = EventStreamDecoder()
    messages: list[EventStreamMessage] = []
    for a, b in zip([0, *points], [*points, len(data)], strict=True):
        messages.extend(decoder.feed(data[a:b]))
    assert as_frames(messages) == read_frames(source)


def test_header_types_and_frame_chunk() -> None:
    # every header type the framing has, built by hand
    raw = b"".join(
        [
            b"\x01t\x00",
            b"\x01f\x01",
            b"\x01b\x02\xff",
            b"\x01s\x03" + struct.pack("!h", -2),
            b"\x01i\x04" + struct.pack("!i", 70000),
            b"\x01l\x05" + struct.pack("!q", 2**40),
            b"\x01y\x06" + struct.pack("!H", 2) + b"\x00\x01",
            b"\x01w\x07" + struct.pack("!H", 3) + b"abc",
            b"\x02ts\x08" + struct.pack("!q", 1796000000000),
            b"\x01u\x09" + bytes(range(16)),
        ]
    )
    lengths = struct.pack("!II", 16 + len(raw) + 2, len(raw))
    body = lengths + struct.pack("!I", binascii.crc32(lengths)) + raw + b"{}"
    data = body + struct.pack("!I", binascii.crc32(body))
    (message,) = EventStreamDecoder().feed(data)
    assert dict(message.headers) == {
        "t": True,
        "f": False,
        "b": -1,
        "s": -2,
        "i": 70000,
        "l": 2**40,
        "y": b"\x00\x01",
        "w": "abc",
        "ts": 1796000000000,
        "u": bytes(range(16)),
    }
    assert message.payload == b"{}"
    assert looks_like_eventstream(data)
    assert not looks_like_eventstream(b"data: {}\n\n\n\n\n\n")
    # the chunk botocore would give: the event type names the member; here there is none
    with pytest.raises(ValueError, match="names no event"):
        frame_chunk(message)
    error = EventStreamMessage(
        headers={":message-type": "error", ":error-code": "Throttled", ":error-message": "slow"},
        payload=b"",
    )
    assert frame_chunk(error) == {"error": {"code": "Throttled", "message": "slow"}}
    initial = EventStreamMessage(headers={":event-type": "initial-response"}, payload=b"{}")
    assert frame_chunk(initial) is None
    listed = EventStreamMessage(headers={":event-type": "metadata"}, payload=b"[1]")
    with pytest.raises(ValueError, match="not a JSON object"):
        frame_chunk(listed)


def corrupt(data: bytes, at: int) -> bytes:
    bad = bytearray(data)
    bad[at] ^= 0x01
    return bytes(bad)


GOOD = frame(EVENT, payload_bytes({"stopReason": "tool_use"}))


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (corrupt(GOOD, 2), "prelude checksum"),
        (corrupt(GOOD, 40), "message checksum"),
        (corrupt(GOOD, len(GOOD) - 1), "message checksum"),
        (GOOD[:20], "ended inside a message"),
        (frame({"a": "1", **EVENT}, b"{}")[:12] + b"\x00" * 30, "ended inside a message"),
        (frame({"a": "1", **EVENT}, b"{}")[:-4] + b"\x00" * 4, "message checksum"),
    ],
)
def test_bad_bytes_are_a_clear_error(data: bytes, reason: str) -> None:
    prefix = GOOD  # a good message first: it is still delivered
    decoder = EventStreamDecoder()
    messages = decoder.feed(prefix + data)
    assert [m.offset for m in messages] == [0]
    if decoder.error is None:
        with pytest.raises(EventStreamError, match=reason) as caught:
            decoder.finish()
    else:
        caught_error = decoder.error
        assert reason in str(caught_error)
        with pytest.raises(EventStreamError):
            decoder.feed(b"")  # it stays failed
        with pytest.raises(EventStreamError):
            decoder.finish()
        return
    assert caught.value.offset == len(prefix)
    assert "application/vnd.amazon.eventstream" in str(caught.value)


def test_limits_headers_and_lengths() -> None:
    big = frame(EVENT, payload_bytes({"p": "x" * 200}))
    decoder = EventStreamDecoder(max_message_bytes=64)
    assert decoder.feed(big[:12]) == []  # refused before it is buffered
    assert decoder.error is not None
    assert decoder.error.limit == 64
    with pytest.raises(ValueError, match="at least"):
        EventStreamDecoder(max_message_bytes=8)
    duplicate = b"\x01a\x00\x01a\x01"
    unknown = b"\x01a\x0c"
    short = b"\x01a\x07\x00\x09ab"
    for raw, reason in ((duplicate, "twice"), (unknown, "unknown type"), (short, "cannot be read")):
        lengths = struct.pack("!II", 16 + len(raw), len(raw))
        body = lengths + struct.pack("!I", binascii.crc32(lengths)) + raw
        decoder = EventStreamDecoder()
        assert decoder.feed(body + struct.pack("!I", binascii.crc32(body))) == []
        assert decoder.error is not None
        assert reason in decoder.error.reason
    lengths = struct.pack("!II", 16, 9)  # headers longer than the message
    decoder = EventStreamDecoder()
    decoder.feed(lengths + struct.pack("!I", binascii.crc32(lengths)) + b"\x00" * 4)
    assert decoder.error is not None
    assert "do not fit" in decoder.error.reason
    finished = EventStreamDecoder()
    finished.finish()
    with pytest.raises(ClosedError):
        finished.feed(GOOD)


def test_the_pipeline_names_the_framing_instead_of_utf8() -> None:
    events = ToolCallStream().feed(corrupt(GOOD, 2))
    failed = [e for e in events if isinstance(e, StreamFailed)]
    assert [f.code for f in failed] == ["eventstream"]
    assert "AWS event stream" in failed[0].message
    assert "UTF-8" not in failed[0].message
    core = ToolCallStream()
    events = core.feed(GOOD[:30]) + core.finish()  # cut inside a message
    assert [e.code for e in events if isinstance(e, StreamFailed)] == ["eventstream"]
    bad_json = ToolCallStream().feed(frame(EVENT, b"{nope"))
    assert [e.code for e in bad_json if isinstance(e, StreamFailed)] == ["bad_chunk"]
    short = ToolCallStream()
    assert short.feed(b"\x00\x00\x00") == []  # waits for a whole prelude
    assert isinstance(short.finish()[-1], Done)


def test_invoke_chunk_bytes_must_be_a_json_chunk() -> None:
    bad = {"chunk": {"bytes": base64.b64encode(b"[1, 2]").decode()}}
    events = ToolCallStream().feed(bad)
    assert [e.code for e in events if isinstance(e, StreamFailed)] == ["unsupported_chunk"]
    garbage = {"chunk": {"bytes": "not base64!"}}
    events = ToolCallStream().feed(garbage)
    assert [e.code for e in events if isinstance(e, StreamFailed)] == ["unsupported_chunk"]
    # botocore hands the bytes decoded already
    raw = json.dumps({"type": "message_stop"}).encode()
    events = ToolCallStream().feed({"chunk": {"bytes": raw}})
    assert isinstance(events[-1], Done)


# -- botocore as the oracle (skipped without it) --------------------------------------------


def _botocore() -> Any:
    return pytest.importorskip("botocore.eventstream", reason="botocore is not installed")


@pytest.mark.parametrize("source", SOURCES, ids=[s.name for s in SOURCES])
def test_botocore_decodes_the_fixtures_the_same_way(source: Path) -> None:
    eventstream = _botocore()
    data = fixture(source).read_bytes()
    buffer = eventstream.EventStreamBuffer()
    theirs = []
    for i in range(0, len(data), 5):
        buffer.add_data(data[i : i + 5])
        theirs.extend({"headers": m.headers, "payload": json.loads(m.payload)} for m in buffer)
    assert theirs == as_frames(decode(data, 5))


@pytest.mark.parametrize("at", [1, 9, 30, -2])
def test_botocore_and_ours_refuse_the_same_corruption(at: int) -> None:
    eventstream = _botocore()
    data = fixture(SOURCES[0]).read_bytes()
    bad = corrupt(data, at % len(data))
    buffer = eventstream.EventStreamBuffer()
    buffer.add_data(bad)
    with pytest.raises(eventstream.ParserError):
        list(buffer)
    decoder = EventStreamDecoder()
    decoder.feed(bad)
    assert decoder.error is not None


class _Raw:
    """Stands in for urllib3's response body under botocore's EventStream."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self) -> Any:
        for i in range(0, len(self.data), 11):
            yield self.data[i : i + 11]

    def close(self) -> None:
        pass


def _converse_stream(data: bytes) -> Any:
    """What ``boto3.client("bedrock-runtime").converse_stream(...)["stream"]`` yields."""
    _botocore()
    import botocore.session
    from botocore.eventstream import EventStream
    from botocore.parsers import create_parser

    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    shape = model.operation_model("ConverseStream").output_shape.members["stream"]
    parser = create_parser(model.metadata["protocol"])
    return EventStream(_Raw(data), shape, parser._event_stream_parser, "ConverseStream")


def test_botocore_parsed_events_give_the_same_events_as_the_bytes() -> None:
    data = (FIXTURES / "bedrock-converse-tool-use.eventstream").read_bytes()
    parsed = list(_converse_stream(data))
    assert parsed[0] == {"messageStart": {"role": "assistant"}}  # botocore drops "p"
    from_bytes = [e.to_dict() for e in iter_events(data)]
    from_parsed = [e.to_dict() for e in iter_events(parsed)]
    assert from_parsed == from_bytes
    ready = [e for e in iter_events(parsed) if isinstance(e, ToolCallReady)]
    assert [(e.name, e.arguments) for e in ready] == [
        ("timetable_lookup", {"port": "Quiberon", "season": "winter"})
    ]


def test_botocore_raises_on_the_exception_frame_and_the_bytes_say_the_same() -> None:
    data = (FIXTURES / "bedrock-converse-stream-error.eventstream").read_bytes()
    from botocore.exceptions import EventStreamError as BotoError

    core = ToolCallStream()
    with pytest.raises(BotoError):
        list(iter_events(_converse_stream(data), core=core))
    assert core.done is not None
    assert core.done.stop_reason.value == "error"
    failed = [e for e in iter_events(data) if isinstance(e, StreamFailed)]
    assert [(f.code, f.message) for f in failed] == [
        (
            "modelStreamErrorException",
            "Model stream error: the model produced an invalid sequence.",
        )
    ]
