"""What a Redis that hangs or dies costs each request through ``streamrepair serve``.

A real ``redis-server`` on loopback, the fake upstream of ``bench_proxy_load.py`` (one
stream with a ``write_file`` call, in one write) and ``streamrepair serve --store ...``
with its default deadline and breaker, each in its own process. Four proxies, one per
store: the memory store, Redis answering, Redis frozen with ``SIGSTOP`` (it still
accepts connections, so every call waits for its deadline) and Redis killed (connections
refused). One client sends ``--requests`` rounds of requests, one to each proxy in turn
(so that all four meet the same load); each request's history mentions a call the proxy
sent before (so it looks memos up) and its answer carries a call (so it writes one). For each: the time of each of the first three requests, the
median of the rest, and what ``/healthz`` says at the end. No assertion is made
(``tests/test_proxy_store.py`` checks the breaker's behaviour); ``--write-docs`` puts the
results in docs/performance.md.

    python benchmarks/bench_proxy_store.py [--requests 30] [--write-docs]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import shutil
import signal
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

import httpx
from _report import write_section
from bench_proxy import TOOLS
from bench_proxy_load import _free_port, _upstream_main, _wait_http

HERE = Path(__file__).resolve().parent
HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "write a.py"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_00_bench",
                "type": "function",
                "function": {"name": "write_file", "arguments": '{"path": "a.py"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_00_bench", "content": "written"},
]


@contextlib.contextmanager
def redis_server() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed (Debian package redis-server)")
    port = _free_port()
    with tempfile.TemporaryDirectory() as workdir:
        command = [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", ""]
        command += ["--appendonly", "no", "--dir", workdir]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while True:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                    break
                if time.monotonic() > deadline:
                    raise SystemExit("redis-server did not start")
                time.sleep(0.05)
            yield f"redis://127.0.0.1:{port}/0", process
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGCONT)
            process.terminate()
            process.wait(10)


@contextlib.contextmanager
def proxy(upstream: str, store: str, workdir: Path) -> Iterator[str]:
    port = _free_port()
    command = [sys.executable, "-m", "streamrepair.cli", "serve", "--upstream", upstream]
    command += ["--port", str(port), "--store", store, "--no-access-log"]
    command += ["--telemetry", "off"]
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
    with open(workdir / "proxy.log", "ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=log, env=env)
        try:
            if not _wait_http(f"http://127.0.0.1:{port}/metrics", 30):
                raise SystemExit("the proxy did not start")
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            process.wait(15)


def run(bases: dict[str, str], requests: int) -> dict[str, tuple[list[float], str]]:
    """``requests`` rounds, each one request to every proxy in turn (so that all meet the
    same load); each request's time to the end of its body, and ``/healthz``'s store."""
    body = {"model": "burst", "stream": True, "tools": TOOLS, "messages": HISTORY}
    times: dict[str, list[float]] = {name: [] for name in bases}
    with httpx.Client(timeout=30) as client:
        for _ in range(requests):
            for name, base in bases.items():
                started = time.perf_counter()
                with client.stream("POST", f"{base}/v1/chat/completions", json=body) as answer:
                    for _ in answer.iter_raw():
                        pass
                    assert answer.status_code == 200, answer.status_code
                times[name].append(time.perf_counter() - started)
        health = {name: client.get(f"{base}/healthz").json() for name, base in bases.items()}
    return {name: (times[name], str(health[name].get("store"))) for name in bases}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    started_load = os.getloadavg()[0]
    when = time.strftime("%Y-%m-%d %H:%M")
    parent, child = multiprocessing.Pipe()
    upstream_process = multiprocessing.Process(
        target=_upstream_main, args=(child, 60, 0.005, 0.0), daemon=True
    )
    upstream_process.start()
    upstream = f"http://127.0.0.1:{parent.recv()}"
    try:
        with contextlib.ExitStack() as stack:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            answering, _ = stack.enter_context(redis_server())
            frozen, frozen_process = stack.enter_context(redis_server())
            dead, dead_process = stack.enter_context(redis_server())
            stores = {
                "memory": "memory",
                "Redis answering": answering,
                "Redis frozen (SIGSTOP)": frozen,
                "Redis dead (killed)": dead,
            }
            bases = {
                name: stack.enter_context(proxy(upstream, store, workdir))
                for name, store in stores.items()
            }
            run(bases, 3)  # warm-up: connections open, every breaker closed
            os.kill(frozen_process.pid, signal.SIGSTOP)
            dead_process.kill()
            dead_process.wait(10)
            rows = run(bases, args.requests)
    finally:
        upstream_process.terminate()
        upstream_process.join(5)
    baseline = statistics.median(rows["memory"][0][3:])
    lines = [
        "| store | request 1 (ms) | request 2 (ms) | request 3 (ms) "
        "| median of the rest (ms) | added to the rest (ms) | `/healthz` store |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, (times, health) in rows.items():
        rest = statistics.median(times[3:])
        first = " | ".join(f"{t * 1000:.1f}" for t in times[:3])
        lines.append(
            f"| {name} | {first} | {rest * 1000:.1f} | {(rest - baseline) * 1000:+.1f} | {health} |"
        )
    text = "\n".join(lines)
    summary = (
        f"Run of {when}, load average {started_load:.1f}; {args.requests} rounds of one "
        "request to each proxy in turn, each request looking one memo up and writing one; the "
        "store's defaults (0.25 s deadline, breaker open after 3 failures in a row, 5 s "
        "cool-down)."
    )
    print(text)
    print(summary)
    print(json.dumps({k: [round(t * 1000, 1) for t in v[0]] for k, v in rows.items()}))
    if args.write_docs:
        write_section("bench_proxy_store", summary + "\n\n" + text)


if __name__ == "__main__":
    main()
