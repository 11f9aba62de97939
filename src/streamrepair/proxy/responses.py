"""OpenAI Responses: everything the proxy does differently for this API, handed over as
one row of the table of APIs (``_API``; ``_api.py`` says what each part is for).

Streams (:class:`ResponsesRelay`; ``relay.py`` for the general rules). What the client
receives:

* every event that is not about a ``function_call`` or ``custom_tool_call`` item goes
  out as it arrives (reasoning, messages, built-in tools, ``response.created``...);
  ``output_index`` is rewritten only where withheld items shifted the positions, and
  ``sequence_number`` only where withheld events left a gap, so that both keep counting
  as the SDKs expect;
* the events of tool-call items (``output_item.added``/``.done``,
  ``function_call_arguments.delta``/``.done``, ``custom_tool_call_input.*``) are
  withheld, and so is the terminal event (``response.completed``, ``.incomplete``,
  ``.failed``, ``error``);
* at the end: each ready call as a complete item (``output_item.added`` with
  ``arguments: ""``, one ``function_call_arguments.delta`` with the whole repaired
  text, ``.done``, ``output_item.done``), a message item per withheld call with the
  notice, then the terminal event whose ``response.output`` lists exactly the items
  sent, in order, as ``response.completed`` when a call was sent (Codex runs calls only
  from a completed response; the notice says what was cut) and ``response.incomplete``
  with ``max_output_tokens`` when no call was sent and one was cut off.

Whole bodies (``whole.py``): a finished response's ``output`` is told as a stream (a
call item marked unfinished is left open; a response still queued or in progress is not
judged); each ready call keeps its item with its arguments as the relay sends them, the
others leave, a message item per notice is appended, and ``status`` follows the calls
kept.

Requests (``fixes.py``): a call item with no output item gets one right after the calls
around it; the repair notes go in the output that answers a repaired call. Nothing is
remembered from a body passed through (the API keeps its own state).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from ..events import StreamEvent, ToolCallReady
from ..providers.normalizer import Provider, responses_client_item
from ..turn.history import ReasoningPolicy
from ._api import Answer, Api, CallSite, openai_error
from ._history import add_id, count, dicts, insert_after, not_started
from .emitters import argument_text
from .memo import CallMemo
from .positions import Renumbering
from .relay import MAX_HELD_EVENTS, ApiProtocol, Relay
from .wire import closing_stop, compact_json, notice_text, sse_event

__all__ = ["ResponsesRelay", "notice_item"]

#: The call items, and the field their argument text is in.
_CALL_ITEMS: Final = {"function_call": "arguments", "custom_tool_call": "input"}
_CALL_EVENTS: Final = frozenset(
    {
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done",
    }
)
_TERMINAL: Final = frozenset(
    {"response.completed", "response.incomplete", "response.failed", "error"}
)
#: Text calls: the items whose text is the stage's, and their events.
_TEXT_ITEMS: Final = {"message": False, "reasoning": True}  # type -> carries reasoning
_TEXT_DELTAS: Final = {
    "response.output_text.delta": ("content", "content_index"),
    "response.reasoning_text.delta": ("content", "content_index"),
    "response.reasoning_summary_text.delta": ("summary", "summary_index"),
}
_PART_DONE: Final = {
    "response.output_text.done": ("content", "content_index"),
    "response.reasoning_text.done": ("content", "content_index"),
    "response.reasoning_summary_text.done": ("summary", "summary_index"),
    "response.content_part.done": ("content", "content_index"),
    "response.reasoning_summary_part.done": ("summary", "summary_index"),
}
_PART_ADDED: Final = frozenset(
    {"response.content_part.added", "response.reasoning_summary_part.added"}
)


@dataclass(slots=True)
class _TextItem:
    """A message or reasoning item whose text is the text-call stage's."""

    reasoning: bool
    item_id: str | None
    pending: list[tuple[str | None, dict[str, Any]]]  # its first events, not yet sent
    texts: dict[tuple[str, int], str] = field(default_factory=dict)  # part -> text sent
    last: dict[str, Any] | None = None  # the last text delta, for text released later
    held: list[tuple[str | None, dict[str, Any]]] = field(default_factory=list)
    after: list[tuple[bool, str]] = field(default_factory=list)  # the other kind's text
    mapped: int | None = None  # the client's output_index, once sent
    item: dict[str, Any] | None = None  # as the client got it at its end


