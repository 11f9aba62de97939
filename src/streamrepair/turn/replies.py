"""Rendering the turn loop's messages: the tool message that answers a call, and the
assistant message to store for a Chat Completions stream.

Pure functions of the stream's events, with no conversation state (that is
:class:`~streamrepair.Conversation`, which uses them). The history API rejects an
assistant message with ``tool_calls`` not followed by one tool message per id, so every
call gets an answer: rejected calls are answered ``not_started`` with guidance and put
back in the assistant message with arguments that are valid JSON (what the model wrote
when it was complete JSON, else ``{}``); the text as streamed stays on the event.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

from ..errors import HistoryError, StreamRepairError
from ..events import Done, RejectReason, ToolCallReady, ToolCallRejected
from ..schema.notes import append_repair_notes
from ..syntax.oneshot import repair
from .history import copy_json

__all__ = ["CallStatus", "RunState", "assistant_message", "tool_message"]


class RunState(enum.Enum):
    """What happened to a call's side effects. The last four are answers."""

    #: Ready, not dispatched yet (no answer).
    PENDING = "pending"
    #: Dispatched, no answer yet (see :meth:`Conversation.start`).
    RUNNING = "running"
    #: Never run: no side effects. Every rejected call is answered so.
    NOT_STARTED = "not_started"
    #: Ran to the end.
    COMPLETED = "completed"
    #: Ran and failed: some effects may have happened.
    FAILED = "failed"
    #: Started, then stopped by an abort: some effects may have happened.
    INTERRUPTED = "interrupted"

    @property
    def is_answer(self) -> bool:
        """True for the statuses a tool message can report."""
        return self not in (RunState.PENDING, RunState.RUNNING)


# -- tool messages and the assistant message ----------------------------------------------


#: The older name of :class:`RunState`.
CallStatus = RunState

_GUIDANCE: Final[dict[RejectReason, str]] = {
    RejectReason.CUT_OFF: (
        "The arguments were cut off before they were complete (most likely at the output "
        "token limit), so nothing was executed. Call the tool again with shorter "
        "arguments; if they carried large content such as a file, send it in smaller "
        "parts over several calls."
    ),
    RejectReason.UNREPAIRABLE: (
        "The arguments were not valid JSON and could not be repaired without guessing, "
        "so nothing was executed. Call the tool again with one JSON object as arguments."
    ),
    RejectReason.STREAM_INCOMPLETE: (
        "The response ended abnormally before this call was confirmed, so nothing was "
        "executed. Make the call again if it is still needed."
    ),
    RejectReason.ABORTED: (
        "The user interrupted the response before this call was complete, so nothing was "
        "executed. Do not repeat it unless the user asks for it."
    ),
    RejectReason.UNKNOWN_TOOL: (
        "There is no tool with this name, so nothing was executed. Use one of the available tools."
    ),
    RejectReason.INVALID: (
        "The arguments do not fit the tool's parameters, so nothing was executed. "
        "Correct them as described and call the tool again."
    ),
}


def _header(name: str, status: RunState, reason: RejectReason | None = None) -> str:
    label = name or "the tool"
    if status is RunState.NOT_STARTED:
        text = f"[streamrepair: {label} was not executed; status: not_started"
        return text + (f"; reason: {reason.value}]" if reason is not None else "]")
    if status is RunState.FAILED:
        return (
            f"[streamrepair: {label} failed; status: failed]\n"
            "It ran and failed; some of its effects may have happened."
        )
    return (
        f"[streamrepair: {label} was interrupted; status: interrupted]\n"
        "It had started when the user interrupted the turn, so some of its effects may "
        "have happened. Check before repeating it."
    )


def _join(*parts: str) -> str:
    return "\n".join(part for part in parts if part)


