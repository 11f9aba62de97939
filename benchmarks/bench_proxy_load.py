"""The proxy under load: many concurrent clients, paced streams, four targets in one run.

A fast fake upstream on loopback (a bare asyncio protocol on uvloop, its own process)
answers every ``POST`` with a DeepSeek-style Chat Completions stream (a third reasoning,
a third text, a third the argument fragments of one ``write_file`` call with a trailing
comma to repair; ``bench_proxy.build_stream``). **Paced**: one SSE event per write,
``--pace-ms`` apart (LLM streams send a token every few milliseconds, so a proxy pays
for every event on its own); **burst**: the whole stream in one write (what
``bench_proxy.py`` measures). N clients (``--sizes``, default 50, 200, 500), each sending
``--requests`` streamed requests one after the other (the starts spread over one stream's
length), against four targets in turn, each in its own process:

* ``direct``: straight to the upstream;
* ``bare``: ``benchmarks/bare_proxy.py``, an aiohttp pass-through in about 40 lines (the
  floor for a Python proxy);
* ``bare-asgi``: ``benchmarks/bare_asgi_proxy.py``, the same pass-through as an ASGI app on
  the server stack ``serve`` runs on (uvicorn, httptools, uvloop);
* ``streamrepair``: ``streamrepair serve --upstream ...`` as an operator runs it (its
  defaults: one worker per core, access log on, telemetry to a temporary file);
  ``--workers 1,2`` runs one target per worker count instead (``streamrepair -w1``...),
  and ``--compare-with TREE`` adds the same for another source tree, an earlier commit
  say (``before -w1``..., run from ``TREE/src``), so that before and after meet the same
  load in one run;
* ``litellm``: LiteLLM's proxy (``litellm --config``, one worker, offline:
  ``LITELLM_LOCAL_MODEL_COST_MAP``), installed into its own venv under
  ``~/.cache/streamrepair-bench`` (never into the project's); skipped, saying why, when
  it cannot be installed.

Measured per target, mode and size: requests completed, errors (a status other than 200,
a transport error, a stream without ``[DONE]``), requests left unfinished at the phase's
time limit (``PHASE_SECONDS``), corrupted arguments (every streamed call's arguments are
put together and must be the upstream's text as sent, or, through streamrepair, its
repaired value), time to the first body byte (p50, p95; each client's first request,
which opens its connection, is not timed), and the proxy's CPU time per relayed upstream
event (user + system of the proxy's processes from ``/proc/<pid>/stat``, over the phase,
divided by the events relayed). The targets run one after the other within each mode and
size, so that they meet the same load. Medians and ratios are printed; ``--write-docs``
puts them in docs/performance.md. No assertion is made. Everything runs on this
machine's cores (client, upstream and proxy share them): the load average is reported
with the results.

    python benchmarks/bench_proxy_load.py --quick          # small sizes, a minute or two
    python benchmarks/bench_proxy_load.py                  # 50, 200, 500 clients
    python benchmarks/bench_proxy_load.py --write-docs     # and update docs/performance.md
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import resource
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from _report import write_section
from bench_proxy import TOOLS, build_stream

HERE = Path(__file__).resolve().parent
LITELLM_VENV = Path.home() / ".cache" / "streamrepair-bench" / "litellm-venv"
TARGETS = ("direct", "bare", "bare-asgi", "streamrepair", "litellm")
#: Seconds one phase (a target, a mode, a size) may take before what is left is counted
#: as unfinished.
PHASE_SECONDS = 180.0
#: The key clients send to every target (LiteLLM's proxy refuses to start without a
#: master key, and checks it on every request as it would in production).
KEY = "sk-" + secrets.token_hex(24)


# -- the stream and how a client checks it ------------------------------------------------


def stream_events(events: int) -> list[bytes]:
    """The upstream's SSE events (each ending in a blank line), ``[DONE]`` included."""
    return [event + b"\n\n" for event in build_stream(events).split(b"\n\n")[:-1]]


