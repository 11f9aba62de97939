"""One scripted model API on loopback that speaks all three wire APIs the harnesses use.

Standard library only, no project imports (it stands in for the upstream, so it must
know nothing of streamrepair).

* A :class:`Reply` is one assistant turn, written once for every wire: optional text,
  then :class:`Call`\\ s whose ``arguments`` is the raw text to stream (broken JSON stays
  broken), then an :class:`Ending`: the normal end with the natural stop reason (or
  ``stop``, any reason at all), the output limit, the connection dropped mid-call, the
  stream ending cleanly but without its terminal event, or an error event after the 200.
* :class:`ScriptedUpstream` serves ``POST /v1/messages`` (Anthropic Messages, Claude
  Code), ``POST /v1/chat/completions`` (Chat Completions, OpenCode through
  ``@ai-sdk/openai-compatible``) and ``POST /v1/responses`` (Responses, Codex), streaming
  when the request says ``"stream": true`` (every harness here does). *Main* requests
  (the body lists ``tools``) are answered by their order: the first with ``script[0]``,
  the second with ``script[1]``..., every later one with ``final``, whatever their
  history holds, so a retried request gets the *next* reply (a harness that retries
  goes on with the scripted second attempt; :attr:`Exchange.is_retry` says which it
  was). Side requests (no ``tools``: titles, quota probes) get a short text and use up
  nothing. Past :data:`MAX_MAIN_REQUESTS` main requests it answers 400, so no harness
  loops for ever. Every request is recorded as an :class:`Exchange`, with what the
  ``observe`` callback returned when a main request arrived (the harness waits for the
  answer then, so a snapshot of its project shows what the earlier replies did).
* :func:`tool_results` and :func:`assistant_calls` read a request body in its wire's
  shape: the tool results the harness sent back (what the model reads) and the calls
  it echoed as the assistant's.

Streams use chunked transfer encoding, so a *dropped* connection (no last chunk; the
socket is reset) differs from a stream that *ends* without its terminal event (the
last chunk is sent): clients see the first as a transport error, the second as EOF.
"""

from __future__ import annotations

import enum
import itertools
import json
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from fakeserver import LoopbackServer, QuietHandler

__all__ = [
    "FINAL",
    "MAX_MAIN_REQUESTS",
    "Call",
    "Ending",
    "Exchange",
    "Reply",
    "ScriptedUpstream",
    "ToolResult",
    "Wire",
    "assistant_calls",
    "tool_results",
]

#: Main requests answered before the server says 400 to every further one.
MAX_MAIN_REQUESTS: Final = 24
#: Characters of arguments per streamed delta.
CHUNK: Final = 24
MODEL: Final = "fake-model"
SIDE_TEXT: Final = "Fake title"


class Wire(enum.Enum):
    """The wire API of a request, told by its path."""

    ANTHROPIC = "anthropic"  # POST /v1/messages
    CHAT = "chat"  # POST /v1/chat/completions
    RESPONSES = "responses"  # POST /v1/responses


