"""The vocabulary of history rules, shared by the three protocols' checks.

A history (Chat Completions ``messages``, Anthropic Messages ``messages``, Responses
``input``) is split into *user turns*: each starts at a message the user wrote (for
Anthropic, a user message that is not only ``tool_result`` blocks) and runs to the next
one; what comes before the first is turn ``-1``. DeepSeek's thinking-mode rule is stated
per user turn (api-docs.deepseek.com/guides/thinking_mode): "between two user messages,
if the model performed a tool call, the intermediate assistant's reasoning_content must
participate in the context concatenation and must be passed back to the API in all
subsequent user interaction turns"; its tool-call sample appends every sub-turn's
assistant message unchanged, the final answer included. So the reasoning of *every*
assistant message of a turn that called tools goes back, not only of the ones that carry
calls. :func:`reasoning_rule` turns a :class:`ReasoningPolicy` and a message's turn into
what happens to its reasoning. Nothing here keeps state or does I/O.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..errors import UnsupportedChunkError
from ..providers.normalizer import Provider, as_chunk

__all__ = [
    "ChangeKind",
    "HistoryChange",
    "HistoryProblem",
    "HistoryRepair",
    "ProblemKind",
    "ReasoningPolicy",
    "copy_json",
]

_R1_NAME: Final = re.compile(r"(?:^|[-_.:/ ])r1(?:$|[-_.:/ ])")


class ReasoningPolicy(enum.Enum):
    """What happens to the reasoning of earlier assistant messages when they are sent
    back: Chat Completions ``reasoning_content``, Anthropic ``thinking`` and
    ``redacted_thinking`` blocks, Responses ``reasoning`` items. Choose with
    :meth:`for_model`, or name one to override it.

    A policy touches only reasoning; ``content``, calls and answers are never changed by
    it. Only Chat Completions reasoning can be back-filled (``""``); thinking blocks and
    reasoning items are signed or encrypted by the provider, so a missing one is reported
    (:attr:`ProblemKind.MISSING_REASONING`), never invented.
    """

    #: DeepSeek V4 / current thinking mode (api-docs.deepseek.com/guides/thinking_mode):
    #: in a user turn where the model called tools, every assistant message (the final
    #: answer included) keeps its reasoning in every later request, ``""`` when none was
    #: streamed; in a turn without tool calls no reasoning is sent (the API ignores it).
    KEEP_FOR_TOOL_CALLS = "keep_for_tool_calls"
    #: The thinking-mode guide of Dec 2025 (seed ``000``, closer-code): as
    #: :attr:`KEEP_FOR_TOOL_CALLS` within the current user turn, and every reasoning
    #: before the last user message is dropped to save bandwidth. Only where the model
    #: allows it: V4 answers 400 to the dropped tool-call reasoning.
    CLEAR_ON_USER_TURN = "clear_on_user_turn"
    #: The old ``deepseek-reasoner`` (R1): passing ``reasoning_content`` back is a 400.
    NEVER_SEND = "never_send"
    #: Models with no such rule (OpenAI, Anthropic's Claude): send what the provider
    #: streamed, add and drop nothing.
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
          and tools), and this policy sends no reasoning in turns without tool calls,
          which is R1's rule for R1's tool-less conversations;
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
    """Why an API rejects a history (see :func:`~streamrepair.check_history`)."""

    #: A call with no answer where the API looks for one: Chat, a tool message before the
    #: next non-tool message; Anthropic, a ``tool_result`` in the next user message;
    #: Responses, a ``function_call_output`` anywhere after it.
    UNANSWERED_CALL = "unanswered_call"
    #: An answer (tool message, ``tool_result``, ``function_call_output``) whose id is
    #: not a call where the API looks for it.
    ORPHAN_TOOL_MESSAGE = "orphan_tool_message"
    #: A second answer for the same call.
    DUPLICATE_ANSWER = "duplicate_answer"
    #: A Chat Completions assistant message whose ``content`` is null or missing.
    NULL_CONTENT = "null_content"
    #: The policy needs this message's reasoning and it has none.
    MISSING_REASONING = "missing_reasoning"
    #: The policy forbids reasoning and this message has some.
    REASONING_SENT = "reasoning_sent"
    #: Not a message the API can read (no role, a call without an id, a repeated id).
    MALFORMED = "malformed"
    #: Anthropic: a ``tool_result`` after another kind of block in its user message
    #: ("tool_result blocks must come first").
    RESULTS_NOT_FIRST = "results_not_first"
    #: Anthropic: an empty message other than a final assistant message, or an empty
    #: text block.
    EMPTY_CONTENT = "empty_content"
    #: Anthropic: a thinking block without its ``signature`` (a stream cut off inside it).
    UNSIGNED_THINKING = "unsigned_thinking"
    #: Responses: a ``reasoning`` item with no output item after it in its response.
    REASONING_WITHOUT_ITEM = "reasoning_without_item"


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryProblem:
    """One reason a history would be rejected: the message (or item) ``index``, the
    content ``block`` index for Anthropic (else None), the ``call_id`` concerned (if
    any) and a readable ``message``."""

    kind: ProblemKind
    index: int
    message: str
    call_id: str | None = None
    block: int | None = None


class ChangeKind(enum.Enum):
    """What :func:`~streamrepair.repair_history` changed to make a history acceptable."""

    #: A null or missing Chat Completions assistant ``content`` became ``""``.
    CONTENT_FILLED = "content_filled"
    #: ``reasoning_content: ""`` added where the policy needs reasoning and none came.
    REASONING_FILLED = "reasoning_filled"
    #: Reasoning (a key, thinking blocks, a reasoning item) left out as the policy says.
    REASONING_DROPPED = "reasoning_dropped"
    #: An Anthropic thinking block without a signature left out: the API cannot take it.
    UNSIGNED_THINKING_DROPPED = "unsigned_thinking_dropped"
    #: An empty Anthropic text block left out.
    EMPTY_BLOCK_DROPPED = "empty_block_dropped"
    #: An Anthropic assistant message left empty (not the last message) left out.
    EMPTY_MESSAGE_DROPPED = "empty_message_dropped"


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryChange:
    """One change: its kind, the ``index`` of the message (or item) in the list passed
    in, the content ``block`` index for Anthropic, and a readable ``message``."""

    kind: ChangeKind
    index: int
    message: str
    block: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryRepair:
    """What :func:`~streamrepair.repair_history` gives back: the ``messages`` to send
    (fresh copies), every ``change`` made, and the ``problems`` left in ``messages``
    (what no rule can fix without guessing: a call with no answer, a missing signature).
    Problem indexes refer to ``messages``; change indexes to the list passed in."""

    messages: list[dict[str, Any]]
    changes: tuple[HistoryChange, ...] = ()
    problems: tuple[HistoryProblem, ...] = ()

    @property
    def ok(self) -> bool:
        """True when no problem is left."""
        return not self.problems


def copy_json(value: Any) -> Any:
    """A deep copy of JSON-like data (mappings become dicts, sequences lists)."""
    if isinstance(value, Mapping):
        return {str(k): copy_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [copy_json(v) for v in value]
    return value


def as_message(item: object) -> dict[str, Any]:
    """A fresh dict copy of a message, item or SDK object (``to_dict()``/``model_dump()``)."""
    if isinstance(item, Mapping):
        return copy_json(item)  # type: ignore[no-any-return]
    try:
        return copy_json(as_chunk(item))  # type: ignore[no-any-return]
    except UnsupportedChunkError:
        raise TypeError(f"a message must be a mapping, not {type(item).__name__}") from None


def history_provider(provider: Provider | str | None) -> Provider:
    """The protocol a history is in: ``None`` is Chat Completions (``openai``)."""
    if provider is None:
        return Provider.OPENAI
    try:
        value = Provider(provider)
    except ValueError:
        raise ValueError(f"unknown provider {provider!r}") from None
    if value not in (Provider.OPENAI, Provider.ANTHROPIC, Provider.RESPONSES):
        raise ValueError(
            f"no history rules for {value.value!r}: histories are Chat Completions "
            "('openai'), Anthropic Messages ('anthropic') or Responses ('responses')"
        )
    return value


def check_policy(policy: object) -> ReasoningPolicy:
    if not isinstance(policy, ReasoningPolicy):
        raise TypeError("policy must be a ReasoningPolicy")
    return policy


class Rule(enum.Enum):
    """What happens to one assistant message's reasoning."""

    #: Must be sent (back-filled with ``""`` where the protocol allows it).
    REQUIRE = "require"
    #: Left out.
    DROP = "drop"
    #: Sent as received, whatever it is.
    LEAVE = "leave"


