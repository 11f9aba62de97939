"""Drive the real OpenCode binary against a scripted, fake OpenAI-compatible model.

Standard library only. Two parts:

* :class:`FakeChatServer`: a ``/v1/chat/completions`` server on ``127.0.0.1`` (port 0)
  that answers from a script of :class:`Turn` objects (text and/or tool calls whose
  ``arguments`` text is sent verbatim, so broken JSON stays broken), streaming (SSE
  ``tool_calls`` deltas) or not, and records every request body.  Requests that carry
  ``tools`` take the next turn; requests without tools (OpenCode's title generation)
  get a fixed short text and do not consume the script.
* :func:`run_opencode`: writes a throw-away project (``opencode.json`` naming the fake
  provider through ``@ai-sdk/openai-compatible``), a private ``HOME`` and XDG dirs,
  runs ``opencode run --format json --auto -m fake/<model> <prompt>``, and returns a
  :class:`RunResult` with the recorded requests, the JSON events and the timing.

The binary is found by :mod:`e2e_tools` (the ``opencode`` fixture in ``conftest.py``).
Measured with OpenCode 1.18.33 (the version ``e2e_tools`` pins): every request streams;
the first is title generation (no ``tools``), which the server answers without using the
script; a run with one tool call takes 3 s on a quiet machine and 5-11 s on a busy one.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from fakeserver import LoopbackServer, QuietHandler

__all__ = [
    "FakeChatServer",
    "RecordedRequest",
    "RunResult",
    "ToolCall",
    "ToolOutput",
    "Turn",
    "isolated_env",
    "opencode_config",
    "run_opencode",
    "seed_plugin_dependencies",
    "stream_chunks",
    "tool_outputs",
    "write_project",
]

PROVIDER_ID: Final = "fake"
DEFAULT_MODEL: Final = "fake-model"
TITLE_TEXT: Final = "Fake title"
FINAL_TEXT: Final = "done"


# --------------------------------------------------------------------------- script


@dataclasses.dataclass(frozen=True)
class ToolCall:
    """One tool call the fake model makes. ``arguments`` is sent verbatim (any text)."""

    name: str
    arguments: str
    id: str | None = None

    @classmethod
    def of(cls, name: str, args: Mapping[str, Any], id: str | None = None) -> ToolCall:
        """A call whose arguments are ``args`` serialised as JSON."""
        return cls(name, json.dumps(args, ensure_ascii=False), id)


@dataclasses.dataclass(frozen=True)
class Turn:
    """One assistant answer: optional text, then tool calls.

    ``chunk_size``: how many characters of ``arguments`` go in each streamed delta.
    ``finish_reason``: default ``"tool_calls"`` when there are calls, else ``"stop"``;
    ``""`` sends none.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    chunk_size: int = 16
    finish_reason: str | None = None

    def finish(self) -> str:
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"


Responder = Callable[[Mapping[str, Any], int], Turn]
"""Given a request body and the index of this tool-bearing request, the turn to answer."""


@dataclasses.dataclass(frozen=True)
class RecordedRequest:
    """A request the fake server received, with the turn it answered (None: title)."""

    path: str
    headers: Mapping[str, str]
    raw: bytes
    body: Any
    turn: Turn | None
    received: float

    @property
    def has_tools(self) -> bool:
        return isinstance(self.body, dict) and bool(self.body.get("tools"))

    @property
    def messages(self) -> list[dict[str, Any]]:
        msgs = self.body.get("messages") if isinstance(self.body, dict) else None
        return [m for m in msgs if isinstance(m, dict)] if isinstance(msgs, list) else []

    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        if not isinstance(tools, list):
            return []
        return [t.get("function", {}).get("name", "") for t in tools if isinstance(t, dict)]


class FakeChatServer:
    """A scripted OpenAI-compatible Chat Completions server; a context manager.

    ``script``: a sequence of turns (one per tool-bearing request; after the last, a
    plain ``FINAL_TEXT`` answer) or a :data:`Responder`.
    """

    def __init__(
        self,
        script: Sequence[Turn] | Responder = (),
        *,
        model: str = DEFAULT_MODEL,
        final: Turn = Turn(text=FINAL_TEXT),
    ) -> None:
        self._script = script
        self.model = model
        self.final = final
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._agent_index = 0
        self._server = LoopbackServer()

    # -- lifecycle
    def __enter__(self) -> FakeChatServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        if self._server.running:
            return
        server = self

        class Handler(_Handler):
            owner = server

        self._server.start(Handler)

    def stop(self) -> None:
        self._server.stop()

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- recording
    @property
    def agent_requests(self) -> list[RecordedRequest]:
        """The requests that carried tools (the agent loop, not title generation)."""
        with self._lock:
            return [r for r in self.requests if r.has_tools]

    def _next_turn(self, body: Any) -> Turn | None:
        if not (isinstance(body, dict) and body.get("tools")):
            return None
        with self._lock:
            index = self._agent_index
            self._agent_index += 1
        if callable(self._script):
            return self._script(body, index)
        return self._script[index] if index < len(self._script) else self.final

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)


