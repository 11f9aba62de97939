"""streamrepair: turn the tool calls an LLM streams out into arguments a program can trust.

The core is :class:`ArgumentAssembler`, a push parser that takes a tool call's argument
text one delta at a time, repairs what is unambiguous as it goes, says at any moment
whether the text is complete, cut off or unrepairable, and never hands out a value whose
structure had to be invented as if the model had finished it. :func:`repair` is the
one-shot form.
"""

# The names below are imported on first use (PEP 562), so that a short-lived process such
# as a harness hook pays only for the layers it touches, not for every layer.

from __future__ import annotations

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
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
    from .history import (
        HistoryProblem,
        ProblemKind,
        ReasoningPolicy,
        check_history,
        prepare_messages,
    )
    from .notes import (
        append_repair_notes,
    )
    from .oneshot import (
        REPAIR_MAX_SIZE,
        repair,
    )
    from .profiles import (
        Profile,
        ProfileRepair,
        apply_profiles,
        select_profiles,
    )
    from .providers import (
        ChunkNormalizer,
        Provider,
    )
    from .results import (
        Repair,
        Repaired,
        RepairKind,
        Status,
    )
    from .schema_rules import (
        ArgumentRepair,
        RepairNote,
        SchemaIssue,
        SchemaRule,
        repair_arguments,
    )
    from .sse import (
        SSEDecoder,
        SSEError,
        SSEEvent,
        SSELimitError,
    )
    from .stream import (
        StreamClosedError,
        ToolCallStream,
        aiter_events,
        iter_events,
        load_recording,
    )
    from .telemetry import (
        OTelMetrics,
        TelemetryLog,
        TelemetryRecord,
    )
    from .tracker import (
        CallPhase,
        ToolCallTracker,
    )

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "AbortCause": "abort",
    "AbortFence": "abort",
    "AbortFenceError": "abort",
    "AbortReport": "abort",
    "ArgumentAssembler": "assembler",
    "ArgumentRepair": "schema_rules",
    "AssemblerFinishedError": "errors",
    "CallPhase": "tracker",
    "CallStatus": "conversation",
    "ChunkNormalizer": "providers",
    "ConcatenatedValuesError": "errors",
    "Conversation": "conversation",
    "DEFAULT_ABORT_TIMEOUT": "abort",
    "DEFAULT_MAX_DEPTH": "assembler",
    "DEFAULT_MAX_SIZE": "assembler",
    "Done": "events",
    "HandlerOutcome": "abort",
    "HandlerStatus": "abort",
    "HistoryError": "conversation",
    "HistoryProblem": "history",
    "MAX_TOKEN_CHARS": "assembler",
    "OTelMetrics": "telemetry",
    "Phase": "abort",
    "PhaseState": "abort",
    "ProblemKind": "history",
    "Profile": "profiles",
    "ProfileRepair": "profiles",
    "Provider": "providers",
    "REPAIR_MAX_SIZE": "oneshot",
    "ReasoningDelta": "events",
    "ReasoningPolicy": "history",
    "RefusalDelta": "events",
    "RejectReason": "events",
    "Repair": "results",
    "RepairKind": "results",
    "RepairNote": "schema_rules",
    "Repaired": "results",
    "SSEDecoder": "sse",
    "SSEError": "sse",
    "SSEEvent": "sse",
    "SSELimitError": "sse",
    "SchemaIssue": "schema_rules",
    "SchemaRule": "schema_rules",
    "Status": "results",
    "StopReason": "events",
    "StreamClosedError": "stream",
    "StreamEvent": "events",
    "StreamFailed": "events",
    "StreamRepairError": "errors",
    "TelemetryLog": "telemetry",
    "TelemetryRecord": "telemetry",
    "TextDelta": "events",
    "TooDeepError": "errors",
    "TooLargeError": "errors",
    "ToolBatch": "conversation",
    "ToolCallDelta": "events",
    "ToolCallReady": "events",
    "ToolCallRejected": "events",
    "ToolCallStarted": "events",
    "ToolCallStream": "stream",
    "ToolCallTracker": "tracker",
    "UnansweredCallsError": "conversation",
    "UnrepairableError": "errors",
    "aiter_events": "stream",
    "append_repair_notes": "notes",
    "apply_profiles": "profiles",
    "assistant_message": "conversation",
    "check_history": "history",
    "iter_events": "stream",
    "load_recording": "stream",
    "normalize_stop_reason": "events",
    "prepare_messages": "history",
    "repair": "oneshot",
    "repair_arguments": "schema_rules",
    "run_tool_calls": "abort",
    "select_profiles": "profiles",
    "tool_message": "conversation",
}

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


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*__all__, *(name for name in globals() if name.startswith("__"))})
