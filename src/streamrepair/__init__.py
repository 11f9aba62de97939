"""streamrepair: turn the tool calls an LLM streams out into arguments a program can trust.

The core is :class:`ArgumentAssembler`, a push parser that takes a tool call's argument
text one delta at a time, repairs what is unambiguous as it goes, says at any moment
whether the text is complete, cut off or unrepairable, and never hands out a value whose
structure had to be invented as if the model had finished it. :func:`repair` is the
one-shot form.
"""

# What the package exports is the TYPE_CHECKING block below, written once: `attach` builds
# `__all__` and the lazy map from it (see _lazy.py), and each name is imported on first use
# (PEP 562), so that a short-lived process such as a harness hook pays only for the layers
# it touches. The layers and what each exports in full: docs/design.md and docs/api.md.

from __future__ import annotations

import typing as _typing

from . import _build
from ._lazy import attach

# The compiled build's modules or their sources: decided here, before any of them is
# imported (docs/build.md).
_build.select(__name__, __path__[0])

if _typing.TYPE_CHECKING:
    from ._build import BuildInfo as BuildInfo
    from ._build import build_info as build_info
    from ._version import __version__ as __version__
    from .errors import AbortFenceError as AbortFenceError
    from .errors import ChangeOrderError as ChangeOrderError
    from .errors import ClosedError as ClosedError
    from .errors import ConcatenatedValuesError as ConcatenatedValuesError
    from .errors import EventStreamError as EventStreamError
    from .errors import HistoryError as HistoryError
    from .errors import InstallError as InstallError
    from .errors import ServiceLimitError as ServiceLimitError
    from .errors import SSEDecodeError as SSEDecodeError
    from .errors import SSEError as SSEError
    from .errors import SSELimitError as SSELimitError
    from .errors import StreamRepairError as StreamRepairError
    from .errors import TooDeepError as TooDeepError
    from .errors import TooLargeError as TooLargeError
    from .errors import UnansweredCallsError as UnansweredCallsError
    from .errors import UnrepairableError as UnrepairableError
    from .errors import UnsupportedChunkError as UnsupportedChunkError
    from .errors import UpstreamBroken as UpstreamBroken
    from .errors import UpstreamError as UpstreamError
    from .errors import UpstreamTimeout as UpstreamTimeout
    from .errors import UpstreamUnreachable as UpstreamUnreachable
    from .events import Done as Done
    from .events import ReasoningDelta as ReasoningDelta
    from .events import RefusalDelta as RefusalDelta
    from .events import RejectReason as RejectReason
    from .events import StopReason as StopReason
    from .events import StreamEvent as StreamEvent
    from .events import StreamFailed as StreamFailed
    from .events import TextDelta as TextDelta
    from .events import ToolCallDelta as ToolCallDelta
    from .events import ToolCallReady as ToolCallReady
    from .events import ToolCallRejected as ToolCallRejected
    from .events import ToolCallStarted as ToolCallStarted
    from .events import normalize_stop_reason as normalize_stop_reason
    from .providers.normalizer import ChunkNormalizer as ChunkNormalizer
    from .providers.normalizer import Provider as Provider
    from .providers.textcalls import TextCallExtractor as TextCallExtractor
    from .providers.textcalls import TextCallFormat as TextCallFormat
    from .providers.wire import WireDelta as WireDelta
    from .results import Repair as Repair
    from .results import Repaired as Repaired
    from .results import RepairKind as RepairKind
    from .results import Status as Status
    from .schema.check import ToolSchemaCheck as ToolSchemaCheck
    from .schema.notes import append_repair_notes as append_repair_notes
    from .schema.profiles import Profile as Profile
    from .schema.profiles import ProfileRepair as ProfileRepair
    from .schema.profiles import apply_profiles as apply_profiles
    from .schema.profiles import select_profiles as select_profiles
    from .schema.report import ArgumentRepair as ArgumentRepair
    from .schema.report import RepairNote as RepairNote
    from .schema.report import SchemaIssue as SchemaIssue
    from .schema.report import SchemaRule as SchemaRule
    from .schema.rules import repair_arguments as repair_arguments
    from .schema.tools import tool_schemas as tool_schemas
    from .stream.calls import CallProgress as CallProgress
    from .stream.drivers import aiter_events as aiter_events
    from .stream.drivers import iter_events as iter_events
    from .stream.eventstream import EventStreamDecoder as EventStreamDecoder
    from .stream.pipeline import ToolCallStream as ToolCallStream
    from .stream.recordings import RecordingReader as RecordingReader
    from .stream.recordings import load_recording as load_recording
    from .stream.sse import SSEDecoder as SSEDecoder
    from .stream.sse import SSEEvent as SSEEvent
    from .stream.tracker import ToolCallTracker as ToolCallTracker
    from .syntax.assembler import DEFAULT_MAX_DEPTH as DEFAULT_MAX_DEPTH
    from .syntax.assembler import DEFAULT_MAX_SIZE as DEFAULT_MAX_SIZE
    from .syntax.assembler import MAX_INTEGER_DIGITS as MAX_INTEGER_DIGITS
    from .syntax.assembler import MAX_SCALAR_CHARS as MAX_SCALAR_CHARS
    from .syntax.assembler import ArgumentAssembler as ArgumentAssembler
    from .syntax.changes import ValueBuilder as ValueBuilder
    from .syntax.ijson_adapter import IjsonAdapter as IjsonAdapter
    from .syntax.oneshot import REPAIR_MAX_SIZE as REPAIR_MAX_SIZE
    from .syntax.oneshot import repair as repair
    from .telemetry.log import TelemetryLog as TelemetryLog
    from .telemetry.otel import OTelMetrics as OTelMetrics
    from .telemetry.record import TelemetryRecord as TelemetryRecord
    from .turn.abort import DEFAULT_ABORT_TIMEOUT as DEFAULT_ABORT_TIMEOUT
    from .turn.abort import AbortCause as AbortCause
    from .turn.abort import AbortFence as AbortFence
    from .turn.abort import AbortReport as AbortReport
    from .turn.abort import FencePhase as FencePhase
    from .turn.abort import FencePhaseState as FencePhaseState
    from .turn.abort import HandlerOutcome as HandlerOutcome
    from .turn.abort import HandlerStatus as HandlerStatus
    from .turn.abort import run_tool_calls as run_tool_calls
    from .turn.conversation import Conversation as Conversation
    from .turn.conversation import ToolBatch as ToolBatch
    from .turn.history import ChangeKind as ChangeKind
    from .turn.history import HistoryChange as HistoryChange
    from .turn.history import HistoryProblem as HistoryProblem
    from .turn.history import HistoryRepair as HistoryRepair
    from .turn.history import ProblemKind as ProblemKind
    from .turn.history import ReasoningPolicy as ReasoningPolicy
    from .turn.history import check_history as check_history
    from .turn.history import prepare_messages as prepare_messages
    from .turn.history import repair_history as repair_history
    from .turn.replies import RunState as RunState
    from .turn.replies import assistant_message as assistant_message
    from .turn.replies import function_call_output as function_call_output
    from .turn.replies import rejected_arguments as rejected_arguments
    from .turn.replies import response_items as response_items
    from .turn.replies import tool_message as tool_message
    from .turn.replies import tool_result_block as tool_result_block

__all__, __getattr__, __dir__ = attach(__name__, __file__)