class Ending(enum.Enum):
    """How a reply's stream ends (after its text and calls)."""

    #: The terminal events with the natural stop reason: Anthropic ``tool_use`` /
    #: ``end_turn``, Chat ``tool_calls`` / ``stop``, Responses ``response.completed``.
    NORMAL = "normal"
    #: The output limit: ``max_tokens``, ``length``, ``response.incomplete`` with
    #: ``max_output_tokens`` (the last call's Responses item has status ``incomplete``).
    LENGTH = "length"
    #: The connection is reset right after the last call's argument deltas: no block
    #: end, no stop reason, no last chunk.
    DROP = "drop"
    #: The body ends cleanly right after the last call's argument deltas: no block end,
    #: no ``message_stop`` / ``[DONE]`` / ``response.completed``.
    NO_STOP = "no_stop"
    #: After the last call's argument deltas, the wire's error event (Anthropic ``event:
    #: error`` overloaded_error, a Chat ``data: {"error": ...}``, a Responses ``error``
    #: event), then the body ends cleanly.
    ERROR_EVENT = "error_event"


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: ``arguments`` is the raw text streamed (any text at all), in
    deltas of :data:`CHUNK` characters, or cut after each offset in ``cuts`` (where a
    delta ends matters to OpenCode: its SDK runs a call as soon as the arguments so far
    parse)."""

    name: str
    arguments: str
    id: str = ""
    cuts: tuple[int, ...] | None = None

    def deltas(self) -> list[str]:
        """The argument text as streamed."""
        text = self.arguments
        if self.cuts is None:
            return [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)]
        edges = [0, *sorted(c for c in self.cuts if 0 < c < len(text)), len(text)]
        return [text[a:b] for a, b in itertools.pairwise(edges) if b > a]

    @classmethod
    def of(cls, name: str, args: Mapping[str, Any], id: str = "") -> Call:
        """A call whose arguments are ``args`` as JSON."""
        return cls(name, json.dumps(args, ensure_ascii=False), id)


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted assistant turn (see the module docstring). ``stop`` replaces the
    stop reason of a ``NORMAL`` or ``LENGTH`` ending (Anthropic ``stop_reason``, Chat
    ``finish_reason``, ignored on Responses, whose ending is the event itself)."""

    text: str = ""
    calls: tuple[Call, ...] = ()
    ending: Ending = Ending.NORMAL
    stop: str | None = None
    status: int = 200
    #: The ``status`` of the Responses function-call items (default: ``completed``, and
    #: ``incomplete`` for the last one when the ending is ``LENGTH``).
    item_status: str | None = None
    #: The error of an ``ERROR_EVENT`` ending (default: Anthropic ``overloaded_error``,
    #: Chat and Responses ``server_error``, message ``Overloaded``).
    error: Mapping[str, Any] | None = None

    @classmethod
    def call(cls, name: str, arguments: str, *, id: str = "", **kw: Any) -> Reply:
        return cls(calls=(Call(name, arguments, id),), **kw)

    def stop_reason(self, wire: Wire) -> str:
        if self.stop is not None:
            return self.stop
        if wire is Wire.ANTHROPIC:
            if self.ending is Ending.LENGTH:
                return "max_tokens"
            return "tool_use" if self.calls else "end_turn"
        if self.ending is Ending.LENGTH:
            return "length"
        return "tool_calls" if self.calls else "stop"


#: The reply to every main request after the script.
FINAL: Final = Reply(text="done")


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool result a harness sent back: the call it answers and the text the model
    reads (``is_error``: Anthropic's flag; ``None`` where the wire has none)."""

    call_id: str
    text: str
    is_error: bool | None = None


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request the server got and what it answered (``reply`` is ``None`` for side
    requests and for answers past the limit)."""

    serial: int
    wire: Wire | None
    method: str
    path: str
    headers: Mapping[str, str]
    raw: bytes
    body: Any
    main: bool
    main_index: int | None
    reply: Reply | None
    at: float
    #: What the server's ``observe`` callback returned when this main request arrived
    #: (``harnessloop`` records the project's files: what the earlier replies did).
    observed: Any = None

    def tool_results(self) -> list[ToolResult]:
        """Every tool result in this request's history, in order."""
        return tool_results(self.wire, self.body)

    def assistant_calls(self) -> list[dict[str, Any]]:
        """Every call in this request's history, as the harness echoed it."""
        return assistant_calls(self.wire, self.body)

    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        names = []
        for tool in tools or []:
            if isinstance(tool, dict):
                function = tool.get("function")
                source = function if isinstance(function, dict) else tool
                names.append(str(source.get("name", "")))
        return names

    def tool(self, name: str) -> dict[str, Any] | None:
        """The tool declaration named ``name`` (as sent, in the wire's shape)."""
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        for tool in tools or []:
            if isinstance(tool, dict):
                function = tool.get("function")
                source = function if isinstance(function, dict) else tool
                if source.get("name") == name:
                    return tool
        return None

    def history(self) -> list[Any]:
        """The request's history: its ``messages`` (Anthropic, Chat) or ``input`` items
        (Responses)."""
        if not isinstance(self.body, dict):
            return []
        items = self.body.get("messages", self.body.get("input"))
        return list(items) if isinstance(items, list) else []


# --------------------------------------------------------------------------- reading bodies


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", part.get("output", "")))
            for part in content
            if isinstance(part, dict)
        )
    if content is None:
        return ""
    return json.dumps(content)


