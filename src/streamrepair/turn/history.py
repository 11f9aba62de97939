"""What an API accepts in a Chat Completions history: the reasoning policies, the
list to send (:func:`prepare_messages`) and the histories that get HTTP 400
(:func:`check_history`).

DeepSeek's thinking mode wants ``reasoning_content`` back on assistant messages that
called tools, even ``""``, or answers 400 ("The reasoning_content in the thinking mode
must be passed back to the API"); the old R1 answered 400 to any ``reasoning_content``
sent back; gateways reject a null ``content``. The rules changed between model
generations, so they are a :class:`ReasoningPolicy` chosen from the model name. Nothing
here keeps state or does I/O; :class:`~streamrepair.Conversation` applies it on each
``messages()`` call, and harnesses with their own list call it directly.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..errors import UnsupportedChunkError
from ..providers.normalizer import as_chunk

__all__ = [
    "HistoryProblem",
    "ProblemKind",
    "ReasoningPolicy",
    "check_history",
    "copy_json",
    "prepare_messages",
]

_R1_NAME: Final = re.compile(r"(?:^|[-_.:/ ])r1(?:$|[-_.:/ ])")


class ReasoningPolicy(enum.Enum):
    """What happens to ``reasoning_content`` on earlier assistant messages when they are
    sent back. Choose with :meth:`for_model`, or name one to override it.

    ``content`` and ``tool_calls`` are never touched by a policy; only the
    ``reasoning_content`` key of assistant messages is.
    """

    #: DeepSeek V4 / current thinking mode (api-docs.deepseek.com/guides/thinking_mode):
    #: an assistant message that called tools keeps its ``reasoning_content`` in every
    #: later request, ``""`` when none was streamed; one that called no tools sends none
    #: (the API ignores it). Without tool calls this sends no reasoning at all.
    KEEP_FOR_TOOL_CALLS = "keep_for_tool_calls"
    #: The thinking-mode guide of Dec 2025 (seed ``000``, closer-code): as
    #: :attr:`KEEP_FOR_TOOL_CALLS` within the current user turn, and every
    #: ``reasoning_content`` before the last user message is dropped to save bandwidth.
    #: Only where the model allows it: V4 answers 400 to the dropped tool-call reasoning.
    CLEAR_ON_USER_TURN = "clear_on_user_turn"
    #: The old ``deepseek-reasoner`` (R1): passing ``reasoning_content`` back is a 400.
    NEVER_SEND = "never_send"
    #: Models with no such rule: send what the provider streamed, add nothing.
    AS_RECEIVED = "as_received"

    @classmethod
    def for_model(cls, model: str) -> ReasoningPolicy:
        """The policy for a model name (case and any ``provider/`` prefix ignored).

        * DeepSeek R1 names (``deepseek-r1``, ``deepseek-ai/DeepSeek-R1``,
          ``deepseek-r1:14b``, ``DeepSeek-R1-Distill-...``): :attr:`NEVER_SEND`;
        * every other DeepSeek name (``deepseek-v4-flash``, ``deepseek-v4-pro``,
          ``deepseek-chat``, ``deepseek-reasoner``, ``deepseek-v3.2``):
          :attr:`KEEP_FOR_TOOL_CALLS`. ``deepseek-reasoner`` is served by the thinking
          mode that calls tools (recorded streams of Dec 2025; zed's "Missing
          `reasoning_content` field in the assistant message" with DeepSeek Reasoner
          and tools), and this policy sends no reasoning on messages without tool
          calls, which is R1's rule for R1's tool-less conversations;
        * anything else: :attr:`AS_RECEIVED`.
        """
        if not isinstance(model, str):
            raise TypeError(f"model must be a str, not {type(model).__name__}")
        name = model.strip().lower()
        if "deepseek" not in name:
            return cls.AS_RECEIVED
        if _R1_NAME.search(name):
            return cls.NEVER_SEND
        return cls.KEEP_FOR_TOOL_CALLS


class ProblemKind(enum.Enum):
    """Why an API rejects a history (see :func:`check_history`)."""

    #: A call id with no tool message before the next non-tool message (or the end).
    UNANSWERED_CALL = "unanswered_call"
    #: A tool message whose id is not a call of the assistant message before it.
    ORPHAN_TOOL_MESSAGE = "orphan_tool_message"
    #: A second tool message for the same call.
    DUPLICATE_ANSWER = "duplicate_answer"
    #: An assistant message whose ``content`` is null or missing.
    NULL_CONTENT = "null_content"
    #: The policy needs ``reasoning_content`` (a string) on this message and it has none.
    MISSING_REASONING = "missing_reasoning"
    #: The policy forbids ``reasoning_content`` and this message has one.
    REASONING_SENT = "reasoning_sent"
    #: Not a message the API can read (no role, a call without an id, a repeated id).
    MALFORMED = "malformed"


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryProblem:
    """One reason a history would be rejected: the message ``index``, the ``call_id``
    concerned (if any) and a readable ``message``."""

    kind: ProblemKind
    index: int
    message: str
    call_id: str | None = None


def copy_json(value: Any) -> Any:
    """A deep copy of JSON-like data (mappings become dicts, sequences lists)."""
    if isinstance(value, Mapping):
        return {str(k): copy_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [copy_json(v) for v in value]
    return value


def _as_message(item: object) -> dict[str, Any]:
    if isinstance(item, Mapping):
        return copy_json(item)  # type: ignore[no-any-return]
    try:
        return copy_json(as_chunk(item))  # type: ignore[no-any-return]
    except UnsupportedChunkError:
        raise TypeError(f"a message must be a mapping, not {type(item).__name__}") from None


def _last_user(messages: list[dict[str, Any]]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    return -1


def _needs_reasoning(policy: ReasoningPolicy, index: int, last_user: int) -> bool | None:
    """True: must carry reasoning; False: must not; None: either (for a tool-calling
    assistant message at ``index``)."""
    if policy is ReasoningPolicy.KEEP_FOR_TOOL_CALLS:
        return True
    if policy is ReasoningPolicy.CLEAR_ON_USER_TURN:
        return True if index > last_user else None
    if policy is ReasoningPolicy.NEVER_SEND:
        return False
    return None


def prepare_messages(
    messages: Iterable[Mapping[str, Any] | object], *, policy: ReasoningPolicy
) -> list[dict[str, Any]]:
    """The list to send: fresh copies of ``messages`` with ``policy`` applied.

    For harnesses that keep their own list. Each item is a message dict (or an SDK
    message object with ``to_dict()``/``model_dump()``); nothing passed is modified. On
    assistant messages only: a null or missing ``content`` becomes ``""``, and
    ``reasoning_content`` is kept, back-filled with ``""`` or dropped as the policy says
    (see :class:`ReasoningPolicy`). Everything else is copied as is.
    """
    if not isinstance(policy, ReasoningPolicy):
        raise TypeError("policy must be a ReasoningPolicy")
    out = [_as_message(item) for item in messages]
    last_user = _last_user(out)
    for i, message in enumerate(out):
        if message.get("role") != "assistant":
            continue
        if message.get("content") is None:
            message["content"] = ""
        if policy is ReasoningPolicy.AS_RECEIVED:
            continue
        keep = bool(message.get("tool_calls")) and _needs_reasoning(policy, i, last_user)
        if not keep:
            message.pop("reasoning_content", None)
        elif message.get("reasoning_content") is None:
            message["reasoning_content"] = ""
    return out


def check_history(
    messages: Iterable[Mapping[str, Any] | object], *, policy: ReasoningPolicy
) -> tuple[HistoryProblem, ...]:
    """Every reason the history would be rejected, in message order (empty: none).

    Checks the call/answer pairing (:attr:`ProblemKind.UNANSWERED_CALL`,
    ``ORPHAN_TOOL_MESSAGE``, ``DUPLICATE_ANSWER``), null assistant content and, by
    ``policy``, ``reasoning_content``: ``KEEP_FOR_TOOL_CALLS`` needs a string on every
    assistant message that called tools, ``CLEAR_ON_USER_TURN`` on those after the last
    user message, ``NEVER_SEND`` forbids it everywhere. Nothing passed is modified.
    """
    if not isinstance(policy, ReasoningPolicy):
        raise TypeError("policy must be a ReasoningPolicy")
    items = [_as_message(item) for item in messages]
    last_user = _last_user(items)
    problems: list[HistoryProblem] = []
    open_calls: dict[str, int] = {}  # calls of the last assistant message not answered yet
    answered: set[str] = set()

    def report(kind: ProblemKind, index: int, text: str, call_id: str | None = None) -> None:
        problems.append(HistoryProblem(kind=kind, index=index, message=text, call_id=call_id))

    def close_block() -> None:
        for call_id, index in open_calls.items():
            report(ProblemKind.UNANSWERED_CALL, index, f"call {call_id!r} has no answer", call_id)
        open_calls.clear()
        answered.clear()

    for i, message in enumerate(items):
        role = message.get("role")
        if role == "tool":
            raw_id = message.get("tool_call_id")
            key = raw_id if isinstance(raw_id, str) else repr(raw_id)
            if key in open_calls:
                del open_calls[key]
                answered.add(key)
            elif key in answered:
                report(ProblemKind.DUPLICATE_ANSWER, i, f"{key!r} is answered twice", key)
            else:
                text = f"tool message for {key!r} answers no call of the message before it"
                report(ProblemKind.ORPHAN_TOOL_MESSAGE, i, text, key)
            continue
        close_block()
        if not isinstance(role, str):
            report(ProblemKind.MALFORMED, i, "a message without a role")
            continue
        if role != "assistant":
            continue
        if message.get("content") is None:
            report(ProblemKind.NULL_CONTENT, i, 'assistant content is null; send ""')
        calls = message.get("tool_calls") or []
        for call in calls if isinstance(calls, list) else [calls]:
            call_id = call.get("id") if isinstance(call, Mapping) else None
            if not isinstance(call_id, str) or not call_id or call_id in open_calls:
                report(ProblemKind.MALFORMED, i, f"a tool call without a unique id: {call!r}")
            else:
                open_calls[call_id] = i
        if policy is ReasoningPolicy.NEVER_SEND and "reasoning_content" in message:
            report(ProblemKind.REASONING_SENT, i, "this model rejects reasoning_content")
        elif (
            calls
            and _needs_reasoning(policy, i, last_user)
            and not isinstance(message.get("reasoning_content"), str)
        ):
            text = "The reasoning_content in the thinking mode must be passed back to the API."
            report(ProblemKind.MISSING_REASONING, i, text)
    close_block()
    return tuple(problems)
