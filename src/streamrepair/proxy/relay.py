"""The sans-IO heart of the proxy: upstream SSE bytes in, repaired SSE bytes out.

Theory of operation
-------------------
A :class:`Relay` reads one streamed response of one protocol (Chat Completions,
Anthropic Messages, Responses; a subclass in each API's module, ``chat.py``,
``anthropic.py``, ``responses.py``). ``feed(data)`` takes the upstream's bytes exactly as
they came off the network and returns the bytes to send to the client *now*;
``finish()`` says the upstream closed. Each SSE event is parsed once and given both to a
:class:`~streamrepair.ToolCallStream` (which decides, with the library's finish policy,
which calls are ready) and to the protocol's rewriter, which decides what the client sees:

* everything that is not part of a tool call (text, reasoning, thinking, usage, pings,
  keep-alive comments, unknown events and fields) goes out as it arrives, so the time
  to first byte is the upstream's. Only what the re-numbering of blocks/items needs is
  rewritten (an ``index``, an ``output_index``, a ``sequence_number``);
* the pieces of a tool call are withheld, and so is the end of the response (the stop
  reason and what follows it), because a call is judged only once the response ended
  (a parsable prefix may be followed by more; ``finish_reason`` may say ``stop`` over a
  truncated call);
* when the stream ends (:attr:`ended`), the driver stores :meth:`memos` (what the next
  request needs: reasoning and repair notes per emitted call id) and then sends
  :meth:`final`: each ready call in the protocol's own grammar with valid JSON
  arguments (the call's finished, repaired value), each call the proxy refuses to send
  as runnable as a call to :data:`~.wire.REFUSED_TOOL` saying what to do (or, with
  :attr:`~.wire.Refusals.NOTICE`, a text notice), then the withheld end with the stop
  reason the calls sent imply (the upstream's own unless the proxy changed the turn).
  That sequence is written once (:meth:`Relay._ending`); each protocol writes only its
  pieces on the wire;
* a stream that failed or ended without its end (the connection dropped, an error
  event, no end marker) ends for the client as it ended upstream: nothing is sent for
  its calls (none is ready) and no end is invented, so the harness retries the request
  as it would without the proxy (:meth:`Relay.fail`: the driver then drops the client's
  connection too).

What one call's arguments look like on the wire is decided by its
:class:`~.emitters.ArgumentEmitter` (``emitters.py``). :class:`~.emitters.HeldArguments`
sends nothing while the call streams and the whole JSON when it is judged ready. With
``stream_arguments``, on the protocols that can leave a half-sent call unrunnable
(:attr:`Relay.progressive`: Anthropic, Responses), the response's first call gets a
:class:`~.emitters.ProgressiveArguments`, which returns text from its ``feed`` as soon as
it is final, never bytes it would have to take back; once that call is on the wire
everything else the response sends waits behind it until the end, and if it ends
rejected its block or item is never closed (:meth:`Relay._ending`).

Text calls (``text_tool_calls``): the stream core reads tool calls the model wrote as text
(a server without a tool parser). The text the client gets is then the text the stage
released for each event (markup removed; text that could still begin a marker follows
when it cannot, or when its block ends), put where the protocol carries text (each
relay's ``_chunk``); text released where no event can carry it goes out at the end,
before the calls. The calls found go out like structured ones.

Invariants: the output depends only on the upstream bytes, not on how they were split;
bytes once returned are never contradicted; no call whose arguments were cut off,
unrepairable, ambiguous or from a stream that did not end cleanly is ever sent as a call
that can run; memory is bounded by the stream core's limits plus the withheld end of the
response.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Final

from ..events import (
    Done,
    ReasoningDelta,
    RejectReason,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStarted,
)
from ..providers.normalizer import Provider
from ..schema.tools import tool_schemas
from ..stream.pipeline import ToolCallStream
from ..stream.sse import SSEDecoder, SSEEvent
from ..syntax.assembler import DEFAULT_MAX_SIZE
from ..turn.replies import rejected_arguments
from .emitters import (
    ArgumentEmitter,
    HeldArguments,
    ProgressiveArguments,
    argument_text,
    streamable_fields,
)
from .memo import CallMemo, note_dicts
from .wire import (
    Refusals,
    closing_stop,
    compact_json,
    notice_text,
    refusal_call,
    refused_verdicts,
    sse_event,
)

if TYPE_CHECKING:
    from ..providers.textcalls import TextCallFormat

__all__ = [
    "MAX_HELD_EVENTS",
    "ApiProtocol",
    "Relay",
]

#: Most events held after the upstream's stop reason (usually two or three: usage, the
#: end marker); past it the stream is cut short with an error event.
MAX_HELD_EVENTS: Final = 1000


class ApiProtocol(enum.Enum):
    """The APIs the proxy repairs: the name of each in logs and metrics, and its key in
    the table of APIs (``_table.py``), whose row says everything about it."""

    CHAT = "chat"  # OpenAI Chat Completions and compatibles (DeepSeek, ...)
    ANTHROPIC = "anthropic"  # Anthropic Messages
    RESPONSES = "responses"  # OpenAI Responses


@dataclass(slots=True)
class _Tail:
    """What the relay holds back until the stream ends."""

    events: list[tuple[str | None, str]] = field(default_factory=list)  # (event, data)


class Relay:
    """One streamed response: upstream SSE bytes in, client SSE bytes out (module
    docstring). Subclasses implement :meth:`_chunk` (one parsed upstream event) and the
    wire pieces of the end (:meth:`_ending` says the order once): how the streamed call
    ends (:meth:`_end_streamed`), text released late (:meth:`_late_text`), a call
    (:meth:`_send_call`), a notice (:meth:`_send_notice`), the closing stop reason's
    words (:meth:`_stops`) and the held end with that reason (:meth:`_send_tail`).

    ``tools`` is the request's tool list (the schemas; a call to a name it does not
    list gets the syntax repairs and no schema rules, and is sent like any other);
    ``max_argument_chars`` bounds each call's argument text; ``emitter`` makes the
    :class:`ArgumentEmitter` of each held call. ``text_tool_calls`` (``"auto"`` or a
    :class:`~streamrepair.TextCallFormat`) reads tool calls the model wrote as text in
    its content or reasoning (a server without a tool parser): the client then gets the
    text with the markup removed, and the calls as calls (module docstring).
    ``stream_arguments`` streams the first call's arguments as they become final
    (:class:`~.emitters.ProgressiveArguments`) on the protocols that can leave a
    half-sent call unrunnable (:attr:`progressive`); elsewhere it changes nothing.
    ``refusals`` says how a call the proxy will not send as runnable goes out
    (:class:`~.wire.Refusals`: a call to :data:`~.wire.REFUSED_TOOL` by default);
    ``refuse_ambiguous_escapes`` (default True) refuses a call whose strings' meaning
    is a guess (``ambiguous_escapes``): the proxy is the harness here, and must not
    write such content.
    """

    #: The API whose stream this is.
    protocol: ClassVar[ApiProtocol]
    #: The stream layer's name for its format (what the stream core reads).
    provider: ClassVar[Provider]
    #: Whether a call whose arguments went out before its verdict can still be left
    #: unrunnable when it is rejected (``docs/proxy.md``, "Progressive arguments").
    progressive: ClassVar[bool] = False

    def __init__(
        self,
        *,
        tools: Iterable[Mapping[str, Any]] | None = None,
        max_argument_chars: int = DEFAULT_MAX_SIZE,
        emitter: type[HeldArguments] = HeldArguments,
        text_tool_calls: TextCallFormat | str | None = None,
        stream_arguments: bool = False,
        refusals: Refusals = Refusals.CALL,
        refuse_ambiguous_escapes: bool = True,
    ) -> None:
        tools = list(tools) if tools is not None else None
        self.refusals = refusals
        #: Whether the first call's arguments stream before its verdict.
        self.stream_arguments = stream_arguments and self.progressive
        self.stream = ToolCallStream(
            provider=self.provider,
            tools=tools,
            max_size=max_argument_chars,
            previews=self.stream_arguments,  # the changes the progressive emitter reads
            text_tool_calls=text_tool_calls,
            # A name the request does not list goes out as a call (syntax repairs, no
            # schema rules): the harness decides what to do with it (Claude Code runs
            # its deferred MCP tools, which it leaves out of ``tools``).
            reject_unknown_tools=False,
            refuse_ambiguous_escapes=refuse_ambiguous_escapes,
        )
        self._schemas: dict[str, Any] = (
            tool_schemas(tools) if tools and self.stream_arguments else {}
        )
        # The call whose arguments are on the wire before its verdict (at most one, the
        # response's first), what was held behind it, and the rest of its text.
        self.streamed: str | None = None
        self._behind: list[bytes] = []
        self._rest: str | None = None
        #: Whether text is the text-call stage's (markup removed) instead of the upstream's.
        self.text_calls = text_tool_calls is not None
        # Text the stage released for the chunk being rewritten, and text released where
        # no chunk could carry it (after the end, at the end): sent before the calls.
        self._released: list[TextDelta | ReasoningDelta] = []
        self._late: list[TextDelta | ReasoningDelta] = []
        self._sse = SSEDecoder(comments=True)
        self._emitter = emitter
        self.emitters: dict[str, ArgumentEmitter] = {}
        self.tail = _Tail()
        self.ended = False
        # The event that ended the stream, read by the stream core only when the verdicts
        # are needed: the text before it goes out without waiting for the calls' judging
        # (a schema check per call), which can take milliseconds.
        self._end: bytes | dict[str, Any] | None = None
        self._verdicts: list[ToolCallReady | ToolCallRejected] = []
        self.upstream_stop: str | None = None
        self.failure: str | None = None  # why the proxy cut the stream short, if it did
        #: The upstream connection broke mid-stream (:meth:`fail`): the client's is
        #: dropped too, after :meth:`final`.
        self.dropped = False
        self.chunks = 0

    # -- driving ---------------------------------------------------------------------------

    @property
    def done(self) -> Done | None:
        """The stream core's :class:`~streamrepair.Done`, once the stream ended."""
        self._settle()
        return self.stream.done

    @property
    def verdicts(self) -> tuple[ToolCallReady | ToolCallRejected, ...]:
        """The ready and rejected calls, in order (complete once :attr:`ended`)."""
        self._settle()
        return tuple(self._verdicts)

    def verdicts_at(self, index: int) -> list[ToolCallReady | ToolCallRejected]:
        """The verdicts of the call the upstream numbered ``index`` (several when its
        arguments held several values, each then a call of its own), in order."""
        return [v for v in self.verdicts if v.index == index]

    def feed(self, data: bytes) -> list[bytes]:
        """The next upstream bytes; returns the bytes to send now. Input after the end
        of the stream is ignored."""
        out: list[bytes] = []
        if self.ended or not data:
            return out
        try:
            events = self._sse.feed(data)
        except Exception as exc:  # SSEError: a line past its bound or not UTF-8
            self._broken(str(exc), out)
            return out
        for event in events:
            self._event(event, out)
            if self.ended:
                break
        return out

    def finish(self) -> list[bytes]:
        """The upstream closed. Returns the bytes to send now; :attr:`ended` is then
        true (send :meth:`final` after storing :meth:`memos`)."""
        out: list[bytes] = []
        if self.ended:
            return out
        try:
            events = self._sse.finish()
        except Exception as exc:
            self._broken(str(exc), out)
            return out
        for event in events:
            self._event(event, out)
            if self.ended:
                return out
        self._ended(self.stream.finish(), texts=True)
        return out

    def fail(self, message: str) -> None:
        """The upstream connection broke mid-stream: every call not yet judged is
        withheld and :meth:`final` sends nothing for them and no end (:attr:`dropped`);
        the driver then drops the client's connection, so that the client sees the
        failure the upstream gave (and a harness retries, as it would directly: Claude
        Code and OpenCode retry a dropped stream, not a stream that ends in a notice)."""
        if not self.ended:
            self._ended(self.stream.fail(message, code="upstream"), texts=True)
            self.tail.events.clear()  # the end never came: nothing of it to send
            self.dropped = True

    def _fail(self, message: str) -> None:
        """The proxy cuts the stream short (bytes it cannot read, a bound): the calls not
        yet judged are withheld and :meth:`final` ends with an error event."""
        if not self.ended:
            self._ended(self.stream.fail(message, code="upstream"), texts=True)
            self.tail.events.clear()  # the end never came: nothing of it to send
            self.failure = message

    def error_event(self, message: str) -> bytes:
        """A well-formed error event in the protocol's grammar (after HTTP 200)."""
        body = {"error": {"message": message, "type": "upstream_error", "code": "upstream"}}
        return sse_event(compact_json(body))

    def abort(self) -> None:
        """The client went away: nothing more will be sent."""
        if not self.ended:
            self._ended(self.stream.abort())

    def final(self) -> list[bytes]:
        """The withheld end of the response, with the calls: send after :meth:`memos`
        were stored."""
        if not self.ended:
            raise RuntimeError("Relay.final() before the stream ended")
        self._settle()
        out = self._ending() if self.done is not None else []
        if self.failure is not None:
            out.append(self.error_event(self.failure))
        return out

    def memos(self) -> list[CallMemo]:
        """What to remember for each call the client will receive: its repairs, the
        turn's reasoning (on the first), and for a refused call what answers it and what
        its arguments stand as when the next request brings it back."""
        self._settle()
        if self.done is None:
            return []
        refusals = self.refusal_calls()
        sent = [v for v in self._verdicts if isinstance(v, ToolCallReady) or v.call_id in refusals]
        if not sent:
            return []
        reasoning, thinking = self._turn_state(self.done)
        out = []
        for k, call in enumerate(sent):
            turn: dict[str, Any] = {
                "reasoning": reasoning if k == 0 else None,
                "thinking": thinking if k == 0 else (),
            }
            if isinstance(call, ToolCallReady):
                memo = CallMemo(
                    call_id=call.call_id, tool=call.name, notes=note_dicts(call), **turn
                )
            else:
                memo = CallMemo(
                    call_id=call.call_id,
                    tool=call.name,
                    refusal=notice_text(call),
                    # a custom (free-text) call stays the refused call it went out as
                    stand_in=rejected_arguments(call) if call.kind == "function" else None,
                    **turn,
                )
            out.append(memo)
        return out

    def refusal_calls(self) -> dict[str, ToolCallReady]:
        """With :attr:`~.wire.Refusals.CALL`, the call that goes out for each refused
        one, by the refused call's id. Not when the streamed call (progressive
        arguments) was refused: its block or item is left open on the wire, and an SDK
        keeps it, with the input parsed so far, in its final message; a turn that then
        ends with calls (``tool_use``) would have a client that runs every call of such a
        turn run the cut one. The notices go out instead, and the stop reason stays the
        upstream's."""
        if self.refusals is not Refusals.CALL:
            return {}
        refused = self.refused()
        if any(v.call_id == self.streamed for v in refused):
            return {}
        return {v.call_id: refusal_call(v) for v in refused}

    def refused(self) -> list[ToolCallRejected]:
        """The calls the proxy answers instead of sending them as runnable
        (:func:`~.wire.refused_verdicts`), in order; none when the stream failed."""
        if self.dropped or self.failure is not None:
            return []
        return refused_verdicts(self.verdicts)

    # -- internals -------------------------------------------------------------------------

    def _turn_state(self, done: Done) -> tuple[str | None, tuple[dict[str, Any], ...]]:
        return None, ()

    def _broken(self, message: str, out: list[bytes]) -> None:
        """The upstream bytes cannot be read as SSE: stop, with nothing withheld sent as
        a call."""
        self._fail(f"the upstream stream cannot be read: {message}")

    def _event(self, event: SSEEvent, out: list[bytes]) -> None:
        if event.comment is not None:
            out.append(f":{' ' if event.comment else ''}{event.comment}\n\n".encode())
            return
        text = event.data.strip()
        if not text:
            return
        self.chunks += 1
        if text.startswith("[DONE]"):
            self.tail.events.append((event.event, event.data))
            # The end marker itself, so that the core knows the server finished (a call
            # complete before it is ready even when no stop reason came).
            self._end = b"data: [DONE]\n\n"
            self.ended = True
            return
        chunk = _json_object(text)
        if chunk is None:
            # Not a chunk anyone can read: trust nothing after it, and end with an error
            # event the client's SDK can read instead of bytes that would crash it.
            self._fail(f"the upstream sent a chunk that is not a JSON object: {text[:120]!r}")
            return
        # Behind a call on the wire, the other blocks wait (one block at a time).
        target = out if self.streamed is None else self._behind
        if self._ends(chunk):
            self._chunk(event.event, event.data, chunk, [], target)  # holds it
            self._end = chunk
            self.ended = True
            return
        if self._passes(event.event, event.data, chunk, target):
            self._bound_behind()
            return
        events = self.stream.feed_chunk(chunk)
        if self.text_calls:
            self._released = [e for e in events if type(e) in _TEXT_EVENTS]  # type: ignore[misc]
            self._chunk(event.event, event.data, chunk, events, target)
            if self._released:  # the chunk could not carry it: it goes out at the end
                self._late.extend(self._released)
                self._released = []
        else:
            self._chunk(event.event, event.data, chunk, events, target)
        self._calls(events, out)
        if self._bound_behind():
            return
        if self.stream.done is not None:
            self._ended(events)

    def _bound_behind(self) -> bool:
        """Whether the events waiting behind a streamed call passed their bound (the
        stream is then cut short)."""
        if len(self._behind) <= MAX_HELD_EVENTS:
            return False
        self._fail(f"more than {MAX_HELD_EVENTS} events waited behind a streamed call")
        return True

    def _passes(self, name: str | None, data: str, chunk: dict[str, Any], out: list[bytes]) -> bool:
        """The fast way of the most common events: a chunk that carries only text or
        reasoning, which the protocol sends on as it came, and one that carries only the
        next piece of a held call's arguments, which sends nothing. When the stream core
        takes the chunk as such (:meth:`~streamrepair.ToolCallStream.feed_text_only`,
        :meth:`~streamrepair.ToolCallStream.feed_arguments_only`: what it keeps kept, no
        event made) and the protocol's state lets it through, the protocol puts what goes
        out in ``out`` and True is returned: what the client gets and what the core holds
        are what :meth:`_chunk` after :meth:`~streamrepair.ToolCallStream.feed_chunk`
        would give. Else False, nothing done. Protocols that do not tell say False."""
        return False

    @property
    def _holds_arguments(self) -> bool:
        """Whether every call's emitter ignores the pieces until the verdict (so a piece
        taken the fast way, without its event, loses nothing)."""
        return not self.stream_arguments and self._emitter is HeldArguments

    def _calls(self, events: Iterable[StreamEvent], out: list[bytes]) -> None:
        """The call events of one chunk: verdicts kept, arguments to their emitter (and
        out, when the emitter streams them)."""
        for item in events:
            kind = type(item)
            if kind is ToolCallDelta:
                assert isinstance(item, ToolCallDelta)
                emitter = self.emitters.get(item.call_id)
                if emitter is None:
                    emitter = self._new_emitter(item.call_id, item.name)
                text = emitter.feed(item)
                if text:
                    self.streamed = item.call_id
                    self._send_arguments(item.call_id, item.name, text, out)
            elif kind is ToolCallStarted:
                assert isinstance(item, ToolCallStarted)
                if item.call_id not in self.emitters:
                    self._new_emitter(item.call_id, item.name)
            elif isinstance(item, ToolCallReady | ToolCallRejected):
                self._verdicts.append(item)  # a spliced message_start rejects mid-stream

    def _new_emitter(self, call_id: str, name: str) -> ArgumentEmitter:
        """The first call of the response streams its arguments (with
        ``stream_arguments``, a tool whose schema is known); every other is held, so that
        the calls keep their order."""
        emitter: ArgumentEmitter
        if self.stream_arguments and not self.emitters and name in self._schemas:
            emitter = ProgressiveArguments(streamable_fields(self._schemas[name]))
        else:
            emitter = self._emitter()
        self.emitters[call_id] = emitter
        return emitter

    def _send_arguments(self, call_id: str, name: str, text: str, out: list[bytes]) -> None:
        """Send argument text of the streamed call (its block or item begun first)."""
        raise NotImplementedError  # only the progressive protocols stream

    def _ends(self, chunk: dict[str, Any]) -> bool:
        """Whether ``chunk`` ends the response (the protocol's last event, which the
        relay holds): the stream core reads it in :meth:`_settle`."""
        return False

    def _settle(self) -> None:
        """Let the stream core read the event that ended the stream, and judge."""
        if self._end is None:
            return
        end = self._end
        self._end = None
        # (Argument text the end still brings, a text call's last piece say, goes out
        # with the verdict: a streamed call's emitter completes it in finish().)
        events = self.stream.feed(end) if isinstance(end, bytes) else self.stream.feed_chunk(end)
        if self.stream.done is None:  # cannot happen for the end events named; be safe
            events += self.stream.finish()
        self._ended(events, texts=True)

    def _judge_streamed(self) -> None:
        """The streamed call's verdict: ready, its rest of text is known; if its
        finished value does not continue what was sent, it is withheld after all."""
        call_id = self.streamed
        if call_id is None:
            return
        for k, verdict in enumerate(self._verdicts):
            if verdict.call_id != call_id or not isinstance(verdict, ToolCallReady):
                continue
            rest = self.emitters[call_id].finish(verdict)
            if rest is not None:
                self._rest = rest
                return
            self._verdicts[k] = ToolCallRejected(
                call_id=verdict.call_id,
                index=verdict.index,
                name=verdict.name,
                reason=RejectReason.INVALID,
                detail=(
                    "Not executed: part of the arguments had been sent while they streamed, "
                    "and the finished arguments do not continue that part (a key written "
                    "twice, or a value changed once it was complete)."
                ),
                raw=verdict.raw,
                kind=verdict.kind,
                origin_id=verdict.origin_id,
            )
            return

    def _ended(self, events: Iterable[StreamEvent], *, texts: bool = False) -> None:
        """The stream core is done. ``texts``: ``events`` came from no chunk the
        protocol rewrote, so the text in them (held by the text-call stage until the
        end) goes out at the end."""
        events = list(events)
        self._verdicts.extend(e for e in events if isinstance(e, ToolCallReady | ToolCallRejected))
        self._verdicts = _dedupe(self._verdicts)
        if texts and self.text_calls:
            self._late.extend(e for e in events if type(e) in _TEXT_EVENTS)  # type: ignore[misc]
        self.ended = True
        self._judge_streamed()

    def _take(self) -> tuple[str, str]:
        """(text, reasoning) the stage released for the chunk being rewritten."""
        return _joined(self._released, clear=True)

    def _take_pieces(self) -> list[tuple[bool, str]]:
        """What the stage released for the chunk being rewritten, as ``(reasoning,
        text)`` pieces in order, adjacent ones of a kind joined."""
        pieces = _pieces(self._released)
        self._released = []
        return pieces

    def _late_pieces(self) -> list[tuple[bool, str]]:
        """Text released where no chunk could carry it, to send before the calls."""
        pieces = _pieces(self._late)
        self._late = []
        return pieces

    def _hold(self, event: tuple[str | None, str]) -> None:
        """Keep an event of the response's end until the calls are sent (bounded)."""
        if len(self.tail.events) >= MAX_HELD_EVENTS:
            self._fail(f"the upstream sent more than {MAX_HELD_EVENTS} events after its end")
            return
        self.tail.events.append(event)

    def _arguments(self, ready: ToolCallReady) -> str:
        """The argument text of a held ready call."""
        emitter = self.emitters.get(ready.origin_id)
        if emitter is None or ready.call_id != ready.origin_id or ready.call_id == self.streamed:
            emitter = self._emitter()
        text = emitter.finish(ready)
        return text if text is not None else argument_text(ready)

    def _streamed_ready(self) -> tuple[ToolCallReady, str] | None:
        """The streamed call and the rest of its text, when it is ready."""
        if self.streamed is None or self._rest is None:
            return None
        for verdict in self._verdicts:
            if verdict.call_id == self.streamed and isinstance(verdict, ToolCallReady):
                return verdict, self._rest
        return None

    def _chunk(
        self,
        name: str | None,
        data: str,
        chunk: dict[str, Any],
        events: list[StreamEvent],
        out: list[bytes],
    ) -> None:
        raise NotImplementedError

    # -- the end of a response, once every call is judged ------------------------------------

    def _ending(self) -> list[bytes]:
        """What the client gets once the stream ended, in this order, in every protocol:
        the rest of the streamed call and its end (when it is ready: a rejected one is
        never closed), what waited behind it, the text the text-call stage released where
        no event could carry it, each ready call, a notice per withheld call, then the
        held end with the stop reason the calls sent imply."""
        out: list[bytes] = []
        streamed = self._streamed_ready()
        if streamed is not None:
            self._end_streamed(out, *streamed)
        out.extend(self._behind)
        self._late_text(out, self._late_pieces())
        refused = self.refused()
        refusals = self.refusal_calls()
        sent = bool(streamed)
        for verdict in self.verdicts:  # in the order the model wrote them
            if isinstance(verdict, ToolCallReady) and verdict.call_id != self.streamed:
                self._send_call(out, verdict, self._arguments(verdict))
                sent = True
            elif verdict.call_id in refusals:
                call = refusals[verdict.call_id]
                self._send_call(out, call, argument_text(call))
                sent = True
        if not refusals:
            for number, verdict in enumerate(refused, start=1):
                self._send_notice(out, number, notice_text(verdict))
        tool, stop = self._stops()
        reason = closing_stop(
            self.upstream_stop, calls_sent=sent, withheld=bool(refused), tool=tool, stop=stop
        )
        self._send_tail(out, reason)
        return out

    def _end_streamed(self, out: list[bytes], call: ToolCallReady, rest: str) -> None:
        """The streamed call is ready: send ``rest``, its text not sent yet, and close
        it (only the progressive protocols stream a call)."""
        raise NotImplementedError

    def _late_text(self, out: list[bytes], pieces: list[tuple[bool, str]]) -> None:
        """Send text released where no event could carry it (``(reasoning, text)``
        pieces, maybe none), before the calls."""
        raise NotImplementedError

    def _send_call(self, out: list[bytes], ready: ToolCallReady, arguments: str) -> None:
        """Send a ready call whole, with its argument text."""
        raise NotImplementedError

    def _send_notice(self, out: list[bytes], number: int, text: str) -> None:
        """Send the notice of the ``number``-th withheld call (from 1) where the protocol
        carries text."""
        raise NotImplementedError

    def _stops(self) -> tuple[str, str]:
        """The protocol's stop reasons for :func:`~.wire.closing_stop`: a call was sent,
        none was sent where the upstream said calls."""
        raise NotImplementedError

    def _send_tail(self, out: list[bytes], stop: str | None) -> None:
        """Send the held end of the response (:attr:`tail`) with stop reason ``stop``."""
        raise NotImplementedError


