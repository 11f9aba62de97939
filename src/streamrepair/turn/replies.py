"""Rendering the turn loop's messages, for Chat Completions, Anthropic Messages and the
Responses API: the answer to a call, and the assistant turn to store.

Pure functions of the stream's events, with no conversation state (that is
:class:`~streamrepair.Conversation`, which uses them). Every API rejects a call that is
not answered, and an answer whose call is not in the history, so every call gets an
answer: rejected calls are answered ``not_started`` with guidance and put back in the
assistant turn with arguments that are valid JSON (what the model wrote when it was
complete JSON, else ``{}``), where they began in the stream (``Done.call_slots``: the
blocks and items around them keep their order, so a signed thinking block is never
moved and a reasoning item keeps the item after it), else in call order among the
calls that are there (Chat Completions has no other order); the text as streamed stays
on the event. Everything else the provider sent (reasoning with its
signature or encrypted content, text, server-tool blocks, other output items) is kept
as it is in ``Done.messages``, in its order.

=============  ==========================  ===========================================
protocol       assistant turn              answer
=============  ==========================  ===========================================
Chat           :func:`assistant_message`   :func:`tool_message` (one message per call)
Anthropic      :func:`assistant_message`   :func:`tool_result_block` (all of a turn's
               (``provider="anthropic"``)  blocks in one user message, in call order)
Responses      :func:`response_items`      :func:`function_call_output` (one item each)
=============  ==========================  ===========================================
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from ..errors import HistoryError, StreamRepairError
from ..events import Done, RejectReason, ToolCallReady, ToolCallRejected
from ..providers.normalizer import Provider
from ..schema.notes import append_repair_notes
from ..syntax.oneshot import repair
from ._responses_history import client_call
from ._rules import copy_json, history_provider

__all__ = [
    "RunState",
    "assistant_message",
    "function_call_output",
    "rejected_arguments",
    "response_items",
    "tool_message",
    "tool_result_block",
]

_Call = ToolCallReady | ToolCallRejected


class RunState(enum.Enum):
    """What happened to a call's side effects. All but the first two are answers."""

    #: Ready, not dispatched yet (no answer).
    PENDING = "pending"
    #: Dispatched, no answer yet (see :meth:`Conversation.start`).
    RUNNING = "running"
    #: Never run: no side effects. Every rejected call is answered so.
    NOT_STARTED = "not_started"
    #: Ran to the end.
    COMPLETED = "completed"
    #: Ran and failed: some effects may have happened.
    FAILED = "failed"
    #: Started, then stopped by an abort: some effects may have happened.
    INTERRUPTED = "interrupted"
    #: Ran, but its result was lost (the harness's runner returned something else than
    #: text, see :func:`~streamrepair.run_tool_calls`): what it did is not known, some
    #: effects may have happened.
    UNKNOWN = "unknown"

    @property
    def is_answer(self) -> bool:
        """True for the statuses a tool message can report."""
        return self not in (RunState.PENDING, RunState.RUNNING)


# -- tool messages and the assistant message ----------------------------------------------


_GUIDANCE: Final[dict[RejectReason, str]] = {
    RejectReason.CUT_OFF: (
        "The arguments were cut off before they were complete (most likely at the output "
        "token limit), so nothing was executed. Call the tool again with shorter "
        "arguments; if they carried large content such as a file, send it in smaller "
        "parts over several calls."
    ),
    RejectReason.UNREPAIRABLE: (
        "The arguments could not be read without guessing (JSON that cannot be repaired, "
        "or a key written twice with different values), so nothing was executed. Call the "
        "tool again with one JSON object as arguments, each key written once."
    ),
    RejectReason.STREAM_INCOMPLETE: (
        "The response ended abnormally before this call was confirmed, so nothing was "
        "executed. Make the call again if it is still needed."
    ),
    RejectReason.ABORTED: (
        "The user interrupted the response before this call was complete, so nothing was "
        "executed. Do not repeat it unless the user asks for it."
    ),
    RejectReason.UNKNOWN_TOOL: (
        "There is no tool with this name, so nothing was executed. Use one of the available tools."
    ),
    RejectReason.UNSUPPORTED: (
        "This is not a call streamrepair can answer with a result, so nothing was executed; "
        "answer it as its detail says."
    ),
    RejectReason.AMBIGUOUS_ESCAPES: (
        "The arguments hold backslashes that can be read two ways (\\n as a newline, or as "
        "a backslash and an n), so nothing was executed. Write every literal backslash as "
        "\\\\ (C:\\\\Users\\\\new) and call the tool again."
    ),
    RejectReason.INVALID: (
        "The arguments do not fit the tool's parameters, so nothing was executed. "
        "Correct them as described and call the tool again."
    ),
}


