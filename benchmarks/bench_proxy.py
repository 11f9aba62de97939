"""The proxy's cost: added time to first byte, per-chunk overhead, 200 concurrent streams.

Four processes on loopback, so that no two share a GIL: a fake upstream (Starlette under
uvicorn) that answers every ``POST .../chat/completions`` at once with a prebuilt
DeepSeek-style stream (reasoning, text, one ``write_file`` call with a trailing comma to
repair), the proxy (``streamrepair.proxy.create_app`` under uvicorn, one worker, its
aiohttp upstream client), the same proxy on httpx's client (``create_app(transport=...)``:
the comparison that chose aiohttp), and this client. Measured, as medians:

* **added TTFB**: time from sending the request to the first body byte, through the
  proxy minus straight to the upstream (requests interleaved, keep-alive connections);
* **per-chunk overhead**: time to read a whole stream of N events through the proxy
  minus straight, divided by N; the proxy process's CPU time per upstream event (from
  ``/proc``: less sensitive to the machine's load than wall time); and, without any
  network, the relay's own CPU time per upstream event (``Relay.feed`` one event at a
  time);
* **200 concurrent streams** through the one proxy process: errors, whether every
  client got exactly the bytes the proxy sends for that stream alone (no dropped or
  mixed bytes), throughput in upstream events per second, and the proxy's peak RSS
  growth per stream (``VmHWM``).

The TTFB and per-chunk measurements are repeated ``--runs`` times (each run interleaves
the routes); the report gives each run's median and the median of the runs. No
assertion is made: this is a report (``--write-docs`` puts it in docs/performance.md).

    python benchmarks/bench_proxy.py                 # full run (a few minutes)
    python benchmarks/bench_proxy.py --quick         # fewer requests, one run
    python benchmarks/bench_proxy.py --write-docs    # and update docs/performance.md
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

from _report import write_section

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


def _proxy_main(port_out: Any, upstream: str, client: str = "aiohttp") -> None:
    from streamrepair.proxy import ProxyConfig, create_app

    transport = None
    if client == "httpx":
        import httpx

        transport = httpx.AsyncHTTPTransport()
    app = create_app(ProxyConfig(upstream=upstream, access_log=False), transport=transport)
    _serve(app, port_out)


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
    """Run ``target(port_pipe, *args)`` in a child process; return it and its port."""
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


#: The ways to the upstream: straight, through the proxy on a path it relays, through the
#: proxy on a path it only passes through (the same stack, no relay: what the extra HTTP
#: hop costs by itself), and through the proxy running on httpx's client.
ROUTES = (
    ("direct", "direct", "/v1/chat/completions"),
    ("proxy", "proxy", "/v1/chat/completions"),
    ("hop", "proxy", "/v1/raw/chat/completions/pass"),
    ("httpx", "httpx", "/v1/chat/completions"),
)


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _timed(
    bases: dict[str, str],
    pids: dict[str, int],
    events: int,
    rounds: int,
    warm: int,
    ttfb: bool,
) -> dict[str, tuple[float, float]]:
    """Per route: (median seconds to the first byte or to the end, the serving process's
    CPU seconds per request, summed over the rounds and divided by them)."""
    import httpx

    body = json.dumps(_request(events)).encode()
    headers = {"content-type": "application/json"}
    times: dict[str, list[float]] = {name: [] for name, _, _ in ROUTES}
    cpu: dict[str, float] = {name: 0.0 for name, _, _ in ROUTES}
    with httpx.Client(timeout=60) as client:
        for i in range(rounds + warm):
            for name, base, path in ROUTES:  # interleaved
                pid = pids.get(base)
                before = _cpu(pid) if pid else 0.0
                start = time.perf_counter()
                with client.stream("POST", bases[base] + path, content=body, headers=headers) as r:
                    pieces = r.iter_raw()
                    next(pieces)
                    first = time.perf_counter() - start
                    for _ in pieces:
                        pass
                if i >= warm:
                    times[name].append(first if ttfb else time.perf_counter() - start)
                    if pid:
                        cpu[name] += _cpu(pid) - before
    return {name: (statistics.median(times[name]), cpu[name] / rounds) for name in times}


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


def measure(bases: dict[str, str], pids: dict[str, int], quick: bool) -> dict[str, float]:
    """One run of the TTFB and per-chunk measurements."""
    out: dict[str, float] = {}
    t = _timed(bases, pids, 30, 60 if quick else 300, 10, ttfb=True)
    for name in ("proxy", "hop", "httpx"):
        out[f"ttfb_{name}"] = (t[name][0] - t["direct"][0]) * 1e3
    out["ttfb_direct"] = t["direct"][0] * 1e3
    for events in (600, 2000):
        m = _timed(bases, pids, events, 10 if quick else 30, 3, ttfb=False)
        n = build_stream(events).count(b"\n\n")
        for name in ("proxy", "hop", "httpx"):
            out[f"event{n}_{name}"] = (m[name][0] - m["direct"][0]) / n * 1e6
            out[f"cpu{n}_{name}"] = m[name][1] / n * 1e6
    out["relay_cpu"] = relay_cpu(2000, 20) * 1e6
    return out


ROWS = (
    ("ttfb_proxy", "added time to first byte, proxy (target ≤ 2 ms)", "ms", 2),
    ("ttfb_hop", "added time to first byte, pass-through hop", "ms", 2),
    ("ttfb_httpx", "added time to first byte, proxy on httpx", "ms", 2),
    ("event609_proxy", "added per upstream event, 609 events, proxy (target ≤ 50 µs)", "µs", 1),
    ("event2007_proxy", "added per upstream event, 2007 events, proxy (target ≤ 50 µs)", "µs", 1),
    ("event2007_hop", "added per upstream event, 2007 events, pass-through hop", "µs", 1),
    ("event2007_httpx", "added per upstream event, 2007 events, proxy on httpx", "µs", 1),
    ("cpu2007_proxy", "proxy CPU per upstream event, 2007 events, proxy", "µs", 1),
    ("cpu2007_hop", "proxy CPU per upstream event, 2007 events, pass-through hop", "µs", 1),
    ("cpu2007_httpx", "proxy CPU per upstream event, 2007 events, proxy on httpx", "µs", 1),
    ("relay_cpu", "relay CPU per upstream event, no network (`Relay.feed`)", "µs", 1),
)


def report(runs: list[dict[str, float]], concurrent: dict[str, Any], when: str) -> str:
    head = " | ".join(f"run {k + 1}" for k in range(len(runs)))
    lines = [
        f"Run of {when}, {len(runs)} runs (each interleaving the routes; medians of "
        f"{'60' if len(runs) == 1 else '300'} requests for TTFB and 10-30 streams per size "
        f"for the per-event figures). Load average at the start: {os.getloadavg()[0]:.1f}.",
        "",
        f"| measure | {head} | median |",
        "|---|" + "---|" * (len(runs) + 1),
    ]
    for key, label, unit, digits in ROWS:
        values = [r[key] for r in runs]
        cells = " | ".join(f"{v:.{digits}f}" for v in values)
        lines.append(f"| {label} ({unit}) | {cells} | **{statistics.median(values):.{digits}f}** |")
    lines += [
        "",
        f"200 concurrent streams of {concurrent['events']} events through one proxy process: "
        f"{concurrent['errors']} errors, {concurrent['identical']}/200 responses byte-identical "
        f"to the same stream relayed alone, {concurrent['events_per_s']:,.0f} upstream events/s "
        f"({concurrent['wall']:.2f} s wall on 2 shared cores, client and upstream included), "
        f"proxy RSS {concurrent['base'] / 1024:.0f} MiB → peak {concurrent['peak'] / 1024:.0f} MiB "
        f"(about {(concurrent['peak'] - concurrent['base']) / 200:.0f} KiB per stream).",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--runs", type=int, default=None, help="repetitions (default 3; 1 with --quick)"
    )
    parser.add_argument("--write-docs", action="store_true", help="update docs/performance.md")
    options = parser.parse_args()
    runs = options.runs or (1 if options.quick else 3)
    sizes = [30, 600, 2000]
    upstream_process, upstream_port = _start(_upstream_main, sizes)
    direct = f"http://127.0.0.1:{upstream_port}"
    proxy_process, proxy_port = _start(_proxy_main, direct)
    httpx_process, httpx_port = _start(_proxy_main, direct, "httpx")
    proxy = f"http://127.0.0.1:{proxy_port}"
    bases = {"direct": direct, "proxy": proxy, "httpx": f"http://127.0.0.1:{httpx_port}"}
    pids = {"proxy": proxy_process.pid or 0, "httpx": httpx_process.pid or 0}
    when = time.strftime("%Y-%m-%d")
    try:
        time.sleep(0.5)
        results = []
        for k in range(runs):
            result = measure(bases, pids, options.quick)
            results.append(result)
            print(
                f"run {k + 1}: added TTFB proxy {result['ttfb_proxy']:.2f} ms (hop "
                f"{result['ttfb_hop']:.2f}, on httpx {result['ttfb_httpx']:.2f}); added per "
                f"event (2007) proxy {result['event2007_proxy']:.1f} us (hop "
                f"{result['event2007_hop']:.1f}, on httpx {result['event2007_httpx']:.1f}); "
                f"proxy CPU per event {result['cpu2007_proxy']:.1f} us (on httpx "
                f"{result['cpu2007_httpx']:.1f}); relay CPU {result['relay_cpu']:.1f} us",
                flush=True,
            )
        base = rss_kib(proxy_process.pid or 0, "VmRSS")
        concurrent_result = asyncio.run(concurrent(proxy, 200, 600))
        peak = rss_kib(proxy_process.pid or 0, "VmHWM")
        concurrent_result.update(base=base, peak=peak, events=build_stream(600).count(b"\n\n"))
        text = report(results, concurrent_result, when)
        print()
        print(text)
        if concurrent_result["first_error"]:
            print(concurrent_result["first_error"])
        if options.write_docs:
            write_section("bench_proxy", text)
    finally:
        for process in (proxy_process, httpx_process, upstream_process):
            process.terminate()
            process.join(5)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
