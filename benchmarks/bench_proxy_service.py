"""The proxy as a service under abuse and at scale (issue 22), each measured before and
after its fix in the same run, on loopback:

* **a large body stalls other streams**: while one client sends a 10 MiB and then a
  30 MiB history, the longest gap between two events of a paced stream another client
  is reading, with the body worked on on the event loop (``large_body_bytes`` past any
  body: before) and off it, stepwise (the default: after);
* **large bodies at once**: the proxy's peak resident memory while 8 clients send a
  31 MiB body at once, with no bound on the bytes in flight (before) and with the
  default bound (after: past it, 503);
* **the memo store per request**: one lookup and one write of a memo, as a request that
  mentions a call and streams one makes them: the memory store (one process), the
  SQLite file the workers share (``shared_store.py``) and a real ``redis-server``;
* **slowloris**: ``--slow`` connections (3,000) sending a header byte every second:
  how many are still open after the head timeout (10 s) and how long an ordinary
  request takes meanwhile, through ``streamrepair serve`` (its guarded protocol) and
  through plain uvicorn (before);
* **workers** (``--workers-sizes``): ``bench_proxy_load.py``'s paced phases (its
  upstream, clients and checks) against direct, its bare pass-through, and
  ``streamrepair serve`` with one worker and with one per core, in one run. On a machine
  whose cores the clients and the upstream share, more workers also take CPU from the
  clients, whose own delays count in the time to first byte.

Every server runs in its own process (the client's work never shares its interpreter
lock). Medians and maxima are printed; ``--write-docs`` puts them in
docs/performance.md. No assertion is made.

    python benchmarks/bench_proxy_service.py [--quick] [--write-docs]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import bench_proxy_load as load
from _report import write_section
from bench_proxy import TOOLS
from bench_proxy_load import _free_port, _wait_http, stream_events

from streamrepair.proxy import CallMemo, ProxyConfig, memo_key

HERE = Path(__file__).resolve().parent


# -- servers in processes of their own ---------------------------------------------------------


def _proxy_main(port: int, upstream: str, options: dict[str, Any], guarded: bool) -> None:
    import uvicorn

    from streamrepair.proxy import create_app
    from streamrepair.proxy.server import guarded_protocol

    config = ProxyConfig(upstream=upstream, access_log=False, **options)
    http: Any = "httptools"
    if guarded:
        http = guarded_protocol(config.max_header_bytes, config.header_timeout)
    uvicorn.run(
        create_app(config),
        host="127.0.0.1",
        port=port,
        log_level="error",
        access_log=False,
        http=http,
        backlog=4096,
    )


def _upstream_main(port_out: Any, events: int, pace: float) -> None:
    """``bench_proxy_load.py``'s paced upstream (one event per write, ``pace`` apart),
    reading request bodies of any size in linear time: a history of tens of MiB must not
    stall the other streams here, or the measure would be the upstream's."""
    import uvloop

    loop = uvloop.new_event_loop()
    asyncio.set_event_loop(loop)
    chunks = [b"%x\r\n%s\r\n" % (len(e), e) for e in stream_events(events)]
    # ?text: the stream without its call, so that nothing is held back by the proxy
    texts = [c for c in chunks if b'"tool_calls"' not in c]
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    )

    class Upstream(asyncio.Protocol):
        def connection_made(self, transport: Any) -> None:
            self.transport = transport
            self.head = bytearray()
            self.body_left = -1  # -1: reading a head
            self.stream = chunks

        def connection_lost(self, exc: Exception | None) -> None:
            self.transport = None

        def data_received(self, data: bytes) -> None:
            while data:
                if self.body_left < 0:
                    start = max(0, len(self.head) - 3)
                    self.head += data
                    cut = self.head.find(b"\r\n\r\n", start)
                    if cut < 0:
                        return
                    data = bytes(self.head[cut + 4 :])
                    line = bytes(self.head[: self.head.find(b"\r\n")])
                    self.stream = texts if b"?text" in line else chunks
                    length = 0
                    for line in bytes(self.head[:cut]).split(b"\r\n")[1:]:
                        name, _, value = line.partition(b":")
                        if name.strip().lower() == b"content-length":
                            length = int(value)
                    self.head = bytearray()
                    self.body_left = length
                taken = min(self.body_left, len(data))
                self.body_left -= taken
                data = data[taken:]
                if self.body_left == 0:
                    self.body_left = -1
                    self.transport.write(head + self.stream[0])
                    loop.call_later(pace, self.tick, self.stream, 1)

        def tick(self, stream: list[bytes], i: int) -> None:
            if self.transport is None:
                return
            if i + 1 < len(stream):
                self.transport.write(stream[i])
                loop.call_later(pace, self.tick, stream, i + 1)
            else:
                self.transport.write(stream[i] + b"0\r\n\r\n")

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port_out.send(sock.getsockname()[1])
    loop.run_until_complete(loop.create_server(Upstream, sock=sock, backlog=4096))
    loop.run_forever()


