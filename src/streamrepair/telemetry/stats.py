"""Reading a telemetry log and what it says per model (``streamrepair stats``).

Reading is bounded: lines longer than :data:`MAX_LINE_BYTES` and lines that are
not records are skipped and counted. :class:`StatsBuilder` aggregates records per model in
memory bounded by :data:`MAX_GROUPS` names per dimension.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Final

from ._files import lock, lock_path, rotated_paths
from .record import Outcome, TelemetryRecord

__all__ = [
    "MAX_GROUPS",
    "MAX_LINE_BYTES",
    "MAX_PENDING_CALLS",
    "LogReader",
    "ModelStats",
    "StatsBuilder",
    "TelemetrySummary",
]

#: Longest log line read back; longer ones are skipped and counted.
MAX_LINE_BYTES: Final = 4 * 2**20
#: Most distinct models (and rules, tools, reasons per model) a summary keeps; the rest
#: are counted under ``"(other)"``.
MAX_GROUPS: Final = 1000
#: Most call ids remembered to match a result record with its call record.
MAX_PENDING_CALLS: Final = 100_000
_OTHER: Final = "(other)"


class LogReader:
    """Reads records from log lines, skipping (and counting in :attr:`skipped`) lines
    that are too long, not JSON, or not records."""

    def __init__(self) -> None:
        self.skipped = 0

    def records(self, lines: Iterable[str | bytes]) -> Iterator[TelemetryRecord]:
        """The records of ``lines`` (blank lines are ignored)."""
        for line in lines:
            if len(line) > MAX_LINE_BYTES:
                self.skipped += 1
                continue
            if not line.strip():
                continue
            try:
                yield TelemetryRecord.from_dict(json.loads(line))
            except (ValueError, TypeError, RecursionError):
                self.skipped += 1

    def read_file(self, path: str | os.PathLike[str]) -> Iterator[TelemetryRecord]:
        """The records of the file at ``path``, read one bounded line at a time."""
        return self.records(_file_lines(path))

    def read_log(self, path: str | os.PathLike[str]) -> Iterator[TelemetryRecord]:
        """The records of the log at ``path`` and of its rotated files
        (``<log>.N`` ... ``<log>.1``, then ``<log>``: oldest first), each read one
        bounded line at a time. When reading starts, the files are all opened at once
        under the lock the writers rotate under, so a rotation while they are read
        loses or repeats nothing. ``OSError`` (``FileNotFoundError``) when neither the
        log nor a rotated file exists."""
        return self.records(_log_lines(Path(path)))


def _file_lines(path: str | os.PathLike[str]) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        yield from _bounded_lines(handle)


def _log_lines(path: Path) -> Iterator[bytes]:
    handles = _open_log(path)
    try:
        for handle in handles:
            yield from _bounded_lines(handle)
    finally:
        for handle in handles:
            handle.close()


def _open_log(path: Path) -> list[BinaryIO]:
    handles: list[BinaryIO] = []
    try:
        fd = os.open(lock_path(path), os.O_RDONLY)
    except OSError:  # no writer ever rotated this log (or the lock is not readable)
        fd = -1
    try:
        if fd >= 0:
            lock(fd, exclusive=False)
        for rotated in rotated_paths(path):
            with contextlib.suppress(FileNotFoundError):
                handles.append(open(rotated, "rb"))  # noqa: SIM115 (closed as read)
        try:
            handles.append(open(path, "rb"))  # noqa: SIM115
        except FileNotFoundError:
            if not handles:
                raise
    except BaseException:
        for handle in handles:
            handle.close()
        raise
    finally:
        if fd >= 0:
            os.close(fd)
    return handles


def _bounded_lines(handle: BinaryIO) -> Iterator[bytes]:
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while True:  # skip the rest of the overlong line
                rest = handle.readline(MAX_LINE_BYTES)
                if not rest or rest.endswith(b"\n"):
                    break
        yield line


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelStats:
    """What the log says about one model. ``outcomes`` counts calls per outcome value;
    ``rules`` the calls on which each rule fired; ``tools`` calls per tool; ``reasons``
    rejections per reason; ``repaired_results`` / ``repaired_failures`` how repaired calls
    then fared at the tool (when result records were logged)."""

    model: str
    calls: int
    outcomes: Mapping[str, int]
    rules: Mapping[str, int]
    tools: Mapping[str, int]
    reasons: Mapping[str, int]
    repaired_results: int = 0
    repaired_failures: int = 0

    def share(self, *outcomes: Outcome) -> float:
        """The fraction of calls with one of ``outcomes`` (0.0 with no calls)."""
        if not self.calls:
            return 0.0
        return sum(self.outcomes.get(o.value, 0) for o in outcomes) / self.calls


@dataclass(frozen=True, slots=True, kw_only=True)
class TelemetrySummary:
    """Per-model statistics (most calls first), the time span and skipped lines."""

    models: tuple[ModelStats, ...]
    first: str = ""
    last: str = ""
    skipped_lines: int = 0

    @property
    def calls(self) -> int:
        """Calls over all models."""
        return sum(m.calls for m in self.models)


def _bump(counter: collections.Counter[str], key: str) -> None:
    if key in counter or len(counter) < MAX_GROUPS:
        counter[key] += 1
    else:
        counter[_OTHER] += 1


@dataclass(slots=True)
class _Group:
    calls: int = 0
    outcomes: collections.Counter[str] = field(default_factory=collections.Counter)
    rules: collections.Counter[str] = field(default_factory=collections.Counter)
    tools: collections.Counter[str] = field(default_factory=collections.Counter)
    reasons: collections.Counter[str] = field(default_factory=collections.Counter)
    repaired_results: int = 0
    repaired_failures: int = 0


class StatsBuilder:
    """Push aggregator: :meth:`add` records, then :meth:`summary`."""

    def __init__(self) -> None:
        self._groups: dict[str, _Group] = {}
        self._pending: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._first = ""
        self._last = ""

    def _group(self, model: str) -> _Group:
        name = model or "unknown"
        if name not in self._groups and len(self._groups) >= MAX_GROUPS:
            name = _OTHER
        return self._groups.setdefault(name, _Group())

    def add(self, record: TelemetryRecord) -> None:
        """Count one record."""
        if record.time:
            self._first = min(self._first, record.time) if self._first else record.time
            self._last = max(self._last, record.time)
        group = self._group(record.model)
        if record.event == "result":
            if self._pending.pop(record.call_id, None) is not None:
                group.repaired_results += 1
                if record.outcome is Outcome.FAILED:
                    group.repaired_failures += 1
            return
        group.calls += 1
        _bump(group.outcomes, record.outcome.value)
        _bump(group.tools, record.tool or "(none)")
        for rule in record.rules:
            _bump(group.rules, rule)
        if record.outcome in (Outcome.REJECTED, Outcome.SKIPPED, Outcome.GUIDED):
            _bump(group.reasons, record.reason or record.outcome.value)
        if record.outcome is Outcome.REPAIRED and record.call_id:
            self._pending[record.call_id] = record.model
            if len(self._pending) > MAX_PENDING_CALLS:
                self._pending.popitem(last=False)

    def summary(self, *, skipped_lines: int = 0) -> TelemetrySummary:
        """The statistics so far."""
        models = [
            ModelStats(
                model=name,
                calls=g.calls,
                outcomes=dict(g.outcomes),
                rules=dict(g.rules.most_common()),
                tools=dict(g.tools.most_common()),
                reasons=dict(g.reasons.most_common()),
                repaired_results=g.repaired_results,
                repaired_failures=g.repaired_failures,
            )
            for name, g in self._groups.items()
        ]
        models.sort(key=lambda m: (-m.calls, m.model))
        return TelemetrySummary(
            models=tuple(models), first=self._first, last=self._last, skipped_lines=skipped_lines
        )
