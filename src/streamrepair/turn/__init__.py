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
    from ..errors import AbortFenceError as AbortFenceError
    from ..errors import HistoryError as HistoryError
    from ..errors import UnansweredCallsError as UnansweredCallsError
    from .abort import DEFAULT_ABORT_TIMEOUT as DEFAULT_ABORT_TIMEOUT
    from .abort import AbortCause as AbortCause
    from .abort import AbortFence as AbortFence
    from .abort import AbortHandler as AbortHandler
    from .abort import AbortReport as AbortReport
    from .abort import FencePhase as FencePhase
    from .abort import FencePhaseState as FencePhaseState
    from .abort import HandlerOutcome as HandlerOutcome
    from .abort import HandlerStatus as HandlerStatus
    from .abort import ToolRunner as ToolRunner
    from .abort import run_tool_calls as run_tool_calls
    from .conversation import INTERRUPTED_BEFORE_START as INTERRUPTED_BEFORE_START
    from .conversation import Conversation as Conversation
    from .conversation import ToolBatch as ToolBatch
    from .history import ChangeKind as ChangeKind
    from .history import HistoryChange as HistoryChange
    from .history import HistoryProblem as HistoryProblem
    from .history import HistoryRepair as HistoryRepair
    from .history import ProblemKind as ProblemKind
    from .history import ReasoningPolicy as ReasoningPolicy
    from .history import check_history as check_history
    from .history import copy_json as copy_json
    from .history import prepare_messages as prepare_messages
    from .history import repair_history as repair_history
    from .replies import RunState as RunState
    from .replies import assistant_message as assistant_message
    from .replies import function_call_output as function_call_output
    from .replies import rejected_arguments as rejected_arguments
    from .replies import response_items as response_items
    from .replies import tool_message as tool_message
    from .replies import tool_result_block as tool_result_block

__all__, __getattr__, __dir__ = attach(__name__, __file__)