class ResponsesRelay(Relay):
    """OpenAI Responses: see the module docstring."""

    protocol: ClassVar[ApiProtocol] = ApiProtocol.RESPONSES
    provider: ClassVar[Provider] = Provider.RESPONSES
    #: A function call is one when its ``output_item.done`` comes (Codex runs only those;
    #: the terminal ``response.output`` lists only calls sent whole): a rejected streamed
    #: call never gets one.
    progressive: ClassVar[bool] = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._positions = Renumbering()  # upstream output index -> client index
        self._items: dict[str, dict[str, Any]] = {}  # call_id -> item as added
        self._seq: int | None = None  # next sequence number to send
        self._end_seen = False
        # Text calls: message and reasoning items by upstream output index, items of
        # text the stage released apart from them, the ids of items never sent.
        self._texts: dict[int, _TextItem] = {}
        self._by_id: dict[str, _TextItem] = {}
        self._extra: list[dict[str, Any]] = []
        self._extra_count = 0
        self._streamed_item: dict[str, Any] | None = None  # the streamed call's item
        self._streamed_index = 0
        # The end: the items sent there, and the streamed call's item once it is whole.
        self._emitted: list[dict[str, Any]] = []
        self._first: dict[str, Any] | None = None

    def _number(self, chunk: dict[str, Any]) -> dict[str, Any] | None:
        """The chunk with the next sequence number, or None when it already has it."""
        seq = chunk.get("sequence_number")
        if type(seq) is not int:
            return None
        if self._seq is None:
            self._seq = seq
        mine = self._seq
        self._seq += 1
        return None if seq == mine else {**chunk, "sequence_number": mine}

    def _chunk(
        self,
        name: str | None,
        data: str,
        chunk: dict[str, Any],
        events: list[StreamEvent],
        out: list[bytes],
    ) -> None:
        kind = chunk.get("type")
        if self._end_seen or kind in _TERMINAL:
            self._end_seen = True
            if kind == "response.completed":
                self.upstream_stop = "completed"
            elif kind == "response.incomplete":
                response = chunk.get("response")
                details = response.get("incomplete_details") if isinstance(response, dict) else None
                reason = details.get("reason") if isinstance(details, dict) else None
                self.upstream_stop = "incomplete" if reason == "max_output_tokens" else str(reason)
            self._hold((name, data))
            return
        index = chunk.get("output_index")
        item = chunk.get("item")
        if (
            self.text_calls
            and type(index) is int
            and self._text_event(kind, index, chunk, name, out)
        ):
            return
        if kind == "response.output_item.added" and type(index) is int and isinstance(item, dict):
            if item.get("type") in _CALL_ITEMS:
                self._positions.hold(index)
                call_id = item.get("call_id") or item.get("id")
                if isinstance(call_id, str):
                    self._items[call_id] = item
                return
            self._positions.start(index)
        if type(index) is int:
            if kind in _CALL_EVENTS:
                return
            mapped = self._positions.place(index)
            if mapped is None:
                return
            if mapped != index:
                chunk = {**chunk, "output_index": mapped}
                renumbered = self._number(chunk)
                out.append(sse_event(compact_json(renumbered or chunk), name))
                return
        elif kind in _CALL_EVENTS:
            return
        renumbered = self._number(chunk)
        out.append(sse_event(data if renumbered is None else compact_json(renumbered), name))

    # -- text calls: the stage's text in the client's items --------------------------------

    def _text_event(
        self, kind: object, index: int, chunk: dict[str, Any], name: str | None, out: list[bytes]
    ) -> bool:
        """An event of a message or reasoning item, with text calls on: its text is the
        stage's. False for the events of other items (handled as without text calls)."""
        if kind == "response.output_item.added":
            item = chunk.get("item")
            itype = item.get("type") if isinstance(item, dict) else None
            if not isinstance(itype, str) or itype not in _TEXT_ITEMS:
                return False
            assert isinstance(item, dict)
            item_id = item.get("id") if isinstance(item.get("id"), str) else None
            state = _TextItem(
                reasoning=_TEXT_ITEMS[itype], item_id=item_id, pending=[(name, chunk)]
            )
            self._texts[index] = state
            if item_id is not None:
                self._by_id[item_id] = state
            if state.reasoning:  # sent at once: it may carry encrypted reasoning
                self._send_pending(out, state)
            self._place(out, state, None)
            return True
        found = self._texts.get(index)
        if found is None:
            return False
        state = found
        if kind in _TEXT_DELTAS:
            self._place(out, state, chunk)
        elif kind in _PART_DONE:
            self._place(out, state, None)
            if len(state.held) >= MAX_HELD_EVENTS:
                self._fail(f"the upstream sent more than {MAX_HELD_EVENTS} parts in an item")
                return True
            state.held.append((name, chunk))
        elif kind in _PART_ADDED and state.pending:
            state.pending.append((name, chunk))
        elif kind == "response.output_item.done":
            self._place(out, state, None)  # the block end decided what the stage held
            self._item_done(out, state, chunk, name)
            del self._texts[index]
        else:  # a refusal, an annotation, a part added to a sent item: as it came
            self._place(out, state, None)
            self._send_pending(out, state)
            if state.mapped is not None:
                self._send(out, {**chunk, "output_index": state.mapped}, name)
        return True

    def _send(self, out: list[bytes], chunk: dict[str, Any], name: str | None) -> None:
        out.append(sse_event(compact_json(self._number(chunk) or chunk), name))

    def _send_pending(self, out: list[bytes], state: _TextItem) -> None:
        if not state.pending:
            return
        state.mapped = self._positions.take()
        for name, chunk in state.pending:
            self._send(out, {**chunk, "output_index": state.mapped}, name)
        state.pending = []

    def _place(self, out: list[bytes], state: _TextItem, chunk: dict[str, Any] | None) -> None:
        """The stage's text for this event: in ``state``'s item when it is of its kind
        (as ``chunk``, a text delta, or the item's last one), else after the item."""
        for reasoning, text in self._take_pieces():
            if reasoning != state.reasoning:
                state.after.append((reasoning, text))
                continue
            template = chunk if chunk is not None else state.last
            if template is None:
                template = {
                    "type": "response.reasoning_text.delta"
                    if reasoning
                    else "response.output_text.delta",
                    "item_id": state.item_id,
                    "content_index": 0,
                }
            state.last = template
            where, key = _TEXT_DELTAS.get(str(template.get("type")), ("content", "content_index"))
            part = template.get(key)
            part = part if type(part) is int else 0
            self._send_pending(out, state)
            assert state.mapped is not None
            state.texts[(where, part)] = state.texts.get((where, part), "") + text
            sent = {**template, "output_index": state.mapped, "delta": text}
            if "logprobs" in sent and text != template.get("delta"):
                sent["logprobs"] = []
            self._send(out, sent, str(template.get("type")))

    def _item_done(
        self, out: list[bytes], state: _TextItem, chunk: dict[str, Any], name: str | None
    ) -> None:
        item = chunk.get("item")
        if not state.pending:  # else only markup: the item is not sent at all
            mapped = state.mapped
            for held_name, held in state.held:
                self._send(out, {**_part_text(held, state), "output_index": mapped}, held_name)
            if isinstance(item, dict):
                state.item = _item_text(item, state)
                self._send(out, {**chunk, "output_index": mapped, "item": state.item}, name)
        state.held = []
        for reasoning, text in state.after:
            self._extra_item(out, reasoning, text)
        state.after = []

    def _extra_item(self, out: list[bytes], reasoning: bool, text: str) -> None:
        """Text the stage released apart from its item: an item of its own."""
        self._extra_count += 1
        index = self._positions.take()
        if reasoning:
            item_id = f"rs_streamrepair_{self._extra_count}"
            item: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": []}
            self._emit(out, "response.output_item.added", output_index=index, item=item)
            where = {"item_id": item_id, "output_index": index, "content_index": 0}
            self._emit(out, "response.reasoning_text.delta", **where, delta=text)
            self._emit(out, "response.reasoning_text.done", **where, text=text)
            item = {**item, "content": [{"type": "reasoning_text", "text": text}]}
            self._emit(out, "response.output_item.done", output_index=index, item=item)
        else:
            item = self._message(out, f"msg_streamrepair_text_{self._extra_count}", index, text)
        self._extra.append(item)

    def _message(self, out: list[bytes], item_id: str, index: int, text: str) -> dict[str, Any]:
        """A complete assistant message item with ``text`` (:func:`notice_item`, whose
        events are sent); returns the item."""
        item = notice_item(item_id, text)
        full = item["content"][0]
        added = {**item, "status": "in_progress", "content": []}
        self._emit(out, "response.output_item.added", output_index=index, item=added)
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        self._emit(out, "response.content_part.added", **where, part={**full, "text": ""})
        self._emit(out, "response.output_text.delta", **where, delta=text, logprobs=[])
        self._emit(out, "response.output_text.done", **where, text=text, logprobs=[])
        self._emit(out, "response.content_part.done", **where, part=full)
        self._emit(out, "response.output_item.done", output_index=index, item=item)
        return item

    def _client_output(self, output: list[Any]) -> list[Any]:
        """The terminal event's ``output`` as the client got it (text calls on)."""
        kept: list[Any] = []
        for item in output:
            if not isinstance(item, dict) or item.get("type") not in _TEXT_ITEMS:
                kept.append(item)
                continue
            item_id = item.get("id")
            state = self._by_id.get(item_id) if isinstance(item_id, str) else None
            if state is None:  # never streamed: its text never went through the stage
                kept.append(item)
            elif state.item is not None:
                kept.append(state.item)
            elif not state.pending:  # sent, but never finished upstream
                kept.append(_item_text(item, state))
        return kept + self._extra

    def _ends(self, chunk: dict[str, Any]) -> bool:
        return chunk.get("type") in ("response.completed", "response.incomplete")

    def _send_arguments(self, call_id: str, name: str, text: str, out: list[bytes]) -> None:
        item = self._streamed_item
        if item is None:
            base = dict(self._items.get(call_id) or {})
            item_id = base.get("id") if isinstance(base.get("id"), str) else call_id
            base.update(id=item_id, type="function_call", call_id=call_id, name=name, arguments="")
            base["status"] = "in_progress"
            item = self._streamed_item = base
            self._streamed_index = self._positions.take()
            self._emit(
                out, "response.output_item.added", output_index=self._streamed_index, item=item
            )
        self._emit(
            out,
            "response.function_call_arguments.delta",
            item_id=item["id"],
            output_index=self._streamed_index,
            delta=text,
        )

    # -- the end: the pieces of Relay._ending -------------------------------------------------

    def _end_streamed(self, out: list[bytes], call: ToolCallReady, rest: str) -> None:
        if self._streamed_item is None:
            return
        item_id = self._streamed_item["id"]
        where = {"item_id": item_id, "output_index": self._streamed_index}
        if rest:
            self._emit(out, "response.function_call_arguments.delta", **where, delta=rest)
        arguments = self.emitters[call.call_id].sent + rest
        self._emit(
            out,
            "response.function_call_arguments.done",
            **where,
            arguments=arguments,
            name=call.name,
        )
        first = {**self._streamed_item, "status": "completed", "arguments": arguments}
        self._emit(out, "response.output_item.done", output_index=self._streamed_index, item=first)
        self._first = first

    def _late_text(self, out: list[bytes], pieces: list[tuple[bool, str]]) -> None:
        for reasoning, text in pieces:  # held by the text-call stage
            self._extra_item(out, reasoning, text)

    def _send_call(self, out: list[bytes], ready: ToolCallReady, arguments: str) -> None:
        index = self._positions.take()
        base = dict(self._items.get(ready.origin_id) or {})
        custom = ready.kind == "custom"
        item_id = base.get("id") if isinstance(base.get("id"), str) else ready.call_id
        if ready.call_id != ready.origin_id:
            item_id = f"{item_id}{ready.call_id[len(ready.origin_id) :]}"
        field = "input" if custom else "arguments"
        base.update(
            id=item_id,
            type="custom_tool_call" if custom else "function_call",
            call_id=ready.call_id,
            name=ready.name,
            status="in_progress",
        )
        base[field] = ""
        prefix = "response.custom_tool_call_input" if custom else "response.function_call_arguments"
        self._emit(out, "response.output_item.added", output_index=index, item=dict(base))
        self._emit(out, f"{prefix}.delta", item_id=item_id, output_index=index, delta=arguments)
        done_fields: dict[str, Any] = {field: arguments}
        if not custom:
            done_fields["name"] = ready.name
        self._emit(out, f"{prefix}.done", item_id=item_id, output_index=index, **done_fields)
        base.update(status="completed")
        base[field] = arguments
        self._emit(out, "response.output_item.done", output_index=index, item=base)
        self._emitted.append(base)

    def _send_notice(self, out: list[bytes], number: int, text: str) -> None:
        index = self._positions.take()
        self._emitted.append(self._message(out, f"msg_streamrepair_{number}", index, text))

    def _stops(self) -> tuple[str, str]:
        return "completed", "completed"

    def _send_tail(self, out: list[bytes], stop: str | None) -> None:
        for name, data in self.tail.events:
            data, name = self._terminal(data, name, stop)
            out.append(sse_event(data, name))

    def error_event(self, message: str) -> bytes:
        out: list[bytes] = []
        self._emit(out, "error", code="upstream_error", message=message, param=None)
        return out[0]

    def _emit(self, out: list[bytes], kind: str, **fields: Any) -> None:
        chunk: dict[str, Any] = {"type": kind}
        if self._seq is not None:
            chunk["sequence_number"] = self._seq
            self._seq += 1
        chunk.update(fields)
        out.append(sse_event(compact_json(chunk), kind))

    def _terminal(self, data: str, name: str | None, stop: str | None) -> tuple[str, str | None]:
        """The terminal event with ``response.output`` listing the items sent and, when
        a call was sent where the upstream said ``incomplete`` (a later call was cut off,
        and went out refused), ``completed``: Codex runs calls only from a completed
        response, and fails the whole turn on an incomplete one. An ``incomplete`` the
        upstream did not send is never written."""
        try:
            chunk = json.loads(data)
        except ValueError:
            return data, name
        if not isinstance(chunk, dict):
            return data, name
        response = chunk.get("response")
        changed = False
        if isinstance(response, dict) and isinstance(response.get("output"), list):
            kept = [
                i
                for i in response["output"]
                if not (isinstance(i, dict) and i.get("type") in _CALL_ITEMS)
            ]
            if self.text_calls:
                kept = self._client_output(kept)
            if self._first is not None:  # where the streamed call went out
                at = min(self._streamed_index, len(kept))
                kept = [*kept[:at], self._first, *kept[at:]]
            output = kept + self._emitted
            if output != response["output"]:
                response = {**response, "output": output}
                chunk = {**chunk, "response": response}
                changed = True
        if (
            isinstance(response, dict)
            and stop != self.upstream_stop
            and stop == "completed"
            and chunk.get("type") == "response.incomplete"
        ):
            kind = "response.completed"
            response = {**response, "status": stop, "incomplete_details": None}
            chunk = {**chunk, "type": kind, "response": response}
            name = kind if name else name
            changed = True
        renumbered = self._number(chunk)
        if renumbered is not None:
            return compact_json(renumbered), name
        return (compact_json(chunk) if changed else data), name


