"""Per-call repair telemetry: one JSON line per tool call, and what a log says per model.

* :mod:`.record`: :class:`TelemetryRecord` (what one call did) and where the log lives;
* :mod:`.log`: :class:`TelemetryLog`, the writer (best effort, one ``write()`` per line,
  rotated by size: :class:`LogRotation`);
* :mod:`.stats`: :class:`LogReader` and :class:`StatsBuilder` (``streamrepair stats``);
* :mod:`.otel`: :class:`OTelMetrics`, optional OpenTelemetry counters.

Argument contents are never written unless the log was opened with
``include_arguments=True``. The names are imported on first use.
"""

from __future__ import annotations

import typing as _typing

from .._lazy import attach

if _typing.TYPE_CHECKING:
    from .log import (
        BACKUPS_ENV,
        DEFAULT_LOG_BACKUPS,
        DEFAULT_LOG_MAX_BYTES,
        MAX_BYTES_ENV,
        LogRotation,
        TelemetryLog,
    )
    from .otel import (
        OTelMetrics,
        metrics_from_env,
    )
    from .record import (
        ARGUMENTS_ENV,
        CALL_OUTCOMES,
        MAX_FIELD_CHARS,
        OTEL_ENV,
        TELEMETRY_ENV,
        Outcome,
        TelemetryRecord,
        default_telemetry_path,
        flag_from_env,
        shorten,
        telemetry_path_from_env,
    )
    from .stats import (
        MAX_GROUPS,
        MAX_LINE_BYTES,
        MAX_PENDING_CALLS,
        LogReader,
        ModelStats,
        StatsBuilder,
        TelemetrySummary,
    )

_EXPORTS: dict[str, str] = {
    "ARGUMENTS_ENV": "record",
    "BACKUPS_ENV": "log",
    "DEFAULT_LOG_BACKUPS": "log",
    "DEFAULT_LOG_MAX_BYTES": "log",
    "LogRotation": "log",
    "MAX_BYTES_ENV": "log",
    "CALL_OUTCOMES": "record",
    "LogReader": "stats",
    "MAX_FIELD_CHARS": "record",
    "MAX_GROUPS": "stats",
    "MAX_LINE_BYTES": "stats",
    "MAX_PENDING_CALLS": "stats",
    "ModelStats": "stats",
    "OTEL_ENV": "record",
    "OTelMetrics": "otel",
    "Outcome": "record",
    "StatsBuilder": "stats",
    "TELEMETRY_ENV": "record",
    "TelemetryLog": "log",
    "TelemetryRecord": "record",
    "TelemetrySummary": "stats",
    "default_telemetry_path": "record",
    "flag_from_env": "record",
    "metrics_from_env": "otel",
    "shorten": "record",
    "telemetry_path_from_env": "record",
}

__all__ = [
    "ARGUMENTS_ENV",
    "BACKUPS_ENV",
    "CALL_OUTCOMES",
    "DEFAULT_LOG_BACKUPS",
    "DEFAULT_LOG_MAX_BYTES",
    "MAX_BYTES_ENV",
    "MAX_FIELD_CHARS",
    "MAX_GROUPS",
    "MAX_LINE_BYTES",
    "MAX_PENDING_CALLS",
    "OTEL_ENV",
    "TELEMETRY_ENV",
    "LogReader",
    "LogRotation",
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
    "shorten",
    "telemetry_path_from_env",
]

__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__)
