"""Book-keeping of repairs for each top-level value, and the final reduction of
concatenated values (``{..}{..}``)."""

from __future__ import annotations

from typing import Any

from ..results import Repair, Repaired, RepairKind


class RepairRecord:
    """A repair being recorded (mutable so occurrences can be coalesced)."""

    __slots__ = ("count", "description", "kind", "offset")

    def __init__(self, kind: RepairKind, offset: int, description: str) -> None:
        self.kind = kind
        self.offset = offset
        self.description = description
        self.count = 1

    def freeze(self) -> Repair:
        description = self.description
        if self.count > 1:
            description = f"{description} ({self.count} times)"
        return Repair(kind=self.kind, offset=self.offset, description=description, count=self.count)


class ValueRecord:
    """Book-keeping for one top-level value."""

    __slots__ = ("coalesced", "recs", "start", "synthesized", "value")

    def __init__(self, start: int) -> None:
        self.start = start  # offset where the value begins
        self.value: Any = None
        self.recs: list[RepairRecord] = []
        self.coalesced: dict[RepairKind, RepairRecord] = {}
        self.synthesized = False

    def note(self, kind: RepairKind, offset: int, description: str) -> RepairRecord:
        rec = RepairRecord(kind, offset, description)
        self.recs.append(rec)
        if kind.synthesizes_structure:
            self.synthesized = True
        return rec

    def note_once(self, kind: RepairKind, offset: int, description: str) -> None:
        rec = self.coalesced.get(kind)
        if rec is None:
            self.coalesced[kind] = self.note(kind, offset, description)
        else:
            rec.count += 1

    def freeze(self) -> Repaired:
        return Repaired(
            value=self.value,
            structure_synthesized=self.synthesized,
            repairs=tuple(rec.freeze() for rec in self.recs),
        )


def reduce_values(values: list[ValueRecord]) -> tuple[Repaired, ...]:
    """Freeze the top-level values of one text: identical repeats collapse into one and an
    empty ``{}`` placeholder before a real object is dropped, each recorded as a repair."""
    kept: list[ValueRecord] = []
    for i, value in enumerate(values):
        nxt = values[i + 1] if i + 1 < len(values) else None
        if (
            nxt is not None
            and value.value == {}
            and isinstance(value.value, dict)
            and not value.recs
            and isinstance(nxt.value, dict)
            and nxt.value
        ):
            nxt.recs.insert(
                0,
                RepairRecord(
                    RepairKind.EMPTY_PLACEHOLDER,
                    value.start,
                    "dropped an empty {} placeholder before the real object",
                ),
            )
            continue
        if kept and same_json(kept[-1].value, value.value) and not value.synthesized:
            last = kept[-1]
            rec = last.coalesced.get(RepairKind.DUPLICATE_VALUE)
            if rec is None:
                last.coalesced[RepairKind.DUPLICATE_VALUE] = last.note(
                    RepairKind.DUPLICATE_VALUE,
                    value.start,
                    "collapsed an identical repeated value",
                )
            else:
                rec.count += 1
            continue
        kept.append(value)
    return tuple(value.freeze() for value in kept)


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
