"""Cohere v2 chat stream events: ``tool-plan-delta`` read as reasoning,
``tool-call-start``/``-delta``/``-end``, ``content-delta``, ``message-start``,
``message-end`` (finish reason and usage)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ._reader import Reader, arguments_text, error_delta, integer, is_map, mapping, nonempty
from .wire import (
    WireDelta,
    WireEnd,
    WireMessageStart,
    WireReasoning,
    WireStop,
    WireText,
    WireToolCall,
    WireToolEnd,
    WireUsage,
)

__all__ = ["EVENT_TYPES", "CohereReader"]

#: The event types that say a stream is Cohere's.
EVENT_TYPES: Final = frozenset(
    {
        "message-start",
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
        "message-end",
    }
)


class CohereReader(Reader):
    """Cohere v2 chat events (no state: calls are addressed by their index)."""

    __slots__ = ()

    def read(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        kind = chunk.get("type")
        index = integer(chunk.get("index"))
        delta = mapping(chunk.get("delta"))
        message = mapping(delta.get("message"))
        if kind in ("tool-call-start", "tool-call-delta"):
            call = mapping(message.get("tool_calls"))
            function = mapping(call.get("function"))
            arguments, from_object = arguments_text(function.get("arguments"))
            return [
                WireToolCall(
                    id=nonempty(call.get("id")),
                    index=index,
                    name=nonempty(function.get("name")),
                    arguments=arguments,
                    expects_end=True,
                    from_object=from_object,
                )
            ]
        if kind == "tool-call-end":
            return [WireToolEnd(id=None, index=index)]
        if kind == "content-delta":
            text = mapping(message.get("content")).get("text")
            return [WireText(text=text, block=index)] if isinstance(text, str) and text else []
        if kind == "tool-plan-delta":
            plan = message.get("tool_plan")
            return [WireReasoning(text=plan)] if isinstance(plan, str) else []
        if kind == "message-start":
            return [WireMessageStart(message_id=nonempty(chunk.get("id")))]
        if kind == "message-end":
            out: list[WireDelta] = []
            reason = delta.get("finish_reason")
            if isinstance(reason, str) and reason:
                out.append(WireStop(reason=reason))
            usage = delta.get("usage")
            if is_map(usage):
                out.append(WireUsage(usage=usage))
            out.append(WireEnd())
            return out
        if kind == "error" or chunk.get("error"):
            return [error_delta(chunk)]
        return []
