"""Benchmark: issue 24's cells counted in CPU instructions under valgrind's callgrind, for
both builds and the competitors, so that a change can be judged on a loaded machine.

Wall-clock times on the shared 2-core VM move by 2x between runs; the instructions a fixed
workload executes do not (the hash seed is fixed, the garbage collector runs at the same
allocations). Each contender runs in a process of its own under callgrind: a warm-up run,
then ``--runs`` measured runs, each between two markers (``os.getppid()`` zeroes the
counters, ``os.getpgrp()`` dumps them), so imports and set-up are not counted. Reported:
instructions per whole stream (the median of the runs) and the competitor's count over
ours. Instructions are not time (a cache miss or a branch mispredicted costs more than an
instruction), so the wall-clock ratios of ``bench_builds.py`` and
``bench_assembler_steps.py`` are the ones docs/performance.md states; this one says which
way a change moves the cost, within a fraction of a percent.

The cells (the workloads of ``bench_previews.py``):

1. **1 KB vs jiter**: write, numbers, nested, many keys at 1 KB in 16-character deltas;
   ours: ``feed()`` and ``take_changes()`` after every delta, then ``finish()``; jiter:
   re-parse the whole buffer after every delta. Goal: jiter ÷ ours at least 1.0x.
2. **The live value vs jsonriver**: numbers, nested and many keys of 10 KB in 16-character
   and 1-character deltas; ours: feed, take the changes, apply them to a ``ValueBuilder``;
   jsonriver: its async parse, which yields the value after every chunk. Goal: jsonriver ÷
   ours at least 3x.

    python benchmarks/bench_assembler_instructions.py                  # a few minutes
    python benchmarks/bench_assembler_instructions.py --save before.json
    python benchmarks/bench_assembler_instructions.py --compare before.json
    python benchmarks/bench_assembler_instructions.py --only numbers --contenders compiled

Needs valgrind (``apt-get install valgrind``) and the compiled build installed
(``pip install -e '.[bench]'``); the pure build runs from the same install with
``STREAMREPAIR_PURE=1``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"

SMALL = ("write", "numbers", "nested", "many keys")
STRUCTURE = ("numbers", "nested", "many keys")
LIVE_SIZE = 10 * 1024
LIVE_DELTAS = (16, 1)
BUILDS = ("compiled", "pure")


def cells() -> list[tuple[str, str, int, int, str]]:
    """(cell name, workload, size, delta, competitor) of each of issue 24's cells."""
    out = [(f"1 KB {name}", name, 1024, 16, "jiter") for name in SMALL]
    for name in STRUCTURE:
        for delta in LIVE_DELTAS:
            out.append((f"live {name} /{delta}", name, LIVE_SIZE, delta, "jsonriver"))
    return out


# -- the child: one contender on one cell, under callgrind ----------------------------------


def _markers() -> tuple[Callable[[], object], Callable[[], object]]:
    # callgrind zeroes its counters on entering os.getppid and dumps them on entering
    # os.getpgrp (--zero-before, --dump-before): what runs between is what is counted.
    return os.getppid, os.getpgrp


def child(workload: str, size: int, delta: int, contender: str, runs: int) -> None:
    sys.path.insert(0, str(BENCHMARKS))
    from bench_previews import WORKLOADS, deltas

    chunks = deltas(WORKLOADS[workload](size), delta)
    start, stop = _markers()
    live = size != 1024

    if contender in BUILDS:
        import streamrepair

        assert streamrepair.build_info().compiled == (contender == "compiled"), (
            streamrepair.build_info()
        )
        assembler_class = streamrepair.ArgumentAssembler
        builder_class = streamrepair.ValueBuilder

        def run() -> None:
            assembler = assembler_class(changes=True)
            builder = builder_class()
            feed, take, apply = assembler.feed, assembler.take_changes, builder.apply_all
            start()
            if live:
                for chunk in chunks:
                    feed(chunk)
                    apply(take())
            else:
                for chunk in chunks:
                    feed(chunk)
                    take()
            assembler.finish()
            stop()

    elif contender == "jiter":
        import jiter

        def run() -> None:
            buffer = ""
            start()
            for chunk in chunks:
                buffer += chunk
                jiter.from_json(buffer.encode(), partial_mode="trailing-strings")
            stop()

    elif contender == "jsonriver":
        import jsonriver

        async def source() -> Any:
            for chunk in chunks:
                yield chunk

        async def consume() -> None:
            start()
            async for _value in jsonriver.parse(source()):
                pass
            stop()

        def run() -> None:
            asyncio.run(consume())

    else:
        raise SystemExit(f"unknown contender {contender!r}")

    run()  # warm-up: lazy imports, caches (not counted: its dump is dropped)
    for _ in range(runs):
        gc.collect()
        run()


# -- the parent ---------------------------------------------------------------------------


def _cost(events: dict[str, int]) -> int:
    """Callgrind's estimate of cycles from its simulated caches and branch predictor:
    instructions, 10 per first-level miss and branch mispredicted, 100 per last-level
    miss. Instructions alone flatter an interpreter: CPython's and mypyc's code is large
    (instruction cache misses) and dispatches through pointers (indirect branches), where
    a parser in Rust runs a tight loop."""
    first = events["I1mr"] + events["D1mr"] + events["D1mw"]
    last = events["ILmr"] + events["DLmr"] + events["DLmw"]
    branches = events["Bcm"] + events["Bim"]
    return events["Ir"] + 10 * (first + branches) + 100 * last


