"""The ``streamrepair`` command.

Each subcommand lives in its own module that exposes ``register(subparsers) -> None``;
the module adds one parser and sets ``handler=...`` (a callable taking the parsed
``argparse.Namespace`` and returning an exit code) with ``parser.set_defaults``.
To add a subcommand, append its module name to ``_SUBCOMMAND_MODULES`` and map each
command name it registers to it in ``_COMMANDS`` (running a command imports only that
module; ``--help`` imports them all).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

__all__ = ["EXIT_BROKEN_PIPE", "build_parser", "main", "version_text"]

#: Exit status when standard output was closed by its reader (128 + SIGPIPE).
EXIT_BROKEN_PIPE = 141

_SUBCOMMAND_MODULES: tuple[str, ...] = (
    "streamrepair.cli.repair",
    "streamrepair.cli.replay",
    "streamrepair.cli.hook",
    "streamrepair.cli.integrations",
    "streamrepair.cli.schemas",
)
# Which module registers each command, so that running one command imports only its
# module: a harness hook runs once per tool call and should not pay for the stream layer.
_COMMANDS: dict[str, str] = {
    "repair": "streamrepair.cli.repair",
    "replay": "streamrepair.cli.replay",
    "hook": "streamrepair.cli.hook",
    "serve": "streamrepair.cli.integrations",
    "install": "streamrepair.cli.integrations",
    "stats": "streamrepair.cli.integrations",
    "schemas": "streamrepair.cli.schemas",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser, with every subcommand registered (or only the module of
    ``command``, when it names one)."""
    import argparse  # not needed by `streamrepair hook` (see main)

    parser = argparse.ArgumentParser(
        prog="streamrepair",
        description=(
            "Assemble and repair LLM tool-call arguments streamed as JSON deltas: repair what "
            "is unambiguous, refuse what was cut off, and report every repair."
        ),
    )
    parser.add_argument(
        "--version",
        action=_version_action(),
        help="print the version and which build runs (compiled or pure Python), and exit",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    module = _COMMANDS.get(command or "")
    for name in (module,) if module else _SUBCOMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def version_text() -> str:
    """What ``--version`` prints: the version and which build runs, e.g.
    ``streamrepair 0.1.0, compiled (mypyc 2.3.1, 7 modules)``."""
    from .._build import build_info
    from .._version import __version__

    return f"streamrepair {__version__}, {build_info()}"


def _version_action() -> type[argparse.Action]:
    import argparse

    class VersionAction(argparse.Action):
        """``--version``, which imports the compiled modules only when asked."""

        def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
            super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

        def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
            print(version_text())
            parser.exit()

    return VersionAction


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["hook"] and arguments[1:2] not in (["-h"], ["--help"]):
        # A hook runs once per tool call: skip building the argument parser.
        from .hook import run

        return run(arguments[1:])
    command = next((a for a in arguments if not a.startswith("-")), None)
    parser = build_parser(command)
    args = parser.parse_args(arguments)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        code: int = handler(args)
    except BrokenPipeError:
        # The reader went away (`streamrepair replay | head`): stop quietly, as Unix
        # tools do, and keep Python from complaining again when it flushes at exit.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    return code