def tool_message(
    call: ToolCallReady | ToolCallRejected,
    output: str = "",
    *,
    status: RunState | None = None,
    history: Iterable[str | Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The tool message answering ``call``: ``{"role": "tool", "tool_call_id", "content"}``.

    For harnesses that keep their own list (:class:`Conversation` uses it too).

    * A :class:`~streamrepair.ToolCallRejected` is answered ``not_started``: a first line
      ``[streamrepair: <name> was not executed; status: not_started; reason: <reason>]``,
      what to do next (a cut-off call: send large content in smaller parts) and the
      event's ``detail``. ``output`` must be empty and ``status`` None or NOT_STARTED.
    * A :class:`~streamrepair.ToolCallReady` is answered with ``output`` (the tool's
      result, or the error text when ``FAILED``) and ``status`` (default ``COMPLETED``:
      ``output`` alone; the others get a first line naming the status). When the call
      was dispatched (not ``NOT_STARTED``), its schema repair notes are appended unless
      ``history`` already notes the same rule for the same tool (``notes.py``).
    """
    if not isinstance(output, str):
        raise TypeError(f"output must be a str, not {type(output).__name__}")
    if isinstance(call, ToolCallRejected):
        if status not in (None, RunState.NOT_STARTED) or output:
            raise ValueError("a rejected call was not run: it is answered not_started")
        content = _join(
            _header(call.name, RunState.NOT_STARTED, call.reason),
            _GUIDANCE[call.reason],
            call.detail,
        )
    elif isinstance(call, ToolCallReady):
        status = RunState.COMPLETED if status is None else status
        if not isinstance(status, RunState) or not status.is_answer:
            raise ValueError(f"{status!r} is not an answer")
        if status is RunState.COMPLETED:
            content = output
        else:
            content = _join(_header(call.name, status), output)
        if status is not RunState.NOT_STARTED and (call.repairs or call.schema_repairs):
            # syntax repairs of the argument text, then the schema rules
            notes = (*call.repairs, *call.schema_repairs)
            content = append_repair_notes(content, notes, call.name, history=history)
    else:
        raise TypeError("call must be a ToolCallReady or ToolCallRejected")
    return {"role": "tool", "tool_call_id": call.call_id, "content": content}


def _rejected_arguments(event: ToolCallRejected) -> str:
    """Valid JSON standing for a rejected call's arguments in the history."""
    if event.reason in (RejectReason.INVALID, RejectReason.UNKNOWN_TOOL) and event.raw:
        try:
            repaired = repair(event.raw)
        except StreamRepairError:
            return "{}"
        if not repaired.structure_synthesized and isinstance(repaired.value, dict):
            return json.dumps(repaired.value, ensure_ascii=False)
    return "{}"


def _check_chat_message(done: Done) -> dict[str, Any]:
    if len(done.messages) != 1:
        raise HistoryError(
            f"expected one Chat Completions assistant message, got {len(done.messages)} "
            "items (a Responses API stream?)"
        )
    message = done.messages[0]
    content = message.get("content")
    if (
        message.get("role") != "assistant"
        or not (content is None or isinstance(content, str))
        or "thinking" in message
        or "tool_plan" in message
        or any("id" not in c for c in message.get("tool_calls", ()))
    ):
        raise HistoryError(
            "the stream is not in the Chat Completions format (Anthropic, Ollama or "
            "Cohere); Conversation keeps Chat Completions histories"
        )
    return message


def assistant_message(
    done: Done, calls: Iterable[ToolCallReady | ToolCallRejected]
) -> dict[str, Any]:
    """The assistant message to store: ``done.messages[0]`` with every answerable call.

    ``calls`` are the stream's verdicts in call order. Calls present in
    ``done.messages`` keep their entry there (finished arguments); the other rejected
    calls with a name are added in their place with valid JSON arguments (see the
    module docstring); calls with no name are left out. ``content`` is ``""`` rather
    than null. Raises :class:`HistoryError` for a stream in another format or a ready
    call missing from ``done``. Nothing passed is modified.
    """
    base = _check_chat_message(done)
    entries = {c["id"]: c for c in base.get("tool_calls", ())}
    message = {k: copy_json(v) for k, v in base.items() if k != "tool_calls"}
    if message.get("content") is None:
        message["content"] = ""
    tool_calls: list[dict[str, Any]] = []
    for call in calls:
        if isinstance(call, ToolCallReady):
            if call.call_id not in entries:
                raise HistoryError(f"ready call {call.call_id!r} is not in Done.messages")
            tool_calls.append(copy_json(entries[call.call_id]))
        elif isinstance(call, ToolCallRejected):
            if call.call_id in entries:  # finished, but never handed out (an abort)
                tool_calls.append(copy_json(entries[call.call_id]))
            elif call.name:
                tool_calls.append(
                    {
                        "id": call.call_id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": _rejected_arguments(call)},
                    }
                )
        else:
            raise TypeError("calls must be ToolCallReady or ToolCallRejected events")
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message
