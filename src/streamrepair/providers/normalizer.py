"""Provider chunk formats -> one normalized vocabulary of wire deltas.

Theory of operation
-------------------
:class:`ChunkNormalizer` is a push core with no I/O: ``normalize(chunk)`` takes one parsed
chunk (a dict from an SSE ``data:`` line or a JSON line, or an official SDK chunk object)
and returns the :class:`~streamrepair.wire.WireDelta` objects it carries, in order (the
vocabulary lives in ``wire.py``). It knows nothing about
tool-call identity or finishing: that is the tracker's job (``tracker.py``). The only
state kept is the detected :class:`Provider`, and for the Responses API the map from
``item_id`` to ``call_id`` (deltas carry the first, the conversation needs the second).

The provider is named explicitly or detected from the first chunk that says which it is
(an ``{"error": ...}`` chunk says nothing and is reported as an error whatever the
provider). Unknown fields and event types are ignored; nothing passed in is modified.

Formats and quirks handled here (sources in
``../shared/reference/wire-formats-and-malformations.md``):

* OpenAI Chat Completions and compatibles (DeepSeek, xAI, Groq, Mistral, Qwen, GLM, vLLM,
  Ollama ``/v1``, Gemini's OpenAI endpoint...): ``reasoning_content`` (and OpenRouter's
  ``reasoning``), ``refusal``, usage on a ``choices: []`` chunk or on the finish chunk,
  ``obfuscation`` padding, Azure's empty first chunk, ``n > 1`` (only the chosen choice
  is followed: the choice index is not the tool index), ``"id": ""``/``"name": ""`` read
  as absent, ``index`` inside ``function`` (Ollama), ``arguments`` sent as an object
  (Ollama native, MiniMax, TGI) serialized to JSON text, the legacy ``function_call``.
* Anthropic Messages: ``message_start``, ``content_block_start`` (text, thinking,
  redacted_thinking, tool_use), ``text_delta``, ``thinking_delta``, ``signature_delta``,
  ``input_json_delta``, ``content_block_stop``, ``message_delta``, ``message_stop``,
  ``ping``, ``error``.
* OpenAI Responses: ``output_item.added``/``.done``, ``function_call_arguments.delta``/
  ``.done``, custom tool input, output text, refusal and reasoning text,
  ``response.completed``/``.incomplete``/``.failed``, ``error`` (both shapes).
* Ollama native ``/api/chat`` (one JSON object per line, ``done``/``done_reason``).
* Cohere v2 chat (``tool-plan-delta`` read as reasoning, ``tool-call-*``, ``message-end``).

Not handled: Gemini's native ``generateContent`` stream (``functionCall.partialArgs``
addressed by JSON path is not a JSON-delta stream); use Gemini's OpenAI endpoint.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from typing import Any, TypeGuard

from ..errors import UnsupportedChunkError
from .wire import (
    WireDelta,
    WireEnd,
    WireError,
    WireItem,
    WireMessageStart,
    WireReasoning,
    WireRedactedThinking,
    WireRefusal,
    WireSignature,
    WireStop,
    WireText,
    WireToolArguments,
    WireToolCall,
    WireToolEnd,
    WireUsage,
)

__all__ = [
    "ChunkNormalizer",
    "Provider",
    "as_chunk",
    "detect_provider",
]


class Provider(enum.Enum):
    """The wire format of a stream."""

    #: OpenAI Chat Completions and every OpenAI-compatible server.
    OPENAI = "openai"
    #: Anthropic Messages.
    ANTHROPIC = "anthropic"
    #: OpenAI Responses API.
    RESPONSES = "responses"
    #: Ollama's native ``/api/chat`` stream.
    OLLAMA = "ollama"
    #: Cohere v2 chat stream (``tool-call-start``/``-delta``/``-end``, ``message-end``).
    COHERE = "cohere"


# -- helpers ---------------------------------------------------------------------------


def as_chunk(obj: object) -> Mapping[str, Any]:
    """A chunk as a mapping: dicts pass through, SDK objects (pydantic models of the
    ``openai`` and ``anthropic`` packages) are converted with their own ``to_dict()`` /
    ``model_dump()``, so neither SDK is imported here."""
    if _is_map(obj):
        return obj
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        try:
            result = to_dict(mode="json", exclude_unset=True)
        except TypeError:
            result = to_dict()
        if isinstance(result, Mapping):
            return result
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        result = dump(mode="json", exclude_unset=True, by_alias=True)
        if isinstance(result, Mapping):
            return result
    raise UnsupportedChunkError(f"cannot read a chunk of type {type(obj).__name__}")


def _is_map(value: object) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, with the common case (a dict) first: the ABC check
    costs five times more and runs several times per chunk."""
    return type(value) is dict or (value is not None and isinstance(value, Mapping))


