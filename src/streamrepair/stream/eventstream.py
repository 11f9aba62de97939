"""AWS event streams (``application/vnd.amazon.eventstream``): bytes in any chunking ->
messages, and each Bedrock message as the chunk botocore would give.

Theory of operation
-------------------
AWS Bedrock streams (``ConverseStream``, ``InvokeModelWithResponseStream``) are not
server-sent events but binary frames. Every integer is big-endian::

    [total length u32][headers length u32][prelude CRC32 u32]    the prelude, 12 bytes
    [headers]   each: [name length u8][name][type u8][value]
    [payload]   total length - headers length - 16 bytes (Bedrock: JSON)
    [message CRC32 u32]                                          of everything before it

:class:`EventStreamDecoder` is a push parser with no I/O, like :class:`SSEDecoder`:
``feed(data)`` takes the next bytes exactly as they came off the network and returns the
:class:`EventStreamMessage` objects they complete; ``finish()`` says the stream ended.

Invariants:

* The output depends only on the bytes, never on how they were split.
* Only the bytes of the current, unfinished message are kept, and a message's length is
  known from its first 12 bytes: one longer than ``max_message_bytes`` is refused before
  it is buffered. No byte is looked at twice.
* Both checksums are verified (the prelude's before its lengths are trusted); a header of
  an unknown type, a repeated header, or lengths that do not fit raise
  :class:`~streamrepair.errors.EventStreamError` with the message's byte offset.
* Messages before a bad one are returned, and the error is kept (:attr:`error`); the
  decoder stays failed: every later ``feed``/``finish`` raises it.

:func:`frame_chunk` turns one message into the chunk botocore's parser yields for it
(``{"contentBlockDelta": {...}}`` from ``:event-type``, ``{"<exception type>": {...}}``
from an exception message, ``{"error": {...}}`` from an error message), so that raw bytes
and ``boto3``'s parsed stream normalize the same way. The decoding is checked against
botocore's own (``tests/test_eventstream.py``).
"""

from __future__ import annotations

import binascii
import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ClosedError, EventStreamError

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "EventStreamDecoder",
    "EventStreamMessage",
    "frame_chunk",
    "looks_like_eventstream",
]

#: Largest message the decoder buffers (bytes, prelude and checksum included).
DEFAULT_MAX_MESSAGE_BYTES = 16 * 2**20

_PRELUDE = 12
_MINIMUM = _PRELUDE + 4
_U32 = struct.Struct("!I")
_PRELUDE_FIELDS = struct.Struct("!III")
# value type -> fixed size (None: a u16 length prefix follows)
_FIXED = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}
_INTS = {2: "!b", 3: "!h", 4: "!i", 5: "!q", 8: "!q"}


