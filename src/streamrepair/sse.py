"""Moved to :mod:`streamrepair.stream.sse` (an alias of the 0.1 path, removed in 0.3)."""

from ._moved import warn_moved

warn_moved(__name__, "streamrepair.stream.sse")

from .errors import (  # noqa: E402
    SSEDecodeError,
    SSEError,
    SSELimitError,
)
from .stream.sse import (  # noqa: E402
    DEFAULT_MAX_EVENT_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    JSONLinesDecoder,
    SSEDecoder,
    SSEEvent,
)

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "JSONLinesDecoder",
    "SSEDecodeError",
    "SSEDecoder",
    "SSEError",
    "SSEEvent",
    "SSELimitError",
]
