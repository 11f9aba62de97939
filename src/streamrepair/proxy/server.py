"""Running the proxy: uvicorn with bounded request heads, on one port, in one process or
several (``streamrepair serve --workers N``).

Theory of operation
-------------------
:func:`serve` raises the soft open-file limit to the hard one (and says so), imports
everything a request could import later (an import that needs a descriptor when none is
left failed with ``EMFILE`` mid-request in issue 22), binds the listening socket, and
runs uvicorn on it: in this process for one worker, else in ``workers`` forked
processes that all accept on that one socket (``workers.py`` supervises them). Each
worker builds its own app (``make_app``: its own event loop, upstream pool, store
connection) after the fork, so the workers share nothing but the socket, the store and
the metrics directory.

uvicorn's HTTP/1.1 parser (httptools) reads a request's head without bound, for as long
as the client takes: a 100 MB header was read for 110 s and kept, and 3,000 connections
sending a byte now and then stayed open. :class:`GuardedHttpTools` bounds both: at most
``max_header_bytes`` of head (then ``431`` and the connection closed) and
``header_timeout`` seconds from a connection's start, or from the first byte of a later
request on it, to the end of the head (then the connection is closed, with a ``408``
when a request had begun). Bodies are the app's (``max_request_bytes``,
``request_bytes_in_flight``).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import os
import pkgutil
import socket
import sys
import warnings
from collections.abc import Callable
from typing import Any, Final

from .limits import ADMITTED, CLIENT_CONNECTIONS, OpenFileLimit, raise_open_file_limit

__all__ = ["BACKLOG", "bind", "default_workers", "guarded_protocol", "preload", "serve"]

_LOGGER = logging.getLogger("streamrepair.proxy")
#: Connections the listening socket queues before the workers accept them.
BACKLOG: Final = 4096


def default_workers() -> int:
    """The machine's cores this process may run on (``--workers``' default)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


#: Packages imported whole at start, lazy names and all: ours, and anyio, which imports
#: even ``CancelScope`` on first use. (What the app needs of Starlette, aiohttp and
#: uvicorn is imported when it is made.)
_PRELOADED: Final = ("streamrepair", "anyio")
#: Parts of those packages never imported for a request.
_SKIPPED: Final = ("__main__", "test", "trio")


def preload() -> None:
    """Import every module a request could import later, now: the package's own and
    those of the libraries a request runs through, and their lazily imported names
    (anyio imports ``CancelScope`` on first use). Without descriptors to spare, a late
    import failed with ``EMFILE`` mid-request (issue 22). Absent optional parts are
    skipped."""
    for name in _PRELOADED:
        try:
            package = importlib.import_module(name)
        except ImportError:
            continue
        for attribute in dir(package):  # a package's lazy names
            with contextlib.suppress(Exception):
                getattr(package, attribute)
        for module in pkgutil.walk_packages(getattr(package, "__path__", []), f"{name}."):
            last = module.name.rsplit(".", 1)[-1]
            if any(word in last for word in _SKIPPED):  # anyio's pytest plugin, trio
                continue
            with contextlib.suppress(Exception), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                importlib.import_module(module.name)


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (``SO_REUSEADDR``), inheritable by the
    workers. ``OSError`` when it cannot be bound."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
        sock.set_inheritable(True)
    except OSError:
        sock.close()
        raise
    return sock