class _Handler(QuietHandler):
    owner: FakeChatServer

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            m = self.owner.model
            self.send_json(200, {"object": "list", "data": [{"id": m, "object": "model"}]})
        else:
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        raw, body = self.read_json()
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        turn = self.owner._next_turn(body)
        self.owner._record(
            RecordedRequest(
                path=self.path,
                headers=dict(self.headers.items()),
                raw=raw,
                body=body,
                turn=turn,
                received=time.time(),
            )
        )
        answer = turn if turn is not None else Turn(text=TITLE_TEXT)
        stream = isinstance(body, dict) and body.get("stream") is True
        if stream:
            self._stream(answer, include_usage=_include_usage(body))
        else:
            self.send_json(200, _completion(answer, self.owner.model))

    def _stream(self, turn: Turn, *, include_usage: bool) -> None:
        self.start_sse()
        for chunk in stream_chunks(turn, self.owner.model, include_usage=include_usage):
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def _include_usage(body: Mapping[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


_USAGE: Final = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def _call_ids(turn: Turn, seed: int) -> list[str]:
    return [c.id or f"call_{seed}_{i}" for i, c in enumerate(turn.tool_calls)]


_counter = itertools.count(1)


def stream_chunks(
    turn: Turn, model: str, *, include_usage: bool = True
) -> Iterator[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects that stream ``turn``."""
    seed = next(_counter)
    base = {
        "id": f"chatcmpl-{seed}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    if turn.text:
        yield chunk({"content": turn.text})
    size = max(1, turn.chunk_size)
    for index, (call, call_id) in enumerate(
        zip(turn.tool_calls, _call_ids(turn, seed), strict=True)
    ):
        head = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        yield chunk({"tool_calls": [head]})
        for start in range(0, len(call.arguments), size):
            piece = call.arguments[start : start + size]
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    finish = turn.finish()
    yield chunk({}, finish or None)
    if include_usage:
        yield {**base, "choices": [], "usage": _USAGE}


def _completion(turn: Turn, model: str) -> dict[str, Any]:
    seed = next(_counter)
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c, call_id in zip(turn.tool_calls, _call_ids(turn, seed), strict=True)
        ]
    return {
        "id": f"chatcmpl-{seed}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": turn.finish() or None}],
        "usage": _USAGE,
    }


# --------------------------------------------------------------------------- project


def isolated_env(root: Path | None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment with a private HOME and XDG dirs under ``root`` (a temp dir when
    None), OpenCode's network features off, and ``extra`` on top."""
    if root is None:
        root = Path(tempfile.mkdtemp(prefix="ochome-"))
    keep = ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    home = root / "home"
    dirs = {
        "HOME": home,
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_STATE_HOME": home / ".local" / "state",
    }
    for key, path in dirs.items():
        path.mkdir(parents=True, exist_ok=True)
        env[key] = str(path)
    env.update(
        {
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            "OPENCODE_DISABLE_CLAUDE_CODE": "1",
            "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
            "OPENCODE_DISABLE_TERMINAL_TITLE": "1",
            "NO_COLOR": "1",
        }
    )
    env.update(extra or {})
    return env


def opencode_config(
    base_url: str, *, model: str = DEFAULT_MODEL, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``opencode.json`` for the fake provider, with every permission allowed."""
    config: dict[str, Any] = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "model": f"{PROVIDER_ID}/{model}",
        "small_model": f"{PROVIDER_ID}/{model}",
        "permission": {"*": "allow", "external_directory": "allow", "doom_loop": "allow"},
        "provider": {
            PROVIDER_ID: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake",
                "options": {"baseURL": base_url, "apiKey": "sk-fake"},
                "models": {
                    model: {
                        "name": "Fake model",
                        "tool_call": True,
                        "limit": {"context": 200000, "output": 8192},
                    }
                },
            }
        },
    }
    for key, value in (extra or {}).items():
        config[key] = value
    return config


def write_project(
    project: Path,
    base_url: str,
    *,
    model: str = DEFAULT_MODEL,
    files: Mapping[str, str] | None = None,
    plugins: Mapping[str, str] | None = None,
    config_extra: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``opencode.json``, ``files`` (relative path -> text) and ``plugins`` (file
    name -> source, into ``.opencode/plugins/``) under ``project``."""
    project.mkdir(parents=True, exist_ok=True)
    config = opencode_config(base_url, model=model, extra=config_extra)
    (project / "opencode.json").write_text(json.dumps(config, indent=2) + "\n", "utf-8")
    for rel, text in (files or {}).items():
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    if plugins:
        folder = project / ".opencode" / "plugins"
        folder.mkdir(parents=True, exist_ok=True)
        for name, source in plugins.items():
            (folder / name).write_text(source, "utf-8")
    return project


def seed_plugin_dependencies(config_dir: Path) -> None:
    """Make OpenCode skip its ``npm install @opencode-ai/plugin`` in ``config_dir``.

    With any plugin configured, OpenCode installs ``@opencode-ai/plugin`` into every
    config dir (the project's ``.opencode/`` and ``$XDG_CONFIG_HOME/opencode``) before it
    loads local plugins: 10-20 s from the npm registry. Its check (``Npm.install``) skips
    the install when ``node_modules/`` exists and ``package-lock.json``'s root lists every
    dependency. Only for plugins that import nothing from npm (``node:*`` is fine).
    """
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "node_modules").mkdir(exist_ok=True)
    lock = config_dir / "package-lock.json"
    if not lock.exists():
        deps = {"@opencode-ai/plugin": "*"}
        lock.write_text(
            json.dumps({"lockfileVersion": 3, "packages": {"": {"dependencies": deps}}}) + "\n"
        )
        (config_dir / "package.json").write_text(json.dumps({"dependencies": deps}) + "\n")


# --------------------------------------------------------------------------- run


@dataclasses.dataclass(frozen=True)
class ToolOutput:
    """A ``role: tool`` message OpenCode sent back to the model."""

    tool_call_id: str
    content: str


@dataclasses.dataclass
class RunResult:
    """What one ``opencode run`` did."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    requests: list[RecordedRequest]
    project: Path

    @property
    def agent_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.has_tools]

    @property
    def events(self) -> list[dict[str, Any]]:
        """The ``--format json`` event lines that parse."""
        out: list[dict[str, Any]] = []
        for line in self.stdout.splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                out.append(value)
        return out

    def tool_events(self) -> list[dict[str, Any]]:
        """The ``tool_use`` parts from the events (state: input, output/error, status)."""
        parts = []
        for event in self.events:
            part = event.get("part")
            if isinstance(part, dict) and part.get("type") == "tool":
                parts.append(part)
        return parts

    def tool_outputs(self) -> list[ToolOutput]:
        """Every tool message in the last agent request (all results so far), in order."""
        return tool_outputs(self.requests)

    def tools_sent(self) -> list[dict[str, Any]]:
        """The ``tools`` array of the first agent request, verbatim."""
        if not self.agent_requests:
            return []
        tools = self.agent_requests[0].body.get("tools")
        return list(tools) if isinstance(tools, list) else []


def tool_outputs(requests: Sequence[RecordedRequest]) -> list[ToolOutput]:
    """The ``role: tool`` messages of the last request that carried tools: every tool
    result the model had read by then, in order."""
    agent = [r for r in requests if r.has_tools]
    if not agent:
        return []
    return [
        ToolOutput(str(m.get("tool_call_id", "")), _content_text(m.get("content")))
        for m in agent[-1].messages
        if m.get("role") == "tool"
    ]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return json.dumps(content)


def run_opencode(
    script: Sequence[Turn] | Responder,
    *,
    prompt: str = "go",
    workdir: Path | None = None,
    files: Mapping[str, str] | None = None,
    plugins: Mapping[str, str] | None = None,
    prepare: Callable[[Path, dict[str, str]], None] | None = None,
    binary: str | os.PathLike[str],
    model: str = DEFAULT_MODEL,
    config_extra: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    extra_args: Sequence[str] = (),
    timeout: float = 180.0,
    seed_dependencies: bool = True,
) -> RunResult:
    """Run ``opencode run`` once against a fresh :class:`FakeChatServer`.

    ``workdir``: where the project and private home go (a new temp dir when None; it is
    kept, so results can be inspected). ``prepare(project, env)`` runs after the project
    is written and before OpenCode starts (e.g. to run an installer).
    ``seed_dependencies``: see :func:`seed_plugin_dependencies` (set False for plugins
    that import npm packages, e.g. ``@opencode-ai/plugin`` or ``effect``). Raises
    :class:`subprocess.TimeoutExpired`.
    """
    exe = Path(binary)
    root = workdir if workdir is not None else Path(tempfile.mkdtemp(prefix="ocrun-"))
    root.mkdir(parents=True, exist_ok=True)
    project = root / "project"
    with FakeChatServer(script, model=model) as server:
        write_project(
            project,
            server.base_url,
            model=model,
            files=files,
            plugins=plugins,
            config_extra=config_extra,
        )
        run_env = isolated_env(root, env)
        if seed_dependencies:
            seed_plugin_dependencies(project / ".opencode")
            seed_plugin_dependencies(Path(run_env["XDG_CONFIG_HOME"]) / "opencode")
        if prepare is not None:
            prepare(project, run_env)
        argv = [
            str(exe),
            "run",
            "--format",
            "json",
            "--auto",
            "-m",
            f"{PROVIDER_ID}/{model}",
            *extra_args,
            prompt,
        ]
        started = time.monotonic()
        done = subprocess.run(
            argv,
            cwd=project,
            env=run_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        seconds = time.monotonic() - started
        requests = list(server.requests)
    return RunResult(
        argv=argv,
        returncode=done.returncode,
        stdout=done.stdout,
        stderr=done.stderr,
        seconds=seconds,
        requests=requests,
        project=project,
    )
