"""End-to-end harness for the real Claude Code binary against a scripted Anthropic API.

Stdlib only, no project imports, so tests can use it for a hook test or a proxy test.

* :class:`FakeAnthropic` is a context-manager HTTP server on ``127.0.0.1`` (port 0) that
  answers ``POST /v1/messages`` (``?beta=true`` or not; SSE when the body says
  ``"stream": true``, one JSON message otherwise) from a list of scripted :class:`Turn`\\ s,
  ``/v1/messages/count_tokens``, ``GET /v1/models``, and anything else with a small
  Anthropic-shaped answer. Every request is recorded (:attr:`FakeAnthropic.requests`).
  The turn for a request is picked by the number of assistant messages already in its
  ``messages`` (so a retried request gets the same answer); requests without ``tools``
  (side queries) get :attr:`FakeAnthropic.side_reply` and consume nothing. Once the
  script is exhausted every main request gets the ``final`` turn (``"done"``).
* A :class:`ToolCall` carries the *raw* ``partial_json`` text split into the deltas to
  stream, so broken JSON reaches the client exactly as written.
* :func:`run_claude` runs ``claude -p PROMPT --output-format stream-json --verbose`` in a
  project directory with a private ``HOME`` and returns a :class:`ClaudeRun` (exit code,
  stream-json events, the requests the server saw, the ``tool_result`` blocks sent back,
  seconds taken).
* :func:`write_settings` and :func:`write_mcp_config` write a project's
  ``.claude/settings.local.json`` and ``.mcp.json``.

Measured with Claude Code 2.1.332 (the version ``e2e_tools`` pins): every request is a
streaming ``POST /v1/messages?beta=true``; a text-only run takes 0.6-0.7 s here and a run
with one tool call about 1 s, plus the hooks' own start-up per call.

The binary is the one :mod:`e2e_tools` pins and finds (the ``claude`` fixture in
``conftest.py``; :func:`run_claude` uses it when given none, and
:func:`claude_skip_reason` says why it is missing: the proxy's end-to-end test, in
tests/, imports this module through ``$STREAMREPAIR_CCHARNESS_DIR``).

Example (pytest)::

    with FakeAnthropic([tool_turn("Read", '{"file_path": "x", "limit": null}')]) as api:
        run = run_claude(api, project=tmp_path / "p", home=tmp_path / "h", binary=claude)
    assert "limit" in run.tool_results()[0].text
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from e2e_tools import claude_skip_reason, find_claude
from fakeserver import LoopbackServer, QuietHandler

__all__ = [
    "DEFAULT_MODEL",
    "QUIET_ENV",
    "ClaudeRun",
    "FakeAnthropic",
    "RecordedRequest",
    "ToolCall",
    "ToolResult",
    "Turn",
    "claude_env",
    "claude_skip_reason",
    "find_claude",
    "run_claude",
    "split_text",
    "text_turn",
    "tool_results_of",
    "tool_turn",
    "write_mcp_config",
    "write_settings",
]

#: The model id the fake server reports when the request names none.
DEFAULT_MODEL: Final = "claude-sonnet-4-5"
#: Environment that keeps Claude Code off the network except for ``ANTHROPIC_BASE_URL``.
QUIET_ENV: Final[Mapping[str, str]] = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "IS_SANDBOX": "1",
}


# --------------------------------------------------------------------------- the script


def split_text(text: str, parts: int) -> list[str]:
    """``text`` cut into ``parts`` pieces of near-equal length (no empty pieces unless
    ``text`` is shorter than ``parts``; always at least one piece)."""
    parts = max(1, min(parts, len(text)))
    size, extra = divmod(len(text), parts)
    out: list[str] = []
    start = 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        out.append(text[start:end])
        start = end
    return out or [""]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One ``tool_use`` block: ``deltas`` are the raw ``partial_json`` pieces, streamed
    in order (their concatenation need not be valid JSON)."""

    name: str
    deltas: Sequence[str]
    id: str = ""

    @property
    def raw(self) -> str:
        """The whole argument text."""
        return "".join(self.deltas)


