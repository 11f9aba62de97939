"""A recording pass-through on loopback: what the harness really received from the proxy.

Standard library only, no project imports.

:class:`Tap` listens on ``127.0.0.1`` and forwards every request to ``target`` (method,
path, headers, body), streaming the answer back as it arrives, chunk by chunk, and
recording the answer's status and bytes. When reading from ``target`` fails mid-answer
(a reset, a body cut short), the harness's connection is reset too, so a failure reaches
the harness as the target gave it. :func:`stream_end` reads a recorded stream's ending
in its wire's terms (the stop reason the harness was told), :func:`stream_calls` and :func:`stream_text` the
calls and the text it carried. Each reads an event stream or a whole JSON answer (Claude
Code falls back to a non-streamed request after some broken streams).
"""

from __future__ import annotations

import http.client
import json
import socket
import struct
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from scripted import Wire

from fakeserver import LoopbackServer, QuietHandler

__all__ = ["StreamCall", "StreamEnd", "Tap", "Tapped", "stream_calls", "stream_end", "stream_text"]

_HOP: frozenset[str] = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host"}
)


@dataclass(frozen=True, slots=True)
class Tapped:
    """One answer that went through the tap: ``body`` is what the harness got (the
    decoded body, not its chunk framing); ``broken``: reading the target failed."""

    method: str
    path: str
    request: Any
    status: int
    headers: Mapping[str, str]
    body: bytes
    broken: bool


class Tap:
    """The pass-through (module docstring); a context manager. ``url`` is its root."""

    def __init__(self, target: str) -> None:
        split = urlsplit(target)
        self.host = split.hostname or "127.0.0.1"
        self.port_to = split.port or 80
        self.answers: list[Tapped] = []
        self._lock = threading.Condition()
        self._open = 0
        self._server = LoopbackServer("tap")

    def __enter__(self) -> Tap:
        tap = self

        class Handler(_Handler):
            owner = tap

        self._server.start(Handler)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.port}"

    def snapshot(self, wait: float = 5.0) -> list[Tapped]:
        """The answers so far, once no answer is still being relayed (at most ``wait``
        seconds: the client may have read the last byte before the relay recorded it)."""
        with self._lock:
            self._lock.wait_for(lambda: self._open == 0, timeout=wait)
            return list(self.answers)

    def _opened(self) -> None:
        with self._lock:
            self._open += 1

    def _record(self, tapped: Tapped) -> None:
        with self._lock:
            self.answers.append(tapped)
            self._open -= 1
            self._lock.notify_all()


class _Handler(QuietHandler):
    owner: Tap

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        connection = http.client.HTTPConnection(self.owner.host, self.owner.port_to, timeout=120)
        chunks: list[bytes] = []
        broken = False
        status = 502
        answer_headers: dict[str, str] = {}
        self.owner._opened()  # before the first byte of the answer goes out
        try:
            connection.request(self.command, self.path, body=raw or None, headers=headers)
            response = connection.getresponse()
            status = response.status
            answer_headers = {k: v for k, v in response.getheaders() if k.lower() not in _HOP}
            self.send_response(status)
            for name, value in answer_headers.items():
                if name.lower() != "content-length":
                    self.send_header(name, value)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            while True:
                try:
                    data = response.read1(65536)
                except (http.client.HTTPException, OSError):
                    broken = True
                    break
                if not data:
                    break
                chunks.append(data)
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
            if broken:
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
            else:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            broken = True
        finally:
            connection.close()
            try:
                request = json.loads(raw) if raw else None
            except ValueError:
                request = None
            self.owner._record(
                Tapped(
                    self.command,
                    self.path,
                    request,
                    status,
                    answer_headers,
                    b"".join(chunks),
                    broken,
                )
            )

    do_GET = do_POST = do_PUT = do_DELETE = _forward


def _events(body: bytes) -> list[tuple[str | None, Any]]:
    """(event name, parsed data) per SSE event (data that is not JSON stays text)."""
    out: list[tuple[str | None, Any]] = []
    for block in body.decode("utf-8", errors="replace").replace("\r\n", "\n").split("\n\n"):
        name: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())
        if not data:
            continue
        text = "\n".join(data)
        try:
            out.append((name, json.loads(text)))
        except ValueError:
            out.append((name, text))
    return out


@dataclass(frozen=True, slots=True)
class StreamEnd:
    """How a stream ended for its reader: ``reason`` is Anthropic's ``stop_reason``,
    Chat's ``finish_reason``, or Responses' terminal event (``completed``,
    ``incomplete:<reason>``, ``failed``); ``"error"`` for an error event; ``None`` when
    the stream never said. ``terminal``: ``message_stop`` / ``[DONE]`` / a Responses
    terminal event arrived."""

    reason: str | None
    terminal: bool


def _whole(body: bytes) -> dict[str, Any] | None:
    """A non-streamed answer: the body is one JSON object, not events."""
    text = body.decode("utf-8", errors="replace").strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _whole_end(wire: Wire | None, answer: Mapping[str, Any]) -> StreamEnd:
    if answer.get("type") == "error" or (wire is not Wire.RESPONSES and "error" in answer):
        return StreamEnd("error", True)
    if wire is Wire.ANTHROPIC:
        return StreamEnd(answer.get("stop_reason"), True)
    if wire is Wire.CHAT:
        choices = answer.get("choices") or [{}]
        return StreamEnd(choices[0].get("finish_reason"), True)
    status = answer.get("status")
    if status == "incomplete":
        details = answer.get("incomplete_details") or {}
        return StreamEnd(f"incomplete:{details.get('reason')}", True)
    return StreamEnd(status if isinstance(status, str) else None, True)


