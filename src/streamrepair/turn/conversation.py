"""The turn loop's history: what to send back after each stream, for Chat Completions,
Anthropic Messages and the Responses API.

Theory of operation
-------------------
A tool loop sends the history, reads the stream, appends the assistant turn, runs the
ready calls, answers every call and sends again. Every API rejects a history in which a
call has no answer, or an answer's call is not there (OpenAI's 400 "An assistant
message with 'tool_calls' must be followed by tool messages responding to each
'tool_call_id'", Anthropic's "`tool_use` ids were found without `tool_result` blocks
immediately after", the Responses API's "No tool output found for function call",
fixed in closer-code by answering every id). ``Done.messages`` holds only the ready
calls (a broken argument text sent back makes strict servers reject every later
request), so the rejected calls, which get an answer with guidance, are put back here
with arguments that are valid JSON: what the model wrote when it was complete JSON (an
unknown tool, a schema failure), else ``{}``. The text as streamed stays on the event
(``ToolCallRejected.raw``), never altered. A call with no name is neither listed nor
answered (nothing valid can name it). Parallel calls stay in one assistant turn.

:class:`Conversation` stores the history as it was received (every reasoning kept,
thinking blocks with their signatures, reasoning items with their encrypted content:
nothing lost) and derives the list to send on each :meth:`Conversation.messages` call
with :func:`~streamrepair.prepare_messages` and its
:class:`~streamrepair.ReasoningPolicy` (``history.py``). The answers of one response are
written in call order once every call is answered, whatever order the tools finished
in, so the repair notes (once per conversation per rule and tool, ``schema/notes.py``) always
land on the same answer: Chat, one tool message per call; Anthropic, one user message
with every ``tool_result`` block; Responses, one ``function_call_output`` item per call.
Nothing here does I/O; the async pieces (the abort fence, running the calls) are in
``abort.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..errors import HistoryError, UnansweredCallsError
from ..events import Done, RejectReason, StopReason, ToolCallReady, ToolCallRejected
from ..providers.normalizer import Provider
from ..schema.notes import repair_note_fingerprints
from ..stream.pipeline import ToolCallStream
from ._rules import HistoryProblem, ReasoningPolicy, copy_json, history_provider
from .history import check_history, prepare_messages
from .replies import (
    RunState,
    _answer_entry,
    _assistant_items,
    _call_entries,
    _check_done,
)

__all__ = [
    "INTERRUPTED_BEFORE_START",
    "Conversation",
    "ToolBatch",
]

#: The answer given to ready calls that :meth:`Conversation.cancel_pending` closes.
INTERRUPTED_BEFORE_START: Final = (
    "The user interrupted the turn before this call started, so nothing was executed. "
    "Do not repeat it unless the user asks for it."
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolBatch:
    """One assistant response as added by :meth:`Conversation.add_response`.

    ``items`` is what was appended to the history (copies): the assistant message (Chat
    Completions, Anthropic) or the response's output items (Responses API), with every
    answerable call; ``message`` is that assistant message, or ``{}`` for the Responses
    API; ``ready`` the calls to run; ``rejected`` the calls answered at once (status
    ``not_started``), including any the consumer never saw because it stopped reading
    (reason ``aborted``); ``done`` the stream's :class:`~streamrepair.Done`.
    """

    message: dict[str, Any]
    ready: tuple[ToolCallReady, ...]
    rejected: tuple[ToolCallRejected, ...]
    done: Done
    items: tuple[dict[str, Any], ...] = ()

    @property
    def aborted(self) -> bool:
        """True when the consumer stopped reading before the end."""
        return self.done.stop_reason is StopReason.ABORTED

    @property
    def paused(self) -> bool:
        """True when Anthropic paused the turn (``pause_turn`` during a long server-tool
        run, or the beta ``compaction`` stop): send :meth:`Conversation.messages` again,
        unchanged, to let the model go on."""
        return self.done.stop_reason is StopReason.PAUSED


def _answerable(call: ToolCallReady | ToolCallRejected) -> bool:
    """A call the history answers: every ready call, and every rejected call with a name
    except an UNSUPPORTED one (an MCP approval request: the harness decides, and answers
    with the item the request asks for)."""
    if isinstance(call, ToolCallReady):
        return True
    return bool(call.name) and call.reason is not RejectReason.UNSUPPORTED


def _verdicts(
    events: Iterable[object], core: ToolCallStream | None, provider: Provider
) -> tuple[Done, list[ToolCallReady | ToolCallRejected]]:
    """The stream's Done and a verdict for every call, in call order. Calls the consumer
    never saw (it stopped reading) are rejected as ABORTED: they were never handed out."""
    done: Done | None = None
    seen: list[ToolCallReady | ToolCallRejected] = []
    for event in events:
        if isinstance(event, ToolCallReady | ToolCallRejected):
            seen.append(event)
        elif isinstance(event, Done):
            if done is not None:
                raise HistoryError("the events hold more than one Done: one stream at a time")
            done = event
    if core is not None:
        # Rejections the consumer never saw (it stopped reading and the core was aborted)
        # keep their raw text and detail. A ready call it never saw is not taken: it was
        # never handed out, so it is answered as aborted below and never run.
        seen_ids = {e.call_id for e in seen}
        seen.extend(
            v
            for v in core.verdicts
            if isinstance(v, ToolCallRejected) and v.call_id not in seen_ids
        )
    if done is None and core is not None:
        done = core.done
    if done is None:
        raise HistoryError("the stream is not over: no Done event (pass the core after abort)")
    _check_done(done, provider)
    known = {e.call_id for e in seen} | {e.origin_id for e in seen if isinstance(e, ToolCallReady)}
    entries = [(i, n) for i, n in _call_entries(done, provider) if i not in known]
    missing: list[tuple[str, str]] = []  # (call id, name) never seen, in call order
    taken_ids: set[str] = set()
    for call_id, name, _ in core.calls if core is not None else ():
        if call_id in known:
            continue
        taken = [(i, n) for i, n in entries if i == call_id or _derived(i, call_id)]
        missing.extend(taken)
        taken_ids.update(i for i, _ in taken)
        if not taken:
            missing.append((call_id, name or ""))
    missing.extend((i, n) for i, n in entries if i not in taken_ids)
    for call_id, name in missing:
        seen.append(
            ToolCallRejected(
                call_id=call_id,
                index=None,
                name=name,
                reason=RejectReason.ABORTED,
                detail="Not executed: the consumer stopped reading before this call was "
                "handed out.",
            )
        )
    return done, seen


def _derived(call_id: str, origin: str) -> bool:
    """``<origin>_<n>``: a call split from concatenated values."""
    head, _, tail = call_id.rpartition("_")
    return head == origin and tail.isdigit()


# -- the history object --------------------------------------------------------------------


class _OpenBatch:
    __slots__ = ("calls", "outputs", "status")

    def __init__(self, calls: list[ToolCallReady | ToolCallRejected]) -> None:
        self.calls = calls
        self.status: dict[str, RunState] = {}
        self.outputs: dict[str, str] = {}


def _texts(value: object) -> list[str]:
    """Every text in a message, content part, block or item (for the note history)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for part in value for t in _texts(part)]
    if isinstance(value, Mapping):
        out: list[str] = []
        for key in ("text", "content", "output"):
            if key in value:
                out.extend(_texts(value[key]))
        return out
    return []