def _dumps(directory: Path) -> list[dict[str, int]]:
    """The counters of each dump callgrind wrote at ``os.getpgrp``, in order."""
    found: list[tuple[int, dict[str, int]]] = []
    for path in directory.iterdir():
        part = path.name.rsplit(".", 1)[-1]
        if not part.isdigit() or path.name.count(".") < 2:
            continue  # the final dump at exit (cg.PID): the rest of the process
        names: list[str] = []
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("events:"):
                names = line.split()[1:]
            elif line.startswith("summary:"):
                found.append((int(part), dict(zip(names, map(int, line.split()[1:]), strict=True))))
                break
    return [events for _, events in sorted(found)]


def count(cell: tuple[str, str, int, int, str], contender: str, runs: int) -> tuple[int, int]:
    """Instructions and estimated cycles per whole stream of ``contender`` on ``cell``
    (of the run with the median estimate)."""
    _, workload, size, delta, _ = cell
    directory = Path(tempfile.mkdtemp(prefix="streamrepair-callgrind-"))
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.pop("STREAMREPAIR_PURE", None)
    if contender == "pure":
        env["STREAMREPAIR_PURE"] = "1"
    command = [
        "valgrind",
        "--tool=callgrind",
        "--cache-sim=yes",
        "--branch-sim=yes",
        "--zero-before=os_getppid",
        "--dump-before=os_getpgrp",
        f"--callgrind-out-file={directory}/cg.%p",
        sys.executable,
        __file__,
        "--child",
        json.dumps([workload, size, delta, contender]),
        f"--runs={runs}",
    ]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"{contender} on {cell[0]} failed:\n{done.stderr[-3000:]}")
        dumps = _dumps(directory)
        if len(dumps) != runs + 1:
            raise RuntimeError(f"{contender} on {cell[0]}: {len(dumps)} dumps, not {runs + 1}")
        measured = sorted((_cost(events), events["Ir"]) for events in dumps[1:])  # not the warm-up
        cost, instructions = measured[len(measured) // 2]
        return instructions, cost
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# cell -> contender -> [instructions, estimated cycles] per whole stream
Results = dict[str, dict[str, list[int]]]


def measure(
    chosen: list[tuple[str, str, int, int, str]], contenders: list[str], runs: int, jobs: int
) -> Results:
    tasks = [(cell, who) for cell in chosen for who in contenders if who in (*BUILDS, cell[4])]
    results: Results = {cell[0]: {} for cell in chosen}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(count, cell, who, runs): (cell, who) for cell, who in tasks}
        for future, (cell, who) in futures.items():
            instructions, cost = future.result()
            results[cell[0]][who] = [instructions, cost]
            print(
                f"  {cell[0]}: {who} {instructions:,} instructions, {cost:,} estimated cycles",
                file=sys.stderr,
                flush=True,
            )
    return results


def _figure(row: dict[str, list[int]], old: dict[str, list[int]], who: str, index: int) -> str:
    if who not in row:
        return "-"
    text = f"{row[who][index] / 1e6:.3f}"
    if who in old:
        was = old[who][index]
        text = f"{was / 1e6:.3f} → {text} ({row[who][index] / was:.3f})"
    return text


def _ratio(
    row: dict[str, list[int]], old: dict[str, list[int]], build: str, other: str, index: int
) -> str:
    if build not in row or other not in row:
        return "-"
    text = f"**{row[other][index] / row[build][index]:.2f}x**"
    if build in old and other in old:
        text = f"{old[other][index] / old[build][index]:.2f}x → {text}"
    return text


def render(results: Results, before: Results | None) -> str:
    """Markdown tables: per cell, millions of estimated cycles and of instructions of each
    contender (before → after, and after ÷ before, with ``before``), and the competitor's
    over each build's."""
    out: list[str] = []
    for index, label in ((1, "estimated cycles"), (0, "instructions")):
        out += [
            "",
            f"Millions of {label} per whole stream (competitor ÷ ours in the last two columns):",
            "",
            "| cell | compiled | pure | competitor | ÷ compiled | ÷ pure |",
            "|---|---|---|---|---|---|",
        ]
        for cell, row in results.items():
            other = "jiter" if cell.startswith("1 KB") else "jsonriver"
            old = (before or {}).get(cell, {})
            figures = [_figure(row, old, who, index) for who in (*BUILDS, other)]
            ratios = [_ratio(row, old, build, other, index) for build in BUILDS]
            out.append(f"| {cell} ({other}) | " + " | ".join(figures + ratios) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--runs", type=int, default=3, help="measured runs per contender")
    parser.add_argument("--jobs", type=int, default=2, help="callgrind processes at once")
    parser.add_argument("--only", action="append", help="cells whose name contains this")
    parser.add_argument(
        "--contenders",
        default="compiled,pure,jiter,jsonriver",
        help="what to count (comma-separated); a competitor left out is taken from --compare",
    )
    parser.add_argument("--save", type=Path, help="write the counts to this JSON file")
    parser.add_argument("--compare", type=Path, help="show the counts of this JSON file before")
    args = parser.parse_args(argv)
    if args.child:
        child(*json.loads(args.child), runs=args.runs)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    chosen = [c for c in cells() if not args.only or any(o in c[0] for o in args.only)]
    contenders = [c for c in args.contenders.split(",") if c]
    results = measure(chosen, contenders, args.runs, args.jobs)
    before = json.loads(args.compare.read_text()) if args.compare else None
    for cell, row in results.items():  # the competitors are deterministic: reuse theirs
        for who, counts in (before or {}).get(cell, {}).items():
            if who not in BUILDS:
                row.setdefault(who, counts)
    if args.save:
        args.save.write_text(json.dumps(results, indent=1) + "\n")
    print(render(results, before))
    return 0


if __name__ == "__main__":
    sys.exit(main())
