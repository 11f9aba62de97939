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
    from .log import BACKUPS_ENV as BACKUPS_ENV
    from .log import DEFAULT_LOG_BACKUPS as DEFAULT_LOG_BACKUPS
    from .log import DEFAULT_LOG_MAX_BYTES as DEFAULT_LOG_MAX_BYTES
    from .log import MAX_BYTES_ENV as MAX_BYTES_ENV
    from .log import LogRotation as LogRotation
    from .log import TelemetryLog as TelemetryLog
    from .otel import OTelMetrics as OTelMetrics
    from .otel import metrics_from_env as metrics_from_env
    from .record import ARGUMENTS_ENV as ARGUMENTS_ENV
    from .record import CALL_OUTCOMES as CALL_OUTCOMES
    from .record import MAX_FIELD_CHARS as MAX_FIELD_CHARS
    from .record import OTEL_ENV as OTEL_ENV
    from .record import TELEMETRY_ENV as TELEMETRY_ENV
    from .record import Outcome as Outcome
    from .record import TelemetryRecord as TelemetryRecord
    from .record import default_telemetry_path as default_telemetry_path
    from .record import flag_from_env as flag_from_env
    from .record import shorten as shorten
    from .record import telemetry_path_from_env as telemetry_path_from_env
    from .stats import MAX_GROUPS as MAX_GROUPS
    from .stats import MAX_LINE_BYTES as MAX_LINE_BYTES
    from .stats import MAX_PENDING_CALLS as MAX_PENDING_CALLS
    from .stats import LogReader as LogReader
    from .stats import ModelStats as ModelStats
    from .stats import StatsBuilder as StatsBuilder
    from .stats import TelemetrySummary as TelemetrySummary

__all__, __getattr__, __dir__ = attach(__name__, __file__)
