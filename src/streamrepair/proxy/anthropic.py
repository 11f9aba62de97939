"""The Anthropic Messages relay.

What the client receives (see ``relay.py`` for the general rules):

* ``message_start``, ``ping``, text, thinking (with ``signature_delta``),
  ``redacted_thinking`` and server-tool blocks go out as they arrive; a block's
  ``index`` is rewritten only when a withheld tool block before it shifted the
  positions (``index`` must be the block's position in the final ``content``);
* ``tool_use`` blocks (start, ``input_json_delta`` pieces, stop) are withheld, and so
  are ``message_delta`` and ``message_stop``;
* at the end: one ``tool_use`` block per ready call, its ``content_block_start`` as the
  upstream sent it (``input: {}``) followed by one ``input_json_delta`` with the whole
  repaired input (never ``input: {}`` without its delta), then a text block per withheld
  call with the notice, then ``message_delta`` with ``stop_reason`` ``tool_use`` when a
  call was sent (Claude Code runs tools only then), ``max_tokens`` when one was cut off,
  and ``message_stop``. An ``error`` event ends the stream as the upstream sent it.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from ..events import Done, StreamEvent, ToolCallReady
from .relay import (
    ApiProtocol,
    Relay,
    closing_stop,
    compact_json,
    notice_text,
    notice_verdicts,
    sse_event,
)

__all__ = ["AnthropicRelay"]


class AnthropicRelay(Relay):
    """Anthropic Messages: see the module docstring."""

    protocol: ClassVar[ApiProtocol] = ApiProtocol.ANTHROPIC
    #: Measured in Claude Code 2.1.332: a ``tool_use`` block never closed is dropped, in
    #: every ending; a closed one is run (after a JSON parse). A rejected streamed call is
    #: left unclosed.
    progressive: ClassVar[bool] = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._held: set[int] = set()  # upstream indexes of withheld tool_use blocks
        self._index: dict[int, int] = {}  # upstream index -> client index
        self._next = 0
        self._starts: dict[str, dict[str, Any]] = {}  # tool id -> content_block as sent
        self._end_seen = False
        self._prefilled_stop = False  # the stop reason came on message_start
        self._output_tokens = 0
        # Text calls: text and thinking blocks carry the stage's text, so a block is
        # started on the client with its first text (a block of only markup is never
        # sent: the API rejects empty text blocks when they come back).
        self._textual: dict[int, str] = {}  # upstream index -> "text" / "thinking"
        self._pending: dict[int, dict[str, Any]] = {}  # started upstream, not yet here
        self._open: tuple[int | None, str, int] | None = None  # (upstream, kind, index)
        self._after: list[tuple[bool, str]] = []  # the other kind's text, after the block
        self._streamed_index: int | None = None  # the client index of the streamed call

    def _chunk(
        self,
        name: str | None,
        data: str,
        chunk: dict[str, Any],
        events: list[StreamEvent],
        out: list[bytes],
    ) -> None:
        kind = chunk.get("type")
        if self._end_seen or kind in ("message_delta", "message_stop", "error"):
            if kind == "message_delta":
                self._end_seen = True
                delta = chunk.get("delta")
                if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
                    self.upstream_stop = delta["stop_reason"]
            self._hold((name, data))
            return
        if kind == "message_start":
            out.append(sse_event(self._start(chunk) or data, name))
            self._released.clear()  # a filled-in message_start is sent as it came
            return
        index = chunk.get("index")
        if type(index) is not int:
            out.append(sse_event(data, name))
            return
        if self.text_calls and self._text_block(kind, index, chunk, name, out):
            return
        if kind == "content_block_start":
            block = chunk.get("content_block")
            if isinstance(block, dict) and block.get("type") == "tool_use":
                self._held.add(index)
                if isinstance(block.get("id"), str):
                    self._starts[block["id"]] = block
                return
            self._held.discard(index)
            self._index[index] = self._next
            self._next += 1
        if index in self._held:
            return
        mapped = self._index.get(index)
        if mapped is None:  # a delta for a block never started: give it the next place
            mapped = self._index[index] = self._next
            self._next += 1
        if mapped == index:
            out.append(sse_event(data, name))
        else:
            out.append(sse_event(compact_json({**chunk, "index": mapped}), name))

    # -- text calls: the stage's text in blocks of the client's ---------------------------

    def _text_block(
        self, kind: object, index: int, chunk: dict[str, Any], name: str | None, out: list[bytes]
    ) -> bool:
        """An event of a text or thinking block, with text calls on: its text is the
        stage's. False for the events of other blocks (handled as without text calls)."""
        if kind == "content_block_start":
            block = chunk.get("content_block")
            btype = block.get("type") if isinstance(block, dict) else None
            if btype not in ("text", "thinking"):
                self._close_open(out)
                return False
            assert isinstance(block, dict)
            self._textual[index] = btype
            self._pending[index] = {**block, btype: ""}  # its text comes from the stage
            self._place(out, index)
            return True
        textual = self._textual.get(index)
        if textual is None:
            return False
        self._place(out, index)
        if kind == "content_block_delta":
            delta = chunk.get("delta")
            dtype = delta.get("type") if isinstance(delta, dict) else None
            if dtype not in ("text_delta", "thinking_delta"):  # signature, citation: kept
                mapped = self._client_block(out, index)
                if mapped is not None:
                    out.append(sse_event(compact_json({**chunk, "index": mapped}), name))
        elif kind == "content_block_stop":
            if self._open is not None and self._open[0] == index:
                self._close_open(out)
            self._pending.pop(index, None)  # nothing of it was sent: neither is its end
            del self._textual[index]
            after, self._after = self._after, []
            for reasoning, text in after:
                self._put(out, reasoning, text, None)
            self._close_open(out)
        return True

    def _place(self, out: list[bytes], index: int | None) -> None:
        """The stage's text for this event: in block ``index`` when it is of its kind,
        else after it."""
        for reasoning, text in self._take_pieces():
            self._put(out, reasoning, text, index)

    def _put(self, out: list[bytes], reasoning: bool, text: str, index: int | None) -> None:
        kind = "thinking" if reasoning else "text"
        textual = self._textual.get(index) if index is not None else None
        if textual is not None and textual != kind:
            self._after.append((reasoning, text))  # e.g. reasoning released in a text block
            return
        mapped = self._client_block(out, index) if index is not None and textual else None
        if mapped is None:
            opened = self._open
            if opened is not None and opened[1] == kind:
                mapped = opened[2]
            else:
                self._close_open(out)
                block: dict[str, Any] = {"type": kind, kind: ""}
                if reasoning:
                    block["signature"] = ""
                mapped = self._begin(out, None, kind, block)
        field = "thinking" if reasoning else "text"
        delta = {"type": f"{kind}_delta", field: text}
        out.append(_event("content_block_delta", index=mapped, delta=delta))

    def _client_block(self, out: list[bytes], index: int) -> int | None:
        """The client's index of upstream block ``index``, started now if it was not
        yet; None when it was closed already."""
        opened = self._open
        if opened is not None and opened[0] == index:
            return opened[2]
        block = self._pending.pop(index, None)
        if block is None:
            return None
        self._close_open(out)
        return self._begin(out, index, self._textual[index], block)

    def _begin(self, out: list[bytes], index: int | None, kind: str, block: dict[str, Any]) -> int:
        mapped = self._next
        self._next += 1
        out.append(_event("content_block_start", index=mapped, content_block=block))
        self._open = (index, kind, mapped)
        return mapped

    def _close_open(self, out: list[bytes]) -> None:
        if self._open is not None:
            out.append(_event("content_block_stop", index=self._open[2]))
            self._open = None

    def _ends(self, chunk: dict[str, Any]) -> bool:
        return chunk.get("type") == "message_stop"

    def _send_arguments(self, call_id: str, name: str, text: str, out: list[bytes]) -> None:
        if self._streamed_index is None:
            self._close_open(out)
            start = dict(self._starts.get(call_id) or {"type": "tool_use"})
            start.update(id=call_id, name=name, input={})
            self._streamed_index = self._next
            self._next += 1
            out.append(
                _event("content_block_start", index=self._streamed_index, content_block=start)
            )
        delta = {"type": "input_json_delta", "partial_json": text}
        out.append(_event("content_block_delta", index=self._streamed_index, delta=delta))

    def _start(self, chunk: dict[str, Any]) -> str | None:
        """A ``message_start`` whose ``content`` is already filled in (the response after
        programmatic tool calling): its ``tool_use`` blocks are withheld like streamed ones
        and its stop reason moves to a ``message_delta`` at the end. None: send as is."""
        message = chunk.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(content, list) or not content:
            return None
        kept = []
        for i, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "tool_use":
                self._held.add(i)
                if isinstance(block.get("id"), str):
                    self._starts[block["id"]] = {**block, "input": {}}
            else:
                self._index[i] = self._next
                self._next += 1
                kept.append(block)
        if len(kept) == len(content):
            return None
        reason = message.get("stop_reason")
        if isinstance(reason, str):
            self.upstream_stop = reason
            self._prefilled_stop = True
        usage = message.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("output_tokens"), int):
            self._output_tokens = usage["output_tokens"]
        return compact_json({**chunk, "message": {**message, "content": kept, "stop_reason": None}})

    def _turn_state(self, done: Done) -> tuple[str | None, tuple[dict[str, Any], ...]]:
        message = done.messages[0] if done.messages else {}
        content = message.get("content")
        blocks = tuple(
            b
            for b in (content if isinstance(content, list) else [])
            if isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking")
        )
        return None, blocks

    def _final(self, done: Done) -> list[bytes]:
        out: list[bytes] = []
        streamed = self._streamed_ready()
        if streamed is not None:  # the streamed call is ready: its rest, and its end
            _, rest = streamed
            if rest:
                delta = {"type": "input_json_delta", "partial_json": rest}
                out.append(_event("content_block_delta", index=self._streamed_index, delta=delta))
            out.append(_event("content_block_stop", index=self._streamed_index))
        # (A streamed call that was rejected stays unclosed: never runnable.)
        out.extend(self._behind)
        for reasoning, text in self._late_pieces():  # held by the text-call stage
            self._put(out, reasoning, text, None)
        self._close_open(out)
        index = self._next
        for verdict in self.verdicts:
            if not isinstance(verdict, ToolCallReady) or verdict.call_id == self.streamed:
                continue
            start = dict(self._starts.get(verdict.origin_id) or {"type": "tool_use"})
            start.update(id=verdict.call_id, name=verdict.name, input={})
            arguments = self._arguments(verdict)
            out.append(_event("content_block_start", index=index, content_block=start))
            out.append(
                _event(
                    "content_block_delta",
                    index=index,
                    delta={"type": "input_json_delta", "partial_json": arguments},
                )
            )
            out.append(_event("content_block_stop", index=index))
            index += 1
        for verdict in notice_verdicts(self.verdicts):
            block = {"type": "text", "text": ""}
            out.append(_event("content_block_start", index=index, content_block=block))
            out.append(
                _event(
                    "content_block_delta",
                    index=index,
                    delta={"type": "text_delta", "text": notice_text(verdict)},
                )
            )
            out.append(_event("content_block_stop", index=index))
            index += 1
        stop = closing_stop(
            self.upstream_stop, self.verdicts, tool="tool_use", length="max_tokens", stop="end_turn"
        )
        has_delta = any('"message_delta"' in data for _, data in self.tail.events)
        for name, data in self.tail.events:
            if stop != self.upstream_stop and '"message_delta"' in data:
                data = _with_stop(data, stop)
            if self._prefilled_stop and not has_delta and '"message_stop"' in data:
                has_delta = True  # the stop reason message_start carried, where it belongs
                out.append(
                    _event(
                        "message_delta",
                        delta={"stop_reason": stop, "stop_sequence": None},
                        usage={"output_tokens": self._output_tokens},
                    )
                )
            out.append(sse_event(data, name))
        return out

    def error_event(self, message: str) -> bytes:
        return _event("error", error={"type": "api_error", "message": message})


def _event(kind: str, **fields: Any) -> bytes:
    return sse_event(compact_json({"type": kind, **fields}), kind)


def _with_stop(data: str, stop: str | None) -> str:
    try:
        chunk = json.loads(data)
    except ValueError:
        return data
    delta = chunk.get("delta") if isinstance(chunk, dict) else None
    if not isinstance(delta, dict) or chunk.get("type") != "message_delta":
        return data
    delta["stop_reason"] = stop
    return compact_json(chunk)
