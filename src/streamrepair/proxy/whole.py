"""Non-streamed responses: the relays' judging, applied to a whole JSON body.

Theory of operation
-------------------
A ``200`` JSON answer to a Chat Completions, Anthropic Messages or Responses request
whose ``stream`` is absent or false carries the same tool calls a stream would, all at
once. :func:`judge_body` tells the body to the protocol's :class:`~.relay.Relay` as the
stream that would have carried it (:func:`body_events`: the message with its calls
whole, its stop reason, the end marker), so that every decision is the relay's, made
once: the stream core with the request's ``tools`` as the schemas, the finish policy,
the argument-size limit, the upstream's stop reason, the memos for the next request.
What the relay would have sent to a streaming client is not read; the body is instead
rewritten in place (:func:`rewrite_body`):

* each ready call keeps its entry, block or item with every field it had; only its
  arguments change, to the text :func:`~.relay.argument_text` gives (Anthropic: the
  ``input`` object, the finished repaired value), and its id when one call's arguments
  held several values (each then its own call, as in a stream);
* each call that was cut off, cannot be repaired or names no tool the request offered
  is removed, and the notice the streaming relays send
  (:func:`~.relay.notice_text`) is added where the protocol carries text: appended to
  the Chat ``content``, as a ``text`` block at the end of the Anthropic ``content``, as a
  message item at the end of the Responses ``output``;
* the stop reason becomes what :func:`~.relay.closing_stop` says for the calls kept
  (Chat ``finish_reason``, Anthropic ``stop_reason``, Responses ``status`` with
  ``incomplete_details``);
* everything else (ids, usage, reasoning, thinking blocks with their signatures, server
  tool blocks and items, fields no one knows yet) is kept as the upstream sent it.

Invariants: a body with nothing to change gives None (the caller sends the upstream's
bytes, byte for byte); a body that is not one response of the protocol (not JSON, no
calls, ``n > 1`` choices, a Responses body still in progress) gives None without being
judged; the body passed in is never mutated; no call the relay would withhold from a
stream is left runnable in the body returned.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from ..events import ToolCallReady, ToolCallRejected
from ..providers.normalizer import responses_client_item
from .relay import (
    ApiProtocol,
    Relay,
    argument_text,
    closing_stop,
    compact_json,
    notice_text,
    notice_verdicts,
    sse_event,
)

__all__ = ["body_events", "judge_body", "notice_item", "rewrite_body"]

_Verdict = ToolCallReady | ToolCallRejected
#: Responses items whose arguments are text the relay judges.
_CALL_ITEMS: Final = {"function_call": "arguments", "custom_tool_call": "input"}
#: Item statuses of a call the model did not finish.
_UNFINISHED: Final = frozenset({"in_progress", "incomplete"})
_CHAT_TEMPLATE: Final = ("id", "created", "model", "system_fingerprint")


def judge_body(relay: Relay, data: bytes) -> bytes | None:
    """The body to send instead of ``data`` (a whole response of ``relay``'s protocol),
    or None to send ``data`` itself: not a response with calls, or nothing to change.
    ``relay`` must be new; afterwards its :attr:`~.relay.Relay.verdicts` and
    :meth:`~.relay.Relay.memos` are those of the body."""
    try:
        body = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(body, dict):
        return None
    events = body_events(relay.protocol, body)
    if events is None:
        return None
    for name, payload in events:
        relay.feed(sse_event(payload, name))  # what a stream client would get: unused
    relay.finish()
    rewritten = rewrite_body(relay, body)
    if rewritten == body:
        return None
    return compact_json(rewritten).encode("utf-8")


def body_events(protocol: ApiProtocol, body: dict[str, Any]) -> list[tuple[str | None, str]] | None:
    """The stream events (``event`` name, ``data``) that carry ``body``, a whole response
    of ``protocol``; None when it is not one with calls to judge."""
    return _EVENTS[protocol](body)


def rewrite_body(relay: Relay, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as the client gets it, now that ``relay`` judged its calls (module
    docstring); equal to ``body`` when nothing changes. ``body`` is not mutated."""
    return _REWRITES[relay.protocol](relay, body)


# -- Chat Completions -----------------------------------------------------------------------


def _chat_message(body: dict[str, Any]) -> dict[str, Any] | None:
    """The message of the one choice, when it has calls."""
    choices = body.get("choices")
    if not isinstance(choices, list) or len(choices) != 1:
        return None
    choice = choices[0]
    if not isinstance(choice, dict) or (choice.get("index") or 0) != 0:
        return None
    message = choice.get("message")
    if not isinstance(message, dict):
        return None
    if message.get("tool_calls") or message.get("function_call"):
        return message
    return None


def _chat_events(body: dict[str, Any]) -> list[tuple[str | None, str]] | None:
    message = _chat_message(body)
    if message is None:
        return None
    head: dict[str, Any] = {k: body[k] for k in _CHAT_TEMPLATE if k in body}
    head["object"] = "chat.completion.chunk"
    delta = dict(message)
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        delta["tool_calls"] = [
            {**call, "index": k} for k, call in enumerate(calls) if isinstance(call, dict)
        ]
    chunks = [{**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}]
    reason = body["choices"][0].get("finish_reason")
    if isinstance(reason, str) and reason:
        chunks.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
    events: list[tuple[str | None, str]] = [(None, compact_json(c)) for c in chunks]
    return [*events, (None, "[DONE]")]


def _chat_rewrite(relay: Relay, body: dict[str, Any]) -> dict[str, Any]:
    choice = dict(body["choices"][0])
    message = dict(choice["message"])
    verdicts = relay.verdicts
    calls = message.get("tool_calls")
    legacy = not calls and bool(message.get("function_call"))
    if legacy:
        ready = [v for v in verdicts if isinstance(v, ToolCallReady)]
        if ready:
            message["function_call"] = _chat_function(message["function_call"], ready[0])
        else:
            del message["function_call"]
    elif isinstance(calls, list):
        kept: list[Any] = []
        for k, call in enumerate(calls):
            if not isinstance(call, dict):
                kept.append(call)
                continue
            for verdict in _at(verdicts, k):
                if isinstance(verdict, ToolCallReady):
                    entry = dict(call)
                    if verdict.call_id != verdict.origin_id:
                        entry["id"] = verdict.call_id
                    entry["function"] = _chat_function(call.get("function"), verdict)
                    kept.append(call if entry == call else entry)
        if kept:
            message["tool_calls"] = kept
        else:
            del message["tool_calls"]
    notices = [notice_text(v) for v in notice_verdicts(verdicts)]
    if notices:
        content = message.get("content")
        text = "\n\n".join(notices)
        message["content"] = (
            f"{content}\n\n{text}" if isinstance(content, str) and content else text
        )
    tool = "function_call" if legacy else "tool_calls"
    stop = closing_stop(relay.upstream_stop, verdicts, tool=tool, length="length", stop="stop")
    if stop != relay.upstream_stop:
        choice["finish_reason"] = stop
    choice["message"] = message
    return {**body, "choices": [choice]}


def _chat_function(function: object, ready: ToolCallReady) -> dict[str, Any]:
    """A call's ``function`` with the ready call's name and argument text (its own
    arguments kept when they are that value already)."""
    out = dict(function) if isinstance(function, dict) else {}
    out["name"] = ready.name
    before = out.get("arguments")
    # Arguments sent as an object (Ollama, MiniMax) that is the value already stay so.
    changed = ready.repairs or ready.schema_repairs or before != ready.arguments
    if isinstance(before, str) or changed:
        out["arguments"] = argument_text(ready)
    return out


# -- Anthropic Messages ---------------------------------------------------------------------


def _anthropic_events(body: dict[str, Any]) -> list[tuple[str | None, str]] | None:
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


def _anthropic_rewrite(relay: Relay, body: dict[str, Any]) -> dict[str, Any]:
    verdicts = relay.verdicts
    content: list[Any] = []
    for index, block in enumerate(body["content"]):
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            content.append(block)
            continue
        for verdict in _at(verdicts, index):
            if isinstance(verdict, ToolCallReady):
                entry = {**block, "name": verdict.name}
                if verdict.call_id != verdict.origin_id:
                    entry["id"] = verdict.call_id
                if block.get("input") != verdict.arguments:
                    entry["input"] = verdict.arguments
                content.append(block if entry == block else entry)
    for verdict in notice_verdicts(verdicts):
        content.append({"type": "text", "text": notice_text(verdict)})
    out = {**body, "content": content}
    stop = closing_stop(
        relay.upstream_stop, verdicts, tool="tool_use", length="max_tokens", stop="end_turn"
    )
    if stop != relay.upstream_stop:
        out["stop_reason"] = stop
    return out


# -- Responses ------------------------------------------------------------------------------

_TERMINALS: Final = {
    "completed": "response.completed",
    "incomplete": "response.incomplete",
    "failed": "response.failed",
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


def _responses_events(body: dict[str, Any]) -> list[tuple[str | None, str]] | None:
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
        if field is None:
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": item}
            )
        else:
            added = {**item, field: "", "status": "in_progress"}
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": added}
            )
            text = item.get(field)
            if isinstance(text, str) and text:
                kind = (
                    "function_call_arguments" if field == "arguments" else "custom_tool_call_input"
                )
                events.append(
                    {
                        "type": f"response.{kind}.delta",
                        "item_id": item.get("id"),
                        "output_index": index,
                        "delta": text,
                    }
                )
        if field is None or item.get("status") not in _UNFINISHED:
            done = {"type": "response.output_item.done", "output_index": index, "item": item}
            events.append(done)
        # (A call item the response marks unfinished is left open, as a cut stream would.)
    events.append({"type": terminal, "response": body})
    return [(str(e["type"]), compact_json(e)) for e in events]


