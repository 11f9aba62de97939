"""OpenAI Chat Completions chunks and every compatible server's (DeepSeek, xAI, Groq,
Mistral, Qwen, GLM, vLLM, Ollama ``/v1``, Gemini's OpenAI endpoint...).

Quirks read here: ``reasoning_content`` (and OpenRouter's ``reasoning``), ``refusal``,
usage on a ``choices: []`` chunk or on the finish chunk, Azure's empty first chunk,
``n > 1`` (only the chosen choice is followed: the choice index is not the tool index),
``"id": ""``/``"name": ""`` read as absent, ``index`` inside ``function`` (Ollama),
``arguments`` sent as an object (Ollama native, MiniMax, TGI) serialized to JSON text,
the legacy ``function_call``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._reader import (
    ChoiceReader,
    arguments_text,
    error_delta,
    integer,
    is_map,
    mapping,
    nonempty,
    pick,
)
from .wire import (
    WireDelta,
    WireReasoning,
    WireRefusal,
    WireResponse,
    WireStop,
    WireText,
    WireToolCall,
    WireUsage,
)

__all__ = ["ChatReader", "chat_call"]


class ChatReader(ChoiceReader):
    """Chat Completions chunks: the chosen choice's deltas, its finish reason, usage."""

    __slots__ = ("_described",)

    def __init__(self, choice: int) -> None:
        super().__init__(choice)
        self._described = False  # WireResponse sent, from the first chunk with an id

    def read(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        out: list[WireDelta] = []
        choices = chunk.get("choices")
        if chunk.get("error") and not choices:
            return [error_delta(chunk)]
        if not self._described and nonempty(chunk.get("id")) is not None:
            self._described = True
            out.append(WireResponse(fields=pick(chunk, {"id": "id", "model": "model"})))
        if type(choices) is list:
            for choice in choices:
                if not is_map(choice) or not self.chosen(integer(choice.get("index")) or 0):
                    continue
                _delta(mapping(choice.get("delta")), out)
                reason = choice.get("finish_reason")
                if type(reason) is str and reason:
                    out.append(WireStop(reason=reason))
        usage = chunk.get("usage")
        if is_map(usage) and usage:
            out.append(WireUsage(usage=usage))
        return out

    def text_of(self, chunk: Mapping[str, Any]) -> tuple[str | None, str | None, int | None] | None:
        # A delta with no tool call, refusal or finish reason: what read() gives for it is
        # its reasoning then its content (the keys read() ignores may be there).
        delta = self._plain_delta(chunk)
        if delta is None or "tool_calls" in delta or "function_call" in delta:
            return None
        refusal = delta.get("refusal")
        if type(refusal) is str and refusal:
            return None
        reasoning = delta.get("reasoning_content")
        if type(reasoning) is not str:
            reasoning = delta.get("reasoning")
        content = delta.get("content")
        self.chosen(self.choice)
        return (
            reasoning if type(reasoning) is str else None,
            content if type(content) is str and content else None,
            None,
        )

    def arguments_of(self, chunk: Mapping[str, Any]) -> tuple[int, str, bool] | None:
        # A delta of nothing but one tool_calls entry with an index and argument text (no
        # id, no name): what read() gives for it is that piece of an index's call.
        delta = self._plain_delta(chunk)
        if delta is None or len(delta) != 1:
            return None
        calls = delta.get("tool_calls")
        if type(calls) is not list or len(calls) != 1:
            return None
        entry = calls[0]
        if type(entry) is not dict or nonempty(entry.get("id")) is not None:
            return None
        index = entry.get("index")
        function = entry.get("function")
        if type(index) is not int or type(function) is not dict:
            return None
        arguments = function.get("arguments")
        if type(arguments) is not str or not arguments or nonempty(function.get("name")):
            return None
        self.chosen(self.choice)
        return index, arguments, False

    def _plain_delta(self, chunk: Mapping[str, Any]) -> dict[str, Any] | None:
        """The delta of a chunk of one choice, the chosen one, with no finish reason, once
        the response was described, with no usage; else None."""
        if not self._described or chunk.get("usage"):
            return None
        choices = chunk.get("choices")
        if type(choices) is not list or len(choices) != 1:
            return None
        choice = choices[0]
        if type(choice) is not dict or choice.get("finish_reason"):
            return None
        index = choice.get("index")
        if (index if type(index) is int else 0) != self.choice:
            return None
        delta = choice.get("delta")
        return delta if type(delta) is dict else None


def _delta(delta: Mapping[str, Any], out: list[WireDelta]) -> None:
    reasoning = delta.get("reasoning_content")
    if type(reasoning) is not str:
        reasoning = delta.get("reasoning")  # OpenRouter's spelling
    if type(reasoning) is str:
        out.append(WireReasoning(text=reasoning))
    content = delta.get("content")
    if type(content) is str and content:
        out.append(WireText(text=content))
    refusal = delta.get("refusal")
    if type(refusal) is str and refusal:
        out.append(WireRefusal(text=refusal))
    calls = delta.get("tool_calls")
    if type(calls) is list:
        for entry in calls:
            if is_map(entry):
                out.append(chat_call(entry))
    legacy = delta.get("function_call")
    if is_map(legacy):
        arguments, from_object = arguments_text(legacy.get("arguments"))
        out.append(
            WireToolCall(
                index=0,
                name=nonempty(legacy.get("name")),
                arguments=arguments,
                from_object=from_object,
            )
        )


def chat_call(entry: Mapping[str, Any]) -> WireToolCall:
    """One entry of a ``tool_calls`` list (Chat Completions, and Ollama's native one)."""
    function = mapping(entry.get("function"))
    index = integer(entry.get("index"))
    if index is None:
        index = integer(function.get("index"))  # Ollama puts it inside "function"
    arguments, from_object = arguments_text(function.get("arguments"))
    return WireToolCall(
        id=nonempty(entry.get("id")),
        index=index,
        name=nonempty(function.get("name")),
        arguments=arguments,
        from_object=from_object,
    )
