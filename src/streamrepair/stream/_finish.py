"""The finish policy: which calls are ready once a stream ended.

Finish policy (DeepSeek-TUI's, and vercel/ai's fix that stopped finalizing calls whose
prefix parses): nothing is ready before the stream has ended. Then, in call order:

* the stream did not end cleanly (mid-stream error, ``content_filter``, a paused turn or
  another incomplete stop reason, consumer gone; or no stop reason at all and no end
  marker either): every call is rejected with that reason;
* otherwise (``stop``, ``tool_calls``, ``length``; or no stop reason but the provider's
  end marker, ``[DONE]`` after usage as OpenRouter sends for Kimi K2: the server said it
  finished, and the stop reason stays reported MISSING) each call is judged on its own:
  a call whose block was never closed, or whose arguments are INCOMPLETE, is CUT_OFF
  whatever the stop reason says (providers report truncation as ``stop`` or
  ``tool_calls``); an UNREPAIRABLE one is rejected with the assembler's error; a
  COMPLETE one is ready (each of several concatenated values as its own call), after the
  schema check when ``tools`` were given. On ``length`` complete calls stay ready:
  degrade, don't kill the turn. A call with no argument text at all is read as ``{}``
  only when the stop reason is a clean one (or its block was closed); after ``length``, or
  an end marker with no stop reason, it is CUT_OFF: its arguments may just not have come.

The policy is applied once per stream, by the tracker's end (``tracker.py``), to each
call in order.
"""

from __future__ import annotations

import difflib
from collections.abc import Container
from typing import Any

from .._plural import plural
from ..errors import UnrepairableError
from ..events import (
    RejectReason,
    StopReason,
    StreamEvent,
    ToolCallReady,
    ToolCallRejected,
)
from ..providers.messages import TurnRecorder
from ..providers.wire import WireError
from ..results import Status
from ..schema.report import RepairNote
from .calls import ArgumentCheck, CallProgress, _Call

__all__ = ["FinishPolicy"]