def reasoning_rule(policy: ReasoningPolicy, *, tool_turn: bool, last_turn: bool) -> Rule:
    """The rule for an assistant message in a turn that called tools (``tool_turn``) or
    not, and in the last user turn or an earlier one."""
    if policy is ReasoningPolicy.AS_RECEIVED:
        return Rule.LEAVE
    if policy is ReasoningPolicy.NEVER_SEND:
        return Rule.DROP
    if policy is ReasoningPolicy.CLEAR_ON_USER_TURN and not last_turn:
        return Rule.DROP
    return Rule.REQUIRE if tool_turn else Rule.DROP


class Turns:
    """The user turn of every message: ``turn[i]`` (``-1`` before the first user
    message), the turns in which a message called tools, and the last turn."""

    __slots__ = ("last", "tool_turns", "turn")

    def __init__(
        self,
        items: Iterable[Mapping[str, Any]],
        *,
        starts_turn: Callable[[Mapping[str, Any]], bool],
        calls_tools: Callable[[Mapping[str, Any]], bool],
    ) -> None:
        self.turn: list[int] = []
        self.tool_turns: set[int] = set()
        current = -1
        for item in items:
            if starts_turn(item):
                current += 1
            self.turn.append(current)
            if calls_tools(item):
                self.tool_turns.add(current)
        self.last = current

    def rule(self, policy: ReasoningPolicy, index: int) -> Rule:
        """The reasoning rule for the message at ``index``."""
        turn = self.turn[index]
        return reasoning_rule(
            policy, tool_turn=turn in self.tool_turns, last_turn=turn == self.last
        )


class Report:
    """Collects problems and changes in order (internal)."""

    __slots__ = ("changes", "problems")

    def __init__(self) -> None:
        self.problems: list[HistoryProblem] = []
        self.changes: list[HistoryChange] = []

    def problem(
        self,
        kind: ProblemKind,
        index: int,
        text: str,
        *,
        call_id: str | None = None,
        block: int | None = None,
    ) -> None:
        self.problems.append(
            HistoryProblem(kind=kind, index=index, message=text, call_id=call_id, block=block)
        )

    def change(self, kind: ChangeKind, index: int, text: str, *, block: int | None = None) -> None:
        self.changes.append(HistoryChange(kind=kind, index=index, message=text, block=block))


def text_id(value: object) -> str:
    """A call id as text for keys and messages (a non-string id is shown as its repr)."""
    return value if isinstance(value, str) else repr(value)
