"""Per-call repair telemetry: one JSON line per tool call, and what a log says per model.

Every adapter (the hooks, the OpenCode helper, Hermes) and the stream layer can append a
:class:`TelemetryRecord` per tool call to a JSON-lines file: when, which harness and
model, which tool, which rules fired and what became of the call. **Argument contents are
never written unless the log was opened with** ``include_arguments=True``; the record
holds rule names, counts and outcomes only.

Writing is best effort (an unwritable log never breaks a tool call) and each record is
one ``write()`` on a file opened for appending, so concurrent hook processes do not
interleave lines. Reading is bounded: lines longer than :data:`MAX_LINE_BYTES` and lines
that are not records are skipped and counted. :class:`StatsBuilder` aggregates records
per model in memory bounded by :data:`MAX_GROUPS` names per dimension.

Optional OpenTelemetry counters (:class:`OTelMetrics`, the ``streamrepair[otel]`` extra)
report the same records to whatever metrics backend the process is configured for.
"""

from __future__ import annotations

import collections
import datetime as _dt
import enum
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .schema_rules import RepairNote

if TYPE_CHECKING:  # the stream layer is imported only when its events are observed
    from .events import StreamEvent

__all__ = [
    "ARGUMENTS_ENV",
    "CALL_OUTCOMES",
    "MAX_GROUPS",
    "MAX_LINE_BYTES",
    "MAX_PENDING_CALLS",
    "OTEL_ENV",
    "TELEMETRY_ENV",
    "LogReader",
    "ModelStats",
    "OTelMetrics",
    "Outcome",
    "StatsBuilder",
    "TelemetryLog",
    "TelemetryRecord",
    "TelemetrySummary",
    "default_telemetry_path",
    "flag_from_env",
    "metrics_from_env",
    "telemetry_path_from_env",
]

#: Environment variable naming the log file (``off`` disables the log).
TELEMETRY_ENV: Final = "STREAMREPAIR_TELEMETRY"
#: Environment variable that, set to ``1``, also logs argument contents.
ARGUMENTS_ENV: Final = "STREAMREPAIR_TELEMETRY_ARGUMENTS"
#: Environment variable that, set to ``1``, also reports OpenTelemetry counters.
OTEL_ENV: Final = "STREAMREPAIR_OTEL"
#: Longest log line read back; longer ones are skipped and counted.
MAX_LINE_BYTES: Final = 4 * 2**20
#: Most distinct models (and rules, tools, reasons per model) a summary keeps; the rest
#: are counted under ``"(other)"``.
MAX_GROUPS: Final = 1000
#: Most call ids remembered to match a result record with its call record.
MAX_PENDING_CALLS: Final = 100_000
_OTHER: Final = "(other)"
_OFF: Final = frozenset({"", "0", "off", "false", "no", "none"})
_ON: Final = frozenset({"1", "on", "true", "yes"})


class Outcome(enum.Enum):
    """What became of a call (``event == "call"``) or of running it (``"result"``)."""

    #: Nothing to repair: the arguments were passed on unchanged.
    CLEAN = "clean"
    #: Repaired, and the repaired arguments were run.
    REPAIRED = "repaired"
    #: Repairable, but the harness cannot rewrite arguments: denied with guidance.
    GUIDED = "guided"
    #: Not run: invalid even after repair, cut off, or unrepairable.
    REJECTED = "rejected"
    #: Not inspected (unreadable payload, too large, no tool name): passed on untouched.
    SKIPPED = "skipped"
    #: (result) The tool ran and reported success.
    SUCCEEDED = "succeeded"
    #: (result) The tool ran and reported an error.
    FAILED = "failed"


#: The outcomes of ``call`` records, in report order.
CALL_OUTCOMES: Final = (
    Outcome.CLEAN,
    Outcome.REPAIRED,
    Outcome.GUIDED,
    Outcome.REJECTED,
    Outcome.SKIPPED,
)


def _now() -> str:
    moment = _dt.datetime.now(_dt.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True, kw_only=True)
