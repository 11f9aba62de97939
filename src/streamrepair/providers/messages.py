"""The assistant message to append to the conversation, in the provider's format.

A :class:`TurnRecorder` keeps the turn as it streamed, as a list of :class:`Block` (text,
thinking with its signature, redacted thinking, refusal, finished Responses items), and
:func:`build_messages` turns it and the ready calls into what ``Done.messages`` holds.
The stream layer's tracker owns one recorder per stream and tells it what arrived; the
recorder decides nothing about calls.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..events import ToolCallReady
from .normalizer import Provider

__all__ = ["Block", "TurnRecorder", "build_messages"]


class Block:
    """One piece of the assistant turn as it streamed, kept to build the message.

    ``kind`` is ``text``, ``thinking``, ``refusal``, ``redacted`` or ``item``; ``key`` the
    provider's block or output index. Internal accumulator of :class:`TurnRecorder`.
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


class TurnRecorder:
    """The assistant turn as it streamed, kept to build ``Done.messages``.

    Consecutive pieces of one kind and block are joined into one :class:`Block`; a
    finished Responses item replaces the text blocks streamed for it. Text is stored as
    the pieces that arrived and joined once, when the message is built.
    """

    __slots__ = ("_blocks", "reasoning_seen")

    def __init__(self) -> None:
        self._blocks: list[Block] = []
        #: True once any reasoning arrived (even empty): the message then carries the
        #: provider's reasoning field, which DeepSeek requires back after tool calls.
        self.reasoning_seen = False

    def text(self, kind: str, key: int | None, text: str) -> None:
        """Record ``text`` of ``kind`` (``text``, ``thinking``, ``refusal``) in block
        ``key``."""
        if kind == "thinking":
            self.reasoning_seen = True
        self._block(kind, key, text)

    def signature(self, key: int | None, signature: str) -> None:
        """Record a thinking block's signature (Anthropic ``signature_delta``)."""
        self._block("thinking", key, "").signature += signature

    def redacted(self, key: int | None, data: str) -> None:
        """Record a redacted thinking block as received."""
        self._blocks.append(Block(kind="redacted", key=key, data=data))

    def item(self, key: int | None, item: Mapping[str, Any]) -> None:
        """Record a finished Responses output item; it replaces the text, reasoning and
        refusal streamed for the same output index."""
        self._blocks = [
            b
            for b in self._blocks
            if not (b.key == key and b.kind in ("text", "thinking", "refusal"))
        ]
        self._blocks.append(Block(kind="item", key=key, item=item))

    def reset(self) -> None:
        """Forget the turn so far (a new message was spliced into the stream)."""
        self._blocks = []

    def messages(
        self, provider: Provider | None, ready: list[ToolCallReady]
    ) -> tuple[dict[str, Any], ...]:
        """The messages for ``Done.messages`` (see :func:`build_messages`)."""
        return build_messages(provider, self._blocks, ready, reasoning_seen=self.reasoning_seen)

    def _block(self, kind: str, key: int | None, text: str) -> Block:
        last = self._blocks[-1] if self._blocks else None
        if last is None or last.kind != kind or last.key != key:
            last = Block(kind=kind, key=key)
            self._blocks.append(last)
        if text:
            last.parts.append(text)
        return last


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
    order. Responses: the output items in output order (reasoning and message items as
    received, a ready call's item as received with its finished arguments).
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


_CALL_ITEMS = ("function_call", "custom_tool_call")


def _call_item(e: ToolCallReady, received: Mapping[str, Any] | None) -> dict[str, Any]:
    """A ready call as an output item: the finished item as received (its ``id`` pairs it
    with the reasoning item before it, OpenAI's "required following item"), with the
    finished arguments."""
    item = _copy(received) if received is not None else {}
    if e.kind == "custom":
        item.update(type="custom_tool_call", call_id=e.call_id, name=e.name, input=e.arguments)
    else:
        item.update(type="function_call", call_id=e.call_id, name=e.name)
        item["arguments"] = _json(e.arguments)
    return item


def _responses_items(blocks: list[Block], ready: list[ToolCallReady]) -> tuple[dict[str, Any], ...]:
    items: list[dict[str, Any]] = []
    loose = [b for b in blocks if b.kind == "text"]
    by_origin: dict[str, list[ToolCallReady]] = {}
    for e in ready:
        by_origin.setdefault(e.origin_id, []).append(e)
    for block in blocks:
        item = block.item
        if block.kind != "item" or item is None:
            continue
        if item.get("type") not in _CALL_ITEMS:
            items.append(_copy(item))
            continue
        # A call in its place in the output; a rejected call is left out. Calls split
        # from concatenated values follow the first, without the item id (it is one).
        calls = by_origin.pop(str(item.get("call_id") or item.get("id")), [])
        items.extend(_call_item(e, item if n == 0 else None) for n, e in enumerate(calls))
    if loose:  # text whose message item never arrived (the stream was cut)
        text = "".join(b.text() for b in loose)
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            }
        )
    for calls in by_origin.values():  # ready calls whose finished item never came
        items.extend(_call_item(e, None) for e in calls)
    return tuple(items)
