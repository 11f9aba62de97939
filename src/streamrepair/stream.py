"""The stream pipeline: a sans-IO core (:class:`ToolCallStream`) and thin drivers.

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
core serves :func:`iter_events` (sync), :func:`aiter_events` (asyncio and trio through
anyio) and callers who drive it themselves. The events depend only on the input, never on
how it was split.

Once :class:`~streamrepair.Done` has been emitted (end marker, error, ``finish()`` or
``abort()``) the stream is over: later input is ignored (a recording may carry bytes after
``[DONE]``), and drivers stop reading and close their source.
"""

from __future__ import annotations

import collections
import io
import json
import os
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from typing import Any

import anyio

from .assembler import DEFAULT_MAX_DEPTH, DEFAULT_MAX_SIZE
from .errors import StreamRepairError
from .events import Done, StreamEvent, ToolCallReady, ToolCallRejected
from .providers import ChunkNormalizer, Provider, UnsupportedChunkError, as_chunk
from .sse import (
    DEFAULT_MAX_EVENT_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    JSONLinesDecoder,
    SSEDecoder,
    SSEError,
)
from .tracker import DEFAULT_MAX_TEXT_CHARS, CallPhase, ToolCallTracker
from .wire import WireEnd, WireError

__all__ = [
    "READ_CHUNK_BYTES",
    "StreamClosedError",
    "ToolCallStream",
    "aiter_events",
    "iter_events",
    "load_recording",
]

#: How many bytes the drivers read from a file at a time.
READ_CHUNK_BYTES = 64 * 1024
_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


class StreamClosedError(StreamRepairError, RuntimeError):
    """``feed()`` or ``finish()`` was called after ``finish()`` or ``abort()``."""