def looks_like_eventstream(head: bytes) -> bool:
    """Whether the first 12 bytes of a body are an event-stream prelude (its CRC32
    matches). Needs 12 bytes."""
    if len(head) < _PRELUDE:
        return False
    total, headers, crc = _PRELUDE_FIELDS.unpack_from(head)
    return bool(
        binascii.crc32(head[:8]) == crc and total >= _MINIMUM and headers <= total - _MINIMUM
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class EventStreamMessage:
    """One message. ``headers`` maps each header name to its value (``str`` for string
    headers, ``bool``, ``int`` (timestamps: milliseconds), ``bytes`` for byte arrays and
    UUIDs); ``payload`` is the raw payload; ``offset`` the message's byte offset."""

    headers: Mapping[str, Any]
    payload: bytes
    offset: int = 0


class EventStreamDecoder:
    """Push decoder for event-stream bytes. See the module docstring."""

    __slots__ = ("_buffer", "_closed", "_consumed", "_error", "max_message_bytes")

    def __init__(self, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        if max_message_bytes < _MINIMUM:
            raise ValueError(f"max_message_bytes must be at least {_MINIMUM}")
        self.max_message_bytes = max_message_bytes
        self._buffer = bytearray()  # bytes of the unfinished message only
        self._consumed = 0  # stream offset of _buffer[0]
        self._error: EventStreamError | None = None
        self._closed = False

    @property
    def error(self) -> EventStreamError | None:
        """The error that failed the decoder, if any."""
        return self._error

    def feed(self, data: bytes | bytearray | memoryview) -> list[EventStreamMessage]:
        """Take the next bytes; return the messages they complete.

        When the bytes hold a bad message, the messages before it are still returned (so
        that the result does not depend on how the bytes were split) and :attr:`error` is
        set; every later call raises it. A caller checks :attr:`error` after each feed.
        """
        self._check()
        self._buffer += data
        out: list[EventStreamMessage] = []
        buffer = self._buffer
        start = 0
        try:
            while len(buffer) - start >= _PRELUDE:
                total = self._prelude(buffer, start)
                if len(buffer) - start < total:
                    break
                out.append(self._message(buffer, start, total))
                start += total
        except EventStreamError as exc:
            self._error = exc
        if start:
            del buffer[:start]
            self._consumed += start
        return out

    def finish(self) -> list[EventStreamMessage]:
        """The stream has ended; raises if it ended inside a message."""
        self._check()
        self._closed = True
        if self._buffer:
            have = len(self._buffer)
            error = EventStreamError(
                f"the stream ended inside a message ({have} byte(s) of it arrived)",
                offset=self._consumed,
            )
            self._error = error
            raise error
        return []

    def _check(self) -> None:
        if self._error is not None:
            raise self._error
        if self._closed:
            raise ClosedError("EventStreamDecoder used after finish()")

    def _prelude(self, buffer: bytearray, start: int) -> int:
        total, headers, crc = _PRELUDE_FIELDS.unpack_from(buffer, start)
        offset = self._consumed + start
        if binascii.crc32(buffer[start : start + 8]) != crc:
            raise EventStreamError("the prelude checksum does not match", offset=offset)
        if total < _MINIMUM or headers > total - _MINIMUM:
            raise EventStreamError(
                f"the lengths do not fit (message {total} bytes, headers {headers})",
                offset=offset,
            )
        if total > self.max_message_bytes:
            raise EventStreamError(
                f"a message of {total} bytes exceeds max_message_bytes={self.max_message_bytes}",
                offset=offset,
                limit=self.max_message_bytes,
            )
        return int(total)

    def _message(self, buffer: bytearray, start: int, total: int) -> EventStreamMessage:
        offset = self._consumed + start
        end = start + total
        (crc,) = _U32.unpack_from(buffer, end - 4)
        if binascii.crc32(buffer[start : end - 4]) != crc:
            raise EventStreamError("the message checksum does not match", offset=offset)
        (length,) = _U32.unpack_from(buffer, start + 4)
        headers = _headers(bytes(buffer[start + _PRELUDE : start + _PRELUDE + length]), offset)
        payload = bytes(buffer[start + _PRELUDE + length : end - 4])
        return EventStreamMessage(headers=headers, payload=payload, offset=offset)


def _headers(raw: bytes, offset: int) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    pos = 0
    try:
        while pos < len(raw):
            size = raw[pos]
            name = raw[pos + 1 : pos + 1 + size].decode("utf-8")
            pos += 1 + size
            kind = raw[pos]
            pos += 1
            value: Any
            if kind in (0, 1):
                value = kind == 0
            elif kind in _FIXED:
                width = _FIXED[kind]
                chunk = raw[pos : pos + width]
                if len(chunk) != width:
                    raise IndexError
                value = struct.unpack(_INTS[kind], chunk)[0] if kind in _INTS else chunk
                pos += width
            elif kind in (6, 7):
                (width,) = struct.unpack_from("!H", raw, pos)
                chunk = raw[pos + 2 : pos + 2 + width]
                if len(chunk) != width:
                    raise IndexError
                value = chunk.decode("utf-8") if kind == 7 else chunk
                pos += 2 + width
            else:
                raise EventStreamError(f"header {name!r} has unknown type {kind}", offset=offset)
            if name in headers:
                raise EventStreamError(f"header {name!r} appears twice", offset=offset)
            headers[name] = value
    except (IndexError, struct.error, UnicodeDecodeError):
        raise EventStreamError("a header cannot be read", offset=offset) from None
    return headers


def frame_chunk(message: EventStreamMessage) -> Mapping[str, Any] | None:
    """The chunk botocore's parser gives for one Bedrock message, or None for a message
    that carries none (``initial-response``). Raises :class:`ValueError` when the payload
    is not the JSON object it should be."""
    headers = message.headers
    kind = headers.get(":message-type", "event")
    if kind == "error":
        code = headers.get(":error-code")
        text = headers.get(":error-message")
        return {"error": {"code": code, "message": text if isinstance(text, str) else code}}
    name = headers.get(":exception-type" if kind == "exception" else ":event-type")
    if not isinstance(name, str) or not name:
        raise ValueError(f"an event-stream message of type {kind!r} names no event")
    if name == "initial-response":
        return None
    payload: Any = json.loads(message.payload) if message.payload.strip() else {}
    if not isinstance(payload, dict):
        raise ValueError(f"the payload of a {name} event is not a JSON object")
    return {name: payload}
