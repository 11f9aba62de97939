"""The proxy's ASGI front: its paths, its lifespan, and what the proxy guarantees around
every request it forwards (issue 22). The request handler itself is ``app.py``'s.

Theory of operation
-------------------
:class:`ServiceApp` is the one ASGI callable the server runs. ``GET /healthz`` and
``GET /metrics`` are the proxy's own; every other request goes to the handler. There is
no router and no middleware between the server and a stream: each relayed piece is one
``send`` to the server (:class:`StreamBody`), which is what a paced stream, one event
per write, pays for on every event.

Around each forwarded request:

* **The client leaving, at any point.** Once the request's body has been read, a
  watcher waits for the server's ``http.disconnect``. When it comes before the response
  is complete, the request is cancelled, whatever it was waiting on: the upstream's
  answer head, a store lookup, the next piece of a stream, a non-streamed body. The
  upstream connection is closed on the way out (the stream's ``finally``, and
  ``upstream.py``'s ``aclose`` before the end of a body), so the upstream sees it leave
  within milliseconds, before or after the head, streaming or not.
* **Limits, refused at once** (``limits.py``): a request past ``open_files`` (requests
  at once under the open-file limit), past ``request_bytes_in_flight`` (its declared
  ``Content-Length``, then its bytes as they come) or past ``upstream_connections``
  (``upstream.py``) is answered ``503`` with ``Retry-After``, the limit named in the
  API's error body and in ``x-streamrepair-limit``; nothing went upstream. A request's
  bytes count as they are read, until its handler has built the answer (the body,
  parsed and fixed, is no longer held by then); one whose declared length would not fit
  is refused before any is read.
* **A pass-through body the upstream cut short** ends without its last chunk (its
  iterator raises :class:`~streamrepair.errors.UpstreamBroken`): the server closes the
  connection, and the client sees a truncated body, never a clean end.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any, Final, Protocol

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from ..errors import ServiceLimitError, UpstreamBroken
from ._api import openai_error
from ._table import api_for
from .limits import ADMITTED, CLIENT_CONNECTIONS, Limits, raise_open_file_limit, split_files

if TYPE_CHECKING:
    from .metrics import ProxyMetrics
    from .workers import MetricsShare

__all__ = ["LIMIT_HEADER", "RequestHandler", "ServiceApp", "StreamBody", "refusal"]

#: Response header naming the limit a 503 refused a request for.
LIMIT_HEADER: Final = "x-streamrepair-limit"
_Scope = MutableMapping[str, Any]
_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]


class RequestHandler(Protocol):
    """What :class:`ServiceApp` asks of the request handler (``app.py``'s)."""

    metrics: ProxyMetrics

    def lifespan(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Open the upstream client (and close it and the store at the end)."""
        ...

    async def handle(self, request: Request) -> Response:
        """The answer to a forwarded request (raises ``ServiceLimitError``)."""
        ...

    async def healthz(self, request: Request) -> Response:
        """``GET /healthz``."""
        ...

    def authorized(self, request: Request) -> Response | None:
        """None when the request may see the proxy's own pages, else the 401."""
        ...

    def log_answer(self, response: Response, info: dict[str, Any], started: float) -> None:
        """Count ``response`` and write its access-log line (``info``: its fields)."""
        ...


class StreamBody(Response):
    """A response whose body is an async iterator of bytes, each piece sent as it comes,
    straight to the server. Unlike Starlette's ``StreamingResponse`` it starts no task of
    its own to watch for the client leaving (:class:`ServiceApp` watches for the whole
    request), and an iterator that raises :class:`~streamrepair.errors.UpstreamBroken`
    (after its last piece: the upstream cut the body short) leaves the response
    unfinished. ``close`` is awaited when the response is abandoned before its iterator
    ran (so that the upstream answer it reads is closed all the same)."""

    def __init__(
        self,
        body: AsyncIterator[bytes],
        status_code: int,
        *,
        close: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.body_iterator = body
        self.status_code = status_code
        self.media_type = None
        self.background = None
        self.init_headers(None)
        self._close = close

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        iterating = False
        head = {"type": "http.response.start", "status": self.status_code}
        try:
            await send({**head, "headers": self.raw_headers})
            iterating = True  # from here the iterator's own finally closes the answer
            async for piece in self.body_iterator:
                await send({"type": "http.response.body", "body": piece, "more_body": True})
        except UpstreamBroken:
            return  # no last chunk: the server closes the connection
        finally:
            if not iterating and self._close is not None:
                await self._close()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def refusal(error: ServiceLimitError, path: str, method: str) -> Response:
    """The 503 for a request refused for ``error``'s limit, in the API's error shape;
    refused for descriptors, its connection is closed after it (giving one back)."""
    api = api_for(method, path)
    body = (api.error_body if api is not None else openai_error)(
        503, str(error), "overloaded_error"
    )
    headers = {"retry-after": str(error.retry_after), LIMIT_HEADER: error.limit}
    if error.limit == "open_files":
        headers["connection"] = "close"
    return JSONResponse(body, status_code=503, headers=headers)


class ServiceApp:
    """The proxy as the server sees it (module docstring). ``proxy`` is the request
    handler (``app.py``), ``limits`` its limits, ``body_limit`` the largest request body
    it reads; ``share`` (several workers) publishes this worker's counters and reads the
    others' for ``/metrics`` (``workers.py``)."""

    def __init__(
        self,
        proxy: RequestHandler,
        limits: Limits,
        *,
        body_limit: int,
        share: MetricsShare | None = None,
    ) -> None:
        self.proxy = proxy
        self.limits = limits
        self.body_limit = body_limit  # the handler answers a larger body 413
        self.share = share

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        kind = scope["type"]
        if kind == "http":
            path = scope["path"]
            if scope["method"] == "GET" and path in ("/healthz", "/metrics"):
                request = Request(scope, receive)
                if path == "/healthz":
                    response = await self.proxy.healthz(request)
                else:
                    response = await self._metrics(request)
                await response(scope, receive, send)
                return
            await self._forward(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    # -- the lifespan ----------------------------------------------------------------------

    async def _lifespan(self, receive: _Receive, send: _Send) -> None:
        stack = contextlib.AsyncExitStack()
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    self._size_for_files()
                    await stack.enter_async_context(self.proxy.lifespan())
                    if self.share is not None:
                        await stack.enter_async_context(self.share.publishing(self.render))
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                try:
                    await stack.aclose()
                except Exception as exc:
                    await send({"type": "lifespan.shutdown.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _size_for_files(self) -> None:
        """The pool and the client connections (``open_files``) sized for the soft
        open-file limit as it is now (``streamrepair serve`` raised it to the hard limit
        before this)."""
        limit = raise_open_file_limit()
        pool = self.limits.upstream_connections
        pool.capacity, clients = split_files(limit.soft, pool.capacity)
        self.limits.open_files.capacity = CLIENT_CONNECTIONS.capacity = clients

    # -- /metrics --------------------------------------------------------------------------

    def render(self) -> str:
        """This process's ``/metrics`` page: the handler's counters and the limits."""
        lines = [self.proxy.metrics.render().rstrip("\n")]
        for name, kind, text in (
            ("streamrepair_proxy_limit_capacity", "gauge", "Each service limit's size"),
            ("streamrepair_proxy_limit_in_use", "gauge", "How much of each limit is in use"),
            ("streamrepair_proxy_refusals_total", "counter", "Requests refused (503), by limit"),
        ):
            lines.append(f"# HELP {name} {text}")
            lines.append(f"# TYPE {name} {kind}")
            for limit in self.limits:
                value = {
                    "streamrepair_proxy_limit_capacity": limit.capacity,
                    "streamrepair_proxy_limit_in_use": limit.in_use,
                    "streamrepair_proxy_refusals_total": limit.refused,
                }[name]
                lines.append(f'{name}{{limit="{limit.name}"}} {value}')
        return "\n".join(lines) + "\n"

    async def _metrics(self, request: Request) -> Response:
        refused = self.proxy.authorized(request)
        if refused is not None:
            return refused
        text = self.render() if self.share is None else self.share.merged(self.render())
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4")

    # -- a forwarded request ---------------------------------------------------------------

    async def _forward(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        limits = self.limits
        started = time.perf_counter()
        held = 0  # bytes of request_bytes_in_flight this request holds
        read = 0
        body_done = False
        left = asyncio.Event()
        watcher: asyncio.Task[None] | None = None
        cancel = anyio.CancelScope()
        files = limits.open_files
        try:
            if scope.get("extensions", {}).get(ADMITTED) is False:
                raise files.refusal()  # a connection past the descriptors' share
            files.take()  # requests in flight (the limit itself under another server)
        except ServiceLimitError as exc:
            await self._refuse(scope, send, exc, started)
            return
        try:
            declared = _content_length(scope)
            budget = limits.request_bytes_in_flight
            if 0 < declared <= self.body_limit and budget.in_use + declared > budget.capacity:
                # refused before a byte is read; a larger body is the handler's 413. Not
                # taken yet: a body that never comes must not hold what it announced.
                raise budget.refusal()

            async def watch() -> None:
                message = await receive()
                if message["type"] == "http.disconnect":
                    left.set()
                    cancel.cancel()

            async def guarded() -> _Message:
                nonlocal held, read, body_done, watcher
                if body_done:  # asked again after the body: only a disconnect can come
                    await left.wait()
                    return {"type": "http.disconnect"}
                message = await receive()
                if message["type"] == "http.request":
                    read += len(message.get("body", b""))
                    if read > held:
                        limits.request_bytes_in_flight.take(read - held)
                        held = read
                    if not message.get("more_body", False):
                        body_done = True
                        watcher = asyncio.get_running_loop().create_task(watch())
                else:
                    body_done = True
                    left.set()
                return message

            response: Response | None = None
            with cancel:
                try:
                    response = await self.proxy.handle(Request(scope, guarded))
                except ServiceLimitError as exc:
                    await self._refuse(scope, send, exc, started)
                    return
                limits.request_bytes_in_flight.give(held)  # parsed and fixed: not held now
                held = 0
                await response(scope, guarded, send)
            if cancel.cancelled_caught and response is None:
                self._left_early(scope, started)
        except ServiceLimitError as exc:
            await self._refuse(scope, send, exc, started)
        finally:
            if watcher is not None:
                watcher.cancel()
            limits.request_bytes_in_flight.give(held)
            limits.open_files.give()

    async def _refuse(
        self, scope: _Scope, send: _Send, error: ServiceLimitError, started: float
    ) -> None:
        response = refusal(error, scope["path"], scope["method"])
        self.proxy.log_answer(response, {**_info(scope), "refused": error.limit}, started)
        await response(scope, _no_receive, send)

    def _left_early(self, scope: _Scope, started: float) -> None:
        """The client left before the answer's head: counted, logged as 499."""
        self.proxy.metrics.add("streamrepair_proxy_client_disconnects_total")
        info = {**_info(scope), "client_disconnected": True}
        self.proxy.log_answer(Response(status_code=499), info, started)


def _info(scope: _Scope) -> dict[str, Any]:
    """The access log's first fields for a request."""
    api = api_for(scope["method"], scope["path"])
    return {
        "method": scope["method"],
        "path": scope["path"],
        "protocol": api.protocol.value if api is not None else None,
    }


async def _no_receive() -> _Message:
    return {"type": "http.disconnect"}


def _content_length(scope: _Scope) -> int:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else 0
    return 0
