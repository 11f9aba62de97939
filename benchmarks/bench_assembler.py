"""Benchmark: the ArgumentAssembler against the libraries harnesses use today, same run.

Streams: write-tool arguments (a long ``content`` string with quotes, backslashes and
newlines) of 1 KB, 10 KB, 100 KB and 1 MiB, and a number-heavy array, cut into 16-character
deltas, as providers send them. Each library takes the deltas one at a time:

* streamrepair: ``feed()``; with previews, also ``preview(live=True)`` after every delta
  (the live value, updated in place: what jsonriver yields);
* jiter, partial-json-parser, json_repair: re-parse the accumulated buffer after every
  delta (what openai-python's and anthropic's helpers do with jiter);
* ijson (yajl2_c push coroutine): incremental, but cannot preview strings;
* jsonriver: incremental, async-only, yields an updated value after every delta.

Printed: median microseconds per delta and total seconds per stream, and the ratios the
project's targets are stated in (docs/performance.md). Timings on a shared machine are
noisy: every figure is a median of repeats, and ratios come from the same run. A cell that
exceeds its time budget is stopped and reported as a lower bound (">").

    python benchmarks/bench_assembler.py            # full run (several minutes)
    python benchmarks/bench_assembler.py --quick    # small budgets, smaller sizes
    python benchmarks/bench_assembler.py --write-docs   # also rewrite docs/performance.md
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from streamrepair import ArgumentAssembler, repair  # noqa: E402

DELTA = 16
SIZES = {"1 KB": 1024, "10 KB": 10 * 1024, "100 KB": 100 * 1024, "1 MiB": 1024 * 1024}
_LINE = 'if (a && b) { s = "x\\\\y"; } // say "hi", it\'s fine\n'


def write_arguments(size: int) -> str:
    content = (_LINE * (size // len(_LINE) + 1))[:size]
    return json.dumps({"path": "src/generated/module.js", "content": content, "append": False})


def number_arguments(count: int) -> str:
    values = [i * 7919 % 100_003 - 50_000 + (i % 7) / 8 for i in range(count)]
    return json.dumps({"series": values, "labels": [f"p{i}" for i in range(count // 10)]})


def deltas(text: str) -> list[str]:
    return [text[i : i + DELTA] for i in range(0, len(text), DELTA)]


@dataclass
class Cell:
    median_us: float  # median cost of one delta
    total_s: float  # whole stream
    complete: bool  # False when the budget stopped it (totals are then lower bounds)

    def total_text(self) -> str:
        return f"{self.total_s:.3f}" if self.complete else f">{self.total_s:.1f}"


class OverBudget(Exception):
    pass


def _timed(chunks: list[str], step: Callable[[str], Any], budget: float) -> Cell:
    per: list[int] = []
    clock = time.perf_counter_ns
    start = clock()
    limit = start + int(budget * 1e9)
    for i, chunk in enumerate(chunks):
        t0 = clock()
        step(chunk)
        t1 = clock()
        per.append(t1 - t0)
        if i % 256 == 0 and t1 > limit:
            return Cell(statistics.median(per) / 1000, (t1 - start) / 1e9, False)
    total = (clock() - start) / 1e9
    return Cell(statistics.median(per) / 1000, total, True)


# -- competitors: each returns a step function for a fresh stream ------------------------


def streamrepair_runner(preview: bool) -> Callable[[], Callable[[str], Any]]:
    def make() -> Callable[[str], Any]:
        assembler = ArgumentAssembler()
        if not preview:
            return assembler.feed

        def step(chunk: str) -> Any:
            assembler.feed(chunk)
            return assembler.preview(live=True)  # jsonriver's semantics: a live value

        return step

    return make


def reparse_runner(load: Callable[[], Callable[[str], Any]]) -> Callable[[], Callable[[str], Any]]:
    """Re-parsing the whole buffer after every delta with the parser ``load`` gives
    (imported when the runner is made, never inside the loop over the deltas)."""

    def make() -> Callable[[str], Any]:
        parse = load()
        buffer: list[str] = [""]

        def step(chunk: str) -> Any:
            buffer[0] += chunk
            return parse(buffer[0])

        return step

    return make


def _jiter() -> Callable[[str], Any]:
    import jiter

    from_json = jiter.from_json
    return lambda text: from_json(text.encode(), partial_mode="trailing-strings")


def _partial_json_parser() -> Callable[[str], Any]:
    import partial_json_parser

    return partial_json_parser.loads


def _json_repair() -> Callable[[str], Any]:
    import json_repair

    return lambda text: json_repair.repair_json(text, return_objects=True)


def ijson_runner() -> Callable[[str], Any]:
    import ijson

    events = ijson.sendable_list()
    coro = ijson.basic_parse_coro(events)

    def step(chunk: str) -> Any:
        coro.send(chunk.encode())
        events.clear()

    return step


def time_jsonriver(chunks: list[str], budget: float) -> Cell:
    import jsonriver

    per: list[int] = []
    clock = time.perf_counter_ns

    async def source() -> Any:
        for chunk in chunks:
            per.append(clock())
            yield chunk

    async def consume() -> Cell:
        start = clock()
        limit = start + int(budget * 1e9)
        ends: list[int] = []
        async for _value in jsonriver.parse(source()):
            ends.append(clock())
            if len(ends) % 256 == 0 and ends[-1] > limit:
                break
        done = not (ends and ends[-1] > limit)
        spans = [end - begin for begin, end in zip(per, ends, strict=False)]
        return Cell(statistics.median(spans) / 1000, (clock() - start) / 1e9, done)

    return asyncio.run(consume())


LIBRARIES: dict[str, Callable[[], Callable[[str], Any]] | None] = {
    "streamrepair": streamrepair_runner(preview=False),
    "streamrepair+preview": streamrepair_runner(preview=True),
    "jiter re-parse": reparse_runner(_jiter),
    "partial-json-parser": reparse_runner(_partial_json_parser),
    "json_repair": reparse_runner(_json_repair),
    "ijson push (no preview)": ijson_runner,
    "jsonriver (+preview)": None,  # async, timed by time_jsonriver
}


def measure(name: str, chunks: list[str], budget: float, repeats: int) -> Cell:
    cells = []
    for _ in range(repeats):
        if name.startswith("jsonriver"):
            cell = time_jsonriver(chunks, budget)
        else:
            factory = LIBRARIES[name]
            assert factory is not None
            cell = _timed(chunks, factory(), budget)
        cells.append(cell)
        if not cell.complete:
            return cell
    cells.sort(key=lambda c: c.total_s)
    mid = cells[len(cells) // 2]
    return Cell(statistics.median(c.median_us for c in cells), mid.total_s, True)


def available(name: str) -> bool:
    module = {
        "jiter re-parse": "jiter",
        "partial-json-parser": "partial_json_parser",
        "json_repair": "json_repair",
        "ijson push (no preview)": "ijson",
        "jsonriver (+preview)": "jsonriver",
    }.get(name)
    if module is None:
        return True
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def repair_vs_json_loads(repeats: int) -> list[tuple[str, float, float]]:
    docs = {
        "1 MiB write": write_arguments(1024 * 1024),
        "10 KB write": write_arguments(10 * 1024),
        "numbers": number_arguments(20_000),
        "nested": json.dumps({"a": [{"b": {"c": [i, str(i), None, True]}} for i in range(5000)]}),
    }
    rows = []
    for label, text in docs.items():
        loads = _best(lambda text=text: json.loads(text), repeats)
        ours = _best(lambda text=text: repair(text), repeats)
        rows.append((label, ours / loads, ours * 1e3))
    return rows


def _best(fn: Callable[[], Any], repeats: int) -> float:
    # As timeit does: no garbage collection inside a timed call, so that a collection
    # triggered by the previous call's objects is not charged to this one.
    times = []
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        finally:
            gc.enable()
    return statistics.median(times)


def interleaved_flatness(repeats: int) -> dict[str, float]:
    """Median µs per delta of streamrepair (no previews) on each write size, the sizes
    measured in turn within every repeat: a shared machine drifts over the minutes that
    separate the table's cells, and that drift must not read as growth."""
    streams = {label: deltas(write_arguments(size)) for label, size in SIZES.items()}
    medians: dict[str, list[float]] = {label: [] for label in streams}
    clock = time.perf_counter_ns
    for _ in range(max(repeats, 5)):
        for label, chunks in streams.items():
            assembler = ArgumentAssembler()
            per = []
            for chunk in chunks:
                t0 = clock()
                assembler.feed(chunk)
                per.append(clock() - t0)
            medians[label].append(statistics.median(per) / 1000)
    return {label: statistics.median(values) for label, values in medians.items()}


