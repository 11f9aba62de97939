"""The assembler benchmarks' shared contenders (``bench_previews.py``,
``bench_assembler_steps.py``, ``bench_builds.py``), written once so that every table
times each one the same way.

Each ``make(chunks)`` returns a run: no arguments, the seconds one whole stream of
``chunks`` (the deltas) took. What a contender imports or builds before its stream
starts is outside the timing; each competitor's module is imported once, never inside
the loop over the deltas.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

Run = Callable[[], float]  # seconds of one whole stream


def ours_changes(assembler_class: Any, chunks: list[str]) -> Run:
    """Ours: ``feed()`` and ``take_changes()`` after every delta."""

    def run() -> float:
        assembler = assembler_class(changes=True)
        feed, take = assembler.feed, assembler.take_changes
        start = time.perf_counter()
        for chunk in chunks:
            feed(chunk)
            take()
        return time.perf_counter() - start

    return run


def ours_live(assembler_class: Any, builder_class: Any, chunks: list[str]) -> Run:
    """Ours with the live value: feed, take the changes and apply them to a
    ``ValueBuilder`` after every delta (its value is then current)."""

    def run() -> float:
        assembler = assembler_class(changes=True)
        builder = builder_class()
        feed, take, apply = assembler.feed, assembler.take_changes, builder.apply_all
        start = time.perf_counter()
        for chunk in chunks:
            feed(chunk)
            apply(take())  # the live value is builder.value, joined when read
        return time.perf_counter() - start

    return run


def jiter_reparse(chunks: list[str]) -> Run:
    """jiter re-parsing the whole buffer after every delta (what openai-python's and
    anthropic's stream helpers do)."""
    import jiter

    from_json = jiter.from_json

    def run() -> float:
        buffer = ""
        start = time.perf_counter()
        for chunk in chunks:
            buffer += chunk
            from_json(buffer.encode(), partial_mode="trailing-strings")
        return time.perf_counter() - start

    return run


def reparse(parse: Callable[[str], Any], chunks: list[str]) -> Run:
    """``parse`` on the whole buffer after every delta."""

    def run() -> float:
        buffer = ""
        start = time.perf_counter()
        for chunk in chunks:
            buffer += chunk
            parse(buffer)
        return time.perf_counter() - start

    return run


def jsonriver_live(chunks: list[str]) -> Run:
    """jsonriver's async parse, which yields the value after every delta."""
    import jsonriver

    def run() -> float:
        async def source() -> Any:
            for chunk in chunks:
                yield chunk

        async def consume() -> float:
            start = time.perf_counter()
            async for _value in jsonriver.parse(source()):
                pass
            return time.perf_counter() - start

        return asyncio.run(consume())

    return run


def median_runs(runs: dict[str, Run], rounds: int) -> dict[str, float]:
    """Each run in turn, ``rounds`` times, after a collection; each one's median."""
    results: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            gc.collect()
            results[name].append(run())
    return {name: statistics.median(values) for name, values in results.items()}
