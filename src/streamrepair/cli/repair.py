"""``streamrepair repair``: feed one argument text through the assembler in deltas and show
the verdict, the value and every repair."""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from typing import Any

from .._plural import plural
from ..errors import ConcatenatedValuesError, UnrepairableError
from ..results import Repaired, Status
from ..syntax.assembler import ArgumentAssembler

__all__ = ["EXIT_CUT_OFF", "EXIT_READY", "EXIT_UNREPAIRABLE", "register"]

#: The argument is complete and may be run (it may have been repaired).
EXIT_READY = 0
#: The argument cannot be repaired (or several distinct values were concatenated).
EXIT_UNREPAIRABLE = 1
#: The argument was cut off: a value exists only because structure was invented.
EXIT_CUT_OFF = 3

_EXAMPLE = "write_call.txt"


def register(subparsers: Any) -> None:
    """Add the ``repair`` subcommand."""
    parser = subparsers.add_parser(
        "repair",
        help="repair one tool-call argument text, fed in deltas",
        description=(
            "Feed a tool call's argument text through the incremental assembler in deltas of "
            "--chunk characters, then print the verdict (ready / cut off / unrepairable), "
            "the value, and every repair made. With no FILE, a bundled malformed example "
            "(a fenced write call with a Windows path, a raw newline, Python True, a bare "
            "word and trailing commas) is used."
        ),
        epilog=(
            f"exit status: {EXIT_READY} ready to run, {EXIT_UNREPAIRABLE} unrepairable, "
            f"{EXIT_CUT_OFF} cut off (structure would have to be invented), 2 usage error"
        ),
    )
    parser.add_argument(
        "file", nargs="?", metavar="FILE", help="argument text to read ('-' for standard input)"
    )
    parser.add_argument(
        "--chunk",
        type=int,
        default=16,
        metavar="N",
        help="characters per delta (default 16, as providers stream them)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.set_defaults(handler=_run)


def _read(file: str | None) -> tuple[str, str]:
    if file is None:
        text = resources.files("streamrepair.examples").joinpath(_EXAMPLE).read_text("utf-8")
        return text, f"bundled example {_EXAMPLE}"
    if file == "-":
        return sys.stdin.read(), "standard input"
    with open(file, encoding="utf-8") as handle:
        return handle.read(), file


def _run(args: argparse.Namespace) -> int:
    if args.chunk < 1:
        print("streamrepair repair: --chunk must be at least 1", file=sys.stderr)
        return 2
    try:
        text, source = _read(args.file)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"streamrepair repair: cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    assembler = ArgumentAssembler()
    transitions: list[tuple[int, Status]] = []
    deltas = 0
    for start in range(0, len(text), args.chunk):
        deltas += 1
        status = assembler.feed(text[start : start + args.chunk])
        if not transitions or transitions[-1][1] is not status:
            transitions.append((assembler.chars_fed, status))
        if status is Status.UNREPAIRABLE:
            break
    report: dict[str, Any] = {
        "source": source,
        "characters": len(text),
        "deltas": deltas,
        "chunk": args.chunk,
        "status_changes": [{"at": at, "status": s.value} for at, s in transitions],
    }
    code = _verdict(assembler, report)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        _print_text(report)
    return code


def _verdict(assembler: ArgumentAssembler, report: dict[str, Any]) -> int:
    try:
        result = assembler.finish()
    except ConcatenatedValuesError as exc:
        report["verdict"] = "unrepairable"
        report["error"] = str(exc)
        report["values"] = [_describe(value) for value in exc.values]
        return EXIT_UNREPAIRABLE
    except UnrepairableError as exc:
        report["verdict"] = "unrepairable"
        report["error"] = str(exc)
        return EXIT_UNREPAIRABLE
    report.update(_describe(result))
    if result.structure_synthesized:
        report["verdict"] = "cut off"
        return EXIT_CUT_OFF
    report["verdict"] = "ready"
    return EXIT_READY


def _describe(result: Repaired) -> dict[str, Any]:
    return {
        "structure_synthesized": result.structure_synthesized,
        "value": result.value,
        "repairs": [
            {
                "kind": r.kind.value,
                "offset": r.offset,
                "count": r.count,
                "description": r.description,
            }
            for r in result.repairs
        ],
    }


_VERDICT_TEXT = {
    "ready": "ready: a complete argument, safe to run",
    "cut off": "cut off: the value exists only because structure was invented; do not run it",
    "unrepairable": "unrepairable: no repair can fix this text",
}


def _print_text(report: dict[str, Any]) -> None:
    out = sys.stdout
    out.write(
        f"{report['source']}: {plural(report['characters'], 'character')} in "
        f"{plural(report['deltas'], 'delta')} of {report['chunk']}\n"
    )
    changes = ", ".join(f"{c['status']} at {c['at']}" for c in report["status_changes"])
    out.write(f"status: {changes or 'nothing fed'}\n")
    out.write(f"verdict: {_VERDICT_TEXT[report['verdict']]}\n")
    if "error" in report:
        out.write(f"error: {report['error']}\n")
    if "value" in report:
        out.write("value:\n")
        out.write(json.dumps(report["value"], ensure_ascii=False, indent=2) + "\n")
    repairs = report.get("repairs", [])
    out.write(f"repairs: {len(repairs) or 'none'}\n")
    for r in repairs:
        out.write(f"  at {r['offset']:>5}  {r['kind']:<26} {r['description']}\n")