def _part_text(chunk: dict[str, Any], state: _TextItem) -> dict[str, Any]:
    """A part's done event with the text the client got for that part."""
    where, key = _PART_DONE.get(str(chunk.get("type")), ("content", "content_index"))
    part_index = chunk.get(key)
    text = state.texts.get((where, part_index if type(part_index) is int else 0), "")
    if "text" in chunk:
        chunk = {**chunk, "text": text}
        if "logprobs" in chunk:
            chunk["logprobs"] = []
    part = chunk.get("part")
    if isinstance(part, dict) and "text" in part:
        chunk = {**chunk, "part": {**part, "text": text}}
    return chunk


def _item_text(item: dict[str, Any], state: _TextItem) -> dict[str, Any]:
    """A message or reasoning item with the text the client got in each part."""
    out = dict(item)
    for where in ("content", "summary"):
        parts = item.get(where)
        if not isinstance(parts, list):
            continue
        out[where] = [
            {**part, "text": state.texts.get((where, k), "")}
            if isinstance(part, dict) and isinstance(part.get("text"), str)
            else part
            for k, part in enumerate(parts)
        ]
    return out


# -- whole bodies ----------------------------------------------------------------------------

#: Item statuses of a call the model did not finish.
_UNFINISHED: Final = frozenset({"in_progress", "incomplete"})
_TERMINALS: Final = {
    "completed": "response.completed",
    "incomplete": "response.incomplete",
    "failed": "response.failed",
}


