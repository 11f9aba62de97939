"""Moved to :mod:`streamrepair.stream.tracker` (an alias of the 0.1 path, removed in 0.3)."""

from ._moved import warn_moved

warn_moved(__name__, "streamrepair.stream.tracker")

from .schema.tools import (  # noqa: E402
    tool_schemas,
)
from .stream.tracker import (  # noqa: E402
    DEFAULT_MAX_TEXT_CHARS,
    MAX_TOOL_CALLS,
    CallPhase,
    ToolCallTracker,
)

__all__ = [
    "DEFAULT_MAX_TEXT_CHARS",
    "MAX_TOOL_CALLS",
    "CallPhase",
    "ToolCallTracker",
    "tool_schemas",
]
