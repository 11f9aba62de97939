"""Anthropic Messages histories (Claude, and DeepSeek's ``/anthropic`` endpoint): what is
sent back and what the API answers with HTTP 400.

Consecutive ``user`` (or ``assistant``) messages are combined into one turn by the API
("Consecutive user or assistant turns in your request will be combined into a single
turn", the SDK's ``messages`` parameter), so the pairing is checked on combined turns:

* every ``tool_use`` of an assistant turn needs a ``tool_result`` in the next (user)
  turn, the results before any other block: "messages.N: `tool_use` ids were found
  without `tool_result` blocks immediately after: ... Each `tool_use` block must have a
  corresponding `tool_result` block in the next message.";
* every ``tool_result`` answers a ``tool_use`` of the turn before: "unexpected
  `tool_use_id` found in `tool_result` blocks";
* "all messages must have non-empty content except for the optional final assistant
  message", and "text content blocks must be non-empty";
* a thinking block goes back unmodified with its ``signature`` (required by
  ``ThinkingBlockParam``); one cut off before its signature arrived cannot be sent;
* DeepSeek's thinking rule over this endpoint: "The `content[].thinking` in the
  thinking mode must be passed back to the API." (hermes-agent#16748).

A user turn starts at a user message with anything but ``tool_result`` blocks: a message
of results only continues the turn of the calls it answers. Server-tool blocks
(``server_tool_use``, ``web_search_tool_result``, ``mcp_tool_use``...) are the provider's
own and are passed through untouched; they need no answer from the client.
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

MISSING_REASONING = "The content[].thinking in the thinking mode must be passed back to the API."
REASONING = ("thinking", "redacted_thinking")


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return content if isinstance(content, list) else []


def _type(block: object) -> object:
    return block.get("type") if isinstance(block, Mapping) else None


def starts_turn(message: Mapping[str, Any]) -> bool:
    """A user message the user wrote (not only tool results)."""
    if message.get("role") != "user":
        return False
    content = message.get("content")
    if isinstance(content, str):
        return True
    return any(_type(b) != "tool_result" for b in _blocks(message))


def calls_tools(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "assistant" and any(
        _type(b) == "tool_use" for b in _blocks(message)
    )


def _turns(items: list[dict[str, Any]]) -> Turns:
    return Turns(items, starts_turn=starts_turn, calls_tools=calls_tools)


def _signed(block: Mapping[str, Any]) -> bool:
    signature = block.get("signature")
    return isinstance(signature, str) and bool(signature)


def _empty(content: object) -> bool:
    return content == "" or content == []


def repair(
    items: list[dict[str, Any]], policy: ReasoningPolicy, report: Report
) -> list[dict[str, Any]]:
    """The messages to send: unsigned thinking blocks and empty text blocks left out,
    thinking dropped where the policy says, assistant messages left empty (but the
    last) left out. Nothing is invented: a missing thinking block stays missing."""
    turns = _turns(items)
    out: list[dict[str, Any]] = []
    for i, message in enumerate(items):
        content = message.get("content")
        if isinstance(content, list):
            assistant = message.get("role") == "assistant"
            drop_reasoning = assistant and turns.rule(policy, i) is Rule.DROP
            kept: list[Any] = []
            for j, block in enumerate(content):
                kind = _type(block)
                if kind == "thinking" and assistant and not _signed(block):
                    text = "a thinking block without its signature (a cut-off stream) left out"
                    report.change(ChangeKind.UNSIGNED_THINKING_DROPPED, i, text, block=j)
                elif kind in REASONING and drop_reasoning:
                    text = f"{kind} block not sent ({policy.value})"
                    report.change(ChangeKind.REASONING_DROPPED, i, text, block=j)
                elif kind == "text" and block.get("text") == "":
                    report.change(
                        ChangeKind.EMPTY_BLOCK_DROPPED, i, "empty text block left out", block=j
                    )
                else:
                    kept.append(block)
            message["content"] = kept
        if (
            message.get("role") == "assistant"
            and _empty(message.get("content"))
            and i != len(items) - 1
        ):
            text = "an assistant message with nothing left to send left out"
            report.change(ChangeKind.EMPTY_MESSAGE_DROPPED, i, text)
            continue
        out.append(message)
    return out


def check(items: list[dict[str, Any]], policy: ReasoningPolicy, report: Report) -> None:
    """Report every reason ``items`` would be rejected, in message order."""
    turns = _turns(items)
    # (role, [(message index, block index, block)]) for each combined turn
    combined: list[tuple[str, list[tuple[int, int, Any]]]] = []
    for i, message in enumerate(items):
        role = message.get("role")
        content = message.get("content")
        if not isinstance(role, str):
            report.problem(ProblemKind.MALFORMED, i, "a message without a role")
            continue
        if not isinstance(content, str | list):
            report.problem(ProblemKind.MALFORMED, i, "content must be a string or a list of blocks")
            continue
        if _empty(content) and not (role == "assistant" and i == len(items) - 1):
            text = (
                "all messages must have non-empty content except for the optional final "
                "assistant message"
            )
            report.problem(ProblemKind.EMPTY_CONTENT, i, text)
        blocks = _blocks(message)
        for j, block in enumerate(blocks if isinstance(content, list) else ()):
            if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
                report.problem(
                    ProblemKind.MALFORMED, i, f"a content block without a type: {block!r}", block=j
                )
            elif block["type"] == "text" and block.get("text") == "":
                report.problem(
                    ProblemKind.EMPTY_CONTENT, i, "text content blocks must be non-empty", block=j
                )
            elif block["type"] == "thinking" and role == "assistant" and not _signed(block):
                report.problem(
                    ProblemKind.UNSIGNED_THINKING,
                    i,
                    "a thinking block needs its signature",
                    block=j,
                )
        if role == "assistant":
            _check_reasoning(message, i, turns.rule(policy, i), policy, report)
        entries = [(i, j, b) for j, b in enumerate(blocks) if isinstance(b, Mapping)]
        if combined and combined[-1][0] == role:
            combined[-1][1].extend(entries)
        else:
            combined.append((role, entries))
    _check_pairing(combined, report)


def _check_reasoning(
    message: Mapping[str, Any], index: int, rule: Rule, policy: ReasoningPolicy, report: Report
) -> None:
    has = any(_type(b) in REASONING for b in _blocks(message))
    if policy is ReasoningPolicy.NEVER_SEND and has:
        report.problem(ProblemKind.REASONING_SENT, index, "this model rejects thinking blocks")
    elif rule is Rule.REQUIRE and not has:
        report.problem(ProblemKind.MISSING_REASONING, index, MISSING_REASONING)


def _check_pairing(combined: list[tuple[str, list[tuple[int, int, Any]]]], report: Report) -> None:
    calls: dict[str, tuple[int, int]] = {}  # tool_use ids of the assistant turn before
    for role, entries in combined:
        answered: set[str] = set()
        if role == "user":
            other_seen = False
            for i, j, block in entries:
                if block.get("type") != "tool_result":
                    other_seen = True
                    continue
                key = text_id(block.get("tool_use_id"))
                if key in answered:
                    report.problem(
                        ProblemKind.DUPLICATE_ANSWER,
                        i,
                        f"{key!r} is answered twice",
                        call_id=key,
                        block=j,
                    )
                elif key not in calls:
                    text = (
                        f"unexpected tool_use_id {key!r} in tool_result blocks: each tool_result "
                        "must answer a tool_use of the assistant message before it"
                    )
                    report.problem(ProblemKind.ORPHAN_TOOL_MESSAGE, i, text, call_id=key, block=j)
                elif other_seen:
                    text = (
                        f"the tool_result for {key!r} comes after other content: results come first"
                    )
                    report.problem(ProblemKind.RESULTS_NOT_FIRST, i, text, call_id=key, block=j)
                    answered.add(key)
                else:
                    answered.add(key)
        for key, (i, j) in calls.items():
            if key not in answered:
                text = f"tool_use {key!r} has no tool_result in the next message"
                report.problem(ProblemKind.UNANSWERED_CALL, i, text, call_id=key, block=j)
        calls = {}
        if role == "assistant":
            for i, j, block in entries:
                if block.get("type") != "tool_use":
                    continue
                call_id = block.get("id")
                if not isinstance(call_id, str) or not call_id or call_id in calls:
                    text = f"a tool_use block without a unique id: {block!r}"
                    report.problem(ProblemKind.MALFORMED, i, text, block=j)
                else:
                    calls[call_id] = (i, j)
    for key, (i, j) in calls.items():  # the history ends with calls: nothing answers them
        text = f"tool_use {key!r} has no tool_result in the next message"
        report.problem(ProblemKind.UNANSWERED_CALL, i, text, call_id=key, block=j)