class TelemetryRecord:
    """One line of the log.

    ``event`` is ``"call"`` (a decision about a call's arguments) or ``"result"`` (the
    tool ran; ``outcome`` is SUCCEEDED or FAILED). ``rules`` are the rule names that fired
    (schema rules, profile rules, or the assembler's syntax repair kinds), each once, in
    order; ``repairs`` the number of individual repairs; ``errors`` the schema issues
    left; ``reason`` why a call was rejected or skipped. ``arguments`` and
    ``repaired_arguments`` are written only by a log opened with ``include_arguments``.
    """

    harness: str
    tool: str
    outcome: Outcome
    model: str = ""
    event: str = "call"
    rules: tuple[str, ...] = ()
    repairs: int = 0
    errors: int = 0
    reason: str = ""
    session: str = ""
    call_id: str = ""
    time: str = field(default_factory=_now)
    arguments: Any = None
    repaired_arguments: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.outcome, Outcome):
            raise TypeError("TelemetryRecord.outcome must be an Outcome")
        if self.event not in ("call", "result"):
            raise ValueError(
                f"TelemetryRecord.event must be 'call' or 'result', not {self.event!r}"
            )
        for name in ("harness", "tool", "model", "reason", "session", "call_id", "time"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"TelemetryRecord.{name} must be a str")
        if not all(isinstance(rule, str) for rule in self.rules):
            raise TypeError("TelemetryRecord.rules must hold str")
        for name in ("repairs", "errors"):
            count = getattr(self, name)
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise ValueError(f"TelemetryRecord.{name} must be a non-negative int")

    def to_dict(self, *, include_arguments: bool = False) -> dict[str, Any]:
        """The JSON object written to the log (arguments only when asked)."""
        out: dict[str, Any] = {
            "time": self.time,
            "event": self.event,
            "harness": self.harness,
            "model": self.model,
            "tool": self.tool,
            "outcome": self.outcome.value,
            "rules": list(self.rules),
            "repairs": self.repairs,
            "errors": self.errors,
        }
        for name in ("reason", "session", "call_id"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        if include_arguments:
            if self.arguments is not None:
                out["arguments"] = self.arguments
            if self.repaired_arguments is not None:
                out["repaired_arguments"] = self.repaired_arguments
        return out

    @classmethod
    def from_dict(cls, data: Any) -> TelemetryRecord:
        """A record from a log line's object. Raises ``ValueError`` (or ``TypeError``)
        when it is not one."""
        if not isinstance(data, Mapping):
            raise ValueError("a record must be a JSON object")
        rules = data.get("rules", [])
        if not isinstance(rules, list):
            raise ValueError("rules must be a list")
        try:
            outcome = Outcome(data.get("outcome"))
        except ValueError:
            raise ValueError(f"unknown outcome {data.get('outcome')!r}") from None
        return cls(
            harness=data.get("harness", ""),
            tool=data.get("tool", ""),
            outcome=outcome,
            model=data.get("model", ""),
            event=data.get("event", "call"),
            rules=tuple(rules),
            repairs=data.get("repairs", 0),
            errors=data.get("errors", 0),
            reason=data.get("reason", ""),
            session=data.get("session", ""),
            call_id=data.get("call_id", ""),
            time=data.get("time", ""),
            arguments=data.get("arguments"),
            repaired_arguments=data.get("repaired_arguments"),
        )


def default_telemetry_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/streamrepair/telemetry.jsonl`` (``~/.local/state`` when unset)."""
    env = os.environ if environ is None else environ
    state = env.get("XDG_STATE_HOME") or ""
    base = Path(state) if os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "streamrepair" / "telemetry.jsonl"


def telemetry_path_from_env(environ: Mapping[str, str] | None = None) -> Path | None:
    """The log the hooks write: ``$STREAMREPAIR_TELEMETRY`` when set (``None`` when it
    is ``off``/``0``/empty), else :func:`default_telemetry_path`."""
    env = os.environ if environ is None else environ
    if TELEMETRY_ENV in env:
        value = env[TELEMETRY_ENV].strip()
        return None if value.lower() in _OFF else Path(value).expanduser()
    return default_telemetry_path(env)


def flag_from_env(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the environment variable ``name`` is set to ``1``/``on``/``true``/``yes``."""
    env = os.environ if environ is None else environ
    return env.get(name, "").strip().lower() in _ON


class OTelMetrics:
    """OpenTelemetry counters for repair records (install ``streamrepair[otel]``).

    Counters (attributes ``gen_ai.request.model``, ``gen_ai.tool.name``,
    ``streamrepair.harness`` plus the one named): ``streamrepair.tool_calls``
    (``streamrepair.outcome``), ``streamrepair.repairs`` (``streamrepair.rule``; one per
    rule that fired) and ``streamrepair.rejections`` (``streamrepair.outcome`` and
    ``streamrepair.reason``; calls rejected or denied with guidance). ``meter`` defaults to
    the global meter provider's ``streamrepair`` meter, so the counters go wherever the
    process exports metrics (``opentelemetry-instrument``, or the application's own SDK
    set-up); without one they cost nothing. Raises ``ImportError`` when no meter is given
    and ``opentelemetry-api`` is not installed.
    """

    def __init__(self, meter: Any = None) -> None:
        if meter is None:
            from opentelemetry import metrics  # optional dependency

            meter = metrics.get_meter("streamrepair")
        self._calls = meter.create_counter(
            "streamrepair.tool_calls", unit="{call}", description="Tool calls inspected"
        )
        self._repairs = meter.create_counter(
            "streamrepair.repairs", unit="{repair}", description="Repair rules that fired"
        )
        self._rejections = meter.create_counter(
            "streamrepair.rejections",
            unit="{call}",
            description="Tool calls not run as sent (rejected, or denied with guidance)",
        )

    def record(self, record: TelemetryRecord) -> None:
        """Count one record (``result`` records are not counted)."""
        if record.event != "call":
            return
        base = {
            "gen_ai.request.model": record.model or "unknown",
            "gen_ai.tool.name": record.tool,
            "streamrepair.harness": record.harness,
        }
        self._calls.add(1, {**base, "streamrepair.outcome": record.outcome.value})
        for rule in record.rules:
            self._repairs.add(1, {**base, "streamrepair.rule": rule})
        if record.outcome in (Outcome.REJECTED, Outcome.GUIDED):
            self._rejections.add(
                1,
                {
                    **base,
                    "streamrepair.outcome": record.outcome.value,
                    "streamrepair.reason": record.reason or "invalid",
                },
            )


def metrics_from_env(environ: Mapping[str, str] | None = None) -> OTelMetrics | None:
    """:class:`OTelMetrics` when ``$STREAMREPAIR_OTEL`` is on and ``opentelemetry-api``
    is installed, else ``None``."""
    if not flag_from_env(OTEL_ENV, environ):
        return None
    try:
        return OTelMetrics()
    except ImportError:
        return None


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
        from .events import ToolCallReady, ToolCallRejected

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
        return self.records(_bounded_lines(path))


def _bounded_lines(path: str | os.PathLike[str]) -> Iterator[bytes]:
    with open(path, "rb") as handle:
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