def _header(name: str, status: RunState, reason: RejectReason | None = None) -> str:
    label = name or "the tool"
    if status is RunState.NOT_STARTED:
        text = f"[streamrepair: {label} was not executed; status: not_started"
        return text + (f"; reason: {reason.value}]" if reason is not None else "]")
    if status is RunState.FAILED:
        return (
            f"[streamrepair: {label} failed; status: failed]\n"
            "It ran and failed; some of its effects may have happened."
        )
    if status is RunState.UNKNOWN:
        return (
            f"[streamrepair: {label} ran but its result was lost; status: unknown]\n"
            "It ran, but its result could not be passed on, so what it did is not known: "
            "some of its effects may have happened. Check before repeating it."
        )
    return (
        f"[streamrepair: {label} was interrupted; status: interrupted]\n"
        "It had started when the user interrupted the turn, so some of its effects may "
        "have happened. Check before repeating it."
    )


def _join(*parts: str) -> str:
    return "\n".join(part for part in parts if part)


def _answer_text(
    call: _Call,
    output: str = "",
    *,
    status: RunState | None = None,
    history: Iterable[str | Mapping[str, Any]] = (),
) -> tuple[str, RunState]:
    """The text answering ``call`` and the status it reports (see :func:`tool_message`)."""
    if not isinstance(output, str):
        raise TypeError(f"output must be a str, not {type(output).__name__}")
    if isinstance(call, ToolCallRejected):
        if status not in (None, RunState.NOT_STARTED) or output:
            raise ValueError("a rejected call was not run: it is answered not_started")
        content = _join(
            _header(call.name, RunState.NOT_STARTED, call.reason),
            _GUIDANCE[call.reason],
            call.detail,
        )
        return content, RunState.NOT_STARTED
    if not isinstance(call, ToolCallReady):
        raise TypeError("call must be a ToolCallReady or ToolCallRejected")
    status = RunState.COMPLETED if status is None else status
    if not isinstance(status, RunState) or not status.is_answer:
        raise ValueError(f"{status!r} is not an answer")
    content = output if status is RunState.COMPLETED else _join(_header(call.name, status), output)
    if status is not RunState.NOT_STARTED and (call.repairs or call.schema_repairs):
        # syntax repairs of the argument text, then the schema rules
        notes = (*call.repairs, *call.schema_repairs)
        content = append_repair_notes(content, notes, call.name, history=history)
    return content, status


