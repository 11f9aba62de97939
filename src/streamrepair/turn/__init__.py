"""The turn layer: what to send back after each stream.

* :mod:`.replies`: the answers (:func:`tool_message`, :func:`tool_result_block`,
  :func:`function_call_output`) and the assistant turn (:func:`assistant_message`,
  :func:`response_items`) for Chat Completions, Anthropic and the Responses API;
* :mod:`.conversation`: :class:`Conversation`, the history and its state;
* :mod:`.history`: :class:`ReasoningPolicy`, :func:`repair_history`,
  :func:`prepare_messages`, :func:`check_history` (what each API answers with 400, and
  DeepSeek's thinking-mode reasoning rules), pure functions over a list of messages;
* :mod:`.abort`: :class:`AbortFence` and :func:`run_tool_calls` (anyio).

The names are imported on first use.
"""

from __future__ import annotations

import typing as _typing

from .._lazy import attach

if _typing.TYPE_CHECKING:
    from ..errors import (
        AbortFenceError,
        HistoryError,
        UnansweredCallsError,
    )
    from .abort import (
        DEFAULT_ABORT_TIMEOUT,
        AbortCause,
        AbortFence,
        AbortHandler,
        AbortReport,
        FencePhase,
        FencePhaseState,
        HandlerOutcome,
        HandlerStatus,
        Phase,
        PhaseState,
        ToolRunner,
        run_tool_calls,
    )
    from .conversation import (
        INTERRUPTED_BEFORE_START,
        Conversation,
        ToolBatch,
    )
    from .history import (
        ChangeKind,
        HistoryChange,
        HistoryProblem,
        HistoryRepair,
        ProblemKind,
        ReasoningPolicy,
        check_history,
        copy_json,
        prepare_messages,
        repair_history,
    )
    from .replies import (
        CallStatus,
        RunState,
        assistant_message,
        function_call_output,
        response_items,
        tool_message,
        tool_result_block,
    )

_EXPORTS: dict[str, str] = {
    "AbortCause": "abort",
    "AbortFence": "abort",
    "AbortFenceError": "streamrepair.errors",
    "AbortHandler": "abort",
    "AbortReport": "abort",
    "CallStatus": "replies",
    "ChangeKind": "history",
    "Conversation": "conversation",
    "DEFAULT_ABORT_TIMEOUT": "abort",
    "FencePhase": "abort",
    "FencePhaseState": "abort",
    "HandlerOutcome": "abort",
    "HandlerStatus": "abort",
    "HistoryChange": "history",
    "HistoryError": "streamrepair.errors",
    "HistoryProblem": "history",
    "HistoryRepair": "history",
    "INTERRUPTED_BEFORE_START": "conversation",
    "Phase": "abort",
    "PhaseState": "abort",
    "ProblemKind": "history",
    "ReasoningPolicy": "history",
    "RunState": "replies",
    "ToolBatch": "conversation",
    "ToolRunner": "abort",
    "UnansweredCallsError": "streamrepair.errors",
    "assistant_message": "replies",
    "check_history": "history",
    "copy_json": "history",
    "function_call_output": "replies",
    "prepare_messages": "history",
    "repair_history": "history",
    "response_items": "replies",
    "run_tool_calls": "abort",
    "tool_message": "replies",
    "tool_result_block": "replies",
}

__all__ = [
    "DEFAULT_ABORT_TIMEOUT",
    "INTERRUPTED_BEFORE_START",
    "AbortCause",
    "AbortFence",
    "AbortFenceError",
    "AbortHandler",
    "AbortReport",
    "CallStatus",
    "ChangeKind",
    "Conversation",
    "FencePhase",
    "FencePhaseState",
    "HandlerOutcome",
    "HandlerStatus",
    "HistoryChange",
    "HistoryError",
    "HistoryProblem",
    "HistoryRepair",
    "Phase",
    "PhaseState",
    "ProblemKind",
    "ReasoningPolicy",
    "RunState",
    "ToolBatch",
    "ToolRunner",
    "UnansweredCallsError",
    "assistant_message",
    "check_history",
    "copy_json",
    "function_call_output",
    "prepare_messages",
    "repair_history",
    "response_items",
    "run_tool_calls",
    "tool_message",
    "tool_result_block",
]

__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__)
