"""Moved to :mod:`streamrepair.turn.history` (an alias of the 0.1 path, removed in 0.3)."""

from ._moved import warn_moved

warn_moved(__name__, "streamrepair.turn.history")

from .turn.history import (  # noqa: E402
    HistoryProblem,
    ProblemKind,
    ReasoningPolicy,
    check_history,
    prepare_messages,
)

__all__ = [
    "HistoryProblem",
    "ProblemKind",
    "ReasoningPolicy",
    "check_history",
    "prepare_messages",
]
