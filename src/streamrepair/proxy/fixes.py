"""Request-side fixes: the histories harnesses send that upstreams answer with HTTP 400.

Sans-IO: :func:`referenced_calls` lists the call ids a request's history mentions (the
proxy looks their :class:`~.relay.CallMemo` up in its store), then :func:`fix_request`
returns the request with the fixes applied (a fresh body; the caller's is never
modified) and what was done. A request that needs nothing is left as it is, byte for
byte. Three stages, for each protocol (Chat Completions ``messages``, Anthropic
``messages``, Responses ``input``):

1. what only the proxy knows: the reasoning it streamed is put back where the model's
   :class:`~streamrepair.ReasoningPolicy` needs it and the harness dropped it (Chat
   ``reasoning_content``, Anthropic thinking blocks with their signatures, keyed by the
   call ids the proxy sent); a call with no answer gets one, ``not_started`` (the header
   :func:`~streamrepair.tool_message` writes: it was never run as far as anyone knows),
   right after the answers that are there;
2. the turn layer's own rules, :func:`~streamrepair.repair_history` for the protocol
   (``docs/turn-loop.md``): null Chat ``content`` -> ``""``, reasoning back-filled with
   ``""`` or dropped as the policy says, unsigned thinking and empty blocks left out;
   what it cannot fix without guessing (an orphan or duplicate answer) is reported in
   :attr:`RequestFixes.counts` under its :class:`~streamrepair.ProblemKind` and left as
   it is, so the upstream's own 400 reaches the client as sent;
3. the tool result answering a call the proxy repaired gets the repair notes, once per
   rule and tool in the history (``schema/notes.py``), as ``Conversation`` does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..events import ToolCallReady
from ..results import Repair, RepairKind
from ..schema.notes import append_repair_notes
from ..schema.report import RepairNote, SchemaRule
from ..turn.history import (
    ProblemKind,
    ReasoningPolicy,
    check_history,
    copy_json,
    repair_history,
)
from ..turn.replies import RunState, tool_message
from .relay import ApiProtocol, CallMemo

__all__ = ["RequestFixes", "fix_request", "referenced_calls"]

_CALLS: Final = ("function_call", "custom_tool_call")
_OUTPUTS: Final = ("function_call_output", "custom_tool_call_output")
_NO_ANSWER: Final = (
    "No result for this call was sent back, so it is not known to have run. Do not "
    "assume it happened; call it again if it is still needed."
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestFixes:
    """What :func:`fix_request` did. ``body`` is the new request body (None when nothing
    changed); ``counts`` maps each fix (or reported problem) to how often it applied:
    ``reasoning_restored``, ``thinking_restored``, ``unanswered_call_answered``,
    ``repair_notes``, the :class:`~streamrepair.ChangeKind` values of the turn layer's
    rules (``content_filled``, ``reasoning_filled``, ``reasoning_dropped``, ...), and the
    :class:`~streamrepair.ProblemKind` values of what is only reported
    (``orphan_tool_message``, ``duplicate_answer``, ...)."""

    body: dict[str, Any] | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """True when the body was changed."""
        return self.body is not None

    def header(self) -> str:
        """``name=count`` pairs for the ``x-streamrepair-request-fixes`` header."""
        return ", ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))


def referenced_calls(protocol: ApiProtocol, body: Mapping[str, Any]) -> list[str]:
    """The call ids a request's history mentions, in order (no duplicates)."""
    ids: dict[str, None] = {}
    if protocol is ApiProtocol.CHAT:
        for message in _list(body.get("messages")):
            for call in _list(message.get("tool_calls")):
                _add(ids, call.get("id"))
            if message.get("role") == "tool":
                _add(ids, message.get("tool_call_id"))
    elif protocol is ApiProtocol.ANTHROPIC:
        for message in _list(body.get("messages")):
            for block in _list(message.get("content")):
                _add(ids, block.get("id") if block.get("type") == "tool_use" else None)
                _add(ids, block.get("tool_use_id") if block.get("type") == "tool_result" else None)
    else:
        for item in _list(body.get("input")):
            if item.get("type") in ("function_call", "function_call_output", "custom_tool_call"):
                _add(ids, item.get("call_id"))
    return list(ids)


def fix_request(
    protocol: ApiProtocol, body: Mapping[str, Any], memos: Mapping[str, CallMemo]
) -> RequestFixes:
    """The request with the fixes applied (module docstring). ``memos`` maps call ids to
    what the proxy remembers about them. Nothing passed is modified."""
    key = "input" if protocol is ApiProtocol.RESPONSES else "messages"
    if not isinstance(body.get(key), list):
        return RequestFixes()
    counts: dict[str, int] = {}
    fixed = _two_levels(body, key)
    model = body.get("model")
    policy = ReasoningPolicy.for_model(model if isinstance(model, str) else "")
    # 1. what only the proxy knows: the reasoning it streamed; calls left unanswered
    changed = _BEFORE[protocol](fixed, memos, policy, counts)
    # 2. the turn layer's rules for the protocol (null content, reasoning per policy,
    #    unsigned thinking, empty blocks); what they cannot fix is reported
    changed |= _standard(protocol, fixed, key, policy, counts)
    # 3. the repair notes, last, so that they land on the messages as sent
    changed |= _NOTES[protocol](fixed[key], memos, counts)
    return RequestFixes(body=fixed if changed else None, counts=counts)


