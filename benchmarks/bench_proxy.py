"""The proxy's cost: added time to first byte, per-chunk overhead, 200 concurrent streams.

Three processes on loopback, so that no two share a GIL: a fake upstream (Starlette under
uvicorn) that answers every ``POST .../chat/completions`` at once with a prebuilt
DeepSeek-style stream (reasoning, text, one ``write_file`` call with a trailing comma to
repair), the proxy (``streamrepair.proxy.create_app`` under uvicorn, one worker), and
this client. Measured, as medians:

* **added TTFB**: time from sending the request to the first body byte, through the
  proxy minus straight to the upstream (requests interleaved, keep-alive connections);
* **per-chunk overhead**: time to read a whole stream of N events through the proxy
  minus straight, divided by N; and, without any network, the relay's own CPU time per
  upstream event (``Relay.feed`` one event at a time);
* **200 concurrent streams** through the one proxy process: errors, whether every
  client got exactly the bytes the proxy sends for that stream alone (no dropped or
  mixed bytes), throughput in upstream events per second, and the proxy's peak RSS
  growth per stream (``VmHWM``).

No assertion is made: this is a report (results in docs/performance.md).

    python benchmarks/bench_proxy.py            # full run (about a minute)
    python benchmarks/bench_proxy.py --quick    # fewer requests
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    }
]


def build_stream(events: int) -> bytes:
    """A DeepSeek-style stream of about ``events`` SSE events: a third reasoning, a third
    text, a third argument fragments of one call (with a trailing comma)."""
    head = {
        "id": "bench",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "deepseek-v4-flash",
    }

    def chunk(delta: dict[str, Any], reason: str | None = None) -> str:
        body = {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}
        return f"data: {json.dumps(body, separators=(',', ':'))}\n\n"

    third = max(1, events // 3)
    out = [chunk({"role": "assistant", "content": None, "reasoning_content": ""})]
    out += [chunk({"content": None, "reasoning_content": "think "}) for _ in range(third)]
    out += [chunk({"content": "word ", "reasoning_content": None}) for _ in range(third)]
    args = '{"path": "a.py", "content": "' + "x = 1\\n" * third + '",}'
    pieces = [args[i : i + 7] for i in range(0, len(args), 7)]
    first = {"index": 0, "id": "call_00_bench", "type": "function"}
    out.append(
        chunk({"tool_calls": [{**first, "function": {"name": "write_file", "arguments": ""}}]})
    )
    out += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces]
    out.append(chunk({"content": "", "reasoning_content": None}, "tool_calls"))
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


# -- the two servers (child processes) ----------------------------------------------------


def _upstream_main(port_out: Any, sizes: list[int]) -> None:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    streams = {n: build_stream(n) for n in sizes}

    async def handle(request: Request) -> StreamingResponse:
        body = json.loads(await request.body())
        data = streams[int(body.get("max_tokens", sizes[0]))]
        events = data.split(b"\n\n")[:-1]

        async def gen() -> Any:
            for event in events:
                yield event + b"\n\n"

        return StreamingResponse(gen(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/{path:path}", handle, methods=["POST"])])
    _serve(app, port_out)


def _proxy_main(port_out: Any, upstream: str) -> None:
    from streamrepair.proxy import ProxyConfig, create_app

    _serve(create_app(ProxyConfig(upstream=upstream, access_log=False)), port_out)


def _serve(app: Any, port_out: Any) -> None:
    import socket

    import uvicorn

    # proto IPPROTO_TCP: asyncio sets TCP_NODELAY only on such sockets (uvicorn's own
    # binding does the same); without it Nagle and delayed ACKs add 40 ms per response.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    port_out.send(sock.getsockname()[1])
    config = uvicorn.Config(app, log_level="error", access_log=False, lifespan="on", backlog=1024)
    uvicorn.Server(config).run(sockets=[sock])


def _start(target: Any, *args: Any) -> tuple[multiprocessing.Process, int]:
    parent, child = multiprocessing.Pipe()
    process = multiprocessing.Process(target=target, args=(child, *args), daemon=True)
    process.start()
    return process, int(parent.recv())


# -- measurements -------------------------------------------------------------------------


def _request(events: int) -> dict[str, Any]:
    return {
        "model": "deepseek-v4-flash",
        "messages": [{"role": "user", "content": "write it"}],
        "tools": TOOLS,
        "stream": True,
        "max_tokens": events,
    }


#: The three ways to the upstream: straight, through the proxy on a path it relays, and
#: through the proxy on a path it only passes through (the same stack, no relay): the
#: last one separates what the extra HTTP hop costs from what repairing costs.
ROUTES = (
    ("direct", "direct", "/v1/chat/completions"),
    ("proxy", "proxy", "/v1/chat/completions"),
    ("hop", "proxy", "/v1/raw/chat/completions/pass"),
)


def _timed(
    direct: str, proxy: str, events: int, rounds: int, warm: int, ttfb: bool
) -> dict[str, float]:
    import httpx

    bases = {"direct": direct, "proxy": proxy}
    body = json.dumps(_request(events)).encode()
    headers = {"content-type": "application/json"}
    times: dict[str, list[float]] = {name: [] for name, _, _ in ROUTES}
    with httpx.Client(timeout=60) as client:
        for i in range(rounds + warm):
            for name, base, path in ROUTES:  # interleaved
                start = time.perf_counter()
                with client.stream("POST", bases[base] + path, content=body, headers=headers) as r:
                    pieces = r.iter_raw()
                    next(pieces)
                    first = time.perf_counter() - start
                    for _ in pieces:
                        pass
                if i >= warm:
                    times[name].append(first if ttfb else time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def relay_cpu(events: int, rounds: int) -> float:
    from streamrepair.proxy import ChatRelay

    data = build_stream(events)
    pieces = [e + b"\n\n" for e in data.split(b"\n\n")[:-1]]
    per: list[float] = []
    for _ in range(rounds):
        relay = ChatRelay(tools=TOOLS)
        start = time.perf_counter()
        for piece in pieces:
            relay.feed(piece)
        relay.finish()
        relay.final()
        per.append((time.perf_counter() - start) / len(pieces))
    return statistics.median(per)


async def concurrent(proxy: str, streams: int, events: int) -> dict[str, Any]:
    import httpx

    body = json.dumps(_request(events)).encode()
    headers = {"content-type": "application/json"}
    limits = httpx.Limits(max_connections=streams + 10, max_keepalive_connections=streams + 10)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:

        async def one() -> bytes:
            async with client.stream(
                "POST", f"{proxy}/v1/chat/completions", content=body, headers=headers
            ) as r:
                r.raise_for_status()
                return b"".join([piece async for piece in r.aiter_raw()])

        reference = await one()
        start = time.perf_counter()
        results = await asyncio.gather(*(one() for _ in range(streams)), return_exceptions=True)
        wall = time.perf_counter() - start
    errors = [r for r in results if isinstance(r, BaseException)]
    same = sum(1 for r in results if r == reference)
    upstream_events = build_stream(events).count(b"\n\n")
    return {
        "errors": len(errors),
        "identical": same,
        "wall": wall,
        "events_per_s": streams * upstream_events / wall,
        "first_error": repr(errors[0]) if errors else "",
    }


def rss_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    options = parser.parse_args()
    rounds = 60 if options.quick else 300
    sizes = [30, 600, 2000]
    upstream_process, upstream_port = _start(_upstream_main, sizes)
    direct = f"http://127.0.0.1:{upstream_port}"
    proxy_process, proxy_port = _start(_proxy_main, direct)
    proxy = f"http://127.0.0.1:{proxy_port}"
    try:
        time.sleep(0.5)
        t = _timed(direct, proxy, 30, rounds, 10, ttfb=True)
        print(
            f"TTFB median: direct {t['direct'] * 1e3:.2f} ms, proxy {t['proxy'] * 1e3:.2f} ms "
            f"(added {(t['proxy'] - t['direct']) * 1e3:.2f} ms), pass-through hop "
            f"{t['hop'] * 1e3:.2f} ms (added {(t['hop'] - t['direct']) * 1e3:.2f} ms)"
        )
        for events in (600, 2000):
            m = _timed(direct, proxy, events, 10 if options.quick else 30, 3, ttfb=False)
            n = build_stream(events).count(b"\n\n")
            print(
                f"{n} events: direct {m['direct'] * 1e3:.1f} ms, proxy {m['proxy'] * 1e3:.1f} ms, "
                f"hop {m['hop'] * 1e3:.1f} ms; added per event: proxy "
                f"{(m['proxy'] - m['direct']) / n * 1e6:.1f} us, hop "
                f"{(m['hop'] - m['direct']) / n * 1e6:.1f} us"
            )
        print(f"relay CPU per event (no network): {relay_cpu(2000, 20) * 1e6:.1f} us")
        base = rss_kib(proxy_process.pid, "VmRSS")
        result = asyncio.run(concurrent(proxy, 200, 600))
        peak = rss_kib(proxy_process.pid, "VmHWM")
        events_600 = build_stream(600).count(b"\n\n")
        print(
            f"200 concurrent streams of {events_600} events: "
            f"errors {result['errors']}, byte-identical {result['identical']}/200, "
            f"wall {result['wall']:.2f} s, {result['events_per_s']:.0f} upstream events/s, "
            f"proxy RSS {base / 1024:.0f} MiB -> peak {peak / 1024:.0f} MiB "
            f"({(peak - base) / 200:.0f} KiB per stream) {result['first_error']}"
        )
    finally:
        for process in (proxy_process, upstream_process):
            process.terminate()
            process.join(5)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