class ToolCallStream:
    """Sans-IO core: raw bytes or chunks in, :class:`~streamrepair.StreamEvent` out.

    ``provider`` (``"openai"``, ``"anthropic"``, ``"responses"``, ``"ollama"`` or a
    :class:`~streamrepair.Provider`) is detected from the first chunk when not given.
    ``tools`` (an OpenAI, Responses or Anthropic tool list) rejects unknown tool names and
    schema-checks ready arguments. ``choice`` is the Chat Completions choice followed when
    ``n > 1``. ``previews=False`` skips the preview on each :class:`ToolCallDelta`. The
    ``max_*`` bounds are those of the layers (see ``sse.py``, ``tracker.py`` and
    :class:`~streamrepair.ArgumentAssembler`).

    Call :meth:`feed` with each piece of input, then :meth:`finish` once (or
    :meth:`abort`). :attr:`done` holds the :class:`~streamrepair.Done` event once the
    stream is over; :attr:`calls` lists each call's id, name and phase at any time.
    """

    def __init__(
        self,
        *,
        provider: Provider | str | None = None,
        tools: Iterable[Mapping[str, Any]] | None = None,
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
    def calls(self) -> tuple[tuple[str, str | None, CallPhase], ...]:
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
        Raises :class:`StreamClosedError` if called twice."""
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
            raise StreamClosedError("this ToolCallStream has been finished or aborted")

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


# -- recordings --------------------------------------------------------------------------


def load_recording(data: bytes, *, name: str = "") -> list[bytes | Mapping[str, Any]]:
    """The feedable pieces of a recorded stream's bytes.

    A txtar file (``coder/aibridge`` fixtures; recognized by a ``-- streaming --`` line)
    gives its ``-- streaming --`` section; a recorded HTTP error response in that section
    (``HTTP/2.0 400 ...`` then a JSON body) gives that body as one error chunk. Anything
    else (SSE, or one JSON chunk per line) is returned as it is, for the core to sniff.
    """
    marker = b"-- streaming --\n"
    if name.endswith(".txtar") or marker in data:
        start = data.find(marker)
        if start < 0:
            return []
        section = data[start + len(marker) :]
        end = section.find(b"\n-- ")
        if end >= 0:
            section = section[: end + 1]
        if section.startswith(b"HTTP/"):
            _, _, body = section.partition(b"\n\n")
            try:
                payload = json.loads(body)
            except ValueError:
                payload = None
            status = section.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
            if isinstance(payload, dict) and "error" in payload:
                return [payload]
            return [{"error": {"message": status, "type": "http_error"}}]
        return [section]
    return [data]


def _open(
    source: object,
) -> tuple[Iterable[object] | AsyncIterable[object], object | None, bool]:
    """(items, what to close afterwards, whether we opened it)."""
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as handle:
            data = handle.read()
        return load_recording(data, name=os.fspath(source)), None, True
    if isinstance(source, bytes | bytearray | memoryview):
        return [source], None, True
    if isinstance(source, io.IOBase) or (
        hasattr(source, "read") and not hasattr(source, "__iter__")
    ):
        read = source.read
        return iter(lambda: read(READ_CHUNK_BYTES), b""), None, False
    if isinstance(source, Iterable | AsyncIterable):
        return source, source, False
    raise TypeError(f"cannot read events from a {type(source).__name__}")


def _close_sync(resource: object | None) -> None:
    close = getattr(resource, "close", None)
    if callable(close):
        close()


def iter_events(
    source: object,
    *,
    core: ToolCallStream | None = None,
    **options: Any,
) -> Iterator[StreamEvent]:
    """Events of a stream, synchronously.

    ``source`` is an SDK stream object (``openai.Stream``, ``anthropic.Stream``), an
    iterable of chunk dicts or of raw byte pieces, a binary file object, ``bytes`` of a
    whole body, or the path of a recording (``.sse``, JSON lines, ``.txtar``). ``options``
    are those of :class:`ToolCallStream` (``provider``, ``tools``, ``choice``,
    ``previews``, bounds); pass ``core`` to use (and later inspect) your own core.

    The generator stops reading at the end marker and closes the source it iterated
    (``close()``). If the consumer stops early (``break``, ``close()``), calls not yet
    judged end as ``aborted`` in ``core``. An exception from the source propagates after
    the core has recorded it as a stream error.
    """
    stream = core if core is not None else ToolCallStream(**options)
    items, resource, _ = _open(source)
    if not isinstance(items, Iterable):
        raise TypeError("iter_events() needs a sync source; use aiter_events() for async ones")
    try:
        try:
            for item in items:
                yield from stream.feed(item)
                if stream.done is not None:
                    break
        except Exception as exc:
            if stream.done is None:
                stream.fail(repr(exc), code="source_error")
            raise
        if stream.done is None:
            yield from stream.finish()
    finally:
        if stream.done is None:
            stream.abort()
        _close_sync(resource)


class aiter_events:  # named like a function: `async for e in aiter_events(src)`
    """Events of a stream, asynchronously (asyncio or trio, through anyio).

    ``source`` is an async SDK stream (``openai.AsyncStream``, ``anthropic.AsyncStream``),
    an async iterable of chunks or byte pieces, anything :func:`iter_events` accepts, or
    the path of a recording (read with anyio). Use as ``async for event in
    aiter_events(src)``, preferably inside ``async with aiter_events(src) as events:`` so
    that leaving early always releases the source.

    Cancellation: when the consumer is cancelled while waiting for the next event, or
    leaves the ``async with`` block, or calls :meth:`aclose`, the core is aborted (every
    call not yet judged ends as ``aborted``, none becomes ready) and the source is closed
    (``aclose()``/``close()``) under a shielded scope. :attr:`core` keeps the outcome.
    """

    def __init__(
        self, source: object, *, core: ToolCallStream | None = None, **options: Any
    ) -> None:
        self.core = core if core is not None else ToolCallStream(**options)
        self._source = source
        self._items: AsyncIterator[object] | Iterator[object] | None = None
        self._resource: object | None = None
        self._queue: collections.deque[StreamEvent] = collections.deque()
        self._finished = False

    def __aiter__(self) -> aiter_events:
        return self

    async def __aenter__(self) -> aiter_events:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def __anext__(self) -> StreamEvent:
        while not self._queue:
            if self._finished:
                raise StopAsyncIteration
            try:
                item = await self._next_item()
            except StopAsyncIteration:
                self._queue.extend(self.core.finish())
                await self._release()
                continue
            except anyio.get_cancelled_exc_class():
                await self.aclose()
                raise
            except Exception as exc:
                if self.core.done is None:
                    self.core.fail(repr(exc), code="source_error")
                await self.aclose()
                raise
            self._queue.extend(self.core.feed(item))
            if self.core.done is not None:
                await self._release()
        return self._queue.popleft()

    async def aclose(self) -> None:
        """Stop: abort the core if the stream is not over, and close the source."""
        if self.core.done is None:
            self.core.abort()
        await self._release()

    async def _next_item(self) -> object:
        if self._items is None:
            await self._start()
        items = self._items
        if isinstance(items, AsyncIterator):
            return await items.__anext__()
        assert items is not None
        try:
            return next(items)
        except StopIteration:
            raise StopAsyncIteration from None

    async def _start(self) -> None:
        source = self._source
        if isinstance(source, str | os.PathLike):
            data = await anyio.Path(source).read_bytes()
            self._items = iter(load_recording(data, name=os.fspath(source)))
            return
        if isinstance(source, AsyncIterable):
            self._resource = source
            self._items = aiter(source)
            return
        items, self._resource, _ = _open(source)
        assert isinstance(items, Iterable)
        self._items = iter(items)

    async def _release(self) -> None:
        if self._finished:
            return
        self._finished = True
        resource, self._resource = self._resource, None
        items, self._items = self._items, None
        with anyio.CancelScope(shield=True):
            if items is not resource and isinstance(items, AsyncIterator):
                closer = getattr(items, "aclose", None)
                if callable(closer):
                    await closer()
            aclose = getattr(resource, "aclose", None)
            if callable(aclose):
                await aclose()
            else:
                close = getattr(resource, "close", None)
                if callable(close):
                    result = close()
                    if hasattr(result, "__await__"):
                        await result