@contextlib.contextmanager
def upstream(events: int = 60, pace: float = 0.005) -> Iterator[tuple[str, int]]:
    parent, child = multiprocessing.Pipe()
    process = multiprocessing.Process(
        target=_upstream_main, args=(child, events, pace), daemon=True
    )
    process.start()
    try:
        yield f"http://127.0.0.1:{parent.recv()}", process.pid or 0
    finally:
        process.terminate()
        process.join(5)


@contextlib.contextmanager
def proxy(url: str, *, guarded: bool = True, **options: Any) -> Iterator[tuple[str, int]]:
    port = _free_port()
    process = multiprocessing.Process(
        target=_proxy_main, args=(port, url, options, guarded), daemon=True
    )
    process.start()
    base = f"http://127.0.0.1:{port}"
    try:
        if not _wait_http(f"{base}/healthz", 30):
            raise RuntimeError("the proxy did not start")
        yield base, process.pid or 0
    finally:
        process.terminate()
        process.join(10)


def _peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def _history(size: int) -> bytes:
    """A Chat request whose history is about ``size`` bytes (long tool results)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    total = 0
    n = 0
    while total < size:
        call = {"id": f"c{n}", "type": "function"}
        call["function"] = {"name": "write_file", "arguments": json.dumps({"path": "a"})}
        turn = [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": "r" * 20_000},
        ]
        messages += turn
        total += len(json.dumps(turn))
        n += 1
    body = {"model": "paced", "stream": True, "tools": TOOLS, "messages": messages}
    return json.dumps(body).encode()


# -- a large body stalls the other streams ---------------------------------------------------


async def _stall(base: str, bodies: list[bytes]) -> float:
    """The longest gap (s) between two reads of a paced stream while ``bodies`` are sent
    one after the other on another connection."""
    import aiohttp

    gaps: list[float] = []
    small = json.dumps(
        {
            "model": "paced",
            "stream": True,
            "tools": TOOLS,
            "messages": [{"role": "user", "content": "x"}],
        }
    ).encode()
    headers = {"content-type": "application/json"}
    async with aiohttp.ClientSession() as session:
        stop = asyncio.Event()

        async def reader() -> None:
            while not stop.is_set():
                url = f"{base}/v1/chat/completions?text"
                async with session.post(url, data=small, headers=headers) as r:
                    last = None
                    async for _ in r.content.iter_any():
                        now = time.perf_counter()
                        if last is not None:  # from its first event to its last
                            gaps.append(now - last)
                        last = now

        task = asyncio.create_task(reader())
        await asyncio.sleep(0.5)
        gaps.clear()
        for body in bodies:
            async with session.post(f"{base}/v1/chat/completions", data=body, headers=headers) as r:
                await r.read()
            await asyncio.sleep(0.2)
        stop.set()
        await task
    return max(gaps)


def measure_stall(url: str, sizes: list[int], rounds: int) -> list[tuple[str, int, float]]:
    bodies = {size: _history(size) for size in sizes}
    out = []
    for label, options in (
        ("on the event loop (before)", {"large_body_bytes": 1 << 40}),
        ("off the loop, stepwise (after)", {}),
    ):
        with proxy(url, **options) as (base, _):
            for size in sizes:
                stalls = [asyncio.run(_stall(base, [bodies[size]])) for _ in range(rounds)]
                out.append((label, size, statistics.median(stalls)))
    return out


# -- large bodies at once ---------------------------------------------------------------------


async def _flood(base: str, body: bytes, clients: int) -> dict[int, int]:
    import aiohttp

    statuses: dict[int, int] = {}
    async with aiohttp.ClientSession() as session:

        async def one() -> None:
            async with session.post(
                f"{base}/v1/chat/completions",
                data=body,
                headers={"content-type": "application/json"},
            ) as r:
                await r.read()
                statuses[r.status] = statuses.get(r.status, 0) + 1

        await asyncio.gather(*(one() for _ in range(clients)))
    return statuses


def measure_memory(url: str, size: int, clients: int) -> list[tuple[str, int, dict[int, int]]]:
    body = _history(size)
    out = []
    for label, options in (
        ("no bound on bytes in flight (before)", {"max_bytes_in_flight": 1 << 40}),
        ("default bound, 128 MiB (after)", {}),
    ):
        with proxy(url, **options) as (base, pid):
            statuses = asyncio.run(_flood(base, body, clients))
            out.append((label, _peak_rss(pid), statuses))
    return out


# -- the store per request ---------------------------------------------------------------------


def measure_stores(rounds: int) -> list[tuple[str, float]]:
    from streamrepair.proxy import MemoryStore, RedisStore
    from streamrepair.proxy.shared_store import SqliteStore, create_file

    memo = CallMemo(call_id="c", tool="write_file", reasoning="think " * 200)

    async def per_request(store: Any) -> float:
        times = []
        for n in range(rounds):
            started = time.perf_counter()
            await store.lookup([memo_key("k", f"c{n - 1}")])
            await store.put({memo_key("k", f"c{n}"): memo})
            times.append(time.perf_counter() - started)
        await store.close()
        return statistics.median(times)

    out = [("memory (one process)", asyncio.run(per_request(MemoryStore())))]
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(dir=base) as workdir:
        path = Path(workdir) / "memos.sqlite3"
        create_file(path)
        out.append(
            ("SQLite file in /dev/shm (workers)", asyncio.run(per_request(SqliteStore(path))))
        )
    binary = shutil.which("redis-server")
    if binary is not None:
        port = _free_port()
        with tempfile.TemporaryDirectory() as workdir:
            server = subprocess.Popen(
                [
                    binary,
                    "--bind",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--save",
                    "",
                    "--dir",
                    workdir,
                ],
                stdout=subprocess.DEVNULL,
            )
            try:
                time.sleep(0.5)
                store = RedisStore(f"redis://127.0.0.1:{port}/0")
                out.append(("Redis on loopback (machines)", asyncio.run(per_request(store))))
            finally:
                server.terminate()
                server.wait(10)
    return out


# -- slowloris ------------------------------------------------------------------------------------


def measure_slowloris(url: str, connections: int, seconds: float) -> list[tuple[str, int, float]]:
    out = []
    for label, guarded in (("plain uvicorn (before)", False), ("streamrepair serve (after)", True)):
        with proxy(url, guarded=guarded) as (base, _):
            host, port = base.removeprefix("http://").split(":")
            socks = []
            for _ in range(connections):
                sock = socket.create_connection((host, int(port)))
                sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\n")
                sock.setblocking(False)
                socks.append(sock)
            started = time.monotonic()
            latency = 0.0
            open_ = set(range(connections))
            while time.monotonic() - started < seconds:
                for i in list(open_):
                    try:
                        socks[i].send(b"x")
                        if socks[i].recv(1024) == b"":
                            open_.discard(i)
                    except BlockingIOError:
                        pass
                    except OSError:
                        open_.discard(i)
                begun = time.perf_counter()
                with contextlib.suppress(OSError):
                    import urllib.request

                    urllib.request.urlopen(f"{base}/healthz", timeout=10).read()
                latency = max(latency, time.perf_counter() - begun)
                time.sleep(1.0)
            for sock in socks:
                sock.close()
            out.append((label, len(open_), latency))
    return out


# -- workers ---------------------------------------------------------------------------------------


def measure_workers(sizes: list[int], requests: int) -> str:
    """Paced phases: direct, bare, serve --workers 1, serve with one worker per core."""
    from streamrepair.proxy.server import default_workers

    events = load.stream_events(60)
    raw, repaired = load.call_of(events)
    pace = 0.005
    parent, child = multiprocessing.Pipe()
    up = multiprocessing.Process(
        target=load._upstream_main, args=(child, 60, pace, 0.0), daemon=True
    )
    up.start()
    url = f"http://127.0.0.1:{parent.recv()}"
    targets: list[load.Target] = []
    phases: list[load.Phase] = []
    cores = default_workers()
    try:
        with tempfile.TemporaryDirectory() as workdir:
            targets.append(load.start_target("direct", url, Path(workdir), None))
            targets.append(load.start_target("bare", url, Path(workdir), None))
            for workers in (1, cores):
                port = _free_port()
                command = [sys.executable, "-m", "streamrepair.cli", "serve", "--upstream", url]
                command += ["--port", str(port), "--workers", str(workers)]
                command += ["--telemetry", str(Path(workdir) / f"telemetry-{workers}.jsonl")]
                log = open(Path(workdir) / f"serve-{workers}.log", "wb")  # noqa: SIM115
                env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
                process = subprocess.Popen(command, stdout=log, stderr=log, env=env)
                target = load.Target(
                    f"serve --workers {workers}", f"http://127.0.0.1:{port}/v1", process, log
                )
                if not _wait_http(f"http://127.0.0.1:{port}/healthz", 30):
                    raise RuntimeError("serve did not start")
                targets.append(target)
            for target in targets:
                load.warm_up(target, raw, repaired)
            for clients in sizes:
                for target in targets:
                    phase = load.measure(
                        target,
                        up.pid or 0,
                        "paced",
                        clients,
                        requests,
                        len(events),
                        pace * len(events),
                        raw,
                        repaired,
                    )
                    phases.append(phase)
                    print(load.table([phase]).splitlines()[-1], flush=True)
    finally:
        for target in targets:
            target.stop()
        up.terminate()
        up.join(5)
    lines = [
        "| clients | target | completed | errors | corrupted | TTFB p50 (ms) | TTFB p95 (ms) "
        "| p50 vs direct | proxy CPU per event (µs) | wall (s) | problems |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    direct = {p.clients: p for p in phases if p.target == "direct"}
    for p in phases:
        base = direct[p.clients]
        ratio = "" if p.target == "direct" else f"{p.percentile(0.5) / base.percentile(0.5):.1f}x"
        cpu = "" if p.cpu_per_event is None else f"{p.cpu_per_event * 1e6:.0f}"
        lines.append(
            f"| {p.clients} | {p.target} | {p.completed} | {p.errors} | {p.problems['corrupted']} "
            f"| {p.percentile(0.5) * 1000:.1f} | {p.percentile(0.95) * 1000:.1f} | {ratio} "
            f"| {cpu} | {p.wall:.1f} | {', '.join(f'{n} {k}' for k, n in p.problems.items())} |"
        )
    return "\n".join(lines)


# -- the report -----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller bodies, fewer connections")
    parser.add_argument("--write-docs", action="store_true", help="update docs/performance.md")
    parser.add_argument("--workers-sizes", default="50,200,500", help="paced clients per phase")
    parser.add_argument("--only-workers", action="store_true", help="only the workers phases")
    args = parser.parse_args()
    sizes = [2 * 2**20, 6 * 2**20] if args.quick else [10 * 2**20, 30 * 2**20]
    slow = 300 if args.quick else 3000
    load = os.getloadavg()[0]
    when = time.strftime("%Y-%m-%d %H:%M")
    sections = []
    sizes_w = [int(n) for n in args.workers_sizes.split(",") if n]
    if sizes_w:
        sections.append(measure_workers(sizes_w, 2))
        print(sections[-1], flush=True)
    if args.only_workers:
        return
    with upstream() as (url, _):
        stall = measure_stall(url, sizes, rounds=1 if args.quick else 3)
        lines = [
            "| body worked on | history | longest gap of another stream (ms) |",
            "|---|---|---|",
        ]
        lines += [
            f"| {label} | {size // 2**20} MiB | {gap * 1000:.0f} |" for label, size, gap in stall
        ]
        sections.append("\n".join(lines))
        print(sections[-1], flush=True)
        memory = measure_memory(url, (8 if args.quick else 31) * 2**20, 8)
        lines = ["| bytes in flight | peak memory (MB) | answers |", "|---|---|---|"]
        lines += [
            f"| {label} | {rss / 1e6:.0f} | {', '.join(f'{n} x {s}' for s, n in sorted(st.items()))} |"
            for label, rss, st in memory
        ]
        sections.append("\n".join(lines))
        print(sections[-1], flush=True)
        hold = 15.0
        loris = measure_slowloris(url, slow, hold)
        lines = [
            f"| server | of {slow} slowloris connections, open after {hold:.0f} s | slowest `/healthz` meanwhile (ms) |",
            "|---|---|---|",
        ]
        lines += [f"| {label} | {n} | {lat * 1000:.0f} |" for label, n, lat in loris]
        sections.append("\n".join(lines))
        print(sections[-1], flush=True)
    stores = measure_stores(200 if args.quick else 2000)
    lines = ["| store | one lookup and one write (µs, median) |", "|---|---|"]
    lines += [f"| {label} | {t * 1e6:.0f} |" for label, t in stores]
    sections.append("\n".join(lines))
    print(sections[-1], flush=True)
    summary = (
        f"Run of {when} on {os.cpu_count()} cores shared with other work (load average "
        f"{load:.1f} at the start); histories of {', '.join(f'{s // 2**20} MiB' for s in sizes)}; "
        "paced streams of 69 events 5 ms apart."
    )
    print(summary)
    if args.write_docs:
        write_section("bench_proxy_service", "\n\n".join([summary, *sections]))


if __name__ == "__main__":
    main()
