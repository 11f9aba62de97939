"""The ASGI application: Starlette in front, one pooled upstream client behind
(``upstream.py``: aiohttp, or httpx when a transport is given).

Every request goes to ``upstream + path`` with its method, query, headers and body. The
requests of an API the proxy repairs are looked at (``POST``, JSON body; the table of
APIs, ``_table.py``, routes them: ``.../chat/completions``, ``.../messages`` but not
``count_tokens``, ``.../responses``):

* the request-side fixes of ``fixes.py`` (with the memos the store holds for the calls
  the history mentions);
* when ``stream`` is true and the upstream answers ``200`` with an event stream, the
  response goes through the API's :class:`~.relay.Relay`; when it is not and the
  upstream answers ``200`` with an uncompressed JSON body, the body is read whole and
  judged by the same relay (``whole.py``: sent byte for byte when nothing changes);
* everything else, error answers, compressed or non-JSON bodies and requests the API
  does not follow (Chat Completions with ``n > 1``) are passed through untouched:
  status, headers and body bytes as the upstream sent them.

The proxy's own paths: ``GET /healthz`` (liveness, and whether the store answers) and
``GET /metrics`` (Prometheus text). Its own optional bearer token (``token``) is checked
on every other path. Bounds: the request body (``max_request_bytes``, 413), each call's
argument text (``max_argument_chars``; a larger call is withheld), connect and read
timeouts toward the upstream (502/504 before the first byte; an error event after it).
A client that goes away closes the upstream stream at once. One JSON access-log line per
request (logger ``streamrepair.proxy``): method, path without query, status, sizes,
timings, model, what was repaired and fixed; never a header value or a body.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final

import anyio
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from ..errors import UpstreamBroken, UpstreamTimeout, UpstreamUnreachable
from ..providers.textcalls import TextCallFormat
from ..telemetry.record import shorten
from ._api import Api, openai_error
from ._forwarding import (
    ANSWER_DROPPED,
    Handling,
    forwarded_headers,
    handling,
    presented_token,
    raw_headers,
    slices,
    upstream_url,
)
from ._table import api_for
from .bodies import encode_json, off_loop, parse_json
from .config import STREAM_ARGUMENTS_HEADER, TEXT_CALLS_HEADER, ProxyConfig
from .fixes import FIXES_HEADER, RequestFixes, fix_request, referenced_calls
from .limits import Limits
from .memo import CallMemo
from .metrics import MAX_LABEL_CHARS, ProxyMetrics
from .relay import Relay
from .service import ServiceApp, StreamBody
from .store import (
    UNAVAILABLE_FIXES_HEADER,
    MemoryStore,
    StateStore,
    memo_key,
    unavailable_fixes,
)
from .tools import usable_tools, with_schemas
from .upstream import AiohttpUpstream, HttpxUpstream, UpstreamClient, UpstreamResponse
from .whole import judge_body, memos_of_response

if TYPE_CHECKING:
    import httpx

    from .workers import MetricsShare

__all__ = ["create_app"]

#: Seconds spent reading past an upstream's end marker to keep its connection pooled.
_DRAIN_SECONDS: Final = 0.5

_LOGGER = logging.getLogger("streamrepair.proxy")


def _error(api: Api | None, status: int, message: str, kind: str) -> JSONResponse:
    """The proxy's own error answer, in the API's shape."""
    body = (api.error_body if api is not None else openai_error)(status, message, kind)
    return JSONResponse(body, status_code=status)


class _Proxy:
    """The request handler and its shared state (client, store, metrics)."""

    def __init__(
        self,
        config: ProxyConfig,
        store: StateStore,
        transport: httpx.AsyncBaseTransport | None,
        limits: Limits,
    ) -> None:
        self.config = config
        self.store = store
        self.metrics = ProxyMetrics(store=store)
        self.transport = transport
        self.limits = limits
        self.client: UpstreamClient | None = None
        base = config.upstream.rstrip("/")
        self.base = base

    # -- lifecycle -------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        config = self.config
        client: UpstreamClient
        if self.transport is not None:
            client = HttpxUpstream(
                connect_timeout=config.connect_timeout,
                read_timeout=config.read_timeout,
                limits=self.limits,
                transport=self.transport,
            )
        else:
            client = AiohttpUpstream(
                connect_timeout=config.connect_timeout,
                read_timeout=config.read_timeout,
                limits=self.limits,
            )
        self.client = client
        # Connect the store now (Redis: its connection; the others answer at once), so
        # that the first request does not pay the connection within the store's short
        # deadline. A store that is down counts one failure here, and the proxy serves.
        await self.store.ping()
        try:
            yield
        finally:
            self.client = None
            await client.aclose()
            await self.store.close()

    # -- own endpoints ---------------------------------------------------------------------

    async def healthz(self, request: Request) -> Response:
        store_ok = await self.store.ping()
        body = {
            "status": "ok" if store_ok else "degraded",
            "store": "ok" if store_ok else "unavailable",
            "active_streams": self.metrics.active_streams,
            "worker": os.getpid(),  # which of several workers answered
        }
        return JSONResponse(body, status_code=200 if store_ok else 503)

    # -- auth ------------------------------------------------------------------------------

    def _authorized(self, request: Request) -> bool:
        token = self.config.token
        if token is None:
            return True
        presented, _ = presented_token(request)
        return presented is not None and hmac.compare_digest(presented.encode(), token.encode())

    def _unauthorized(self, api: Api | None) -> Response:
        return _error(api, 401, "missing or wrong proxy token", "authentication_error")

    def authorized(self, request: Request) -> Response | None:
        """None when ``request`` may see the proxy's own pages (``/metrics``), else the
        401 to answer it with."""
        return None if self._authorized(request) else self._unauthorized(None)

    # -- forwarding ------------------------------------------------------------------------

    @staticmethod
    def _credential(request: Request) -> str:
        return request.headers.get("x-api-key") or request.headers.get("authorization") or ""

    async def _read_body(self, request: Request) -> bytes | None:
        limit = self.config.max_request_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            return None
        parts: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                return None
            parts.append(chunk)
        return b"".join(parts)

    async def handle(self, request: Request) -> Response:
        started = time.perf_counter()
        api = api_for(request.method, request.url.path)
        info: dict[str, Any] = {
            "method": request.method,
            "path": request.url.path,
            "protocol": api.protocol.value if api is not None else None,
        }
        if not self._authorized(request):
            return self._finish_log(self._unauthorized(api), info, started)
        try:
            body = await self._read_body(request)
        except ClientDisconnect:
            return self._finish_log(Response(status_code=499), info, started)
        if body is None:
            message = f"request body larger than {self.config.max_request_bytes} bytes"
            response = _error(api, 413, message, "request_too_large")
            return self._finish_log(response, info, started)
        info["request_bytes"] = len(body)
        try:
            text_calls = self._text_calls(request)
            stream_arguments = self._stream_arguments(request)
        except ValueError as exc:
            response = _error(api, 400, str(exc), "invalid_request_error")
            return self._finish_log(response, info, started)
        parsed: dict[str, Any] | None = None
        fixes = RequestFixes()
        unavailable: tuple[str, ...] = ()
        if api is not None:
            large = len(body) >= self.config.large_body_bytes  # worked on off the loop
            try:
                candidate = await parse_json(body, large=large) if body else None
            except (ValueError, RecursionError):
                candidate = None
            if isinstance(candidate, dict):
                parsed = candidate
                model = parsed.get("model")
                info["model"] = shorten(model, MAX_LABEL_CHARS) if isinstance(model, str) else ""
                info["stream"] = parsed.get("stream") is True
                fixes, unavailable = await self._fix(request, api, parsed, large=large)
                if fixes.body is not None:
                    body = await encode_json(fixes.body, large=large)
                if fixes.counts:
                    info["request_fixes"] = fixes.counts
                    for name, count in fixes.counts.items():
                        self.metrics.add("streamrepair_proxy_request_fixes_total", count, fix=name)
                if unavailable:
                    info["fixes_unavailable"] = list(unavailable)
                    for name in unavailable:
                        self.metrics.add(
                            "streamrepair_proxy_request_fixes_unavailable_total", fix=name
                        )
        assert self.client is not None, "the app's lifespan has not started"
        try:
            answer = await self.client.send(
                request.method,
                upstream_url(self.base, request),
                forwarded_headers(request, api, self.config),
                body,
            )
        except UpstreamTimeout as exc:
            message = f"upstream timed out: {exc.kind}"
            return self._upstream_failed(api, 504, message, info, started)
        except UpstreamUnreachable as exc:
            message = f"upstream unreachable: {exc.kind}"
            return self._upstream_failed(api, 502, message, info, started)
        info["upstream_status"] = answer.status
        how = handling(api, parsed, answer)
        relay = whole = None
        if how is Handling.RELAY:
            assert api is not None
            assert parsed is not None
            relay = self._new_relay(api, parsed, text_calls, stream_arguments)
        elif how is Handling.JUDGE:
            assert api is not None
            assert parsed is not None
            whole = self._new_relay(api, parsed)
        if relay is not None and relay.text_calls:
            info["text_tool_calls"] = text_calls
        if relay is not None and relay.stream_arguments:
            info["stream_arguments"] = True
        drop = set(ANSWER_DROPPED)
        if relay is not None:
            drop.add("content-encoding")
        elif whole is None:
            drop.discard("content-length")  # the same bytes go out
        headers = [(k, v) for k, v in answer.headers if k.lower() not in drop]
        if fixes.counts:
            headers.append((FIXES_HEADER, fixes.header()))
        if unavailable:
            headers.append((UNAVAILABLE_FIXES_HEADER, ", ".join(unavailable)))
        if whole is not None:
            return await self._judge(request, whole, answer, headers, info, started)
        if relay is None:
            remember = api if how is Handling.REMEMBER else None
            stream = self._pass(answer, info, started, remember, request)
        else:
            stream = self._relay(request, relay, answer, info, started)
        streaming = StreamBody(stream, answer.status, close=answer.aclose)
        streaming.raw_headers = raw_headers(headers)
        return streaming

    async def _fix(
        self, request: Request, api: Api, parsed: dict[str, Any], *, large: bool = False
    ) -> tuple[RequestFixes, tuple[str, ...]]:
        """The request-side fixes, and the fixes that needed a memo the store could not
        give (it failed, timed out or its breaker is open: ``unavailable_fixes``); off the
        event loop for a ``large`` body."""
        ids = referenced_calls(api.protocol, parsed)
        memos: dict[str, CallMemo] = {}
        unavailable: tuple[str, ...] = ()
        if ids:
            credential = self._credential(request)
            keys = {memo_key(credential, call_id): call_id for call_id in ids}
            lookup = await self.store.lookup(keys)
            memos = {keys[k]: memo for k, memo in lookup.found.items()}
            if not lookup.available:
                unavailable = await off_loop(large, unavailable_fixes, api.protocol, parsed)
        try:
            return await off_loop(large, fix_request, api.protocol, parsed, memos), unavailable
        except Exception:  # never fail a request over a fix: send it as the client did
            _LOGGER.exception("request fix failed; forwarding the request unchanged")
            return RequestFixes(), unavailable

    def _text_calls(self, request: Request) -> str | None:
        """The text tool-call format for this request: its header, else the config's
        (None: off). ``ValueError`` for a header that names no format."""
        value = request.headers.get(TEXT_CALLS_HEADER)
        if value is None:
            return self.config.text_tool_calls
        value = value.strip()
        if value.lower() in ("off", "none", ""):
            return None
        return TextCallFormat.parse(value).value

    def _stream_arguments(self, request: Request) -> bool:
        """Whether this request streams arguments: its header, else the config's.
        ``ValueError`` for a header that is neither on nor off."""
        value = request.headers.get(STREAM_ARGUMENTS_HEADER)
        if value is None:
            return self.config.stream_arguments
        word = value.strip().lower()
        if word in ("on", "1", "true", "yes"):
            return True
        if word in ("off", "0", "false", "no"):
            return False
        raise ValueError(f"{STREAM_ARGUMENTS_HEADER} must be on or off, not {value!r}")

    def _new_relay(
        self,
        api: Api,
        parsed: dict[str, Any],
        text_calls: str | None = None,
        stream_arguments: bool = False,
    ) -> Relay:
        """The relay for the answer to ``parsed``: the request's tools, and the schemas
        of the tools it does not list. (Text tool calls are read in streams only:
        docs/proxy.md.)"""
        tools = usable_tools(parsed.get("tools"))
        return api.relay(
            tools=with_schemas(tools, self.config.schemas),
            max_argument_chars=self.config.max_argument_chars,
            # Only for a request that declares tools: a call for a client that offered
            # none could not be run, and its markup is then text as the model wrote it.
            text_tool_calls=text_calls if tools else None,
            stream_arguments=stream_arguments,
            refusals=self.config.refusals,
            refuse_ambiguous_escapes=self.config.refuse_ambiguous_escapes,
        )

    def _upstream_failed(
        self,
        api: Api | None,
        status: int,
        message: str,
        info: dict[str, Any],
        started: float,
    ) -> Response:
        kind = "timeout" if status == 504 else "connect"
        self.metrics.add("streamrepair_proxy_upstream_errors_total", kind=kind)
        response = _error(api, status, message, "upstream_error")
        return self._finish_log(response, info, started)

    async def _pass(
        self,
        answer: UpstreamResponse,
        info: dict[str, Any],
        started: float,
        remember: Api | None = None,
        request: Request | None = None,
        *,
        read: tuple[bytes, AsyncIterator[bytes], float | None] | None = None,
    ) -> AsyncIterator[bytes]:
        """The answer as the upstream sent it (``read``: the bytes already read, the
        body's iterator they came from and when the first came). A body the upstream cut
        short raises :class:`~streamrepair.errors.UpstreamBroken` after its last byte."""
        sent = 0
        first: float | None = None
        held: list[bytes] = []  # a non-streaming body, kept until its memos are stored
        if read is None:
            pieces = answer.body()
        else:
            start, pieces, first = read
            sent = len(start)
            yield start
        try:
            async for chunk in pieces:
                if first is None:
                    first = time.perf_counter()
                sent += len(chunk)
                if remember is not None and sent <= self.config.max_request_bytes:
                    held.append(chunk)
                    continue
                if held:
                    yield b"".join(held)  # too large to read: pass it on unread
                    held = []
                    remember = None
                yield chunk
            if held:
                body = b"".join(held)
                if remember is not None and request is not None:
                    await self._remember(remember, body, request)
                held = []
                yield body
        except UpstreamBroken as exc:
            info["upstream_error"] = exc.kind
            self.metrics.add("streamrepair_proxy_upstream_errors_total", kind="read")
            if held:
                yield b"".join(held)  # what came before the break, as it came
            # ended without its last chunk (StreamBody), so the client sees the body cut
            # short: a clean end would pass a truncated body off as whole
            raise
        finally:
            with anyio.CancelScope(shield=True):
                await answer.aclose()
            info["response_bytes"] = sent
            self._log(info, answer.status, started, first)

    async def _judge(
        self,
        request: Request,
        relay: Relay,
        answer: UpstreamResponse,
        headers: list[tuple[str, str]],
        info: dict[str, Any],
        started: float,
    ) -> Response:
        """A non-streaming answer, read whole (up to ``max_request_bytes``) and judged
        by ``relay`` (``whole.py``); sent as it came when there is nothing to change,
        with its own ``content-length`` when there is. A larger body is passed on
        unread."""
        limit = self.config.max_request_bytes
        parts: list[bytes] = []
        size = 0
        first: float | None = None
        pieces = answer.body()
        try:
            async for chunk in pieces:
                if first is None:
                    first = time.perf_counter()
                parts.append(chunk)
                size += len(chunk)
                if size > limit:
                    stream = self._pass(
                        answer, info, started, read=(b"".join(parts), pieces, first)
                    )
                    passing = StreamBody(stream, answer.status, close=answer.aclose)
                    length = [(k, v) for k, v in answer.headers if k.lower() == "content-length"]
                    passing.raw_headers = raw_headers(headers + length)
                    return passing
        except UpstreamBroken as exc:  # what came is sent as it came (it will not parse)
            info["upstream_error"] = exc.kind
            self.metrics.add("streamrepair_proxy_upstream_errors_total", kind="read")
        finally:
            if size <= limit:
                with anyio.CancelScope(shield=True):
                    await answer.aclose()
        data = b"".join(parts)
        judged = None if "upstream_error" in info else judge_body(relay, data)
        if relay.ended:
            await self._store(request, relay.memos())
            self._account(relay, info)
            info["body_rewritten"] = judged is not None
        body = data if judged is None else judged
        response = Response(content=body, status_code=answer.status)
        response.raw_headers = raw_headers([*headers, ("content-length", str(len(body)))])
        info["response_bytes"] = len(body)
        self._log(info, answer.status, started, first)
        return response

    async def _remember(self, api: Api, body: bytes, request: Request) -> None:
        """Store what a body passed through unread says about its calls."""
        try:
            memos = memos_of_response(api.protocol, json.loads(body))
        except (ValueError, RecursionError):
            return
        await self._store(request, memos)

    async def _store(self, request: Request, memos: list[CallMemo]) -> None:
        """Store the memos of the calls the client got, under its credential."""
        if memos:
            credential = self._credential(request)
            await self.store.put({memo_key(credential, m.call_id): m for m in memos})

    async def _relay(
        self,
        request: Request,
        relay: Relay,
        answer: UpstreamResponse,
        info: dict[str, Any],
        started: float,
    ) -> AsyncIterator[bytes]:
        # Not the parsed request: a stream holds what it reads for its whole length, and
        # a 30 MiB history parsed is some 150 MB.
        metrics = self.metrics
        metrics.active_streams += 1
        sent = 0
        first: float | None = None
        completed = False
        pieces = answer.body(decode=True)
        try:
            try:
                async for chunk in pieces:
                    if first is None:
                        first = time.perf_counter()
                    for piece in slices(chunk):
                        out = relay.feed(piece)
                        if out:
                            data = b"".join(out)
                            sent += len(data)
                            yield data
                        if relay.ended:
                            break
                    if relay.ended:
                        break
                else:
                    out = relay.finish()
                    if out:
                        data = b"".join(out)
                        sent += len(data)
                        yield data
            except UpstreamBroken as exc:
                failure = f"the upstream stream broke: {exc.kind}"
                info["upstream_error"] = exc.kind
                metrics.add("streamrepair_proxy_upstream_errors_total", kind="read")
                relay.fail(failure)
            await self._store(request, relay.memos())
            data = b"".join(relay.final())
            if data:
                sent += len(data)
                yield data
            if relay.dropped:
                # the client sees the failure the upstream gave: a stream cut short, with
                # no end (StreamBody leaves the response unfinished), so a harness retries
                info["dropped"] = True
                raise UpstreamBroken(str(info.get("upstream_error") or "read"))
            completed = True
            # Read what the upstream still sends after its end marker (the chunked
            # terminator), briefly, so that its connection goes back to the pool.
            with anyio.move_on_after(_DRAIN_SECONDS), contextlib.suppress(UpstreamBroken):
                async for _ in pieces:
                    pass
        finally:
            metrics.active_streams -= 1
            if not completed and not relay.ended:
                relay.abort()
                metrics.add("streamrepair_proxy_client_disconnects_total")
                info["client_disconnected"] = True
            with anyio.CancelScope(shield=True):
                await answer.aclose()
            self._account(relay, info)
            info["response_bytes"] = sent
            self._log(info, answer.status, started, first)

    def _account(self, relay: Relay, info: dict[str, Any]) -> None:
        model = str(info.get("model") or "")
        verdicts = relay.verdicts
        metrics_model = model or "unknown"
        self.metrics.calls(verdicts, metrics_model)
        ready = sum(1 for v in verdicts if v.type == "tool_call_ready")
        info["calls_sent"] = ready
        info["calls_withheld"] = len(verdicts) - ready
        info["chunks"] = relay.chunks
        telemetry = self.config.telemetry
        if telemetry is not None:
            for verdict in verdicts:
                telemetry.observe(verdict, model=model)

    # -- logging ---------------------------------------------------------------------------

    def _finish_log(self, response: Response, info: dict[str, Any], started: float) -> Response:
        self._log(info, None, started, None, status=response.status_code)
        return response

    def log_answer(self, response: Response, info: dict[str, Any], started: float) -> None:
        """Count an answer the service gave for the handler (a refusal) and log it."""
        self._finish_log(response, info, started)

    def _log(
        self,
        info: dict[str, Any],
        upstream_status: int | None,
        started: float,
        first: float | None,
        *,
        status: int | None = None,
    ) -> None:
        final = status if status is not None else (upstream_status or 0)
        protocol = str(info.get("protocol") or "other")
        self.metrics.add("streamrepair_proxy_requests_total", protocol=protocol, status=str(final))
        if not self.config.access_log or not _LOGGER.isEnabledFor(logging.INFO):
            return
        record = {"status": final, **info}
        record["duration_ms"] = round((time.perf_counter() - started) * 1000, 2)
        if first is not None:
            record["upstream_first_byte_ms"] = round((first - started) * 1000, 2)
        _LOGGER.info(json.dumps(record, ensure_ascii=True, default=str))


def create_app(
    config: ProxyConfig,
    *,
    store: StateStore | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    share: MetricsShare | None = None,
) -> ServiceApp:
    """The proxy as an ASGI app (serve it with uvicorn, on asyncio: ``streamrepair
    serve``; ``service.py`` says what it guarantees around each request).

    ``store`` defaults to a :class:`~.store.MemoryStore`. ``transport`` (an
    ``httpx.AsyncBaseTransport``) makes the upstream client an httpx one on that
    transport (tests, custom transports); without it the client is aiohttp's. ``share``
    is for one of several workers (``workers.py``): ``/metrics`` then counts them all.
    """
    limits = Limits(
        upstream_connections=config.pool_size,
        request_bytes_in_flight=config.max_bytes_in_flight,
    )
    proxy = _Proxy(config, store if store is not None else MemoryStore(), transport, limits)
    return ServiceApp(proxy, limits, body_limit=config.max_request_bytes, share=share)
