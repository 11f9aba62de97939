"""The proxy's own counters, served at ``/metrics`` in the Prometheus text format.

Labels are bounded in length and in number: the model name as the client sent it
(shortened past :data:`MAX_LABEL_CHARS` characters, and at most :data:`MAX_LABEL_VALUES`
distinct values per label, the rest counted as ``other``), the protocol, an outcome, a
rule or a reason. A 256 KiB model name once made ``/metrics`` 52 MB (issue 22). Never a
key, a request id or a message text (``docs.nvidia.com``'s and LiteLLM's practice; see
``docs/proxy.md``). The same calls also go to the telemetry log and the optional
OpenTelemetry counters through :class:`~streamrepair.telemetry.TelemetryLog`.

With a store (``ProxyMetrics(store=...)``) the page also has the store's failures by
operation and kind (``error``, ``timeout``, ``skipped`` while its breaker is open) and
the breaker's state, read from :meth:`~.store.StateStore.stats` when the page is built.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ..events import ToolCallReady, ToolCallRejected
from ..schema.report import RepairNote
from ..telemetry.record import shorten
from .store import BreakerState, StateStore

__all__ = ["MAX_LABEL_CHARS", "MAX_LABEL_VALUES", "ProxyMetrics"]

#: Most distinct values one label takes before new ones are counted as ``other``.
MAX_LABEL_VALUES: Final = 100
#: Longest label value; longer ones are shortened (their start, ``…`` and 8 hex digits
#: of their hash: :func:`~streamrepair.telemetry.shorten`). Model names run to about 90
#: characters (a Bedrock inference-profile ARN).
MAX_LABEL_CHARS: Final = 128
_STORE_ERRORS: Final = "streamrepair_proxy_store_errors_total"
_BREAKER: Final = "streamrepair_proxy_store_breaker_state"
_BREAKER_OPENED: Final = "streamrepair_proxy_store_breaker_opened_total"

_HELP: Final = {
    "streamrepair_proxy_requests_total": "Requests answered, by protocol and HTTP status",
    "streamrepair_proxy_tool_calls_total": "Tool calls judged in streams, by model and outcome",
    "streamrepair_proxy_repairs_total": "Repair rules that fired on sent calls, by model and rule",
    "streamrepair_proxy_rejections_total": "Tool calls withheld, by model and reason",
    "streamrepair_proxy_request_fixes_total": "Request-side fixes applied, by fix",
    "streamrepair_proxy_request_fixes_unavailable_total": (
        "Request-side fixes a request did not get because the store was unavailable, by fix"
    ),
    "streamrepair_proxy_upstream_errors_total": "Upstream failures, by kind",
    "streamrepair_proxy_client_disconnects_total": "Streams the client left before the end",
}
#: Counters without labels: shown with a ``0`` sample from the start (a counter with
#: labels has no sample until a label value is known).
_UNLABELLED: Final = ("streamrepair_proxy_client_disconnects_total",)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class ProxyMetrics:
    """Counters and the active-stream gauge; with ``store``, the store's counters and
    breaker state too."""

    def __init__(self, store: StateStore | None = None) -> None:
        self._counters: dict[tuple[str, tuple[tuple[str, str], ...]], int] = {
            (name, ()): 0 for name in _UNLABELLED
        }
        self._seen: dict[str, set[str]] = {}
        self.active_streams = 0
        self.store = store

    def _label(self, name: str, value: str) -> str:
        value = shorten(value, MAX_LABEL_CHARS)
        seen = self._seen.setdefault(name, set())
        if value in seen:
            return value
        if len(seen) >= MAX_LABEL_VALUES:
            return "other"
        seen.add(value)
        return value

    def add(self, metric: str, amount: int = 1, **labels: str) -> None:
        """Add to a counter. Label values are shortened past :data:`MAX_LABEL_CHARS`;
        past :data:`MAX_LABEL_VALUES` distinct values of one label, new ones count as
        ``other``."""
        key = (metric, tuple(sorted((k, self._label(k, v)) for k, v in labels.items())))
        self._counters[key] = self._counters.get(key, 0) + amount

    def value(self, metric: str, **labels: str) -> int:
        """A counter's value (0 when never added to); label values as :meth:`add` was
        given them (a long one is shortened the same way)."""
        bounded = ((k, shorten(v, MAX_LABEL_CHARS)) for k, v in labels.items())
        key = (metric, tuple(sorted(bounded)))
        return self._counters.get(key, 0)

    def calls(self, verdicts: Iterable[ToolCallReady | ToolCallRejected], model: str) -> None:
        """Count the judged calls of one stream."""
        for verdict in verdicts:
            if isinstance(verdict, ToolCallReady):
                rules = [r.kind.value for r in verdict.repairs]
                rules += [n.rule.value for n in verdict.schema_repairs if isinstance(n, RepairNote)]
                outcome = "repaired" if rules else "clean"
                self.add("streamrepair_proxy_tool_calls_total", model=model, outcome=outcome)
                for rule in dict.fromkeys(rules):
                    self.add("streamrepair_proxy_repairs_total", model=model, rule=rule)
            else:
                self.add("streamrepair_proxy_tool_calls_total", model=model, outcome="rejected")
                self.add(
                    "streamrepair_proxy_rejections_total",
                    model=model,
                    reason=verdict.reason.value,
                )

    def render(self) -> str:
        """The Prometheus text exposition of every counter."""
        lines: list[str] = []
        names = sorted({name for name, _ in self._counters} | set(_HELP))
        for name in names:
            lines.append(f"# HELP {name} {_HELP.get(name, name)}")
            lines.append(f"# TYPE {name} counter")
            for (metric, labels), count in sorted(self._counters.items()):
                if metric != name:
                    continue
                text = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
                lines.append(f"{name}{{{text}}} {count}" if text else f"{name} {count}")
        lines.append("# HELP streamrepair_proxy_active_streams Streams being relayed now")
        lines.append("# TYPE streamrepair_proxy_active_streams gauge")
        lines.append(f"streamrepair_proxy_active_streams {self.active_streams}")
        if self.store is not None:
            lines += self._store_lines(self.store)
        return "\n".join(lines) + "\n"

    def _store_lines(self, store: StateStore) -> list[str]:
        stats = store.stats()
        lines = [
            f"# HELP {_STORE_ERRORS} Store calls that failed, timed out or were skipped "
            "(breaker open), by operation and kind",
            f"# TYPE {_STORE_ERRORS} counter",
        ]
        for (operation, kind), count in sorted(stats.counts.items()):
            labels = f'kind="{_escape(kind)}",operation="{_escape(operation)}"'
            lines.append(f"{_STORE_ERRORS}{{{labels}}} {count}")
        if stats.breaker is None:
            return lines
        lines.append(f"# HELP {_BREAKER} The store's circuit breaker: 1 for the state it is in")
        lines.append(f"# TYPE {_BREAKER} gauge")
        for state in BreakerState:
            on = 1 if state is stats.breaker else 0
            lines.append(f'{_BREAKER}{{state="{state.value}"}} {on}')
        lines.append(f"# HELP {_BREAKER_OPENED} Times the store's circuit breaker opened")
        lines.append(f"# TYPE {_BREAKER_OPENED} counter")
        lines.append(f"{_BREAKER_OPENED} {stats.breaker_opened}")
        return lines