@dataclass(frozen=True, slots=True)
class Turn:
    """One scripted assistant message: optional ``text`` first, then the tool calls.
    ``stop_reason`` defaults to ``"tool_use"`` with calls and ``"end_turn"`` without.
    ``status`` other than 200 answers with an Anthropic error body instead."""

    text: str = ""
    tool_calls: Sequence[ToolCall] = ()
    stop_reason: str | None = None
    status: int = 200
    error_type: str = "api_error"

    @property
    def effective_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if self.tool_calls else "end_turn"


def tool_turn(name: str, raw: str, *, parts: int = 3, text: str = "", id: str = "") -> Turn:
    """A turn with one call of ``name`` whose argument text ``raw`` is streamed in
    ``parts`` deltas."""
    return Turn(text=text, tool_calls=(ToolCall(name, split_text(raw, parts), id),))


def text_turn(text: str = "done") -> Turn:
    """A plain text reply (``end_turn``)."""
    return Turn(text=text)


# --------------------------------------------------------------------------- the server


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the fake server got; ``body`` is the parsed JSON (``None`` if none)."""

    method: str
    path: str
    query: str
    headers: Mapping[str, str]
    raw: bytes
    body: Any
    at: float
    turn: int | None = None

    @property
    def is_messages(self) -> bool:
        """``POST /v1/messages`` (not ``count_tokens``)."""
        return self.method == "POST" and self.path.rstrip("/") == "/v1/messages"

    def tool_results(self) -> list[ToolResult]:
        """The ``tool_result`` blocks of the last user message."""
        return tool_results_of(self.body)

    def tool_names(self) -> list[str]:
        """The names in the request's ``tools``."""
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [t.get("name", "") for t in tools or [] if isinstance(t, dict)]

    def tool_schema(self, name: str) -> Any:
        """The ``input_schema`` of tool ``name`` in the request (``None`` if absent)."""
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        for tool in tools or []:
            if isinstance(tool, dict) and tool.get("name") == name:
                return tool.get("input_schema")
        return None


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A ``tool_result`` block sent back to the model; ``text`` joins its text parts."""

    tool_use_id: str
    text: str
    is_error: bool
    block: Mapping[str, Any]


def tool_results_of(body: Any) -> list[ToolResult]:
    """The ``tool_result`` blocks in the last user message of a Messages request body."""
    if not isinstance(body, dict):
        return []
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if not isinstance(content, list):
                return []
            out: list[ToolResult] = []
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out.append(
                        ToolResult(
                            tool_use_id=str(block.get("tool_use_id", "")),
                            text=_block_text(block.get("content")),
                            is_error=block.get("is_error") is True,
                            block=block,
                        )
                    )
            return out
    return []


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _has_tools(body: Any) -> bool:
    return isinstance(body, dict) and bool(body.get("tools"))


def _turn_index(body: Any) -> int:
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return 0
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")


class FakeAnthropic:
    """A scripted Anthropic Messages API on ``127.0.0.1`` (see the module docstring).

    ``turns[i]`` answers the main request whose history holds ``i`` assistant messages;
    ``final`` answers every later one. ``is_main(body)`` tells main requests from side
    queries (default: the body has ``tools``). ``delay`` seconds pass between SSE events.
    """

    def __init__(
        self,
        turns: Sequence[Turn] = (),
        *,
        final: Turn | None = None,
        side_reply: Turn | None = None,
        is_main: Callable[[Any], bool] = _has_tools,
        delay: float = 0.0,
        ping: bool = True,
    ) -> None:
        self.turns: list[Turn] = list(turns)
        self.final = final if final is not None else text_turn("done")
        self.side_reply = side_reply if side_reply is not None else text_turn("ok")
        self.is_main = is_main
        self.delay = delay
        self.ping = ping
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._ids = 0
        self._server = LoopbackServer("fake-anthropic")

    # lifecycle
    def start(self) -> FakeAnthropic:
        self._server.start(_make_handler(self))
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def url(self) -> str:
        """The value for ``ANTHROPIC_BASE_URL`` (no ``/v1``)."""
        return f"http://127.0.0.1:{self.port}"

    # what was seen
    def snapshot(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self.requests)

    def messages_requests(self, *, main_only: bool = True) -> list[RecordedRequest]:
        """The ``POST /v1/messages`` requests, in order (main-loop ones by default)."""
        return [
            r for r in self.snapshot() if r.is_messages and (not main_only or self.is_main(r.body))
        ]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()

    # answering
    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}_{self._ids:04d}{uuid.uuid4().hex[:16]}"

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def choose(self, body: Any) -> tuple[Turn, int | None]:
        """The turn answering ``body`` and its index (``None`` for side queries)."""
        if not self.is_main(body):
            return self.side_reply, None
        index = _turn_index(body)
        return (self.turns[index] if index < len(self.turns) else self.final), index

    def message_blocks(self, turn: Turn) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
        """(content_block_start block, deltas) per content block of ``turn``."""
        blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        if turn.text or not turn.tool_calls:
            blocks.append(
                (
                    {"type": "text", "text": ""},
                    [{"type": "text_delta", "text": turn.text}] if turn.text else [],
                )
            )
        for call in turn.tool_calls:
            start = {
                "type": "tool_use",
                "id": call.id or self._next_id("toolu"),
                "name": call.name,
                "input": {},
            }
            deltas = [{"type": "input_json_delta", "partial_json": d} for d in call.deltas]
            blocks.append((start, deltas))
        return blocks


def _usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _make_handler(api: FakeAnthropic) -> type[QuietHandler]:
    class Handler(QuietHandler):
        server_version = "FakeAnthropic/1"

        def _send_json(self, status: int, payload: Any, raw: bytes | None = None) -> None:
            self.send_json(status, payload, raw=raw, headers={"request-id": api._next_id("req")})

        def _handle(self) -> None:
            split = urlsplit(self.path)
            raw, body = (
                self.read_json() if self.command in ("POST", "PUT", "PATCH") else (b"", None)
            )
            path = split.path.rstrip("/") or "/"
            turn: Turn | None = None
            index: int | None = None
            if self.command == "POST" and path == "/v1/messages":
                turn, index = api.choose(body)
            api._record(
                RecordedRequest(
                    method=self.command,
                    path=split.path,
                    query=split.query,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    raw=raw,
                    body=body,
                    at=time.time(),
                    turn=index,
                )
            )
            if turn is not None:
                self._messages(body, turn)
            elif self.command == "POST" and path == "/v1/messages/count_tokens":
                self._send_json(200, {"input_tokens": max(1, len(raw) // 4)})
            elif self.command == "GET" and path == "/v1/models":
                model = {
                    "type": "model",
                    "id": DEFAULT_MODEL,
                    "display_name": "Fake",
                    "created_at": "2025-01-01T00:00:00Z",
                }
                self._send_json(
                    200,
                    {"data": [model], "has_more": False, "first_id": None, "last_id": None},
                )
            elif self.command in ("GET", "HEAD") and path == "/":
                self._send_json(200, {})
            else:
                self._send_json(
                    404,
                    {
                        "type": "error",
                        "error": {"type": "not_found_error", "message": f"no {path}"},
                    },
                )

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle

        def _messages(self, body: Any, turn: Turn) -> None:
            if turn.status != 200:
                self._send_json(
                    turn.status,
                    {
                        "type": "error",
                        "error": {"type": turn.error_type, "message": turn.text or "scripted"},
                    },
                )
                return
            model = body.get("model") if isinstance(body, dict) else None
            model = model if isinstance(model, str) and model else DEFAULT_MODEL
            msg_id = api._next_id("msg")
            blocks = api.message_blocks(turn)
            stream = isinstance(body, dict) and body.get("stream") is True
            output_tokens = 1 + sum(
                len(d.get("partial_json", d.get("text", ""))) // 4 for _, ds in blocks for d in ds
            )
            if stream:
                self._stream(msg_id, model, blocks, turn.effective_stop_reason, output_tokens)
            else:
                self._whole(msg_id, model, blocks, turn.effective_stop_reason, output_tokens)

        def _whole(
            self,
            msg_id: str,
            model: str,
            blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]],
            stop_reason: str,
            output_tokens: int,
        ) -> None:
            # A tool input that is not valid JSON is spliced in verbatim, as a broken
            # upstream would send it (the body is then not JSON).
            parts: list[str] = []
            for start, deltas in blocks:
                if start["type"] == "text":
                    text = "".join(d["text"] for d in deltas)
                    parts.append(json.dumps({"type": "text", "text": text}))
                else:
                    raw = "".join(d["partial_json"] for d in deltas)
                    head = json.dumps({k: v for k, v in start.items() if k != "input"})
                    parts.append(head[:-1] + ', "input": ' + (raw.strip() or "{}") + "}")
            envelope = json.dumps(
                {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": stop_reason,
                    "stop_sequence": None,
                    "usage": _usage(10, output_tokens),
                }
            )
            text = envelope.replace('"content": []', '"content": [' + ", ".join(parts) + "]", 1)
            self._send_json(200, None, raw=text.encode())

        def _stream(
            self,
            msg_id: str,
            model: str,
            blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]],
            stop_reason: str,
            output_tokens: int,
        ) -> None:
            self.start_sse(
                "text/event-stream; charset=utf-8", headers={"request-id": api._next_id("req")}
            )
            events: list[tuple[str, dict[str, Any]]] = [
                (
                    "message_start",
                    {
                        "type": "message_start",
                        "message": {
                            "id": msg_id,
                            "type": "message",
                            "role": "assistant",
                            "model": model,
                            "content": [],
                            "stop_reason": None,
                            "stop_sequence": None,
                            "usage": _usage(10, 1),
                        },
                    },
                )
            ]
            if api.ping:
                events.append(("ping", {"type": "ping"}))
            for index, (start, deltas) in enumerate(blocks):
                events.append(
                    (
                        "content_block_start",
                        {"type": "content_block_start", "index": index, "content_block": start},
                    )
                )
                for delta in deltas:
                    events.append(
                        (
                            "content_block_delta",
                            {"type": "content_block_delta", "index": index, "delta": delta},
                        )
                    )
                events.append(
                    ("content_block_stop", {"type": "content_block_stop", "index": index})
                )
            events.append(
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                        "usage": {"output_tokens": output_tokens},
                    },
                )
            )
            events.append(("message_stop", {"type": "message_stop"}))
            try:
                for name, data in events:
                    payload = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                    self.wfile.write(payload)
                    self.wfile.flush()
                    if api.delay:
                        time.sleep(api.delay)
            except (BrokenPipeError, ConnectionResetError):
                return

    return Handler


# --------------------------------------------------------------------------- project files


def write_settings(project: Path | str, settings: Mapping[str, Any], *, local: bool = True) -> Path:
    """Write ``.claude/settings.local.json`` (or ``settings.json``) in ``project``."""
    path = Path(project) / ".claude" / ("settings.local.json" if local else "settings.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    return path


def write_mcp_config(
    project: Path | str, servers: Mapping[str, Sequence[str]], *, env: Mapping[str, str] = {}
) -> Path:
    """Write ``project/.mcp.json`` with one stdio server per name (its argv). Under ``-p``
    Claude Code 2.1.332 loads project servers without approval (init event: ``"source":
    "project"``); ``enable_project_mcp=True`` in :func:`run_claude` also records the
    approval in ``~/.claude.json``, and ``--mcp-config PATH`` is the other way in."""
    config = {
        "mcpServers": {
            name: {"type": "stdio", "command": argv[0], "args": list(argv[1:]), "env": dict(env)}
            for name, argv in servers.items()
        }
    }
    path = Path(project) / ".mcp.json"
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------- running


def claude_env(
    base_url: str, home: Path | str, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment for a run: ``PATH``/``LANG`` from here, a private ``HOME``, the
    API at ``base_url`` with key ``sk-test``, :data:`QUIET_ENV`, then ``extra``."""
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "TERM") if k in os.environ}
    return {
        **keep,
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-test",
        **QUIET_ENV,
        **(extra or {}),
    }