def small_stream_vs_jiter(runs: int) -> float | None:
    """Whole 1 KB stream: jiter re-parse time ÷ streamrepair time, medians over many runs
    that alternate between the two (one run is a fraction of a millisecond)."""
    if not available("jiter re-parse"):
        return None
    chunks = deltas(write_arguments(1024))
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(runs):
        for factory, out in ((streamrepair_runner(False), ours), (reparse_runner(_jiter), theirs)):
            step = factory()
            t0 = time.perf_counter()
            for chunk in chunks:
                step(chunk)
            out.append(time.perf_counter() - t0)
    return statistics.median(theirs) / statistics.median(ours)


def interleaved_vs_jsonriver(workloads: list[tuple[str, str]], repeats: int) -> dict[str, float]:
    """jsonriver time ÷ streamrepair time (live previews, jsonriver's semantics) for each
    stream, the two run in turn within every repeat: medians of whole-stream times."""
    if not available("jsonriver (+preview)"):
        return {}
    ratios = {}
    for label, text in workloads:
        chunks = deltas(text)
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(repeats):
            step = streamrepair_runner(preview=True)()
            t0 = time.perf_counter()
            for chunk in chunks:
                step(chunk)
            ours.append(time.perf_counter() - t0)
            theirs.append(time_jsonriver(chunks, budget=600.0).total_s)
        ratios[label] = statistics.median(theirs) / statistics.median(ours)
    return ratios


