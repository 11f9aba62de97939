"""The normalized vocabulary every provider format is turned into: wire deltas.

``providers.py`` turns each provider's chunks into these; ``tracker.py`` consumes them.
They say what arrived (text, reasoning, a piece of a tool call, a stop reason, usage, an
error, the end marker) and nothing about what it means for a call: identity and the
finish policy are the tracker's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "WireDelta",
    "WireEnd",
    "WireError",
    "WireItem",
    "WireMessageStart",
    "WireReasoning",
    "WireRedactedThinking",
    "WireRefusal",
    "WireSignature",
    "WireStop",
    "WireText",
    "WireToolArguments",
    "WireToolCall",
    "WireToolEnd",
    "WireUsage",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class WireDelta:
    """Base class of the normalized deltas."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WireMessageStart(WireDelta):
    """A message begins (Anthropic ``message_start``)."""

    message_id: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireText(WireDelta):
    """Content text. ``block`` is the provider's block/output index, if any."""

    text: str
    block: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireReasoning(WireDelta):
    """Reasoning text (may be ``""``: DeepSeek opens thinking mode with it)."""

    text: str
    block: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireSignature(WireDelta):
    """Anthropic ``signature_delta`` of a thinking block."""

    signature: str
    block: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireRedactedThinking(WireDelta):
    """An Anthropic ``redacted_thinking`` block (kept for the conversation)."""

    data: str
    block: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireRefusal(WireDelta):
    """Refusal text."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WireToolCall(WireDelta):
    """A piece of a tool call: any of id, index, name and argument text may be absent.

    ``expects_end`` says the provider closes each call explicitly (Anthropic
    ``content_block_stop``, Responses ``output_item.done``), so a call never closed was
    cut off. ``from_object`` says ``arguments`` was sent as an object and serialized
    here. ``kind`` is ``"function"`` or ``"custom"`` (Responses free-text tools).
    """

    id: str | None = None
    index: int | None = None
    name: str | None = None
    arguments: str | None = None
    kind: str = "function"
    expects_end: bool = False
    from_object: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class WireToolArguments(WireDelta):
    """The provider's own final argument text for a call (Responses ``.done``)."""

    id: str | None
    index: int | None
    arguments: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WireToolEnd(WireDelta):
    """The provider closed a call (or a content block that may be one)."""

    id: str | None
    index: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireStop(WireDelta):
    """A stop reason, as the provider spelled it."""

    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WireUsage(WireDelta):
    """Token usage. ``merge`` updates the usage seen so far instead of replacing it."""

    usage: Mapping[str, Any]
    merge: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class WireError(WireDelta):
    """An error reported inside the stream."""

    message: str
    code: str | None = None
    error_type: str | None = None
    raw: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireItem(WireDelta):
    """A finished Responses output item (message, reasoning, or a tool call after its
    :class:`WireToolEnd`), as the provider sent it."""

    item: Mapping[str, Any]
    block: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireEnd(WireDelta):
    """The provider's end marker (``[DONE]``, ``message_stop``, ``response.completed``,
    Ollama ``done``)."""
