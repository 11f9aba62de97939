"""Anthropic Messages stream events.

``message_start`` (with content and a stop reason already filled in, as programmatic
tool calling sends), ``content_block_start`` (text, thinking, redacted_thinking,
tool_use with its ``caller``; every other block type kept as received),
``text_delta``, ``citations_delta``, ``thinking_delta``, ``signature_delta``,
``input_json_delta`` (a call's, or a server block's), ``compaction_delta``,
``content_block_stop``, ``message_delta`` (stop reason, ``container``, usage),
``message_stop``, ``ping``, ``error``.

Only ``tool_use`` blocks are the client's calls: what Anthropic runs itself
(``server_tool_use``, ``mcp_tool_use`` and their results) is a :class:`WireBlock`, its
input deltas :class:`WireBlockInput`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ._reader import Reader, arguments_text, error_delta, integer, is_map, mapping, nonempty, pick
from .wire import (
    WireBlock,
    WireBlockInput,
    WireBlockUpdate,
    WireCitation,
    WireDelta,
    WireEnd,
    WireMessageStart,
    WireReasoning,
    WireRedactedThinking,
    WireResponse,
    WireSignature,
    WireStop,
    WireText,
    WireToolCall,
    WireToolEnd,
    WireUsage,
)

__all__ = ["EVENT_TYPES", "AnthropicReader"]

#: The event types that say a stream is Anthropic's.
EVENT_TYPES: Final = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
    }
)

#: Blocks whose ``input`` arrives as ``input_json_delta`` but that Anthropic runs itself
#: (the SDK's own ``TRACKS_TOOL_INPUT``, less the client's ``tool_use``).
_SERVER_INPUT: Final = frozenset({"server_tool_use", "mcp_tool_use"})


class AnthropicReader(Reader):
    """Anthropic Messages events. Keeps which content indexes are blocks Anthropic runs
    itself (their input deltas are not a call's), for the message being read."""

    __slots__ = ("_server_blocks",)

    def __init__(self, choice: int) -> None:
        self._server_blocks: dict[int, bool] = {}  # index -> True: provider's input block

    def read(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        kind = chunk.get("type")
        index = integer(chunk.get("index"))
        if kind == "content_block_delta":
            return self._delta(mapping(chunk.get("delta")), index)
        if kind == "content_block_start":
            return self._block(mapping(chunk.get("content_block")), index)
        if kind == "content_block_stop":
            return [WireToolEnd(id=None, index=index)]
        if kind == "message_start":
            return self._start(mapping(chunk.get("message")))
        if kind == "message_delta":
            out: list[WireDelta] = []
            delta = mapping(chunk.get("delta"))
            reason = delta.get("stop_reason")
            if isinstance(reason, str) and reason:
                out.append(WireStop(reason=reason))
            container = delta.get("container")
            if is_map(container):
                out.append(WireResponse(fields={"container": container}))
            usage = chunk.get("usage")
            if is_map(usage):
                out.append(WireUsage(usage=usage, merge=True))
            return out
        if kind == "message_stop":
            return [WireEnd()]
        if kind == "error" or (chunk.get("error") and kind is None):
            return [error_delta(chunk)]
        return []  # ping, the SDK's helper events and anything unknown

    def text_of(self, chunk: Mapping[str, Any]) -> tuple[str | None, str | None, int | None] | None:
        # A text_delta or thinking_delta of a content block with an index.
        delta = _block_delta(chunk)
        if delta is None:
            return None
        dtype = delta.get("type")
        if dtype == "text_delta":
            text = delta.get("text")
            return (None, text or None, chunk["index"]) if type(text) is str else None
        if dtype == "thinking_delta":
            thinking = delta.get("thinking")
            return (thinking, None, chunk["index"]) if type(thinking) is str else None
        return None

    def arguments_of(self, chunk: Mapping[str, Any]) -> tuple[int, str, bool] | None:
        # An input_json_delta of a block that is not one Anthropic runs itself.
        delta = _block_delta(chunk)
        if delta is None or delta.get("type") != "input_json_delta":
            return None
        partial = delta.get("partial_json")
        index: int = chunk["index"]
        if type(partial) is not str or not partial or index in self._server_blocks:
            return None
        return index, partial, True

    def _delta(self, delta: Mapping[str, Any], index: int | None) -> list[WireDelta]:
        dtype = delta.get("type")
        if dtype == "input_json_delta":
            partial = delta.get("partial_json")
            if not isinstance(partial, str):
                return []
            server = self._server_blocks.get(index) if index is not None else None
            if server is None:  # a tool_use block, or a block whose start never came
                return [WireToolCall(index=index, arguments=partial, expects_end=True)]
            return [WireBlockInput(text=partial, block=index)] if server else []
        if dtype == "text_delta":
            text = delta.get("text")
            if isinstance(text, str) and text:
                return [WireText(text=text, block=index)]
        elif dtype == "thinking_delta":
            thinking = delta.get("thinking")
            if isinstance(thinking, str):
                return [WireReasoning(text=thinking, block=index)]
        elif dtype == "signature_delta":
            signature = delta.get("signature")
            if isinstance(signature, str):
                return [WireSignature(signature=signature, block=index)]
        elif dtype == "citations_delta":
            citation = delta.get("citation")
            if is_map(citation):
                return [WireCitation(citation=citation, block=index)]
        elif dtype == "compaction_delta":  # replaces the block's fields (the SDK does)
            fields = {k: delta[k] for k in ("content", "encrypted_content") if k in delta}
            return [WireBlockUpdate(fields=fields, block=index)] if fields else []
        return []

    def _start(self, message: Mapping[str, Any]) -> list[WireDelta]:
        self._server_blocks.clear()
        out: list[WireDelta] = [WireMessageStart(message_id=nonempty(message.get("id")))]
        fields = pick(message, {"id": "id", "model": "model", "container": "container"})
        if fields:
            out.append(WireResponse(fields=fields))
        usage = message.get("usage")
        if is_map(usage):
            out.append(WireUsage(usage=usage))
        # Programmatic tool calling can send the whole message here, with no block events.
        content = message.get("content")
        if type(content) is list:
            for position, block in enumerate(content):
                if is_map(block):
                    out.extend(self._block(block, position))
                    out.append(WireToolEnd(id=None, index=position))
        reason = message.get("stop_reason")
        if isinstance(reason, str) and reason:
            out.append(WireStop(reason=reason))
        return out

    def _block(self, block: Mapping[str, Any], index: int | None) -> list[WireDelta]:
        btype = block.get("type")
        if btype == "tool_use":
            # "input" is a {} placeholder that the input_json_delta pieces replace; with
            # programmatic tool calling (or a proxy) the whole input comes here instead.
            # An object is the normal shape of this field: no note about it.
            initial = block.get("input")
            arguments = arguments_text(initial)[0] if is_map(initial) and initial else None
            return [
                WireToolCall(
                    id=nonempty(block.get("id")),
                    index=index,
                    name=nonempty(block.get("name")),
                    arguments=arguments,
                    expects_end=True,
                    echo=block,
                )
            ]
        if index is not None:
            self._server_blocks[index] = btype in _SERVER_INPUT
        if btype == "text":
            text = block.get("text")
            out: list[WireDelta] = []
            if isinstance(text, str) and text:
                out.append(WireText(text=text, block=index))
            citations = block.get("citations")
            if type(citations) is list:
                out.extend(WireCitation(citation=c, block=index) for c in citations if is_map(c))
            return out
        if btype == "thinking":
            thinking = block.get("thinking")
            out = [WireReasoning(text=thinking if isinstance(thinking, str) else "", block=index)]
            signature = block.get("signature")
            if isinstance(signature, str) and signature:
                out.append(WireSignature(signature=signature, block=index))
            return out
        if btype == "redacted_thinking":
            data = block.get("data")
            return [WireRedactedThinking(data=data if isinstance(data, str) else "", block=index)]
        # Server tools and their results, MCP blocks, compaction, fallback, container
        # uploads, block types not known yet: Anthropic's, never the client's calls.
        return [WireBlock(content=block, block=index)]


def _block_delta(chunk: Mapping[str, Any]) -> dict[str, Any] | None:
    """The delta of a ``content_block_delta`` event with an index, else None."""
    if chunk.get("type") != "content_block_delta" or type(chunk.get("index")) is not int:
        return None
    delta = chunk.get("delta")
    return delta if type(delta) is dict else None
