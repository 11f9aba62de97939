"""The assistant message to append to the conversation, in the provider's format.

The tracker keeps the turn as it streamed, as a list of :class:`Block` (text, thinking
with its signature, redacted thinking, refusal, finished Responses items), and
:func:`build_messages` turns it and the ready calls into what ``Done.messages`` holds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .events import ToolCallReady
from .providers import Provider

__all__ = ["Block", "build_messages"]


class Block:
    """One piece of the assistant turn as it streamed, kept to build the message.

    ``kind`` is ``text``, ``thinking``, ``refusal``, ``redacted`` or ``item``; ``key`` the
    provider's block or output index. Internal accumulator of the tracker.
    """

    __slots__ = ("data", "item", "key", "kind", "parts", "signature")

    def __init__(
        self,
        *,
        kind: str,
        key: int | None,
        data: str = "",
        item: Mapping[str, Any] | None = None,
    ) -> None:
        self.kind = kind
        self.key = key
        self.parts: list[str] = []
        self.signature = ""
        self.data = data
        self.item = item

    def text(self) -> str:
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""


def _copy(value: Any) -> Any:
    """A deep copy of JSON-like data (the caller's chunks are never shared or mutated)."""
    if isinstance(value, Mapping):
        return {str(k): _copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(v) for v in value]
    return value


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def build_messages(
    provider: Provider | None,
    blocks: list[Block],
    ready: list[ToolCallReady],
    *,
    reasoning_seen: bool,
) -> tuple[dict[str, Any], ...]:
    """What to append to the conversation, in the provider's format.

    ``ready`` holds the :class:`~streamrepair.ToolCallReady` events, in order; rejected
    calls are left out (sending their broken text back makes strict servers reject every
    later request, e.g. ``MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark#55``). Chat
    Completions and Ollama: one assistant message whose ``content`` is ``""`` rather than
    null, with ``reasoning_content`` whenever the provider sent any (DeepSeek thinking
    mode requires it back after tool calls, even empty). Anthropic: one assistant message
    with thinking (and signature), redacted thinking, text and tool_use blocks in stream
    order. Responses: the output items (reasoning and message items as received, function
    calls with their finished arguments).
    """
    if provider is Provider.ANTHROPIC:
        return (_anthropic_message(blocks, ready),)
    if provider is Provider.RESPONSES:
        return _responses_items(blocks, ready)
    text = "".join(b.text() for b in blocks if b.kind == "text")
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if reasoning_seen:
        key = "reasoning_content"
        if provider is Provider.OLLAMA:
            key = "thinking"
        elif provider is Provider.COHERE:
            key = "tool_plan"
        message[key] = "".join(b.text() for b in blocks if b.kind == "thinking")
    refusal = "".join(b.text() for b in blocks if b.kind == "refusal")
    if refusal:
        message["refusal"] = refusal
    if ready:
        if provider is Provider.OLLAMA:
            message["tool_calls"] = [
                {"function": {"name": e.name, "arguments": _copy(e.arguments)}} for e in ready
            ]
        else:
            message["tool_calls"] = [
                {
                    "id": e.call_id,
                    "type": "function",
                    "function": {"name": e.name, "arguments": _json(e.arguments)},
                }
                for e in ready
            ]
    return (message,)


def _anthropic_message(blocks: list[Block], ready: list[ToolCallReady]) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for block in blocks:
        if block.kind == "thinking":
            entry = {"type": "thinking", "thinking": block.text()}
            if block.signature:
                entry["signature"] = block.signature
            content.append(entry)
        elif block.kind == "redacted":
            content.append({"type": "redacted_thinking", "data": block.data})
        elif block.kind == "text" and block.text():
            content.append({"type": "text", "text": block.text()})
    for e in ready:
        content.append(
            {"type": "tool_use", "id": e.call_id, "name": e.name, "input": _copy(e.arguments)}
        )
    return {"role": "assistant", "content": content}


def _responses_items(blocks: list[Block], ready: list[ToolCallReady]) -> tuple[dict[str, Any], ...]:
    items: list[dict[str, Any]] = []
    loose = [b for b in blocks if b.kind == "text"]
    for block in blocks:
        if block.kind == "item" and block.item is not None:
            items.append(_copy(block.item))
    if loose:  # text whose message item never arrived (the stream was cut)
        text = "".join(b.text() for b in loose)
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            }
        )
    for e in ready:
        if e.kind == "custom":
            items.append(
                {
                    "type": "custom_tool_call",
                    "call_id": e.call_id,
                    "name": e.name,
                    "input": e.arguments,
                }
            )
        else:
            items.append(
                {
                    "type": "function_call",
                    "call_id": e.call_id,
                    "name": e.name,
                    "arguments": _json(e.arguments),
                }
            )
    return tuple(items)
