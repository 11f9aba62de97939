"""streamrepair: turn the tool calls an LLM streams out into arguments a program can trust.

The core is :class:`ArgumentAssembler`, a push parser that takes a tool call's argument
text one delta at a time, repairs what is unambiguous as it goes, says at any moment
whether the text is complete, cut off or unrepairable, and never hands out a value whose
structure had to be invented as if the model had finished it. :func:`repair` is the
one-shot form.
"""

# The names below are imported on first use (PEP 562), so that a short-lived process such
# as a harness hook pays only for the layers it touches, not for every layer. The layers
# and what each exports in full: docs/design.md and docs/api.md.

from __future__ import annotations

import typing as _typing

from . import _build
from ._lazy import attach
from ._version import __version__

# The compiled build's modules or their sources: decided here, before any of them is
# imported (docs/build.md).
_build.select(__name__, __path__[0])

if _typing.TYPE_CHECKING:
    from ._build import BuildInfo, build_info
    from .errors import (
        AbortFenceError,
        AssemblerFinishedError,
        ChangeOrderError,
        ClosedError,
        ConcatenatedValuesError,
        EventStreamError,
        HistoryError,
        InstallError,
        SSEDecodeError,
        SSEError,
        SSELimitError,
        StreamClosedError,
        StreamRepairError,
        TooDeepError,
        TooLargeError,
        UnansweredCallsError,
        UnrepairableError,
        UnsupportedChunkError,
        UpstreamBroken,
        UpstreamError,
        UpstreamTimeout,
        UpstreamUnreachable,
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
    from .providers.normalizer import (
        ChunkNormalizer,
        Provider,
    )
    from .providers.textcalls import (
        TextCallExtractor,
        TextCallFormat,
    )
    from .providers.wire import (
        WireDelta,
    )
    from .results import (
        Repair,
        Repaired,
        RepairKind,
        Status,
    )
    from .schema.check import (
        ToolSchemaCheck,
    )
    from .schema.notes import (
        append_repair_notes,
    )
    from .schema.profiles import (
        Profile,
        ProfileRepair,
        apply_profiles,
        select_profiles,
    )
    from .schema.report import (
        ArgumentRepair,
        RepairNote,
        SchemaIssue,
        SchemaRule,
    )
    from .schema.rules import (
        repair_arguments,
    )
    from .schema.tools import (
        tool_schemas,
    )
    from .stream.drivers import (
        aiter_events,
        iter_events,
    )
    from .stream.eventstream import (
        EventStreamDecoder,
    )
    from .stream.pipeline import (
        ToolCallStream,
    )
    from .stream.recordings import (
        RecordingReader,
        load_recording,
    )
    from .stream.sse import (
        SSEDecoder,
        SSEEvent,
    )
    from .stream.tracker import (
        CallPhase,
        CallProgress,
        ToolCallTracker,
    )
    from .syntax.assembler import (
        DEFAULT_MAX_DEPTH,
        DEFAULT_MAX_SIZE,
        MAX_INTEGER_DIGITS,
        MAX_SCALAR_CHARS,
        MAX_TOKEN_CHARS,
        ArgumentAssembler,
    )
    from .syntax.changes import (
        ValueBuilder,
    )
    from .syntax.ijson_adapter import (
        IjsonAdapter,
    )
    from .syntax.oneshot import (
        REPAIR_MAX_SIZE,
        repair,
    )
    from .telemetry.log import (
        TelemetryLog,
    )
    from .telemetry.otel import (
        OTelMetrics,
    )
    from .telemetry.record import (
        TelemetryRecord,
    )
    from .turn.abort import (
        DEFAULT_ABORT_TIMEOUT,
        AbortCause,
        AbortFence,
        AbortReport,
        FencePhase,
        FencePhaseState,
        HandlerOutcome,
        HandlerStatus,
        Phase,
        PhaseState,
        run_tool_calls,
    )
    from .turn.conversation import (
        Conversation,
        ToolBatch,
    )
    from .turn.history import (
        ChangeKind,
        HistoryChange,
        HistoryProblem,
        HistoryRepair,
        ProblemKind,
        ReasoningPolicy,
        check_history,
        prepare_messages,
        repair_history,
    )
    from .turn.replies import (
        CallStatus,
        RunState,
        assistant_message,
        function_call_output,
        response_items,
        tool_message,
        tool_result_block,
    )

_EXPORTS: dict[str, str] = {
    "BuildInfo": "_build",
    "build_info": "_build",
    "AbortCause": "turn.abort",
    "AbortFence": "turn.abort",
    "AbortFenceError": "errors",
    "AbortReport": "turn.abort",
    "ArgumentAssembler": "syntax.assembler",
    "ArgumentRepair": "schema.report",
    "AssemblerFinishedError": "errors",
    "CallPhase": "stream.tracker",
    "CallProgress": "stream.tracker",
    "CallStatus": "turn.replies",
    "ChangeKind": "turn.history",
    "ChunkNormalizer": "providers.normalizer",
    "ClosedError": "errors",
    "ConcatenatedValuesError": "errors",
    "Conversation": "turn.conversation",
    "DEFAULT_ABORT_TIMEOUT": "turn.abort",
    "DEFAULT_MAX_DEPTH": "syntax.assembler",
    "DEFAULT_MAX_SIZE": "syntax.assembler",
    "Done": "events",
    "FencePhase": "turn.abort",
    "FencePhaseState": "turn.abort",
    "HandlerOutcome": "turn.abort",
    "HandlerStatus": "turn.abort",
    "HistoryError": "errors",
    "HistoryChange": "turn.history",
    "HistoryProblem": "turn.history",
    "HistoryRepair": "turn.history",
    "InstallError": "errors",
    "MAX_INTEGER_DIGITS": "syntax.assembler",
    "MAX_SCALAR_CHARS": "syntax.assembler",
    "MAX_TOKEN_CHARS": "syntax.assembler",
    "OTelMetrics": "telemetry.otel",
    "Phase": "turn.abort",
    "PhaseState": "turn.abort",
    "ProblemKind": "turn.history",
    "Profile": "schema.profiles",
    "ProfileRepair": "schema.profiles",
    "Provider": "providers.normalizer",
    "REPAIR_MAX_SIZE": "syntax.oneshot",
    "TextCallExtractor": "providers.textcalls",
    "TextCallFormat": "providers.textcalls",
    "RecordingReader": "stream.recordings",
    "IjsonAdapter": "syntax.ijson_adapter",
    "ValueBuilder": "syntax.changes",
    "ReasoningDelta": "events",
    "ReasoningPolicy": "turn.history",
    "RefusalDelta": "events",
    "RejectReason": "events",
    "Repair": "results",
    "RepairKind": "results",
    "RepairNote": "schema.report",
    "Repaired": "results",
    "RunState": "turn.replies",
    "EventStreamDecoder": "stream.eventstream",
    "EventStreamError": "errors",
    "ChangeOrderError": "errors",
    "SSEDecodeError": "errors",
    "SSEDecoder": "stream.sse",
    "SSEError": "errors",
    "SSEEvent": "stream.sse",
    "SSELimitError": "errors",
    "SchemaIssue": "schema.report",
    "SchemaRule": "schema.report",
    "Status": "results",
    "StopReason": "events",
    "StreamClosedError": "errors",
    "StreamEvent": "events",
    "StreamFailed": "events",
    "StreamRepairError": "errors",
    "TelemetryLog": "telemetry.log",
    "TelemetryRecord": "telemetry.record",
    "TextDelta": "events",
    "TooDeepError": "errors",
    "TooLargeError": "errors",
    "ToolBatch": "turn.conversation",
    "ToolCallDelta": "events",
    "ToolCallReady": "events",
    "ToolCallRejected": "events",
    "ToolCallStarted": "events",
    "ToolCallStream": "stream.pipeline",
    "ToolCallTracker": "stream.tracker",
    "ToolSchemaCheck": "schema.check",
    "UnansweredCallsError": "errors",
    "UnrepairableError": "errors",
    "UnsupportedChunkError": "errors",
    "UpstreamBroken": "errors",
    "UpstreamError": "errors",
    "UpstreamTimeout": "errors",
    "UpstreamUnreachable": "errors",
    "WireDelta": "providers.wire",
    "aiter_events": "stream.drivers",
    "append_repair_notes": "schema.notes",
    "apply_profiles": "schema.profiles",
    "assistant_message": "turn.replies",
    "check_history": "turn.history",
    "iter_events": "stream.drivers",
    "load_recording": "stream.recordings",
    "normalize_stop_reason": "events",
    "function_call_output": "turn.replies",
    "prepare_messages": "turn.history",
    "repair_history": "turn.history",
    "response_items": "turn.replies",
    "repair": "syntax.oneshot",
    "repair_arguments": "schema.rules",
    "run_tool_calls": "turn.abort",
    "select_profiles": "schema.profiles",
    "tool_message": "turn.replies",
    "tool_result_block": "turn.replies",
    "tool_schemas": "schema.tools",
}

__all__ = [
    "DEFAULT_ABORT_TIMEOUT",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_SIZE",
    "MAX_INTEGER_DIGITS",
    "MAX_SCALAR_CHARS",
    "MAX_TOKEN_CHARS",
    "REPAIR_MAX_SIZE",
    "AbortCause",
    "AbortFence",
    "AbortFenceError",
    "AbortReport",
    "ArgumentAssembler",
    "ArgumentRepair",
    "AssemblerFinishedError",
    "BuildInfo",
    "CallPhase",
    "CallProgress",
    "CallStatus",
    "ChangeKind",
    "ChangeOrderError",
    "ChunkNormalizer",
    "ClosedError",
    "ConcatenatedValuesError",
    "Conversation",
    "Done",
    "EventStreamDecoder",
    "EventStreamError",
    "FencePhase",
    "FencePhaseState",
    "HandlerOutcome",
    "HandlerStatus",
    "HistoryChange",
    "HistoryError",
    "HistoryProblem",
    "HistoryRepair",
    "IjsonAdapter",
    "InstallError",
    "OTelMetrics",
    "Phase",
    "PhaseState",
    "ProblemKind",
    "Profile",
    "ProfileRepair",
    "Provider",
    "ReasoningDelta",
    "ReasoningPolicy",
    "RecordingReader",
    "RefusalDelta",
    "RejectReason",
    "Repair",
    "RepairKind",
    "RepairNote",
    "Repaired",
    "RunState",
    "SSEDecodeError",
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
    "TextCallExtractor",
    "TextCallFormat",
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
    "ToolSchemaCheck",
    "UnansweredCallsError",
    "UnrepairableError",
    "UnsupportedChunkError",
    "UpstreamBroken",
    "UpstreamError",
    "UpstreamTimeout",
    "UpstreamUnreachable",
    "ValueBuilder",
    "WireDelta",
    "__version__",
    "aiter_events",
    "append_repair_notes",
    "apply_profiles",
    "assistant_message",
    "build_info",
    "check_history",
    "function_call_output",
    "iter_events",
    "load_recording",
    "normalize_stop_reason",
    "prepare_messages",
    "repair",
    "repair_arguments",
    "repair_history",
    "response_items",
    "run_tool_calls",
    "select_profiles",
    "tool_message",
    "tool_result_block",
    "tool_schemas",
]

__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__)