_TEXT_EVENTS: Final = (TextDelta, ReasoningDelta)
_DECODER: Final = json.JSONDecoder()


def _json_object(text: str) -> dict[str, Any] | None:
    """``text`` (stripped) parsed when it is one JSON object, else None: ``json.loads``
    without its wrapper's whitespace scans (every upstream event is parsed here, once)."""
    try:
        value, end = _DECODER.raw_decode(text)
    except ValueError:
        return None
    return value if end == len(text) and type(value) is dict else None


def _joined(events: list[TextDelta | ReasoningDelta], *, clear: bool) -> tuple[str, str]:
    text = "".join(e.text for e in events if type(e) is TextDelta)
    reasoning = "".join(e.text for e in events if type(e) is ReasoningDelta)
    if clear:
        events.clear()
    return text, reasoning


def _pieces(events: Iterable[TextDelta | ReasoningDelta]) -> list[tuple[bool, str]]:
    out: list[tuple[bool, str]] = []
    for event in events:
        reasoning = type(event) is ReasoningDelta
        if not event.text:
            continue
        if out and out[-1][0] == reasoning:
            out[-1] = (reasoning, out[-1][1] + event.text)
        else:
            out.append((reasoning, event.text))
    return out


def _dedupe(
    verdicts: list[ToolCallReady | ToolCallRejected],
) -> list[ToolCallReady | ToolCallRejected]:
    seen: set[str] = set()
    out = []
    for v in verdicts:
        if v.call_id not in seen:
            seen.add(v.call_id)
            out.append(v)
    return out
