"""The calls the tracker follows: :class:`CallProgress`, the record of one call, the
schema check the tracker is given (:class:`ArgumentCheck`), and the rejection of a call.

Shared by the tracker (``tracker.py``: identity, streaming) and the finish policy
(``_finish.py``: the verdicts), so that neither imports the other.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Collection
from typing import Any, Protocol

from ..events import RejectReason, ToolCallRejected
from ..results import Repair, Status
from ..schema.check import CheckResult
from ..syntax._records import COMPACT_PIECES, compact_pieces
from ..syntax.assembler import ArgumentAssembler

__all__ = ["ArgumentCheck", "CallProgress"]


class CallProgress(enum.Enum):
    """Where one tracked call stands."""

    PENDING = "pending"  # no name yet: its text is buffered
    STREAMING = "streaming"  # started, arguments arriving
    READY = "ready"
    REJECTED = "rejected"


class ArgumentCheck(Protocol):
    """What the tracker asks of a schema check (see
    :class:`~streamrepair.schema.check.ToolSchemaCheck`, the one built from ``tools``)."""

    @property
    def names(self) -> Collection[str]:
        """The known tool names; a call to any other is rejected as ``unknown_tool``."""
        ...

    def check(self, name: str, value: Any) -> CheckResult:
        """Check (and repair) the finished arguments of a call to a known tool."""
        ...


#: Call kinds whose input is text: JSON arguments (``function``) or free text (``custom``).
#: Every other kind takes its input whole, as an object (:class:`WireToolValue`).
_TEXT_KINDS = frozenset({"function", "custom"})


class _Call:
    """One call as the tracker follows it: identity, the raw text kept in compacted
    pieces, its assembler once the name is known, and where it stands."""

    __slots__ = (
        "aliases",
        "asm",
        "call_id",
        "closed",
        "end_marker",
        "expects_end",
        "index",
        "kind",
        "merged",
        "name",
        "notes",
        "overflow",
        "parts",
        "pending",
        "phase",
        "repairs",
        "seq",
        "size",
        "tiers",
        "unsupported",
        "value",
        "whole",
    )

    def __init__(self, seq: int, call_id: str, index: int | None, kind: str) -> None:
        self.seq = seq
        self.call_id = call_id
        self.index = index
        self.kind = kind
        self.whole = kind not in _TEXT_KINDS  # input comes whole, as an object
        self.value: Any = None
        self.unsupported: str | None = None
        self.name: str | None = None
        self.asm: ArgumentAssembler | None = None
        self.parts: list[str] = []  # raw text as streamed (bounded by max_size)
        self.merged = 0  # pieces of it already joined by compaction
        self.tiers: list[int] = []
        self.size = 0
        self.overflow = False
        self.pending: list[str] = []  # text that arrived before the name
        self.closed = False
        self.expects_end = False
        self.notes: list[str] = []
        self.repairs: list[Repair] = []  # how a call written as text was read (textcalls)
        self.end_marker: str | None = None
        self.phase = CallProgress.PENDING
        self.aliases = 0  # deltas with a new id that continued this call (GLM-4)

    def raw(self) -> str:
        if self.whole:
            if self.value is None or isinstance(self.value, str):
                return self.value or ""
            return json.dumps(self.value, ensure_ascii=False, separators=(",", ":"))
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
            self.merged = 1
        return self.parts[0] if self.parts else ""

    def keep(self, text: str) -> None:
        """Keep a piece of the raw text; pieces are joined as they pile up, so a long
        argument costs its text, not a string object per delta."""
        parts = self.parts
        parts.append(text)
        if len(parts) - self.merged >= COMPACT_PIECES:
            if not self.merged:
                self.tiers.clear()
            self.merged = compact_pieces(parts, self.tiers, self.merged)

    def incomplete(self) -> bool:
        return self.asm is None or self.asm.status is Status.INCOMPLETE

    def reject(
        self, reason: RejectReason, detail: str, suggestions: tuple[str, ...] = ()
    ) -> ToolCallRejected:
        """Reject the call: its phase becomes REJECTED; the event carries its raw text (or
        what arrived before its name)."""
        self.phase = CallProgress.REJECTED
        raw = self.raw() if self.name is not None else "".join(self.pending)
        return ToolCallRejected(
            call_id=self.call_id,
            index=self.index,
            name=self.name or "",
            reason=reason,
            detail=detail,
            raw=raw,
            suggestions=suggestions,
            kind=self.kind,
        )
