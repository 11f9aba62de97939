"""Helpers shared by the hook, plugin and install tests: run the CLI as a subprocess with
this checkout importable and a private HOME, and the hostile stdin list."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import streamrepair

SRC = str(Path(streamrepair.__file__).resolve().parent.parent)

#: What a hook must survive on stdin: each gives a pass-through answer and exit 0.
HOSTILE_STDINS = [
    b"",
    b"not json",
    b'{"tool_name": "Read", "tool_input": {',
    b"[1,2,3]",
    b"null",
    b"false",
    b'"a string"',
    b"42",
    b"\xff\xfe\x00garbage",
]


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment with this checkout on PYTHONPATH, HOME and XDG dirs under
    ``home`` (never the real ~), telemetry in ``home``, and no model variables."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("STREAMREPAIR_", "ANTHROPIC_", "XDG_"))
    }
    env["PYTHONPATH"] = os.pathsep.join(p for p in (SRC, env.get("PYTHONPATH", "")) if p)
    env["HOME"] = str(home)
    env["XDG_STATE_HOME"] = str(home / "state")
    env["XDG_CONFIG_HOME"] = str(home / "config")
    env.update(extra)
    return env


def run_cli(
    *args: str,
    stdin: bytes = b"",
    env: Mapping[str, str],
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "streamrepair.cli", *args],
        input=stdin,
        capture_output=True,
        env=dict(env),
        cwd=cwd,
        timeout=60,
    )
