"""The drivers: :func:`iter_events` (sync) and :func:`aiter_events` (asyncio and trio).

Each is read -> feed -> drain around one :class:`~streamrepair.ToolCallStream`, with no
parsing of its own. This is the only module of the stream layer that imports anyio.

Sources are recognised by what they offer, never by importing an SDK or an HTTP client:
a path, bytes, an HTTP response (anything with ``iter_bytes``/``aiter_bytes``, or whose
``http_response`` has them: ``httpx.Response``, ``httpx2.Response`` under the openai and
anthropic SDKs, their ``APIResponse``, ``AsyncAPIResponse`` and ``LegacyAPIResponse``;
whether its body is sync or async is read from its ``stream``), a binary file, or an
iterable of chunks or byte pieces (SDK streams and stream managers' streams).

When the source raises (an SDK raising on an in-band error, a dropped connection), the
core records it as a stream error and the driver yields what that ends (the
:class:`~streamrepair.StreamFailed`, every call rejected, :class:`~streamrepair.Done`)
before it raises the exception: a consumer that did not build its own core still gets
the verdicts.

A recording's path or a whole body is read and fed :data:`READ_CHUNK_BYTES` at a time (a
recording through a :class:`~streamrepair.stream.recordings.RecordingReader`), so its
events come out as the bytes are read: a consumer that keeps no events needs memory for
one block and the calls' own state, whatever the size of the file. The events a block
gives are handed out one at a time, each let go of as it is yielded (the async driver
pops them from its queue): a delta's preview is kept on its event once read, so holding a
block's events would hold a snapshot per delta of the block.
"""

from __future__ import annotations

import collections
import io
import os
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from typing import IO, Any

import anyio

from ..events import StreamEvent
from .pipeline import ToolCallStream
from .recordings import RecordingReader

__all__ = ["READ_CHUNK_BYTES", "aiter_events", "iter_events"]

#: How many bytes the drivers read from a file at a time.
READ_CHUNK_BYTES = 64 * 1024


def _http_body(source: object) -> tuple[Any, bool | None] | None:
    """For an HTTP response object: (what to read the body from, whether the body is
    async; None when the object does not say). None for anything else."""
    if isinstance(source, Mapping | io.IOBase | str | bytes | bytearray | memoryview):
        return None
    target: Any = source
    if not callable(getattr(target, "iter_bytes", None)):
        target = getattr(source, "http_response", None)  # openai's LegacyAPIResponse
        if target is None or not callable(getattr(target, "iter_bytes", None)):
            return None
    stream = getattr(target, "stream", None)  # httpx: the body's byte stream
    if stream is None or callable(stream):
        return target, None
    if hasattr(stream, "__aiter__") and not hasattr(stream, "__iter__"):
        return target, True
    return target, False


def _source_failure(exc: BaseException) -> dict[str, Any]:
    """What an exception from the source says, read from the attributes the SDKs give
    their errors (openai ``APIError``: ``message``, ``code``, ``type``, ``body``;
    anthropic ``APIStatusError``: ``api_message``, ``type``, ``body``; google-genai
    ``APIError``: ``message``, ``code``, ``status``, ``details``; botocore
    ``EventStreamError``: ``response["Error"]``), without importing any of them."""
    message = getattr(exc, "api_message", None) or getattr(exc, "message", None)
    error_type = getattr(exc, "type", None) or getattr(exc, "status", None)
    code = getattr(exc, "code", None)
    body = getattr(exc, "body", None)
    if body is None:
        body = getattr(exc, "details", None)
    response = getattr(exc, "response", None)
    if isinstance(response, Mapping) and isinstance(response.get("Error"), Mapping):
        error = response["Error"]  # botocore
        message = message or error.get("Message")
        code = code or error.get("Code")
        error_type = error_type or error.get("Code")
    raw: dict[str, Any] = {"exception": type(exc).__name__}
    if code is not None:
        raw["code"] = code if isinstance(code, str | int) else str(code)
    if body is not None:
        raw["body"] = body
    text = f"{type(exc).__name__}: {message}" if isinstance(message, str) and message else None
    return {
        "message": text or repr(exc),
        "code": "source_error",
        "error_type": error_type if isinstance(error_type, str) and error_type else None,
        "raw": raw,
    }


def _recording(handle: IO[bytes], name: str) -> Iterator[bytes | Mapping[str, Any]]:
    """The pieces of the recording open as ``handle``, a block at a time."""
    reader = RecordingReader(name=name)
    while block := handle.read(READ_CHUNK_BYTES):
        yield from reader.feed(block)
    yield from reader.finish()


async def _arecording(
    handle: anyio.AsyncFile[bytes], name: str
) -> AsyncIterator[bytes | Mapping[str, Any]]:
    """:func:`_recording` with anyio's file reads."""
    reader = RecordingReader(name=name)
    while block := await handle.read(READ_CHUNK_BYTES):
        for piece in reader.feed(block):
            yield piece
    for piece in reader.finish():
        yield piece


def _blocks(data: bytes | bytearray | memoryview) -> Iterator[bytes]:
    """A whole body in blocks, so that its events come out a block at a time."""
    view = memoryview(data)
    try:
        for start in range(0, len(view), READ_CHUNK_BYTES):
            yield bytes(view[start : start + READ_CHUNK_BYTES])
    finally:
        view.release()


def _one_at_a_time(events: list[StreamEvent]) -> Iterator[StreamEvent]:
    """``events`` in order, each dropped from the list before it is yielded, so that the
    driver holds none of the events it has handed out (module docstring)."""
    events.reverse()
    while events:
        yield events.pop()


