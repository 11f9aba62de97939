"""Writing telemetry: :class:`TelemetryLog` appends one JSON line per tool call, and
rotates the file by size.

Every adapter (the hooks, the OpenCode helper, Hermes, the proxy) and the stream layer can
append a :class:`~.record.TelemetryRecord` per tool call, often to the same file and
from several processes at once (hooks run one process per call; the proxy may run
several workers). Writing is best effort: an unwritable log never breaks a tool call.

Why it is safe with several writer processes:

* **Whole lines, appended.** Each record is one ``write()`` on a descriptor opened with
  ``O_APPEND``: the kernel moves to the end and writes in one step, so lines of
  different processes never interleave or overwrite each other (on local filesystems;
  not over NFS). The file is opened per record, so no writer keeps a descriptor on a
  file that was rotated away for long.
* **Rotation by rename, under a lock file.** After its write, a writer that sees the file
  (through its own descriptor) at :attr:`LogRotation.max_bytes` or more takes an
  exclusive ``flock`` on ``<log>.lock`` (never deleted, so every process locks the same
  inode), checks that the file at the log's path is still the one it wrote to and still
  that large (else another process rotated it first), and renames ``<log>.N-1`` to
  ``<log>.N`` ... ``<log>`` to ``<log>.1``; a file that would pass
  :attr:`LogRotation.backups` is deleted. A process that opened the log just before the
  rename writes its line into ``<log>.1``, whole; the next record creates a new
  ``<log>``. Nothing is copied or truncated, so no line is lost or cut, unlike
  ``logging``'s ``RotatingFileHandler``, which keeps its file open and renames it from
  under other processes (the ``logging`` cookbook says it does not support several
  processes).
* **Readers** (:meth:`~.stats.LogReader.read_log`) take the same lock shared while they
  open the rotated files and the log, then read without it.

So the log takes at most ``(backups + 1) * max_bytes`` bytes, plus the few lines per
file written while it was being rotated: 80 MiB with the defaults
(:data:`DEFAULT_LOG_MAX_BYTES`, :data:`DEFAULT_LOG_BACKUPS`;
``$STREAMREPAIR_TELEMETRY_MAX_BYTES`` and ``$STREAMREPAIR_TELEMETRY_BACKUPS`` set them).
A line is at most :data:`~.stats.MAX_LINE_BYTES` (the longest the reader reads back): a
record whose argument contents would make it longer is written without them
(``"arguments_omitted": true``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ._files import lock, lock_path, rotated_paths
from .otel import OTelMetrics
from .record import Outcome, TelemetryRecord
from .stats import MAX_LINE_BYTES

if TYPE_CHECKING:  # the stream layer is imported only when its events are observed
    from ..events import StreamEvent

__all__ = [
    "BACKUPS_ENV",
    "DEFAULT_LOG_BACKUPS",
    "DEFAULT_LOG_MAX_BYTES",
    "MAX_BYTES_ENV",
    "LogRotation",
    "TelemetryLog",
]

#: Size at which the log is rotated (16 MiB: tens of thousands of records).
DEFAULT_LOG_MAX_BYTES: Final = 16 * 2**20
#: Rotated files kept (``telemetry.jsonl.1`` newest ... ``.4`` oldest).
DEFAULT_LOG_BACKUPS: Final = 4
#: Environment variable for :attr:`LogRotation.max_bytes` (bytes, or with a ``K``,
#: ``M`` or ``G`` suffix, binary; ``0`` never rotates).
MAX_BYTES_ENV: Final = "STREAMREPAIR_TELEMETRY_MAX_BYTES"
#: Environment variable for :attr:`LogRotation.backups`.
BACKUPS_ENV: Final = "STREAMREPAIR_TELEMETRY_BACKUPS"
_SIZE: Final = re.compile(r"\s*(\d+)\s*([kmg]?)(?:i?b)?\s*", re.IGNORECASE)
_UNITS: Final = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}


@dataclass(frozen=True, slots=True, kw_only=True)
class LogRotation:
    """When a :class:`TelemetryLog` rotates: once the file reaches ``max_bytes`` (0:
    never), keeping ``backups`` older files (``<log>.1`` newest; 0: the full log is
    deleted and started again)."""

    max_bytes: int = DEFAULT_LOG_MAX_BYTES
    backups: int = DEFAULT_LOG_BACKUPS

    def __post_init__(self) -> None:
        for name in ("max_bytes", "backups"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"LogRotation.{name} must be a non-negative int, not {value!r}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LogRotation:
        """The rotation ``$STREAMREPAIR_TELEMETRY_MAX_BYTES`` and
        ``$STREAMREPAIR_TELEMETRY_BACKUPS`` ask for; the defaults for what is unset.
        ``ValueError`` for a value that is not a size or a count."""
        env = os.environ if environ is None else environ
        max_bytes, backups = DEFAULT_LOG_MAX_BYTES, DEFAULT_LOG_BACKUPS
        size = env.get(MAX_BYTES_ENV, "").strip()
        if size:
            match = _SIZE.fullmatch(size)
            if match is None:
                raise ValueError(f"${MAX_BYTES_ENV} must be a size such as 16M, not {size!r}")
            max_bytes = int(match.group(1)) * _UNITS[match.group(2).lower()]
        count = env.get(BACKUPS_ENV, "").strip()
        if count:
            if not count.isdigit():
                raise ValueError(f"${BACKUPS_ENV} must be a count, not {count!r}")
            backups = int(count)
        return cls(max_bytes=max_bytes, backups=backups)


def _default_rotation() -> LogRotation:
    try:
        return LogRotation.from_env()
    except ValueError:  # telemetry never fails a tool call: a bad setting keeps the default
        return LogRotation()


class TelemetryLog:
    """Appends :class:`TelemetryRecord` lines to ``path`` (``None``: write nothing).

    ``include_arguments`` writes argument contents too (off by default). ``metrics``
    also counts every record. ``harness`` and ``model`` label the records
    :meth:`observe` builds from stream events. ``rotation`` says when the file is
    rotated (module docstring); None takes it from the environment
    (:meth:`LogRotation.from_env`, the defaults when unset or unreadable).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        *,
        include_arguments: bool = False,
        metrics: OTelMetrics | None = None,
        harness: str = "stream",
        model: str = "",
        rotation: LogRotation | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.include_arguments = include_arguments
        self.metrics = metrics
        self.harness = harness
        self.model = model
        self.rotation = rotation if rotation is not None else _default_rotation()
        self.failed_writes = 0
        #: Times this log rotated the file (another process may have rotated it too).
        self.rotations = 0

    def write(self, record: TelemetryRecord) -> bool:
        """Append one record; ``False`` (and :attr:`failed_writes` counted) when the file
        cannot be written. Never raises for I/O problems."""
        if self.metrics is not None:
            try:
                self.metrics.record(record)
            except Exception:  # a metrics backend must never break a tool call
                self.failed_writes += 1
        if self.path is None:
            return True
        line = _line(record, self.include_arguments)
        try:
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            except FileNotFoundError:  # its directory first (not a syscall on every record)
                self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                view = memoryview(line)
                while view:
                    view = view[os.write(fd, view) :]
                limit = self.rotation.max_bytes
                if limit:
                    written = os.fstat(fd)
                    if written.st_size >= limit and _rotate(self.path, written, self.rotation):
                        self.rotations += 1
            finally:
                os.close(fd)
        except OSError:
            self.failed_writes += 1
            return False
        return True

    def observe(
        self, event: StreamEvent, *, model: str | None = None, session: str = ""
    ) -> TelemetryRecord | None:
        """Write the record for a stream event: a :class:`~streamrepair.ToolCallReady`
        (``repaired`` when the assembler or the schema repaired anything, with their rule
        names) or a :class:`~streamrepair.ToolCallRejected` (``rejected``, with its
        reason). Other events are ignored (``None``)."""
        label = self.model if model is None else model
        from ..events import ToolCallReady, ToolCallRejected
        from ..schema.report import RepairNote

        if isinstance(event, ToolCallReady):
            rules = [r.kind.value for r in event.repairs]
            rules += [n.rule.value for n in event.schema_repairs if isinstance(n, RepairNote)]
            count = len(event.repairs) + len(event.schema_repairs)
            record = TelemetryRecord(
                harness=self.harness,
                tool=event.name,
                outcome=Outcome.REPAIRED if count else Outcome.CLEAN,
                model=label,
                rules=tuple(dict.fromkeys(rules)),
                repairs=count,
                session=session,
                call_id=event.call_id,
                arguments=event.raw,
                repaired_arguments=event.arguments if count else None,
            )
        elif isinstance(event, ToolCallRejected):
            record = TelemetryRecord(
                harness=self.harness,
                tool=event.name,
                outcome=Outcome.REJECTED,
                model=label,
                reason=event.reason.value,
                session=session,
                call_id=event.call_id,
                arguments=event.raw,
            )
        else:
            return None
        self.write(record)
        return record

    def tap(
        self, events: Iterable[StreamEvent], *, model: str | None = None, session: str = ""
    ) -> Iterator[StreamEvent]:
        """Yield ``events`` unchanged, writing a record for each ready or rejected call."""
        for event in events:
            self.observe(event, model=model, session=session)
            yield event


