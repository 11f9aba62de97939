"""Drive the real hermes-agent loop against a scripted fake OpenAI-compatible server.

Standard library only: this file also runs *inside* the Hermes Python (``--child``).

* :class:`FakeOpenAIServer` serves ``POST .../chat/completions`` on 127.0.0.1, as SSE
  when the request says ``"stream": true`` and as one JSON body otherwise, and records
  every request. The turn it answers with is picked by the number of assistant messages
  already in the request, so a retry that adds nothing to the history gets the same
  (broken) answer again; past the script it answers with plain text.
* :func:`prepare_home` lays out a ``HERMES_HOME`` with a probe plugin whose tools record
  exactly what they received; :func:`run_scenario` runs ``AIAgent.run_conversation`` in
  a child process of the Python that has hermes-agent (Hermes keeps process-wide plugin
  and tool registries, and its top-level packages ``agent``, ``tools``, ``utils``...
  must not meet the caller's).

Measured with hermes-agent 0.19.0 (the version ``e2e_tools`` pins): one run takes
2.5-5 s, of which about 1 s is importing ``run_agent`` and 1-2 s ``AIAgent`` set-up (the
child skips Hermes's 2.4 s Python-toolchain probe).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from fakeserver import LoopbackServer, QuietHandler

HERE: Final = Path(__file__).resolve().parent
FAKE_MODEL: Final = "hharness-fake-model"
PROBE_TOOLSET: Final = "hharness"
PROBE_PLUGIN: Final = "hharness_probe"
#: Requests one scenario may make before the server answers 400 (bounds any loop).
MAX_REQUESTS: Final = 24
CHILD_TIMEOUT_S: Final = 180.0

# --------------------------------------------------------------------------- script


@dataclass(frozen=True)
class Call:
    """One tool call as the model writes it: ``arguments`` is the raw text."""

    name: str
    arguments: str
    call_id: str = "call_1"


@dataclass(frozen=True)
class Turn:
    """One model response."""

    calls: tuple[Call, ...] = ()
    content: str | None = None
    finish_reason: str = "tool_calls"


def one_call(name: str, arguments: str, finish_reason: str = "tool_calls") -> tuple[Turn, ...]:
    return (Turn(calls=(Call(name, arguments),), finish_reason=finish_reason),)


#: The probe tools' parameter schemas, as Hermes sends them to the model.
PROBE_SCHEMAS: Final[dict[str, dict[str, Any]]] = {
    "probe_read": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to read."},
            "limit": {"type": "integer", "description": "Most lines to read."},
            "files": {"type": "array", "items": {"type": "string"}, "description": "More files."},
        },
        "required": ["path"],
    },
    "probe_write": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    },
    "probe_shot": {
        "type": "object",
        "properties": {"label": {"type": "string"}, "scale": {"type": "number"}},
        "required": ["label"],
    },
}

# --------------------------------------------------------------------------- server


@dataclass
class RecordedRequest:
    path: str
    body: dict[str, Any]
    turn: int  # the script index answered, -1 for the final text

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages = self.body.get("messages")
        return messages if isinstance(messages, list) else []


def _completion_id(index: int) -> str:
    return f"chatcmpl-hharness-{index}"


class FakeOpenAIServer:
    """A scripted OpenAI-compatible chat-completions endpoint on 127.0.0.1."""

    def __init__(
        self,
        turns: Sequence[Turn],
        *,
        final_text: str = "All done.",
        chunk_size: int = 7,
        max_requests: int = MAX_REQUESTS,
    ) -> None:
        self.turns = tuple(turns)
        self.final_text = final_text
        self.chunk_size = max(1, chunk_size)
        self.max_requests = max_requests
        self.requests: list[RecordedRequest] = []
        self.other_paths: list[str] = []
        self._lock = threading.Lock()
        self._server = LoopbackServer()

    # -- lifecycle
    def __enter__(self) -> FakeOpenAIServer:
        owner = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    owner._json(
                        self,
                        200,
                        {"object": "list", "data": [{"id": FAKE_MODEL, "object": "model"}]},
                    )
                else:
                    owner._note_other(self.path)
                    owner._json(self, 404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    owner._note_other(self.path)
                    owner._json(self, 404, {"error": {"message": "not found"}})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    owner._json(self, 400, {"error": {"message": "bad json"}})
                    return
                owner._answer(self, body)

        self._server.start(Handler)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    @property
    def base_url(self) -> str:
        assert self._server.running, "use the server as a context manager"
        return f"http://127.0.0.1:{self._server.port}/v1"

    # -- behaviour
    def _note_other(self, path: str) -> None:
        with self._lock:
            self.other_paths.append(path)

    def select(self, body: Mapping[str, Any]) -> int:
        """The script index for a request: the number of assistant messages so far."""
        messages = body.get("messages")
        seen = (
            sum(1 for m in messages if isinstance(m, Mapping) and m.get("role") == "assistant")
            if isinstance(messages, list)
            else 0
        )
        return seen if seen < len(self.turns) else -1

    def _answer(self, handler: QuietHandler, body: dict[str, Any]) -> None:
        with self._lock:
            if len(self.requests) >= self.max_requests:
                overflow = True
            else:
                overflow = False
                index = self.select(body)
                self.requests.append(RecordedRequest(handler.path, body, index))
                serial = len(self.requests)
        if overflow:
            self._json(handler, 400, {"error": {"message": "hharness: request limit reached"}})
            return
        turn = (
            self.turns[index] if index >= 0 else Turn(content=self.final_text, finish_reason="stop")
        )
        if body.get("stream"):
            self._stream(handler, turn, serial)
        else:
            self._json(handler, 200, self._completion(turn, serial))

    @staticmethod
    def _message(turn: Turn) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": turn.content}
        if turn.calls:
            message["tool_calls"] = [
                {
                    "id": call.call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in turn.calls
            ]
        return message

    def _completion(self, turn: Turn, serial: int) -> dict[str, Any]:
        return {
            "id": _completion_id(serial),
            "object": "chat.completion",
            "created": 0,
            "model": FAKE_MODEL,
            "choices": [
                {"index": 0, "message": self._message(turn), "finish_reason": turn.finish_reason}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        }

    def chunks(self, turn: Turn, serial: int) -> Iterator[dict[str, Any]]:
        """The SSE chunk objects for one turn (arguments split every ``chunk_size``)."""

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": _completion_id(serial),
                "object": "chat.completion.chunk",
                "created": 0,
                "model": FAKE_MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        yield chunk({"role": "assistant", "content": ""})
        if turn.content:
            yield chunk({"content": turn.content})
        for index, call in enumerate(turn.calls):
            yield chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call.call_id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
            text = call.arguments
            for start in range(0, len(text), self.chunk_size):
                piece = text[start : start + self.chunk_size]
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield chunk({}, turn.finish_reason)

    def _stream(self, handler: QuietHandler, turn: Turn, serial: int) -> None:
        payload = (
            b"".join(
                b"data: " + json.dumps(c).encode() + b"\n\n" for c in self.chunks(turn, serial)
            )
            + b"data: [DONE]\n\n"
        )
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)
        handler.wfile.flush()

    @staticmethod
    def _json(handler: QuietHandler, status: int, obj: Any) -> None:
        handler.send_json(status, obj)


# --------------------------------------------------------------------------- probe plugin

_PROBE_INIT: Final = '''"""hharness probe tools: record what Hermes dispatched, then answer."""
import json, os

SCHEMAS = json.loads({schemas!r})
PIXEL = "data:image/png;base64,iVBORw0KGgo="


def _record(name, args, kwargs):
    path = os.environ.get("HHARNESS_RECEIPTS")
    entry = {{
        "tool": name,
        "args": args,
        "types": (
            {{k: type(v).__name__ for k, v in args.items()}} if isinstance(args, dict) else None
        ),
        "args_type": type(args).__name__,
    }}
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, default=repr) + "\\n")


def _handler(name):
    def handle(args, **kwargs):
        _record(name, args, kwargs)
        if name == "probe_shot":
            return {{
                "_multimodal": True,
                "content": [
                    {{"type": "text", "text": "shot " + str(args.get("label"))}},
                    {{"type": "image_url", "image_url": {{"url": PIXEL}}}},
                ],
                "text_summary": "shot " + str(args.get("label")),
            }}
        return json.dumps({{"ok": True, "tool": name, "received": args}}, sort_keys=True)
    return handle


def _observe(seam):
    def observe(**kwargs):
        path = os.environ.get("HHARNESS_SEAMS")
        if path and str(kwargs.get("tool_name", "")).startswith("probe_"):
            result = kwargs.get("result")
            entry = {{
                "seam": seam,
                "kwargs": sorted(kwargs),
                "tool_name": kwargs.get("tool_name"),
                "tool_call_id": kwargs.get("tool_call_id"),
                "args": kwargs.get("args"),
                "args_id": id(kwargs.get("args")),
                "result_type": type(result).__name__ if "result" in kwargs else None,
                "result": result if "result" in kwargs else None,
            }}
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry, default=repr) + "\\n")
        if seam == "pre_tool_call" and os.environ.get("HHARNESS_PRE_MUTATE") == "1":
            args = kwargs.get("args")
            if isinstance(args, dict):
                args["added_by_pre_tool_call"] = True  # does an in-place edit reach the tool?
        return None
    observe.__name__ = "hharness_observe_" + seam
    return observe


def register(ctx):
    ctx.register_middleware("tool_request", _observe("tool_request"))
    ctx.register_hook("pre_tool_call", _observe("pre_tool_call"))
    ctx.register_hook("transform_tool_result", _observe("transform_tool_result"))
    ctx.register_hook("post_tool_call", _observe("post_tool_call"))
    for name, params in SCHEMAS.items():
        ctx.register_tool(
            name,
            {toolset!r},
            {{"name": name, "description": "hharness probe " + name, "parameters": params}},
            _handler(name),
        )
'''


def _write_probe_plugin(plugins_dir: Path) -> None:
    target = plugins_dir / PROBE_PLUGIN
    target.mkdir(parents=True, exist_ok=True)
    (target / "plugin.yaml").write_text(
        f"name: {PROBE_PLUGIN}\nversion: '0'\ndescription: hharness probe tools\n"
        f"provides_tools: [{', '.join(PROBE_SCHEMAS)}]\n",
        encoding="utf-8",
    )
    (target / "__init__.py").write_text(
        _PROBE_INIT.format(schemas=json.dumps(PROBE_SCHEMAS), toolset=PROBE_TOOLSET),
        encoding="utf-8",
    )


# --------------------------------------------------------------------------- running


def prepare_home(home: Path, *, enabled: Sequence[str] = ()) -> None:
    """Write the probe plugin into ``home/plugins`` and, unless ``home/config.yaml``
    exists, a config enabling the probe and ``enabled``. (``supports_vision``: multimodal
    tool results reach the request as content parts.)"""
    plugins = home / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    _write_probe_plugin(plugins)
    config = home / "config.yaml"
    if not config.exists():
        names = ", ".join([PROBE_PLUGIN, *enabled])
        config.write_text(
            f"model:\n  supports_vision: true\nplugins:\n  enabled: [{names}]\n",
            encoding="utf-8",
        )


@dataclass
class ScenarioResult:
    """What one conversation did: the tools' ``receipts`` (what each received), the
    ``requests`` the model got, what the probe saw at each ``seams``, the run's
    ``outcome`` (from ``run_conversation``) and the loaded ``plugins``."""

    outcome: dict[str, Any]
    receipts: list[dict[str, Any]]
    requests: list[RecordedRequest]
    seams: list[dict[str, Any]] = field(default_factory=list)
    stderr_tail: str = ""
    seconds: float = 0.0

    def tool_messages(self, request: int = -1) -> list[dict[str, Any]]:
        """The tool results the model saw in one request (default: the last)."""
        if not self.requests:
            return []
        return [m for m in self.requests[request].messages if m.get("role") == "tool"]

    def identical_retries(self) -> int:
        """Requests whose messages equal the previous request's (a silent retry)."""
        return sum(
            1
            for before, after in zip(self.requests, self.requests[1:], strict=False)
            if before.messages == after.messages
        )


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def run_scenario(
    turns: Sequence[Turn],
    *,
    home: Path,
    python: str | os.PathLike[str],
    stream: bool,
    prompt: str = "Use the tools as needed.",
    max_iterations: int = 6,
    extra_env: Mapping[str, str] | None = None,
) -> ScenarioResult:
    """Run one conversation through the real ``AIAgent.run_conversation`` with
    ``HERMES_HOME=home`` (see :func:`prepare_home`), in a child of ``python``."""
    with tempfile.TemporaryDirectory(prefix="hharness-") as tmp:
        root = Path(tmp)
        receipts = root / "receipts.jsonl"
        seams = root / "seams.jsonl"
        result_path = root / "result.json"
        with FakeOpenAIServer(turns) as server:
            spec = {
                "base_url": server.base_url,
                "stream": stream,
                "prompt": prompt,
                "max_iterations": max_iterations,
                "result": str(result_path),
            }
            env = {
                k: v
                for k, v in os.environ.items()
                if not k.startswith(("HERMES_", "OPENAI_", "OPENROUTER_", "ANTHROPIC_"))
                and not k.startswith(("STREAMREPAIR_", "PYTHONPATH"))
            }
            env.update(
                HOME=str(root),
                HERMES_HOME=str(home),
                HHARNESS_RECEIPTS=str(receipts),
                HHARNESS_SEAMS=str(seams),
                PYTHONDONTWRITEBYTECODE="1",
                NO_PROXY="127.0.0.1,localhost",
            )
            env.update(extra_env or {})
            started = time.monotonic()
            proc = subprocess.run(
                [str(python), str(Path(__file__).resolve()), "--child", json.dumps(spec)],
                capture_output=True,
                text=True,
                env=env,
                cwd=root,
                timeout=CHILD_TIMEOUT_S,
                check=False,
            )
            seconds = time.monotonic() - started
            requests = list(server.requests)
        if result_path.exists():
            outcome = json.loads(result_path.read_text(encoding="utf-8"))
        else:
            outcome = {"crashed": True, "returncode": proc.returncode}
        found = _read_jsonl(receipts)
        seen_at_seams = _read_jsonl(seams)
    tail = "\n".join((proc.stderr or "").strip().splitlines()[-15:])
    return ScenarioResult(
        outcome=outcome,
        receipts=found,
        requests=requests,
        seams=seen_at_seams,
        stderr_tail=tail,
        seconds=round(seconds, 2),
    )