def notice_item(item_id: str, text: str) -> dict[str, Any]:
    """A completed assistant message item that says ``text`` (a notice)."""
    part = {"type": "output_text", "text": text, "annotations": []}
    return {
        "id": item_id,
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [part],
    }


def _judged_item(item: object) -> bool:
    if not isinstance(item, dict):
        return False
    kind = item.get("type")
    return (
        kind in _CALL_ITEMS
        or kind == "mcp_approval_request"
        or (responses_client_item(kind, item) is not None)
    )


def _body_events(body: dict[str, Any]) -> list[tuple[str | None, str]] | None:
    output = body.get("output")
    terminal = _TERMINALS.get(str(body.get("status")))
    if terminal is None or not isinstance(output, list):
        return None  # queued or in progress (background mode): nothing final to judge
    if not any(_judged_item(item) for item in output):
        return None
    start = {**body, "status": "in_progress", "output": []}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": start}]
    for index, item in enumerate(output):
        if not isinstance(item, dict):
            continue
        field = _CALL_ITEMS.get(str(item.get("type")))
        added = item if field is None else {**item, field: "", "status": "in_progress"}
        events.append({"type": "response.output_item.added", "output_index": index, "item": added})
        text = item.get(field) if field is not None else None
        if isinstance(text, str) and text:
            kind = "function_call_arguments" if field == "arguments" else "custom_tool_call_input"
            where = {"item_id": item.get("id"), "output_index": index}
            events.append({"type": f"response.{kind}.delta", **where, "delta": text})
        if field is None or item.get("status") not in _UNFINISHED:
            done = {"type": "response.output_item.done", "output_index": index, "item": item}
            events.append(done)
        # (A call item the response marks unfinished is left open, as a cut stream would.)
    events.append({"type": terminal, "response": body})
    return [(str(e["type"]), compact_json(e)) for e in events]


