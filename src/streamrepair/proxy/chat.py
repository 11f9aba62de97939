"""Chat Completions (OpenAI and compatibles: DeepSeek, Qwen, GLM, Kimi, ...): everything
the proxy does differently for this API, handed over as one row of the table of APIs
(``_API``; ``_api.py`` says what each part is for).

Streams (:class:`ChatRelay`; ``relay.py`` for the general rules). What the client
receives:

* every chunk without ``tool_calls`` goes out as the upstream sent it (content,
  ``reasoning_content``, refusals, keep-alives, unknown fields);
* a chunk with ``tool_calls`` (or the legacy ``function_call``) goes out without them,
  or not at all when nothing else is in it;
* the chunk carrying ``finish_reason``, and everything after it (the usage chunk,
  ``[DONE]``), is held until the stream ends; any text on it goes out at once;
* at the end: one chunk per ready call (``index`` 0, 1, ... in call order, ``id``,
  ``type``, ``function.name`` and the whole ``arguments`` in the first delta, as
  OpenCode's parser requires), one content chunk per withheld call with the notice,
  then the held chunks with ``finish_reason`` as :func:`~.wire.closing_stop` says
  (``tool_calls`` when a call was sent, ``length`` when one was cut off).

Whole bodies (``whole.py``): the message of the one choice is told as a stream; each
ready call keeps its entry with its arguments as the relay sends them, the others leave,
their notices are appended to ``content``, and ``finish_reason`` follows the calls kept.

Requests (``fixes.py``): ``reasoning_content`` the proxy streamed is put back on an
assistant turn with calls that lost it; a call with no ``tool`` message gets one; the
repair notes go in the ``tool`` message that answers a repaired call. A body passed
through unread (``n > 1``) gives the memos of its first choice's reasoning.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar, Final

from ..events import Done, StreamEvent, ToolCallReady
from ..providers.normalizer import Provider
from ..turn.history import ProblemKind, ReasoningPolicy, check_history
from ._api import Answer, Api, CallSite, openai_error
from ._history import add_id, count, dicts, insert_after, not_started
from .emitters import argument_text
from .memo import CallMemo, turn_memos
from .relay import ApiProtocol, Relay
from .wire import closing_stop, compact_json, notice_text, sse_event

__all__ = ["ChatRelay"]

_TEMPLATE_KEYS: Final = ("id", "object", "created", "model", "system_fingerprint")
_TEXT_KEYS: Final = ("content", "reasoning_content", "reasoning")


class ChatRelay(Relay):
    """Chat Completions: see the module docstring. Follows choice 0 (the proxy passes
    requests with ``n > 1`` through untouched)."""

    protocol: ClassVar[ApiProtocol] = ApiProtocol.CHAT
    provider: ClassVar[Provider] = Provider.OPENAI

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._template: dict[str, Any] = {}
        self._finish_seen = False
        self._legacy = False
        self._text_sent = False
        self._reasoning_key = "reasoning_content"  # OpenRouter spells it "reasoning"
        self._calls_sent = 0

    def _chunk(
        self,
        name: str | None,
        data: str,
        chunk: dict[str, Any],
        events: list[StreamEvent],
        out: list[bytes],
    ) -> None:
        choices = chunk.get("choices")
        if not self._template.get("id") and choices:
            # the first chunk with choices (Azure's first chunk has none, and an empty id)
            self._template = {k: chunk[k] for k in _TEMPLATE_KEYS if k in chunk}
        if self._finish_seen or (chunk.get("error") and not choices):
            self._hold((name, data))
            return
        if type(choices) is not list:
            out.append(sse_event(data, name))
            return
        followed = [c for c in choices if isinstance(c, dict) and (c.get("index") or 0) == 0]
        choice = followed[0] if followed else None
        delta = choice.get("delta") if choice is not None else None
        calls = isinstance(delta, dict) and ("tool_calls" in delta or "function_call" in delta)
        reason = choice.get("finish_reason") if choice is not None else None
        rewritten = False
        if self.text_calls and isinstance(delta, dict):
            # The text the text-call stage left (markup removed), not the upstream's.
            released, reasoning = self._take()
            new = self._with_text(delta, released, reasoning)
            if new is not delta:
                assert choice is not None
                delta, rewritten = new, True
                choice = {**choice, "delta": delta}
                choices = [choice if c is followed[0] else c for c in choices]
        if isinstance(delta, dict) and (delta.get("content") or delta.get(self._reasoning_key)):
            self._text_sent = True
        if not calls and not reason and not rewritten:
            out.append(sse_event(data, name))
            return
        assert choice is not None
        if isinstance(delta, dict) and "function_call" in delta:
            self._legacy = True
        # Rewrite: the chunk without its tool-call pieces.
        kept = (
            {k: v for k, v in delta.items() if k not in ("tool_calls", "function_call")}
            if (isinstance(delta, dict))
            else {}
        )
        if reason:
            self._finish_seen = True
            if isinstance(reason, str):
                self.upstream_stop = reason
            text = {k: v for k, v in kept.items() if k in _TEXT_KEYS}
            if any(text.values()):
                now = dict(chunk)
                now["choices"] = [{**choice, "delta": {**kept}, "finish_reason": None}]
                now.pop("usage", None)
                out.append(sse_event(compact_json(now), name))
                kept = {}
            held = dict(chunk)
            held["choices"] = [
                {**c, "delta": kept} if c is choice else c for c in choices if isinstance(c, dict)
            ]
            self._hold((name, compact_json(held)))
            return
        nothing = not kept or (self.text_calls and _empty(kept))
        if nothing and len(choices) == 1 and not chunk.get("usage"):
            return  # only tool-call pieces (or markup): nothing to send now
        now = dict(chunk)
        now["choices"] = [{**c, "delta": kept} if c is choice else c for c in choices]
        out.append(sse_event(compact_json(now), name))

    def _passes(self, name: str | None, data: str, chunk: dict[str, Any], out: list[bytes]) -> bool:
        # What _chunk does with a chunk of the followed choice with neither a finish
        # reason nor usage: text passes as it came, a delta of only a call's piece sends
        # nothing. Not before the stream's id is known (the template), nor after the
        # finish reason (held).
        if self._finish_seen or not self._template.get("id"):
            return False
        choices = chunk.get("choices")
        choice = choices[0] if type(choices) is list and choices else None
        followed = type(choice) is dict and (choice.get("index") or 0) == 0
        if self.stream.feed_text_only(chunk):
            assert choice is not None  # the core took it: one choice, with a dict delta
            delta = choice["delta"]
            if followed and (delta.get("content") or delta.get(self._reasoning_key)):
                self._text_sent = True
            out.append(sse_event(data, name))
            return True
        return followed and self._holds_arguments and self.stream.feed_arguments_only(chunk)

    def _with_text(self, delta: dict[str, Any], text: str, reasoning: str) -> dict[str, Any]:
        """``delta`` with the content and reasoning the text-call stage released for it
        (the same object when they are what the upstream sent)."""
        key = self._reasoning_key
        if "reasoning" in delta and "reasoning_content" not in delta:
            key = self._reasoning_key = "reasoning"
        content, thought = delta.get("content"), delta.get(key)
        if (content if type(content) is str else "") == text and (
            thought if type(thought) is str else ""
        ) == reasoning:
            return delta
        new = dict(delta)
        if text or type(content) is str:
            new["content"] = text
        if reasoning or type(thought) is str:
            new[key] = reasoning
        return new

    def _turn_state(self, done: Done) -> tuple[str | None, tuple[dict[str, Any], ...]]:
        message = done.messages[0] if done.messages else {}
        reasoning = message.get("reasoning_content")
        return (reasoning if isinstance(reasoning, str) else None), ()

    # -- the end: the pieces of Relay._ending -------------------------------------------------

    def _end_chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        """A chunk of the end: ``delta`` in choice 0, with the stream's id and model."""
        base = dict(self._template)
        base.setdefault("object", "chat.completion.chunk")
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse_event(compact_json({**base, "choices": [choice]}))

    def _late_text(self, out: list[bytes], pieces: list[tuple[bool, str]]) -> None:
        text, reasoning = _late_text(pieces)
        if text or reasoning:  # held by the text-call stage until the end
            late: dict[str, Any] = {}
            if reasoning:
                late[self._reasoning_key] = reasoning
            if text:
                late["content"] = text
                self._text_sent = True
            out.append(self._end_chunk(late))

    def _send_call(self, out: list[bytes], ready: ToolCallReady, arguments: str) -> None:
        function = {"name": ready.name, "arguments": arguments}
        if self._legacy:
            delta: dict[str, Any] = {"function_call": function}
        else:
            call = {"index": self._calls_sent, "id": ready.call_id, "type": "function"}
            delta = {"tool_calls": [{**call, "function": function}]}
        self._calls_sent += 1
        out.append(self._end_chunk(delta))

    def _send_notice(self, out: list[bytes], number: int, text: str) -> None:
        if self._text_sent:
            text = "\n\n" + text
        self._text_sent = True
        out.append(self._end_chunk({"content": text}))

    def _stops(self) -> tuple[str, str]:
        return ("function_call" if self._legacy else "tool_calls"), "stop"

    def _send_tail(self, out: list[bytes], stop: str | None) -> None:
        tool = self._stops()[0]
        if not self._finish_seen and stop == tool and self._calls_sent:
            # No stop reason came (OpenRouter sends none), but calls were sent: say so,
            # or a harness that runs calls only on `tool_calls` drops them.
            out.append(self._end_chunk({}, tool))
        for name, data in self.tail.events:
            if stop != self.upstream_stop and '"finish_reason"' in data:
                data = _with_finish(data, stop)
            out.append(sse_event(data, name))