def call_of(events: list[bytes]) -> tuple[str, Any]:
    """The call's argument text as the upstream streams it, and its repaired value."""
    text = ""
    for event in events:
        if b'"tool_calls"' in event:
            chunk = json.loads(event[len(b"data: ") :])
            for call in chunk["choices"][0]["delta"].get("tool_calls") or []:
                text += call.get("function", {}).get("arguments") or ""
    import streamrepair

    return text, streamrepair.repair(text).value


def check(body: bytes, raw: str, repaired: Any) -> str | None:
    """None when the stream ended with ``[DONE]`` and carried exactly one call whose
    arguments are the upstream's text or its repaired value; else what is wrong
    (``"corrupted"`` for arguments that are neither)."""
    if not body.rstrip().endswith(b"data: [DONE]"):
        return "no [DONE]"
    calls: dict[int, str] = {}
    for line in body.split(b"\n"):
        if not line.startswith(b"data: {") or b'"tool_calls"' not in line:
            continue
        chunk = json.loads(line[6:])
        for choice in chunk.get("choices") or []:
            for call in (choice.get("delta") or {}).get("tool_calls") or []:
                index = call.get("index") or 0
                piece = (call.get("function") or {}).get("arguments") or ""
                calls[index] = calls.get(index, "") + piece
    if len(calls) != 1:
        return "corrupted"
    (text,) = calls.values()
    if text == raw:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return "corrupted"
    return None if value == repaired else "corrupted"


# -- the fake upstream (a child process) ------------------------------------------------------


def _upstream_main(port_out: Any, events: int, pace: float, first: float) -> None:
    """Serve every request with the stream: paced (one write per event, ``pace`` seconds
    apart, each on its own timer) or, when the request's model names ``burst``, in one
    write; the first event ``first`` seconds after the request (a model's time to its
    first token; 0 by default). HTTP/1.1 with keep-alive and chunked bodies, nothing
    else."""
    try:
        import uvloop

        loop = uvloop.new_event_loop()
    except ImportError:
        loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    chunks = [b"%x\r\n%s\r\n" % (len(e), e) for e in stream_events(events)]
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
        b"transfer-encoding: chunked\r\n\r\n"
    )
    end = b"0\r\n\r\n"
    burst = head + b"".join(chunks) + end

    class Upstream(asyncio.Protocol):
        def __init__(self) -> None:
            self.buffer = bytearray()
            self.transport: Any = None
            self.busy = False

        def connection_made(self, transport: Any) -> None:
            self.transport = transport
            sock = transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def connection_lost(self, exc: Exception | None) -> None:
            self.transport = None

        def data_received(self, data: bytes) -> None:
            self.buffer += data
            self.next_request()

        def next_request(self) -> None:
            if self.busy or self.transport is None:
                return
            cut = self.buffer.find(b"\r\n\r\n")
            if cut < 0:
                return
            length = 0
            for line in bytes(self.buffer[:cut]).split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(self.buffer) < cut + 4 + length:
                return
            body = bytes(self.buffer[cut + 4 : cut + 4 + length])
            del self.buffer[: cut + 4 + length]
            self.busy = True
            if first:
                loop.call_later(first, self.answer, b"burst" in body)
            else:
                self.answer(b"burst" in body)

        def answer(self, burst_mode: bool) -> None:
            if self.transport is None:
                return
            if burst_mode:
                self.transport.write(burst)
                self.done()
                return
            self.transport.write(head + chunks[0])
            loop.call_later(pace, self.tick, 1)

        def tick(self, i: int) -> None:
            if self.transport is None:
                return
            if i + 1 < len(chunks):
                self.transport.write(chunks[i])
                loop.call_later(pace, self.tick, i + 1)
            else:
                self.transport.write(chunks[i] + end)
                self.done()

        def done(self) -> None:
            self.busy = False
            self.next_request()

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port_out.send(sock.getsockname()[1])
    server = loop.run_until_complete(loop.create_server(Upstream, sock=sock, backlog=4096))
    try:
        loop.run_forever()
    finally:
        server.close()


# -- the targets -----------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_http(url: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as answer:
            if answer.status < 500:
                return True
        time.sleep(0.2)
    return False


