"""What a stream of tool calls turns into: the events handed to the caller.

Every event is a small frozen, slotted, keyword-only dataclass under :class:`StreamEvent`,
validated in its constructor. For one stream the order is:

* :class:`ReasoningDelta`, :class:`TextDelta` and :class:`RefusalDelta` as text arrives;
* for each tool call: one :class:`ToolCallStarted` once its name is known, then a
  :class:`ToolCallDelta` per piece of argument text (with what it changed in the value,
  and the value so far as a snapshot computed when read);
* :class:`StreamFailed` when the provider reports an error mid-stream (or the bytes
  cannot be read);
* at the end, once: a :class:`ToolCallReady` or :class:`ToolCallRejected` for every call,
  then :class:`Done`.

Every call that ends ready or rejected was announced by a :class:`ToolCallStarted` with
the same ``call_id``, also the calls split from concatenated values (``<id>_2``, announced
just before their verdict, ``origin_id`` naming the streamed call) and a call that never
got a name (announced with ``name=""`` before it is rejected).

A call is only ever :class:`ToolCallReady` after the stream ended cleanly and its
arguments were finished without inventing structure (see ``docs/streams.md``).
``event.to_dict()`` gives a JSON-ready dict (``streamrepair replay --json`` prints these).
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from .results import Repair

if TYPE_CHECKING:
    from .syntax.changes import Change

__all__ = [
    "DeferredPreview",
    "Done",
    "ReasoningDelta",
    "RefusalDelta",
    "RejectReason",
    "StopReason",
    "StreamEvent",
    "StreamFailed",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallReady",
    "ToolCallRejected",
    "ToolCallStarted",
    "normalize_stop_reason",
]


class StopReason(enum.Enum):
    """A provider's stop reason, normalized.

    ``STOP``, ``TOOL_CALLS`` and ``LENGTH`` are clean ends (:attr:`clean`): the provider
    finished the response (``LENGTH``: at the output limit, so complete calls are still
    ready, "degrade, don't kill the turn"). The others leave no call ready.
    """

    #: ``stop``, ``end_turn``, ``stop_sequence``, ``STOP``, ``end``, Responses ``completed``.
    STOP = "stop"
    #: ``tool_calls``, ``tool_use``, ``TOOL_CALL``, ``function_call``.
    TOOL_CALLS = "tool_calls"
    #: ``length``, ``max_tokens``, ``max_output_tokens``, ``MAX_TOKENS``,
    #: ``incomplete:max_output_tokens``.
    LENGTH = "length"
    #: ``content_filter``, ``refusal``, ``SAFETY``, ``RECITATION``, Bedrock
    #: ``guardrail_intervened`` and ``content_filtered``, ...
    CONTENT_FILTER = "content_filter"
    #: Any other reason, known or not, that does not say the response is finished:
    #: ``insufficient_system_resource``, ``model_context_window_exceeded``,
    #: ``incomplete:*``, unrecognized values.
    INCOMPLETE = "incomplete"
    #: The provider paused a long turn and continues it when the assistant message is
    #: sent back unchanged as the last message (Anthropic ``pause_turn``, and the beta
    #: ``compaction``). Not a clean end: no call from it is ready.
    PAUSED = "paused"
    #: The provider reported an error (mid-stream error, ``response.failed``, ``error``).
    ERROR = "error"
    #: The stream ended without any stop reason.
    MISSING = "missing"
    #: The consumer stopped reading before the end (see ``ToolCallStream.abort``).
    ABORTED = "aborted"

    @property
    def clean(self) -> bool:
        """True when the provider said it finished the response."""
        return self in _CLEAN


_CLEAN = frozenset({StopReason.STOP, StopReason.TOOL_CALLS, StopReason.LENGTH})

_STOP_REASONS: dict[str, StopReason] = {
    "stop": StopReason.STOP,
    "end_turn": StopReason.STOP,
    "stop_sequence": StopReason.STOP,
    "end": StopReason.STOP,
    "completed": StopReason.STOP,
    "complete": StopReason.STOP,
    "finish": StopReason.STOP,
    "eos": StopReason.STOP,
    "tool_calls": StopReason.TOOL_CALLS,
    "tool_use": StopReason.TOOL_CALLS,
    "tool_call": StopReason.TOOL_CALLS,
    "function_call": StopReason.TOOL_CALLS,
    "length": StopReason.LENGTH,
    "max_tokens": StopReason.LENGTH,
    "max_output_tokens": StopReason.LENGTH,
    "model_length": StopReason.LENGTH,
    "content_filter": StopReason.CONTENT_FILTER,
    "refusal": StopReason.CONTENT_FILTER,
    "safety": StopReason.CONTENT_FILTER,
    "recitation": StopReason.CONTENT_FILTER,
    "blocklist": StopReason.CONTENT_FILTER,
    "prohibited_content": StopReason.CONTENT_FILTER,
    "spii": StopReason.CONTENT_FILTER,
    "guardrail_intervened": StopReason.CONTENT_FILTER,
    "content_filtered": StopReason.CONTENT_FILTER,
    "pause_turn": StopReason.PAUSED,
    "compaction": StopReason.PAUSED,
    "error": StopReason.ERROR,
    "failed": StopReason.ERROR,
}


def normalize_stop_reason(raw: str | None) -> StopReason:
    """Map a provider's stop reason to a :class:`StopReason`.

    Case and surrounding space are ignored; an ``incomplete:`` prefix (the Responses API's
    ``incomplete_details.reason``, as DeepSeek-TUI spells it) is read as the reason it
    prefixes, except that it never maps to a clean stop other than ``LENGTH``. ``None``
    or an empty string is ``MISSING``; anything unrecognized is ``INCOMPLETE``, the safe
    answer (no call becomes ready on a reason nobody understands).
    """
    if raw is None:
        return StopReason.MISSING
    text = raw.strip().lower()
    if not text:
        return StopReason.MISSING
    prefixed = text.startswith("incomplete:")
    if prefixed:
        text = text[len("incomplete:") :].strip()
    reason = _STOP_REASONS.get(text, StopReason.INCOMPLETE)
    if prefixed and reason in (StopReason.STOP, StopReason.TOOL_CALLS):
        return StopReason.INCOMPLETE
    return reason


class RejectReason(enum.Enum):
    """Why a tool call was not handed out as ready."""

    #: Its arguments were still incomplete when the stream ended (truncation, whatever
    #: stop reason the provider reported), or its block was never closed.
    CUT_OFF = "cut_off"
    #: Its arguments cannot be read without guessing (the assembler's error says where).
    UNREPAIRABLE = "unrepairable"
    #: The stream did not end cleanly (error, content filter, incomplete stop reason, no
    #: stop reason at all): nothing from it is ready.
    STREAM_INCOMPLETE = "stream_incomplete"
    #: The consumer stopped reading (cancelled) before the end.
    ABORTED = "aborted"
    #: The tool name is not among the ``tools`` given; ``suggestions`` has the closest.
    UNKNOWN_TOOL = "unknown_tool"
    #: The arguments are well formed but unusable: not a JSON object, no tool name, or
    #: rejected by the tool's schema.
    INVALID = "invalid"
    #: Some string of the arguments kept JSON's reading of ``\\n``-like escapes although
    #: its raw backslashes (an invalid escape) make that reading a guess; only with
    #: ``refuse_ambiguous_escapes`` (the proxy's default): nothing ambiguous is written.
    AMBIGUOUS_ESCAPES = "ambiguous_escapes"
    #: The model asked for something streamrepair does not hand out as a call (a
    #: Responses ``mcp_approval_request``, which wants an approval, not a result);
    #: ``detail`` says what it is and how to answer it.
    UNSUPPORTED = "unsupported"


def _jsonable(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Repair):
        return {
            "kind": value.kind.value,
            "offset": value.offset,
            "description": value.description,
            "count": value.count,
        }
    if isinstance(value, tuple) and hasattr(value, "_fields") and hasattr(value, "to_dict"):
        return _jsonable(value.to_dict())  # a preview change (syntax/changes.py)
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple | list):
        return [_jsonable(item) for item in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamEvent:
    """Base class of every event. ``type`` names the event in :meth:`to_dict`."""

    type: ClassVar[str] = "event"

    def to_dict(self, *, omit: Collection[str] = ()) -> dict[str, Any]:
        """A JSON-ready dict: ``{"type": ..., <field>: <value>, ...}`` with enums as their
        values, repairs and preview changes as dicts. Fields named in ``omit`` are left
        out (and not computed: ``omit=("preview",)`` never builds a lazy preview)."""
        out: dict[str, Any] = {"type": self.type}
        for f in fields(self):
            if f.name not in omit:
                out[f.name] = _jsonable(getattr(self, f.name))
        return out


def _check_str(owner: str, **values: object) -> None:
    for name, value in values.items():
        if not isinstance(value, str):
            raise TypeError(f"{owner}.{name} must be a str, not {type(value).__name__}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDelta(StreamEvent):
    """Reasoning ("thinking") text: DeepSeek/xAI ``reasoning_content``, Anthropic
    ``thinking_delta``, Responses reasoning summary text."""

    type: ClassVar[str] = "reasoning_delta"
    text: str

    def __post_init__(self) -> None:
        if type(self.text) is not str:
            _check_str("ReasoningDelta", text=self.text)


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta(StreamEvent):
    """Assistant content text."""

    type: ClassVar[str] = "text_delta"
    text: str

    def __post_init__(self) -> None:
        if type(self.text) is not str:
            _check_str("TextDelta", text=self.text)


@dataclass(frozen=True, slots=True, kw_only=True)
class RefusalDelta(StreamEvent):
    """OpenAI ``refusal`` text (the model declined; it is not content)."""

    type: ClassVar[str] = "refusal_delta"
    text: str

    def __post_init__(self) -> None:
        if type(self.text) is not str:
            _check_str("RefusalDelta", text=self.text)


def _check_call(owner: str, call_id: str, index: int | None, name: str) -> None:
    # Exact type checks first: this runs for every argument delta of every call.
    if type(call_id) is str and type(name) is str and (index is None or type(index) is int):
        return
    _check_str(owner, call_id=call_id, name=name)
    if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
        raise TypeError(f"{owner}.index must be an int or None")


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStarted(StreamEvent):
    """A tool call began and its name is known. ``index`` is the provider's index for it
    (None when the provider sent none); ``call_id`` is the provider's id, or a generated
    ``call_sr<n>`` when it sent none.

    Every call that ends ready or rejected is announced by one of these first. A call
    split from concatenated values (``<id>_2``, ``<id>_3``...) is announced just before
    its verdict, with ``origin_id`` the id of the call it was streamed in (its deltas
    carry that id); otherwise ``origin_id`` equals ``call_id``. A call whose name never
    arrived is announced with ``name=""`` just before it is rejected.
    """

    type: ClassVar[str] = "tool_call_started"
    call_id: str
    index: int | None
    name: str
    origin_id: str = ""

    def __post_init__(self) -> None:
        _check_call("ToolCallStarted", self.call_id, self.index, self.name)
        _check_str("ToolCallStarted", origin_id=self.origin_id)
        if not self.origin_id:
            object.__setattr__(self, "origin_id", self.call_id)


class DeferredPreview:
    """A value to be computed when it is first read: stored in
    :attr:`ToolCallDelta.preview`, it is replaced by :meth:`resolve`'s result on the first
    read (see :meth:`~streamrepair.ArgumentAssembler.lazy_preview`)."""

    __slots__ = ()

    def resolve(self) -> Any:
        """The value."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallDelta(StreamEvent):
    """More argument text for a started call.

    ``text`` is the raw delta exactly as the provider sent it. ``changes`` says what this
    delta changed in the value, in the vocabulary of
    :mod:`streamrepair.syntax.changes` (a container opened, a key read, a string grown by
    decoded text, a value set once final, a container or string closed, a reset): apply
    them in order (``ValueBuilder``) to follow the value without diffing. ``preview`` is
    the assembler's best-effort value of all the text so far, as a snapshot that later
    deltas never change; it is computed when first read, so a consumer that never reads
    it never pays for it. Both are for live display only: the value may be cut off, and
    it is never a reason to run anything. Both are empty (``()``, None) when previews are
    off and for a custom (free-text) tool. Treat ``preview`` as read-only.
    """

    type: ClassVar[str] = "tool_call_delta"
    call_id: str
    index: int | None
    name: str
    text: str
    preview: Any = None
    changes: tuple[Change, ...] = ()

    def __post_init__(self) -> None:
        _check_call("ToolCallDelta", self.call_id, self.index, self.name)
        if type(self.text) is not str:
            _check_str("ToolCallDelta", text=self.text)
        if type(self.changes) is not tuple:
            raise TypeError("ToolCallDelta.changes must be a tuple")


