"""OpenAI Responses API histories (the ``input`` list): what is sent back and what the API
answers with HTTP 400.

Items are input messages (``role`` ``user``, ``system``, ``developer``), the output items
of earlier responses sent back (``reasoning``, assistant ``message``, ``function_call``,
``custom_tool_call``, hosted tools' items) and the client's answers
(``function_call_output``, ``custom_tool_call_output``). Consecutive output items form
one response. The 400s:

* "No tool output found for function call <call_id>." and "No tool call found for
  function call output with call_id <call_id>." (every call answered once, after it);
* "Item 'rs_...' of type 'reasoning' was provided without its required following item."
  (a reasoning item is sent with the item that followed it in its response; the pairing
  is by item id, so output items go back with their ids);
* DeepSeek's thinking rule over this API: "The `reasoning_text` in the thinking mode must
  be passed back to the API." (rikkahub#1690).

With ``store=false`` a reasoning item is only usable with its ``encrypted_content``
(request ``include=["reasoning.encrypted_content"]``); the items are kept as received, so
it goes back when it came.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..providers.normalizer import responses_client_item
from ._rules import (
    ChangeKind,
    ProblemKind,
    ReasoningPolicy,
    Report,
    Rule,
    Turns,
    text_id,
)

MISSING_REASONING = "The reasoning_text in the thinking mode must be passed back to the API."
#: Each answer item -> the call item it answers (the client's, or a hosted call whose
#: output the server streamed after it).
ANSWERS = {
    "function_call_output": "function_call",
    "custom_tool_call_output": "custom_tool_call",
    "apply_patch_call_output": "apply_patch_call",
    "shell_call_output": "shell_call",
    "local_shell_call_output": "local_shell_call",
    "tool_search_output": "tool_search_call",
    "computer_call_output": "computer_call",
}
CALLS = tuple(ANSWERS.values())


def client_call(item: Mapping[str, Any]) -> bool:
    """True for a call item the client must answer: a function or custom tool call, or
    an item the client runs (not one the provider hosted)."""
    kind = item_type(item)
    if kind in ("function_call", "custom_tool_call"):
        return True
    return responses_client_item(kind, item) is not None


def answer_key(item: Mapping[str, Any]) -> Any:
    """The call id an answer item names (``local_shell_call_output`` calls it ``id``)."""
    if item_type(item) == "local_shell_call_output":
        return item.get("id")
    return item.get("call_id")


def item_type(item: Mapping[str, Any]) -> str | None:
    """The item's type; a bare ``{"role", "content"}`` is a ``message``."""
    kind = item.get("type")
    if isinstance(kind, str):
        return kind
    return "message" if "role" in item else None


def is_output(item: Mapping[str, Any]) -> bool:
    """True for items a response produced (sent back): not an input message and not an
    answer (``*_output``) or approval (``*_response``) the client wrote."""
    kind = item_type(item)
    if kind is None:
        return False
    if kind == "message":
        return item.get("role") == "assistant"
    return not kind.endswith(("_output", "_response"))


def starts_turn(item: Mapping[str, Any]) -> bool:
    return item_type(item) == "message" and item.get("role") == "user"


def calls_tools(item: Mapping[str, Any]) -> bool:
    return client_call(item)


def _turns(items: list[dict[str, Any]]) -> Turns:
    return Turns(items, starts_turn=starts_turn, calls_tools=calls_tools)


def repair(
    items: list[dict[str, Any]], policy: ReasoningPolicy, report: Report
) -> list[dict[str, Any]]:
    """The items to send: reasoning items dropped where the policy says."""
    turns = _turns(items)
    out: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        if item_type(item) == "reasoning" and turns.rule(policy, i) is Rule.DROP:
            report.change(
                ChangeKind.REASONING_DROPPED, i, f"reasoning item not sent ({policy.value})"
            )
            continue
        out.append(item)
    return out


def check(items: list[dict[str, Any]], policy: ReasoningPolicy, report: Report) -> None:
    """Report every reason ``items`` would be rejected, in item order."""
    turns = _turns(items)
    calls: dict[str, int] = {}
    answered: set[str] = set()
    response: list[int] = []  # indexes of the current run of output items

    def close_response() -> None:
        if not response:
            return
        first = response[0]
        has = any(item_type(items[k]) == "reasoning" for k in response)
        if policy is ReasoningPolicy.NEVER_SEND and has:
            report.problem(ProblemKind.REASONING_SENT, first, "this model rejects reasoning items")
        elif turns.rule(policy, first) is Rule.REQUIRE and not has:
            report.problem(ProblemKind.MISSING_REASONING, first, MISSING_REASONING)
        response.clear()

    for i, item in enumerate(items):
        kind = item_type(item)
        if kind is None:
            close_response()
            report.problem(ProblemKind.MALFORMED, i, "an item without a type or role")
            continue
        if kind == "reasoning":
            follower = items[i + 1] if i + 1 < len(items) else None
            if follower is None or not is_output(follower):
                name = text_id(item.get("id"))
                text = (
                    f"Item {name} of type 'reasoning' was provided without its required "
                    "following item."
                )
                report.problem(ProblemKind.REASONING_WITHOUT_ITEM, i, text)
        if is_output(item):
            response.append(i)
        else:
            close_response()
        if kind in CALLS:
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id or call_id in calls:
                report.problem(
                    ProblemKind.MALFORMED, i, f"a {kind} without a unique call_id: {item!r}"
                )
            else:
                calls[call_id] = i
        elif kind in ANSWERS:
            key = text_id(answer_key(item))
            if key in answered:
                report.problem(
                    ProblemKind.DUPLICATE_ANSWER, i, f"{key!r} is answered twice", call_id=key
                )
            elif key in calls:
                answered.add(key)
            else:
                text = f"No tool call found for {kind} with call_id {key}."
                report.problem(ProblemKind.ORPHAN_TOOL_MESSAGE, i, text, call_id=key)
    close_response()
    for call_id, index in calls.items():
        if call_id not in answered and client_call(items[index]):
            text = f"No tool output found for function call {call_id}."
            report.problem(ProblemKind.UNANSWERED_CALL, index, text, call_id=call_id)
