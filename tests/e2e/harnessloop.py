"""Run one scripted conversation in a real harness, directly or through the proxy.

The layer the loop measurements of issue 21 stand on, shared by the three harnesses, each
in its own wire API:

=============  ===================  ==================================================
harness        wire                 run as
=============  ===================  ==================================================
Claude Code    Anthropic Messages   ``claude -p go --output-format stream-json --verbose
                                    --permission-mode bypassPermissions``
Codex          Responses            ``codex exec --json --skip-git-repo-check go``
                                    (``cxharness``: no retries unless asked)
OpenCode       Chat Completions     ``opencode run --format json --auto -m fake/fake-model
                                    go`` (``@ai-sdk/openai-compatible``, ``ocharness``)
=============  ===================  ==================================================

:func:`run_loop` starts a :class:`scripted.ScriptedUpstream` with the script (request 1
gets ``script[0]``, request 2 ``script[1]``..., then ``final``), optionally a
:class:`ProxyProcess` in front of it (``streamrepair serve --upstream URL`` as a
subprocess: the proxy exactly as the CLI ships it), runs the harness against one of the
two, and returns a :class:`LoopRun`: every request the upstream saw (bodies, so the tool
results the harness sent back), the files in the project afterwards, exit code, final
text, seconds, the proxy's log and telemetry. The script may be a function of the
project directory (Claude Code's and OpenCode's write tools want absolute paths).

What a test reads from a :class:`LoopRun` (``main[i]`` is the harness's request that got
``script[i]``): ``went_on`` (it asked again after the first reply), ``results(i)`` (the
tool results request ``i`` brought back: what the model read about ``script[i - 1]``),
``is_retry(i)``, ``written(i)`` (the files when request ``i`` arrived: what the replies
before it did; ``written()`` at the end), ``returncode``, ``final_text``,
``output.failure``, and through the proxy ``client_ends()`` against ``upstream_ends()``
(the stop reasons the harness got and the ones the upstream sent), ``client_main``
(each main answer as the harness got it, with the request it sent before the proxy's
request-side fixes), ``client_calls(i)`` and ``client_text(i)`` (the calls and text
answer ``i`` carried to the harness), ``client`` (every answer), ``proxy_log``,
``telemetry``. A :class:`Bench` keeps one
upstream and one proxy for many runs (the ``bench`` fixture in ``conftest.py``).

Example (pytest)::

    scenario = SCENARIOS["renamed_key"]
    run = run_loop(Harness.CODEX, scenario.script(Harness.CODEX), root=tmp_path,
                   via=Via.PROXY, bench=bench)
    assert run.went_on and scenario.done(run)        # issue 21: goes on, nothing wrong
    assert run.client_ends()[0].reason == "completed"

Each harness's binary is the one :mod:`e2e_tools` pins; :func:`skip_reason` says why
one cannot run here.
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from cxharness import run_codex
from ocharness import isolated_env, seed_plugin_dependencies, write_project
from scripted import FINAL, Ending, Exchange, Reply, ScriptedUpstream, ToolResult, Wire
from tap import StreamCall, StreamEnd, Tap, Tapped, stream_calls, stream_end, stream_text

import e2e_tools
from ccharness import claude_env

__all__ = [
    "HARNESS_FILES",
    "Bench",
    "Harness",
    "HarnessOutput",
    "LoopRun",
    "ProxyProcess",
    "Script",
    "Via",
    "binary_for",
    "project_files",
    "run_loop",
    "skip_reason",
]

#: Seconds one harness run may take before it is killed (a stuck loop fails the test).
RUN_TIMEOUT: Final = 90.0


class Harness(enum.Enum):
    CLAUDE_CODE = "claude-code"
    CODEX = "codex"
    OPENCODE = "opencode"

    @property
    def wire(self) -> Wire:
        return _WIRES[self]


_WIRES: Final = {
    Harness.CLAUDE_CODE: Wire.ANTHROPIC,
    Harness.CODEX: Wire.RESPONSES,
    Harness.OPENCODE: Wire.CHAT,
}


class Via(enum.Enum):
    DIRECT = "direct"
    PROXY = "proxy"


Script = Sequence[Reply] | Callable[[Path], Sequence[Reply]]

#: Files and folders in a project that the harness (or its set-up) owns.
HARNESS_FILES: Final = frozenset({".claude", ".opencode", "opencode.json", ".git", ".codex"})


def skip_reason(harness: Harness) -> str | None:
    """Why ``harness`` cannot run here (``None`` when it can)."""
    return {
        Harness.CLAUDE_CODE: e2e_tools.claude_skip_reason,
        Harness.CODEX: e2e_tools.codex_skip_reason,
        Harness.OPENCODE: e2e_tools.opencode_skip_reason,
    }[harness]()


def binary_for(harness: Harness) -> Path | None:
    return {
        Harness.CLAUDE_CODE: e2e_tools.find_claude,
        Harness.CODEX: e2e_tools.find_codex,
        Harness.OPENCODE: e2e_tools.find_opencode,
    }[harness]()


# --------------------------------------------------------------------------- the proxy


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ProxyProcess:
    """``streamrepair serve --upstream UPSTREAM`` on a free loopback port, as a
    subprocess of this Python (so the checkout's ``streamrepair``), its output and
    telemetry in ``folder``. A context manager; :attr:`url` is its root (add ``/v1`` for
    Chat Completions and Responses clients)."""

    def __init__(self, upstream: str, folder: Path, args: Sequence[str] = ()) -> None:
        self.upstream = upstream
        self.folder = folder
        self.args = list(args)
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.folder / "proxy.log"

    @property
    def telemetry_path(self) -> Path:
        return self.folder / "proxy-telemetry.jsonl"

    def start(self) -> ProxyProcess:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        argv = [
            sys.executable,
            "-m",
            "streamrepair.cli",
            "serve",
            "--upstream",
            self.upstream,
            "--port",
            str(self.port),
            "--telemetry",
            str(self.telemetry_path),
            "--log-arguments",
            *self.args,
        ]
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},  # its log line by line
            )
        deadline = time.monotonic() + 30
        while True:
            if self._process.poll() is not None:
                raise RuntimeError(f"the proxy exited at start: {self.log()}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2),
            ):
                return self
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the proxy did not listen within 30 s: {self.log()}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)
        self._process = None

    def __enter__(self) -> ProxyProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def telemetry(self) -> list[dict[str, Any]]:
        if not self.telemetry_path.exists():
            return []
        out = []
        for line in self.telemetry_path.read_text(errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
        return out


# --------------------------------------------------------------------------- the drivers


@dataclass(slots=True)
class HarnessOutput:
    """What the harness process did, in the same words for each harness."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    events: list[dict[str, Any]]
    #: The answer the user is shown at the end (Claude Code's ``result``, Codex's last
    #: agent message, OpenCode's last text part).
    final_text: str
    #: What the harness reported as a failure of the run (``None``: it reported none).
    failure: str | None


def _json_lines(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                value = json.loads(line)
                if isinstance(value, dict):
                    out.append(value)
    return out


def _run(argv: list[str], cwd: Path, env: Mapping[str, str], timeout: float) -> tuple[Any, float]:
    started = time.monotonic()
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done, time.monotonic() - started


def _drive_claude(
    root_url: str, project: Path, root: Path, binary: Path, prompt: str, timeout: float
) -> HarnessOutput:
    home = root / "home"
    tmpdir = home / ".tmp"
    tmpdir.mkdir(parents=True, exist_ok=True)
    argv = [str(binary), "-p", prompt, "--output-format", "stream-json", "--verbose"]
    argv += ["--permission-mode", "bypassPermissions"]
    env = claude_env(root_url, home, {"TMPDIR": str(tmpdir)})
    done, seconds = _run(argv, project, env, timeout)
    events = _json_lines(done.stdout)
    result = next((e for e in reversed(events) if e.get("type") == "result"), None) or {}
    failure = None
    if result.get("is_error") or result.get("subtype") not in (None, "success"):
        failure = f"{result.get('subtype')}: {result.get('result', '')}"
    elif not result:
        failure = "no result event"
    return HarnessOutput(
        argv,
        done.returncode,
        done.stdout,
        done.stderr,
        seconds,
        events,
        str(result.get("result", "")),
        failure,
    )


def _drive_codex(
    v1_url: str,
    project: Path,
    root: Path,
    binary: Path,
    prompt: str,
    timeout: float,
    options: Mapping[str, Any],
) -> HarnessOutput:
    run = run_codex(
        v1_url,
        project=project,
        root=root,
        binary=binary,
        prompt=prompt,
        timeout=timeout,
        **options,
    )
    return HarnessOutput(
        run.argv,
        run.returncode,
        run.stdout,
        run.stderr,
        run.seconds,
        run.events,
        run.final_text,
        run.turn_failure(),
    )


def _drive_opencode(
    v1_url: str, project: Path, root: Path, binary: Path, prompt: str, timeout: float
) -> HarnessOutput:
    write_project(project, v1_url)
    env = isolated_env(root)
    seed_plugin_dependencies(project / ".opencode")
    seed_plugin_dependencies(Path(env["XDG_CONFIG_HOME"]) / "opencode")
    argv = [str(binary), "run", "--format", "json", "--auto", "-m", "fake/fake-model", prompt]
    done, seconds = _run(argv, project, env, timeout)
    events = _json_lines(done.stdout)
    texts = [
        str(e["part"].get("text", ""))
        for e in events
        if isinstance(e.get("part"), dict) and e["part"].get("type") == "text"
    ]
    errors = [e for e in events if e.get("type") == "error"]
    failure = json.dumps(errors[-1].get("error", errors[-1])) if errors else None
    if done.returncode != 0 and failure is None:
        failure = done.stderr.strip()[-500:] or f"exit {done.returncode}"
    return HarnessOutput(
        argv,
        done.returncode,
        done.stdout,
        done.stderr,
        seconds,
        events,
        texts[-1] if texts else "",
        failure,
    )


# --------------------------------------------------------------------------- the run


def _assistant_text(item: Any) -> bool:
    """A history item that is assistant text only (no call, no result)."""
    if not isinstance(item, dict) or item.get("role") != "assistant":
        return False
    if item.get("tool_calls"):
        return False
    content = item.get("content")
    if isinstance(content, list):
        return all(
            isinstance(part, dict) and part.get("type") in ("text", "output_text", "thinking")
            for part in content
        )
    return True


def _scripted_end(wire: Wire | None, reply: Reply | None) -> StreamEnd:
    if reply is None or wire is None or reply.status != 200:
        return StreamEnd("http-error", False)
    if reply.ending in (Ending.DROP, Ending.NO_STOP):
        return StreamEnd(None, False)
    if reply.ending is Ending.ERROR_EVENT:
        return StreamEnd("error", False)
    if wire is Wire.RESPONSES:
        reason = "incomplete:max_output_tokens" if reply.ending is Ending.LENGTH else "completed"
        return StreamEnd(reason, True)
    return StreamEnd(reply.stop_reason(wire) or None, True)


def project_files(project: Path) -> dict[str, str]:
    """Every file under ``project`` that the harness's set-up does not own, as
    relative path -> text (undecodable bytes as U+FFFD)."""
    out: dict[str, str] = {}
    for path in sorted(project.rglob("*")):
        relative = path.relative_to(project)
        if relative.parts[0] in HARNESS_FILES or not path.is_file():
            continue
        out[relative.as_posix()] = path.read_bytes().decode("utf-8", errors="replace")
    return out


@dataclass(slots=True)
class LoopRun:
    """One scripted run (see the module docstring). ``main`` holds the main requests the
    upstream answered, in order: ``main[0]`` got ``script[0]``."""

    harness: Harness
    via: Via
    output: HarnessOutput
    exchanges: list[Exchange]
    project: Path
    files: dict[str, str]
    before: dict[str, str]
    #: Through the proxy: every answer as the harness received it (the tap between
    #: the harness and the proxy), in order.
    client: list[Tapped] = field(default_factory=list)
    proxy_log: str = ""
    telemetry: list[dict[str, Any]] = field(default_factory=list)

    @property
    def main(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.main]

    @property
    def returncode(self) -> int:
        return self.output.returncode

    @property
    def final_text(self) -> str:
        return self.output.final_text

    @property
    def went_on(self) -> bool:
        """The harness asked the model again after the first reply."""
        return len(self.main) >= 2

    def results(self, index: int) -> list[ToolResult]:
        """The tool results main request ``index`` carried that the one before did not:
        the harness's answers to ``script[index - 1]``."""
        if index >= len(self.main):
            return []
        seen = (
            {(r.call_id, r.text) for r in self.main[index - 1].tool_results()} if index else set()
        )
        return [r for r in self.main[index].tool_results() if (r.call_id, r.text) not in seen]

    def upstream_ends(self) -> list[StreamEnd]:
        """How each main request's stream ended as the upstream sent it (the script)."""
        return [_scripted_end(e.wire, e.reply) for e in self.main]

    @property
    def client_main(self) -> list[Tapped]:
        """Through the proxy: the main requests as the harness sent them and their
        answers as it received them, in order (``client_main[i]`` pairs with
        ``main[i]``)."""
        return [t for t in self.client if isinstance(t.request, dict) and t.request.get("tools")]

    def client_ends(self) -> list[StreamEnd]:
        """How each main request's stream ended as the harness received it: through the
        proxy, read from :attr:`client`; directly, the same as :meth:`upstream_ends`."""
        if self.via is Via.DIRECT:
            return self.upstream_ends()
        return [stream_end(self.harness.wire, t.body) for t in self.client_main]

    def client_calls(self, index: int) -> list[StreamCall]:
        """Through the proxy: the calls main answer ``index`` carried to the harness."""
        return stream_calls(self.harness.wire, self.client_main[index].body)

    def client_text(self, index: int) -> str:
        """Through the proxy: the assistant text main answer ``index`` carried."""
        return stream_text(self.harness.wire, self.client_main[index].body)

    def is_retry(self, index: int) -> bool:
        """Main request ``index`` asks again instead of answering: its history grew, if
        at all, only by assistant text (Codex keeps the text of the failed attempt;
        Claude Code and OpenCode send the same history again), with no tool result and
        no new user message (Claude Code's "Resume directly" reminder is not a retry)."""
        if not 0 < index < len(self.main):
            return False
        new = self.main[index].history()[len(self.main[index - 1].history()) :]
        return all(_assistant_text(item) for item in new)

    def written(self, after: int | None = None) -> dict[str, str]:
        """The files that are new or changed since the run began: at the end, or (with
        ``after``) when main request ``after`` arrived, that is what ``script[:after]``
        did (``written(1)``: what the first reply wrote)."""
        if after is None or after >= len(self.main):
            files = self.files
        else:
            files = self.main[after].observed or {}
        return {k: v for k, v in files.items() if self.before.get(k) != v}

    def summary(self) -> dict[str, Any]:
        """The observations the tables in docs/integrations/harness-loops.md hold."""
        return {
            "harness": self.harness.value,
            "via": self.via.value,
            "requests": len(self.main),
            "retry": [i for i in range(1, len(self.main)) if self.is_retry(i)],
            "results": [
                [f"{r.call_id}: {r.text[:300]}" for r in self.results(i)]
                for i in range(1, len(self.main))
            ],
            "echoed": [e.assistant_calls()[-3:] for e in self.main[1:2]],
            "written_by_reply_1": self.written(1),
            "ends": [[e.reason, e.terminal] for e in (self.client_ends() if self.client else [])],
            "sent": [
                [f"{c.id}: {c.name}" for c in self.client_calls(i)]
                for i in range(len(self.client_main))
            ],
            "written": self.written(),
            "exit": self.returncode,
            "final": self.final_text[:300],
            "failure": (self.output.failure or "")[:300] or None,
            "seconds": round(self.output.seconds, 1),
        }


def _keep_record(
    root: Path, output: HarnessOutput, exchanges: Sequence[Exchange], client: Sequence[Tapped]
) -> None:
    """Leave the run's record in ``root`` for a reader: ``exchanges.jsonl`` (one line per
    request the upstream got: path, whether main, its body), ``client.jsonl`` (through
    the proxy: each answer as the harness got it), ``stdout.txt``, ``stderr.txt``."""
    with (root / "exchanges.jsonl").open("w", encoding="utf-8") as out:
        for e in exchanges:
            line = {"serial": e.serial, "path": e.path, "main": e.main, "body": e.body}
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    if client:
        with (root / "client.jsonl").open("w", encoding="utf-8") as out:
            for t in client:
                line = {"path": t.path, "status": t.status, "broken": t.broken}
                line["body"] = t.body.decode("utf-8", errors="replace")
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
    (root / "stdout.txt").write_text(output.stdout, encoding="utf-8")
    (root / "stderr.txt").write_text(output.stderr, encoding="utf-8")


class Bench:
    """One scripted upstream and one proxy in front of it, kept for many runs (the
    proxy takes 1-3 s to start): pass it to :func:`run_loop` as ``bench``. A context
    manager; the proxy's output goes to ``folder``."""

    def __init__(self, folder: Path, proxy_args: Sequence[str] = ()) -> None:
        self.upstream = ScriptedUpstream()
        self.folder = folder
        self.proxy_args = list(proxy_args)
        self.proxy: ProxyProcess | None = None

    def __enter__(self) -> Bench:
        self.upstream.start()
        try:
            self.proxy = ProxyProcess(self.upstream.root_url, self.folder, self.proxy_args)
            self.proxy.start()
        except BaseException:
            self.upstream.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proxy is not None:
            self.proxy.stop()
        self.upstream.stop()


def run_loop(
    harness: Harness,
    script: Script,
    *,
    root: Path,
    via: Via = Via.DIRECT,
    final: Reply = FINAL,
    files: Mapping[str, str] | None = None,
    binary: Path | None = None,
    prompt: str = "go",
    codex: Mapping[str, Any] | None = None,
    proxy_args: Sequence[str] = (),
    bench: Bench | None = None,
    timeout: float = RUN_TIMEOUT,
) -> LoopRun:
    """Run ``script`` in ``harness`` (module docstring). ``root`` is made and holds the
    project (``root/project``, where ``files`` are written first), the private homes
    and the proxy's log. ``codex``: keyword arguments for :func:`cxharness.run_codex`
    (``stream_max_retries=None`` keeps Codex's default retries). Raises
    ``FileNotFoundError`` when the harness is not installed and
    ``subprocess.TimeoutExpired`` past ``timeout``. ``bench``: an upstream and proxy
    already running, used instead of new ones (``proxy_args`` are then the bench's);
    the run's proxy log and telemetry are the lines it added."""
    if binary is None:
        binary = binary_for(harness)
        if binary is None:
            raise FileNotFoundError(skip_reason(harness) or f"{harness.value} is missing")
    project = root / "project"
    project.mkdir(parents=True, exist_ok=True)
    for relative, text in (files or {}).items():
        target = project / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    before = project_files(project)
    replies = script(project) if callable(script) else script
    observe = lambda: project_files(project)  # noqa: E731
    with contextlib.ExitStack() as stack:
        if bench is None:
            upstream = stack.enter_context(ScriptedUpstream(replies, final=final, observe=observe))
        else:
            upstream = bench.upstream
            upstream.load(replies, final=final, observe=observe)
        proxy: ProxyProcess | None = None
        tap: Tap | None = None
        root_url = upstream.root_url
        if via is Via.PROXY:
            if bench is None:
                proxy = stack.enter_context(ProxyProcess(root_url, root / "proxy", proxy_args))
            else:
                proxy = bench.proxy
            assert proxy is not None
            log_from, telemetry_from = len(proxy.log()), len(proxy.telemetry())
            tap = stack.enter_context(Tap(proxy.url))
            root_url = tap.url
        if harness is Harness.CLAUDE_CODE:
            output = _drive_claude(root_url, project, root, binary, prompt, timeout)
        elif harness is Harness.CODEX:
            output = _drive_codex(
                root_url + "/v1", project, root, binary, prompt, timeout, codex or {}
            )
        else:
            output = _drive_opencode(root_url + "/v1", project, root, binary, prompt, timeout)
        exchanges = upstream.snapshot()
        if bench is not None:
            upstream.load([])  # no observer left pointing at this project
    proxy_log = proxy.log()[log_from:] if proxy else ""
    telemetry = proxy.telemetry()[telemetry_from:] if proxy else []
    client = tap.snapshot() if tap else []
    _keep_record(root, output, exchanges, client)
    return LoopRun(
        harness=harness,
        via=via,
        output=output,
        exchanges=exchanges,
        project=project,
        files=project_files(project),
        before=before,
        client=client,
        proxy_log=proxy_log,
        telemetry=telemetry,
    )