def guarded_protocol(max_header_bytes: int, header_timeout: float) -> type[Any]:
    """uvicorn's httptools protocol with the head bounded (module docstring): pass it
    as ``uvicorn.Config(http=...)``."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class GuardedHttpTools(HttpToolsProtocol):
        """:class:`HttpToolsProtocol` reading at most ``max_header_bytes`` of a request's
        head, within ``header_timeout`` seconds."""

        _admitted = True
        _head_bytes = 0
        _in_head = True
        _began = False
        _timer: asyncio.TimerHandle | None = None
        _tail = b""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._admitted = CLIENT_CONNECTIONS.admit()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            CLIENT_CONNECTIONS.release(self._admitted)
            self._disarm()
            super().connection_lost(exc)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            scope: dict[str, Any] = self.scope  # type: ignore[assignment]
            scope["extensions"] = {ADMITTED: self._admitted}

        def data_received(self, data: bytes) -> None:
            if self._in_head:
                if self._timer is None:
                    self._arm()  # the first byte of a later request on this connection
                self._began = True
                seen = self._tail + data
                end = seen.find(b"\r\n\r\n")
                counted = len(data) if end < 0 else end + 4 - len(self._tail)
                self._head_bytes += max(0, counted)
                self._tail = seen[-3:]
                if self._head_bytes > max_header_bytes:
                    self._refuse(431, "Request Header Fields Too Large", "request head too large")
                    return
            super().data_received(data)

        def on_headers_complete(self) -> None:
            self._disarm()
            self._in_head = False
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._in_head = True  # what comes next is the next request's head
            self._began = False
            self._head_bytes = 0
            self._tail = b""

        def _arm(self) -> None:
            self._disarm()
            self._timer = self.loop.call_later(header_timeout, self._head_timed_out)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _head_timed_out(self) -> None:
            self._timer = None
            if self.transport.is_closing() or not self._in_head:
                return
            if self._began:
                self._refuse(408, "Request Timeout", "request head not sent in time")
            else:
                self.transport.close()  # an idle connection that never sent a request

        def _refuse(self, status: int, reason: str, message: str) -> None:
            self._disarm()
            error = {"message": message, "type": "invalid_request_error", "code": status}
            body = json.dumps({"error": error}).encode()
            head = (
                f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
            ).encode()
            self.transport.write(head + body)
            self.transport.close()
            _REFUSED.note(message)

    return GuardedHttpTools


class _Refusals:
    """Counts the connections refused for their head, and logs them at most once a
    second (3,000 slowloris connections must not write 3,000 lines)."""

    def __init__(self) -> None:
        self.count = 0
        self._unlogged: dict[str, int] = {}
        self._logged_at = 0.0

    def note(self, message: str) -> None:
        import time

        self.count += 1
        self._unlogged[message] = self._unlogged.get(message, 0) + 1
        now = time.monotonic()
        if now - self._logged_at >= 1.0:
            self._logged_at = now
            said = "; ".join(f"{n} x {m}" for m, n in self._unlogged.items())
            _LOGGER.warning("streamrepair serve: connections closed: %s", said)
            self._unlogged.clear()


_REFUSED: Final = _Refusals()


def _quiet_accept_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Out of descriptors, asyncio logs every failed ``accept`` with a traceback: say it
    in one line instead (the connection waits in the backlog, or is closed by uvloop)."""
    default = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message", ""))
        if "accept" in message and "out of system resource" in message:
            _LOGGER.warning("streamrepair serve: out of descriptors: %s", context.get("exception"))
            return
        if default is not None:
            default(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


def _server_class() -> type[Any]:
    import uvicorn

    class QuietServer(uvicorn.Server):
        """uvicorn's server with :func:`_quiet_accept_errors` on its loop."""

        async def serve(self, sockets: list[socket.socket] | None = None) -> None:
            _quiet_accept_errors(asyncio.get_running_loop())
            await super().serve(sockets=sockets)

    return QuietServer


def serve(
    make_app: Callable[[], Any],
    *,
    host: str,
    port: int,
    workers: int,
    max_header_bytes: int,
    header_timeout: float,
    announce: Callable[[OpenFileLimit], None],
    on_death: Callable[[int], None] | None = None,
) -> int:
    """Serve ``make_app()`` (built in each worker) on ``host``:``port`` until
    interrupted; returns the exit code. ``announce`` is told the open-file limit once it
    has been raised (the caller prints the start line); ``on_death`` is told the pid of
    each worker that exits (several workers)."""
    import uvicorn

    limit = raise_open_file_limit()
    preload()
    try:
        sock = bind(host, port)
    except OSError as exc:
        print(f"streamrepair serve: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
        return 2
    announce(limit)
    try:
        protocol: Any = guarded_protocol(max_header_bytes, header_timeout)
        http_options: dict[str, Any] = {"http": protocol}
    except ImportError:  # no httptools (it is in the serve extra): h11 bounds the size only
        _LOGGER.warning(
            "streamrepair serve: httptools is not installed: request heads are bounded in "
            "size but not in time"
        )
        http_options = {"http": "h11", "h11_max_incomplete_event_size": max_header_bytes}
    _Server = _server_class()

    def run_one() -> None:
        config = uvicorn.Config(
            make_app(),
            access_log=False,  # ours has no query strings and no secrets
            log_level="warning",
            lifespan="on",
            **http_options,
            backlog=BACKLOG,
        )
        _Server(config).run(sockets=[sock])

    with sock:
        if workers <= 1:
            run_one()
            return 0
        from .workers import supervise

        return supervise(workers, run_one, on_death=on_death)
