"""Start-up cost of a harness hook: `streamrepair hook claude-code` against `python -c pass`.

A command hook runs once per tool call in a fresh process, so its start-up is paid on every
call. The target (issue 9): within 50 ms of a bare `python -c pass` for a call that needs
no repair, which means the schema machinery (jsonschema) must not load for it. Each command
runs many times, alternating, and the medians are compared: wall time, and CPU time (user +
system, from the kernel's accounting of the child), which a shared machine disturbs less;
the fastest run of each shows the cost with the least interference. The package's bytecode
is compiled first, as installing a wheel does: a source tree run with PYTHONDONTWRITEBYTECODE
would otherwise compile every module on every call.

    python benchmarks/bench_hook.py                 # 40 runs each
    python benchmarks/bench_hook.py --runs 10       # quicker
    python benchmarks/bench_hook.py --write-docs    # also update docs/performance.md
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from _report import write_section

CLEAN = {
    "session_id": "bench",
    "hook_event_name": "PreToolUse",
    "cwd": "/tmp",
    "permission_mode": "default",
    "tool_name": "Read",
    "tool_input": {"file_path": "/tmp/notes.txt", "limit": 40},
}
NEEDS_REPAIR = {**CLEAN, "tool_input": {"file_path": "/tmp/notes.txt", "limit": None}}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(argv: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, float]:
    """(wall ms, CPU ms) of one run."""
    cpu, start = _cpu(), time.perf_counter()
    subprocess.run(argv, input=stdin, capture_output=True, env=env, check=True)
    return (time.perf_counter() - start) * 1000, (_cpu() - cpu) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="runs of each command")
    parser.add_argument("--write-docs", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    import streamrepair

    compileall.compile_dir(os.path.dirname(streamrepair.__file__), quiet=1)
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home, "STREAMREPAIR_TELEMETRY": os.path.join(home, "t.jsonl")}
        hook = [sys.executable, "-m", "streamrepair.cli", "hook", "claude-code"]
        commands = {
            "python -c pass": ([sys.executable, "-c", "pass"], b""),
            "hook, a call that needs no repair": (hook, json.dumps(CLEAN).encode()),
            "hook, a call that needs a repair": (hook, json.dumps(NEEDS_REPAIR).encode()),
        }
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for cmd, stdin in commands.values():  # warm the file cache
            _time(cmd, stdin, env)
        for _ in range(args.runs):
            for name, (cmd, stdin) in commands.items():
                times[name].append(_time(cmd, stdin, env))

    def median(name: str, which: int) -> float:
        return statistics.median(run[which] for run in times[name])

    base_wall, base_cpu = median("python -c pass", 0), median("python -c pass", 1)
    base_best = min(run[0] for run in times["python -c pass"])
    rows = [
        "| command | wall ms | over `python -c pass` | CPU ms | over `python -c pass` "
        "| fastest run, over `python -c pass` |",
        "|---|---|---|---|---|---|",
    ]
    for name in times:
        wall, cpu = median(name, 0), median(name, 1)
        best = min(run[0] for run in times[name]) - base_best
        rows.append(
            f"| {name} | {wall:.1f} | {wall - base_wall:+.1f} | {cpu:.1f} | "
            f"{cpu - base_cpu:+.1f} | {best:+.1f} |"
        )
    clean_over = median("hook, a call that needs no repair", 1) - base_cpu
    verdict = "met" if clean_over <= 50 else "not met"
    report = "\n".join(
        [
            "## Hook start-up",
            "",
            f"`python benchmarks/bench_hook.py --runs {args.runs}`: each command run "
            f"{args.runs} times, alternating, bytecode compiled; medians.",
            "",
            *rows,
            "",
            f"Target: a call that needs no repair within 50 ms of `python -c pass`: {verdict} "
            f"({clean_over:+.1f} ms of CPU time). A call that needs a repair loads jsonschema.",
        ]
    )
    print(report)
    if args.write_docs:
        write_section("bench_hook", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