def _rewrite_body(relay: Relay, body: dict[str, Any]) -> dict[str, Any]:
    refusals = relay.refusal_calls()
    output: list[Any] = []
    sent = False
    for index, item in enumerate(body["output"]):
        field = _CALL_ITEMS.get(str(item.get("type"))) if isinstance(item, dict) else None
        if field is None:
            output.append(item)
            continue
        assert isinstance(item, dict)
        for verdict in relay.verdicts_at(index):
            entry = {**item}
            if not isinstance(verdict, ToolCallReady):
                if verdict.call_id not in refusals:
                    continue
                verdict = refusals[verdict.call_id]  # a function call, whatever the kind
                entry.pop(field, None)
                entry["type"], field = "function_call", "arguments"
            entry["name"] = verdict.name
            if verdict.call_id != verdict.origin_id:
                suffix = verdict.call_id[len(verdict.origin_id) :]
                entry["call_id"] = verdict.call_id
                if isinstance(item.get("id"), str):
                    entry["id"] = f"{item['id']}{suffix}"
            text = argument_text(verdict)
            if text != item.get(field):
                entry[field] = text
            output.append(item if entry == item else entry)
            sent = True
    refused = relay.refused()
    if not refusals:
        for number, verdict in enumerate(refused, start=1):
            output.append(notice_item(f"msg_streamrepair_{number}", notice_text(verdict)))
    out = {**body, "output": output}
    stop = closing_stop(
        relay.upstream_stop,
        calls_sent=sent,
        withheld=bool(refused),
        tool="completed",
        stop="completed",
    )
    if stop != relay.upstream_stop and stop == "completed" and body.get("status") == "incomplete":
        out["status"] = stop
        out["incomplete_details"] = None
    return out