def _line(record: TelemetryRecord, include_arguments: bool) -> bytes:
    """The record's log line, at most :data:`MAX_LINE_BYTES` (arguments left out, and
    said so, when they would make it longer)."""
    data = record.to_dict(include_arguments=include_arguments)
    line = (json.dumps(data, ensure_ascii=True, default=str) + "\n").encode("ascii")
    if len(line) > MAX_LINE_BYTES and include_arguments:
        data = {**record.to_dict(include_arguments=False), "arguments_omitted": True}
        line = (json.dumps(data, ensure_ascii=True, default=str) + "\n").encode("ascii")
    return line


def _rotate(path: Path, written: os.stat_result, rotation: LogRotation) -> bool:
    """Rotate the log if it is still the file this process wrote to (``written``) and
    still too large; False when another process did it first."""
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        lock(fd, exclusive=True)  # released when fd is closed
        try:
            now = os.stat(path)
        except FileNotFoundError:
            return False
        same = (now.st_dev, now.st_ino) == (written.st_dev, written.st_ino)
        if not same or now.st_size < rotation.max_bytes:
            return False
        for older in rotated_paths(path):  # the highest number first: nothing overwritten
            number = int(older.name.rsplit(".", 1)[1])
            if number >= rotation.backups:
                os.unlink(older)  # the oldest (and any left from a larger count)
            else:
                os.replace(older, path.with_name(f"{path.name}.{number + 1}"))
        if rotation.backups == 0:
            os.unlink(path)
        else:
            os.replace(path, path.with_name(f"{path.name}.1"))
        return True
    finally:
        os.close(fd)
