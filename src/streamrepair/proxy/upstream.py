"""The proxy's HTTP client toward the upstream: one pooled session per process.

Theory of operation
-------------------
:class:`UpstreamClient` sends one request (method, URL, headers, body bytes) and returns
an :class:`UpstreamResponse` as soon as the status line and headers came; its body is
read with :meth:`UpstreamResponse.body`, which yields bytes as they arrive (and, with
``decode=True``, undoes a ``gzip``/``deflate`` content encoding). Errors are the proxy's
own: :class:`UpstreamTimeout` and :class:`UpstreamUnreachable` before the answer,
:class:`UpstreamBroken` while the body streams. The app (``app.py``) knows nothing of the
library underneath.

Two implementations:

* :class:`AiohttpUpstream` (the default): aiohttp parses HTTP in C (llhttp) and hands
  over everything the socket buffered at once, so events that arrived together are
  relayed in one write. Measured against httpx on loopback (``docs/performance.md``):
  less than half the proxy's CPU time per relayed event and 0.6 ms less added time to
  first byte.
* :class:`HttpxUpstream`: httpx's ``AsyncClient``, used when the caller passes an
  ``httpx`` transport to :func:`~.app.create_app` (tests, custom transports).

Both take a slot of the pool (:class:`~.limits.Limits` ``upstream_connections``) before a
request goes out and give it back when the answer is closed: a request that finds every
slot taken is refused at once (:class:`~streamrepair.errors.ServiceLimitError`, a 503),
never queued until the connect timeout (issue 22: 520 requests whose clients had left
held all 512 connections, and the next one got a 504 after 10.8 s). A connection that
cannot be opened because the process is out of descriptors is refused the same way
(``open_files``), not reported as an unreachable upstream. :meth:`UpstreamResponse.aclose`
before the body's end closes the connection, which the upstream sees at once.

Both pass requests through as the client sent them: nothing is added that the client did
not send (no default ``User-Agent``, ``Accept`` or ``Accept-Encoding``), the URL is sent
as written (no requoting), redirects are not followed, bodies are not decompressed on a
pass-through, and no cookie is ever kept: one session serves every client of the proxy,
and a ``Set-Cookie`` one client's request received must never ride along another's.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from ..errors import UpstreamBroken, UpstreamTimeout, UpstreamUnreachable
from .limits import Limits, is_out_of_files

if TYPE_CHECKING:
    import aiohttp
    import httpx

__all__ = [
    "DECODABLE_ENCODINGS",
    "AiohttpUpstream",
    "HttpxUpstream",
    "UpstreamClient",
    "UpstreamResponse",
]

#: Content encodings :meth:`UpstreamResponse.body` can undo (``decode=True``).
DECODABLE_ENCODINGS: Final = frozenset({"", "identity", "gzip", "x-gzip", "deflate"})
#: Longest response header line accepted from the upstream (aiohttp's default is 8 KiB).
_MAX_HEADER_BYTES: Final = 64 * 1024


class UpstreamResponse(Protocol):
    """An upstream's answer whose body is still to be read."""

    @property
    def status(self) -> int:
        """The status code."""
        ...

    @property
    def headers(self) -> list[tuple[str, str]]:
        """Every header as received, in order, repeated names kept."""
        ...

    def header(self, name: str) -> str:
        """The first value of header ``name`` (any case), or ``""``."""
        ...

    def body(self, *, decode: bool = False) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive (``decode``: with a ``gzip`` or ``deflate``
        content encoding undone). Raises :class:`UpstreamBroken`."""
        ...

    async def aclose(self) -> None:
        """Done with it: the connection goes back to the pool when the body was read to
        its end, and is closed otherwise (which the upstream sees as a disconnect)."""
        ...


class UpstreamClient(Protocol):
    """Sends requests to the upstream over pooled connections."""

    async def send(
        self, method: str, url: str, headers: Sequence[tuple[str, str]], body: bytes
    ) -> UpstreamResponse:
        """Send a request; return once the answer's head came. Raises
        :class:`UpstreamTimeout` or :class:`UpstreamUnreachable`."""
        ...

    async def aclose(self) -> None:
        """Close every pooled connection."""
        ...


def _decoder(encoding: str) -> Any:
    """A zlib decompressor for ``encoding`` (``gzip``/``deflate``), or None."""
    encoding = encoding.strip().lower()
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    return None


# -- aiohttp ----------------------------------------------------------------------------------


class _Slot:
    """A slot of the pool, given back once."""

    __slots__ = ("_limits",)

    def __init__(self, limits: Limits) -> None:
        limits.upstream_connections.take()
        self._limits: Limits | None = limits

    def give(self) -> None:
        limits, self._limits = self._limits, None
        if limits is not None:
            limits.upstream_connections.give()


class _AiohttpResponse:
    __slots__ = ("_done", "_response", "_slot", "headers", "status")

    def __init__(self, response: aiohttp.ClientResponse, slot: _Slot) -> None:
        self._response = response
        self._slot = slot
        self.status: int = response.status
        self.headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.raw_headers]
        self._done = False

    def header(self, name: str) -> str:
        value = self._response.headers.get(name)
        return value if isinstance(value, str) else ""

    async def body(self, *, decode: bool = False) -> AsyncIterator[bytes]:

        import aiohttp

        decoder = _decoder(self.header("content-encoding")) if decode else None
        read = self._response.content.readany  # what the socket buffered, at once
        try:
            while data := await read():
                if decoder is not None:
                    data = decoder.decompress(data)
                    if not data:
                        continue
                yield data
            if decoder is not None:
                rest = decoder.flush()
                if rest:
                    yield rest
        except (TimeoutError, aiohttp.ClientError, OSError, zlib.error) as exc:
            raise UpstreamBroken(type(exc).__name__) from exc
        self._done = True

    async def aclose(self) -> None:
        try:
            if self._done and self._response.content.at_eof():
                self._response.release()
            else:
                self._response.close()
        finally:
            self._slot.give()


class AiohttpUpstream:
    """:class:`UpstreamClient` on an ``aiohttp.ClientSession`` (module docstring). Make it
    inside the running event loop (the app's lifespan does)."""

    def __init__(
        self,
        *,
        connect_timeout: float,
        read_timeout: float,
        limits: Limits,
    ) -> None:
        import aiohttp

        self._limits = limits
        pool = limits.upstream_connections.capacity
        connector = aiohttp.TCPConnector(limit=pool, limit_per_host=0)
        timeout = aiohttp.ClientTimeout(
            total=None,
            connect=connect_timeout,  # a free pooled connection, or a new one
            sock_connect=connect_timeout,
            sock_read=read_timeout,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=timeout,
            auto_decompress=False,  # pass-through bodies go out as they came
            cookie_jar=aiohttp.DummyCookieJar(),  # never keep a cookie between clients
            trust_env=False,
            max_line_size=_MAX_HEADER_BYTES,
            max_field_size=_MAX_HEADER_BYTES,
        )

    async def send(
        self, method: str, url: str, headers: Sequence[tuple[str, str]], body: bytes
    ) -> UpstreamResponse:

        import aiohttp
        from yarl import URL

        slot = _Slot(self._limits)  # ServiceLimitError when the pool is full
        try:
            response = await self._session.request(
                method,
                URL(url, encoded=True),
                data=body if body or method not in ("GET", "HEAD") else None,
                headers=list(headers),
                skip_auto_headers=("Accept", "Accept-Encoding", "User-Agent", "Content-Type"),
                allow_redirects=False,
                compress=None,
            )
        except BaseException as exc:  # failed, or cancelled: the client left before the head
            slot.give()
            if isinstance(exc, TimeoutError | aiohttp.ServerTimeoutError):
                raise UpstreamTimeout(type(exc).__name__) from exc
            if isinstance(exc, aiohttp.ClientError | OSError | ValueError):
                if is_out_of_files(exc):
                    raise self._limits.open_files.refusal() from exc
                raise UpstreamUnreachable(type(exc).__name__) from exc
            raise
        return _AiohttpResponse(response, slot)

    async def aclose(self) -> None:
        await self._session.close()


# -- httpx ------------------------------------------------------------------------------------


class _HttpxResponse:
    __slots__ = ("_done", "_response", "_slot", "headers", "status")

    def __init__(self, response: httpx.Response, slot: _Slot) -> None:
        self._response = response
        self._slot = slot
        self.status: int = response.status_code
        self.headers = list(response.headers.multi_items())
        self._done = False

    def header(self, name: str) -> str:
        value = self._response.headers.get(name)
        return value if isinstance(value, str) else ""

    async def body(self, *, decode: bool = False) -> AsyncIterator[bytes]:
        import httpx

        pieces = self._response.aiter_bytes() if decode else self._response.aiter_raw()
        try:
            async for data in pieces:
                yield data
        except httpx.HTTPError as exc:
            raise UpstreamBroken(type(exc).__name__) from exc
        self._done = True

    async def aclose(self) -> None:
        try:
            await self._response.aclose()
        finally:
            self._slot.give()


class HttpxUpstream:
    """:class:`UpstreamClient` on an ``httpx.AsyncClient`` with the given ``transport``
    (module docstring)."""

    def __init__(
        self,
        *,
        connect_timeout: float,
        read_timeout: float,
        limits: Limits,
        keepalive_connections: int = 100,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        import http.cookiejar

        import httpx

        self._limits = limits
        pool = limits.upstream_connections.capacity
        pool_limits = httpx.Limits(
            max_connections=pool,
            max_keepalive_connections=min(keepalive_connections, pool),
        )
        timeout = httpx.Timeout(
            connect=connect_timeout, read=read_timeout, write=read_timeout, pool=connect_timeout
        )
        # A jar that accepts no cookie: one client serves every client of the proxy.
        jar = http.cookiejar.CookieJar(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
        self._client = httpx.AsyncClient(
            limits=pool_limits, timeout=timeout, transport=transport, trust_env=False, cookies=jar
        )

    async def send(
        self, method: str, url: str, headers: Sequence[tuple[str, str]], body: bytes
    ) -> UpstreamResponse:
        import httpx

        request = self._client.build_request(method, url, headers=list(headers), content=body)
        for name in ("accept", "accept-encoding", "user-agent", "connection"):
            if not any(k.lower() == name for k, _ in headers):  # added by httpx, not sent
                request.headers.pop(name, None)
        slot = _Slot(self._limits)
        try:
            response = await self._client.send(request, stream=True)
        except BaseException as exc:
            slot.give()
            if isinstance(exc, httpx.TimeoutException):
                raise UpstreamTimeout(type(exc).__name__) from exc
            if isinstance(exc, httpx.HTTPError | OSError):
                if is_out_of_files(exc):
                    raise self._limits.open_files.refusal() from exc
                raise UpstreamUnreachable(type(exc).__name__) from exc
            raise
        return _HttpxResponse(response, slot)

    async def aclose(self) -> None:
        await self._client.aclose()