_PROVIDERS: Final = {
    ApiProtocol.CHAT: "openai",
    ApiProtocol.ANTHROPIC: "anthropic",
    ApiProtocol.RESPONSES: "responses",
}


def _standard(
    protocol: ApiProtocol,
    body: dict[str, Any],
    key: str,
    policy: ReasoningPolicy,
    counts: dict[str, int],
) -> bool:
    try:
        repaired = repair_history(body[key], policy=policy, provider=_PROVIDERS[protocol])
    except (TypeError, ValueError):  # not a list of messages the rules can read
        _count(counts, "malformed")
        return False
    for problem in repaired.problems:  # reported, left as they are
        _count(counts, problem.kind.value)
    if not repaired.changes:
        return False
    for change in repaired.changes:
        _count(counts, change.kind.value)
    body[key] = repaired.messages
    return True


# -- helpers -------------------------------------------------------------------------------


def _two_levels(body: Mapping[str, Any], key: str) -> dict[str, Any]:
    """A copy of ``body`` whose ``key`` list and the dicts in it are new objects (what the
    fixes assign to); anything deeper is shared and never modified in place. A deep copy
    of a long agent history costs milliseconds per request; this costs microseconds."""
    out = dict(body)
    items = out.get(key)
    if isinstance(items, list):
        out[key] = [dict(item) if isinstance(item, dict) else item for item in items]
    return out


def _list(value: object) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _add(ids: dict[str, None], value: object) -> None:
    if isinstance(value, str) and value:
        ids[value] = None


def _count(counts: dict[str, int], name: str, n: int = 1) -> None:
    counts[name] = counts.get(name, 0) + n


def _is_call(item: object) -> bool:
    return isinstance(item, dict) and item.get("type") in _CALLS


def _insert_after(items: list[Any], inserts: Mapping[int, list[dict[str, Any]]]) -> None:
    """Put ``inserts[i]`` right after ``items[i]`` (in place, one pass)."""
    if not inserts:
        return
    rebuilt: list[Any] = []
    for i, item in enumerate(items):
        rebuilt.append(item)
        rebuilt.extend(inserts.get(i, ()))
    items[:] = rebuilt


def _notes(memo: CallMemo) -> list[Repair | RepairNote]:
    out: list[Repair | RepairNote] = []
    for note in memo.notes:
        try:
            if "syntax" in note:
                out.append(
                    Repair(
                        kind=RepairKind(note["syntax"]),
                        offset=int(note.get("offset", 0)),
                        description=str(note.get("description", "")),
                    )
                )
            elif "schema" in note:
                path = tuple(p for p in note.get("path", []) if isinstance(p, str | int))
                out.append(
                    RepairNote(
                        rule=SchemaRule(note["schema"]),
                        path=path,
                        before=str(note.get("before", "")),
                        after=str(note.get("after", "")),
                    )
                )
        except (ValueError, TypeError):
            continue  # a memo written by another version: skip what it cannot say
    return out


def _with_notes(
    content: Any, memo: CallMemo, history: list[dict[str, Any]], text_key: str = "text"
) -> tuple[Any, bool]:
    """``content`` (a string or a list of parts/blocks) with the memo's notes appended
    unless ``history`` already carries them."""
    notes = _notes(memo)
    if not notes:
        return content, False
    if isinstance(content, str) or content is None:
        text = content or ""
        new = append_repair_notes(text, notes, memo.tool, history=history)
        return new, new != text
    if isinstance(content, list):
        block = append_repair_notes("", notes, memo.tool, history=[*history, {"content": content}])
        if not block:
            return content, False
        return [*content, {"type": text_key, "text": block}], True
    return content, False


def _not_started(call_id: str, name: str, arguments: object) -> str:
    try:
        value = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        value = {}
    call = ToolCallReady(
        call_id=call_id,
        index=None,
        name=name or "the tool",
        arguments=value if isinstance(value, dict) else {},
    )
    reply = tool_message(call, _NO_ANSWER, status=RunState.NOT_STARTED)
    content: str = reply["content"]
    return content


# -- Chat Completions ----------------------------------------------------------------------