class FinishPolicy:
    """The verdicts of one stream's calls, given how the stream ended (module docstring).

    ``check``, ``reject_unknown_tools``, ``refuse_ambiguous_escapes`` and ``max_size`` are
    the tracker's options; ``raw_stop`` the provider's stop reason as sent, ``error`` the
    stream's failure, ``ended`` whether the provider's end marker came, ``turn`` the
    turn's recorder (a call answered later is kept in the message), ``taken`` the call ids
    the stream already uses (a split call never reuses one)."""

    __slots__ = (
        "check",
        "ended",
        "error",
        "max_size",
        "raw_stop",
        "refuse_ambiguous_escapes",
        "reject_unknown_tools",
        "taken",
        "turn",
    )

    def __init__(
        self,
        *,
        check: ArgumentCheck | None,
        reject_unknown_tools: bool,
        refuse_ambiguous_escapes: bool,
        max_size: int,
        raw_stop: str | None,
        error: WireError | None,
        ended: bool,
        turn: TurnRecorder,
        taken: Container[str],
    ) -> None:
        self.check = check
        self.reject_unknown_tools = reject_unknown_tools
        self.refuse_ambiguous_escapes = refuse_ambiguous_escapes
        self.max_size = max_size
        self.raw_stop = raw_stop
        self.error = error
        self.ended = ended
        self.turn = turn
        self.taken = taken

    def judge(self, call: _Call, stop: StopReason) -> list[StreamEvent]:
        """The verdict on ``call`` once the stream ended with ``stop`` (the normalized
        stop reason): a rejection, or one ready call per value its arguments held."""
        said = f"provider stop reason `{self.raw_stop}`" if self.raw_stop else "no stop reason"
        if stop is StopReason.ABORTED:
            detail = "Not executed: the consumer stopped reading before the stream ended."
            return [call.reject(RejectReason.ABORTED, detail)]
        if stop is StopReason.ERROR:
            message = self.error.message if self.error is not None else "stream error"
            detail = f"Not executed: the stream failed before it ended ({message})."
            return [call.reject(RejectReason.STREAM_INCOMPLETE, detail)]
        if stop is StopReason.MISSING and not self.ended:
            detail = (
                "Not executed: the stream ended without a stop reason, so it may have been "
                "cut off; no tool call from it was accepted."
            )
            return [call.reject(RejectReason.STREAM_INCOMPLETE, detail)]
        if stop is StopReason.PAUSED:
            detail = (
                f"Not executed: the provider paused the turn ({said}); send the assistant "
                "message back unchanged to let it continue, running no tool call from it."
            )
            return [call.reject(RejectReason.STREAM_INCOMPLETE, detail)]
        if not stop.clean and stop is not StopReason.MISSING:
            detail = (
                "Not executed: the provider ended the response incompletely "
                f"({said}); no tool call from it was accepted."
            )
            return [call.reject(RejectReason.STREAM_INCOMPLETE, detail)]
        if call.name is None:
            return [call.reject(RejectReason.INVALID, "No tool name arrived for this call.")]
        if call.unsupported is not None:
            self.turn.keep_call(call.call_id)  # the answer to it will refer to it
            return [call.reject(RejectReason.UNSUPPORTED, call.unsupported)]
        if call.expects_end and not call.closed:
            closer = (
                f"its closing {call.end_marker} never arrived"
                if call.end_marker
                else "the provider never closed it"
            )
            detail = f"Not executed: the call was cut off ({said}); {closer}."
            return [call.reject(RejectReason.CUT_OFF, detail)]
        if call.whole:
            if not isinstance(call.value, dict):
                detail = (
                    f"Not executed: the {call.kind} call carries no input object "
                    f"(got {type(call.value).__name__})."
                )
                return [call.reject(RejectReason.INVALID, detail)]
            return [self._ready(call, call.call_id, call.value, (), ())]
        if call.overflow or (call.asm is not None and call.asm.status is Status.UNREPAIRABLE):
            return [self._unrepairable(call)]
        if (
            self.reject_unknown_tools
            and self.check is not None
            and call.name not in self.check.names
        ):
            return [self._unknown(call)]
        raw = call.raw()
        if call.asm is None:  # a custom tool: free text, no JSON
            return [self._ready(call, call.call_id, raw, (), ())]
        if not raw.strip():
            # Empty arguments are a call with no arguments only when the provider said the
            # turn ended as it meant to (or closed the call's block). Cut at the output limit,
            # or ended by an end marker with no stop reason at all, the arguments may simply
            # not have arrived: ``[DONE]`` right after the call's name is how a stream cut
            # between events looks (a real DeepSeek stream cut there ran ``glob({})``).
            if stop in (StopReason.LENGTH, StopReason.MISSING) and not call.closed:
                detail = f"Not executed: the call was cut off before any argument ({said})."
                return [call.reject(RejectReason.CUT_OFF, detail)]
            return [self._ready(call, call.call_id, {}, (), ("empty arguments read as {}",))]
        if call.asm.status is Status.INCOMPLETE:
            detail = (
                f"Not executed: the arguments were cut off ({said}); "
                f"{plural(call.asm.chars_fed, 'character')} arrived and the JSON is unfinished."
            )
            return [call.reject(RejectReason.CUT_OFF, detail)]
        try:
            values = call.asm.finish_values()
        except UnrepairableError:
            return [self._unrepairable(call)]
        if self.refuse_ambiguous_escapes and call.asm.unsettled_escapes:
            n = call.asm.unsettled_escapes
            detail = (
                f"Not executed: {plural(n, 'string')} of the arguments "
                f"{'holds' if n == 1 else 'hold'} both a raw "
                "backslash (an invalid escape such as \\U) and \\n, \\t, \\r, \\b or \\f, "
                "which may have been raw backslashes too (C:\\Users\\new): what the "
                "strings mean cannot be told."
            )
            return [call.reject(RejectReason.AMBIGUOUS_ESCAPES, detail)]
        out: list[StreamEvent] = []
        split = len(values) > 1
        for k, repaired in enumerate(values):
            call_id = call.call_id if k == 0 else self._split_id(call.call_id, k + 1)
            notes: tuple[str, ...] = ()
            if split:
                notes = (f"value {k + 1} of {len(values)} concatenated in one call's arguments",)
            if repaired.structure_synthesized:  # COMPLETE excludes this; guard anyway
                detail = f"Not executed: the arguments were cut off ({said})."
                out.append(call.reject(RejectReason.CUT_OFF, detail))
            elif not isinstance(repaired.value, dict):
                kind = type(repaired.value).__name__
                detail = f"Not executed: the arguments must be a JSON object, not {kind}."
                out.append(call.reject(RejectReason.INVALID, detail))
            else:
                out.append(self._ready(call, call_id, repaired.value, repaired.repairs, notes))
            if out and isinstance(out[-1], ToolCallRejected) and split:
                out[-1] = _with_id(out[-1], call_id)
        return out

    def _split_id(self, call_id: str, number: int) -> str:
        """The id of the ``number``-th value split from one call's arguments: ``<id>v2``.

        Never ``<id>_2``: Claude Code reads ids ending in ``_<digits>`` as entries of its
        own batch tool, and the second call's result then reaches the model as "[Tool
        result missing due to internal error]" (measured with 2.1.332). Letters and
        digits only are added, so the id stays within every API's id pattern; an id the
        stream already uses is never reused."""
        split = f"{call_id}v{number}"
        while split in self.taken:
            split += "v"
        return split

    def _unrepairable(self, call: _Call) -> ToolCallRejected:
        error = call.asm.error if call.asm is not None else None
        if call.overflow:
            detail = f"Not executed: the arguments exceed max_size={self.max_size} characters."
        elif error is not None:
            detail = f"Not executed: the arguments cannot be read without guessing: {error}."
        else:
            detail = "Not executed: the arguments cannot be repaired."
        return call.reject(RejectReason.UNREPAIRABLE, detail)

    def _unknown(self, call: _Call) -> ToolCallRejected:
        assert self.check is not None
        assert call.name is not None
        names = sorted(self.check.names)
        close = tuple(difflib.get_close_matches(call.name, names, n=3, cutoff=0.7))
        detail = f"Not executed: there is no tool named {call.name!r}."
        if close:
            detail += " Did you mean " + " or ".join(repr(n) for n in close) + "?"
        elif names:
            detail += " Available tools: " + ", ".join(names[:20]) + "."
        return call.reject(RejectReason.UNKNOWN_TOOL, detail, close)

    def _ready(
        self,
        call: _Call,
        call_id: str,
        value: Any,
        repairs: tuple[Any, ...],
        notes: tuple[str, ...],
    ) -> StreamEvent:
        all_notes = (*call.notes, *notes)
        if call.repairs:
            repairs = tuple(sorted((*call.repairs, *repairs), key=lambda r: r.offset))
        if call.aliases:
            all_notes = (
                f"{plural(call.aliases, 'delta')} with a new id continued this call "
                "(their arguments were still incomplete)",
                *all_notes,
            )
        schema_repairs: tuple[RepairNote, ...] = ()
        if (
            self.check is not None
            and call.kind == "function"
            and (self.reject_unknown_tools or call.name in self.check.names)
        ):
            assert call.name is not None
            checked = self.check.check(call.name, value)
            value, schema_repairs = checked.value, checked.notes
            if not checked.ok:
                call.phase = CallProgress.REJECTED
                return ToolCallRejected(
                    call_id=call_id,
                    index=call.index,
                    name=call.name,
                    reason=RejectReason.INVALID,
                    detail=checked.feedback,
                    raw=call.raw(),
                    origin_id=call.call_id,
                )
        call.phase = CallProgress.READY
        assert call.name is not None
        return ToolCallReady(
            call_id=call_id,
            index=call.index,
            name=call.name,
            arguments=value,
            repairs=repairs,
            schema_repairs=schema_repairs,
            notes=all_notes,
            raw=call.raw(),
            origin_id=call.call_id,
            kind=call.kind,
        )


def _with_id(event: ToolCallRejected, call_id: str) -> ToolCallRejected:
    return ToolCallRejected(
        call_id=call_id,
        index=event.index,
        name=event.name,
        reason=event.reason,
        detail=event.detail,
        raw=event.raw,
        suggestions=event.suggestions,
        kind=event.kind,
        origin_id=event.call_id,
    )
