"""The drivers: :func:`iter_events` (sync) and :func:`aiter_events` (asyncio and trio).

Each is read -> feed -> drain around one :class:`~streamrepair.ToolCallStream`, with no
parsing of its own. This is the only module of the stream layer that imports anyio.
"""

from __future__ import annotations

import collections
import io
import os
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

import anyio

from ..events import StreamEvent
from .pipeline import ToolCallStream
from .recordings import load_recording

__all__ = ["READ_CHUNK_BYTES", "aiter_events", "iter_events"]

#: How many bytes the drivers read from a file at a time.
READ_CHUNK_BYTES = 64 * 1024


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