def litellm_binary(install: bool) -> tuple[Path | None, str]:
    """LiteLLM's ``litellm`` command in its own venv (installing ``litellm[proxy]`` there
    first when asked and absent), or None and why not."""
    binary = LITELLM_VENV / "bin" / "litellm"
    if binary.exists():
        return binary, ""
    if not install:
        return None, f"not installed in {LITELLM_VENV} (run without --no-install)"
    print(f"installing litellm[proxy] into {LITELLM_VENV} (once; a few minutes)...", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(LITELLM_VENV)], check=True)
        pip = LITELLM_VENV / "bin" / "pip"
        # 1.107.0 was a compromised release; never that one
        subprocess.run(
            [str(pip), "install", "-q", "litellm[proxy]!=1.107.0"],
            check=True,
            timeout=1800,
            capture_output=True,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        shutil.rmtree(LITELLM_VENV, ignore_errors=True)
        return None, f"could not install litellm[proxy] ({exc})"
    return (binary, "") if binary.exists() else (None, "the litellm command was not installed")


def litellm_version() -> str:
    python = LITELLM_VENV / "bin" / "python"
    code = "import importlib.metadata as m; print(m.version('litellm'))"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    return done.stdout.strip() or "?"


@dataclass
class Target:
    name: str
    url: str  # the base URL clients use (ending in /v1)
    process: Any  # subprocess.Popen or multiprocessing.Process, or None (direct)
    log: Any = None

    @property
    def pid(self) -> int | None:
        return None if self.process is None else int(self.process.pid)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        with contextlib.suppress(Exception):
            if isinstance(self.process, subprocess.Popen):
                self.process.wait(15)
            else:
                self.process.join(15)
        if self.log is not None:
            self.log.close()


@dataclass(frozen=True)
class Serve:
    """How a ``streamrepair serve`` target runs: its workers (None: the default) and the
    source tree it runs from."""

    workers: int | None = None
    tree: Path = HERE.parent


def start_target(
    name: str, upstream: str, workdir: Path, litellm: Path | None, serve: Serve | None = None
) -> Target:
    """Start one target in front of ``upstream`` (``http://127.0.0.1:PORT``); ``serve``
    for a ``streamrepair serve`` target."""
    if name == "direct":
        return Target(name, f"{upstream}/v1", None)
    port = _free_port()
    log = open(workdir / f"{name}.log", "wb")  # noqa: SIM115 (closed by Target.stop)
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
    if name in ("bare", "bare-asgi"):
        script = "bare_proxy.py" if name == "bare" else "bare_asgi_proxy.py"
        command = [sys.executable, str(HERE / script), upstream, str(port)]
        ready = f"http://127.0.0.1:{port}/v1/models"
    elif serve is not None:
        env["PYTHONPATH"] = str(serve.tree / "src")
        command = [
            *(sys.executable, "-m", "streamrepair.cli", "serve", "--upstream", upstream),
            *("--port", str(port), "--telemetry", str(workdir / f"{name}.jsonl")),
        ]
        if serve.workers is not None:
            command += ["--workers", str(serve.workers)]
        ready = f"http://127.0.0.1:{port}/healthz"
    else:
        assert litellm is not None
        config = workdir / "litellm.yaml"
        models = "".join(
            f"  - model_name: {mode}\n    litellm_params:\n      model: openai/{mode}\n"
            f"      api_base: {upstream}/v1\n      api_key: sk-bench\n"
            for mode in ("paced", "burst")
        )
        config.write_text(f"model_list:\n{models}litellm_settings:\n  telemetry: false\n")
        command = [str(litellm), "--config", str(config), "--port", str(port)]
        command += ["--num_workers", "1"]
        env |= {
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_LOG": "ERROR",
            "LITELLM_MASTER_KEY": KEY,
        }
        ready = f"http://127.0.0.1:{port}/health/liveliness"
    process = subprocess.Popen(command, stdout=log, stderr=log, env=env)
    target = Target(name, f"http://127.0.0.1:{port}/v1", process, log)
    if not _wait_http(ready, 180 if name == "litellm" else 30):
        target.stop()
        tail = (workdir / f"{name}.log").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"{name} did not start:\n{tail}")
    return target


# -- CPU time from /proc -------------------------------------------------------------------