@dataclass(slots=True)
class ClaudeRun:
    """What one ``claude -p`` run did."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    requests: list[RecordedRequest]
    main_requests: list[RecordedRequest]
    project: Path
    home: Path
    events: list[dict[str, Any]] = field(default_factory=list)

    def tool_results(self) -> list[ToolResult]:
        """Every ``tool_result`` the model was sent, in order (each main request's new
        ones: those of its last user message)."""
        out: list[ToolResult] = []
        seen: set[str] = set()
        for request in self.main_requests:
            for result in request.tool_results():
                if result.tool_use_id not in seen:
                    seen.add(result.tool_use_id)
                    out.append(result)
        return out

    def result(self) -> dict[str, Any] | None:
        """The final ``{"type": "result", ...}`` event."""
        found: dict[str, Any] | None = None
        for event in self.events:
            if event.get("type") == "result":
                found = event
        return found

    def followups(self) -> list[list[dict[str, Any]]]:
        """Per main request after the first: the messages after its last assistant
        message (the tool results and whatever Claude Code added beside them, such as
        a hook's ``additionalContext`` or a denial reason)."""
        out: list[list[dict[str, Any]]] = []
        for request in self.main_requests[1:]:
            messages = request.body.get("messages", []) if isinstance(request.body, dict) else []
            last = max(
                (i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1
            )
            out.append(list(messages[last + 1 :]))
        return out

    def transcript(self) -> list[dict[str, Any]]:
        """The session transcript Claude Code wrote under ``home/.claude/projects``."""
        records: list[dict[str, Any]] = []
        for path in sorted((self.home / ".claude" / "projects").glob("*/*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                with contextlib.suppress(ValueError):
                    records.append(json.loads(line))
        return records

    def hook_runs(self) -> list[dict[str, Any]]:
        """The transcript's hook attachments (``hook_success``, ``hook_*``): event,
        tool, exit code, ``durationMs``, stdout."""
        out: list[dict[str, Any]] = []
        for record in self.transcript():
            attachment = record.get("attachment")
            if isinstance(attachment, dict) and str(attachment.get("type", "")).startswith("hook"):
                out.append(attachment)
        return out

    def init(self) -> dict[str, Any] | None:
        """The ``{"type": "system", "subtype": "init"}`` event (tools, MCP servers, mode)."""
        for event in self.events:
            if event.get("type") == "system" and event.get("subtype") == "init":
                return event
        return None


def run_claude(
    api: FakeAnthropic,
    *,
    project: Path | str,
    home: Path | str,
    binary: Path | str | None = None,
    prompt: str = "go",
    permission_mode: str | None = None,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> ClaudeRun:
    """Run ``claude -p PROMPT --output-format stream-json --verbose`` in ``project`` (made
    if missing) against ``api`` with ``HOME=home`` and ``TMPDIR=home/.tmp``;
    ``permission_mode`` goes to ``--permission-mode``, ``args`` are added, ``env``
    overrides :func:`claude_env`. Raises ``subprocess.TimeoutExpired`` past ``timeout``."""
    if binary is None:
        binary = find_claude()
        if binary is None:
            raise FileNotFoundError(claude_skip_reason() or "Claude Code is not installed")
    exe = Path(binary)
    project, home = Path(project), Path(home)
    project.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    argv = [str(exe), "-p", prompt, "--output-format", "stream-json", "--verbose"]
    if permission_mode is not None:
        argv += ["--permission-mode", permission_mode]
    argv += list(args)
    # Claude Code writes /tmp/claude-<uid>/ and /tmp/cc-socks/ unless TMPDIR says otherwise.
    tmpdir = home / ".tmp"
    tmpdir.mkdir(exist_ok=True)
    environment = claude_env(api.url, home, {"TMPDIR": str(tmpdir), **(env or {})})
    before = len(api.snapshot())
    started = time.monotonic()
    done = subprocess.run(
        argv,
        cwd=project,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    seconds = time.monotonic() - started
    requests = api.snapshot()[before:]
    events: list[dict[str, Any]] = []
    for line in done.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                events.append(json.loads(line))
    return ClaudeRun(
        argv=argv,
        returncode=done.returncode,
        stdout=done.stdout,
        stderr=done.stderr,
        seconds=seconds,
        requests=requests,
        main_requests=[r for r in requests if r.is_messages and api.is_main(r.body)],
        project=project,
        home=home,
        events=events,
    )
