"""``streamrepair stats``: a telemetry summary as a text table or a one-page HTML report.

Both renderings take a :class:`~streamrepair.telemetry.TelemetrySummary`. Names in the
log (models, tools, rules) are data from harnesses, so the HTML escapes every one.
"""

from __future__ import annotations

import html
from typing import Final

from .._plural import plural
from ..telemetry.record import CALL_OUTCOMES, Outcome
from ..telemetry.stats import ModelStats, TelemetrySummary

__all__ = ["render_html", "render_text"]

_BAR_WIDTH: Final = 420
_LABEL_WIDTH: Final = 200
_ROW: Final = 22


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def _model_row(m: ModelStats) -> list[str]:
    counts = [str(m.outcomes.get(o.value, 0)) for o in CALL_OUTCOMES]
    return [
        m.model,
        str(m.calls),
        *counts,
        _pct(m.share(Outcome.REPAIRED, Outcome.GUIDED)),
        _pct(m.share(Outcome.REJECTED)),
    ]


def render_text(summary: TelemetrySummary) -> str:
    """The summary as plain-text tables: one row per model, then each rule per model
    (calls it fired on and their share), then what repaired calls did at the tool."""
    if not summary.models:
        out = ["no tool calls in the log"]
        if summary.skipped_lines:
            skipped = plural(summary.skipped_lines, "line")
            out.append(f"({skipped} skipped: not telemetry records)")
        return "\n".join(out) + "\n"
    head = plural(summary.calls, "tool call")
    if summary.first:
        head += f", {summary.first} to {summary.last}"
    if summary.skipped_lines:
        head += f" ({plural(summary.skipped_lines, 'line')} skipped)"
    out = [head, ""]
    headers = ["model", "calls", *(o.value for o in CALL_OUTCOMES), "repaired%", "rejected%"]
    out += _table(headers, [_model_row(m) for m in summary.models])
    rule_rows = [
        [m.model, rule, str(count), _pct(count / m.calls if m.calls else 0.0)]
        for m in summary.models
        for rule, count in m.rules.items()
    ]
    if rule_rows:
        out += ["", "rules (calls each fired on, share of the model's calls)"]
        out += _table(["model", "rule", "calls", "share"], rule_rows)
    reason_rows = [[m.model, why, str(n)] for m in summary.models for why, n in m.reasons.items()]
    if reason_rows:
        out += ["", "not run as sent, by reason"]
        out += _table(["model", "reason", "calls"], reason_rows)
    result_rows = [
        [m.model, str(m.repaired_results), str(m.repaired_failures)]
        for m in summary.models
        if m.repaired_results
    ]
    if result_rows:
        out += ["", "repaired calls at the tool (from result records)"]
        out += _table(["model", "ran", "failed"], result_rows)
    return "\n".join(out) + "\n"


def _bars(title: str, items: list[tuple[str, int]], total: int, colour: str) -> str:
    height = _ROW * len(items) + 8
    scale = max([total, *(n for _, n in items)]) or 1
    rows = []
    for i, (label, count) in enumerate(items):
        y = 4 + i * _ROW
        width = round(_BAR_WIDTH * count / scale)
        label_x, text_y, bar_x = _LABEL_WIDTH - 6, y + 14, _LABEL_WIDTH
        rows.append(
            f'<text x="{label_x}" y="{text_y}" text-anchor="end">{html.escape(label)}</text>'
            f'<rect x="{bar_x}" y="{y}" width="{width}" height="{_ROW - 6}" fill="{colour}"/>'
            f'<text x="{bar_x + width + 4}" y="{text_y}">{count}</text>'
        )
    total_width = _LABEL_WIDTH + _BAR_WIDTH + 60
    svg = (
        f'<svg role="img" aria-label="{html.escape(title)}" width="{total_width}" '
        f'height="{height}" font-size="12" font-family="sans-serif">{"".join(rows)}</svg>'
    )
    return f"<h3>{html.escape(title)}</h3>\n{svg}"


def render_html(summary: TelemetrySummary) -> str:
    """A self-contained HTML page: the per-model table, and per model a bar chart of
    outcomes and one of the rules that fired."""
    text_table = html.escape(render_text(summary))
    sections = []
    for m in summary.models:
        outcomes = [(o.value, m.outcomes.get(o.value, 0)) for o in CALL_OUTCOMES]
        parts = [
            f"<h2>{html.escape(m.model)}</h2>",
            f"<p>{plural(m.calls, 'call')}; repaired "
            f"{_pct(m.share(Outcome.REPAIRED, Outcome.GUIDED))}, "
            f"rejected {_pct(m.share(Outcome.REJECTED))}</p>",
            _bars(f"{m.model}: outcomes", outcomes, m.calls, "#4a7bd0"),
        ]
        if m.rules:
            parts.append(
                _bars(f"{m.model}: rules fired", list(m.rules.items()), m.calls, "#d08a4a")
            )
        sections.append("<section>\n" + "\n".join(parts) + "\n</section>")
    body = "\n".join(sections) or "<p>No tool calls in the log.</p>"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>streamrepair telemetry</title><style>"
        "body{font-family:sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
        "pre{background:#f4f4f4;padding:1rem;overflow-x:auto}"
        "section{border-top:1px solid #ccc;margin-top:1.5rem}"
        "</style></head><body>\n<h1>streamrepair telemetry</h1>\n"
        f"<pre>{text_table}</pre>\n{body}\n</body></html>\n"
    )
