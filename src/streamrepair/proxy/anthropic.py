"""Anthropic Messages: everything the proxy does differently for this API, handed over
as one row of the table of APIs (``_API``; ``_api.py`` says what each part is for).

Streams (:class:`AnthropicRelay`; ``relay.py`` for the general rules). What the client
receives:

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

Whole bodies (``whole.py``): the ``content`` is told as a stream (a ``tool_use`` block
last at ``max_tokens`` is left open, as a stream cut there would leave it); each ready
call keeps its block with the finished ``input``, the others leave, a ``text`` block per
notice is appended, and ``stop_reason`` follows the calls kept.

Requests (``fixes.py``): the thinking blocks the proxy streamed (with their signatures)
are put back before the ``tool_use`` blocks of an assistant turn that lost them, unless
thinking is off; a ``tool_use`` with no ``tool_result`` in the next user turn gets one;
the repair notes go in the ``tool_result`` that answers a repaired call. The proxy's own
errors are Anthropic error bodies, and the upstream's key goes in ``x-api-key``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar, Final

from ..events import Done, StreamEvent, ToolCallReady
from ..providers.normalizer import Provider
from ..turn.history import ReasoningPolicy, copy_json
from ._api import Answer, Api, CallSite
from ._history import add_id, count, dicts, not_started
from .memo import CallMemo, turn_memos
from .positions import Renumbering
from .relay import ApiProtocol, Relay
from .wire import closing_stop, compact_json, notice_text, sse_event

__all__ = ["AnthropicRelay"]

_THINKING: Final = ("thinking", "redacted_thinking")


class AnthropicRelay(Relay):
    """Anthropic Messages: see the module docstring."""

    protocol: ClassVar[ApiProtocol] = ApiProtocol.ANTHROPIC
    provider: ClassVar[Provider] = Provider.ANTHROPIC
    #: Measured in Claude Code 2.1.332: a ``tool_use`` block never closed is dropped, in
    #: every ending; a closed one is run (after a JSON parse). A rejected streamed call is
    #: left unclosed.
    progressive: ClassVar[bool] = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._positions = Renumbering()  # upstream index -> client index
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
                self._positions.hold(index)
                if isinstance(block.get("id"), str):
                    self._starts[block["id"]] = block
                return
            self._positions.start(index)
        mapped = self._positions.place(index)  # a block never started gets the next place
        if mapped is None:
            return
        if mapped == index:
            out.append(sse_event(data, name))
        else:
            out.append(sse_event(compact_json({**chunk, "index": mapped}), name))

    def _passes(self, name: str | None, data: str, chunk: dict[str, Any], out: list[bytes]) -> bool:
        # What _chunk does with a content_block_delta before the end: a text or thinking
        # piece goes out in its block's place (its index rewritten only when that moved);
        # a piece of a withheld tool_use block's input sends nothing.
        if self._end_seen or chunk.get("type") != "content_block_delta":
            return False
        index = chunk.get("index")
        if type(index) is not int:
            return False
        if self.stream.feed_text_only(chunk):
            mapped = self._positions.place(index)
            if mapped == index:
                out.append(sse_event(data, name))
            elif mapped is not None:
                out.append(sse_event(compact_json({**chunk, "index": mapped}), name))
            return True
        return (
            self._positions.held(index)
            and self._holds_arguments
            and self.stream.feed_arguments_only(chunk)
        )

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
        mapped = self._positions.take()
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
            self._streamed_index = self._positions.take()
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
                self._positions.hold(i)
                if isinstance(block.get("id"), str):
                    self._starts[block["id"]] = {**block, "input": {}}
            else:
                self._positions.start(i)
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
            if isinstance(b, dict) and b.get("type") in _THINKING
        )
        return None, blocks

    # -- the end: the pieces of Relay._ending -------------------------------------------------

    def _end_streamed(self, out: list[bytes], call: ToolCallReady, rest: str) -> None:
        if rest:
            delta = {"type": "input_json_delta", "partial_json": rest}
            out.append(_event("content_block_delta", index=self._streamed_index, delta=delta))
        out.append(_event("content_block_stop", index=self._streamed_index))

    def _late_text(self, out: list[bytes], pieces: list[tuple[bool, str]]) -> None:
        for reasoning, text in pieces:  # held by the text-call stage
            self._put(out, reasoning, text, None)
        self._close_open(out)

    def _send_call(self, out: list[bytes], ready: ToolCallReady, arguments: str) -> None:
        start = dict(self._starts.get(ready.origin_id) or {"type": "tool_use"})
        start.update(id=ready.call_id, name=ready.name, input={})
        delta = {"type": "input_json_delta", "partial_json": arguments}
        self._block(out, start, delta)

    def _send_notice(self, out: list[bytes], number: int, text: str) -> None:
        self._block(out, {"type": "text", "text": ""}, {"type": "text_delta", "text": text})

    def _block(self, out: list[bytes], start: dict[str, Any], delta: dict[str, Any]) -> None:
        """A whole block at the next index: its start, one delta, its stop."""
        index = self._positions.take()
        out.append(_event("content_block_start", index=index, content_block=start))
        out.append(_event("content_block_delta", index=index, delta=delta))
        out.append(_event("content_block_stop", index=index))

    def _stops(self) -> tuple[str, str]:
        return "tool_use", "end_turn"

    def _send_tail(self, out: list[bytes], stop: str | None) -> None:
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


def _error_body(status: int, message: str, kind: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


# -- whole bodies ----------------------------------------------------------------------------


def _body_events(body: dict[str, Any]) -> list[tuple[str | None, str]] | None:
    content = body.get("content")
    if not isinstance(content, list) or body.get("type", "message") != "message":
        return None
    if not any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content):
        return None
    ends = ("content", "stop_reason", "stop_sequence")
    message = {k: v for k, v in body.items() if k not in ends}
    message.update(content=[], stop_reason=None, stop_sequence=None)
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    reason = body.get("stop_reason")
    # At the output limit the last block is the one the model was writing: a tool_use
    # there is unfinished even though its input arrives as an object (the server parsed
    # what there was), so its block is left open, as a stream cut there would leave it.
    unfinished = len(content) - 1 if reason == "max_tokens" else -1
    for index, block in enumerate(content):
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use":
            start = {**block, "input": {}}
            events.append({"type": "content_block_start", "index": index, "content_block": start})
            given = block.get("input")
            text = given if isinstance(given, str) else "" if given is None else compact_json(given)
            if text:
                delta = {"type": "input_json_delta", "partial_json": text}
                events.append({"type": "content_block_delta", "index": index, "delta": delta})
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": block})
        if index != unfinished:
            events.append({"type": "content_block_stop", "index": index})
    if isinstance(reason, str) and reason:
        stop = {"stop_reason": reason, "stop_sequence": body.get("stop_sequence")}
        end: dict[str, Any] = {"type": "message_delta", "delta": stop}
        if isinstance(body.get("usage"), dict):
            end["usage"] = body["usage"]
        events.append(end)
    events.append({"type": "message_stop"})
    return [(str(e["type"]), compact_json(e)) for e in events]


def _rewrite_body(relay: Relay, body: dict[str, Any]) -> dict[str, Any]:
    refusals = relay.refusal_calls()
    content: list[Any] = []
    sent = False
    for index, block in enumerate(body["content"]):
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            content.append(block)
            continue
        for verdict in relay.verdicts_at(index):
            if not isinstance(verdict, ToolCallReady):
                if verdict.call_id not in refusals:
                    continue
                verdict = refusals[verdict.call_id]  # what goes out for it
            entry = {**block, "name": verdict.name}
            if verdict.call_id != verdict.origin_id:
                entry["id"] = verdict.call_id
            if block.get("input") != verdict.arguments:
                entry["input"] = verdict.arguments
            content.append(block if entry == block else entry)
            sent = True
    refused = relay.refused()
    if not refusals:
        for verdict in refused:
            content.append({"type": "text", "text": notice_text(verdict)})
    out = {**body, "content": content}
    stop = closing_stop(
        relay.upstream_stop,
        calls_sent=sent,
        withheld=bool(refused),
        tool="tool_use",
        stop="end_turn",
    )
    if stop != relay.upstream_stop:
        out["stop_reason"] = stop
    return out


def _memos(body: dict[str, Any]) -> list[CallMemo]:
    """The thinking blocks of a body passed through unread, on its first call."""
    content = body.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    calls = [(b.get("id"), b.get("name")) for b in blocks if b.get("type") == "tool_use"]
    thinking = tuple(b for b in blocks if b.get("type") in _THINKING)
    return turn_memos(calls, thinking=thinking)


# -- requests ----------------------------------------------------------------------------------


def _referenced_calls(body: Mapping[str, Any]) -> list[str]:
    ids: dict[str, None] = {}
    for message in dicts(body.get("messages")):
        for block in dicts(message.get("content")):
            add_id(ids, block.get("id") if block.get("type") == "tool_use" else None)
            add_id(ids, block.get("tool_use_id") if block.get("type") == "tool_result" else None)
    return list(ids)


def _before(
    body: dict[str, Any],
    memos: Mapping[str, CallMemo],
    policy: ReasoningPolicy,
    counts: dict[str, int],
) -> bool:
    messages = body["messages"]
    thinking = body.get("thinking")
    thinking_off = (
        isinstance(thinking, dict) and thinking.get("type") == "disabled"
    ) or policy is ReasoningPolicy.NEVER_SEND
    changed = False
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        if not isinstance(content, list):
            continue
        uses = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
        if not uses:
            continue
        has_thinking = any(isinstance(b, dict) and b.get("type") in _THINKING for b in content)
        if not has_thinking and not thinking_off:
            known = [memos[u["id"]] for u in uses if u.get("id") in memos]
            found = next((m.thinking for m in known if m.thinking), ())
            if found:
                messages[i] = {**message, "content": [*copy_json(list(found)), *content]}
                count(counts, "thinking_restored")
                changed = True
        after = messages[i + 1] if i + 1 < len(messages) else None
        if not isinstance(after, dict) or after.get("role") != "user":
            continue
        reply = after.get("content")
        blocks = (
            reply
            if isinstance(reply, list)
            else ([{"type": "text", "text": reply}] if isinstance(reply, str) and reply else [])
        )
        answered = {
            b.get("tool_use_id")
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "tool_result"
        }
        missing = [u for u in uses if isinstance(u.get("id"), str) and u["id"] not in answered]
        if missing:
            added = [
                {
                    "type": "tool_result",
                    "tool_use_id": u["id"],
                    "is_error": True,
                    "content": not_started(u["id"], str(u.get("name") or ""), u.get("input")),
                }
                for u in missing
            ]
            messages[i + 1] = {**after, "content": [*added, *blocks]}
            count(counts, "unanswered_call_answered", len(missing))
            changed = True
    return changed


def _answers(messages: list[Any]) -> Iterator[Answer]:
    """Each ``tool_result`` block of a user turn; a block's history is the turns before
    it and the other blocks of its turn."""
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if not isinstance(content, list):
            continue
        blocks = list(content)
        for k, block in enumerate(blocks):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                yield _answer(messages, i, blocks, k)


def _answer(messages: list[Any], i: int, blocks: list[Any], k: int) -> Answer:
    block = blocks[k]

    def earlier() -> list[Any]:
        out: list[Any] = [m for m in messages[:i] if isinstance(m, dict)]
        out.append({"content": [b for b in blocks if b is not block]})
        return out

    def replace(content: Any) -> None:
        blocks[k] = {**block, "content": content}
        messages[i] = {**messages[i], "content": blocks}

    return Answer(
        call_id=block.get("tool_use_id", ""),
        content=block.get("content"),
        earlier=earlier,
        replace=replace,
    )


def _calls(messages: list[Any]) -> Iterator[CallSite]:
    """Each ``tool_use`` block of an assistant turn."""
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for k, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "tool_use":
                yield CallSite(
                    call_id=block.get("id"),
                    name=block.get("name"),
                    restore=_restorer(messages, i, k),
                )


def _restorer(messages: list[Any], i: int, k: int) -> Callable[[str, str], None]:
    def restore(name: str, arguments: str) -> None:
        message = messages[i]  # as earlier restores left it
        content = list(message["content"])
        value = json.loads(arguments)
        content[k] = {**content[k], "name": name, "input": value if isinstance(value, dict) else {}}
        messages[i] = {**message, "content": content}

    return restore


_API: Final = Api(
    protocol=ApiProtocol.ANTHROPIC,
    relay=AnthropicRelay,
    path="/messages",
    follows=lambda body: True,
    key_header="x-api-key",
    error_body=_error_body,
    body_events=_body_events,
    rewrite_body=_rewrite_body,
    history="messages",
    referenced_calls=_referenced_calls,
    before=_before,
    answers=_answers,
    calls=_calls,
    note_part="text",
    memos=_memos,
)
