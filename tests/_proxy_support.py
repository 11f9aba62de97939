"""Real servers on loopback for the proxy tests: uvicorn in a thread on port 0, and a fake
upstream (its own Starlette app) that replays recorded streams and answers HTTP 400 to
the histories the real DeepSeek and Anthropic APIs reject.

The fake upstream knows nothing of streamrepair: its 400 rules are written from the
documented errors (``examples/deepseek_tool_loop.py``'s ``api_problem`` for Chat
Completions, the DeepSeek ``/anthropic`` thinking rule for Anthropic).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from streamrepair import ReasoningPolicy, ToolCallStream, load_recording

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "sse"
# ../shared/corpus beside the checkout (as CI lays it out); STREAMREPAIR_CORPUS names
# another place (a worktree whose parent has no shared/).
CORPUS = Path(os.environ.get("STREAMREPAIR_CORPUS") or ROOT.parent / "shared" / "corpus")
sys.path.insert(0, str(ROOT / "examples"))
from deepseek_tool_loop import (  # noqa: E402  (written apart from the library)
    REASONING_ERROR as REASONING_ERROR,
)
from deepseek_tool_loop import (  # noqa: E402
    api_problem,
)

#: DeepSeek's /anthropic answer to an assistant tool_use turn without its thinking.
THINKING_ERROR = "The `content[].thinking` in the thinking mode must be passed back to the API."


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """Run ``app`` under uvicorn on 127.0.0.1, port 0, in a thread; yield its base URL."""
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="error", lifespan="on", access_log=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.005)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def protocol_of(data: bytes) -> str:
    """``chat``, ``anthropic`` or ``responses`` for a recording (``other`` for Cohere,
    Ollama native, Gemini native...)."""
    core = ToolCallStream()
    for piece in load_recording(data):
        core.feed(piece)
    core.finish()
    provider = core.provider.value if core.provider is not None else ""
    return {"openai": "chat", "anthropic": "anthropic", "responses": "responses"}.get(
        provider, "other"
    )


def as_sse(data: bytes) -> bytes | None:
    """A recording as the SSE bytes an upstream would send (JSON-lines recordings get
    ``data:`` framing, with ``event:`` lines for typed chunks); None when it is not a
    stream (a recorded HTTP error)."""
    pieces = load_recording(data)
    if len(pieces) != 1 or not isinstance(pieces[0], bytes):
        return None
    body = pieces[0]
    if body.lstrip()[:1] != b"{":
        return body
    out = []
    for line in body.decode("utf-8").split("\n"):
        if not line.strip():
            continue
        try:
            chunk = json.loads(line)
        except ValueError:  # a broken chunk in the recording: sent as it is
            chunk = None
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        head = f"event: {kind}\n" if isinstance(kind, str) else ""
        out.append(f"{head}data: {line}\n\n")
    return "".join(out).encode("utf-8")


@dataclass
class Reply:
    """A scripted answer: SSE ``body`` (streamed in ``chunk``-byte pieces with ``delay``
    seconds between them) or a JSON ``json`` body with ``status``."""

    body: bytes = b""
    status: int = 200
    json: Any = None
    chunk: int = 64
    delay: float = 0.0


@dataclass
class Seen:
    """One request the fake upstream received."""

    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes


@dataclass
class FakeUpstream:
    """The fake provider. ``model: "replay:<path>"`` replays that file (from the fixtures
    or the corpus); otherwise ``script`` answers in order. ``deepseek_rules`` turns on
    DeepSeek's 400s for Chat and Anthropic histories."""

    script: list[Reply] = field(default_factory=list)
    deepseek_rules: bool = True
    requests: list[Seen] = field(default_factory=list)
    streams_started: int = 0
    streams_finished: int = 0
    streams_cancelled: int = 0
    on_chunk: Callable[[int], None] | None = None

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/{path:path}", self._handle, methods=["GET", "POST"])])

    async def _handle(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self.requests.append(
            Seen(path=request.url.path, headers=dict(request.headers), body=body, raw=raw)
        )
        path = request.url.path
        if request.method == "GET":
            return JSONResponse({"object": "list", "data": [{"id": "fake-model"}]})
        problem = self._problem(path, body)
        if problem is not None:
            return problem
        model = body.get("model", "") if isinstance(body, dict) else ""
        if isinstance(model, str) and model.startswith("replay:"):
            reply = Reply(body=_replay(model[len("replay:") :]), chunk=97)
        elif self.script:
            reply = self.script.pop(0)
        else:
            return JSONResponse({"error": {"message": "script exhausted"}}, status_code=500)
        if reply.json is not None:
            return JSONResponse(reply.json, status_code=reply.status)
        return StreamingResponse(
            self._stream(reply), status_code=reply.status, media_type="text/event-stream"
        )

    def _problem(self, path: str, body: Any) -> Response | None:
        if not self.deepseek_rules or not isinstance(body, dict):
            return None
        model = str(body.get("model", ""))
        if path.endswith("/chat/completions") and "deepseek" in model:
            problem = api_problem(body, ReasoningPolicy.KEEP_FOR_TOOL_CALLS)
            if problem is not None:
                error = {
                    "message": problem,
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_request_error",
                }
                return JSONResponse({"error": error}, status_code=400)
        if path.endswith("/messages") and "deepseek" in model:
            for message in body.get("messages", []):
                content = message.get("content")
                if message.get("role") != "assistant" or not isinstance(content, list):
                    continue
                kinds = {b.get("type") for b in content if isinstance(b, dict)}
                if "tool_use" in kinds and "thinking" not in kinds:
                    error = {"type": "invalid_request_error", "message": THINKING_ERROR}
                    return JSONResponse({"type": "error", "error": error}, status_code=400)
        return None

    async def _stream(self, reply: Reply) -> Any:
        self.streams_started += 1
        finished = False
        try:
            data = reply.body
            for start in range(0, len(data), reply.chunk):
                if reply.delay:
                    await asyncio.sleep(reply.delay)
                if self.on_chunk is not None:
                    self.on_chunk(start)
                yield data[start : start + reply.chunk]
            finished = True
        finally:
            if finished:
                self.streams_finished += 1
            else:
                self.streams_cancelled += 1


def _replay(name: str) -> bytes:
    for base in (FIXTURES, CORPUS):
        path = base / name
        if path.is_file():
            sse = as_sse(path.read_bytes())
            assert sse is not None, name
            return sse
    raise FileNotFoundError(name)


def sse_events(*chunks: dict[str, Any], done: bool = False, named: bool = False) -> bytes:
    """SSE bytes for chunks (``named``: an ``event:`` line from each ``type``)."""
    out = []
    for chunk in chunks:
        head = f"event: {chunk['type']}\n" if named else ""
        out.append(f"{head}data: {json.dumps(chunk)}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode("utf-8")


def chat_stream(
    *,
    reasoning: str | None = None,
    content: str = "",
    calls: tuple[tuple[str, str, str], ...] = (),
    finish: str | None = None,
    model: str = "deepseek-v4-flash",
    piece: int = 5,
) -> bytes:
    """A DeepSeek-style Chat Completions stream: ``reasoning_content`` deltas, content,
    then each call ``(id, name, argument text)`` in ``piece``-character fragments, the
    finish chunk with usage, ``[DONE]``."""
    head = {"id": "5e0c-fake", "object": "chat.completion.chunk", "created": 1, "model": model}

    def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}

    chunks = [chunk({"role": "assistant", "content": None, "reasoning_content": ""})]
    if reasoning:
        for i in range(0, len(reasoning), piece):
            chunks.append(chunk({"content": None, "reasoning_content": reasoning[i : i + piece]}))
    for i in range(0, len(content), piece):
        chunks.append(chunk({"content": content[i : i + piece], "reasoning_content": None}))
    for k, (call_id, name, text) in enumerate(calls):
        first = {"index": k, "id": call_id, "type": "function"}
        chunks.append(
            chunk({"tool_calls": [{**first, "function": {"name": name, "arguments": ""}}]})
        )
        for i in range(0, len(text), piece):
            args = {"index": k, "function": {"arguments": text[i : i + piece]}}
            chunks.append(chunk({"tool_calls": [args]}))
    reason = finish or ("tool_calls" if calls else "stop")
    last = chunk({"content": "", "reasoning_content": None}, reason)
    last["usage"] = {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}
    chunks.append(last)
    return sse_events(*chunks, done=True)


# The SDK clients a test made, closed after it (an unclosed client leaves sockets for the
# garbage collector, and the suite treats that ResourceWarning as an error).
_CLIENTS: list[Any] = []


def openai_client(**options: Any) -> Any:
    import openai

    client = openai.OpenAI(**options)
    _CLIENTS.append(client)
    return client


def anthropic_client(**options: Any) -> Any:
    import anthropic

    client = anthropic.Anthropic(**options)
    _CLIENTS.append(client)
    return client


def close_clients() -> None:
    while _CLIENTS:
        _CLIENTS.pop().close()
