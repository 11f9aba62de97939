"""The sans-IO stream core: :class:`ToolCallStream`.

Theory of operation
-------------------
:class:`ToolCallStream` chains the push cores, each doing one job::

    bytes --SSEDecoder / JSONLinesDecoder--> JSON payloads --json.loads--> chunks
    chunks (dicts or SDK objects) --ChunkNormalizer--> wire deltas
    wire deltas --ToolCallTracker (+ one ArgumentAssembler per call)--> events

``feed(x)`` takes bytes of a raw HTTP body (``text/event-stream``, or newline-delimited
JSON when the first non-blank byte is ``{``), or one chunk (a dict or an SDK chunk
object), and returns the events that input completes; ``finish()`` says the input ended;
``abort()`` says the consumer stopped. Nothing here reads, sleeps or awaits, so the same
core serves :func:`~streamrepair.iter_events` (sync), :func:`~streamrepair.aiter_events`
(asyncio and trio through anyio, in :mod:`.drivers`) and callers who drive it themselves.
The events depend only on the input, never on how it was split.

Once :class:`~streamrepair.Done` has been emitted (end marker, error, ``finish()`` or
``abort()``) the stream is over: later input is ignored (a recording may carry bytes after
``[DONE]``), and drivers stop reading and close their source. Calling ``feed()`` or
``finish()`` after ``finish()`` or ``abort()`` raises :class:`~streamrepair.ClosedError`.

``tools`` turns on the schema check (unknown tool names rejected, ready arguments
schema-repaired); the schema machinery (jsonschema) is imported only then.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import ClosedError, SSEError, UnsupportedChunkError
from ..events import Done, StreamEvent, ToolCallReady, ToolCallRejected
from ..providers.normalizer import ChunkNormalizer, Provider, as_chunk
from ..providers.wire import WireEnd, WireError
from ..syntax.assembler import DEFAULT_MAX_DEPTH, DEFAULT_MAX_SIZE
from .sse import (
    DEFAULT_MAX_EVENT_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    JSONLinesDecoder,
    SSEDecoder,
)
from .tracker import DEFAULT_MAX_TEXT_CHARS, ArgumentCheck, CallProgress, ToolCallTracker

__all__ = ["ToolCallStream"]

_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


class ToolCallStream:
    """Sans-IO core: raw bytes or chunks in, :class:`~streamrepair.StreamEvent` out.

    ``provider`` (``"openai"``, ``"anthropic"``, ``"responses"``, ``"ollama"`` or a
    :class:`~streamrepair.Provider`) is detected from the first chunk when not given.
    ``tools`` (an OpenAI, Responses or Anthropic tool list) rejects unknown tool names and
    schema-checks ready arguments (``check`` passes a check of your own instead; see
    :class:`~streamrepair.stream.tracker.ArgumentCheck`). ``choice`` is the Chat
    Completions choice followed when ``n > 1``. ``previews=False`` skips the preview on
    each :class:`ToolCallDelta`. The ``max_*`` bounds are those of the layers (see
    ``sse.py``, ``tracker.py`` and :class:`~streamrepair.ArgumentAssembler`).

    Call :meth:`feed` with each piece of input, then :meth:`finish` once (or
    :meth:`abort`). :attr:`done` holds the :class:`~streamrepair.Done` event once the
    stream is over; :attr:`calls` lists each call's id, name and phase at any time.
    """

    def __init__(
        self,
        *,
        provider: Provider | str | None = None,
        tools: Iterable[Mapping[str, Any]] | None = None,
        check: ArgumentCheck | None = None,
        choice: int = 0,
        previews: bool = True,
        max_size: int = DEFAULT_MAX_SIZE,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    ) -> None:
        self._normalizer = ChunkNormalizer(provider, choice=choice)
        self._tracker = ToolCallTracker(
            provider=self._normalizer.provider,
            tools=tools,
            check=check,
            max_size=max_size,
            max_depth=max_depth,
            max_text_chars=max_text_chars,
            previews=previews,
        )
        self._max_line_bytes = max_line_bytes
        self._max_event_bytes = max_event_bytes
        self._mode: str | None = None  # None until sniffed, then "sse" or "ndjson"
        self._head = bytearray()  # leading bytes while the mode is unknown
        self._sse: SSEDecoder | None = None
        self._lines: JSONLinesDecoder | None = None
        self._closed = False

    # -- state ---------------------------------------------------------------------------

    @property
    def provider(self) -> Provider | None:
        """The provider, once named or detected."""
        return self._normalizer.provider

    @property
    def done(self) -> Done | None:
        """The final :class:`~streamrepair.Done` event, once the stream is over."""
        return self._tracker.done

    @property
    def calls(self) -> tuple[tuple[str, str | None, CallProgress], ...]:
        """``(call_id, name, phase)`` for every call so far, in order."""
        return self._tracker.calls

    @property
    def verdicts(self) -> tuple[ToolCallReady | ToolCallRejected, ...]:
        """Every ready and rejected event so far, in order, including those a consumer
        never saw because it stopped reading (a cancelled ``aiter_events``)."""
        return self._tracker.verdicts

    # -- input ---------------------------------------------------------------------------

    def feed(self, data: bytes | bytearray | memoryview | str | object) -> list[StreamEvent]:
        """Take bytes (or text) of the raw body, or one chunk; return the new events."""
        if isinstance(data, bytes | bytearray | memoryview):
            return self.feed_bytes(data)
        if isinstance(data, str):
            return self.feed_bytes(data.encode("utf-8"))
        return self.feed_chunk(data)

    def feed_bytes(self, data: bytes | bytearray | memoryview) -> list[StreamEvent]:
        """Take the next bytes of a raw SSE or newline-delimited JSON body."""
        self._check_open()
        out: list[StreamEvent] = []
        if self.done is not None or not data:
            return out
        if self._mode is None:
            data = self._sniff(data)
            if self._mode is None:
                return out
        try:
            if self._sse is not None:
                for event in self._sse.feed(data):
                    self._payload(event.data, out)
                    if self.done is not None:
                        break
            elif self._lines is not None:
                for line in self._lines.feed(data):
                    self._payload(line, out)
                    if self.done is not None:
                        break
        except SSEError as exc:
            out.extend(self._tracker.fail(WireError(message=str(exc), code="sse")))
        return out

    def feed_chunk(self, chunk: object) -> list[StreamEvent]:
        """Take one parsed chunk: a dict, or an ``openai``/``anthropic`` SDK chunk object.
        Nothing in it is modified."""
        self._check_open()
        out: list[StreamEvent] = []
        if self.done is not None:
            return out
        try:
            mapping = as_chunk(chunk)
        except UnsupportedChunkError as exc:
            out.extend(self._tracker.fail(WireError(message=str(exc), code="unsupported_chunk")))
            return out
        self._chunk(mapping, out)
        return out

    def finish(self) -> list[StreamEvent]:
        """The input has ended: flush the decoders, judge every call, emit ``Done``.
        Raises :class:`~streamrepair.ClosedError` if called twice."""
        self._check_open()
        out: list[StreamEvent] = []
        if self.done is None:
            try:
                if self._sse is not None:
                    for event in self._sse.finish():
                        self._payload(event.data, out)
                elif self._lines is not None:
                    for line in self._lines.finish():
                        self._payload(line, out)
            except SSEError as exc:
                out.extend(self._tracker.fail(WireError(message=str(exc), code="sse")))
            out.extend(self._tracker.finish())
        self._closed = True
        return out

    def fail(self, message: str, *, code: str | None = None) -> list[StreamEvent]:
        """End the stream with an error from outside the data (a network error, say):
        a :class:`~streamrepair.StreamFailed`, every call rejected, ``Done``. No-op once
        the stream is over."""
        out: list[StreamEvent] = []
        out.extend(self._tracker.fail(WireError(message=message, code=code)))
        return out

    def abort(self) -> list[StreamEvent]:
        """The consumer stopped reading: calls not yet judged end as ``aborted``; nothing
        becomes ready. Safe to call at any time, any number of times."""
        self._closed = True
        return self._tracker.abort()

    # -- internals -----------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("this ToolCallStream has been finished or aborted")

    def _sync_provider(self) -> None:
        if self._tracker.provider is None:
            self._tracker.provider = self._normalizer.provider

    def _sniff(self, data: bytes | bytearray | memoryview) -> bytes:
        head = self._head
        head += data
        if len(head) < len(_BOM) and _BOM.startswith(head):
            return b""
        start = len(_BOM) if head.startswith(_BOM) else 0
        body = bytes(head[start:]).lstrip(_WHITESPACE)
        if not body:
            if len(head) > self._max_line_bytes:
                self._mode = "sse"  # let the SSE decoder see it (blank lines are harmless)
                self._sse = SSEDecoder(
                    max_line_bytes=self._max_line_bytes, max_event_bytes=self._max_event_bytes
                )
                self._head = bytearray()
                return body
            return b""
        self._head = bytearray()
        if body[:1] == b"{":
            self._mode = "ndjson"
            self._lines = JSONLinesDecoder(max_line_bytes=self._max_line_bytes)
        else:
            self._mode = "sse"
            self._sse = SSEDecoder(
                max_line_bytes=self._max_line_bytes, max_event_bytes=self._max_event_bytes
            )
        return body

    def _chunk(self, chunk: Mapping[str, Any], out: list[StreamEvent]) -> None:
        try:
            deltas = self._normalizer.normalize(chunk)
        except UnsupportedChunkError as exc:
            out.extend(self._tracker.fail(WireError(message=str(exc), code="unsupported_chunk")))
            return
        if self._tracker.provider is None:
            self._tracker.provider = self._normalizer.provider
        feed = self._tracker.feed
        for delta in deltas:
            out.extend(feed(delta))

    def _payload(self, data: str, out: list[StreamEvent]) -> None:
        text = data if data[:1] == "{" else data.strip()
        if not text:
            return
        if text.startswith("[DONE]"):
            self._sync_provider()
            out.extend(self._tracker.feed(WireEnd()))
            return
        try:
            chunk = json.loads(text)
        except ValueError as exc:
            message = f"a chunk is not valid JSON ({exc}): {text[:120]!r}"
            out.extend(self._tracker.fail(WireError(message=message, code="bad_chunk", raw=text)))
            return
        if type(chunk) is not dict:
            message = f"a chunk is not a JSON object: {text[:120]!r}"
            out.extend(self._tracker.fail(WireError(message=message, code="bad_chunk", raw=text)))
            return
        self._chunk(chunk, out)