# -- requests ----------------------------------------------------------------------------------

_CALLS: Final = ("function_call", "custom_tool_call")
_OUTPUTS: Final = ("function_call_output", "custom_tool_call_output")


def _is_call(item: object) -> bool:
    return isinstance(item, dict) and item.get("type") in _CALLS


def _referenced_calls(body: Mapping[str, Any]) -> list[str]:
    ids: dict[str, None] = {}
    for item in dicts(body.get("input")):
        if item.get("type") in ("function_call", "function_call_output", "custom_tool_call"):
            add_id(ids, item.get("call_id"))
    return list(ids)


def _before(
    body: dict[str, Any],
    memos: Mapping[str, CallMemo],
    policy: ReasoningPolicy,
    counts: dict[str, int],
) -> bool:
    items = body["input"]
    calls = {i.get("call_id"): n for n, i in enumerate(items) if _is_call(i)}
    outputs = {i.get("call_id") for i in items if isinstance(i, dict) and i.get("type") in _OUTPUTS}
    missing = [c for c in calls if isinstance(c, str) and c not in outputs]
    if not missing:
        return False
    inserts: dict[int, list[dict[str, Any]]] = {}
    for call_id in missing:
        at = calls[call_id]
        end = at
        while end + 1 < len(items) and _is_call(items[end + 1]):
            end += 1
        call = items[at]
        custom = call.get("type") == "custom_tool_call"
        inserts.setdefault(end, []).append(
            {
                "type": "custom_tool_call_output" if custom else "function_call_output",
                "call_id": call_id,
                "output": not_started(call_id, str(call.get("name") or ""), call.get("arguments")),
            }
        )
    insert_after(items, inserts)
    count(counts, "unanswered_call_answered", len(missing))
    return True