def tool_message(
    call: _Call,
    output: str = "",
    *,
    status: RunState | None = None,
    history: Iterable[str | Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The Chat Completions tool message answering ``call``:
    ``{"role": "tool", "tool_call_id", "content"}``.

    For harnesses that keep their own list (:class:`Conversation` uses it too).

    * A :class:`~streamrepair.ToolCallRejected` is answered ``not_started``: a first line
      ``[streamrepair: <name> was not executed; status: not_started; reason: <reason>]``,
      what to do next (a cut-off call: send large content in smaller parts) and the
      event's ``detail``. ``output`` must be empty and ``status`` None or NOT_STARTED.
    * A :class:`~streamrepair.ToolCallReady` is answered with ``output`` (the tool's
      result, or the error text when ``FAILED``) and ``status`` (default ``COMPLETED``:
      ``output`` alone; the others get a first line naming the status). When the call
      was dispatched (not ``NOT_STARTED``), its schema repair notes are appended unless
      ``history`` already notes the same rule for the same tool (``schema/notes.py``).
    """
    content, _ = _answer_text(call, output, status=status, history=history)
    return {"role": "tool", "tool_call_id": call.call_id, "content": content}


def tool_result_block(
    call: _Call,
    output: str = "",
    *,
    status: RunState | None = None,
    history: Iterable[str | Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The Anthropic ``tool_result`` block answering ``call``:
    ``{"type": "tool_result", "tool_use_id", "content", "is_error"}``.

    The text is :func:`tool_message`'s. ``is_error: true`` on every answer but a
    ``completed`` one (a rejected call, a failure, an interruption); ``content`` is left
    out when the text is empty. The blocks answering one assistant message go together,
    first and in call order, in the next user message:
    ``{"role": "user", "content": [block, ...]}``.
    """
    content, final = _answer_text(call, output, status=status, history=history)
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.call_id}
    if content:
        block["content"] = content
    if final is not RunState.COMPLETED:
        block["is_error"] = True
    return block


def function_call_output(
    call: _Call,
    output: str = "",
    *,
    status: RunState | None = None,
    history: Iterable[str | Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The Responses API item answering ``call``, by the call's ``kind``:

    * ``function``: ``{"type": "function_call_output", "call_id", "output"}``;
    * ``custom``: ``custom_tool_call_output``, the same fields;
    * ``apply_patch``: ``apply_patch_call_output`` with ``status`` ``completed`` (a
      completed run) or ``failed`` (anything else) and the text as ``output``;
    * ``shell``: ``shell_call_output`` whose ``output`` is one entry: the text as
      ``stdout`` of a completed run, else as ``stderr`` with exit code 1;
    * ``local_shell``: ``local_shell_call_output`` (``id`` is the call id);
    * ``tool_search``: ``tool_search_output``; ``output`` of a completed run must be
      the JSON list of the tool definitions found (empty when the call did not run).

    The text is :func:`tool_message`'s (the Responses API has no error flag: the first
    line names the status). A ``computer`` call is answered with a screenshot, which
    text cannot be: answering one raises :class:`~streamrepair.HistoryError` (build its
    ``computer_call_output`` item yourself)."""
    content, final = _answer_text(call, output, status=status, history=history)
    kind = call.kind if isinstance(call, ToolCallReady | ToolCallRejected) else "function"
    completed = final is RunState.COMPLETED
    if kind == "custom":
        return {"type": "custom_tool_call_output", "call_id": call.call_id, "output": content}
    if kind == "apply_patch":
        return {
            "type": "apply_patch_call_output",
            "call_id": call.call_id,
            "status": "completed" if completed else "failed",
            "output": content,
        }
    if kind == "shell":
        entry = {
            "stdout": content if completed else "",
            "stderr": "" if completed else content,
            "outcome": {"type": "exit", "exit_code": 0 if completed else 1},
        }
        return {"type": "shell_call_output", "call_id": call.call_id, "output": [entry]}
    if kind == "local_shell":
        return {"type": "local_shell_call_output", "id": call.call_id, "output": content}
    if kind == "tool_search":
        return {
            "type": "tool_search_output",
            "call_id": call.call_id,
            "execution": "client",
            "tools": _found_tools(output) if completed else [],
        }
    if kind == "computer":
        raise HistoryError(
            f"a computer call ({call.call_id}) is answered with a screenshot: build its "
            "computer_call_output item yourself"
        )
    return {"type": "function_call_output", "call_id": call.call_id, "output": content}


def _found_tools(output: str) -> list[Any]:
    try:
        tools = json.loads(output) if output.strip() else []
    except ValueError:
        tools = None
    if not isinstance(tools, list):
        raise HistoryError(
            "a tool_search call is answered with the JSON list of the tool definitions found"
        )
    return tools


#: The reasons for which the model finished its arguments (what it wrote can stand in the
#: history as it was read).
_FINISHED: Final = (
    RejectReason.INVALID,
    RejectReason.UNKNOWN_TOOL,
    RejectReason.AMBIGUOUS_ESCAPES,
)


def rejected_arguments(event: ToolCallRejected) -> str:
    """The JSON text a rejected call's arguments stand as in a history (the call must
    be there for its answer to refer to it): the value the model wrote when it finished
    its arguments (an ``invalid``, ``unknown_tool`` or ``ambiguous_escapes`` call, read
    with the syntax repairs), else ``{}``: never a fragment of a cut-off call, and never
    structure the model did not write. ``Conversation`` and the proxy put rejected calls
    back with it."""
    return _rejected_arguments(event)


def _rejected_arguments(event: ToolCallRejected) -> str:
    if event.reason in _FINISHED and event.raw:
        try:
            repaired = repair(event.raw)
        except StreamRepairError:
            return "{}"
        if not repaired.structure_synthesized and isinstance(repaired.value, dict):
            return json.dumps(repaired.value, ensure_ascii=False)
    return "{}"


def _rejected_input(event: ToolCallRejected) -> str:
    """The free-form input standing for a rejected custom tool call's in the history:
    the text as streamed when the model finished it, else empty (never a fragment)."""
    if event.reason in _FINISHED:
        return event.raw
    return ""


_WRONG_FORMAT = {
    Provider.OPENAI: "a Chat Completions stream (provider='openai')",
    Provider.ANTHROPIC: "an Anthropic Messages stream (provider='anthropic')",
    Provider.RESPONSES: "a Responses API stream (provider='responses')",
}


def _format_of(done: Done) -> Provider | None:
    """Which protocol ``done.messages`` is in, from its shape (None: none of the three)."""
    messages = done.messages
    if len(messages) == 1 and messages[0].get("role") == "assistant" and "type" not in messages[0]:
        message = messages[0]
        content = message.get("content")
        if isinstance(content, list):
            return Provider.ANTHROPIC
        if (
            (content is None or isinstance(content, str))
            and "thinking" not in message
            and "tool_plan" not in message
            and all(isinstance(c, Mapping) and "id" in c for c in message.get("tool_calls", ()))
        ):
            return Provider.OPENAI
        return None
    if all(isinstance(m.get("type"), str) for m in messages):
        return Provider.RESPONSES
    return None


def _check_done(done: Done, provider: Provider) -> None:
    """Raise :class:`HistoryError` unless ``done.messages`` is in ``provider``'s format."""
    found = _format_of(done)
    if found is provider or (provider is Provider.RESPONSES and not done.messages):
        return
    what = (
        _WRONG_FORMAT[found]
        if found is not None
        else "a stream in another format (Ollama? Cohere?)"
    )
    raise HistoryError(
        f"this is {what}, not {_WRONG_FORMAT[provider]}: keep the history in the format of "
        "the stream (Conversation(model, provider=...))"
    )


def _call_entries(done: Done, provider: Provider) -> list[tuple[str, str]]:
    """``(call id, name)`` of every client call in ``done.messages``, in order."""
    if provider is Provider.OPENAI:
        calls = done.messages[0].get("tool_calls", ()) if done.messages else ()
        return [(c["id"], c.get("function", {}).get("name", "")) for c in calls]
    blocks: Iterable[Any]
    if provider is Provider.ANTHROPIC:
        blocks = done.messages[0].get("content", ()) if done.messages else ()
        return [(b["id"], b.get("name", "")) for b in blocks if b.get("type") == "tool_use"]
    return [
        (m["call_id"], m.get("name", ""))
        for m in done.messages
        if m.get("type") in ("function_call", "custom_tool_call")
    ]


def _merge_calls(
    entries: list[dict[str, Any]],
    call_id_of: Callable[[Mapping[str, Any]], str | None],
    calls: Iterable[_Call],
    missing: Callable[[ToolCallRejected], dict[str, Any]],
    slots: Iterable[tuple[str, int]] = (),
) -> list[dict[str, Any]]:
    """``entries`` (content blocks or output items, copied) with the client calls not in
    ``calls`` left out and every rejected, named call missing from them put in.

    A call whose streamed call has a slot (``Done.call_slots``: the number of entries
    before the place it began) goes back there, so the blocks around it keep their order
    (a signed thinking block is not moved; a reasoning item keeps the item that followed
    it). Any other goes after the entry of the call before it in call order, or before
    the entry of the call after it, or at the end. ``call_id_of(entry)`` is the call id
    of a client call's entry, else None; ``missing(event)`` builds the entry of a
    rejected call."""
    ordered: list[_Call] = []
    for call in calls:
        if not isinstance(call, ToolCallReady | ToolCallRejected):
            raise TypeError("calls must be ToolCallReady or ToolCallRejected events")
        ordered.append(call)
    rank = {c.call_id: n for n, c in enumerate(ordered)}
    present = {call_id_of(e) for e in entries} - {None}
    where = dict(slots)
    placed: dict[int, list[ToolCallRejected]] = {}  # slot -> the rejected calls begun there
    unplaced: list[tuple[int, ToolCallRejected]] = []
    for n, call in enumerate(ordered):
        if call.call_id in present:
            continue
        if isinstance(call, ToolCallReady):
            raise HistoryError(f"ready call {call.call_id!r} is not in Done.messages")
        if not call.name or call.reason is RejectReason.UNSUPPORTED:
            # Nothing valid can name it, or it is not a call (an MCP approval request,
            # kept as received): neither listed nor answered.
            continue
        slot = where.get(call.origin_id)
        if slot is not None and slot <= len(entries):
            placed.setdefault(slot, []).append(call)
        else:
            unplaced.append((n, call))
    out: list[dict[str, Any]] = []
    keys: list[str | None] = []  # the call id of each entry of ``out``
    for position in range(len(entries) + 1):
        for rejected in placed.get(position, ()):
            out.append(missing(rejected))
            keys.append(rejected.call_id)
        if position < len(entries):
            entry = entries[position]
            key = call_id_of(entry)
            if key is None or key in rank:
                out.append(copy_json(entry))
                keys.append(key)
    for n, rejected in unplaced:
        ranks = [None if key is None else rank[key] for key in keys]
        earlier = [p for p, r in enumerate(ranks) if r is not None and r < n]
        later = [p for p, r in enumerate(ranks) if r is not None and r > n]
        at = earlier[-1] + 1 if earlier else (later[0] if later else len(out))
        out.insert(at, missing(rejected))
        keys.insert(at, rejected.call_id)
    return out


def _chat_message(done: Done, calls: Iterable[_Call]) -> dict[str, Any]:
    base = done.messages[0]
    entries = {c["id"]: c for c in base.get("tool_calls", ())}
    message = {k: copy_json(v) for k, v in base.items() if k != "tool_calls"}
    if message.get("content") is None:
        message["content"] = ""
    tool_calls: list[dict[str, Any]] = []
    for call in calls:
        if isinstance(call, ToolCallReady):
            if call.call_id not in entries:
                raise HistoryError(f"ready call {call.call_id!r} is not in Done.messages")
            tool_calls.append(copy_json(entries[call.call_id]))
        elif isinstance(call, ToolCallRejected):
            if call.call_id in entries:  # finished, but never handed out (an abort)
                tool_calls.append(copy_json(entries[call.call_id]))
            elif call.name:
                tool_calls.append(
                    {
                        "id": call.call_id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": _rejected_arguments(call)},
                    }
                )
        else:
            raise TypeError("calls must be ToolCallReady or ToolCallRejected events")
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message


def _tool_use_id(block: Mapping[str, Any]) -> str | None:
    return block["id"] if block.get("type") == "tool_use" else None


def _anthropic_message(done: Done, calls: Iterable[_Call]) -> dict[str, Any]:
    base = done.messages[0]
    message = {k: copy_json(v) for k, v in base.items() if k != "content"}

    def missing(call: ToolCallRejected) -> dict[str, Any]:
        arguments = json.loads(_rejected_arguments(call))
        return {"type": "tool_use", "id": call.call_id, "name": call.name, "input": arguments}

    message["content"] = _merge_calls(
        list(base["content"]), _tool_use_id, calls, missing, done.call_slots
    )
    return message


def assistant_message(
    done: Done, calls: Iterable[_Call], *, provider: Provider | str | None = None
) -> dict[str, Any]:
    """The assistant message to store: ``done.messages[0]`` with every answerable call.

    ``calls`` are the stream's verdicts in call order; ``provider`` the protocol
    (``"openai"``, the default: Chat Completions; ``"anthropic"``). Calls present in
    ``done.messages`` keep their entry there (finished arguments); the other rejected
    calls with a name are added with valid JSON arguments where they began in the
    stream (Anthropic: ``done.call_slots``; Chat: in call order; see the module
    docstring); calls with no name are left out. Chat: ``content`` is ``""``
    rather than null. Anthropic: every other block (thinking with its signature,
    redacted thinking, text, server-tool blocks) is kept in its order. Raises
    :class:`HistoryError` for a stream in another format (a Responses stream:
    :func:`response_items`) or a ready call missing from ``done``. Nothing passed is
    modified.
    """
    protocol = history_provider(provider)
    if protocol is Provider.RESPONSES:
        raise HistoryError("a Responses API turn is several output items: use response_items()")
    _check_done(done, protocol)
    if protocol is Provider.ANTHROPIC:
        return _anthropic_message(done, calls)
    return _chat_message(done, calls)


def _response_call_id(item: Mapping[str, Any]) -> str | None:
    if client_call(item):
        return str(item["call_id"])
    return None


def response_items(done: Done, calls: Iterable[_Call]) -> list[dict[str, Any]]:
    """The Responses API output items to store: ``done.messages`` with every answerable
    call, for the ``input`` of the next request.

    Reasoning items (with their ``encrypted_content`` when it was requested), messages
    and every other item are kept as received, in order; ``function_call`` items of the
    ready calls as in ``done.messages``; rejected calls with a name are added where they
    began in the stream (``done.call_slots``; else after the call before them), as
    ``function_call`` items with valid JSON arguments, or, for a custom tool (``kind``
    ``"custom"``), as ``custom_tool_call`` items whose ``input`` is the text the model
    finished (empty when it was cut off).
    Raises :class:`HistoryError` for a stream in another format or a ready call missing
    from ``done``. Nothing passed is modified.
    """
    _check_done(done, Provider.RESPONSES)

    def missing(call: ToolCallRejected) -> dict[str, Any]:
        if call.kind == "custom":
            return {
                "type": "custom_tool_call",
                "call_id": call.call_id,
                "name": call.name,
                "input": _rejected_input(call),
            }
        return {
            "type": "function_call",
            "call_id": call.call_id,
            "name": call.name,
            "arguments": _rejected_arguments(call),
        }

    return _merge_calls(list(done.messages), _response_call_id, calls, missing, done.call_slots)


def _assistant_items(
    done: Done, calls: Iterable[_Call], provider: Provider
) -> list[dict[str, Any]]:
    """What to append to a ``provider`` history for one response (internal)."""
    if provider is Provider.RESPONSES:
        return response_items(done, calls)
    return [assistant_message(done, calls, provider=provider)]


def _answer_entry(
    call: _Call,
    output: str = "",
    *,
    status: RunState | None = None,
    history: Iterable[str | Mapping[str, Any]] = (),
    provider: Provider,
) -> dict[str, Any]:
    """The answer to ``call`` in ``provider``'s format (internal)."""
    if provider is Provider.ANTHROPIC:
        return tool_result_block(call, output, status=status, history=history)
    if provider is Provider.RESPONSES:
        return function_call_output(call, output, status=status, history=history)
    return tool_message(call, output, status=status, history=history)