def _empty(delta: dict[str, Any]) -> bool:
    """Whether a delta carries nothing (no key, or only empty text and nulls)."""
    return all(value is None or value == "" for value in delta.values())


def _late_text(pieces: list[tuple[bool, str]]) -> tuple[str, str]:
    text = "".join(t for r, t in pieces if not r)
    reasoning = "".join(t for r, t in pieces if r)
    return text, reasoning


def _with_finish(data: str, stop: str | None) -> str:
    try:
        chunk = json.loads(data)
    except ValueError:
        return data
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    if not isinstance(choices, list):
        return data
    for choice in choices:
        if (
            isinstance(choice, dict)
            and (choice.get("index") or 0) == 0
            and choice.get("finish_reason")
        ):
            choice["finish_reason"] = stop
    return compact_json(chunk)


# -- whole bodies ----------------------------------------------------------------------------

_BODY_TEMPLATE: Final = ("id", "created", "model", "system_fingerprint")


def _message(body: dict[str, Any]) -> dict[str, Any] | None:
    """The message of the one choice, when it has calls."""
    choices = body.get("choices")
    if not isinstance(choices, list) or len(choices) != 1:
        return None
    choice = choices[0]
    if not isinstance(choice, dict) or (choice.get("index") or 0) != 0:
        return None
    message = choice.get("message")
    if not isinstance(message, dict):
        return None
    if message.get("tool_calls") or message.get("function_call"):
        return message
    return None


