"""Moved to :mod:`streamrepair.turn.abort` (an alias of the 0.1 path, removed in 0.3)."""

from ._moved import warn_moved

warn_moved(__name__, "streamrepair.turn.abort")

from .errors import (  # noqa: E402
    AbortFenceError,
)
from .turn.abort import (  # noqa: E402
    DEFAULT_ABORT_TIMEOUT,
    AbortCause,
    AbortFence,
    AbortHandler,
    AbortReport,
    HandlerOutcome,
    HandlerStatus,
    Phase,
    PhaseState,
    ToolRunner,
    run_tool_calls,
)

__all__ = [
    "DEFAULT_ABORT_TIMEOUT",
    "AbortCause",
    "AbortFence",
    "AbortFenceError",
    "AbortHandler",
    "AbortReport",
    "HandlerOutcome",
    "HandlerStatus",
    "Phase",
    "PhaseState",
    "ToolRunner",
    "run_tool_calls",
]
