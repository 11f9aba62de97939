"""Chat Completions histories (OpenAI, DeepSeek and compatibles): what is sent back and
what the API answers with HTTP 400.

The 400s: an assistant message with ``tool_calls`` not followed by one tool message per
id ("An assistant message with 'tool_calls' must be followed by tool messages responding
to each 'tool_call_id'"), a tool message whose call is not in the assistant message
before it ("Messages with role 'tool' must be a response to a preceding message with
'tool_calls'"), a null assistant ``content`` on some gateways, and DeepSeek's thinking
mode: "The reasoning_content in the thinking mode must be passed back to the API."
(the old R1 instead rejected any ``reasoning_content``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._rules import (
    ChangeKind,
    ProblemKind,
    ReasoningPolicy,
    Report,
    Rule,
    Turns,
    text_id,
)

MISSING_REASONING = "The reasoning_content in the thinking mode must be passed back to the API."


def _turns(items: list[dict[str, Any]]) -> Turns:
    return Turns(
        items,
        starts_turn=lambda m: m.get("role") == "user",
        calls_tools=lambda m: m.get("role") == "assistant" and bool(m.get("tool_calls")),
    )


def repair(items: list[dict[str, Any]], policy: ReasoningPolicy, report: Report) -> None:
    """Apply ``policy`` to ``items`` (fresh copies) in place: a null or missing assistant
    ``content`` becomes ``""``; ``reasoning_content`` is kept, back-filled with ``""`` or
    dropped as the policy says."""
    turns = _turns(items)
    for i, message in enumerate(items):
        if message.get("role") != "assistant":
            continue
        if message.get("content") is None:
            message["content"] = ""
            report.change(ChangeKind.CONTENT_FILLED, i, 'null assistant content sent as ""')
        rule = turns.rule(policy, i)
        if rule is Rule.DROP and "reasoning_content" in message:
            del message["reasoning_content"]
            report.change(
                ChangeKind.REASONING_DROPPED, i, f"reasoning_content not sent ({policy.value})"
            )
        elif rule is Rule.REQUIRE and message.get("reasoning_content") is None:
            message["reasoning_content"] = ""
            report.change(ChangeKind.REASONING_FILLED, i, 'reasoning_content sent as ""')


def check(items: list[dict[str, Any]], policy: ReasoningPolicy, report: Report) -> None:
    """Report every reason ``items`` would be rejected, in message order."""
    turns = _turns(items)
    open_calls: dict[str, int] = {}  # calls of the last assistant message not answered yet
    answered: set[str] = set()

    def close_block() -> None:
        for call_id, index in open_calls.items():
            report.problem(
                ProblemKind.UNANSWERED_CALL,
                index,
                f"call {call_id!r} has no answer",
                call_id=call_id,
            )
        open_calls.clear()
        answered.clear()

    for i, message in enumerate(items):
        role = message.get("role")
        if role == "tool":
            key = text_id(message.get("tool_call_id"))
            if key in open_calls:
                del open_calls[key]
                answered.add(key)
            elif key in answered:
                report.problem(
                    ProblemKind.DUPLICATE_ANSWER, i, f"{key!r} is answered twice", call_id=key
                )
            else:
                text = f"tool message for {key!r} answers no call of the message before it"
                report.problem(ProblemKind.ORPHAN_TOOL_MESSAGE, i, text, call_id=key)
            continue
        close_block()
        if not isinstance(role, str):
            report.problem(ProblemKind.MALFORMED, i, "a message without a role")
            continue
        if role != "assistant":
            continue
        if message.get("content") is None:
            report.problem(ProblemKind.NULL_CONTENT, i, 'assistant content is null; send ""')
        calls = message.get("tool_calls") or []
        for call in calls if isinstance(calls, list) else [calls]:
            call_id = call.get("id") if isinstance(call, Mapping) else None
            if not isinstance(call_id, str) or not call_id or call_id in open_calls:
                report.problem(
                    ProblemKind.MALFORMED, i, f"a tool call without a unique id: {call!r}"
                )
            else:
                open_calls[call_id] = i
        rule = turns.rule(policy, i)
        if policy is ReasoningPolicy.NEVER_SEND and "reasoning_content" in message:
            report.problem(ProblemKind.REASONING_SENT, i, "this model rejects reasoning_content")
        elif rule is Rule.REQUIRE and not isinstance(message.get("reasoning_content"), str):
            report.problem(ProblemKind.MISSING_REASONING, i, MISSING_REASONING)
    close_block()
