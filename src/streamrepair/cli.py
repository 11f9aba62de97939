"""The ``streamrepair`` command.

Each subcommand lives in its own module that exposes ``register(subparsers) -> None``;
the module adds one parser and sets ``handler=...`` (a callable taking the parsed
``argparse.Namespace`` and returning an exit code) with ``parser.set_defaults``.
To add a subcommand, append its module name to ``_SUBCOMMAND_MODULES``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["build_parser", "main"]

_SUBCOMMAND_MODULES: tuple[str, ...] = (
    "streamrepair.cli_repair",
    "streamrepair.cli_replay",
    "streamrepair.cli_integrations",
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="streamrepair",
        description=(
            "Assemble and repair LLM tool-call arguments streamed as JSON deltas: repair what "
            "is unambiguous, refuse what was cut off, and report every repair."
        ),
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _SUBCOMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    code: int = handler(args)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