def _responses_rewrite(relay: Relay, body: dict[str, Any]) -> dict[str, Any]:
    verdicts = relay.verdicts
    output: list[Any] = []
    for index, item in enumerate(body["output"]):
        field = _CALL_ITEMS.get(str(item.get("type"))) if isinstance(item, dict) else None
        if field is None:
            output.append(item)
            continue
        assert isinstance(item, dict)
        for verdict in _at(verdicts, index):
            if isinstance(verdict, ToolCallReady):
                entry = {**item, "name": verdict.name}
                if verdict.call_id != verdict.origin_id:
                    suffix = verdict.call_id[len(verdict.origin_id) :]
                    entry["call_id"] = verdict.call_id
                    if isinstance(item.get("id"), str):
                        entry["id"] = f"{item['id']}{suffix}"
                text = argument_text(verdict)
                if text != item.get(field):
                    entry[field] = text
                output.append(item if entry == item else entry)
    for number, verdict in enumerate(notice_verdicts(verdicts), start=1):
        output.append(notice_item(f"msg_streamrepair_{number}", notice_text(verdict)))
    out = {**body, "output": output}
    stop = closing_stop(
        relay.upstream_stop, verdicts, tool="completed", length="incomplete", stop="completed"
    )
    if (
        stop != relay.upstream_stop
        and stop in ("completed", "incomplete")
        and body.get("status") in ("completed", "incomplete")
    ):
        out["status"] = stop
        out["incomplete_details"] = (
            {"reason": "max_output_tokens"} if stop == "incomplete" else None
        )
    return out


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


# -- shared ---------------------------------------------------------------------------------


def _at(verdicts: tuple[_Verdict, ...], index: int) -> list[_Verdict]:
    """The verdicts of the call at ``index`` (several when its arguments held several
    values), in order."""
    return [v for v in verdicts if v.index == index]


_EVENTS: Final[
    dict[ApiProtocol, Callable[[dict[str, Any]], list[tuple[str | None, str]] | None]]
] = {
    ApiProtocol.CHAT: _chat_events,
    ApiProtocol.ANTHROPIC: _anthropic_events,
    ApiProtocol.RESPONSES: _responses_events,
}
_REWRITES: Final[dict[ApiProtocol, Callable[[Relay, dict[str, Any]], dict[str, Any]]]] = {
    ApiProtocol.CHAT: _chat_rewrite,
    ApiProtocol.ANTHROPIC: _anthropic_rewrite,
    ApiProtocol.RESPONSES: _responses_rewrite,
}
