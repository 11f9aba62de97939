"""Tool-call tracking: wire deltas in, events out.

Theory of operation
-------------------
:class:`ToolCallTracker` is a push core with no I/O. ``feed(delta)`` takes one
:class:`~streamrepair.providers.WireDelta` and returns the events it causes; ``finish()``
says the input ended; ``abort()`` says the consumer stopped reading. All decisions about
which call a delta belongs to, and whether a call may be run, are made here.

Identity (the consensus of vercel/ai's ``streaming-tool-call-tracker`` plus the quirks in
section 6 of the wire-format notes). A tool delta belongs to:

1. the call with its id, when the id is non-empty and known (vLLM and LiteLLM repeat the
   id on every chunk);
2. with a new id and no name: the current call (at its index, else the latest) while
   that call's arguments are still INCOMPLETE (GLM-4's server sends a new id on every
   delta); otherwise a new call;
3. with a new id and a name: a new call (Ollama and Gemini send parallel calls all at
   index 0, each with its own id);
4. without an id: the latest call at its index, else, with no index either, the latest
   call (Gemini and Mistral omit the index); a name that differs from that call's name
   starts a new call.

Argument text is buffered until a call's name is known, then fed to one
:class:`~streamrepair.ArgumentAssembler` per call; each piece is reported with the
changes it made to the value and a lazy snapshot of the value (computed only if read).
Memory is bounded: each call's text by ``max_size`` (kept as a few large pieces, not one
object per delta), the number of calls by ``MAX_TOOL_CALLS``, the content, reasoning and
server-block input text by ``max_text_chars``, and the number of blocks, items and
citations kept for the message by ``MAX_BLOCKS`` (each bounded by the size of the chunk
that brought it).

_Call protocol: every call that ends ready or rejected is announced by a
:class:`~streamrepair.ToolCallStarted` first. A call is announced when its name is known;
a call split from concatenated values (``<id>v2``...) just before its verdict, with
``origin_id`` naming the streamed call; a call whose name never came just before it is
rejected (with ``name=""``).

The finish policy (which calls are ready once the stream ended) is ``_finish.py``'s
:class:`~._finish.FinishPolicy`.

Calls whose input is an object, not text (the Responses items the client runs:
``apply_patch``, ``shell``...), get that object whole when their item is done; they are
ready when closed with an object, by the same stream-level policy. A call of a kind that
is not handed out (``mcp_approval_request``) is rejected as UNSUPPORTED with the
normalizer's explanation. Blocks the provider ran itself never become calls: they are
recorded for the message only.

A stop reason of ``tool_calls`` with no call at all is reported on :class:`Done`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from .._plural import plural
from ..errors import ClosedError
from ..events import (
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
from ..providers.messages import TurnRecorder
from ..providers.normalizer import Provider
from ..providers.wire import (
    WireBlock,
    WireBlockInput,
    WireBlockUpdate,
    WireCitation,
    WireDelta,
    WireEnd,
    WireError,
    WireItem,
    WireMessageStart,
    WireReasoning,
    WireRedactedThinking,
    WireRefusal,
    WireResponse,
    WireSignature,
    WireStop,
    WireText,
    WireToolArguments,
    WireToolCall,
    WireToolEnd,
    WireToolValue,
    WireUsage,
)
from ..results import Status
from ..schema.check import ToolSchemaCheck
from ..syntax.assembler import DEFAULT_MAX_DEPTH, DEFAULT_MAX_SIZE, ArgumentAssembler
from ..syntax.changes import Change
from ._finish import FinishPolicy
from .calls import ArgumentCheck, CallProgress, _Call

__all__ = [
    "DEFAULT_MAX_TEXT_CHARS",
    "MAX_BLOCKS",
    "MAX_TOOL_CALLS",
    "ToolCallTracker",
]

#: Most tool calls one stream may open; past it the stream fails with a StreamFailed.
MAX_TOOL_CALLS = 256
#: Most content + reasoning characters kept for the assistant message (64 Mi chars).
DEFAULT_MAX_TEXT_CHARS = 64 * 2**20
#: Most provider blocks, finished items and citations one stream may keep for the message;
#: past it the stream fails with a StreamFailed (``too_many``).
MAX_BLOCKS = 4096


class ToolCallTracker:
    """Wire deltas -> events, with the finish policy (see the module docstring).

    ``provider`` decides the shape of :attr:`Done.messages`. ``check`` is the schema
    check run on each finished call (unknown tool names rejected, ready arguments
    schema-repaired); ``tools`` (an OpenAI, Responses or Anthropic tool list) is the
    short way to pass the :class:`~streamrepair.schema.check.ToolSchemaCheck` of that
    list. With ``previews`` (the default) each :class:`~streamrepair.ToolCallDelta`
    carries ``changes`` and a ``preview`` computed when read; ``previews=False`` leaves
    them empty (saves recording the changes). ``reject_unknown_tools=False`` lets a call
    to a name the check does not know through: it gets the syntax repairs and the finish
    policy like any other (cut-off and unrepairable calls are still rejected) but no
    schema rules, and is ready; for a harness that runs tools it did not list (Claude
    Code's deferred MCP tools) and decides itself what to do with a name it does not know.
    ``refuse_ambiguous_escapes=True`` rejects (``ambiguous_escapes``) a call in which some
    string kept JSON's reading of ``\\n``-like escapes although its raw backslashes make
    that reading a guess (:attr:`~streamrepair.ArgumentAssembler.unsettled_escapes`); by
    default such a call is ready with an ``ambiguous_escapes`` repair, for the harness to
    decide. A path read literally by the path rule is settled and never refused.

    The tracker decides call identity and the finish policy; the turn's text is kept by
    a :class:`~streamrepair.providers.messages.TurnRecorder` and the schema check is
    whatever ``check`` is.
    """

    def __init__(
        self,
        *,
        provider: Provider | None = None,
        tools: Iterable[Mapping[str, Any]] | None = None,
        check: ArgumentCheck | None = None,
        max_size: int = DEFAULT_MAX_SIZE,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
        previews: bool = True,
        reject_unknown_tools: bool = True,
        refuse_ambiguous_escapes: bool = False,
    ) -> None:
        self.provider = provider
        if check is None and tools is not None:
            check = ToolSchemaCheck(tools)
        self.check = check
        self.max_size = max_size
        self.max_depth = max_depth
        self.max_text_chars = max_text_chars
        self.previews = previews
        self.reject_unknown_tools = reject_unknown_tools
        self.refuse_ambiguous_escapes = refuse_ambiguous_escapes
        self._calls: list[_Call] = []
        self._by_id: dict[str, _Call] = {}
        self._by_index: dict[int, _Call] = {}
        self._latest: _Call | None = None
        self._turn = TurnRecorder()
        self._text_chars = 0
        self._blocks = 0  # blocks, items and citations kept (bounded by MAX_BLOCKS)
        self._message_id: str | None = None
        self._stop: str | None = None
        self._usage: dict[str, Any] | None = None
        self._response: dict[str, Any] | None = None
        self._ended = False  # the provider's end marker arrived
        self._error: WireError | None = None
        self._generated = 0
        self.done: Done | None = None
        self.ignored_after_end = 0
        self._closed = False
        self._verdicts: list[ToolCallReady | ToolCallRejected] = []
        self._announced: set[str] = set()  # call ids a ToolCallStarted was emitted for

    # -- public --------------------------------------------------------------------------

    @property
    def calls(self) -> tuple[tuple[str, str | None, CallProgress], ...]:
        """``(call_id, name, phase)`` of every call so far, in the order they began."""
        return tuple((c.call_id, c.name, c.phase) for c in self._calls)

    @property
    def verdicts(self) -> tuple[ToolCallReady | ToolCallRejected, ...]:
        """Every ready and rejected event emitted so far, in order: also those a consumer
        never saw because it stopped reading (the events :meth:`abort` returned)."""
        return tuple(self._verdicts)

    def feed(self, delta: WireDelta) -> list[StreamEvent]:
        """Take one wire delta; return the events it causes. Once the data ended the
        stream (``Done`` emitted on an end marker or an error) later deltas are ignored
        and counted in :attr:`ignored_after_end`; after :meth:`finish` or :meth:`abort`
        feeding raises :class:`~streamrepair.ClosedError`."""
        if self._closed:
            raise ClosedError("ToolCallTracker.feed() after finish() or abort()")
        if self.done is not None:
            self.ignored_after_end += 1
            return []
        out: list[StreamEvent] = []
        if isinstance(delta, WireToolCall):
            self._tool(delta, out)
        elif isinstance(delta, WireText):
            if self._keep_text(delta.text, out):
                self._turn.text("text", delta.block, delta.text)
                out.append(TextDelta(text=delta.text))
        elif isinstance(delta, WireReasoning):
            self._turn.reasoning_seen = True
            if self._keep_text(delta.text, out):
                self._turn.text("thinking", delta.block, delta.text)
                if delta.text:
                    out.append(ReasoningDelta(text=delta.text))
        elif isinstance(delta, WireSignature):
            self._turn.signature(delta.block, delta.signature, delta.kind)
        elif isinstance(delta, WireRedactedThinking):
            self._turn.redacted(delta.block, delta.data)
        elif isinstance(delta, WireRefusal):
            if self._keep_text(delta.text, out):
                self._turn.text("refusal", None, delta.text)
                out.append(RefusalDelta(text=delta.text))
        elif isinstance(delta, WireToolArguments):
            self._final_arguments(delta, out)
        elif isinstance(delta, WireToolEnd):
            call = self._find(delta.id, delta.index)
            if call is not None:
                call.closed = True
        elif isinstance(delta, WireStop):
            self._stop = delta.reason
        elif isinstance(delta, WireUsage):
            if delta.merge and self._usage is not None:
                self._usage.update(delta.usage)
            else:
                self._usage = dict(delta.usage)
        elif isinstance(delta, WireItem):
            if self._keep_block(out):
                self._turn.item(delta.block, delta.item)
        elif isinstance(delta, WireToolValue):
            call = self._find(delta.id, delta.index)
            if call is not None and call.whole:
                call.value = copy.deepcopy(delta.value)  # never share the caller's chunk
        elif isinstance(delta, WireBlock):
            if self._keep_block(out):
                self._turn.block(delta.block, delta.content)
        elif isinstance(delta, WireBlockInput):
            if self._keep_text(delta.text, out):
                self._turn.block_input(delta.block, delta.text, delta.path)
        elif isinstance(delta, WireBlockUpdate):
            self._turn.block_update(delta.block, delta.fields, extend=delta.extend, path=delta.path)
        elif isinstance(delta, WireCitation):
            if self._keep_block(out):
                self._turn.citation(delta.block, delta.citation)
        elif isinstance(delta, WireResponse):
            if self._response is None:
                self._response = {}
            self._response.update(delta.fields)
        elif isinstance(delta, WireMessageStart):
            self._message_start(delta, out)
        elif isinstance(delta, WireError):
            self._fail(delta, out)
        elif isinstance(delta, WireEnd):
            self._ended = True
            self._finalize(out)
        return self._settled(out)

    def take_text(self, reasoning: str | None, text: str | None, block: int | None = None) -> bool:
        """Keep ``reasoning`` then ``text`` (either may be None) of ``block`` for the turn, as
        :meth:`feed` keeps a :class:`~streamrepair.providers.WireReasoning` and a
        :class:`~streamrepair.providers.WireText`, without making their events (for a
        caller that reads none: a relay passing the chunk through). False, with nothing
        kept, once the stream is over or when the text would pass ``max_text_chars``:
        :meth:`feed` then says what happens."""
        if self._closed or self.done is not None:
            return False
        chars = self._text_chars
        if reasoning is not None:
            chars += len(reasoning)
        if text is not None:
            chars += len(text)
        if chars > self.max_text_chars:
            return False
        self._text_chars = chars
        turn = self._turn
        if reasoning is not None:
            turn.reasoning_seen = True
            turn.text("thinking", block, reasoning)
        if text:
            turn.text("text", block, text)
        return True

    def take_arguments(self, index: int, text: str, expects_end: bool = False) -> bool:
        """Take ``text``, the next piece of the arguments of the call streaming at
        ``index``, as :meth:`feed` takes a :class:`~streamrepair.providers.WireToolCall`
        with only that index, text and ``expects_end``, without making its
        :class:`~streamrepair.ToolCallDelta` (for a caller that reads none). Only with
        ``previews`` off (a delta's changes are its own). False, with nothing taken, when
        the piece would do more than that: no call of that index streams (a new call, text
        before a name, a rejected call), a call whose input is an object, an empty
        piece, the stream over: :meth:`feed` then says what happens."""
        if self._closed or self.done is not None or self.previews or not text:
            return False
        call = self._by_index.get(index)
        if call is None or call.phase is not CallProgress.STREAMING or call.whole:
            return False
        if expects_end and not call.expects_end:
            return False
        self._latest = call
        self._take_piece(call, text)
        return True

    def finish(self) -> list[StreamEvent]:
        """The input has ended: judge every call and emit :class:`Done` (unless the data
        already ended the stream). Raises :class:`~streamrepair.ClosedError` if called
        after :meth:`finish` or :meth:`abort`."""
        if self._closed:
            raise ClosedError("ToolCallTracker.finish() after finish() or abort()")
        self._closed = True
        out: list[StreamEvent] = []
        if self.done is None:
            self._finalize(out)
        return self._settled(out)

    def abort(self) -> list[StreamEvent]:
        """The consumer stopped reading: every call not yet judged is rejected as
        ABORTED and :class:`Done` says ``StopReason.ABORTED``. No-op after the end; safe
        to call any number of times."""
        self._closed = True
        out: list[StreamEvent] = []
        if self.done is None:
            self._finalize(out, aborted=True)
        return self._settled(out)

    def fail(self, error: WireError) -> list[StreamEvent]:
        """Report a stream error and end the stream: a :class:`StreamFailed`, every call
        not yet judged rejected, then :class:`Done`. No-op after the end."""
        out: list[StreamEvent] = []
        self._fail(error, out)
        return self._settled(out)

    def _settled(self, out: list[StreamEvent]) -> list[StreamEvent]:
        """Remember the verdicts among ``out`` (see :attr:`verdicts`), announce the calls
        among them that were never announced (split calls, calls without a name), and
        return it."""
        verdicts = [e for e in out if isinstance(e, ToolCallReady | ToolCallRejected)]
        if not verdicts:
            return out
        self._verdicts.extend(verdicts)
        announced = self._announced
        if all(e.call_id in announced for e in verdicts):
            return out
        settled: list[StreamEvent] = []
        for event in out:
            if (
                isinstance(event, ToolCallReady | ToolCallRejected)
                and event.call_id not in announced
            ):
                announced.add(event.call_id)
                settled.append(
                    ToolCallStarted(
                        call_id=event.call_id,
                        index=event.index,
                        name=event.name,
                        origin_id=event.origin_id,
                    )
                )
            settled.append(event)
        return settled

    def _fail(self, error: WireError, out: list[StreamEvent]) -> None:
        if self.done is not None:
            return
        self._error = error
        out.append(
            StreamFailed(
                message=error.message, code=error.code, error_type=error.error_type, raw=error.raw
            )
        )
        self._finalize(out)

    # -- text ----------------------------------------------------------------------------

    def _keep_text(self, text: str, out: list[StreamEvent]) -> bool:
        self._text_chars += len(text)
        if self._text_chars <= self.max_text_chars:
            return True
        self._fail(
            WireError(
                message=f"content and reasoning text exceed max_text_chars={self.max_text_chars}",
                code="too_large",
            ),
            out,
        )
        return False

    def _keep_block(self, out: list[StreamEvent]) -> bool:
        self._blocks += 1
        if self._blocks <= MAX_BLOCKS:
            return True
        message = f"more than {MAX_BLOCKS} blocks, items and citations in one stream"
        self._fail(WireError(message=message, code="too_many"), out)
        return False

    def _message_start(self, delta: WireMessageStart, out: list[StreamEvent]) -> None:
        previous = self._message_id
        self._message_id = delta.message_id
        if previous is None or previous == delta.message_id:
            return  # the first message_start, or a duplicate of it
        # A new message spliced into the stream before the last one ended: what was in
        # flight belongs to an abandoned message and is not ready.
        detail = (
            f"a new message ({delta.message_id}) began before message {previous} ended; "
            "the call belongs to the abandoned message"
        )
        for call in self._calls:
            if call.phase in (CallProgress.PENDING, CallProgress.STREAMING):
                out.append(call.reject(RejectReason.STREAM_INCOMPLETE, detail))
        self._turn.reset()
        self._by_index.clear()
        self._latest = None

    # -- tool calls ----------------------------------------------------------------------

    def _find(self, call_id: str | None, index: int | None) -> _Call | None:
        if call_id is not None and call_id in self._by_id:
            return self._by_id[call_id]
        if index is not None:
            return self._by_index.get(index)
        return self._latest

    def _route(self, d: WireToolCall) -> _Call | None:
        if d.id is not None:
            known = self._by_id.get(d.id)
            if known is not None:
                return known
            if d.name is None:
                current = self._by_index.get(d.index) if d.index is not None else None
                current = current or self._latest
                if (
                    current is not None
                    and current.phase is not CallProgress.REJECTED
                    and current.incomplete()
                ):
                    current.aliases += 1
                    self._by_id[d.id] = current
                    return current
            return None
        current = self._by_index.get(d.index) if d.index is not None else self._latest
        if current is None or current.phase is CallProgress.REJECTED:
            return None
        if d.name is not None and current.name is not None and d.name != current.name:
            return None
        return current

    def _tool(self, d: WireToolCall, out: list[StreamEvent]) -> None:
        call = self._route(d)
        if call is None:
            if len(self._calls) >= MAX_TOOL_CALLS:
                self._fail(
                    WireError(message=f"more than {MAX_TOOL_CALLS} tool calls", code="too_many"),
                    out,
                )
                return
            call_id = d.id
            if call_id is None:
                self._generated += 1
                call_id = f"call_sr{self._generated}"
            call = _Call(len(self._calls), call_id, d.index, d.kind)
            self._calls.append(call)
            self._by_id[call_id] = call
            if d.index is not None:
                self._by_index[d.index] = call
            self._turn.call(d.index, call_id, d.echo)
        elif d.echo is not None:
            self._turn.call(d.index, call.call_id, d.echo)
        if d.unsupported is not None:
            call.unsupported = d.unsupported
        self._latest = call
        call.expects_end = call.expects_end or d.expects_end
        if d.from_object and d.arguments:
            note = "arguments arrived as an object and were serialized to JSON text"
            if note not in call.notes:
                call.notes.append(note)
        if d.notes or d.repairs or d.end_marker:
            call.notes.extend(n for n in d.notes if n not in call.notes)
            call.repairs.extend(d.repairs)
            call.end_marker = call.end_marker or d.end_marker
        if d.name is not None and call.name is None:
            call.name = d.name
            call.phase = CallProgress.STREAMING
            if call.kind == "function":
                call.asm = ArgumentAssembler(
                    max_size=self.max_size, max_depth=self.max_depth, changes=self.previews
                )
            self._announced.add(call.call_id)
            out.append(ToolCallStarted(call_id=call.call_id, index=call.index, name=d.name))
            if call.pending:
                text = "".join(call.pending)
                call.pending = []
                call.size = 0
                self._arguments(call, text, out)
        if d.arguments:
            if call.name is None:
                if call.size + len(d.arguments) <= self.max_size:
                    call.pending.append(d.arguments)
                    call.size += len(d.arguments)
                else:
                    call.overflow = True
            else:
                self._arguments(call, d.arguments, out)

    def _arguments(self, call: _Call, text: str, out: list[StreamEvent]) -> None:
        assert call.name is not None
        if call.phase is not CallProgress.STREAMING:
            return
        if call.whole:  # shown as it streams (an apply_patch diff); the item has the input
            out.append(
                ToolCallDelta(call_id=call.call_id, index=call.index, name=call.name, text=text)
            )
            return
        asm = self._take_piece(call, text)
        preview: Any = None
        changes: tuple[Change, ...] = ()
        if asm is not None and self.previews:
            changes = asm.take_changes()
            preview = asm.lazy_preview()  # computed only if the event's preview is read
        # A custom (free-text) tool has no preview: its text is the deltas themselves, and
        # joining it on every delta would make the cost grow with its length.
        out.append(
            ToolCallDelta(
                call_id=call.call_id,
                index=call.index,
                name=call.name,
                text=text,
                preview=preview,
                changes=changes,
            )
        )

    def _take_piece(self, call: _Call, text: str) -> ArgumentAssembler | None:
        """Keep a piece of a streaming call's argument text (bounded) and give it to its
        assembler; the assembler, when it read the piece."""
        if not call.overflow:
            if call.size + len(text) <= self.max_size:
                call.keep(text)
                call.size += len(text)
            else:
                call.overflow = True
        asm = call.asm
        if asm is None or asm.status is Status.UNREPAIRABLE:
            return None
        asm.feed(text)
        return asm

    def _final_arguments(self, d: WireToolArguments, out: list[StreamEvent]) -> None:
        call = self._find(d.id, d.index)
        if call is not None and call.whole:
            return
        if call is None:
            self._tool(
                WireToolCall(id=d.id, index=d.index, arguments=d.arguments, expects_end=True), out
            )
            return
        streamed = call.raw() if call.name is not None else "".join(call.pending)
        if streamed == d.arguments:
            return
        if not streamed:
            if call.name is None:
                call.pending = [d.arguments]
            else:
                self._arguments(call, d.arguments, out)
            return
        # vllm-project/vllm#42683: the deltas lost a piece; the final text is the truth.
        call.notes.append(
            f"the streamed argument deltas ({plural(len(streamed), 'char')}) differ from the "
            f"final arguments the provider sent ({plural(len(d.arguments), 'char')}); the final "
            "ones were used"
        )
        if call.name is None:
            call.pending = [d.arguments]
            return
        call.parts = [d.arguments]
        call.size = len(d.arguments)
        call.overflow = call.size > self.max_size
        call.merged = 0
        if call.asm is not None:
            call.asm = ArgumentAssembler(max_size=self.max_size, max_depth=self.max_depth)
            call.asm.feed(d.arguments)

    # -- the end -------------------------------------------------------------------------

    def _finalize(self, out: list[StreamEvent], *, aborted: bool = False) -> None:
        if aborted:
            stop = StopReason.ABORTED
        elif self._error is not None:
            stop = StopReason.ERROR
        else:
            stop = normalize_stop_reason(self._stop)
        ready: list[ToolCallReady] = []
        policy = FinishPolicy(
            check=self.check,
            reject_unknown_tools=self.reject_unknown_tools,
            refuse_ambiguous_escapes=self.refuse_ambiguous_escapes,
            max_size=self.max_size,
            raw_stop=self._stop,
            error=self._error,
            ended=self._ended,
            turn=self._turn,
            taken=self._by_id,
        )
        for call in self._calls:
            if call.phase is CallProgress.REJECTED:
                continue
            events = policy.judge(call, stop)
            out.extend(events)
            ready.extend(e for e in events if isinstance(e, ToolCallReady))
        missing = stop is StopReason.TOOL_CALLS and not self._calls
        notes: list[str] = []
        if missing:
            notes.append("the stop reason says tool calls, but no tool call arrived")
        if stop is StopReason.MISSING and self._ended:
            notes.append(
                "the stream ended with the provider's end marker but without a stop reason; "
                "each call was judged on its own"
            )
        messages = self._turn.messages(self.provider, ready)
        notes.extend(self._turn.notes)
        self.done = Done(
            stop_reason=stop,
            raw_stop_reason=self._stop,
            usage=self._usage,
            messages=messages,
            tool_calls_missing=missing,
            notes=tuple(notes),
            response=self._response,
            call_slots=tuple(self._turn.slots),
        )
        out.append(self.done)