def _chat_before(
    body: dict[str, Any],
    memos: Mapping[str, CallMemo],
    policy: ReasoningPolicy,
    counts: dict[str, int],
) -> bool:
    messages = body["messages"]
    if not all(isinstance(m, dict) for m in messages):
        return False
    changed = False
    answers: dict[int, list[dict[str, Any]]] = {}  # insert after index -> tool messages
    for problem in check_history(messages, policy=policy):
        message = messages[problem.index]
        if problem.kind is ProblemKind.MISSING_REASONING:
            found = next(
                (
                    memos[c["id"]].reasoning
                    for c in _list(message.get("tool_calls"))
                    if c.get("id") in memos and memos[c["id"]].reasoning is not None
                ),
                None,
            )
            if found is not None:  # else the rules below back-fill ""
                message["reasoning_content"] = found
                _count(counts, "reasoning_restored")
                changed = True
        elif problem.kind is ProblemKind.UNANSWERED_CALL and problem.call_id is not None:
            call = next(
                (c for c in _list(message.get("tool_calls")) if c.get("id") == problem.call_id), {}
            )
            function = call.get("function") if isinstance(call.get("function"), dict) else {}
            assert isinstance(function, dict)
            end = problem.index + 1
            while end < len(messages) and messages[end].get("role") == "tool":
                end += 1
            answers.setdefault(end - 1, []).append(
                {
                    "role": "tool",
                    "tool_call_id": problem.call_id,
                    "content": _not_started(
                        problem.call_id, str(function.get("name") or ""), function.get("arguments")
                    ),
                }
            )
            _count(counts, "unanswered_call_answered")
            changed = True
    _insert_after(messages, answers)
    return changed


def _chat_notes(messages: list[Any], memos: Mapping[str, CallMemo], counts: dict[str, int]) -> bool:
    changed = False
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "tool":
            continue
        memo = memos.get(message.get("tool_call_id", ""))
        if memo is not None:
            content, noted = _with_notes(message.get("content"), memo, messages[:i])
            if noted:
                messages[i] = {**message, "content": content}
                _count(counts, "repair_notes")
                changed = True
    return changed


# -- Anthropic Messages --------------------------------------------------------------------


def _anthropic_before(
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
        has_thinking = any(
            isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking")
            for b in content
        )
        if not has_thinking and not thinking_off:
            known = [memos[u["id"]] for u in uses if u.get("id") in memos]
            found = next((m.thinking for m in known if m.thinking), ())
            if found:
                messages[i] = {**message, "content": [*copy_json(list(found)), *content]}
                _count(counts, "thinking_restored")
                changed = True
        ids = [u.get("id") for u in uses if isinstance(u.get("id"), str)]
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
        missing = [u for u in uses if u.get("id") in ids and u.get("id") not in answered]
        if missing:
            added = [
                {
                    "type": "tool_result",
                    "tool_use_id": u["id"],
                    "is_error": True,
                    "content": _not_started(u["id"], str(u.get("name") or ""), u.get("input")),
                }
                for u in missing
            ]
            messages[i + 1] = {**after, "content": [*added, *blocks]}
            _count(counts, "unanswered_call_answered", len(missing))
            changed = True
    return changed


def _anthropic_notes(
    messages: list[Any], memos: Mapping[str, CallMemo], counts: dict[str, int]
) -> bool:
    changed = False
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if not isinstance(content, list):
            continue
        blocks = list(content)
        for k, block in enumerate(blocks):
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            memo = memos.get(block.get("tool_use_id", ""))
            if memo is None:
                continue
            earlier = [m for m in messages[:i] if isinstance(m, dict)]
            earlier.append({"content": [b for b in blocks if b is not block]})
            new, noted = _with_notes(block.get("content"), memo, earlier)
            if noted:
                blocks[k] = {**block, "content": new}
                messages[i] = message = {**message, "content": blocks}
                _count(counts, "repair_notes")
                changed = True
    return changed


# -- Responses -----------------------------------------------------------------------------


def _responses_before(
    body: dict[str, Any],
    memos: Mapping[str, CallMemo],
    policy: ReasoningPolicy,
    counts: dict[str, int],
) -> bool:
    items = body["input"]
    changed = False
    calls = {i.get("call_id"): n for n, i in enumerate(items) if _is_call(i)}
    outputs = {i.get("call_id") for i in items if isinstance(i, dict) and i.get("type") in _OUTPUTS}
    missing = [c for c in calls if isinstance(c, str) and c not in outputs]
    if missing:
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
                    "output": _not_started(
                        call_id, str(call.get("name") or ""), call.get("arguments")
                    ),
                }
            )
        _insert_after(items, inserts)
        _count(counts, "unanswered_call_answered", len(missing))
        changed = True
    return changed


def _responses_notes(
    items: list[Any], memos: Mapping[str, CallMemo], counts: dict[str, int]
) -> bool:
    changed = False
    for n, item in enumerate(items):
        if not isinstance(item, dict) or item.get("type") not in _OUTPUTS:
            continue
        memo = memos.get(item.get("call_id", ""))
        if memo is None:
            continue
        earlier = [i for i in items[:n] if isinstance(i, dict)]
        new, noted = _with_notes(item.get("output"), memo, earlier, text_key="input_text")
        if noted:
            items[n] = {**item, "output": new}
            _count(counts, "repair_notes")
            changed = True
    return changed


_BEFORE: Final = {
    ApiProtocol.CHAT: _chat_before,
    ApiProtocol.ANTHROPIC: _anthropic_before,
    ApiProtocol.RESPONSES: _responses_before,
}
_NOTES: Final = {
    ApiProtocol.CHAT: _chat_notes,
    ApiProtocol.ANTHROPIC: _anthropic_notes,
    ApiProtocol.RESPONSES: _responses_notes,
}
