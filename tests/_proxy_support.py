"""What the proxy tests share: real servers on loopback (uvicorn in a thread on port 0; a
fake upstream, its own Starlette app, that replays recorded streams and answers HTTP 400
to the histories the real DeepSeek and Anthropic APIs reject; :func:`stack`, the proxy in
front of it), the relays run without servers (:func:`relay_run`, :func:`split`,
:data:`RELAYS`), and streams built for the tests. ``conftest.py`` closes the SDK clients
made here after each test.

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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from streamrepair import (
    ReasoningPolicy,
    StreamEvent,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStream,
    load_recording,
    tool_message,
)
from streamrepair.proxy import REFUSED_TOOL, ProxyConfig, Relay, create_app, refused_verdicts
from streamrepair.proxy._table import APIS

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


@contextlib.contextmanager
def stack(fake: FakeUpstream, *, transport: Any = None, **config: Any) -> Iterator[str]:
    """``fake`` and the proxy in front of it, each under uvicorn on loopback; yields the
    proxy's base URL. ``config``: :class:`~streamrepair.proxy.ProxyConfig` fields besides
    ``upstream``; ``transport``: an ``httpx`` transport for the proxy's upstream client
    (None: aiohttp's)."""
    with serving(fake.app()) as upstream:
        app = create_app(ProxyConfig(upstream=upstream, **config), transport=transport)
        with serving(app) as url:
            yield url


def wait_for(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    """Whether ``condition`` comes true within ``seconds`` (polled)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


# -- the relays without servers ---------------------------------------------------------------

#: Each API's relay by its name (``chat``, ``anthropic``, ``responses``): the proxy's table.
RELAYS: dict[str, type[Relay]] = {api.protocol.value: api.relay for api in APIS.values()}
_NAMES = {api.relay.provider.value: api.protocol.value for api in APIS.values()}


def sent_calls(events: Iterable[StreamEvent]) -> list[tuple[str, Any]]:
    """``(name, arguments)`` of each call a client of the proxy gets for a stream whose
    events the library gives as ``events``, in order (written from the documented
    behaviour, not from the proxy's code): each ready call as it is; each call the proxy
    refuses (``refused_verdicts``) as a call to ``REFUSED_TOOL`` whose arguments say which
    tool, why, and the words :func:`~streamrepair.tool_message` answers it with; nothing
    for a call of a stream that did not end cleanly."""
    verdicts = [e for e in events if isinstance(e, ToolCallReady | ToolCallRejected)]
    refused = refused_verdicts(verdicts)
    out: list[tuple[str, Any]] = []
    for verdict in verdicts:
        if isinstance(verdict, ToolCallReady):
            out.append((verdict.name, verdict.arguments))
        elif verdict in refused:
            message = tool_message(verdict)["content"]
            out.append(
                (
                    REFUSED_TOOL,
                    {
                        "refused_call": verdict.name,
                        "reason": verdict.reason.value,
                        "message": message,
                    },
                )
            )
    return out


def relay_run(relay: Relay, pieces: Iterable[bytes]) -> tuple[bytes, bytes]:
    """What ``relay`` sends while the upstream's ``pieces`` arrive, and at the end (its
    memos are then ready too)."""
    live = b""
    for piece in pieces:
        live += b"".join(relay.feed(piece))
        if relay.ended:
            break
    live += b"".join(relay.finish())
    return live, b"".join(relay.final())


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` cut at each of ``cuts`` (taken modulo its length; 0 and the end ignored)."""
    points = sorted({c % (len(data) + 1) for c in cuts} - {0, len(data)})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def protocol_of(data: bytes) -> str:
    """The name of the API a recording is of (``chat``, ``anthropic``, ``responses``), or
    ``other`` (Cohere, Ollama native, Gemini native...)."""
    core = ToolCallStream()
    for piece in load_recording(data):
        core.feed(piece)
    core.finish()
    provider = core.provider.value if core.provider is not None else ""
    return _NAMES.get(provider, "other")


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
    seconds between them), a JSON ``json`` body with ``status``, or ``body`` sent whole
    as ``media_type``."""

    body: bytes = b""
    status: int = 200
    json: Any = None
    chunk: int = 64
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)  # added to the answer's
    #: Another type sends ``body`` whole, as it is (a JSON body byte for byte).
    media_type: str = "text/event-stream"


@dataclass
class Seen:
    """One request the fake upstream received."""

    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    peer: str = ""  # the proxy's end of the connection (host:port)


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
        peer = f"{request.client.host}:{request.client.port}" if request.client else ""
        self.requests.append(
            Seen(
                path=request.url.path, headers=dict(request.headers), body=body, raw=raw, peer=peer
            )
        )
        path = request.url.path
        if request.method == "GET":
            return JSONResponse({"object": "list", "data": [{"id": "fake-model"}]})
        problem = self._problem(path, body)
        if problem is not None:
            return problem
        model = body.get("model", "") if isinstance(body, dict) else ""
        if isinstance(model, str) and model.startswith("replay:"):
            # replay:NAME, or replay:NAME?as=anthropic&chunk=7 (a Chat recording told in
            # another protocol, sent in 7-byte pieces)
            name, _, query = model[len("replay:") :].partition("?")
            options = dict(parse_qsl(query))
            body = _replay(name)
            if "as" in options:
                body = chat_as(options["as"], body)
            reply = Reply(body=body, chunk=int(options.get("chunk", 97)))
        elif self.script:
            reply = self.script.pop(0)
        else:
            return JSONResponse({"error": {"message": "script exhausted"}}, status_code=500)
        if reply.json is not None:
            return JSONResponse(reply.json, status_code=reply.status, headers=reply.headers)
        if reply.media_type != "text/event-stream":
            return Response(
                reply.body,
                status_code=reply.status,
                media_type=reply.media_type,
                headers=reply.headers,
            )
        return StreamingResponse(
            self._stream(reply),
            status_code=reply.status,
            media_type="text/event-stream",
            headers=reply.headers,
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


def call_stream(
    protocol: str,
    calls: tuple[tuple[str, str, str], ...],
    *,
    cut: bool = False,
    stop: str | None = None,
    end: bool = True,
) -> bytes:
    """One response carrying ``calls`` (id, name, argument text) in ``protocol``. ``cut``:
    the last call was cut off (its block or item never closed) and the response ended at
    the output limit, unless ``stop`` says otherwise (``"tool"``: the upstream claims a
    normal end with calls, as providers do over a truncated call; ``"length"``: the
    output limit). ``end=False``: the stream stops before its end (no stop reason, no
    end marker), as a connection that closed early."""
    said = stop or ("length" if cut else "tool")
    if protocol == "chat":
        finish = {"tool": "tool_calls", "length": "length"}[said]
        data = chat_stream(calls=calls, finish=finish, piece=4)
        return data if end else data[: data.rindex(b"data: {", 0, data.rindex(b"finish_reason"))]
    if protocol == "anthropic":
        return _anthropic(calls, cut, said, end)
    return _responses(calls, cut, said, end)


def _anthropic(calls: tuple[tuple[str, str, str], ...], cut: bool, said: str, end: bool) -> bytes:
    message = {
        "id": "msg_u",
        "type": "message",
        "role": "assistant",
        "model": "fake-model",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    for index, (call_id, name, text) in enumerate(calls):
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        for i in range(0, len(text), 4):
            delta = {"type": "input_json_delta", "partial_json": text[i : i + 4]}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        if not (cut and index == len(calls) - 1):
            events.append({"type": "content_block_stop", "index": index})
    if not end:
        return sse_events(*events, named=True)
    stop = "max_tokens" if said == "length" else "tool_use"
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 9},
        }
    )
    events.append({"type": "message_stop"})
    return sse_events(*events, named=True)


def _responses(calls: tuple[tuple[str, str, str], ...], cut: bool, said: str, end: bool) -> bytes:
    response: dict[str, Any] = {
        "id": "resp_u",
        "object": "response",
        "created_at": 1,
        "status": "in_progress",
        "model": "fake-model",
        "output": [],
        "incomplete_details": None,
    }
    events: list[dict[str, Any]] = [{"type": "response.created", "response": response}]
    output = []
    for index, (call_id, name, text) in enumerate(calls):
        item: dict[str, Any] = {
            "id": f"fc_{index}",
            "type": "function_call",
            "status": "in_progress",
            "call_id": call_id,
            "name": name,
            "arguments": "",
        }
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        where = {"item_id": item["id"], "output_index": index}
        for i in range(0, len(text), 4):
            events.append(
                {
                    "type": "response.function_call_arguments.delta",
                    **where,
                    "delta": text[i : i + 4],
                }
            )
        if cut and index == len(calls) - 1:
            break
        events.append({"type": "response.function_call_arguments.done", **where, "arguments": text})
        done = {**item, "status": "completed", "arguments": text}
        events.append({"type": "response.output_item.done", "output_index": index, "item": done})
        output.append(done)
    if not end:
        pass
    elif said == "length":
        last = {
            **response,
            "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
            "output": output,
        }
        events.append({"type": "response.incomplete", "response": last})
    else:
        last = {**response, "status": "completed", "output": output}
        events.append({"type": "response.completed", "response": last})
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return sse_events(*events, named=True)


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


# -- a Chat Completions recording told in the other protocols ------------------------------

_ANTHROPIC_STOPS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def chat_pieces(sse: bytes) -> tuple[list[tuple[bool, str]], str | None]:
    """The ``(reasoning, text)`` deltas of a Chat Completions stream, each as it came, and
    its finish reason."""
    pieces: list[tuple[bool, str]] = []
    finish = None
    for event in sse.decode("utf-8").replace("\r\n", "\n").split("\n\n"):
        for line in event.split("\n"):
            payload = line[5:].strip() if line.startswith("data:") else ""
            if not payload or payload == "[DONE]":
                continue
            for choice in json.loads(payload).get("choices") or ():
                delta = choice.get("delta") or {}
                if delta.get("reasoning_content"):
                    pieces.append((True, delta["reasoning_content"]))
                if delta.get("content"):
                    pieces.append((False, delta["content"]))
                finish = choice.get("finish_reason") or finish
    return pieces, finish


def _blocks(pieces: list[tuple[bool, str]]) -> list[tuple[bool, list[str]]]:
    blocks: list[tuple[bool, list[str]]] = []
    for reasoning, text in pieces:
        if blocks and blocks[-1][0] == reasoning:
            blocks[-1][1].append(text)
        else:
            blocks.append((reasoning, [text]))
    return blocks


def chat_as(protocol: str, sse: bytes) -> bytes:
    """A Chat Completions stream's text and reasoning deltas, split as they came, as the
    same reply in ``protocol`` (``chat``, ``anthropic`` or ``responses``): what a server
    without a tool parser sends on those APIs."""
    if protocol == "chat":
        return sse
    pieces, finish = chat_pieces(sse)
    blocks = _blocks(pieces)
    if protocol == "anthropic":
        return _as_anthropic(blocks, finish)
    if protocol == "responses":
        return _as_responses(blocks, finish)
    raise ValueError(protocol)


def _as_anthropic(blocks: list[tuple[bool, list[str]]], finish: str | None) -> bytes:
    message = {
        "id": "msg_textcalls",
        "type": "message",
        "role": "assistant",
        "model": "raw-mode",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    for index, (reasoning, texts) in enumerate(blocks):
        kind = "thinking" if reasoning else "text"
        block: dict[str, Any] = {"type": kind, kind: ""}
        if reasoning:
            block["signature"] = ""
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        for text in texts:
            delta = {"type": f"{kind}_delta", kind: text}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        if reasoning:
            delta = {"type": "signature_delta", "signature": f"sig{index}"}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    stop = _ANTHROPIC_STOPS.get(finish or "stop", "end_turn")
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 50},
        }
    )
    events.append({"type": "message_stop"})
    return sse_events(*events, named=True)


def _as_responses(blocks: list[tuple[bool, list[str]]], finish: str | None) -> bytes:
    events: list[dict[str, Any]] = []
    response: dict[str, Any] = {
        "id": "resp_textcalls",
        "object": "response",
        "created_at": 1,
        "status": "in_progress",
        "model": "raw-mode",
        "output": [],
        "incomplete_details": None,
    }
    events.append({"type": "response.created", "response": response})
    output: list[dict[str, Any]] = []
    for index, (reasoning, texts) in enumerate(blocks):
        whole = "".join(texts)
        if reasoning:
            item_id = f"rs_{index}"
            item: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": []}
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": item}
            )
            where = {"item_id": item_id, "output_index": index, "content_index": 0}
            for text in texts:
                events.append({"type": "response.reasoning_text.delta", **where, "delta": text})
            events.append({"type": "response.reasoning_text.done", **where, "text": whole})
            item = {**item, "content": [{"type": "reasoning_text", "text": whole}]}
        else:
            item_id = f"msg_{index}"
            item = {
                "id": item_id,
                "type": "message",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            }
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": item}
            )
            where = {"item_id": item_id, "output_index": index, "content_index": 0}
            part = {"type": "output_text", "text": "", "annotations": []}
            events.append({"type": "response.content_part.added", **where, "part": part})
            for text in texts:
                events.append(
                    {"type": "response.output_text.delta", **where, "delta": text, "logprobs": []}
                )
            events.append(
                {"type": "response.output_text.done", **where, "text": whole, "logprobs": []}
            )
            full = {**part, "text": whole}
            events.append({"type": "response.content_part.done", **where, "part": full})
            item = {**item, "status": "completed", "content": [full]}
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
        output.append(item)
    return responses_ending(events, response, output, incomplete=finish == "length")


def responses_ending(
    events: list[dict[str, Any]],
    response: dict[str, Any],
    output: list[dict[str, Any]],
    *,
    incomplete: bool,
) -> bytes:
    """A Responses stream's ``events`` with its terminal event (``response.incomplete``
    at the output limit, else ``response.completed``) and sequence numbers, as SSE."""
    if incomplete:
        end = {
            **response,
            "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
            "output": output,
        }
        events.append({"type": "response.incomplete", "response": end})
    else:
        events.append(
            {
                "type": "response.completed",
                "response": {**response, "status": "completed", "output": output},
            }
        )
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return sse_events(*events, named=True)


def protocol_tools(protocol: str, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions ``tools`` in ``protocol``'s shape."""
    out = []
    for tool in tools:
        function = tool["function"]
        parameters = function.get("parameters", {"type": "object"})
        if protocol == "anthropic":
            out.append({"name": function["name"], "input_schema": parameters})
        elif protocol == "responses":
            out.append({"type": "function", "name": function["name"], "parameters": parameters})
        else:
            out.append(tool)
    return out