_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def family(pid: int) -> list[int]:
    """``pid`` and every process below it (LiteLLM's and uvicorn's workers)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None:
                parents[int(entry.name)] = int(fields[1])
    found = [pid]
    for candidate in found:
        found += [p for p, parent in parents.items() if parent == candidate]
    return found


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        fields = _stat(pid)
        if fields is not None:
            total += int(fields[11]) + int(fields[12])
    return total / _TICK


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# -- the clients -----------------------------------------------------------------------------


@dataclass
class Phase:
    target: str
    mode: str
    clients: int
    ttfb: list[float] = field(default_factory=list)
    problems: Counter[str] = field(default_factory=Counter)
    completed: int = 0
    wall: float = 0.0
    cpu_per_event: float | None = None
    upstream_cpu_per_event: float = 0.0
    client_cpu: float = 0.0  # the clients' CPU seconds while requesting (not checking)
    client_cpu_per_event: float = 0.0
    load: float = 0.0

    @property
    def errors(self) -> int:
        """Requests that failed (neither corrupted nor cut short by the phase's limit)."""
        return sum(n for k, n in self.problems.items() if k not in ("corrupted", "unfinished"))

    def percentile(self, p: float) -> float:
        if not self.ttfb:
            return float("nan")
        ordered = sorted(self.ttfb)
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


async def run_phase(
    base: str, phase: Phase, requests: int, stream_seconds: float, raw: str, repaired: Any
) -> None:
    """``phase.clients`` clients, each sending one request to open its connection and
    then ``requests`` timed ones, one after the other. Bodies are checked after the
    phase, so that the client's own work does not delay the next first byte."""
    import aiohttp

    body = json.dumps(
        {
            "model": phase.mode,
            "stream": True,
            "tools": TOOLS,
            "messages": [{"role": "user", "content": "write a.py"}],
        }
    ).encode()
    headers = {"content-type": "application/json", "authorization": f"Bearer {KEY}"}
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=60)
    connector = aiohttp.TCPConnector(limit=0)
    bodies: list[bytes] = []
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def one(timed: bool) -> None:
            started = time.perf_counter()
            try:
                async with session.post(
                    f"{base}/chat/completions", data=body, headers=headers
                ) as answer:
                    first = await answer.content.readany()
                    if timed:
                        phase.ttfb.append(time.perf_counter() - started)
                    rest = await answer.content.read()
                    if answer.status != 200:
                        phase.problems[f"status {answer.status}"] += 1
                        return
            except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                phase.problems[type(exc).__name__] += 1
                return
            bodies.append(first + rest)

        async def client(i: int) -> None:
            await asyncio.sleep(stream_seconds * i / phase.clients)  # spread the starts
            for n in range(1 + requests):
                await one(timed=n > 0)

        tasks = [asyncio.create_task(client(i)) for i in range(phase.clients)]
        started = time.perf_counter()
        cpu_started = _own_cpu()
        _, pending = await asyncio.wait(tasks, timeout=PHASE_SECONDS)
        phase.wall = time.perf_counter() - started
        phase.client_cpu = _own_cpu() - cpu_started
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    for answer_body in bodies:
        problem = check(answer_body, raw, repaired)
        if problem is not None:
            phase.problems[problem] += 1
    phase.completed = len(bodies)
    expected = phase.clients * (1 + requests)
    unfinished = expected - phase.completed - phase.errors
    if unfinished > 0:
        phase.problems["unfinished"] += unfinished


def _run(coroutine: Any) -> None:
    try:
        import uvloop
    except ImportError:
        asyncio.run(coroutine)
    else:
        uvloop.run(coroutine)


def measure(
    target: Target,
    upstream_pid: int,
    mode: str,
    clients: int,
    requests: int,
    events: int,
    stream_seconds: float,
    raw: str,
    repaired: Any,
) -> Phase:
    phase = Phase(target.name, mode, clients)
    pids = family(target.pid) if target.pid is not None else []
    cpu_before = cpu_seconds(pids)
    upstream_before = cpu_seconds([upstream_pid])
    phase.load = os.getloadavg()[0]
    _run(run_phase(target.url, phase, requests, stream_seconds, raw, repaired))
    relayed = max(1, phase.completed * events)  # the untimed first requests too
    if pids:
        phase.cpu_per_event = (cpu_seconds(pids) - cpu_before) / relayed
    phase.upstream_cpu_per_event = (cpu_seconds([upstream_pid]) - upstream_before) / relayed
    phase.client_cpu_per_event = phase.client_cpu / relayed
    return phase


