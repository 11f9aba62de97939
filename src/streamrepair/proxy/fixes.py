"""Request-side fixes: the histories harnesses send that upstreams answer with HTTP 400.

Sans-IO: :func:`referenced_calls` lists the call ids a request's history mentions (the
proxy looks their :class:`~.memo.CallMemo` up in its store), then :func:`fix_request`
returns the request with the fixes applied (a fresh body; the caller's is never
modified) and what was done. A request that needs nothing is left as it is, byte for
byte. Four stages, for each protocol (Chat Completions ``messages``, Anthropic
``messages``, Responses ``input``); what differs per API is in its module (``chat.py``,
``anthropic.py``, ``responses.py``: its row of the table of APIs), the sequence here:

0. a call the proxy refused (sent as a call to
   :data:`~streamrepair.proxy.wire.REFUSED_TOOL`, which the harness answered with its
   own "no such tool" error) is put back as the model made it: the name it called,
   its arguments as :func:`~streamrepair.rejected_arguments` stands them, and the answer
   replaced by the proxy's guidance (what went wrong, what to do); so the model reads
   its own attempt and why it did not run, whatever the harness made of the call
   (OpenCode turns it into its ``invalid`` tool);
1. what only the proxy knows: the reasoning it streamed is put back where the model's
   :class:`~streamrepair.ReasoningPolicy` needs it and the harness dropped it (Chat
   ``reasoning_content``, Anthropic thinking blocks with their signatures, keyed by the
   call ids the proxy sent); a call with no answer gets one, ``not_started`` (the header
   :func:`~streamrepair.tool_message` writes: it was never run as far as anyone knows),
   right after the answers that are there;
2. the turn layer's own rules, :func:`~streamrepair.repair_history` for the protocol
   (``docs/turn-loop.md``): null Chat ``content`` -> ``""``, reasoning back-filled with
   ``""`` or dropped as the policy says, unsigned thinking and empty blocks left out;
   what it cannot fix without guessing (an orphan or duplicate answer) is reported in
   :attr:`RequestFixes.counts` under its :class:`~streamrepair.ProblemKind` and left as
   it is, so the upstream's own 400 reaches the client as sent;
3. the tool result answering a call the proxy repaired gets the repair notes, once per
   rule and tool in the history (``schema/notes.py``), as ``Conversation`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..results import Repair, RepairKind
from ..schema.notes import append_repair_notes
from ..schema.report import RepairNote, SchemaRule
from ..turn.history import ReasoningPolicy, repair_history
from ._api import Api
from ._history import count
from ._table import APIS
from .memo import CallMemo
from .relay import ApiProtocol

__all__ = ["FIXES_HEADER", "RequestFixes", "fix_request", "referenced_calls"]

#: Response header listing the request-side fixes applied (``name=count, ...``).
FIXES_HEADER: Final = "x-streamrepair-request-fixes"


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestFixes:
    """What :func:`fix_request` did. ``body`` is the new request body (None when nothing
    changed); ``counts`` maps each fix (or reported problem) to how often it applied:
    ``refused_call_restored``, ``refusal_answered``, ``reasoning_restored``,
    ``thinking_restored``, ``unanswered_call_answered``, ``repair_notes``, the
    :class:`~streamrepair.ChangeKind` values of the turn layer's rules
    (``content_filled``, ``reasoning_filled``, ``reasoning_dropped``, ...), and the
    :class:`~streamrepair.ProblemKind` values of what is only reported
    (``orphan_tool_message``, ``duplicate_answer``, ...)."""

    body: dict[str, Any] | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """True when the body was changed."""
        return self.body is not None

    def header(self) -> str:
        """``name=count`` pairs for the ``x-streamrepair-request-fixes`` header."""
        return ", ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))


def referenced_calls(protocol: ApiProtocol, body: Mapping[str, Any]) -> list[str]:
    """The call ids a request's history mentions, in order (no duplicates)."""
    return APIS[protocol].referenced_calls(body)


def fix_request(
    protocol: ApiProtocol, body: Mapping[str, Any], memos: Mapping[str, CallMemo]
) -> RequestFixes:
    """The request with the fixes applied (module docstring). ``memos`` maps call ids to
    what the proxy remembers about them. Nothing passed is modified."""
    api = APIS[protocol]
    key = api.history
    if not isinstance(body.get(key), list):
        return RequestFixes()
    counts: dict[str, int] = {}
    fixed = _two_levels(body, key)
    model = body.get("model")
    policy = ReasoningPolicy.for_model(model if isinstance(model, str) else "")
    # 0. the calls the proxy refused, back as the model made them, with the guidance
    changed = _restore_refused(api, fixed[key], memos, counts)
    # 1. what only the proxy knows: the reasoning it streamed; calls left unanswered
    changed |= api.before(fixed, memos, policy, counts)
    # 2. the turn layer's rules for the protocol (null content, reasoning per policy,
    #    unsigned thinking, empty blocks); what they cannot fix is reported
    changed |= _standard(api, fixed, policy, counts)
    # 3. the repair notes, last, so that they land on the messages as sent
    changed |= _add_notes(api, fixed[key], memos, counts)
    return RequestFixes(body=fixed if changed else None, counts=counts)