def _open(
    source: object,
) -> tuple[Iterable[object] | AsyncIterable[object], object | None, bool]:
    """(items, what to close afterwards, whether we opened it)."""
    if isinstance(source, str | os.PathLike):
        handle = open(source, "rb")  # noqa: SIM115 - closed by the driver
        return _recording(handle, os.fspath(source)), handle, True
    if isinstance(source, bytes | bytearray | memoryview):
        return _blocks(source), None, True
    body = _http_body(source)
    if body is not None:
        target, is_async = body
        items = None if is_async else target.iter_bytes()
        if items is None or not isinstance(items, Iterable):
            raise TypeError(f"{type(source).__name__} has an async body; use aiter_events() for it")
        return items, target, False
    if isinstance(source, io.IOBase) or (
        hasattr(source, "read") and not hasattr(source, "__iter__")
    ):
        read = source.read
        return iter(lambda: read(READ_CHUNK_BYTES), b""), None, False
    if isinstance(source, Iterable | AsyncIterable):
        return source, None if _managed(source) else source, False
    raise TypeError(f"cannot read events from a {type(source).__name__}")


def _managed(source: object) -> bool:
    """A stream manager's stream (openai ``ChatCompletionStream``, ``ResponseStream``,
    anthropic ``MessageStream``): its ``with`` block closes it, and its ``until_done()``
    and ``get_final_*()`` read the rest of the body after the end marker, so the drivers
    leave it open."""
    return callable(getattr(source, "until_done", None))


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

    ``source`` is an SDK stream object (``openai.Stream``, ``anthropic.Stream``, the
    streams of the stream managers: ``ChatCompletionStream``, ``ResponseStream``,
    ``MessageStream``), an HTTP response (``httpx``/``httpx2`` ``Response``, the SDKs'
    ``APIResponse`` and ``LegacyAPIResponse``), an iterable of chunk dicts or of raw byte
    pieces, a binary file object, ``bytes`` of a whole body, or the path of a recording
    (``.sse``, JSON lines, ``.txtar``, ``.eventstream``). ``options`` are those of
    :class:`ToolCallStream` (``provider``, ``tools``, ``choice``, ``previews``, bounds);
    pass ``core`` to use (and later inspect) your own core.

    The generator stops reading at the end marker and closes the source it iterated
    (``close()``), except a stream manager's stream, which its ``with`` block closes
    (so that ``get_final_completion()`` / ``get_final_message()`` can still read the
    rest). If the consumer stops early (``break``, ``close()``), calls not yet judged end
    as ``aborted`` in ``core``. An exception from the source is recorded as a
    stream error (a :class:`~streamrepair.StreamFailed` with code ``source_error`` and
    what the SDK's error says); the events that ends (every call rejected, ``Done``) are
    yielded, then the exception propagates.
    """
    stream = core if core is not None else ToolCallStream(**options)
    items, resource, _ = _open(source)
    if not isinstance(items, Iterable):
        raise TypeError("iter_events() needs a sync source; use aiter_events() for async ones")
    try:
        try:
            for item in items:
                yield from _one_at_a_time(stream.feed(item))
                if stream.done is not None:
                    break
        except Exception as exc:
            if stream.done is None:
                yield from _one_at_a_time(stream.fail(**_source_failure(exc)))
            raise
        if stream.done is None:
            yield from _one_at_a_time(stream.finish())
    finally:
        if stream.done is None:
            stream.abort()
        _close_sync(resource)


class aiter_events:  # named like a function: `async for e in aiter_events(src)`
    """Events of a stream, asynchronously (asyncio or trio, through anyio).

    ``source`` is an async SDK stream (``openai.AsyncStream``, ``anthropic.AsyncStream``,
    the async streams of the stream managers), an async HTTP response (``httpx``'s,
    ``httpx2``'s, the SDKs' ``AsyncAPIResponse``), an async iterable of chunks or byte
    pieces, anything :func:`iter_events` accepts, or the path of a recording (read with
    anyio). An exception from the source is handled as in :func:`iter_events`: the
    events it ends are yielded before it is raised. Use as ``async for event in
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
        self._sync_close = False  # the resource is closed with close(), never aclose()
        self._leave_open = False  # a stream manager's stream: its ``with`` block closes it
        self._queue: collections.deque[StreamEvent] = collections.deque()
        self._finished = False
        self._pending: BaseException | None = None  # raised once the queue is drained

    def __aiter__(self) -> aiter_events:
        return self

    async def __aenter__(self) -> aiter_events:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def __anext__(self) -> StreamEvent:
        while not self._queue:
            if self._pending is not None:
                pending, self._pending = self._pending, None
                raise pending
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
                    self._queue.extend(self.core.fail(**_source_failure(exc)))
                await self.aclose()
                if not self._queue:
                    raise
                self._pending = exc
                continue
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
            handle = await anyio.open_file(source, "rb")
            self._resource = handle
            self._items = _arecording(handle, os.fspath(source))
            return
        body = _http_body(source)
        if body is not None:
            target, is_async = body
            read = target.aiter_bytes if is_async else target.iter_bytes
            items = read()
            self._resource = target
            if isinstance(items, AsyncIterable):
                self._items = aiter(items)
            else:
                self._sync_close = True
                self._items = iter(items)
            return
        if isinstance(source, AsyncIterable):
            self._leave_open = _managed(source)
            self._resource = None if self._leave_open else source
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
            if not self._leave_open and items is not resource and isinstance(items, AsyncIterator):
                closer = getattr(items, "aclose", None)
                if callable(closer):
                    await closer()
            aclose = None if self._sync_close else getattr(resource, "aclose", None)
            if callable(aclose):
                await aclose()
            else:
                close = getattr(resource, "close", None)
                if callable(close):
                    result = close()
                    if hasattr(result, "__await__"):
                        await result