def warm_up(target: Target, raw: str, repaired: Any) -> None:
    for mode in ("burst", "paced"):
        phase = Phase(target.name, mode, 4)
        _run(run_phase(target.url, phase, 2, 0.0, raw, repaired))


# -- the report ------------------------------------------------------------------------------


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def _us(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds * 1e6:.0f}"


def table(phases: list[Phase]) -> str:
    direct = {(p.mode, p.clients): p for p in phases if p.target == "direct"}
    lines = [
        "| mode | clients | target | completed | errors | unfinished | corrupted | TTFB p50 (ms) "
        "| TTFB p95 (ms) | p50 vs direct | added p50 (ms) | proxy CPU per event (µs) "
        "| upstream CPU per event (µs) | clients' CPU per event (µs) | wall (s) | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in phases:
        base = direct.get((p.mode, p.clients))
        failed = p.errors or p.problems["unfinished"]
        ratio = added = ""
        if base is not None and p.target != "direct" and base.ttfb and p.ttfb:
            ratio = f"{p.percentile(0.5) / base.percentile(0.5):.1f}x"
            added = f"{(p.percentile(0.5) - base.percentile(0.5)) * 1000:+.1f}"
        lines.append(
            f"| {p.mode} | {p.clients} | {p.target} | {p.completed} | {p.errors} "
            f"| {p.problems['unfinished']} | {p.problems['corrupted']} "
            f"| {_ms(p.percentile(0.5))} | {_ms(p.percentile(0.95))} "
            f"| {ratio} | {added} | {_us(p.cpu_per_event)}{'*' if failed else ''} "
            f"| {_us(p.upstream_cpu_per_event)} | {_us(p.client_cpu_per_event)} "
            f"| {p.wall:.1f} | {p.load:.1f} |"
        )
    return "\n".join(lines)


FOOTNOTE = (
    "\\*: some requests failed or were left unfinished; the CPU they used is counted and "
    "their events are not, so the figure is too high."
)


def ratios(phases: list[Phase]) -> list[str]:
    """Paced against burst CPU per event, per proxy and size."""
    out = []
    by = {(p.target, p.mode, p.clients): p for p in phases}
    for p in phases:
        if p.mode != "paced" or p.cpu_per_event is None:
            continue
        burst = by.get((p.target, "burst", p.clients))
        if burst is not None and burst.cpu_per_event:
            out.append(
                f"{p.target} at {p.clients} clients: paced {_us(p.cpu_per_event)} µs "
                f"/ burst {_us(burst.cpu_per_event)} µs = "
                f"{p.cpu_per_event / burst.cpu_per_event:.1f}x"
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", help="concurrent clients per phase (50,200,500)")
    parser.add_argument("--requests", type=int, default=2, help="requests per client")
    parser.add_argument("--events", type=int, help="about this many events a stream (60)")
    parser.add_argument("--pace-ms", type=float, default=5.0, help="ms between paced events")
    parser.add_argument(
        "--first-token-ms",
        type=float,
        default=0.0,
        help="the upstream's delay before its first event",
    )
    parser.add_argument("--modes", default="paced,burst")
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--workers", default="", help="serve targets' worker counts (1,2)")
    parser.add_argument("--compare-with", type=Path, help="also serve from this source tree")
    parser.add_argument("--no-install", action="store_true", help="never install LiteLLM")
    parser.add_argument("--quick", action="store_true", help="20 and 50 clients, short streams")
    parser.add_argument("--write-docs", action="store_true", help="update docs/performance.md")
    args = parser.parse_args()
    args.sizes = args.sizes or ("20,50" if args.quick else "50,200,500")
    args.events = args.events or (30 if args.quick else 60)
    sizes = [int(s) for s in args.sizes.split(",")]
    modes = args.modes.split(",")
    names = [t for t in args.targets.split(",") if t]
    serves: dict[str, Serve] = {}
    if "streamrepair" in names:
        counts = [int(n) for n in args.workers.split(",") if n] or [None]
        trees = [("streamrepair", HERE.parent)]
        if args.compare_with is not None:
            trees.insert(0, ("before", args.compare_with.resolve()))
        for label, tree in trees:
            for count in counts:
                name = label if count is None else f"{label} -w{count}"
                serves[name] = Serve(count, tree)
        at = names.index("streamrepair")
        names[at : at + 1] = list(serves)
    events = stream_events(args.events)
    raw, repaired = call_of(events)
    pace = args.pace_ms / 1000
    stream_seconds = pace * len(events)

    litellm: Path | None = None
    skipped = ""
    if "litellm" in names:
        litellm, why = litellm_binary(install=not args.no_install)
        if litellm is None:
            skipped = f"LiteLLM skipped: {why}"
            print(skipped, flush=True)
            names.remove("litellm")

    started_load = os.getloadavg()
    when = time.strftime("%Y-%m-%d %H:%M")
    parent, child = multiprocessing.Pipe()
    upstream = multiprocessing.Process(
        target=_upstream_main,
        args=(child, args.events, pace, args.first_token_ms / 1000),
        daemon=True,
    )
    upstream.start()
    upstream_url = f"http://127.0.0.1:{parent.recv()}"
    phases: list[Phase] = []
    versions = {"litellm": litellm_version()} if litellm is not None else {}
    targets: list[Target] = []
    try:
        with tempfile.TemporaryDirectory() as workdir:
            for name in names:
                targets.append(
                    start_target(name, upstream_url, Path(workdir), litellm, serves.get(name))
                )
                warm_up(targets[-1], raw, repaired)
            # target after target within one mode and size: the machine's load moves
            for mode in modes:
                for clients in sizes:
                    for target in targets:
                        phase = measure(
                            target,
                            upstream.pid or 0,
                            mode,
                            clients,
                            args.requests,
                            len(events),
                            stream_seconds if mode == "paced" else 0.05,
                            raw,
                            repaired,
                        )
                        phases.append(phase)
                        print(table([phase]).splitlines()[-1], flush=True)
    finally:
        for target in targets:
            target.stop()
        upstream.terminate()
        upstream.join(5)

    order = {name: i for i, name in enumerate(names)}
    phases.sort(key=lambda p: (modes.index(p.mode), p.clients, order[p.target]))
    ended_load = os.getloadavg()
    text = table(phases)
    notes = ratios(phases)
    problems = [
        f"{p.target}, {p.mode}, {p.clients} clients: "
        + ", ".join(f"{n} {kind}" for kind, n in p.problems.most_common())
        for p in phases
        if p.problems
    ]
    print()
    print(text)
    for line in notes:
        print(line)
    for line in problems:
        print("problems:", line)
    summary = (
        f"Run of {when} on {os.cpu_count()} cores shared with other work; load average "
        f"{started_load[0]:.1f} at the start, {ended_load[0]:.1f} at the end. Streams of "
        f"{len(events)} events ({args.pace_ms:g} ms apart when paced: {stream_seconds:.2f} s "
        f"a stream; first event {args.first_token_ms:g} ms after the request); each client "
        "sends one request to open its connection, then "
        f"{args.requests} timed ones."
        + (f" LiteLLM {versions['litellm']}." if versions else "")
        + (f" {skipped}." if skipped else "")
    )
    print(summary)
    if args.write_docs:
        body = "\n\n".join(
            [
                summary,
                text,
                FOOTNOTE,
                *(
                    [
                        "Paced against burst CPU per relayed event:\n\n"
                        + "\n".join(f"* {line}" for line in notes)
                    ]
                    if notes
                    else []
                ),
                *(
                    ["Problems:\n\n" + "\n".join(f"* {line}" for line in problems)]
                    if problems
                    else []
                ),
            ]
        )
        write_section("bench_proxy_load", body)


if __name__ == "__main__":
    main()
