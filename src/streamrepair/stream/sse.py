"""Server-sent events: bytes in any chunking -> :class:`SSEEvent` objects.

Theory of operation
-------------------
:class:`SSEDecoder` is a push parser with no I/O. ``feed(data)`` takes the next bytes of
the stream exactly as they came off the network and returns the events completed by
them; ``finish()`` says the stream has ended and returns what was still pending.

Invariants:

* Lines are split on CR, LF or CRLF **as bytes, before UTF-8 decoding**, so a multi-byte
  character split across two network chunks is safe, and U+2028/U+2029 or an escaped
  ``\\n`` inside the JSON never split an event (``str.splitlines()`` would).
* A CR at the end of one chunk followed by LF at the start of the next is one line end
  (``rexxars/eventsource-parser#17``): the decoder remembers that it owes an LF skip.
* Only the bytes of the current, unfinished line are buffered, and the decoder remembers
  how far it has looked for a line end, so no byte is scanned again by a later ``feed``
  (within one, a byte is searched for a CR once and for a line end once, the data line
  of an ``event:``/``data:`` pair that turns out not to be whole at most twice). An event
  of the usual shape that is whole in what arrived (one ``data:`` line, or an ``event:``
  line and one ``data:`` line, then a blank line) is read at once, not line by line:
  the same event, line numbers and errors. That line is bounded
  by ``max_line_bytes`` and an event's joined ``data`` by ``max_event_bytes``; passing
  either raises :class:`SSELimitError` instead of growing without bound.
* The output depends only on the bytes, never on how they were split: any chunking of
  the same stream gives the same events.
* A decoder that raised stays failed: every later ``feed``/``finish`` raises the same
  error (h11 style).

Framing follows the WHATWG ``text/event-stream`` rules with the deviations that real
servers need (see ``../shared/reference/wire-formats-and-malformations.md`` section 1):
``data:{json}`` with no space after the colon (Kimi, Ling, Spring servers) is read like
``data: {json}``; comment lines (``: keep-alive``, ``: OPENROUTER PROCESSING``) are
skipped; a UTF-8 BOM at the start is dropped; several ``data:`` lines are joined with
``\\n``. One deliberate deviation: at ``finish()`` a last event that was not followed by a
blank line is still dispatched, because recordings often end without one and dropping
it would lose content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ClosedError, SSEDecodeError, SSEError, SSELimitError

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "JSONLinesDecoder",
    "SSEDecoder",
    "SSEEvent",
]

#: Longest line the decoder buffers (bytes). A tool call's arguments can be large, but a
#: single SSE line of more than 16 MiB is not a sane stream.
DEFAULT_MAX_LINE_BYTES = 16 * 2**20
#: Largest ``data`` payload of one event, all its ``data:`` lines joined (bytes).
DEFAULT_MAX_EVENT_BYTES = 16 * 2**20

_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(rb"[\r\n]")


@dataclass(frozen=True, slots=True, kw_only=True)
class SSEEvent:
    """One dispatched server-sent event.

    ``event`` is the ``event:`` field (``None`` when the server sent none, which the spec
    calls a ``message`` event); ``data`` is the ``data:`` lines joined with ``\\n``;
    ``id`` is the last event id seen (it persists across events, as the spec says);
    ``retry`` is the ``retry:`` value of this event when it was a valid integer.
    ``comment`` is set (and ``data`` empty) only by a decoder made with
    ``comments=True``: the text of a comment line after its ``:``, dispatched on its own
    (a proxy forwards keep-alives).
    """

    data: str
    event: str | None = None
    id: str | None = None
    retry: int | None = None
    comment: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.data, str):
            raise TypeError(f"data must be a str, not {type(self.data).__name__}")


class SSEDecoder:
    """Push decoder for ``text/event-stream`` bytes. See the module docstring.

    ``comments=True`` also reports each comment line as an :class:`SSEEvent` with
    ``comment`` set, in stream order (they are skipped by default).

    ``feed(data)`` may be called any number of times with any split of the stream, then
    ``finish()`` once. After ``finish()`` the decoder accepts nothing more.
    """

    __slots__ = (
        "_bom_checked",
        "_buffer",
        "_closed",
        "_comments",
        "_consumed",
        "_data",
        "_data_bytes",
        "_error",
        "_event",
        "_has_data",
        "_last_id",
        "_line_number",
        "_retry",
        "_scan",
        "_skip_lf",
        "max_event_bytes",
        "max_line_bytes",
    )

    def __init__(
        self,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        comments: bool = False,
    ) -> None:
        if max_line_bytes < 1 or max_event_bytes < 1:
            raise ValueError("max_line_bytes and max_event_bytes must be positive")
        self._comments = comments
        self.max_line_bytes = max_line_bytes
        self.max_event_bytes = max_event_bytes
        self._buffer = bytearray()  # bytes of the unfinished line only
        self._scan = 0  # how far into _buffer we already looked for a line end
        self._consumed = 0  # stream offset of _buffer[0]
        self._skip_lf = False
        self._bom_checked = False
        self._line_number = 1
        self._closed = False
        self._error: SSEError | None = None
        self._data: list[str] = []
        self._data_bytes = 0
        self._has_data = False
        self._event: str | None = None
        self._retry: int | None = None
        self._last_id: str | None = None

    @property
    def bytes_seen(self) -> int:
        """How many bytes have been fed so far."""
        return self._consumed + len(self._buffer)

    def feed(self, data: bytes | bytearray | memoryview) -> list[SSEEvent]:
        """Take the next bytes of the stream; return the events they complete.

        Raises :class:`SSELimitError` when a line or an event passes its bound,
        :class:`SSEDecodeError` on a line that is not UTF-8, and :class:`ClosedError` after
        ``finish()``. Nothing passed in is modified.
        """
        self._check_open()
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"SSEDecoder.feed() takes bytes, not {type(data).__name__}")
        if not data:
            return []
        events: list[SSEEvent] = []
        try:
            if self._buffer:
                # An unfinished line is pending: extend it, and look for a line end only
                # in what has not been searched yet.
                self._buffer += data
                used = self._drain(self._buffer, self._scan, events)
                del self._buffer[:used]
            else:
                buf = data if isinstance(data, bytes) else bytes(data)
                used = self._drain(buf, 0, events)
                self._buffer += buf[used:]
            self._consumed += used
            self._scan = len(self._buffer)
            if self._scan > self.max_line_bytes:
                raise self._too_long(self._consumed)
        except SSEError as exc:
            self._error = exc
            raise
        return events

    def finish(self) -> list[SSEEvent]:
        """Say the stream has ended; return the events still pending.

        An unterminated last line is read as a line, and a last event with no blank line
        after it is dispatched (see the module docstring). The decoder is closed after.
        """
        self._check_open()
        events: list[SSEEvent] = []
        try:
            if not self._bom_checked and _BOM.startswith(bytes(self._buffer)):
                # Fewer than three bytes, all a BOM prefix: not a line of content.
                self._buffer.clear()
            if self._buffer:
                line_start = self._consumed
                line = bytes(self._buffer)
                self._consumed += len(self._buffer)
                self._buffer.clear()
                self._scan = 0
                self._line(line, line_start, events)
            self._dispatch(events)
        except SSEError as exc:
            self._error = exc
            raise
        finally:
            self._closed = True
        return events

    # -- internals -------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._error is not None:
            raise self._error
        if self._closed:
            raise ClosedError("SSEDecoder.feed()/finish() called after finish()")

    def _too_long(self, offset: int) -> SSELimitError:
        return SSELimitError(
            f"SSE line longer than {self.max_line_bytes} bytes",
            limit=self.max_line_bytes,
            offset=offset,
            line=self._line_number,
        )

    def _drain(self, buf: bytes | bytearray, scan: int, events: list[SSEEvent]) -> int:
        """Read the complete lines of ``buf`` (``buf[0]`` is at stream offset
        ``self._consumed``; nothing before ``scan`` holds a line end); return how many
        bytes were used. One pass (see the module docstring)."""
        pos = 0
        size = len(buf)
        if not self._bom_checked:
            if size < len(_BOM) and _BOM.startswith(bytes(buf)):
                return 0  # could still be a BOM; wait for more bytes
            if buf.startswith(_BOM):
                pos = len(_BOM)
            self._bom_checked = True
        if self._skip_lf and pos < size:
            if buf[pos] == 0x0A:
                pos += 1
            self._skip_lf = False
        scan = max(scan, pos)
        if buf.find(b"\r", scan) < 0:
            return self._drain_lf(buf, pos, scan, events)
        search = _LINE_END.search
        limit = self.max_line_bytes
        while True:
            match = search(buf, scan)
            if match is None:
                return pos
            end = match.start()
            if end - pos > limit:
                raise self._too_long(self._consumed + pos)
            line = bytes(buf[pos:end]) if isinstance(buf, bytearray) else buf[pos:end]
            start = pos
            pos = end + 1
            if buf[end] == 0x0D:
                if pos < size:
                    if buf[pos] == 0x0A:
                        pos += 1
                else:
                    self._skip_lf = True  # the LF, if any, is in the next chunk
            scan = pos
            self._line(line, self._consumed + start, events)
            self._line_number += 1

    def _drain_lf(self, buf: bytes | bytearray, pos: int, scan: int, events: list[SSEEvent]) -> int:
        """:meth:`_drain` for bytes with no CR from ``scan`` on (nearly every stream):
        lines end at LF only, and an event of the usual shape that is whole in ``buf``
        is read at once (:meth:`_whole_event`), giving what the line-by-line reading
        gives."""
        find = buf.find
        limit = self.max_line_bytes
        while True:
            end = find(b"\n", scan)
            if end < 0:
                return pos
            if end - pos > limit:
                raise self._too_long(self._consumed + pos)
            if not self._has_data and self._event is None and self._retry is None:
                after = self._whole_event(buf, pos, end, events)
                if after:
                    pos = scan = after
                    continue
            line = bytes(buf[pos:end]) if isinstance(buf, bytearray) else buf[pos:end]
            start = pos
            pos = scan = end + 1
            self._line(line, self._consumed + start, events)
            self._line_number += 1

    def _whole_event(
        self, buf: bytes | bytearray, pos: int, end: int, events: list[SSEEvent]
    ) -> int:
        """Read the event at ``pos`` (its first line ends at ``end``, an LF; no field of
        an event is pending) when it is one ``data:`` line, or an ``event:`` line and one
        ``data:`` line, then a blank line, all in ``buf`` and within the bounds: append it
        and return where the next line starts. Else 0, and nothing changed: the
        line-by-line reading takes it (and raises what it raises)."""
        size = len(buf)
        name: str | None = None
        lines = 2
        if buf.startswith(b"event:", pos):
            after = end + 1
            end = buf.find(b"\n", after)
            if end < 0 or end - after > self.max_line_bytes:
                return 0
            try:
                name = buf[pos + (7 if buf[pos + 6 : pos + 7] == b" " else 6) : after - 1].decode()
            except UnicodeDecodeError:
                return 0
            pos = after
            lines = 3
        if (
            end + 1 >= size
            or buf[end + 1] != 0x0A  # not followed by the blank line that ends the event
            or not buf.startswith(b"data:", pos)
            or end - pos + 1 > self.max_event_bytes
        ):
            return 0
        try:
            data = buf[pos + (6 if buf[pos + 5 : pos + 6] == b" " else 5) : end].decode()
        except UnicodeDecodeError:
            return 0
        events.append(SSEEvent(data=data, event=name or None, id=self._last_id))
        self._line_number += lines
        return end + 2

    def _line(self, raw: bytes, offset: int, events: list[SSEEvent]) -> None:
        if not raw:
            self._dispatch(events)
            return
        if raw[0] == 0x3A:  # ':' comment / keep-alive
            if self._comments:
                text = raw[1:].decode("utf-8", errors="replace")
                events.append(SSEEvent(data="", comment=text[1:] if text[:1] == " " else text))
            return
        if raw.startswith(b"data:"):  # the common case, without the general parse
            skip = 6 if raw[5:6] == b" " else 5
            try:
                self._data_line(raw[skip:].decode("utf-8"), len(raw), offset)
            except UnicodeDecodeError as exc:
                raise SSEDecodeError(
                    f"SSE line is not valid UTF-8 ({exc.reason})",
                    offset=offset + skip + exc.start,
                    line=self._line_number,
                ) from None
            return
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SSEDecodeError(
                f"SSE line is not valid UTF-8 ({exc.reason})",
                offset=offset + exc.start,
                line=self._line_number,
            ) from None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data_line(value, len(raw), offset)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\x00" not in value:
                self._last_id = value
        elif name == "retry":
            self._retry = int(value) if value.isascii() and value.isdigit() else None
        # Any other field name is ignored, as the spec says.

    def _data_line(self, value: str, raw_size: int, offset: int) -> None:
        self._data_bytes += raw_size + 1  # an upper bound of the joined data's size
        if self._data_bytes > self.max_event_bytes:
            raise SSELimitError(
                f"SSE event data longer than {self.max_event_bytes} bytes",
                limit=self.max_event_bytes,
                offset=offset,
                line=self._line_number,
            )
        self._data.append(value)
        self._has_data = True

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if self._has_data:
            data = self._data
            events.append(
                SSEEvent(
                    data=data[0] if len(data) == 1 else "\n".join(data),
                    event=self._event or None,
                    id=self._last_id,
                    retry=self._retry,
                )
            )
        self._data = []
        self._data_bytes = 0
        self._has_data = False
        self._event = None
        self._retry = None


class JSONLinesDecoder:
    """Push splitter for newline-delimited JSON (Ollama's ``/api/chat``, recordings with
    one chunk per line): bytes in any chunking -> the text of each non-blank line.

    Lines end at LF (a CR before it is dropped); bytes are split before UTF-8 decoding;
    the unfinished line is bounded by ``max_line_bytes``; nothing is scanned twice.
    """

    __slots__ = (
        "_buffer",
        "_closed",
        "_consumed",
        "_error",
        "_line_number",
        "_scan",
        "max_line_bytes",
    )

    def __init__(self, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be positive")
        self.max_line_bytes = max_line_bytes
        self._buffer = bytearray()
        self._scan = 0
        self._consumed = 0
        self._line_number = 1
        self._closed = False
        self._error: SSEError | None = None

    def feed(self, data: bytes | bytearray | memoryview) -> list[str]:
        """Take the next bytes; return the lines they complete (blank lines skipped)."""
        self._check_open()
        self._buffer += data
        lines: list[str] = []
        try:
            while True:
                end = self._buffer.find(b"\n", self._scan)
                if end < 0:
                    self._scan = len(self._buffer)
                    self._check_length(len(self._buffer))
                    return lines
                self._check_length(end)
                raw = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                self._scan = 0
                self._take(raw, lines)
                self._consumed += end + 1
                self._line_number += 1
        except SSEError as exc:
            self._error = exc
            raise

    def finish(self) -> list[str]:
        """The input has ended: return the last line if it had no newline."""
        self._check_open()
        self._closed = True
        lines: list[str] = []
        try:
            self._take(bytes(self._buffer), lines)
        except SSEError as exc:
            self._error = exc
            raise
        self._buffer.clear()
        return lines

    def _check_open(self) -> None:
        if self._error is not None:
            raise self._error
        if self._closed:
            raise ClosedError("JSONLinesDecoder.feed()/finish() called after finish()")

    def _check_length(self, length: int) -> None:
        if length > self.max_line_bytes:
            raise SSELimitError(
                f"line longer than {self.max_line_bytes} bytes",
                limit=self.max_line_bytes,
                offset=self._consumed,
                line=self._line_number,
            )

    def _take(self, raw: bytes, lines: list[str]) -> None:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SSEDecodeError(
                f"line is not valid UTF-8 ({exc.reason})",
                offset=self._consumed + exc.start,
                line=self._line_number,
            ) from None
        text = text.strip()
        if text:
            lines.append(text)