def _standard(
    api: Api, body: dict[str, Any], policy: ReasoningPolicy, counts: dict[str, int]
) -> bool:
    key = api.history
    try:
        repaired = repair_history(body[key], policy=policy, provider=api.relay.provider)
    except (TypeError, ValueError):  # not a list of messages the rules can read
        count(counts, "malformed")
        return False
    for problem in repaired.problems:  # reported, left as they are
        count(counts, problem.kind.value)
    if not repaired.changes:
        return False
    for change in repaired.changes:
        count(counts, change.kind.value)
    body[key] = repaired.messages
    return True


def _restore_refused(
    api: Api, items: list[Any], memos: Mapping[str, CallMemo], counts: dict[str, int]
) -> bool:
    """Each refused call under the name the model called, with its stand-in arguments;
    each answer to one replaced by the guidance."""
    changed = False
    for site in api.calls(items):
        memo = memos.get(site.call_id) if isinstance(site.call_id, str) else None
        if memo is None or memo.refusal is None or memo.stand_in is None:
            continue
        if site.name != memo.tool:
            site.restore(memo.tool, memo.stand_in)
            count(counts, "refused_call_restored")
            changed = True
    for answer in api.answers(items):
        memo = memos.get(answer.call_id) if isinstance(answer.call_id, str) else None
        if memo is None or memo.refusal is None or answer.content == memo.refusal:
            continue
        answer.replace(memo.refusal)
        count(counts, "refusal_answered")
        changed = True
    return changed


def _add_notes(
    api: Api, items: list[Any], memos: Mapping[str, CallMemo], counts: dict[str, int]
) -> bool:
    """The repair notes of each call the proxy repaired, on the tool result that answers
    it, unless the history before that result carries them already."""
    changed = False
    for answer in api.answers(items):
        memo = memos.get(answer.call_id)
        if memo is None:
            continue
        new, noted = _with_notes(answer.content, memo, answer.earlier(), api.note_part)
        if noted:
            answer.replace(new)
            count(counts, "repair_notes")
            changed = True
    return changed


# -- helpers -------------------------------------------------------------------------------


def _two_levels(body: Mapping[str, Any], key: str) -> dict[str, Any]:
    """A copy of ``body`` whose ``key`` list and the dicts in it are new objects (what the
    fixes assign to); anything deeper is shared and never modified in place. A deep copy
    of a long agent history costs milliseconds per request; this costs microseconds."""
    out = dict(body)
    items = out.get(key)
    if isinstance(items, list):
        out[key] = [dict(item) if isinstance(item, dict) else item for item in items]
    return out


def _notes(memo: CallMemo) -> list[Repair | RepairNote]:
    out: list[Repair | RepairNote] = []
    for note in memo.notes:
        try:
            if "syntax" in note:
                out.append(
                    Repair(
                        kind=RepairKind(note["syntax"]),
                        offset=int(note.get("offset", 0)),
                        description=str(note.get("description", "")),
                    )
                )
            elif "schema" in note:
                path = tuple(p for p in note.get("path", []) if isinstance(p, str | int))
                out.append(
                    RepairNote(
                        rule=SchemaRule(note["schema"]),
                        path=path,
                        before=str(note.get("before", "")),
                        after=str(note.get("after", "")),
                    )
                )
        except (ValueError, TypeError):
            continue  # a memo written by another version: skip what it cannot say
    return out


def _with_notes(
    content: Any, memo: CallMemo, history: list[Any], text_key: str
) -> tuple[Any, bool]:
    """``content`` (a string or a list of parts/blocks) with the memo's notes appended
    unless ``history`` already carries them."""
    notes = _notes(memo)
    if not notes:
        return content, False
    if isinstance(content, str) or content is None:
        text = content or ""
        new = append_repair_notes(text, notes, memo.tool, history=history)
        return new, new != text
    if isinstance(content, list):
        block = append_repair_notes("", notes, memo.tool, history=[*history, {"content": content}])
        if not block:
            return content, False
        return [*content, {"type": text_key, "text": block}], True
    return content, False
