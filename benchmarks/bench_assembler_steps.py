"""Benchmark: the assembler on structure-heavy text (issue 24), against jiter and jsonriver,
and optionally against an earlier version of itself, all interleaved in one process.

Issue 24's cells, with the workloads of ``bench_previews.py`` (the same builders):

1. **1 KB vs jiter**: each workload (write, numbers, nested, many keys) at 1 KB in
   16-character deltas; ours: ``feed()`` and ``take_changes()`` after every delta; jiter:
   re-parse the whole buffer after every delta (what openai-python and anthropic do).
   Reported: jiter time ÷ ours (goal at least 1.0x, 1.5x).
2. **jsonriver, the live value after every delta**: numbers, nested and many keys of 32 KB
   at 16-character and 1-character deltas; ours: feed, take the changes, apply them to a
   ``ValueBuilder`` (whose value is then current); jsonriver: its async parse, which yields
   the value after every chunk. Reported: jsonriver time ÷ ours (goal at least 3x, 5x).

With ``--baseline REF`` the package as it was at git revision ``REF`` is extracted to a
temporary directory, imported under another name, and measured in the same rounds: each
cell then shows the ratio before and after, measured side by side (a shared machine drifts
by 2x over minutes; runs side by side do not). Every figure is the median of the rounds;
no assertion is made.

    python benchmarks/bench_assembler_steps.py --baseline main          # about ten minutes
    python benchmarks/bench_assembler_steps.py --quick --baseline HEAD  # a sanity check
    python benchmarks/bench_assembler_steps.py --baseline main --write-docs
"""

from __future__ import annotations

import argparse
import importlib
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _contenders import jiter_reparse, jsonriver_live, median_runs, ours_changes, ours_live  # noqa: E402
from _report import write_section  # noqa: E402
from bench_previews import WORKLOADS, deltas  # noqa: E402

import streamrepair  # noqa: E402
import streamrepair.syntax.assembler as current_assembler  # noqa: E402
import streamrepair.syntax.changes as current_changes  # noqa: E402

SMALL = ("write", "numbers", "nested", "many keys")
STRUCTURE = ("numbers", "nested", "many keys")
RIVER_DELTAS = (16, 1)

Version = tuple[Any, Any]  # (ArgumentAssembler, ValueBuilder) of one version of the package


def load_baseline(ref: str) -> tuple[Version, Path]:
    """The package at git revision ``ref``, imported as ``streamrepair_baseline``."""
    where = Path(tempfile.mkdtemp(prefix="streamrepair-baseline-"))
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "src/streamrepair"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    (where / "src" / "streamrepair").rename(where / "streamrepair_baseline")
    sys.path.insert(0, str(where))
    assembler = importlib.import_module("streamrepair_baseline.syntax.assembler")
    changes = importlib.import_module("streamrepair_baseline.syntax.changes")
    return (assembler.ArgumentAssembler, changes.ValueBuilder), where


# -- the runs: each returns the seconds of one whole stream --------------------------------


Cell = dict[str, float]  # seconds per contender: "ours", maybe "before", and the competitor


def measure(
    versions: dict[str, Version], quick: bool, rounds: int
) -> tuple[dict[str, Cell], dict[tuple[str, int], Cell]]:
    small: dict[str, Cell] = {}
    for name in SMALL:
        chunks = deltas(WORKLOADS[name](1024))
        funcs = {label: ours_changes(v[0], chunks) for label, v in versions.items()}
        funcs["jiter"] = jiter_reparse(chunks)
        small[name] = median_runs(funcs, rounds * 10)
        print(f"  1 KB {name}: {small[name]}", file=sys.stderr, flush=True)
    river: dict[tuple[str, int], Cell] = {}
    size = 8 * 1024 if quick else 32 * 1024
    for name in STRUCTURE:
        text = WORKLOADS[name](size)
        for delta in RIVER_DELTAS:
            chunks = deltas(text, delta)
            funcs = {label: ours_live(*v, chunks) for label, v in versions.items()}
            funcs["jsonriver"] = jsonriver_live(chunks)
            river[(name, delta)] = median_runs(funcs, rounds)
            print(f"  jsonriver {name} /{delta}: {river[(name, delta)]}", file=sys.stderr)
    return small, river


def render(
    small: dict[str, Cell], river: dict[tuple[str, int], Cell], baseline: str | None, quick: bool
) -> str:
    def ratio(cell: Cell, other: str) -> str:
        after = f"{cell[other] / cell['ours']:.2f}x"
        if "before" not in cell:
            return after
        return f"{cell[other] / cell['before']:.2f}x → **{after}**"

    def micros(cell: Cell, per: int) -> str:
        after = f"{cell['ours'] / per * 1e6:.2f}"
        if "before" not in cell:
            return after
        return f"{cell['before'] / per * 1e6:.2f} → {after}"

    compared = f", before (`{baseline}`) → after" if baseline else ""
    lines = [
        f"Python {platform.python_version()} on {platform.machine()}, streamrepair"
        f" {streamrepair.build_info()}{' (quick run)' if quick else ''}; whole-stream times, medians of rounds in which"
        f" every contender ran in turn{compared}.",
        "",
        "**1 KB arguments against jiter re-parsing the buffer** (16-character deltas; ours:"
        " feed and take the changes after every delta; goal: jiter ÷ ours at least 1.0x):",
        "",
        "| workload | deltas | jiter ÷ ours | ours, µs per delta |",
        "|---|---|---|---|",
    ]
    for name, cell in small.items():
        count = len(deltas(WORKLOADS[name](1024)))
        lines.append(f"| {name} | {count} | {ratio(cell, 'jiter')} | {micros(cell, count)} |")
    lines += [
        "",
        "**The live value after every delta, against jsonriver** (32 KB; ours: feed, take the"
        " changes, apply them to a `ValueBuilder`; goal: jsonriver ÷ ours at least 3x):",
        "",
        "| workload | delta | jsonriver ÷ ours | ours, µs per delta |",
        "|---|---|---|---|",
    ]
    for (name, delta), cell in river.items():
        count = len(deltas(WORKLOADS[name](8 * 1024 if quick else 32 * 1024), delta))
        lines.append(f"| {name} | {delta} | {ratio(cell, 'jsonriver')} | {micros(cell, count)} |")
    return "\n".join(lines)


HEADER = """## Structure-heavy text (`benchmarks/bench_assembler_steps.py`)

```bash
pip install -e '.[bench]'
python benchmarks/bench_assembler_steps.py --baseline main --write-docs   # about ten minutes
```

Issue 24's cells: tool calls are mostly small, and where the text is mostly structure
(numbers, keys, nesting) the cost is the machine's own per-token work. Each cell runs
every contender in turn, round after round, in one process; `--baseline REF` adds the
package as it was at `REF` to the same rounds, so the before and after columns were
measured side by side.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller texts, fewer rounds")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--baseline", metavar="REF", help="also measure the package at REF")
    parser.add_argument("--write-docs", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 7)
    versions: dict[str, Version] = {}
    where = None
    if args.baseline:
        versions["before"], where = load_baseline(args.baseline)
    versions["ours"] = (current_assembler.ArgumentAssembler, current_changes.ValueBuilder)
    try:
        small, river = measure(versions, args.quick, rounds)
    finally:
        if where is not None:
            shutil.rmtree(where, ignore_errors=True)
    report = render(small, river, args.baseline, args.quick)
    print(report)
    if args.write_docs:
        write_section("assembler_steps", HEADER + "\n" + report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