def stream_end(wire: Wire | None, body: bytes) -> StreamEnd:
    """The :class:`StreamEnd` of a recorded SSE ``body`` in ``wire``'s terms (a whole
    JSON answer: its stop reason, and ``terminal``)."""
    whole = _whole(body)
    if whole is not None:
        return _whole_end(wire, whole)
    reason: str | None = None
    terminal = False
    for name, data in _events(body):
        if wire is Wire.ANTHROPIC and isinstance(data, dict):
            kind = data.get("type")
            if kind == "message_delta":
                reason = (data.get("delta") or {}).get("stop_reason") or reason
            elif kind == "message_stop":
                terminal = True
            elif kind == "error":
                reason = "error"
        elif wire is Wire.CHAT:
            if data == "[DONE]":
                terminal = True
            elif isinstance(data, dict):
                if "error" in data:
                    reason = "error"
                for choice in data.get("choices") or []:
                    reason = choice.get("finish_reason") or reason
        elif wire is Wire.RESPONSES and isinstance(data, dict):
            kind = data.get("type") or name
            if kind == "response.completed":
                reason, terminal = "completed", True
            elif kind == "response.incomplete":
                details = (data.get("response") or {}).get("incomplete_details") or {}
                reason, terminal = f"incomplete:{details.get('reason')}", True
            elif kind == "response.failed":
                reason, terminal = "failed", True
            elif kind == "error":
                reason = "error"
    return StreamEnd(reason, terminal)


@dataclass(frozen=True, slots=True)
class StreamCall:
    """A tool call as a client read it: ``arguments`` is the text (Anthropic's whole
    ``input``: its JSON)."""

    id: str
    name: str
    arguments: str


def _whole_calls(wire: Wire | None, answer: Mapping[str, Any]) -> list[StreamCall]:
    out: list[StreamCall] = []
    if wire is Wire.ANTHROPIC:
        for block in answer.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                arguments = json.dumps(block.get("input"), ensure_ascii=False)
                out.append(StreamCall(str(block.get("id")), str(block.get("name")), arguments))
    elif wire is Wire.CHAT:
        for choice in answer.get("choices") or []:
            for call in (choice.get("message") or {}).get("tool_calls") or []:
                function = call.get("function") or {}
                out.append(
                    StreamCall(
                        str(call.get("id")),
                        str(function.get("name")),
                        str(function.get("arguments", "")),
                    )
                )
    elif wire is Wire.RESPONSES:
        for item in answer.get("output") or []:
            if isinstance(item, dict) and item.get("type") == "function_call":
                out.append(
                    StreamCall(
                        str(item.get("call_id")),
                        str(item.get("name")),
                        str(item.get("arguments", "")),
                    )
                )
    return out


def stream_calls(wire: Wire | None, body: bytes) -> list[StreamCall]:
    """The tool calls a recorded ``body`` carried, in order, their arguments joined from
    the deltas (a call whose start arrived is listed even if its arguments were cut)."""
    whole = _whole(body)
    if whole is not None:
        return _whole_calls(wire, whole)
    heads: dict[int, tuple[str, str]] = {}
    pieces: dict[int, list[str]] = {}
    for _, data in _events(body):
        if not isinstance(data, dict):
            continue
        if wire is Wire.ANTHROPIC:
            kind = data.get("type")
            block = data.get("content_block") or {}
            index = data.get("index")
            if kind == "content_block_start" and block.get("type") == "tool_use":
                heads[index] = (str(block.get("id")), str(block.get("name")))
                pieces[index] = []
            elif kind == "content_block_delta" and index in pieces:
                pieces[index].append((data.get("delta") or {}).get("partial_json", ""))
        elif wire is Wire.CHAT:
            for choice in data.get("choices") or []:
                for call in (choice.get("delta") or {}).get("tool_calls") or []:
                    index = call.get("index", 0)
                    function = call.get("function") or {}
                    if index not in heads:
                        heads[index] = (str(call.get("id")), str(function.get("name")))
                        pieces[index] = []
                    pieces[index].append(function.get("arguments") or "")
        elif wire is Wire.RESPONSES:
            kind = data.get("type")
            item = data.get("item") or {}
            index = data.get("output_index")
            if kind == "response.output_item.added" and item.get("type") == "function_call":
                heads[index] = (str(item.get("call_id")), str(item.get("name")))
                pieces[index] = [str(item.get("arguments") or "")]
            elif kind == "response.function_call_arguments.delta" and index in pieces:
                pieces[index].append(str(data.get("delta", "")))
    return [StreamCall(*heads[i], "".join(pieces[i])) for i in sorted(heads)]


def stream_text(wire: Wire | None, body: bytes) -> str:
    """The assistant text a recorded ``body`` carried (no reasoning, no calls)."""
    whole = _whole(body)
    if whole is not None:
        if wire is Wire.ANTHROPIC:
            blocks = whole.get("content") or []
            return "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        if wire is Wire.CHAT:
            choices = whole.get("choices") or []
            return "".join(str((c.get("message") or {}).get("content") or "") for c in choices)
        return "".join(
            str(part.get("text", ""))
            for item in whole.get("output") or []
            if item.get("type") == "message"
            for part in item.get("content") or []
        )
    out: list[str] = []
    for _, data in _events(body):
        if not isinstance(data, dict):
            continue
        if wire is Wire.ANTHROPIC and data.get("type") == "content_block_delta":
            out.append((data.get("delta") or {}).get("text", ""))
        elif wire is Wire.CHAT:
            for choice in data.get("choices") or []:
                out.append((choice.get("delta") or {}).get("content") or "")
        elif wire is Wire.RESPONSES and data.get("type") == "response.output_text.delta":
            out.append(str(data.get("delta", "")))
    return "".join(out)
