"""``streamrepair serve`` as an operator runs it (issue 22), against real servers on
loopback: request heads bounded in size and time (raw sockets: a 100 MB header,
slowloris connections), a low open-file limit (a subprocess), several workers on one
port sharing the memo store, several ``serve`` processes sharing a SQLite file or a real
``redis-server``, and the shared store itself."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from _proxy_support import FakeUpstream, Reply, chat_stream, serving, wait_for
from streamrepair.proxy import CallMemo, ProxyConfig, StoreStatus, create_app, memo_key
from streamrepair.proxy.server import guarded_protocol
from streamrepair.proxy.shared_store import SqliteStore, create_file
from streamrepair.proxy.workers import merge_pages

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


# -- request heads ---------------------------------------------------------------------------


@contextlib.contextmanager
def guarded(app: Any, *, max_header_bytes: int, header_timeout: float) -> Iterator[str]:
    """``app`` under uvicorn with ``serve``'s guarded protocol, in a thread; its URL."""
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="error",
        lifespan="on",
        access_log=False,
        http=guarded_protocol(max_header_bytes, header_timeout),
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    assert wait_for(lambda: server.started, 10)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def _closed(sock: socket.socket, seconds: float) -> bytes | None:
    """What the server sent before closing ``sock`` within ``seconds``; None if it did not."""
    sock.settimeout(seconds)
    data = b""
    try:
        while piece := sock.recv(65536):
            data += piece
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return data


@pytest.fixture(scope="module")
def heads() -> Iterator[str]:
    fake = FakeUpstream(script=[Reply(body=chat_stream(content="ok"))] * 50)
    with serving(fake.app()) as upstream:
        app = create_app(ProxyConfig(upstream=upstream, access_log=False))
        with guarded(app, max_header_bytes=16_384, header_timeout=1.0) as url:
            yield url


def _send_until_closed(url: str, head: bytes, total: int) -> int:
    """Bytes sent after ``head`` before the server closed the connection (``total`` if
    it never did)."""
    sent = 0
    piece = b"a" * 65536
    with _connect(url) as sock:
        try:
            sock.sendall(head)
            while sent < total:
                sock.sendall(piece)
                sent += len(piece)
        except (BrokenPipeError, ConnectionResetError):
            return sent
    return total


def test_a_head_past_its_bound_is_answered_431_and_closed(heads: str) -> None:
    with _connect(heads) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: " + b"a" * 20_000 + b"\r\n\r\n")
        answer = _closed(sock, 5)
    assert answer is not None
    assert answer.startswith(b"HTTP/1.1 431 ")
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]["code"] == 431
    # a 100 MB header is not read: the connection is closed after the bound
    sent = _send_until_closed(heads, b"GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: ", 100 * 2**20)
    assert sent < 8 * 2**20  # what the kernel's buffers took before the close, at most
    # heads within the bound, on one kept-alive connection, are served
    with httpx.Client(base_url=heads) as client:
        for _ in range(3):
            assert client.get("/healthz", headers={"x-fine": "b" * 8000}).status_code == 200


def test_slow_and_idle_connections_are_closed_after_the_head_timeout(heads: str) -> None:
    """200 slowloris connections sending a byte every 0.2 s, and one that sends nothing,
    are all closed about a second (the head timeout) after they opened; an ordinary
    request meanwhile is served at once."""
    slow = [_connect(heads) for _ in range(200)]
    idle = _connect(heads)
    opened = time.monotonic()
    for sock in slow:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\n")
        sock.setblocking(False)
    with httpx.Client(base_url=heads, timeout=10) as client:
        started = time.monotonic()
        assert client.get("/healthz").status_code == 200
        served_in = time.monotonic() - started
    open_ = set(range(len(slow)))
    answers: dict[int, bytes] = {}
    while open_ and time.monotonic() - opened < 10:
        for i in list(open_):
            try:
                slow[i].send(b"x")
            except OSError:  # closed by the server
                open_.discard(i)
                continue
            try:
                data = slow[i].recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            answers[i] = answers.get(i, b"") + data
            if not data:
                open_.discard(i)
        time.sleep(0.2)
    closed_after = time.monotonic() - opened
    idle_answer = _closed(idle, 5)
    for sock in [*slow, idle]:
        sock.close()
    assert not open_, f"{len(open_)} slow connections still open after {closed_after:.1f} s"
    assert closed_after < 6
    assert served_in < 1
    assert idle_answer == b""  # closed without a word: it never began a request
    assert any(a.startswith(b"HTTP/1.1 408 ") for a in answers.values())