def _child(spec_text: str) -> int:
    """Runs inside the Hermes Python: one conversation, outcome written as JSON."""
    spec = json.loads(spec_text)
    from run_agent import AIAgent  # type: ignore[import-not-found]  # Hermes

    try:  # skip the ~2.4 s Python-toolchain probe for the system prompt (irrelevant here)
        import tools.env_probe as env_probe  # type: ignore[import-not-found]

        env_probe._CACHED_LINE = ""
        env_probe._PROBE_DONE.set()
    except Exception:
        pass

    agent = AIAgent(
        base_url=spec["base_url"],
        api_key="sk-hharness",
        provider="custom",
        model=FAKE_MODEL,
        quiet_mode=True,
        enabled_toolsets=[PROBE_TOOLSET],
        skip_context_files=True,
        skip_memory=True,
        tool_delay=0.0,
        max_iterations=int(spec["max_iterations"]),
    )
    if not spec["stream"]:
        agent._disable_streaming = True  # the switch Hermes itself flips on "stream unsupported"
    result = agent.run_conversation(spec["prompt"])
    outcome: dict[str, Any] = {
        key: result.get(key)
        for key in ("final_response", "completed", "partial", "error", "api_calls")
    }
    tools = sorted(t["function"]["name"] for t in (agent.tools or []))
    outcome["tools"] = tools
    try:
        from hermes_cli.plugins import get_plugin_manager  # type: ignore[import-not-found]

        outcome["plugins"] = {
            key: {
                "enabled": loaded.enabled,
                "error": loaded.error,
                "source": loaded.manifest.source,
                "hooks": sorted(loaded.hooks_registered),
                "middleware": sorted(loaded.middleware_registered),
            }
            for key, loaded in get_plugin_manager()._plugins.items()
            if loaded.manifest.source != "bundled"
        }
    except Exception as exc:  # introspection only
        outcome["plugins"] = {"error": repr(exc)}
    Path(spec["result"]).write_text(json.dumps(outcome, default=repr), encoding="utf-8")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", required=True, help="the run's spec (JSON)")
    return _child(parser.parse_args(argv).child)


if __name__ == "__main__":
    sys.exit(main())