def _body_events(body: dict[str, Any]) -> list[tuple[str | None, str]] | None:
    message = _message(body)
    if message is None:
        return None
    head: dict[str, Any] = {k: body[k] for k in _BODY_TEMPLATE if k in body}
    head["object"] = "chat.completion.chunk"
    delta = dict(message)
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        delta["tool_calls"] = [
            {**call, "index": k} for k, call in enumerate(calls) if isinstance(call, dict)
        ]
    chunks = [{**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}]
    reason = body["choices"][0].get("finish_reason")
    if isinstance(reason, str) and reason:
        chunks.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
    events: list[tuple[str | None, str]] = [(None, compact_json(c)) for c in chunks]
    return [*events, (None, "[DONE]")]


def _rewrite_body(relay: Relay, body: dict[str, Any]) -> dict[str, Any]:
    choice = dict(body["choices"][0])
    message = dict(choice["message"])
    verdicts = relay.verdicts
    refusals = relay.refusal_calls()
    calls = message.get("tool_calls")
    legacy = not calls and bool(message.get("function_call"))
    if legacy:
        going = [
            v if isinstance(v, ToolCallReady) else refusals[v.call_id]
            for v in verdicts
            if isinstance(v, ToolCallReady) or v.call_id in refusals
        ]
        if going:
            message["function_call"] = _function(message["function_call"], going[0])
        else:
            del message["function_call"]
    elif isinstance(calls, list):
        kept: list[Any] = []
        for k, call in enumerate(calls):
            if not isinstance(call, dict):
                kept.append(call)
                continue
            for verdict in relay.verdicts_at(k):
                if not isinstance(verdict, ToolCallReady):
                    if verdict.call_id not in refusals:
                        continue
                    verdict = refusals[verdict.call_id]  # what goes out for it
                entry = dict(call)
                if verdict.call_id != verdict.origin_id:
                    entry["id"] = verdict.call_id
                entry["function"] = _function(call.get("function"), verdict)
                kept.append(call if entry == call else entry)
        if kept:
            message["tool_calls"] = kept
        else:
            del message["tool_calls"]
    refused = relay.refused()
    notices = [notice_text(v) for v in refused] if not refusals else []
    if notices:
        content = message.get("content")
        text = "\n\n".join(notices)
        message["content"] = (
            f"{content}\n\n{text}" if isinstance(content, str) and content else text
        )
    tool = "function_call" if legacy else "tool_calls"
    sent = bool(message.get("function_call") if legacy else message.get("tool_calls"))
    stop = closing_stop(
        relay.upstream_stop, calls_sent=sent, withheld=bool(refused), tool=tool, stop="stop"
    )
    if stop != relay.upstream_stop:
        choice["finish_reason"] = stop
    choice["message"] = message
    return {**body, "choices": [choice]}


def _function(function: object, ready: ToolCallReady) -> dict[str, Any]:
    """A call's ``function`` with the ready call's name and argument text (its own
    arguments kept when they are that value already)."""
    out = dict(function) if isinstance(function, dict) else {}
    out["name"] = ready.name
    before = out.get("arguments")
    # Arguments sent as an object (Ollama, MiniMax) that is the value already stay so.
    changed = ready.repairs or ready.schema_repairs or before != ready.arguments
    if isinstance(before, str) or changed:
        out["arguments"] = argument_text(ready)
    return out