def _answers(items: list[Any]) -> Iterator[Answer]:
    """Each output item."""
    for n, item in enumerate(items):
        if isinstance(item, dict) and item.get("type") in _OUTPUTS:
            yield _answer(items, n, item)


def _answer(items: list[Any], n: int, item: dict[str, Any]) -> Answer:
    def replace(output: Any) -> None:
        items[n] = {**item, "output": output}

    return Answer(
        call_id=item.get("call_id", ""),
        content=item.get("output"),
        earlier=lambda: [i for i in items[:n] if isinstance(i, dict)],
        replace=replace,
    )


def _calls(items: list[Any]) -> Iterator[CallSite]:
    """Each ``function_call`` item (a refused call went out as one, whatever its kind)."""
    for n, item in enumerate(items):
        if isinstance(item, dict) and item.get("type") == "function_call":
            yield CallSite(
                call_id=item.get("call_id"), name=item.get("name"), restore=_restorer(items, n)
            )


def _restorer(items: list[Any], n: int) -> Callable[[str, str], None]:
    def restore(name: str, arguments: str) -> None:
        items[n] = {**items[n], "name": name, "arguments": arguments}

    return restore


_API: Final = Api(
    protocol=ApiProtocol.RESPONSES,
    relay=ResponsesRelay,
    path="/responses",
    follows=lambda body: True,
    key_header="authorization",
    error_body=openai_error,
    body_events=_body_events,
    rewrite_body=_rewrite_body,
    history="input",
    referenced_calls=_referenced_calls,
    before=_before,
    answers=_answers,
    calls=_calls,
    note_part="input_text",
    memos=None,
)
