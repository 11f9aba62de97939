"""Helpers shared by the assembler tests: chunkings, a runner, and a preview checker."""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from streamrepair import ArgumentAssembler, Repaired, Status, UnrepairableError


@dataclass(frozen=True)
class Run:
    """What one chunking of a text produced."""

    statuses: dict[int, Status]  # status after each chunk boundary, by offset
    previews: list[Any]  # preview after each chunk
    result: Repaired | None
    error: tuple[type[BaseException], str, int, int, int] | None

    def outcome(self) -> Any:
        if self.error is not None:
            return ("error", *self.error)
        assert self.result is not None
        return ("ok", self.result)


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c for c in cuts if 0 < c < len(text)})
    chunks, last = [], 0
    for point in [*points, len(text)]:
        chunks.append(text[last:point])
        last = point
    return chunks


def run(chunks: list[str], **kwargs: Any) -> Run:
    assembler = ArgumentAssembler(**kwargs)
    statuses: dict[int, Status] = {}
    previews: list[Any] = []
    offset = 0
    for chunk in chunks:
        if assembler.status is Status.UNREPAIRABLE:
            break
        assembler.feed(chunk)
        offset += len(chunk)
        statuses[offset] = assembler.status
        previews.append(copy.deepcopy(assembler.preview()))  # previews are live
    try:
        result = assembler.finish()
    except UnrepairableError as exc:
        error = (type(exc), exc.reason, exc.offset, exc.line, exc.column)
        return Run(statuses, previews, None, error)
    return Run(statuses, previews, result, None)


def chunkings(text: str, seed: int = 0) -> list[list[str]]:
    """Whole, one character at a time, and a few random splits."""
    rng = random.Random(seed)
    out = [[text] if text else [], list(text)]
    for _ in range(3):
        cuts = [rng.randrange(len(text) + 1) for _ in range(rng.randrange(1, 8))] if text else []
        out.append(split(text, cuts))
    return out


def assert_same_everywhere(text: str, **kwargs: Any) -> Run:
    """Every chunking gives the same outcome, final preview, and statuses at shared
    boundaries. Returns the whole-text run."""
    runs = [run(chunks, **kwargs) for chunks in chunkings(text)]
    reference = runs[0]
    for other in runs[1:]:
        assert other.outcome() == reference.outcome(), (text, other.outcome())
        if reference.error is None:
            assert (other.previews[-1] if other.previews else None) == (
                reference.previews[-1] if reference.previews else None
            )
        shared = reference.statuses.keys() & other.statuses.keys()
        for offset in shared:
            assert other.statuses[offset] == reference.statuses[offset], (text, offset)
    return reference


@st.composite
def split_points(draw: st.DrawFn, text: str) -> list[str]:
    cuts = draw(st.lists(st.integers(0, len(text)), max_size=12))
    return split(text, cuts)


_SCALAR = (str, int, float, bool, type(None))


def monotonic_violation(before: Any, after: Any) -> str | None:
    """Why ``after`` is not a monotonic growth of ``before`` (None when it is)."""
    if before is None:
        return None
    pending = [(before, after, "$")]
    while pending:
        a, b, path = pending.pop()
        if type(a) is not type(b):
            return f"{path}: type {type(a).__name__} became {type(b).__name__}"
        if isinstance(a, str):
            if not b.startswith(a):
                return f"{path}: string {a!r} is not a prefix of {b!r}"
        elif isinstance(a, dict):
            for key, value in a.items():
                if key not in b:
                    return f"{path}.{key} disappeared"
                pending.append((value, b[key], f"{path}.{key}"))
        elif isinstance(a, list):
            if len(b) < len(a):
                return f"{path}: list shrank"
            pending.extend(
                (x, y, f"{path}[{i}]") for i, (x, y) in enumerate(zip(a, b, strict=False))
            )
        elif a != b:
            return f"{path}: {a!r} changed to {b!r}"
    return None
