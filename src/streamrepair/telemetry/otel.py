"""Optional OpenTelemetry counters for telemetry records (the ``otel`` extra:
``pip install -e '.[otel]'`` in a checkout): the same records, reported to whatever
metrics backend the process uses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .record import OTEL_ENV, Outcome, TelemetryRecord, flag_from_env

__all__ = ["OTelMetrics", "metrics_from_env"]


class OTelMetrics:
    """OpenTelemetry counters for repair records (the ``otel`` extra).

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
