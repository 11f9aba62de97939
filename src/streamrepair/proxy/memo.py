"""What the proxy remembers about the calls it sent, for the requests that follow.

A :class:`CallMemo` is written when a response's calls go out (the relay's
:meth:`~.relay.Relay.memos`, or an API module's reader of a body passed through) and read
by the request-side fixes of a later request that mentions the call (``fixes.py``),
through a store (``store.py``) keyed by the client's credential and the call id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..events import ToolCallReady
from ..schema.report import RepairNote

__all__ = ["CallMemo", "note_dicts", "turn_memos"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CallMemo:
    """What the proxy remembers about one call it sent, for later requests.

    ``notes`` are the call's repairs as JSON-ready dicts (see :func:`note_dicts`), to be
    appended once per rule and tool to the tool result that answers it; ``reasoning``
    the Chat Completions ``reasoning_content`` of the assistant turn (on the turn's first
    call only); ``thinking`` the Anthropic thinking and redacted-thinking blocks of the
    turn, signatures included (first call only).

    A call the proxy refused (sent as a call to
    :data:`~streamrepair.proxy.wire.REFUSED_TOOL`) has ``refusal``, the text that answers
    it (what went wrong, what to do), and ``stand_in``, the JSON its arguments stand as
    in the history; ``tool`` is the name the model called. The next request gets the
    call back under that name and the answer replaced by ``refusal`` (``fixes.py``).
    """

    call_id: str
    tool: str
    notes: tuple[dict[str, Any], ...] = ()
    reasoning: str | None = None
    thinking: tuple[dict[str, Any], ...] = ()
    refusal: str | None = None
    stand_in: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (what a store keeps)."""
        out: dict[str, Any] = {"tool": self.tool}
        if self.notes:
            out["notes"] = list(self.notes)
        if self.reasoning is not None:
            out["reasoning"] = self.reasoning
        if self.thinking:
            out["thinking"] = list(self.thinking)
        if self.refusal is not None:
            out["refusal"] = self.refusal
            out["stand_in"] = self.stand_in
        return out

    @classmethod
    def from_dict(cls, call_id: str, data: Mapping[str, Any]) -> CallMemo:
        """The memo a store returned (``ValueError`` when it is not one)."""
        tool = data.get("tool")
        notes = data.get("notes", [])
        reasoning = data.get("reasoning")
        thinking = data.get("thinking", [])
        refusal = data.get("refusal")
        stand_in = data.get("stand_in")
        if (
            not isinstance(tool, str)
            or not isinstance(notes, list)
            or not isinstance(thinking, list)
            or not (reasoning is None or isinstance(reasoning, str))
            or not (refusal is None or isinstance(refusal, str))
            or not (stand_in is None or isinstance(stand_in, str))
        ):
            raise ValueError("not a call memo")
        return cls(
            call_id=call_id,
            tool=tool,
            notes=tuple(n for n in notes if isinstance(n, dict)),
            reasoning=reasoning,
            thinking=tuple(t for t in thinking if isinstance(t, dict)),
            refusal=refusal,
            stand_in=stand_in if refusal is not None else None,
        )


def note_dicts(ready: ToolCallReady) -> tuple[dict[str, Any], ...]:
    """A ready call's syntax and schema repairs as JSON-ready dicts."""
    out: list[dict[str, Any]] = [
        {"syntax": r.kind.value, "offset": r.offset, "description": r.description}
        for r in ready.repairs
    ]
    for note in ready.schema_repairs:
        if isinstance(note, RepairNote):
            out.append(
                {
                    "schema": note.rule.value,
                    "path": list(note.path),
                    "before": note.before,
                    "after": note.after,
                }
            )
    return tuple(out)


def turn_memos(
    calls: Iterable[tuple[object, object]],
    *,
    reasoning: str | None = None,
    thinking: tuple[dict[str, Any], ...] = (),
) -> list[CallMemo]:
    """The memos of a response passed through unread by the relay: one per call
    ``(id, name)`` with an id, the turn's ``reasoning`` or ``thinking`` on the first;
    ``[]`` when the turn has neither (nothing worth keeping)."""
    out: list[CallMemo] = []
    for call_id, name in calls:
        if isinstance(call_id, str) and call_id:
            first_call = not out
            out.append(
                CallMemo(
                    call_id=call_id,
                    tool=name if isinstance(name, str) else "",
                    reasoning=reasoning if first_call else None,
                    thinking=thinking if first_call else (),
                )
            )
    return out if any(m.reasoning is not None or m.thinking for m in out) else []
