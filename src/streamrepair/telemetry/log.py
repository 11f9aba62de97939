"""Writing telemetry: :class:`TelemetryLog` appends one JSON line per tool call.

Every adapter (the hooks, the OpenCode helper, Hermes) and the stream layer can append a
:class:`~.record.TelemetryRecord` per tool call. Writing is best effort (an unwritable
log never breaks a tool call) and each record is one ``write()`` on a file opened for
appending, so concurrent hook processes do not interleave lines.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .otel import OTelMetrics
from .record import Outcome, TelemetryRecord

if TYPE_CHECKING:  # the stream layer is imported only when its events are observed
    from ..events import StreamEvent

__all__ = ["TelemetryLog"]


class TelemetryLog:
    """Appends :class:`TelemetryRecord` lines to ``path`` (``None``: write nothing).

    ``include_arguments`` writes argument contents too (off by default). ``metrics``
    also counts every record. ``harness`` and ``model`` label the records
    :meth:`observe` builds from stream events.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        *,
        include_arguments: bool = False,
        metrics: OTelMetrics | None = None,
        harness: str = "stream",
        model: str = "",
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.include_arguments = include_arguments
        self.metrics = metrics
        self.harness = harness
        self.model = model
        self.failed_writes = 0

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
        data = record.to_dict(include_arguments=self.include_arguments)
        line = (json.dumps(data, ensure_ascii=True, default=str) + "\n").encode("ascii")
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                view = memoryview(line)
                while view:
                    view = view[os.write(fd, view) :]
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
