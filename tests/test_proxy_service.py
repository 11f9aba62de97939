"""The proxy as a service (issue 22), against real servers on loopback: the proxy under
uvicorn, a raw fake upstream that records when each of its connections is closed, raw
client sockets. What a client that leaves costs the upstream, the pool and the other
limits refused with a 503, ``Expect``, a pass-through body cut short, the access log's
bounds, and what a client is told when the store cannot be read. (Workers, the shared
store, heads and descriptors: ``test_proxy_serve.py``.)"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from _proxy_support import FakeUpstream, Reply, chat_stream, serving, wait_for
from streamrepair.proxy import (
    UNAVAILABLE_FIXES_HEADER,
    CallMemo,
    ProxyConfig,
    StoreLookup,
    StoreStats,
    StoreStatus,
    create_app,
)

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
#: A DeepSeek history whose tool turn lost its reasoning and whose tool result has no
#: notes yet: both need the memo of ``call_1``.
HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "go"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "done"},
]
EVENT = b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'


# -- a raw upstream that sees its connections close ------------------------------------------


@dataclass
class RawUpstream:
    """An HTTP/1.1 upstream on its own event loop in a thread, answering by the
    request's ``mode`` query parameter, and recording when each request arrived and when
    each connection was closed (``time.monotonic()``):

    * ``hold``: never answers;
    * ``head``: a ``200`` event-stream head, then nothing;
    * ``event``: the head and one event, then nothing;
    * ``json``: a ``200`` JSON head announcing 100,000 bytes, 10 of them, then nothing;
    * ``drop``: a chunked ``200`` head and one chunk, then the connection closed;
    * ``stream``: a short event stream, whole.
    """

    arrived: list[float] = field(default_factory=list)
    closed: list[float] = field(default_factory=list)
    heads: list[bytes] = field(default_factory=list)
    url: str = ""

    def answer(self, head: bytes, transport: asyncio.Transport) -> None:
        line = head.split(b"\r\n", 1)[0]
        mode = line.split(b"mode=", 1)[1].split(b" ")[0].split(b"&")[0] if b"mode=" in line else b""
        sse = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        chunk = b"%x\r\n%s\r\n" % (len(EVENT), EVENT)
        if mode == b"head":
            transport.write(sse)
        elif mode == b"event":
            transport.write(sse + chunk)
        elif mode == b"json":
            transport.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                b"content-length: 100000\r\n\r\n" + b'{"id": "x",'
            )
        elif mode == b"drop":
            transport.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                b"transfer-encoding: chunked\r\n\r\n" + b"a\r\n" + b'{"data": [' + b"\r\n"
            )
            transport.abort()
        elif mode == b"stream":
            done = b"data: [DONE]\n\n"
            transport.write(sse + chunk + b"%x\r\n%s\r\n0\r\n\r\n" % (len(done), done))

    @contextlib.contextmanager
    def running(self) -> Iterator[str]:
        upstream = self
        ready = threading.Event()
        loop = asyncio.new_event_loop()

        class Protocol(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                assert isinstance(transport, asyncio.Transport)
                self.transport = transport
                self.buffer = b""

            def data_received(self, data: bytes) -> None:
                self.buffer += data
                end = self.buffer.find(b"\r\n\r\n")
                if end < 0:
                    return
                head, rest = self.buffer[: end + 4], self.buffer[end + 4 :]
                length = 0
                for header in head.lower().split(b"\r\n"):
                    if header.startswith(b"content-length:"):
                        length = int(header.split(b":")[1])
                if len(rest) < length:
                    return
                self.buffer = rest[length:]
                upstream.arrived.append(time.monotonic())
                upstream.heads.append(head)
                upstream.answer(head, self.transport)

            def connection_lost(self, exc: Exception | None) -> None:
                upstream.closed.append(time.monotonic())

        async def main() -> None:
            server = await loop.create_server(Protocol, "127.0.0.1", 0)
            port = server.sockets[0].getsockname()[1]
            upstream.url = f"http://127.0.0.1:{port}"
            ready.set()
            async with server:
                await server.serve_forever()

        def run() -> None:
            with contextlib.suppress(asyncio.CancelledError):
                loop.run_until_complete(main())

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        ready.wait(10)
        try:
            yield self.url
        finally:
            for task in asyncio.all_tasks(loop):
                loop.call_soon_threadsafe(task.cancel)
            thread.join(10)
            loop.close()


@contextlib.contextmanager
def proxied(upstream: RawUpstream, **config: Any) -> Iterator[str]:
    """``upstream`` running and the proxy in front of it (no access log); the proxy's
    URL."""
    with upstream.running() as url:
        app = create_app(ProxyConfig(upstream=url, access_log=False, **config))
        with serving(app) as proxy:
            yield proxy


def raw_request(
    base: str, method: str, path: str, body: bytes = b"", **headers: str
) -> socket.socket:
    """A request sent on a new socket (returned, for the test to read or close)."""
    host, port = base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    lines = [f"{method} {path} HTTP/1.1", f"host: {host}", f"content-length: {len(body)}"]
    lines += [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    return sock


def read_head(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        piece = sock.recv(65536)
        if not piece:
            break
        data += piece
    return data


CHAT = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True})
WHOLE = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]})


# -- the client leaving ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "path", "body", "wait_for_bytes"),
    [
        ("hold", "/v1/chat/completions", CHAT, False),  # a stream, before the head
        ("hold", "/v1/chat/completions", WHOLE, False),  # not streamed, before the head
        ("hold", "/v1/models", "", False),  # passed through, before the head
        ("event", "/v1/chat/completions", CHAT, True),  # a stream, after its first event
        ("json", "/v1/chat/completions", WHOLE, False),  # a body being read whole
        ("head", "/v1/embeddings", '{"x": 1}', True),  # passed through, after the head
    ],
    ids=[
        "stream-before-head",
        "whole-before-head",
        "pass-before-head",
        "stream-after-head",
        "whole-mid-body",
        "pass-after-head",
    ],
)
def test_the_upstream_is_closed_within_milliseconds_of_the_client_leaving(
    mode: str, path: str, body: str, wait_for_bytes: bool
) -> None:
    upstream = RawUpstream()
    with proxied(upstream) as proxy:
        method = "GET" if path == "/v1/models" else "POST"
        sock = raw_request(proxy, method, f"{path}?mode={mode}", body.encode())
        assert wait_for(lambda: len(upstream.arrived) == 1)
        if wait_for_bytes:
            assert read_head(sock)  # the head (and an event) reached the client
        time.sleep(0.05)
        assert upstream.closed == []  # the upstream still holds the request
        left = time.monotonic()
        sock.close()
        assert wait_for(lambda: len(upstream.closed) == 1, 5)
        waited = upstream.closed[0] - left
        with httpx.Client(base_url=proxy) as client:
            metrics = client.get("/metrics").text
    assert waited < 0.5, f"the upstream saw the client leave {waited * 1000:.0f} ms later"
    assert 'streamrepair_proxy_limit_in_use{limit="upstream_connections"} 0' in metrics
    assert 'streamrepair_proxy_limit_in_use{limit="open_files"} 0' in metrics


# -- limits refused at once --------------------------------------------------------------------


def test_a_full_pool_is_a_clear_503_at_once_and_frees_up() -> None:
    upstream = RawUpstream()
    with proxied(upstream, pool_size=2) as proxy:
        holding = [raw_request(proxy, "POST", "/v1/chat/completions?mode=hold", CHAT.encode())]
        holding.append(raw_request(proxy, "POST", "/v1/messages?mode=hold", CHAT.encode()))
        assert wait_for(lambda: len(upstream.arrived) == 2)
        with httpx.Client(base_url=proxy, timeout=30) as client:
            started = time.monotonic()
            chat = client.post("/v1/chat/completions?mode=stream", content=CHAT)
            anthropic = client.post("/v1/messages?mode=stream", content=CHAT)
            refused_in = time.monotonic() - started
            for sock in holding:
                sock.close()
            assert wait_for(lambda: len(upstream.closed) == 2)
            served = client.post("/v1/chat/completions?mode=stream", content=CHAT)
            metrics = client.get("/metrics").text
    assert refused_in < 2  # never the 10 s connect timeout's 504
    for answer in (chat, anthropic):
        assert answer.status_code == 503
        assert answer.headers["retry-after"] == "1"
        assert answer.headers["x-streamrepair-limit"] == "upstream_connections"
    assert chat.json()["error"]["type"] == "overloaded_error"  # OpenAI's shape
    assert "upstream_connections" in chat.json()["error"]["message"]
    assert anthropic.json()["type"] == "error"  # Anthropic's shape
    assert len(upstream.arrived) == 3  # the refused requests never went upstream
    assert served.status_code == 200
    assert "data: [DONE]" in served.text
    assert 'streamrepair_proxy_refusals_total{limit="upstream_connections"} 2' in metrics
    assert 'streamrepair_proxy_requests_total{protocol="chat",status="503"} 1' in metrics


def test_request_bytes_in_flight_are_bounded() -> None:
    """A body announced, or sent, past what the proxy holds at once is refused with a 503
    (announced: before it is read); bytes count as they are read, and what a refused or
    finished request held is given back."""
    upstream = RawUpstream()
    limit = 100_000
    with proxied(upstream, max_request_bytes=limit, max_bytes_in_flight=limit) as proxy:
        host, port = proxy.removeprefix("http://").split(":")
        # a slow upload that announced 90,000 bytes and sent 60,000: what it sent
        # counts, what it only announced does not
        slow = socket.create_connection((host, int(port)))
        slow.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 90000\r\n\r\n"
            + b" " * 60_000
        )
        time.sleep(0.2)
        with httpx.Client(base_url=proxy, timeout=30) as client:
            announced = client.post("/v1/chat/completions?mode=stream", content=b" " * 50_000)
            fits = client.post("/v1/chat/completions?mode=stream", content=CHAT + " " * 30_000)

            def chunked() -> Iterator[bytes]:  # no content-length: counted as it comes
                for _ in range(10):
                    yield b" " * 5_000

            streamed = client.post("/v1/chat/completions?mode=stream", content=chunked())
            slow.close()
            time.sleep(0.2)
            after = client.post("/v1/chat/completions?mode=stream", content=CHAT)
            metrics = client.get("/metrics").text
    for refused in (announced, streamed):
        assert refused.status_code == 503, refused.text
        assert refused.headers["x-streamrepair-limit"] == "request_bytes_in_flight"
        assert refused.headers["retry-after"] == "1"
    assert fits.status_code == 200  # 60,000 + 30,000: the 30,000 not yet sent do not count
    assert after.status_code == 200
    assert 'streamrepair_proxy_limit_in_use{limit="request_bytes_in_flight"} 0' in metrics
    assert len(upstream.arrived) == 2  # only the two that fitted went upstream


def test_expect_100_continue_is_answered_here_and_not_forwarded() -> None:
    upstream = RawUpstream()
    with proxied(upstream) as proxy:
        host, port = proxy.removeprefix("http://").split(":")
        sock = socket.create_connection((host, int(port)), timeout=10)
        body = CHAT.encode()
        sock.sendall(
            b"POST /v1/chat/completions?mode=stream HTTP/1.1\r\nhost: x\r\n"
            b"expect: 100-continue\r\ncontent-length: %d\r\n\r\n" % len(body)
        )
        assert read_head(sock).startswith(b"HTTP/1.1 100 Continue")
        sock.sendall(body)
        started = time.monotonic()
        answer = read_head(sock)
        took = time.monotonic() - started
        sock.close()
    assert answer.startswith(b"HTTP/1.1 200"), answer
    assert took < 5  # not the 600 s read timeout of an upstream waiting for its 100
    assert b"expect:" not in upstream.heads[0].lower()


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [("GET", "/v1/models", b""), ("POST", "/v1/chat/completions", b'{"model":"m","n":2}')],
    ids=["other-path", "n-2"],
)
def test_a_pass_through_body_cut_short_reaches_the_client_cut_short(
    method: str, path: str, body: bytes
) -> None:
    with proxied(RawUpstream()) as proxy, httpx.Client(base_url=proxy, timeout=30) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            client.request(method, f"{path}?mode=drop", content=body).read()
        assert client.get("/healthz").status_code == 200  # and the proxy goes on serving


def test_the_access_log_bounds_model_names(caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeUpstream(script=[Reply(body=chat_stream(content="ok"))], deepseek_rules=False)
    model = "m" * 300_000
    with (
        serving(fake.app()) as upstream,
        caplog.at_level(logging.INFO, "streamrepair.proxy"),
        serving(create_app(ProxyConfig(upstream=upstream))) as proxy,
    ):
        body = {"model": model, "messages": [{"role": "user", "content": "x"}], "stream": True}
        assert httpx.post(f"{proxy}/v1/chat/completions", json=body).status_code == 200
        assert wait_for(lambda: any('"model"' in r.message for r in caplog.records))
    (line,) = [r.message for r in caplog.records if '"model"' in r.message]
    logged = json.loads(line)["model"]
    assert len(logged) == 128
    assert logged.startswith("mmmm")
    assert len(line) < 2000


# -- the store unavailable ----------------------------------------------------------------------


class _TimingOutStore:
    """A store whose every call times out (what a hung Redis looks like to the app)."""

    def __init__(self) -> None:
        self.errors = 0
        self.lookups = 0

    async def lookup(self, keys: Iterable[str]) -> StoreLookup:
        self.lookups += 1
        self.errors += 1
        return StoreLookup({}, StoreStatus.TIMEOUT)

    async def get(self, keys: Iterable[str]) -> dict[str, CallMemo]:
        return (await self.lookup(keys)).found

    async def put(self, memos: Mapping[str, CallMemo]) -> StoreStatus:
        self.errors += 1
        return StoreStatus.TIMEOUT

    async def ping(self) -> bool:
        return False

    def stats(self) -> StoreStats:
        return StoreStats(counts={("get", "timeout"): self.lookups})

    async def close(self) -> None:
        return None


def test_fixes_the_store_could_not_give_are_named_in_a_header_and_counted() -> None:
    store = _TimingOutStore()
    fake = FakeUpstream(script=[Reply(body=chat_stream(content="ok"))], deepseek_rules=False)
    with serving(fake.app()) as upstream:
        app = create_app(ProxyConfig(upstream=upstream, access_log=False), store=store)
        with serving(app) as proxy, httpx.Client(base_url=proxy) as client:
            body = {
                "model": "deepseek-v4-flash",
                "messages": HISTORY,
                "tools": TOOLS,
                "stream": True,
            }
            answer = client.post("/v1/chat/completions", json=body)
            metrics = client.get("/metrics").text
    assert answer.status_code == 200
    assert answer.headers[UNAVAILABLE_FIXES_HEADER] == "reasoning_restored, repair_notes"
    assert "data: [DONE]" in answer.text  # the request went on without its memos
    sent = fake.requests[0].body
    assert sent["messages"][1].get("reasoning_content") in (None, "")  # not restored
    assert (
        'streamrepair_proxy_request_fixes_unavailable_total{fix="reasoning_restored"} 1' in metrics
    )
    assert 'streamrepair_proxy_store_errors_total{kind="timeout",operation="get"} 1' in metrics
