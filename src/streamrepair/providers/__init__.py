"""The provider layer: each provider's chunks in one normalized vocabulary, and the
assistant message back in the provider's own format.

* :mod:`.wire`: the normalized deltas (:class:`WireDelta` and its kinds);
* :mod:`.normalizer`: :class:`ChunkNormalizer` (OpenAI/DeepSeek Chat, Anthropic, Responses,
  Ollama, Cohere, Gemini, Bedrock chunks or SDK objects -> wire deltas, one reader per
  provider in ``_chat.py``, ``_anthropic.py``...), :class:`Provider`;
* :mod:`.messages`: :class:`TurnRecorder` and :func:`build_messages`, the turn as it
  streamed turned into ``Done.messages``;
* :mod:`.textcalls` (a package): :class:`TextCallExtractor`, the optional stage that
  turns tool calls written as text (chat-template markup in content) into structured wire
  deltas, and :class:`TextCallFormat`.

No I/O. The names are imported on first use.
"""

from __future__ import annotations

import typing as _typing

from .._lazy import attach

if _typing.TYPE_CHECKING:
    from ..errors import (
        UnsupportedChunkError,
    )
    from .messages import (
        Block,
        TurnRecorder,
        build_messages,
    )
    from .normalizer import (
        ChunkNormalizer,
        Provider,
        as_chunk,
        detect_provider,
        responses_client_item,
    )
    from .textcalls import (
        MAX_HEADER_CHARS,
        TextCallExtractor,
        TextCallFormat,
    )
    from .wire import (
        WireBlock,
        WireBlockInput,
        WireBlockUpdate,
        WireCitation,
        WireDelta,
        WireEnd,
        WireError,
        WireItem,
        WireMessageStart,
        WireReasoning,
        WireRedactedThinking,
        WireRefusal,
        WireResponse,
        WireSignature,
        WireStop,
        WireText,
        WireToolArguments,
        WireToolCall,
        WireToolEnd,
        WireToolValue,
        WireUsage,
    )

_EXPORTS: dict[str, str] = {
    "Block": "messages",
    "MAX_HEADER_CHARS": "textcalls",
    "TextCallExtractor": "textcalls",
    "TextCallFormat": "textcalls",
    "ChunkNormalizer": "normalizer",
    "Provider": "normalizer",
    "TurnRecorder": "messages",
    "UnsupportedChunkError": "streamrepair.errors",
    "WireBlock": "wire",
    "WireBlockInput": "wire",
    "WireBlockUpdate": "wire",
    "WireCitation": "wire",
    "WireDelta": "wire",
    "WireEnd": "wire",
    "WireError": "wire",
    "WireItem": "wire",
    "WireMessageStart": "wire",
    "WireReasoning": "wire",
    "WireRedactedThinking": "wire",
    "WireRefusal": "wire",
    "WireResponse": "wire",
    "WireSignature": "wire",
    "WireStop": "wire",
    "WireText": "wire",
    "WireToolArguments": "wire",
    "WireToolCall": "wire",
    "WireToolEnd": "wire",
    "WireToolValue": "wire",
    "WireUsage": "wire",
    "as_chunk": "normalizer",
    "build_messages": "messages",
    "detect_provider": "normalizer",
    "responses_client_item": "normalizer",
}

__all__ = [
    "MAX_HEADER_CHARS",
    "Block",
    "ChunkNormalizer",
    "Provider",
    "TextCallExtractor",
    "TextCallFormat",
    "TurnRecorder",
    "UnsupportedChunkError",
    "WireBlock",
    "WireBlockInput",
    "WireBlockUpdate",
    "WireCitation",
    "WireDelta",
    "WireEnd",
    "WireError",
    "WireItem",
    "WireMessageStart",
    "WireReasoning",
    "WireRedactedThinking",
    "WireRefusal",
    "WireResponse",
    "WireSignature",
    "WireStop",
    "WireText",
    "WireToolArguments",
    "WireToolCall",
    "WireToolEnd",
    "WireToolValue",
    "WireUsage",
    "as_chunk",
    "build_messages",
    "detect_provider",
    "responses_client_item",
]

__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__)