# -- one serve process, as run ------------------------------------------------------------------


@contextlib.contextmanager
def serve(
    *options: str, limit_files: int | None = None, env: dict[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[str], list[str]]]:
    """``streamrepair serve`` in a subprocess (``limit_files``: its open-file limit, soft
    and hard); yields its URL, the process and, once it stopped, its stderr lines."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    def limit() -> None:
        if limit_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit_files, limit_files))

    command = [sys.executable, "-m", "streamrepair.cli", "serve", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--telemetry", "off", *options],
        env={**os.environ, "STREAMREPAIR_PROXY_TOKEN": "", **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limit,
    )
    lines: list[str] = []
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/healthz", timeout=5)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield base, process, lines
    finally:
        process.terminate()
        _, err = process.communicate(timeout=60)
        lines.extend(err.splitlines())


def test_a_low_open_file_limit_refuses_cleanly_and_says_so() -> None:
    """Soft and hard open-file limit 100 (two descriptors a stream): 120 clients at once
    on paced streams. Every answer is a complete stream or a 503 with Retry-After (the
    connections the process had no descriptor to accept are closed by the event loop:
    a transport error, no answer); nothing is a 500, nothing in the log is a traceback,
    and the log says the limit and what it leaves room for."""
    stream = chat_stream(content="x" * 40, calls=(("call_1", "f", '{"a": 1,}'),), piece=2)
    fake = FakeUpstream(script=[Reply(body=stream, chunk=40, delay=0.01)] * 400)
    statuses: dict[str, int] = {}
    with (
        serving(fake.app()) as upstream,
        serve("--upstream", upstream, "--workers", "1", limit_files=100) as (base, _, log),
    ):

        async def one(client: httpx.AsyncClient) -> str:
            body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
            try:
                answer = await client.post(
                    "/v1/chat/completions", json={**body, "stream": True, "tools": TOOLS}
                )
            except httpx.TransportError as exc:
                return type(exc).__name__
            if answer.status_code == 503:
                assert answer.headers["retry-after"] == "1"
                return f"503 {answer.headers['x-streamrepair-limit']}"
            assert answer.status_code == 200, answer.text
            assert '"arguments":"{\\"a\\":1}"' in answer.text
            assert answer.text.rstrip().endswith("data: [DONE]")
            return "200"

        async def main() -> list[str]:
            limits = httpx.Limits(max_connections=200)
            async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
                return list(await asyncio.gather(*(one(client) for _ in range(120))))

        for outcome in asyncio.run(main()):
            statuses[outcome] = statuses.get(outcome, 0) + 1
    text = "\n".join(log)
    assert "Traceback" not in text, text[-3000:]
    assert "open-file limit 100 (the hard limit); per worker at most 18 upstream" in text
    assert statuses.get("200", 0) >= 10, statuses
    answered = {k for k in statuses if k[0].isdigit()}
    assert answered <= {"200", "503 open_files", "503 upstream_connections"}, statuses
    assert statuses.get("503 open_files", 0) > 0, statuses  # 120 > (100 - 64) / 2


# -- several workers, several processes, one store ------------------------------------------------


def _turns(proxies: list[str], turns: int) -> list[httpx.Response]:
    """A DeepSeek conversation whose client drops ``reasoning_content`` and sends
    ``content: null``: ``turns`` requests, each on a new connection, to the proxies in
    turn. The fake upstream answers 400 to a tool turn without its reasoning."""
    history: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    answers = []
    for turn in range(turns):
        body = {"model": "deepseek-v4-flash", "messages": history, "tools": TOOLS, "stream": True}
        proxy = proxies[turn % len(proxies)]
        with httpx.Client(base_url=proxy, timeout=30) as client:  # a new connection each
            answer = client.post("/v1/chat/completions", json=body)
        answers.append(answer)
        call = {
            "id": f"call_{turn}",
            "type": "function",
            "function": {"name": "f", "arguments": "{}"},
        }
        history += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{turn}", "content": "done"},
        ]
    return answers


def _script(turns: int) -> list[Reply]:
    return [
        Reply(body=chat_stream(reasoning=f"reason {n}", calls=((f"call_{n}", "f", "{}"),)))
        for n in range(turns)
    ]


def _check_conversation(answers: list[httpx.Response], fake: FakeUpstream, turns: int) -> None:
    for n, answer in enumerate(answers):
        assert answer.status_code == 200, (n, answer.text)  # never the 400
    last = fake.requests[-1].body["messages"]
    restored = [m.get("reasoning_content") for m in last if m["role"] == "assistant"]
    assert restored == [f"reason {n}" for n in range(turns - 1)]  # each turn's own


def test_several_workers_share_one_port_the_store_and_the_metrics() -> None:
    turns = 8
    fake = FakeUpstream(script=_script(turns))
    with (
        serving(fake.app()) as upstream,
        serve("--upstream", upstream, "--workers", "2") as (base, _, log),
    ):
        workers = set()
        deadline = time.monotonic() + 20
        while len(workers) < 2 and time.monotonic() < deadline:
            with httpx.Client(base_url=base) as client:  # a new connection each
                workers.add(client.get("/healthz").json()["worker"])
        answers = _turns([base], turns)
        time.sleep(1.5)  # each worker writes its counters every second
        metrics = httpx.get(f"{base}/metrics").text
    assert len(workers) == 2
    _check_conversation(answers, fake, turns)
    assert f'streamrepair_proxy_requests_total{{protocol="chat",status="200"}} {turns}' in metrics
    assert "2 workers, store: memory, shared by the workers" in "\n".join(log)


def test_serve_processes_share_a_sqlite_store(tmp_path: Path) -> None:
    turns = 5
    fake = FakeUpstream(script=_script(turns))
    store = f"sqlite:{tmp_path / 'memos.sqlite3'}"
    with serving(fake.app()) as upstream:
        options = ("--upstream", upstream, "--workers", "1", "--store", store)
        with serve(*options) as (one, _, _), serve(*options) as (two, _, _):
            answers = _turns([one, two], turns)
    _check_conversation(answers, fake, turns)


def test_serve_processes_with_workers_share_a_real_redis() -> None:
    """Two ``serve`` processes of two workers each, one ``redis-server`` on loopback: a
    conversation's turns alternate between the processes, and every turn finds the
    reasoning the one before it streamed."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (Debian package redis-server)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    turns = 6
    fake = FakeUpstream(script=_script(turns))
    with tempfile.TemporaryDirectory() as workdir:
        redis = subprocess.Popen(
            [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--dir", workdir],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert wait_for(lambda: _answers(port), 10)
            with serving(fake.app()) as upstream:
                options = ("--upstream", upstream, "--workers", "2")
                options += ("--store", f"redis://127.0.0.1:{port}/0")
                with serve(*options) as (one, _, _), serve(*options) as (two, _, _):
                    answers = _turns([one, two], turns)
        finally:
            redis.terminate()
            redis.wait(10)
    _check_conversation(answers, fake, turns)


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


# -- the shared store itself --------------------------------------------------------------------


def memo(call_id: str, size: int = 10) -> CallMemo:
    return CallMemo(call_id=call_id, tool="t", reasoning="r" * size)


def test_the_sqlite_store_is_bounded_expires_and_is_shared(tmp_path: Path) -> None:
    path = tmp_path / "memos.sqlite3"
    create_file(path)
    now = [1000.0]
    one = SqliteStore(path, ttl=10, max_entries=3, max_chars=10_000, clock=lambda: now[0])
    two = SqliteStore(path, ttl=10, max_entries=3, max_chars=10_000, clock=lambda: now[0])

    async def run() -> None:
        key = memo_key("Bearer one", "call_1")
        assert await one.put({key: memo("call_1")}) is StoreStatus.OK
        assert (await two.lookup([key, memo_key("Bearer two", "call_1")])).found == {
            key: memo("call_1")
        }  # written by one process, found by another; not by another credential
        for i in range(5):
            now[0] += 1
            await two.put({f"k{i}": memo(f"c{i}")})
        assert len(one) == 3  # the least recently used went first
        assert set(await one.get([key, "k0", "k1", "k2", "k3", "k4"])) == {"k2", "k3", "k4"}
        now[0] += 200  # past the touch interval: a read marks k2 used
        await one.put({"k2": memo("c2")})
        assert (await one.lookup(["k2"])).available
        now[0] += 11
        assert await two.get(["k2", "k3", "k4"]) == {}  # expired
        small = SqliteStore(tmp_path / "small.sqlite3", max_chars=500)
        await small.put({"a": memo("a", 200), "b": memo("b", 200), "c": memo("c", 200)})
        assert small.chars <= 500
        assert set(await small.get(["a", "b", "c"])) == {"b", "c"}
        assert await small.put({"huge": memo("h", 1000)}) is StoreStatus.ERROR
        assert small.stats().counts == {("put", "error"): 1}
        assert await small.ping()
        await small.close()

    asyncio.run(run())
    asyncio.run(one.close())
    asyncio.run(two.close())


def test_a_locked_sqlite_file_fails_the_call_at_once_and_never_raises(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "memos.sqlite3"
    create_file(path)
    store = SqliteStore(path, timeout=0.05)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holding the file's lock

    async def run() -> tuple[StoreStatus, bool]:
        started = time.monotonic()
        status = await store.put({"k": memo("c")})
        assert time.monotonic() - started < 1
        return status, (await store.lookup(["k"])).available

    status, available = asyncio.run(run())
    holder.execute("ROLLBACK")
    holder.close()
    assert status is StoreStatus.TIMEOUT
    assert store.errors >= 1
    assert store.stats().counts[("put", "timeout")] == 1
    assert available  # readers do not wait for a writer in WAL mode
    assert asyncio.run(store.put({"k": memo("c")})) is StoreStatus.OK
    asyncio.run(store.close())


def test_pages_of_several_workers_add_up() -> None:
    page = (
        "# HELP a_total A\n# TYPE a_total counter\n"
        'a_total{x="1"} 2\na_total{x="2"} 1\n'
        "# HELP g Streams\n# TYPE g gauge\ng 3\n"
    )
    other = '# HELP a_total A\n# TYPE a_total counter\na_total{x="1"} 5\n# HELP g Streams\n# TYPE g gauge\ng 1\n'
    merged = merge_pages([page, other])
    assert merged == (
        "# HELP a_total A\n# TYPE a_total counter\n"
        'a_total{x="1"} 7\na_total{x="2"} 1\n'
        "# HELP g Streams\n# TYPE g gauge\ng 4\n"
    )


def test_the_compose_file_runs_serve_with_options_it_has() -> None:
    """``deploy/compose.yaml`` is not started here (no Docker): its ``serve`` command is
    parsed by the real command line, and its ports and store agree with it."""
    yaml = pytest.importorskip("yaml")
    from streamrepair.cli import build_parser

    root = Path(__file__).resolve().parent.parent
    compose = yaml.safe_load((root / "deploy" / "compose.yaml").read_text())
    proxy = compose["services"]["proxy"]
    command = [re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", str(part)) for part in proxy["command"]]
    args = build_parser("serve").parse_args(["serve", *command])
    assert args.upstream == "https://api.deepseek.com"
    assert args.store == "redis://redis:6379/0"
    assert (args.host, args.port) == ("0.0.0.0", 8787)
    assert "redis" in proxy["depends_on"]
    assert compose["services"]["lb"]["ports"] == ["8787:8787"]
    nginx = (root / "deploy" / "nginx.conf").read_text()
    assert "server proxy:8787" in nginx
    assert "proxy_buffering off;" in nginx
    assert f"client_max_body_size {32}m;" in nginx  # --max-request-bytes' default


def test_a_killed_serve_leaves_no_workers_directory_behind(tmp_path: Path) -> None:
    """The workers' directory (in memory, /dev/shm) of a serve that was killed before it
    could remove it is removed by the next serve; a running one's is kept."""
    from streamrepair.cli.proxy import _remove_orphans

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = tmp_path / f"streamrepair-serve-{dead.pid}-abc"
    alive = tmp_path / f"streamrepair-serve-{os.getpid()}-def"
    other = tmp_path / "streamrepair-serve-notapid-x"
    for directory in (orphan, alive, other):
        directory.mkdir()
        (directory / "memos.sqlite3").write_bytes(b"x")
    _remove_orphans(tmp_path)
    assert not orphan.exists()
    assert alive.exists()
    assert other.exists()