def tool_results(wire: Wire | None, body: Any) -> list[ToolResult]:
    """The tool results in a request body's history, in order, read in ``wire``'s shape:
    Anthropic ``tool_result`` blocks, Chat ``role: tool`` messages, Responses
    ``function_call_output`` / ``custom_tool_call_output`` items."""
    if not isinstance(body, dict):
        return []
    out: list[ToolResult] = []
    if wire is Wire.ANTHROPIC:
        for message in body.get("messages") or []:
            if not (isinstance(message, dict) and isinstance(message.get("content"), list)):
                continue
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out.append(
                        ToolResult(
                            str(block.get("tool_use_id", "")),
                            _text_of(block.get("content")),
                            block.get("is_error") is True,
                        )
                    )
    elif wire is Wire.CHAT:
        for message in body.get("messages") or []:
            if isinstance(message, dict) and message.get("role") == "tool":
                out.append(
                    ToolResult(
                        str(message.get("tool_call_id", "")), _text_of(message.get("content"))
                    )
                )
    elif wire is Wire.RESPONSES:
        for item in body.get("input") or []:
            if isinstance(item, dict) and item.get("type") in (
                "function_call_output",
                "custom_tool_call_output",
            ):
                out.append(ToolResult(str(item.get("call_id", "")), _text_of(item.get("output"))))
    return out


def assistant_calls(wire: Wire | None, body: Any) -> list[dict[str, Any]]:
    """The calls in a request body's history as ``{"id", "name", "arguments"}``
    (``arguments``: the text, or the JSON of Anthropic's ``input``)."""
    if not isinstance(body, dict):
        return []
    out: list[dict[str, Any]] = []
    if wire is Wire.ANTHROPIC:
        for message in body.get("messages") or []:
            if not (isinstance(message, dict) and message.get("role") == "assistant"):
                continue
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    out.append(
                        {
                            "id": block.get("id"),
                            "name": block.get("name"),
                            "arguments": json.dumps(block.get("input")),
                        }
                    )
    elif wire is Wire.CHAT:
        for message in body.get("messages") or []:
            if isinstance(message, dict) and message.get("role") == "assistant":
                for call in message.get("tool_calls") or []:
                    function = call.get("function") or {}
                    out.append(
                        {
                            "id": call.get("id"),
                            "name": function.get("name"),
                            "arguments": function.get("arguments"),
                        }
                    )
    elif wire is Wire.RESPONSES:
        for item in body.get("input") or []:
            if isinstance(item, dict) and item.get("type") in ("function_call", "custom_tool_call"):
                out.append(
                    {
                        "id": item.get("call_id"),
                        "name": item.get("name"),
                        "arguments": item.get("arguments", item.get("input")),
                    }
                )
    return out


# --------------------------------------------------------------------------- the server


_serials = itertools.count(1)


