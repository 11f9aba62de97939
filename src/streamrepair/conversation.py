"""Moved to :mod:`streamrepair.turn.conversation` (an alias of the 0.1 path, removed in 0.3)."""

from ._moved import warn_moved

warn_moved(__name__, "streamrepair.turn.conversation")

from .errors import (  # noqa: E402
    HistoryError,
    UnansweredCallsError,
)
from .turn.conversation import (  # noqa: E402
    Conversation,
    ToolBatch,
)
from .turn.replies import (  # noqa: E402
    CallStatus,
    assistant_message,
    tool_message,
)

__all__ = [
    "CallStatus",
    "Conversation",
    "HistoryError",
    "ToolBatch",
    "UnansweredCallsError",
    "assistant_message",
    "tool_message",
]
