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
    from ..errors import UnsupportedChunkError as UnsupportedChunkError
    from .messages import Block as Block
    from .messages import TurnRecorder as TurnRecorder
    from .messages import build_messages as build_messages
    from .normalizer import ChunkNormalizer as ChunkNormalizer
    from .normalizer import Provider as Provider
    from .normalizer import as_chunk as as_chunk
    from .normalizer import detect_provider as detect_provider
    from .normalizer import responses_client_item as responses_client_item
    from .textcalls import MAX_HEADER_CHARS as MAX_HEADER_CHARS
    from .textcalls import TextCallExtractor as TextCallExtractor
    from .textcalls import TextCallFormat as TextCallFormat
    from .wire import WireBlock as WireBlock
    from .wire import WireBlockInput as WireBlockInput
    from .wire import WireBlockUpdate as WireBlockUpdate
    from .wire import WireCitation as WireCitation
    from .wire import WireDelta as WireDelta
    from .wire import WireEnd as WireEnd
    from .wire import WireError as WireError
    from .wire import WireItem as WireItem
    from .wire import WireMessageStart as WireMessageStart
    from .wire import WireReasoning as WireReasoning
    from .wire import WireRedactedThinking as WireRedactedThinking
    from .wire import WireRefusal as WireRefusal
    from .wire import WireResponse as WireResponse
    from .wire import WireSignature as WireSignature
    from .wire import WireStop as WireStop
    from .wire import WireText as WireText
    from .wire import WireToolArguments as WireToolArguments
    from .wire import WireToolCall as WireToolCall
    from .wire import WireToolEnd as WireToolEnd
    from .wire import WireToolValue as WireToolValue
    from .wire import WireUsage as WireUsage

__all__, __getattr__, __dir__ = attach(__name__, __file__)