class ScriptedUpstream:
    """The scripted API (module docstring); a context manager. ``root_url`` has no
    ``/v1`` (Claude Code's ``ANTHROPIC_BASE_URL``, the proxy's ``--upstream``);
    ``v1_url`` has it (Codex's ``base_url``, OpenCode's ``baseURL``)."""

    def __init__(
        self,
        script: Sequence[Reply] = (),
        *,
        final: Reply = FINAL,
        delay: float = 0.0,
        observe: Callable[[], Any] | None = None,
    ) -> None:
        self.script = list(script)
        self.final = final
        self.delay = delay
        self.observe = observe
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._main = 0
        self._server = LoopbackServer("scripted-upstream")

    def load(
        self,
        script: Sequence[Reply],
        *,
        final: Reply = FINAL,
        observe: Callable[[], Any] | None = None,
    ) -> None:
        """Start over with ``script``: the next main request gets ``script[0]``, and the
        record is emptied (one server, many runs)."""
        with self._lock:
            self.script = list(script)
            self.final = final
            self.observe = observe
            self.exchanges = []
            self._main = 0

    def __enter__(self) -> ScriptedUpstream:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        upstream = self

        class Handler(_Handler):
            owner = upstream

        self._server.start(Handler)

    def stop(self) -> None:
        self._server.stop()

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self._server.port}"

    @property
    def v1_url(self) -> str:
        return self.root_url + "/v1"

    def snapshot(self) -> list[Exchange]:
        with self._lock:
            return list(self.exchanges)

    def main_exchanges(self) -> list[Exchange]:
        """The main (tool-bearing) requests, in order."""
        return [e for e in self.snapshot() if e.main]

    def _choose(self, main: bool) -> tuple[int | None, Reply | None]:
        if not main:
            return None, Reply(text=SIDE_TEXT)
        with self._lock:
            index = self._main
            self._main += 1
        if index >= MAX_MAIN_REQUESTS:
            return index, None
        return index, self.script[index] if index < len(self.script) else self.final

    def _record(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)


def _wire_of(path: str) -> Wire | None:
    path = path.rstrip("/")
    if path.endswith("/messages"):
        return Wire.ANTHROPIC
    if path.endswith("/chat/completions"):
        return Wire.CHAT
    if path.endswith("/responses"):
        return Wire.RESPONSES
    return None