def _str(value: object) -> str | None:
    """A non-empty string, else None (``"id": ""`` and ``"name": ""`` mean absent)."""
    return value if type(value) is str and value else None


def _int(value: object) -> int | None:
    return value if type(value) is int else None  # not bool: type(True) is bool


def _map(value: object) -> Mapping[str, Any]:
    if type(value) is dict:
        return value
    return value if isinstance(value, Mapping) else {}


def _arguments(value: object) -> tuple[str | None, bool]:
    if value is None:
        return None, False
    if type(value) is str:
        return value, False
    if isinstance(value, Mapping | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")), True
    return json.dumps(value), True


def _error(payload: Mapping[str, Any]) -> WireError:
    """Read both error shapes: ``{"error": {...}}`` and ``{"type": "error", "code":..}``."""
    err = payload.get("error")
    body: Mapping[str, Any] = err if isinstance(err, Mapping) else payload
    message = body.get("message")
    if not isinstance(message, str) or not message:
        message = err if isinstance(err, str) and err else "an error occurred during streaming"
    code = body.get("code")
    error_type = body.get("type")
    return WireError(
        message=message,
        code=str(code) if code is not None else None,
        error_type=error_type if isinstance(error_type, str) and error_type != "error" else None,
        raw=payload,
    )


_ANTHROPIC_TYPES = frozenset(
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


_COHERE_TYPES = frozenset(
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


def detect_provider(chunk: Mapping[str, Any]) -> Provider | None:
    """The provider a chunk belongs to, or None when the chunk does not say."""
    kind = chunk.get("type")
    if isinstance(kind, str):
        if kind.startswith("response."):
            return Provider.RESPONSES
        if kind in _ANTHROPIC_TYPES:
            return Provider.ANTHROPIC
        if kind in _COHERE_TYPES:
            return Provider.COHERE
    if "choices" in chunk or chunk.get("object") == "chat.completion.chunk":
        return Provider.OPENAI
    if isinstance(chunk.get("message"), Mapping) and "done" in chunk:
        return Provider.OLLAMA
    return None


class ChunkNormalizer:
    """Turn each chunk of one stream into :class:`WireDelta` objects (module docstring).

    ``provider`` names the format (else it is detected from the first chunk that says);
    ``choice`` is the Chat Completions choice to follow when ``n > 1``.
    """

    __slots__ = ("_call_ids", "choice", "ignored_choices", "provider")

    def __init__(self, provider: Provider | str | None = None, *, choice: int = 0) -> None:
        self.provider: Provider | None = Provider(provider) if provider is not None else None
        self.choice = choice
        self.ignored_choices = 0  # chunks of other choices (n > 1) that were skipped
        self._call_ids: dict[str, str] = {}

    def normalize(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        """The wire deltas of one chunk. Raises :class:`UnsupportedChunkError` when the
        first chunks fit no known format."""
        if not _is_map(chunk):
            raise UnsupportedChunkError(f"a chunk must be a mapping, not {type(chunk).__name__}")
        if self.provider is None:
            self.provider = detect_provider(chunk)
            if self.provider is None:
                if "error" in chunk or chunk.get("type") == "error":
                    return [_error(chunk)]
                keys = ", ".join(sorted(str(k) for k in chunk)[:8])
                raise UnsupportedChunkError(f"unrecognized chunk format (keys: {keys})")
        if self.provider is Provider.OPENAI:
            return self._openai(chunk)
        if self.provider is Provider.ANTHROPIC:
            return self._anthropic(chunk)
        if self.provider is Provider.RESPONSES:
            return self._responses(chunk)
        if self.provider is Provider.COHERE:
            return self._cohere(chunk)
        return self._ollama(chunk)

    # -- OpenAI Chat Completions ----------------------------------------------------------

    def _openai(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        out: list[WireDelta] = []
        choices = chunk.get("choices")
        if chunk.get("error") and not choices:
            return [_error(chunk)]
        if type(choices) is list:
            for choice in choices:
                if not _is_map(choice):
                    continue
                if (_int(choice.get("index")) or 0) != self.choice:
                    self.ignored_choices += 1
                    continue
                self._openai_delta(_map(choice.get("delta")), out)
                reason = choice.get("finish_reason")
                if type(reason) is str and reason:
                    out.append(WireStop(reason=reason))
        usage = chunk.get("usage")
        if _is_map(usage) and usage:
            out.append(WireUsage(usage=usage))
        return out

    def _openai_delta(self, delta: Mapping[str, Any], out: list[WireDelta]) -> None:
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
                if _is_map(entry):
                    out.append(self._openai_call(entry))
        legacy = delta.get("function_call")
        if _is_map(legacy):
            arguments, from_object = _arguments(legacy.get("arguments"))
            out.append(
                WireToolCall(
                    index=0,
                    name=_str(legacy.get("name")),
                    arguments=arguments,
                    from_object=from_object,
                )
            )

    @staticmethod
    def _openai_call(entry: Mapping[str, Any]) -> WireToolCall:
        function = _map(entry.get("function"))
        index = _int(entry.get("index"))
        if index is None:
            index = _int(function.get("index"))  # Ollama puts it inside "function"
        arguments, from_object = _arguments(function.get("arguments"))
        return WireToolCall(
            id=_str(entry.get("id")),
            index=index,
            name=_str(function.get("name")),
            arguments=arguments,
            from_object=from_object,
        )

    # -- Anthropic Messages ---------------------------------------------------------------

    def _anthropic(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        kind = chunk.get("type")
        index = _int(chunk.get("index"))
        if kind == "content_block_delta":
            delta = _map(chunk.get("delta"))
            dtype = delta.get("type")
            if dtype == "input_json_delta":
                partial = delta.get("partial_json")
                if isinstance(partial, str):
                    return [WireToolCall(index=index, arguments=partial, expects_end=True)]
            elif dtype == "text_delta":
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
            return []
        if kind == "content_block_start":
            return self._anthropic_block(_map(chunk.get("content_block")), index)
        if kind == "content_block_stop":
            return [WireToolEnd(id=None, index=index)]
        if kind == "message_start":
            message = _map(chunk.get("message"))
            out: list[WireDelta] = [WireMessageStart(message_id=_str(message.get("id")))]
            usage = message.get("usage")
            if _is_map(usage):
                out.append(WireUsage(usage=usage))
            return out
        if kind == "message_delta":
            out = []
            reason = _map(chunk.get("delta")).get("stop_reason")
            if isinstance(reason, str) and reason:
                out.append(WireStop(reason=reason))
            usage = chunk.get("usage")
            if _is_map(usage):
                out.append(WireUsage(usage=usage, merge=True))
            return out
        if kind == "message_stop":
            return [WireEnd()]
        if kind == "error" or (chunk.get("error") and kind is None):
            return [_error(chunk)]
        return []  # ping and anything unknown

    @staticmethod
    def _anthropic_block(block: Mapping[str, Any], index: int | None) -> list[WireDelta]:
        btype = block.get("type")
        if btype == "tool_use":
            # "input" is a {} placeholder that the input_json_delta pieces replace; a
            # proxy that sends the whole input here instead is read as its arguments.
            initial = block.get("input")
            arguments, from_object = (
                _arguments(initial) if isinstance(initial, Mapping) and initial else (None, False)
            )
            return [
                WireToolCall(
                    id=_str(block.get("id")),
                    index=index,
                    name=_str(block.get("name")),
                    arguments=arguments,
                    expects_end=True,
                    from_object=from_object,
                )
            ]
        if btype == "text":
            text = block.get("text")
            return [WireText(text=text, block=index)] if isinstance(text, str) and text else []
        if btype == "thinking":
            thinking = block.get("thinking")
            return [WireReasoning(text=thinking if isinstance(thinking, str) else "", block=index)]
        if btype == "redacted_thinking":
            data = block.get("data")
            return [WireRedactedThinking(data=data if isinstance(data, str) else "", block=index)]
        return []  # server tools and their results run on Anthropic's side, not ours

    # -- OpenAI Responses -----------------------------------------------------------------

    def _responses(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        kind = chunk.get("type")
        index = _int(chunk.get("output_index"))
        if kind in (
            "response.function_call_arguments.delta",
            "response.custom_tool_call_input.delta",
        ):
            delta = chunk.get("delta")
            if not isinstance(delta, str):
                return []
            call_id = self._call_ids.get(str(chunk.get("item_id")))
            custom = kind == "response.custom_tool_call_input.delta"
            return [
                WireToolCall(
                    id=call_id,
                    index=index,
                    arguments=delta,
                    kind="custom" if custom else "function",
                    expects_end=True,
                )
            ]
        if kind == "response.output_text.delta":
            delta = chunk.get("delta")
            return [WireText(text=delta, block=index)] if isinstance(delta, str) and delta else []
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            delta = chunk.get("delta")
            return [WireReasoning(text=delta, block=index)] if isinstance(delta, str) else []
        if kind == "response.refusal.delta":
            delta = chunk.get("delta")
            return [WireRefusal(text=delta)] if isinstance(delta, str) and delta else []
        if kind == "response.output_item.added":
            return self._responses_item(_map(chunk.get("item")), index, added=True)
        if kind in (
            "response.function_call_arguments.done",
            "response.custom_tool_call_input.done",
        ):
            final = chunk.get("arguments" if kind.endswith("arguments.done") else "input")
            call_id = self._call_ids.get(str(chunk.get("item_id")))
            out: list[WireDelta] = []
            if isinstance(final, str):
                out.append(WireToolArguments(id=call_id, index=index, arguments=final))
            return out
        if kind == "response.output_item.done":
            return self._responses_item(_map(chunk.get("item")), index, added=False)
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            return self._responses_end(kind, _map(chunk.get("response")))
        if kind == "error":
            return [_error(chunk)]
        return []

    def _responses_item(
        self, item: Mapping[str, Any], index: int | None, *, added: bool
    ) -> list[WireDelta]:
        itype = item.get("type")
        if itype in ("function_call", "custom_tool_call"):
            custom = itype == "custom_tool_call"
            call_id = _str(item.get("call_id")) or _str(item.get("id"))
            item_id = _str(item.get("id"))
            if item_id is not None and call_id is not None:
                self._call_ids[item_id] = call_id
            text = item.get("input" if custom else "arguments")
            kind = "custom" if custom else "function"
            if added:
                return [
                    WireToolCall(
                        id=call_id,
                        index=index,
                        name=_str(item.get("name")),
                        arguments=text if isinstance(text, str) and text else None,
                        kind=kind,
                        expects_end=True,
                    )
                ]
            out: list[WireDelta] = []
            # Gateways may send an empty item here while ".done" had the arguments
            # (jjang-ai/vmlx#192): only a non-empty text is authoritative.
            if isinstance(text, str) and text:
                out.append(WireToolArguments(id=call_id, index=index, arguments=text))
            out.append(WireToolEnd(id=call_id, index=index))
            # Kept for Done.messages: its item id pairs it with the reasoning before it.
            out.append(WireItem(item=item, block=index))
            return out
        if not added and itype in ("message", "reasoning"):
            return [WireItem(item=item, block=index)]
        return []

    @staticmethod
    def _responses_end(kind: str, response: Mapping[str, Any]) -> list[WireDelta]:
        out: list[WireDelta] = []
        if kind == "response.failed":
            error = response.get("error")
            out.append(_error({"error": error} if isinstance(error, Mapping) else response))
            return out
        usage = response.get("usage")
        if _is_map(usage):
            out.append(WireUsage(usage=usage))
        if kind == "response.completed":
            out.append(WireStop(reason="completed"))
        else:
            reason = _map(response.get("incomplete_details")).get("reason")
            out.append(WireStop(reason=f"incomplete:{reason if isinstance(reason, str) else ''}"))
        out.append(WireEnd())
        return out

    # -- Cohere v2 -------------------------------------------------------------------------

    @staticmethod
    def _cohere(chunk: Mapping[str, Any]) -> list[WireDelta]:
        kind = chunk.get("type")
        index = _int(chunk.get("index"))
        delta = _map(chunk.get("delta"))
        message = _map(delta.get("message"))
        if kind in ("tool-call-start", "tool-call-delta"):
            call = _map(message.get("tool_calls"))
            function = _map(call.get("function"))
            arguments, from_object = _arguments(function.get("arguments"))
            return [
                WireToolCall(
                    id=_str(call.get("id")),
                    index=index,
                    name=_str(function.get("name")),
                    arguments=arguments,
                    expects_end=True,
                    from_object=from_object,
                )
            ]
        if kind == "tool-call-end":
            return [WireToolEnd(id=None, index=index)]
        if kind == "content-delta":
            text = _map(message.get("content")).get("text")
            return [WireText(text=text, block=index)] if isinstance(text, str) and text else []
        if kind == "tool-plan-delta":
            plan = message.get("tool_plan")
            return [WireReasoning(text=plan)] if isinstance(plan, str) else []
        if kind == "message-start":
            return [WireMessageStart(message_id=_str(chunk.get("id")))]
        if kind == "message-end":
            out: list[WireDelta] = []
            reason = delta.get("finish_reason")
            if isinstance(reason, str) and reason:
                out.append(WireStop(reason=reason))
            usage = delta.get("usage")
            if _is_map(usage):
                out.append(WireUsage(usage=usage))
            out.append(WireEnd())
            return out
        if kind == "error" or chunk.get("error"):
            return [_error(chunk)]
        return []

    # -- Ollama native -------------------------------------------------------------------

    def _ollama(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        if chunk.get("error") and "message" not in chunk:
            return [_error(chunk)]
        out: list[WireDelta] = []
        message = _map(chunk.get("message"))
        thinking = message.get("thinking")
        if isinstance(thinking, str) and thinking:
            out.append(WireReasoning(text=thinking))
        content = message.get("content")
        if isinstance(content, str) and content:
            out.append(WireText(text=content))
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            for entry in calls:
                if _is_map(entry):
                    out.append(self._openai_call(entry))
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
