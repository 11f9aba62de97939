"""Several worker processes on one port (``streamrepair serve --workers N``): the
supervisor, and ``/metrics`` counted over all of them.

Theory of operation
-------------------
:func:`supervise` forks the workers after the listening socket was bound (``server.py``):
they all accept on it, and the kernel hands each new connection to one of them, so a
conversation's requests land on any worker. A worker shares nothing with the others but
that socket, the memo store (a file they all open, ``shared_store.py``, or Redis) and a
directory for their counters. A worker that dies is started again (a crash loop, three
deaths within :data:`QUICK_DEATH` seconds of their start in a row, stops the service).
``SIGINT`` and ``SIGTERM`` go to every worker, which finish their streams as uvicorn
does; the supervisor returns once all have exited.

``/metrics`` is answered by whichever worker gets the request, so each worker writes its
own page to the directory (:class:`MetricsShare`, at most every
:data:`PUBLISH_SECONDS`), and the page served is its own live counters added to the
others' last pages (:func:`merge_pages`: every sample of the same series summed; for a
gauge with a ``state`` label, that is the number of workers in each state). A dead
worker's page is removed with it: its counters drop out, as a restarted process's would.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Final

import anyio

__all__ = ["PUBLISH_SECONDS", "QUICK_DEATH", "MetricsShare", "merge_pages", "supervise"]

#: Seconds between two writes of a worker's counters for the others' ``/metrics``.
PUBLISH_SECONDS: Final = 1.0
#: A worker that dies this many seconds after its start or sooner died quickly; three in a
#: row stop the service (a worker that cannot start would otherwise be forked forever).
QUICK_DEATH: Final = 5.0
_QUICK_DEATHS_ALLOWED: Final = 3


class MetricsShare:
    """The counters of several workers, through files in ``directory`` (module
    docstring)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, pid: int) -> Path:
        return self.directory / f"metrics-{pid}.prom"

    def publish(self, page: str) -> None:
        """Write this worker's page (atomically: written aside, then renamed)."""
        path = self._path(os.getpid())
        aside = path.with_suffix(".tmp")
        aside.write_text(page, encoding="utf-8")
        os.replace(aside, path)

    @contextlib.asynccontextmanager
    async def publishing(self, render: Callable[[], str]) -> AsyncIterator[None]:
        """While in the context, write ``render()`` every :data:`PUBLISH_SECONDS` when
        it changed; at the end, once more."""
        last = ""

        async def loop() -> None:
            nonlocal last
            while True:
                page = render()
                if page != last:
                    with contextlib.suppress(OSError):
                        self.publish(page)
                    last = page
                await anyio.sleep(PUBLISH_SECONDS)

        async with anyio.create_task_group() as group:
            group.start_soon(loop)
            try:
                yield
            finally:
                group.cancel_scope.cancel()
                with contextlib.suppress(OSError):
                    self.publish(render())

    def merged(self, own: str) -> str:
        """``own`` (this worker's live page) added to every other worker's last page."""
        pages = [own]
        mine = self._path(os.getpid())
        for path in sorted(self.directory.glob("metrics-*.prom")):
            if path != mine:
                with contextlib.suppress(OSError):
                    pages.append(path.read_text(encoding="utf-8"))
        return merge_pages(pages)

    def forget(self, pid: int) -> None:
        """Remove a dead worker's page."""
        with contextlib.suppress(OSError):
            self._path(pid).unlink()


def merge_pages(pages: list[str]) -> str:
    """Prometheus text pages of the same exporter added up: ``# HELP``/``# TYPE`` once
    per metric, every sample of the same series (name and labels as written) summed, in
    the order they first appear."""
    comments: dict[str, list[str]] = {}
    samples: dict[str, dict[str, float]] = {}
    for page in pages:
        for line in page.splitlines():
            if not line:
                continue
            if line.startswith("#"):
                parts = line.split(" ", 3)
                if len(parts) >= 3:
                    seen = comments.setdefault(parts[2], [])
                    if line not in seen:
                        seen.append(line)
                    samples.setdefault(parts[2], {})
                continue
            series, _, value = line.rpartition(" ")
            name = series.split("{", 1)[0]
            try:
                number = float(value)
            except ValueError:
                continue
            group = samples.setdefault(name, {})
            group[series] = group.get(series, 0.0) + number
    out: list[str] = []
    for name, group in samples.items():
        out.extend(comments.get(name, ()))
        for series, number in group.items():
            out.append(f"{series} {int(number) if number.is_integer() else number}")
    return "\n".join(out) + "\n"


def supervise(
    count: int, run_worker: Callable[[], None], *, on_death: Callable[[int], None] | None = None
) -> int:
    """Fork ``count`` workers, each running ``run_worker()`` (module docstring); returns
    the exit code once they have all exited. ``on_death`` is told the pid of each worker
    that exited."""
    workers: dict[int, float] = {}  # pid -> when it started
    stopping = False
    quick_deaths = 0

    def start() -> None:
        pid = os.fork()
        if pid == 0:  # the worker
            for number in (signal.SIGINT, signal.SIGTERM):
                signal.signal(number, signal.SIG_DFL)
            code = 0
            try:
                run_worker()
            except BaseException:
                import traceback

                traceback.print_exc()
                code = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        workers[pid] = time.monotonic()

    def stop(number: int, frame: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(workers):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    previous = {n: signal.signal(n, stop) for n in (signal.SIGINT, signal.SIGTERM)}
    try:
        for _ in range(count):
            start()
        while workers:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            began = workers.pop(pid, None)
            if began is None:
                continue
            if on_death is not None:
                on_death(pid)
            if stopping:
                continue
            quick_deaths = quick_deaths + 1 if time.monotonic() - began <= QUICK_DEATH else 0
            code = os.waitstatus_to_exitcode(status)
            print(
                f"streamrepair serve: worker {pid} exited ({code}); starting another",
                file=sys.stderr,
            )
            if quick_deaths >= _QUICK_DEATHS_ALLOWED:
                print(
                    f"streamrepair serve: {quick_deaths} workers died on start in a row; stopping",
                    file=sys.stderr,
                )
                stop(signal.SIGTERM, None)
                continue
            start()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return 1 if quick_deaths >= _QUICK_DEATHS_ALLOWED else 0