class _Handler(QuietHandler):
    owner: ScriptedUpstream

    def do_GET(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        if path.endswith("/models"):
            model = {"id": MODEL, "object": "model", "type": "model", "display_name": "Fake"}
            self.send_json(200, {"object": "list", "data": [model], "has_more": False})
        else:
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        split = urlsplit(self.path)
        raw, body = self.read_json()
        if split.path.rstrip("/").endswith("/count_tokens"):
            self.send_json(200, {"input_tokens": max(1, len(raw) // 4)})
            return
        wire = _wire_of(split.path)
        main = isinstance(body, dict) and bool(body.get("tools"))
        index, reply = self.owner._choose(main) if wire is not None else (None, None)
        self.owner._record(
            Exchange(
                serial=next(_serials),
                wire=wire,
                method="POST",
                path=split.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                raw=raw,
                body=body,
                main=main,
                main_index=index,
                reply=reply if main else None,
                at=time.time(),
                observed=self.owner.observe() if main and self.owner.observe else None,
            )
        )
        if wire is None:
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        if reply is None:
            self.send_json(400, _error_body(wire, "scripted upstream: request limit reached"))
            return
        if reply.status != 200:
            self.send_json(reply.status, _error_body(wire, reply.text or "scripted error"))
            return
        model = body.get("model") if isinstance(body, dict) else None
        model = model if isinstance(model, str) and model else MODEL
        if not (isinstance(body, dict) and body.get("stream") is True):
            self.send_json(200, _whole(wire, reply, model))
            return
        self._stream(_events(wire, reply, model), reply.ending)

    # chunked SSE, so that a drop and a clean end differ
    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _stream(self, frames: Iterator[bytes], ending: Ending) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for frame in frames:
                self._chunk(frame)
                if self.owner.delay:
                    time.sleep(self.owner.delay)
            if ending is Ending.DROP:
                # RST, no last chunk: a transport error, not an EOF
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
                return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            return


def _error_body(wire: Wire, message: str) -> dict[str, Any]:
    if wire is Wire.ANTHROPIC:
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    return {"error": {"message": message, "type": "invalid_request_error", "code": None}}


def _sse(data: Mapping[str, Any] | str, event: str | None = None) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


def _cut_short(reply: Reply) -> bool:
    return reply.ending in (Ending.DROP, Ending.NO_STOP, Ending.ERROR_EVENT)


def _events(wire: Wire, reply: Reply, model: str) -> Iterator[bytes]:
    if wire is Wire.ANTHROPIC:
        return _anthropic(reply, model)
    if wire is Wire.CHAT:
        return _chat(reply, model)
    return _responses(reply, model)


# -- Anthropic Messages


def _anthropic(reply: Reply, model: str) -> Iterator[bytes]:
    serial = next(_serials)
    usage = {"input_tokens": 10, "output_tokens": 1}
    message = {
        "id": f"msg_{serial:06d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    }
    yield _sse({"type": "message_start", "message": message}, "message_start")
    yield _sse({"type": "ping"}, "ping")
    index = 0
    if reply.text or not reply.calls:
        start = {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": ""},
        }
        yield _sse(start, "content_block_start")
        if reply.text:
            delta = {"type": "text_delta", "text": reply.text}
            yield _sse(
                {"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta"
            )
        yield _sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
        index = 1
    for number, call in enumerate(reply.calls):
        last = number == len(reply.calls) - 1
        block = {
            "type": "tool_use",
            "id": call.id or f"toolu_{serial:06d}{number}",
            "name": call.name,
            "input": {},
        }
        yield _sse(
            {"type": "content_block_start", "index": index, "content_block": block},
            "content_block_start",
        )
        for piece in call.deltas():
            delta = {"type": "input_json_delta", "partial_json": piece}
            yield _sse(
                {"type": "content_block_delta", "index": index, "delta": delta},
                "content_block_delta",
            )
        if last and _cut_short(reply):
            break
        yield _sse({"type": "content_block_stop", "index": index}, "content_block_stop")
        index += 1
    if reply.ending is Ending.ERROR_EVENT:
        error = reply.error or {"type": "overloaded_error", "message": "Overloaded"}
        yield _sse({"type": "error", "error": dict(error)}, "error")
    if _cut_short(reply):
        return
    delta = {"stop_reason": reply.stop_reason(Wire.ANTHROPIC), "stop_sequence": None}
    yield _sse(
        {"type": "message_delta", "delta": delta, "usage": {"output_tokens": 20}}, "message_delta"
    )
    yield _sse({"type": "message_stop"}, "message_stop")


# -- Chat Completions


def _chat(reply: Reply, model: str) -> Iterator[bytes]:
    serial = next(_serials)
    base = {
        "id": f"chatcmpl-{serial}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    yield chunk({"role": "assistant", "content": ""})
    if reply.text:
        yield chunk({"content": reply.text})
    for number, call in enumerate(reply.calls):
        head = {
            "index": number,
            "id": call.id or f"call_{serial}_{number}",
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        yield chunk({"tool_calls": [head]})
        for piece in call.deltas():
            yield chunk({"tool_calls": [{"index": number, "function": {"arguments": piece}}]})
    if reply.ending is Ending.ERROR_EVENT:
        error = reply.error or {"message": "Overloaded", "type": "server_error", "code": None}
        yield _sse({"error": dict(error)})
    if _cut_short(reply):
        return
    yield chunk({}, reply.stop_reason(Wire.CHAT) or None)
    usage = {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}
    yield _sse({**base, "choices": [], "usage": usage})
    yield _sse("[DONE]")


# -- Responses


def _responses(reply: Reply, model: str) -> Iterator[bytes]:
    serial = next(_serials)
    numbers = itertools.count()
    response = {
        "id": f"resp_{serial:06d}",
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": "in_progress",
        "output": [],
        "usage": None,
    }

    def event(kind: str, **fields: Any) -> bytes:
        return _sse({"type": kind, "sequence_number": next(numbers), **fields}, kind)

    yield event("response.created", response=response)
    yield event("response.in_progress", response=response)
    output: list[dict[str, Any]] = []
    if reply.text:
        item_id = f"msg_{serial:06d}"
        part = {"type": "output_text", "text": "", "annotations": []}
        item = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        yield event("response.output_item.added", output_index=0, item=item)
        yield event(
            "response.content_part.added",
            item_id=item_id,
            output_index=0,
            content_index=0,
            part=part,
        )
        yield event(
            "response.output_text.delta",
            item_id=item_id,
            output_index=0,
            content_index=0,
            delta=reply.text,
        )
        yield event(
            "response.output_text.done",
            item_id=item_id,
            output_index=0,
            content_index=0,
            text=reply.text,
        )
        done_part = {**part, "text": reply.text}
        yield event(
            "response.content_part.done",
            item_id=item_id,
            output_index=0,
            content_index=0,
            part=done_part,
        )
        item = {**item, "status": "completed", "content": [done_part]}
        yield event("response.output_item.done", output_index=0, item=item)
        output.append(item)
    for number, call in enumerate(reply.calls):
        last = number == len(reply.calls) - 1
        index = len(output)
        item_id = f"fc_{serial:06d}{number}"
        item = {
            "type": "function_call",
            "id": item_id,
            "call_id": call.id or f"call_{serial:06d}{number}",
            "name": call.name,
            "arguments": "",
            "status": "in_progress",
        }
        yield event("response.output_item.added", output_index=index, item=item)
        for piece in call.deltas():
            yield event(
                "response.function_call_arguments.delta",
                item_id=item_id,
                output_index=index,
                delta=piece,
            )
        if last and _cut_short(reply):
            break
        yield event(
            "response.function_call_arguments.done",
            item_id=item_id,
            output_index=index,
            arguments=call.arguments,
        )
        status = reply.item_status or (
            "incomplete" if last and reply.ending is Ending.LENGTH else "completed"
        )
        item = {**item, "arguments": call.arguments, "status": status}
        yield event("response.output_item.done", output_index=index, item=item)
        output.append(item)
    if reply.ending is Ending.ERROR_EVENT:
        error = reply.error or {"code": "server_error", "message": "Overloaded", "param": None}
        yield event("error", **error)
    if _cut_short(reply):
        return
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 30,
    }
    if reply.ending is Ending.LENGTH:
        end = {
            **response,
            "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
            "output": output,
            "usage": usage,
        }
        yield event("response.incomplete", response=end)
    else:
        end = {**response, "status": "completed", "output": output, "usage": usage}
        yield event("response.completed", response=end)


# -- non-streamed answers (no harness here asks for one; kept for completeness)


def _whole(wire: Wire, reply: Reply, model: str) -> dict[str, Any]:
    def args(call: Call) -> Any:
        try:
            return json.loads(call.arguments)
        except ValueError:
            return {"_raw": call.arguments}

    if wire is Wire.ANTHROPIC:
        content: list[dict[str, Any]] = []
        if reply.text or not reply.calls:
            content.append({"type": "text", "text": reply.text})
        content += [
            {"type": "tool_use", "id": c.id or f"toolu_{n}", "name": c.name, "input": args(c)}
            for n, c in enumerate(reply.calls)
        ]
        return {
            "id": "msg_whole",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": reply.stop_reason(wire),
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 20},
        }
    if wire is Wire.CHAT:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.calls:
            message["tool_calls"] = [
                {
                    "id": c.id or f"call_{n}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for n, c in enumerate(reply.calls)
            ]
        return {
            "id": "chatcmpl-whole",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": reply.stop_reason(wire)}],
        }
    return {
        "id": "resp_whole",
        "object": "response",
        "status": "incomplete" if reply.ending is Ending.LENGTH else "completed",
        "model": model,
        "output": [
            {
                "type": "function_call",
                "id": f"fc_{n}",
                "call_id": c.id or f"call_{n}",
                "name": c.name,
                "arguments": c.arguments,
                "status": "completed",
            }
            for n, c in enumerate(reply.calls)
        ],
    }