class _ResolvedOnRead:
    """``ToolCallDelta.preview``: a :class:`DeferredPreview` stored in the field is
    resolved on the first read, and its value stored in its place."""

    __slots__ = ("_slot",)

    def __init__(self, slot: Any) -> None:
        self._slot = slot

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = self._slot.__get__(obj, owner)
        if isinstance(value, DeferredPreview):
            value = value.resolve()
            self._slot.__set__(obj, value)
        return value

    def __set__(self, obj: object, value: Any) -> None:
        self._slot.__set__(obj, value)

    def __delete__(self, obj: object) -> None:
        self._slot.__delete__(obj)


setattr(ToolCallDelta, "preview", _ResolvedOnRead(vars(ToolCallDelta)["preview"]))  # noqa: B010


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallReady(StreamEvent):
    """A call that may be run: the stream ended cleanly and its arguments were finished
    without inventing structure.

    ``arguments`` is the value (a dict for function tools; the raw input string for
    Responses custom tools, ``kind == "custom"``, never parsed; for the Responses items
    the client runs, the item's input object: ``kind == "apply_patch"`` its
    ``operation``, ``"shell"`` and ``"local_shell"`` its ``action``, ``"tool_search"``
    its ``arguments``, ``"computer"`` its ``action``/``actions``; ``name`` is then the
    kind). ``repairs`` lists every syntax repair
    the assembler made; ``schema_repairs`` every type repair made against the tool's
    schema when ``tools`` were given (``streamrepair.schema.report.RepairNote``);
    ``notes`` everything else worth knowing (arguments taken from a provider's final
    ``.done`` event, arguments sent as an object, empty arguments read as ``{}``, a call
    split from concatenated values). ``raw`` is the argument text as
    streamed. When one streamed call held several concatenated values, each becomes its
    own ready call: ``call_id`` is then derived (``<id>_2``, ``<id>_3``...) and
    ``origin_id`` is the streamed call's id; otherwise the two are equal.
    """

    type: ClassVar[str] = "tool_call_ready"
    call_id: str
    index: int | None
    name: str
    arguments: Any
    repairs: tuple[Repair, ...] = ()
    schema_repairs: tuple[Any, ...] = ()
    notes: tuple[str, ...] = ()
    raw: str = ""
    origin_id: str = ""
    kind: str = "function"

    def __post_init__(self) -> None:
        _check_call("ToolCallReady", self.call_id, self.index, self.name)
        _check_str("ToolCallReady", raw=self.raw, origin_id=self.origin_id, kind=self.kind)
        if self.kind == "function" and not isinstance(self.arguments, dict):
            raise TypeError("ToolCallReady.arguments must be a dict for a function tool")
        if not all(isinstance(r, Repair) for r in self.repairs):
            raise TypeError("ToolCallReady.repairs must hold Repair objects")
        if not self.origin_id:
            object.__setattr__(self, "origin_id", self.call_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallRejected(StreamEvent):
    """A call that must not be run, and why.

    ``reason`` is a :class:`RejectReason`; ``detail`` a readable sentence (fit to be sent
    back to the model as the tool result); ``raw`` the argument text as streamed, never
    altered; ``suggestions`` the closest known tool names for ``UNKNOWN_TOOL``; ``kind``
    the kind of call, as on :class:`ToolCallReady` (it says which output item answers
    it: ``function_call_output``, ``custom_tool_call_output``,
    ``apply_patch_call_output``...). ``origin_id`` is the id of the streamed call a split
    call (``<id>_2``...) came from, as on :class:`ToolCallReady`; otherwise it equals
    ``call_id``.
    """

    type: ClassVar[str] = "tool_call_rejected"
    call_id: str
    index: int | None
    name: str
    reason: RejectReason
    detail: str
    raw: str = ""
    suggestions: tuple[str, ...] = ()
    kind: str = "function"
    origin_id: str = ""

    def __post_init__(self) -> None:
        _check_call("ToolCallRejected", self.call_id, self.index, self.name)
        _check_str(
            "ToolCallRejected",
            detail=self.detail,
            raw=self.raw,
            kind=self.kind,
            origin_id=self.origin_id,
        )
        if not isinstance(self.reason, RejectReason):
            raise TypeError("ToolCallRejected.reason must be a RejectReason")
        if not self.origin_id:
            object.__setattr__(self, "origin_id", self.call_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamFailed(StreamEvent):
    """The provider reported an error after the stream had started (HTTP 200 already
    sent), or the stream could not be read (``code`` ``"sse"`` or ``"bad_chunk"``).
    Nothing from the stream will be ready after it."""

    type: ClassVar[str] = "stream_failed"
    message: str
    code: str | None = None
    error_type: str | None = None
    raw: Any = field(default=None, compare=True)

    def __post_init__(self) -> None:
        _check_str("StreamFailed", message=self.message)


@dataclass(frozen=True, slots=True, kw_only=True)
class Done(StreamEvent):
    """The stream is over; always the last event, exactly once.

    ``stop_reason`` is normalized, ``raw_stop_reason`` as the provider spelled it (None
    when it sent none). ``usage`` is the provider's usage dict (the last one seen; for
    Anthropic, ``message_start`` usage updated by ``message_delta``). ``messages`` is what
    to append to the conversation, in the provider's format: one assistant message for
    Chat Completions, Anthropic, Gemini (``{"role": "model", "parts": [...]}``) and
    Bedrock (``content`` is ``""``, never null, on a tool-only Chat turn;
    ``reasoning_content`` kept when the provider sent any, even ``""``; the blocks the
    provider ran itself, such as Anthropic server tools and their results, kept exactly
    as received), the output items for the Responses API. Only ready calls are in it,
    with their finished arguments. ``tool_calls_missing`` is true when the stop reason
    said tool calls but none arrived. ``notes`` lists anything else worth knowing.
    ``response`` holds what the provider said about the response itself, as sent (None
    when it said nothing):
    ``id`` (the Responses id is what ``previous_response_id`` takes), ``model``, and
    Anthropic's ``container`` (``{"id", "expires_at"}``: pass its id as the next
    request's ``container`` after code execution or programmatic tool calls).
    ``call_slots`` says where each client call left out of ``messages`` (a rejected one)
    began, for the protocols whose turn interleaves calls with other entries (Anthropic
    content blocks, Responses output items): ``(call id, position)``, the position being
    the number of entries of the turn before it; :func:`~streamrepair.assistant_message`
    and :func:`~streamrepair.response_items` put rejected calls back there. Empty for the
    other protocols; left out of :meth:`to_dict` when empty.
    """

    type: ClassVar[str] = "done"
    stop_reason: StopReason
    raw_stop_reason: str | None = None
    usage: Any = None
    messages: tuple[dict[str, Any], ...] = ()
    tool_calls_missing: bool = False
    notes: tuple[str, ...] = ()
    response: Any = None
    call_slots: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.stop_reason, StopReason):
            raise TypeError("Done.stop_reason must be a StopReason")
        if not all(isinstance(m, dict) for m in self.messages):
            raise TypeError("Done.messages must hold dicts")
        if not isinstance(self.call_slots, tuple) or not all(
            isinstance(slot, tuple)
            and len(slot) == 2
            and isinstance(slot[0], str)
            and type(slot[1]) is int
            and slot[1] >= 0
            for slot in self.call_slots
        ):
            raise TypeError("Done.call_slots must hold (call id, position) pairs")

    def to_dict(self, *, omit: Collection[str] = ()) -> dict[str, Any]:
        """:meth:`StreamEvent.to_dict`, without ``call_slots`` when it is empty."""
        return StreamEvent.to_dict(self, omit=omit if self.call_slots else (*omit, "call_slots"))
