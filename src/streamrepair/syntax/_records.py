"""Book-keeping of repairs for each top-level value, and the reduction of concatenated
values (``{..}{..}``) as each one completes.

A value keeps one record per repair kind: a later occurrence of the same kind adds to that
record's ``count`` (its offset stays the first one), so the records of one value are
bounded by the number of kinds whatever the input (500,000 excess closers are one record).
"""

from __future__ import annotations

from typing import Any, Final

from ..results import Repair, Repaired, RepairKind

#: Pieces of a growing text (an open string, a call's raw text) joined at a time.
COMPACT_PIECES: Final = 64


def compact_pieces(parts: list[str], tiers: list[int], merged: int) -> int:
    """Join the newest pieces of a growing text and return how many pieces are now joined
    ones.

    ``parts[merged:]`` are the :data:`COMPACT_PIECES` pieces added since the last call;
    ``tiers[k]`` counts the joined pieces of tier ``k`` just before them (tier 0: joins of
    small pieces, tier ``k + 1``: joins of tier-``k`` ones). The new pieces become one
    tier-0 piece, and a tier that fills up is joined into the next, as a counter carries.
    Each character is copied once per tier and tiers grow 64 times, so compaction costs
    O(1) per character and leaves at most 64 pieces per tier: one small string object per
    delta (about 5x the text of a 16-character delta) becomes a few large ones.
    """
    n = len(parts) - merged
    parts[-n:] = ["".join(parts[-n:])]
    level = 0
    while True:
        if level == len(tiers):
            tiers.append(0)
        tiers[level] += 1
        if tiers[level] < COMPACT_PIECES:
            break
        parts[-COMPACT_PIECES:] = ["".join(parts[-COMPACT_PIECES:])]
        tiers[level] = 0
        level += 1
    return len(parts)


class RepairRecord:
    """A repair being recorded (mutable so occurrences can be coalesced)."""

    __slots__ = ("count", "description", "kind", "offset")

    def __init__(self, kind: RepairKind, offset: int, description: str, count: int = 1) -> None:
        self.kind = kind
        self.offset = offset
        self.description = description
        self.count = count

    def freeze(self) -> Repair:
        description = self.description
        if self.count > 1:
            description = f"{description} ({self.count} times)"
        return Repair(kind=self.kind, offset=self.offset, description=description, count=self.count)


class ValueRecord:
    """Book-keeping for one top-level value."""

    __slots__ = ("by_kind", "recs", "start", "synthesized", "value")

    def __init__(self, start: int) -> None:
        self.start = start  # offset where the value begins
        self.value: Any = None
        self.recs: list[RepairRecord] = []
        self.by_kind: dict[RepairKind, RepairRecord] = {}
        self.synthesized = False

    def note(self, kind: RepairKind, offset: int, description: str, count: int = 1) -> RepairRecord:
        """Record ``count`` occurrences of ``kind``; the first occurrence of a kind makes
        the record (its offset and description), later ones add to its count."""
        rec = self.by_kind.get(kind)
        if rec is not None:
            rec.count += count
            return rec
        rec = RepairRecord(kind, offset, description, count)
        self.recs.append(rec)
        self.by_kind[kind] = rec
        if kind.synthesizes_structure:
            self.synthesized = True
        return rec

    def absorb(self, other: ValueRecord, *, earlier: bool) -> None:
        """Take over the repairs of ``other``, a value folded into this one; ``earlier``
        when ``other`` came first in the text (its records then come first)."""
        mine = self.recs
        if earlier:
            self.recs, self.by_kind = [], {}
            first, then = other.recs, mine
        else:
            first, then = [], other.recs
        for rec in (*first, *then):
            self.note(rec.kind, rec.offset, rec.description, rec.count)
        self.synthesized = self.synthesized or other.synthesized

    def freeze(self) -> Repaired:
        # In the order of the text (a stable sort: one record per kind, so few).
        recs = sorted(self.recs, key=lambda rec: rec.offset)
        return Repaired(
            value=self.value,
            structure_synthesized=self.synthesized,
            repairs=tuple(rec.freeze() for rec in recs),
        )


def _placeholder(record: ValueRecord) -> bool:
    return type(record.value) is dict and not record.value and not record.synthesized


def add_value(kept: list[ValueRecord], value: ValueRecord) -> ValueRecord:
    """Add a finished top-level value to ``kept``, the values so far after reduction, and
    return the record it now lives in.

    Empty ``{}`` placeholders (however many) before a non-empty object are dropped, and a
    value identical to the one before it is collapsed into it; either way the dropped
    value's own repairs are kept on the survivor, with the reduction recorded."""
    if kept and _placeholder(kept[-1]) and type(value.value) is dict and value.value:
        placeholder = kept.pop()
        repeats = placeholder.by_kind.pop(RepairKind.DUPLICATE_VALUE, None)
        if repeats is not None:
            placeholder.recs.remove(repeats)
        placeholder.recs.insert(
            0,
            RepairRecord(
                RepairKind.EMPTY_PLACEHOLDER,
                placeholder.start,
                "dropped an empty {} placeholder before the real object",
                1 + (repeats.count if repeats is not None else 0),
            ),
        )
        value.absorb(placeholder, earlier=True)
    if kept and not value.synthesized and same_json(kept[-1].value, value.value):
        last = kept[-1]
        last.note(RepairKind.DUPLICATE_VALUE, value.start, "collapsed an identical repeated value")
        last.absorb(value, earlier=False)
        return last
    kept.append(value)
    return value


def count_with(kept: list[ValueRecord], value: Any) -> int:
    """How many values ``kept`` would hold once a whole, unsynthesized ``value`` were
    added (what :func:`add_value` would do, without doing it)."""
    k = len(kept)
    if k and _placeholder(kept[-1]) and type(value) is dict and value:
        k -= 1
    if k and same_json(kept[k - 1].value, value):
        return k
    return k + 1


def same_json(a: Any, b: Any) -> bool:
    """Type-strict equality of two JSON values (``1 != 1.0 != True``), without recursion."""
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if x.keys() != y.keys():
                return False
            pending.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            pending.extend(zip(x, y, strict=False))
        elif x != y:
            return False
    return True
