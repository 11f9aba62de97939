"""Measure issue 21's scenarios in the real harnesses, directly and through the proxy.

``python tests/e2e/measure_loops.py [--harness H ...] [--via direct|proxy ...]
[--scenario NAME ...] [--keep DIR]`` runs each combination once (the binaries
``e2e_tools`` pins) and prints one JSON line per run: the :meth:`LoopRun.summary`
(requests the upstream got, which were retries, the tool results the model read after
each reply, the files written, exit code, final text, seconds), plus the proxy's log
lines for proxied runs. One upstream and one proxy serve every run (``harnessloop.Bench``).
docs/integrations/harness-loops.md was written from its output.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from forms import FORMS
from harnessloop import Bench, Harness, Via, run_loop, skip_reason
from scenarios import SCENARIOS


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--harness", action="append", choices=[h.value for h in Harness])
    parser.add_argument("--via", action="append", choices=[v.value for v in Via])
    parser.add_argument("--scenario", action="append", choices=list(SCENARIOS))
    parser.add_argument(
        "--form", action="append", choices=[*FORMS, "all"], help="refusal forms (direct only)"
    )
    parser.add_argument("--keep", type=Path, help="keep each run's folder under DIR")
    args = parser.parse_args(argv)
    harnesses = [Harness(h) for h in args.harness or [h.value for h in Harness]]
    vias = [Via(v) for v in args.via or [v.value for v in Via]]
    names = args.scenario or ([] if args.form else list(SCENARIOS))
    forms = list(FORMS) if args.form == ["all"] else args.form or []
    base = args.keep or Path(tempfile.mkdtemp(prefix="measure-loops-"))
    with contextlib.ExitStack() as stack:
        bench = stack.enter_context(Bench(base / "proxy")) if Via.PROXY in vias else None
        _measure(harnesses, vias, names, forms, base, bench)
    return 0


def _measure(
    harnesses: Sequence[Harness],
    vias: Sequence[Via],
    names: Sequence[str],
    forms: Sequence[str],
    base: Path,
    bench: Bench | None,
) -> None:
    for harness in harnesses:
        reason = skip_reason(harness)
        if reason is not None:
            print(json.dumps({"harness": harness.value, "skipped": reason}))
            continue
        for name in names:
            for via in vias:
                root = base / f"{harness.value}-{name}-{via.value}"
                run = run_loop(
                    harness, SCENARIOS[name].script(harness), root=root, via=via, bench=bench
                )
                line = {"scenario": name, **run.summary()}
                line["intended_done"] = SCENARIOS[name].done(run)
                line["wrong_writes"] = SCENARIOS[name].wrong_writes(run)
                if via is Via.PROXY:
                    line["proxy"] = run.proxy_log.splitlines()[-6:]
                print(json.dumps(line, ensure_ascii=False), flush=True)
        for name in forms:
            form = FORMS[name]
            if harness not in form.harnesses:
                continue
            root = base / f"{harness.value}-form-{name}"
            run = run_loop(harness, form.script(harness), root=root, codex=form.codex)
            print(json.dumps({"form": name, **run.summary()}, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    sys.exit(main())
