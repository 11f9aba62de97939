"""What an API accepts in a history, for Chat Completions, Anthropic Messages and the
Responses API: the reasoning policies, the list to send and the histories that get
HTTP 400.

Three pure functions, each taking a list of messages (or Responses items) in one
protocol (``provider``: ``"openai"`` for Chat Completions, the default, ``"anthropic"``
or ``"responses"``), never modifying it, doing no I/O and keeping no state:

* :func:`repair_history`: the list to send (fresh copies), every change made and the
  problems left (what no rule can fix without guessing);
* :func:`prepare_messages`: only the list to send;
* :func:`check_history`: only the problems of the list as given.

:class:`~streamrepair.Conversation` applies them on each ``messages()`` call; a harness
that keeps its own list, or a proxy holding a raw request body, calls them directly.
What each protocol checks is in its module (``_chat_history.py``,
``_anthropic_history.py``, ``_responses_history.py``); the policies and the user-turn
rule they share are in ``_rules.py``.

Invariant: a repair changes only what the API rejects and what the policy names
(null content, reasoning, unsigned thinking, empty blocks); content, calls and answers
are never rewritten, and what cannot be fixed without inventing (a missing signature, a
call with no answer) is reported, not made up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..providers.normalizer import Provider
from . import _anthropic_history, _chat_history, _responses_history
from ._rules import (
    ChangeKind,
    HistoryChange,
    HistoryProblem,
    HistoryRepair,
    ProblemKind,
    ReasoningPolicy,
    Report,
    as_message,
    check_policy,
    copy_json,
    history_provider,
)

__all__ = [
    "ChangeKind",
    "HistoryChange",
    "HistoryProblem",
    "HistoryRepair",
    "ProblemKind",
    "ReasoningPolicy",
    "check_history",
    "copy_json",
    "prepare_messages",
    "repair_history",
]

_Messages = Iterable[Mapping[str, Any] | object]


def _sorted(problems: list[HistoryProblem]) -> tuple[HistoryProblem, ...]:
    return tuple(sorted(problems, key=lambda p: (p.index, -1 if p.block is None else p.block)))


def _repair(
    items: list[dict[str, Any]], policy: ReasoningPolicy, provider: Provider, report: Report
) -> list[dict[str, Any]]:
    if provider is Provider.ANTHROPIC:
        return _anthropic_history.repair(items, policy, report)
    if provider is Provider.RESPONSES:
        return _responses_history.repair(items, policy, report)
    _chat_history.repair(items, policy, report)
    return items


def _check(
    items: list[dict[str, Any]], policy: ReasoningPolicy, provider: Provider
) -> tuple[HistoryProblem, ...]:
    report = Report()
    if provider is Provider.ANTHROPIC:
        _anthropic_history.check(items, policy, report)
    elif provider is Provider.RESPONSES:
        _responses_history.check(items, policy, report)
    else:
        _chat_history.check(items, policy, report)
    return _sorted(report.problems)


def repair_history(
    messages: _Messages,
    *,
    policy: ReasoningPolicy,
    provider: Provider | str | None = None,
) -> HistoryRepair:
    """The history to send, with every change reported and the problems left.

    ``messages`` are message dicts (or Responses input items), or SDK objects with
    ``to_dict()``/``model_dump()``; nothing passed is modified. ``provider`` names the
    protocol (``"openai"``, the default: Chat Completions; ``"anthropic"``;
    ``"responses"``). The changes, each a :class:`HistoryChange`:

    * every protocol: reasoning kept, dropped or (Chat only) back-filled with ``""`` as
      ``policy`` says (see :class:`ReasoningPolicy`);
    * Chat Completions: a null or missing assistant ``content`` becomes ``""``;
    * Anthropic: a thinking block without a signature, an empty text block, and an
      assistant message left with nothing (other than the last) are left out.

    Everything else is copied as is. ``problems`` are :func:`check_history` of the
    result.
    """
    policy = check_policy(policy)
    protocol = history_provider(provider)
    report = Report()
    items = _repair([as_message(m) for m in messages], policy, protocol, report)
    return HistoryRepair(
        messages=items,
        changes=tuple(report.changes),
        problems=_check(items, policy, protocol),
    )


def prepare_messages(
    messages: _Messages,
    *,
    policy: ReasoningPolicy,
    provider: Provider | str | None = None,
) -> list[dict[str, Any]]:
    """The list to send: :attr:`HistoryRepair.messages` of :func:`repair_history`.

    For harnesses that keep their own list (fresh copies; nothing passed is modified).
    On Chat Completions assistant messages: a null or missing ``content`` becomes
    ``""``, and ``reasoning_content`` is kept, back-filled with ``""`` or dropped as the
    policy says. See :func:`repair_history` for the other protocols.
    """
    policy = check_policy(policy)
    protocol = history_provider(provider)
    return _repair([as_message(m) for m in messages], policy, protocol, Report())


def check_history(
    messages: _Messages,
    *,
    policy: ReasoningPolicy,
    provider: Provider | str | None = None,
) -> tuple[HistoryProblem, ...]:
    """Every reason the history would be rejected, in message order (empty: none).

    Every protocol: the call/answer pairing (:attr:`ProblemKind.UNANSWERED_CALL`,
    ``ORPHAN_TOOL_MESSAGE``, ``DUPLICATE_ANSWER``), ``MALFORMED`` messages, and by
    ``policy`` the reasoning: ``KEEP_FOR_TOOL_CALLS`` needs it on every assistant
    message of a user turn that called tools (the final answer included),
    ``CLEAR_ON_USER_TURN`` on those of the last user turn, ``NEVER_SEND`` forbids it
    (``MISSING_REASONING``, ``REASONING_SENT``). Chat Completions: ``NULL_CONTENT``.
    Anthropic: ``RESULTS_NOT_FIRST``, ``EMPTY_CONTENT``, ``UNSIGNED_THINKING``.
    Responses: ``REASONING_WITHOUT_ITEM``. Nothing passed is modified.
    """
    policy = check_policy(policy)
    protocol = history_provider(provider)
    return _check([as_message(m) for m in messages], policy, protocol)
