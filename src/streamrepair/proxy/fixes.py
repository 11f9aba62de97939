"""Request-side fixes: the histories harnesses send that upstreams answer with HTTP 400.

Sans-IO: :func:`referenced_calls` lists the call ids a request's history mentions (the
proxy looks their :class:`~.relay.CallMemo` up in its store), then :func:`fix_request`
returns the request with the fixes applied (a fresh body; the caller's is never
modified) and what was done. A request that needs nothing is left as it is, byte for
byte.

Chat Completions, with :func:`~streamrepair.check_history` and the model's
:class:`~streamrepair.ReasoningPolicy` (``docs/turn-loop.md``):

* an assistant message that called tools and lacks ``reasoning_content`` where the
  policy needs it (DeepSeek thinking mode) gets the reasoning the proxy streamed for
  that turn, else ``""`` (DeepSeek answers 400 "The reasoning_content in the thinking
  mode must be passed back to the API" otherwise); R1 (``NEVER_SEND``) gets none;
  models with no rule get nothing added;
* a null ``content`` of an assistant message becomes ``""``;
* a call with no tool message gets one, ``not_started`` (the header
  :func:`~streamrepair.tool_message` writes), right after the answers that are there;
* orphan and duplicate tool messages are reported, not changed (dropping one would lose
  what the tool said);
* the tool message answering a call the proxy repaired gets the repair notes, once per
  rule and tool in the history (``schema/notes.py``), as ``Conversation`` does.

Anthropic Messages and Responses get the same treatment through
:func:`_fix_anthropic` and :func:`_fix_responses` (thinking blocks re-inserted before a
``tool_use`` turn that lost them, unanswered ``tool_use`` answered with an error
``tool_result``, notes appended to ``tool_result`` / ``function_call_output``): a narrow
seam to swap for the turn layer's own Anthropic/Responses history functions once they
exist.
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
from ..turn.history import ProblemKind, ReasoningPolicy, check_history, copy_json
from ..turn.replies import RunState, tool_message
from .relay import ApiProtocol, CallMemo

__all__ = ["RequestFixes", "fix_request", "referenced_calls"]

_OUTPUTS: Final = ("function_call_output", "custom_tool_call_output")
_NO_ANSWER: Final = (
    "No result for this call was sent back, so it is not known to have run. Do not "
    "assume it happened; call it again if it is still needed."
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestFixes:
    """What :func:`fix_request` did. ``body`` is the new request body (None when nothing
    changed); ``counts`` maps each fix (or reported problem) to how often it applied:
    ``reasoning_restored``, ``reasoning_filled``, ``reasoning_dropped``,
    ``null_content``, ``unanswered_call``, ``repair_notes``, ``thinking_restored``, and
    the reported-only ``orphan_tool_message``, ``duplicate_answer``, ``malformed``."""

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
    counts: dict[str, int] = {}
    fixed = _two_levels(body, "input" if protocol is ApiProtocol.RESPONSES else "messages")
    if protocol is ApiProtocol.CHAT:
        changed = _fix_chat(fixed, memos, counts)
    elif protocol is ApiProtocol.ANTHROPIC:
        changed = _fix_anthropic(fixed, memos, counts)
    else:
        changed = _fix_responses(fixed, memos, counts)
    return RequestFixes(body=fixed if changed else None, counts=counts)


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


def _fix_chat(body: dict[str, Any], memos: Mapping[str, CallMemo], counts: dict[str, int]) -> bool:
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return False
    model = body.get("model")
    policy = ReasoningPolicy.for_model(model if isinstance(model, str) else "")
    changed = False
    answers: dict[int, list[dict[str, Any]]] = {}  # insert after index -> tool messages
    for problem in check_history(messages, policy=policy):
        message = messages[problem.index]
        kind = problem.kind
        if kind is ProblemKind.NULL_CONTENT:
            message["content"] = ""
            _count(counts, "null_content")
            changed = True
        elif kind is ProblemKind.MISSING_REASONING:
            found = next(
                (
                    memos[c["id"]].reasoning
                    for c in _list(message.get("tool_calls"))
                    if c.get("id") in memos and memos[c["id"]].reasoning is not None
                ),
                None,
            )
            message["reasoning_content"] = found if found is not None else ""
            _count(counts, "reasoning_restored" if found is not None else "reasoning_filled")
            changed = True
        elif kind is ProblemKind.REASONING_SENT:
            message.pop("reasoning_content", None)
            _count(counts, "reasoning_dropped")
            changed = True
        elif kind is ProblemKind.UNANSWERED_CALL and problem.call_id is not None:
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
            _count(counts, "unanswered_call")
            changed = True
        else:
            _count(counts, kind.value)
    if answers:
        rebuilt: list[dict[str, Any]] = []
        for i, message in enumerate(messages):
            rebuilt.append(message)
            rebuilt.extend(answers.get(i, ()))
        messages[:] = rebuilt
    for i, message in enumerate(messages):
        memo = memos.get(message.get("tool_call_id", "")) if message.get("role") == "tool" else None
        if memo is not None:
            content, noted = _with_notes(message.get("content"), memo, messages[:i])
            if noted:
                message["content"] = content
                _count(counts, "repair_notes")
                changed = True
    return changed


# -- Anthropic Messages --------------------------------------------------------------------


def _fix_anthropic(
    body: dict[str, Any], memos: Mapping[str, CallMemo], counts: dict[str, int]
) -> bool:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return False
    thinking = body.get("thinking")
    thinking_off = isinstance(thinking, dict) and thinking.get("type") == "disabled"
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
                message["content"] = [*copy_json(list(found)), *content]
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
        for block in blocks:
            if (
                isinstance(block, dict)
                and block.get("type") == "tool_result"
                and block.get("tool_use_id") not in ids
            ):
                _count(counts, "orphan_tool_message")
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
            after["content"] = [*added, *blocks]
            _count(counts, "unanswered_call", len(missing))
            changed = True
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
                message["content"] = blocks
                _count(counts, "repair_notes")
                changed = True
    return changed


# -- Responses -----------------------------------------------------------------------------


def _fix_responses(
    body: dict[str, Any], memos: Mapping[str, CallMemo], counts: dict[str, int]
) -> bool:
    items = body.get("input")
    if not isinstance(items, list):
        return False
    changed = False
    calls = {
        i.get("call_id"): n
        for n, i in enumerate(items)
        if isinstance(i, dict) and i.get("type") in ("function_call", "custom_tool_call")
    }
    outputs = {i.get("call_id") for i in items if isinstance(i, dict) and i.get("type") in _OUTPUTS}
    for item in items:
        if (
            isinstance(item, dict)
            and item.get("type") in ("function_call_output", "custom_tool_call_output")
            and item.get("call_id") not in calls
        ):
            _count(counts, "orphan_tool_message")
    missing = [c for c in calls if isinstance(c, str) and c not in outputs]
    if missing:
        inserts: dict[int, list[dict[str, Any]]] = {}
        for call_id in missing:
            at = calls[call_id]
            end = at
            while (
                end + 1 < len(items)
                and isinstance(items[end + 1], dict)
                and items[end + 1].get("type") in ("function_call", "custom_tool_call")
            ):
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
        rebuilt: list[Any] = []
        for n, item in enumerate(items):
            rebuilt.append(item)
            rebuilt.extend(inserts.get(n, ()))
        items[:] = rebuilt
        _count(counts, "unanswered_call", len(missing))
        changed = True
    for n, item in enumerate(items):
        if not isinstance(item, dict) or item.get("type") not in (
            "function_call_output",
            "custom_tool_call_output",
        ):
            continue
        memo = memos.get(item.get("call_id", ""))
        if memo is None:
            continue
        earlier = [i for i in items[:n] if isinstance(i, dict)]
        new, noted = _with_notes(item.get("output"), memo, earlier, text_key="input_text")
        if noted:
            item["output"] = new
            _count(counts, "repair_notes")
            changed = True
    return changed