@dataclass
class Extras:
    repair_rows: list[tuple[str, float, float]]
    preview_us: float
    flatness: dict[str, float]
    small_vs_jiter: float | None
    vs_jsonriver: dict[str, float]


def preview_cost(repeats: int) -> float:
    """Median µs of preview() on a 1 MiB buffer whose open string is short."""
    text = write_arguments(1024 * 1024)[:-1] + ', "note": "short open'
    assembler = ArgumentAssembler()
    for chunk in deltas(text):
        assembler.feed(chunk)
    times = []
    for _ in range(max(repeats, 5) * 200):
        t0 = time.perf_counter_ns()
        assembler.preview()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) / 1000


def iter_workloads(quick: bool) -> Iterator[tuple[str, str]]:
    for label, size in SIZES.items():
        if quick and size > 100 * 1024:
            continue
        yield f"write {label}", write_arguments(size)
    yield "numbers 100 KB", number_arguments(12_000 if not quick else 3_000)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small budgets and sizes")
    parser.add_argument("--budget", type=float, default=None, help="seconds per cell")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/performance.md")
    args = parser.parse_args(argv)
    budget = args.budget or (5.0 if args.quick else 150.0)
    repeats = args.repeats or (3 if args.quick else 5)

    names = [name for name in LIBRARIES if available(name)]
    missing = [name for name in LIBRARIES if name not in names]
    results: dict[str, dict[str, Cell]] = {}
    workloads = list(iter_workloads(args.quick))
    for label, text in workloads:
        chunks = deltas(text)
        results[label] = {}
        for name in names:
            slow = not name.startswith("streamrepair")
            cell = measure(name, chunks, budget, 1 if slow and len(text) > 50_000 else repeats)
            results[label][name] = cell
            print(
                f"  {label:<16} {name:<26} {cell.median_us:10.2f} us/delta  {cell.total_text():>9} s",
                file=sys.stderr,
                flush=True,
            )

    extras = Extras(
        repair_rows=repair_vs_json_loads(repeats),
        preview_us=preview_cost(repeats),
        flatness={} if args.quick else interleaved_flatness(repeats),
        small_vs_jiter=small_stream_vs_jiter(50 if args.quick else 400),
        vs_jsonriver=interleaved_vs_jsonriver(workloads, 3 if args.quick else 5),
    )
    report = render(results, names, missing, extras, budget, args.quick)
    print(report)
    if args.write_docs:
        write_docs(report, results, names)
    return 0


