"""Moved to :mod:`streamrepair.providers.wire` (an alias of the 0.1 path, removed in 0.3)."""

from ._moved import warn_moved

warn_moved(__name__, "streamrepair.providers.wire")

from .providers.wire import (  # noqa: E402
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
