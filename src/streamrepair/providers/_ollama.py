"""Ollama's native ``/api/chat`` stream: one JSON object per line, ``message`` with
``thinking``, ``content`` and whole ``tool_calls``, ``done``/``done_reason`` and the
counts on the last line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._chat import chat_call
from ._reader import Reader, error_delta, is_map, mapping
from .wire import WireDelta, WireEnd, WireReasoning, WireStop, WireText, WireUsage

__all__ = ["OllamaReader"]


class OllamaReader(Reader):
    """Ollama native chat lines (no state: every line stands alone)."""

    __slots__ = ()

    def read(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        if chunk.get("error") and "message" not in chunk:
            return [error_delta(chunk)]
        out: list[WireDelta] = []
        message = mapping(chunk.get("message"))
        thinking = message.get("thinking")
        if isinstance(thinking, str) and thinking:
            out.append(WireReasoning(text=thinking))
        content = message.get("content")
        if isinstance(content, str) and content:
            out.append(WireText(text=content))
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            for entry in calls:
                if is_map(entry):
                    out.append(chat_call(entry))
        if chunk.get("done") is True:
            reason = chunk.get("done_reason")
            out.append(WireStop(reason=reason if isinstance(reason, str) and reason else "stop"))
            usage = {
                key: chunk[key]
                for key in ("prompt_eval_count", "eval_count", "total_duration")
                if key in chunk
            }
            if usage:
                out.append(WireUsage(usage=usage))
            out.append(WireEnd())
        return out