def _only_results(message: Mapping[str, Any]) -> bool:
    """An Anthropic user message holding only ``tool_result`` blocks (our answers)."""
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, list)
        and bool(content)
        and all(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content)
    )


class Conversation:
    """A history that produces the messages to send: Chat Completions (the default),
    Anthropic Messages or the Responses API.

    ``model`` chooses the :class:`ReasoningPolicy` (:meth:`ReasoningPolicy.for_model`)
    unless ``policy`` is given. ``provider`` is the protocol the streams come in and the
    history is kept in: ``"openai"`` (Chat Completions and compatibles), ``"anthropic"``
    or ``"responses"``. ``system`` is the system prompt: the first message of a Chat
    Completions or Responses history; for Anthropic it is kept apart (the API takes it as
    the ``system`` parameter), in :attr:`system`.

    The loop: :meth:`add_user`; send :meth:`messages`; read the stream;
    :meth:`add_response` with its events; run :attr:`pending` (:meth:`start`,
    :meth:`answer` each, or ``abort.run_tool_calls``); send :meth:`messages` again until
    a response has no call. Rejected calls are answered by :meth:`add_response` itself.
    After an abort, :meth:`cancel_pending` answers what is left (running calls as
    ``interrupted``, the others ``not_started``). :meth:`messages`, :meth:`add_user` and
    :meth:`add_response` raise :class:`UnansweredCallsError` while a call has no answer.

    Attributes: ``model``; :attr:`policy` (settable, a :class:`ReasoningPolicy`), what
    :meth:`messages` and :meth:`check` apply; :attr:`provider`; :attr:`system`.
    """

    def __init__(
        self,
        model: str = "",
        *,
        policy: ReasoningPolicy | None = None,
        system: str | None = None,
        provider: Provider | str | None = None,
    ) -> None:
        if system is not None and not isinstance(system, str):
            raise TypeError("system must be a str or None")
        self._provider = history_provider(provider)
        self.model = model
        self.policy = policy if policy is not None else ReasoningPolicy.for_model(model)
        self._system = system
        self._messages: list[dict[str, Any]] = []
        self._noted: list[str] = []  # texts holding repair-note blocks (for dedup)
        self._batch: _OpenBatch | None = None
        if system is not None and self._provider is not Provider.ANTHROPIC:
            self._append({"role": "system", "content": system})

    # -- reading ---------------------------------------------------------------------------

    @property
    def policy(self) -> ReasoningPolicy:
        """The :class:`ReasoningPolicy` that :meth:`messages` applies (and that
        :func:`~streamrepair.check_history` needs: see :meth:`check`)."""
        return self._policy

    @policy.setter
    def policy(self, policy: ReasoningPolicy) -> None:
        if not isinstance(policy, ReasoningPolicy):
            raise TypeError("policy must be a ReasoningPolicy")
        self._policy = policy

    @property
    def provider(self) -> Provider:
        """The protocol of the history: ``Provider.OPENAI`` (Chat Completions),
        ``Provider.ANTHROPIC`` or ``Provider.RESPONSES``."""
        return self._provider

    @property
    def system(self) -> str | None:
        """The system prompt given (for Anthropic, pass it as ``system=``)."""
        return self._system

    @property
    def history(self) -> list[dict[str, Any]]:
        """The history as received (every reasoning kept), as copies. The answers of the
        last response appear once all of them are in."""
        return [copy_json(m) for m in self._messages]

    def messages(self) -> list[dict[str, Any]]:
        """What to send now (Chat and Anthropic ``messages``, Responses ``input``):
        :attr:`history` through :func:`prepare_messages` with this conversation's policy
        and provider. Raises :class:`UnansweredCallsError` while a call has no answer."""
        self._check_settled()
        return prepare_messages(self._messages, policy=self._policy, provider=self._provider)

    def check(self) -> tuple[HistoryProblem, ...]:
        """:func:`~streamrepair.check_history` of :meth:`messages` with this
        conversation's policy and provider: every reason the API would reject what is
        sent now (empty: none)."""
        return check_history(self.messages(), policy=self._policy, provider=self._provider)

    @property
    def pending(self) -> tuple[ToolCallReady, ...]:
        """Ready calls of the last response with no answer yet, in call order."""
        batch = self._batch
        if batch is None:
            return ()
        return tuple(
            c
            for c in batch.calls
            if isinstance(c, ToolCallReady) and not batch.status[c.call_id].is_answer
        )

    def status(self, call_id: str) -> RunState:
        """The status of a call of the last response (:class:`HistoryError` if unknown)."""
        batch = self._batch
        if batch is None or call_id not in batch.status:
            raise HistoryError(f"no call {call_id!r} is waiting for an answer")
        return batch.status[call_id]

    # -- writing ---------------------------------------------------------------------------

    def add_user(self, content: str | list[Any]) -> None:
        """Start a new user turn: ``{"role": "user", "content": content}`` (a string or
        the protocol's list of content parts). Anthropic: right after the tool results,
        the content goes into their user message, after them."""
        if not isinstance(content, str | list):
            raise TypeError("user content must be a str or a list of content parts")
        self._check_settled()
        last = self._messages[-1] if self._messages else None
        if self._provider is Provider.ANTHROPIC and last is not None and _only_results(last):
            # After the tool results: the same user message, the text after the results
            # (what the API makes of two user messages; roles keep alternating).
            parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
            last["content"].extend(copy_json(parts))
            self._note(parts)
            return
        self._append({"role": "user", "content": copy_json(content)})

    def add_response(
        self, events: Iterable[object] = (), *, core: ToolCallStream | None = None
    ) -> ToolBatch:
        """Add one streamed response: its assistant turn, then an answer for every
        rejected call. Returns the :class:`ToolBatch`; its ``ready`` calls are
        :attr:`pending` until answered.

        ``events`` are the events the consumer received (only ``ToolCallReady``,
        ``ToolCallRejected`` and ``Done`` are read). After an abort the consumer may not
        have received the end: pass ``core=`` (``aiter_events(...).core``); calls it knows
        that the events do not show are answered as aborted, never run. Raises
        :class:`HistoryError` for a stream in another protocol than :attr:`provider`.
        """
        self._check_settled()
        done, calls = _verdicts(events, core, self._provider)
        items = _assistant_items(done, calls, self._provider)
        answerable = [c for c in calls if _answerable(c)]
        for item in items:
            self._append(item)
        batch = ToolBatch(
            message=copy_json(items[0]) if self._provider is not Provider.RESPONSES else {},
            ready=tuple(c for c in calls if isinstance(c, ToolCallReady)),
            rejected=tuple(c for c in calls if isinstance(c, ToolCallRejected)),
            done=done,
            items=tuple(copy_json(item) for item in items),
        )
        if answerable:
            open_batch = _OpenBatch(answerable)
            for call in answerable:
                open_batch.status[call.call_id] = (
                    RunState.PENDING if isinstance(call, ToolCallReady) else RunState.NOT_STARTED
                )
            self._batch = open_batch
            self._settle()
        return batch

    def start(self, call_id: str) -> None:
        """Mark a pending ready call as dispatched (``running``), so that an abort
        reports it ``interrupted`` rather than ``not_started``."""
        if self.status(call_id) is not RunState.PENDING:
            raise HistoryError(f"call {call_id!r} is not pending")
        assert self._batch is not None
        self._batch.status[call_id] = RunState.RUNNING

    def answer(self, call_id: str, output: str, *, status: RunState = RunState.COMPLETED) -> None:
        """Answer a ready call with its result (or error text, ``status=FAILED``).

        See :func:`tool_message` for what the answer says. Once every call of the
        response is answered, the answers are added in call order (repair notes on the
        first answer that needs each one).
        """
        current = self.status(call_id)
        if current.is_answer:
            raise HistoryError(f"call {call_id!r} is already answered ({current.value})")
        if not isinstance(status, RunState) or not status.is_answer:
            raise ValueError(f"{status!r} is not an answer")
        if not isinstance(output, str):
            raise TypeError(f"output must be a str, not {type(output).__name__}")
        assert self._batch is not None
        self._batch.status[call_id] = status
        self._batch.outputs[call_id] = output
        self._settle()

    def cancel_pending(self, reason: str = INTERRUPTED_BEFORE_START) -> tuple[str, ...]:
        """Answer every unanswered call after an abort: running ones ``interrupted``,
        the others ``not_started`` with ``reason``. Returns their ids; a no-op when
        nothing is waiting."""
        batch = self._batch
        if batch is None:
            return ()
        closed: list[str] = []
        for call in batch.calls:
            state = batch.status[call.call_id]
            if state.is_answer:
                continue
            if state is RunState.RUNNING:
                batch.status[call.call_id] = RunState.INTERRUPTED
                batch.outputs[call.call_id] = ""
            else:
                batch.status[call.call_id] = RunState.NOT_STARTED
                batch.outputs[call.call_id] = reason
            closed.append(call.call_id)
        self._settle()
        return tuple(closed)

    # -- internals -------------------------------------------------------------------------

    def _check_settled(self) -> None:
        if self._batch is not None:
            waiting = tuple(
                call_id for call_id, state in self._batch.status.items() if not state.is_answer
            )
            raise UnansweredCallsError(waiting)

    def _append(self, message: dict[str, Any]) -> None:
        self._messages.append(message)
        self._note(message)

    def _note(self, value: object) -> None:
        for text in _texts(value):
            if text and repair_note_fingerprints(text):
                self._noted.append(text)

    def _settle(self) -> None:
        batch = self._batch
        if batch is None or not all(s.is_answer for s in batch.status.values()):
            return
        self._batch = None
        answers: list[dict[str, Any]] = []
        for call in batch.calls:
            if isinstance(call, ToolCallRejected):
                answer = _answer_entry(call, provider=self._provider)
            else:
                answer = _answer_entry(
                    call,
                    batch.outputs[call.call_id],
                    status=batch.status[call.call_id],
                    history=self._noted,
                    provider=self._provider,
                )
            self._note(answer)  # a later parallel call with the same mistake gets no note
            answers.append(answer)
        if self._provider is Provider.ANTHROPIC:  # every result in one user message
            self._messages.append({"role": "user", "content": answers})
        else:
            self._messages.extend(answers)
