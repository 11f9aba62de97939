"""The command dispatcher: every command is registered by the module the map names, and a
command imports only its own module."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from streamrepair import cli


@pytest.mark.parametrize("module", cli._SUBCOMMAND_MODULES)
def test_the_command_map_names_every_command_of_each_module(module: str) -> None:
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers(dest="command")
    importlib.import_module(module).register(subparsers)
    registered = set(subparsers.choices)
    assert registered
    assert registered == {name for name, owner in cli._COMMANDS.items() if owner == module}


@pytest.mark.parametrize("command", sorted(cli._COMMANDS))
def test_every_command_has_a_description_and_its_exit_statuses(command: str) -> None:
    # `install --help` and `stats --help` once showed only the usage line.
    parser = cli.build_parser(command)
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub = subparsers.choices[command]
    assert sub.description, f"`streamrepair {command} --help` has no description"
    assert len(sub.description.split()) >= 12, sub.description
    help_text = " ".join(sub.format_help().split())
    assert "exit" in help_text, f"`streamrepair {command} --help` does not say its exit status"


def test_a_hook_run_does_not_import_the_stream_layer() -> None:
    code = (
        "import sys\n"
        "from streamrepair.cli import main\n"
        "code = main(['hook', 'claude-code', '--no-telemetry'])\n"
        "assert code == 0, code\n"
        "loaded = [m for m in ('streamrepair.stream', 'streamrepair.stream.tracker', 'rich', 'anyio')"
        " if m in sys.modules]\n"
        "print('LOADED', loaded)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input='{"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {}}',
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "LOADED []" in done.stdout, done.stdout + done.stderr


def test_a_closed_pipe_ends_the_command_quietly() -> None:
    # `streamrepair replay --json | head -1`: the reader leaves after one line.
    reader = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.readline()"], stdin=subprocess.PIPE
    )
    # replay the demo until the pipe breaks: more output than the pipe's buffer holds
    script = (
        "import sys\n"
        "from streamrepair.cli import main\n"
        "for _ in range(2000):\n"
        "    code = main(['replay', '--json'])\n"
        "    if code:\n"
        "        sys.exit(code)\n"
    )
    assert reader.stdin is not None
    writer = subprocess.run(
        [sys.executable, "-c", script],
        stdout=reader.stdin,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )
    reader.stdin.close()
    reader.wait(timeout=30)
    assert "Traceback" not in writer.stderr, writer.stderr
    assert writer.returncode == cli.EXIT_BROKEN_PIPE