def render(
    results: dict[str, dict[str, Cell]],
    names: list[str],
    missing: list[str],
    extras: Extras,
    budget: float,
    quick: bool,
) -> str:
    lines = [
        f"Python {platform.python_version()} on {platform.machine()}, {DELTA}-character deltas, "
        f"cell budget {budget:.0f} s{' (quick)' if quick else ''}; medians.",
        "",
        "Median µs per delta (total seconds for the stream):",
        "",
        "| stream | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for label, row in results.items():
        cells = [f"{row[n].median_us:.1f} ({row[n].total_text()})" for n in names]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Ratios (whole stream, competitor ÷ streamrepair; '≥' where the budget cut the competitor):",
        "",
    ]
    lines.append(
        "| stream | vs jiter re-parse (no preview / preview) | vs jsonriver (preview; interleaved) | vs ijson (no preview) | vs partial-json-parser | vs json_repair |"
    )
    lines.append("|---|---|---|---|---|---|")
    for label, row in results.items():
        ours, ours_p = row["streamrepair"], row["streamrepair+preview"]

        def ratio(name: str, base: Cell, row: dict[str, Cell] = row) -> str:
            if name not in row:
                return "n/a"
            cell = row[name]
            sign = "" if cell.complete else "≥"
            return f"{sign}{cell.total_s / base.total_s:.1f}x"

        jiter = f"{ratio('jiter re-parse', ours)} / {ratio('jiter re-parse', ours_p)}"
        river = ratio("jsonriver (+preview)", ours_p)
        if label in extras.vs_jsonriver:
            river = f"{extras.vs_jsonriver[label]:.1f}x ({river} from the cells)"
        lines.append(
            f"| {label} | {jiter} | {river} | "
            f"{ratio('ijson push (no preview)', ours)} | {ratio('partial-json-parser', ours_p)} | "
            f"{ratio('json_repair', ours_p)} |"
        )
    writes = [label for label in results if label.startswith("write")]
    first, last = writes[0], writes[-1]
    flat = results[last]["streamrepair"].median_us / results[first]["streamrepair"].median_us
    flat_p = (
        results[last]["streamrepair+preview"].median_us
        / results[first]["streamrepair+preview"].median_us
    )
    lines += [
        "",
        f"Per-delta cost from the table's cells, {last} ÷ {first} (median µs/delta): "
        f"{flat:.2f}x without previews, {flat_p:.2f}x with a preview after every delta "
        "(cells minutes apart: machine drift included).",
    ]
    if extras.flatness:
        sizes = ", ".join(f"{label} {us:.2f}" for label, us in extras.flatness.items())
        values = list(extras.flatness.values())
        lines.append(
            f"Per-delta cost measured interleaved (median µs/delta, no previews): {sizes}; "
            f"largest ÷ smallest size: {values[-1] / values[0]:.2f}x."
        )
    if extras.small_vs_jiter is not None:
        lines.append(
            "Whole 1 KB stream, runs alternating with jiter re-parse: jiter takes "
            f"{extras.small_vs_jiter:.2f}x as long as streamrepair (median of runs)."
        )
    lines += [
        "",
        "repair() on valid input ÷ json.loads (median of repeats):",
        "",
        "| document | ratio | repair() ms |",
        "|---|---|---|",
    ]
    lines += [f"| {label} | {ratio:.2f}x | {ms:.2f} |" for label, ratio, ms in extras.repair_rows]
    lines += [
        "",
        f"preview() on a 1 MiB buffer whose open string is short: {extras.preview_us:.1f} µs "
        "(median).",
    ]
    if missing:
        lines += [
            "",
            "Not installed, not measured: " + ", ".join(missing) + " (pip install -e '.[bench]').",
        ]
    return "\n".join(lines)


def write_docs(report: str, results: dict[str, dict[str, Cell]], names: list[str]) -> None:
    plot = ROOT / "docs" / "performance.png"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        writes = [label for label in results if label.startswith("write")]
        sizes = [SIZES[label.removeprefix("write ")] / 1024 for label in writes]
        fig, ax = plt.subplots(figsize=(8, 5))
        for name in names:
            ys = [results[label][name].median_us for label in writes]
            ax.plot(sizes, ys, marker="o", label=name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("argument size (KiB)")
        ax.set_ylabel("median µs per 16-char delta")
        ax.set_title("Cost of one delta as the argument grows")
        ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(plot, dpi=110)
        image = "\n![µs per delta against argument size](performance.png)\n"
    except ImportError:
        image = ""
    doc = ROOT / "docs" / "performance.md"
    text = doc.read_text(encoding="utf-8") if doc.exists() else ""
    head, marker, rest = text.partition("<!-- results -->")
    # The results run to the next section (other benchmarks' sections follow them).
    after = rest.find("\n## ") if marker else -1
    tail = rest[after:] if after >= 0 else ""
    doc.write_text(head + "<!-- results -->\n\n" + report + "\n" + image + tail, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