def _memos(body: dict[str, Any]) -> list[CallMemo]:
    """The reasoning of a body passed through unread, on its first call."""
    choices = body.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        return []
    reasoning = message.get("reasoning_content")
    calls = [
        (c.get("id"), (c.get("function") or {}).get("name"))
        for c in message.get("tool_calls") or ()
        if isinstance(c, dict) and isinstance(c.get("function"), dict)
    ]
    return turn_memos(calls, reasoning=reasoning if isinstance(reasoning, str) else None)


# -- requests ----------------------------------------------------------------------------------


def _follows(body: Mapping[str, Any]) -> bool:
    n = body.get("n")
    return not (isinstance(n, int) and n > 1)


def _referenced_calls(body: Mapping[str, Any]) -> list[str]:
    ids: dict[str, None] = {}
    for message in dicts(body.get("messages")):
        for call in dicts(message.get("tool_calls")):
            add_id(ids, call.get("id"))
        if message.get("role") == "tool":
            add_id(ids, message.get("tool_call_id"))
    return list(ids)


def _before(
    body: dict[str, Any],
    memos: Mapping[str, CallMemo],
    policy: ReasoningPolicy,
    counts: dict[str, int],
) -> bool:
    messages = body["messages"]
    if not all(isinstance(m, dict) for m in messages):
        return False
    changed = False
    answers: dict[int, list[dict[str, Any]]] = {}  # insert after index -> tool messages
    for problem in check_history(messages, policy=policy):
        message = messages[problem.index]
        if problem.kind is ProblemKind.MISSING_REASONING:
            found = next(
                (
                    memos[c["id"]].reasoning
                    for c in dicts(message.get("tool_calls"))
                    if c.get("id") in memos and memos[c["id"]].reasoning is not None
                ),
                None,
            )
            if found is not None:  # else the rules below back-fill ""
                message["reasoning_content"] = found
                count(counts, "reasoning_restored")
                changed = True
        elif problem.kind is ProblemKind.UNANSWERED_CALL and problem.call_id is not None:
            call = next(
                (c for c in dicts(message.get("tool_calls")) if c.get("id") == problem.call_id),
                {},
            )
            function = call.get("function") if isinstance(call.get("function"), dict) else {}
            assert isinstance(function, dict)
            end = problem.index + 1
            while end < len(messages) and messages[end].get("role") == "tool":
                end += 1
            answers.setdefault(end - 1, []).append(
                {
                    "role": "tool",
                    "tool_call_id": problem.call_id,
                    "content": not_started(
                        problem.call_id, str(function.get("name") or ""), function.get("arguments")
                    ),
                }
            )
            count(counts, "unanswered_call_answered")
            changed = True
    insert_after(messages, answers)
    return changed


def _answers(messages: list[Any]) -> Iterator[Answer]:
    """Each ``tool`` message."""
    for i, message in enumerate(messages):
        if isinstance(message, dict) and message.get("role") == "tool":
            yield _answer(messages, i, message)


def _answer(messages: list[Any], i: int, message: dict[str, Any]) -> Answer:
    def replace(content: Any) -> None:
        messages[i] = {**message, "content": content}

    return Answer(
        call_id=message.get("tool_call_id", ""),
        content=message.get("content"),
        earlier=lambda: messages[:i],
        replace=replace,
    )


def _calls(messages: list[Any]) -> Iterator[CallSite]:
    """Each entry of an assistant message's ``tool_calls``."""
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        for k, call in enumerate(dicts(message.get("tool_calls"))):
            function = call.get("function")
            name = function.get("name") if isinstance(function, dict) else None
            yield CallSite(call_id=call.get("id"), name=name, restore=_restorer(messages, i, k))


def _restorer(messages: list[Any], i: int, k: int) -> Callable[[str, str], None]:
    def restore(name: str, arguments: str) -> None:
        message = messages[i]  # as earlier restores left it
        calls = list(message["tool_calls"])
        function = calls[k].get("function")
        base = function if isinstance(function, dict) else {}
        calls[k] = {**calls[k], "function": {**base, "name": name, "arguments": arguments}}
        messages[i] = {**message, "tool_calls": calls}

    return restore


_API: Final = Api(
    protocol=ApiProtocol.CHAT,
    relay=ChatRelay,
    path="/chat/completions",
    follows=_follows,
    key_header="authorization",
    error_body=openai_error,
    body_events=_body_events,
    rewrite_body=_rewrite_body,
    history="messages",
    referenced_calls=_referenced_calls,
    before=_before,
    answers=_answers,
    calls=_calls,
    note_part="text",
    memos=_memos,
)
