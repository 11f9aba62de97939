"""The OpenAI Responses relay.

What the client receives (see ``relay.py`` for the general rules):

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
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Final

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

__all__ = ["ResponsesRelay"]

_CALL_ITEMS: Final = frozenset({"function_call", "custom_tool_call"})
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


class ResponsesRelay(Relay):
    """OpenAI Responses: see the module docstring."""

    protocol: ClassVar[ApiProtocol] = ApiProtocol.RESPONSES

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._held: set[int] = set()  # upstream output indexes of withheld items
        self._index: dict[int, int] = {}  # upstream output index -> client index
        self._next = 0
        self._items: dict[str, dict[str, Any]] = {}  # call_id -> item as added
        self._seq: int | None = None  # next sequence number to send
        self._end_seen = False

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
        if kind == "response.output_item.added" and type(index) is int and isinstance(item, dict):
            if item.get("type") in _CALL_ITEMS:
                self._held.add(index)
                call_id = item.get("call_id") or item.get("id")
                if isinstance(call_id, str):
                    self._items[call_id] = item
                return
            self._index[index] = self._next
            self._next += 1
        if type(index) is int:
            if index in self._held or kind in _CALL_EVENTS:
                return
            mapped = self._index.get(index)
            if mapped is None:
                mapped = self._index[index] = self._next
                self._next += 1
            if mapped != index:
                chunk = {**chunk, "output_index": mapped}
                renumbered = self._number(chunk)
                out.append(sse_event(compact_json(renumbered or chunk), name))
                return
        elif kind in _CALL_EVENTS:
            return
        renumbered = self._number(chunk)
        out.append(sse_event(data if renumbered is None else compact_json(renumbered), name))

    def _final(self, done: Done) -> list[bytes]:
        out: list[bytes] = []
        index = self._next
        emitted: list[dict[str, Any]] = []
        for verdict in self.verdicts:
            if not isinstance(verdict, ToolCallReady):
                continue
            arguments = self._arguments(verdict)
            base = dict(self._items.get(verdict.origin_id) or {})
            custom = verdict.kind == "custom"
            item_id = base.get("id") if isinstance(base.get("id"), str) else verdict.call_id
            if verdict.call_id != verdict.origin_id:
                item_id = f"{item_id}{verdict.call_id[len(verdict.origin_id) :]}"
            field = "input" if custom else "arguments"
            base.update(
                id=item_id,
                type="custom_tool_call" if custom else "function_call",
                call_id=verdict.call_id,
                name=verdict.name,
                status="in_progress",
            )
            base[field] = ""
            prefix = (
                "response.custom_tool_call_input"
                if custom
                else ("response.function_call_arguments")
            )
            self._emit(out, "response.output_item.added", output_index=index, item=dict(base))
            self._emit(out, f"{prefix}.delta", item_id=item_id, output_index=index, delta=arguments)
            done_fields: dict[str, Any] = {field: arguments}
            if not custom:
                done_fields["name"] = verdict.name
            self._emit(out, f"{prefix}.done", item_id=item_id, output_index=index, **done_fields)
            base.update(status="completed")
            base[field] = arguments
            self._emit(out, "response.output_item.done", output_index=index, item=base)
            emitted.append(base)
            index += 1
        for notice, verdict in enumerate(notice_verdicts(self.verdicts), start=1):
            item_id = f"msg_streamrepair_{notice}"
            text = notice_text(verdict)
            part: dict[str, Any] = {"type": "output_text", "text": "", "annotations": []}
            item: dict[str, Any] = {
                "id": item_id,
                "type": "message",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            }
            self._emit(out, "response.output_item.added", output_index=index, item=item)
            where = {"item_id": item_id, "output_index": index, "content_index": 0}
            self._emit(out, "response.content_part.added", **where, part=part)
            self._emit(out, "response.output_text.delta", **where, delta=text, logprobs=[])
            self._emit(out, "response.output_text.done", **where, text=text, logprobs=[])
            full = {**part, "text": text}
            self._emit(out, "response.content_part.done", **where, part=full)
            item = {**item, "status": "completed", "content": [full]}
            self._emit(out, "response.output_item.done", output_index=index, item=item)
            emitted.append(item)
            index += 1
        stop = closing_stop(
            self.upstream_stop,
            self.verdicts,
            tool="completed",
            length="incomplete",
            stop="completed",
        )
        for name, data in self.tail.events:
            data, name = self._terminal(data, name, emitted, stop)
            out.append(sse_event(data, name))
        return out

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

    def _terminal(
        self, data: str, name: str | None, emitted: list[dict[str, Any]], stop: str | None
    ) -> tuple[str, str | None]:
        """The terminal event with ``response.output`` listing the items sent and, when
        the calls sent say otherwise than the upstream, ``completed`` (a call was sent:
        Codex runs calls only from a completed response) or ``incomplete`` with
        ``max_output_tokens`` (no call sent, one was cut off)."""
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
            output = kept + emitted
            if output != response["output"]:
                response = {**response, "output": output}
                chunk = {**chunk, "response": response}
                changed = True
        if (
            isinstance(response, dict)
            and stop != self.upstream_stop
            and stop in ("completed", "incomplete")
            and chunk.get("type") in ("response.completed", "response.incomplete")
        ):
            kind = f"response.{stop}"
            details = {"reason": "max_output_tokens"} if stop == "incomplete" else None
            response = {**response, "status": stop, "incomplete_details": details}
            chunk = {**chunk, "type": kind, "response": response}
            name = kind if name else name
            changed = True
        renumbered = self._number(chunk)
        if renumbered is not None:
            return compact_json(renumbered), name
        return (compact_json(chunk) if changed else data), name
