"""streamrepair: turn the tool calls an LLM streams out into arguments a program can trust.

The core is :class:`ArgumentAssembler`, a push parser that takes a tool call's argument
text one delta at a time, repairs what is unambiguous as it goes, says at any moment
whether the text is complete, cut off or unrepairable, and never hands out a value whose
structure had to be invented as if the model had finished it. :func:`repair` is the
one-shot form.
"""

from .abort import (
    DEFAULT_ABORT_TIMEOUT,
    AbortCause,
    AbortFence,
    AbortFenceError,
    AbortReport,
    HandlerOutcome,
    HandlerStatus,
    Phase,
    PhaseState,
    run_tool_calls,
)
from .assembler import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_SIZE,
    MAX_TOKEN_CHARS,
    ArgumentAssembler,
)
from .conversation import (
    CallStatus,
    Conversation,
    HistoryError,
    ToolBatch,
    UnansweredCallsError,
    assistant_message,
    tool_message,
)
from .errors import (
    AssemblerFinishedError,
    ConcatenatedValuesError,
    StreamRepairError,
    TooDeepError,
    TooLargeError,
    UnrepairableError,
)
from .events import (
    Done,
    ReasoningDelta,
    RefusalDelta,
    RejectReason,
    StopReason,
    StreamEvent,
    StreamFailed,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStarted,
    normalize_stop_reason,
)
from .history import HistoryProblem, ProblemKind, ReasoningPolicy, check_history, prepare_messages
from .notes import append_repair_notes
from .oneshot import REPAIR_MAX_SIZE, repair
from .profiles import Profile, ProfileRepair, apply_profiles, select_profiles
from .providers import ChunkNormalizer, Provider
from .results import Repair, Repaired, RepairKind, Status
from .schema_rules import ArgumentRepair, RepairNote, SchemaIssue, SchemaRule, repair_arguments
from .sse import SSEDecoder, SSEError, SSEEvent, SSELimitError
from .stream import StreamClosedError, ToolCallStream, aiter_events, iter_events, load_recording
from .telemetry import OTelMetrics, TelemetryLog, TelemetryRecord
from .tracker import CallPhase, ToolCallTracker

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_ABORT_TIMEOUT",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_SIZE",
    "MAX_TOKEN_CHARS",
    "REPAIR_MAX_SIZE",
    "AbortCause",
    "AbortFence",
    "AbortFenceError",
    "AbortReport",
    "ArgumentAssembler",
    "ArgumentRepair",
    "AssemblerFinishedError",
    "CallPhase",
    "CallStatus",
    "ChunkNormalizer",
    "ConcatenatedValuesError",
    "Conversation",
    "Done",
    "HandlerOutcome",
    "HandlerStatus",
    "HistoryError",
    "HistoryProblem",
    "OTelMetrics",
    "Phase",
    "PhaseState",
    "ProblemKind",
    "Profile",
    "ProfileRepair",
    "Provider",
    "ReasoningDelta",
    "ReasoningPolicy",
    "RefusalDelta",
    "RejectReason",
    "Repair",
    "RepairKind",
    "RepairNote",
    "Repaired",
    "SSEDecoder",
    "SSEError",
    "SSEEvent",
    "SSELimitError",
    "SchemaIssue",
    "SchemaRule",
    "Status",
    "StopReason",
    "StreamClosedError",
    "StreamEvent",
    "StreamFailed",
    "StreamRepairError",
    "TelemetryLog",
    "TelemetryRecord",
    "TextDelta",
    "TooDeepError",
    "TooLargeError",
    "ToolBatch",
    "ToolCallDelta",
    "ToolCallReady",
    "ToolCallRejected",
    "ToolCallStarted",
    "ToolCallStream",
    "ToolCallTracker",
    "UnansweredCallsError",
    "UnrepairableError",
    "__version__",
    "aiter_events",
    "append_repair_notes",
    "apply_profiles",
    "assistant_message",
    "check_history",
    "iter_events",
    "load_recording",
    "normalize_stop_reason",
    "prepare_messages",
    "repair",
    "repair_arguments",
    "run_tool_calls",
    "select_profiles",
    "tool_message",
]
