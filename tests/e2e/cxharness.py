"""Drive the real Codex CLI (``codex exec --json``) offline against a Responses API on
loopback.

Standard library only, no project imports.

* :func:`write_codex_home` writes a ``CODEX_HOME`` whose ``config.toml`` names one model
  provider at ``base_url`` with ``wire_api = "responses"``, its key in an environment
  variable, no retries (``request_max_retries = 0``, ``stream_max_retries = 0``; pass
  ``None`` to keep Codex's defaults), ``approval_policy = "never"`` and ``sandbox_mode =
  "danger-full-access"`` (commands run without asking and without a sandbox, in a
  throw-away project).
* :func:`run_codex` runs ``codex exec --json --skip-git-repo-check PROMPT`` in a project
  with a private ``HOME`` and returns a :class:`CodexRun`: exit code, the JSON event
  lines (``thread.started``, ``turn.started``, ``item.*``, ``turn.completed`` /
  ``turn.failed``), the final agent message, seconds taken. The API side (requests,
  tool outputs) is the server's business: ``scripted.ScriptedUpstream`` records it.

Measured with Codex 0.171.0 (the version ``e2e_tools`` pins): only ``POST
{base_url}/responses`` is requested, streaming; a run with one call takes 0.6-0.8 s
here. For a model it has no metadata for (``fake-model``) it says so in an ``error``
item and goes on; its tools are then ``exec_command`` (``cmd`` required,
``additionalProperties: false``), ``write_stdin``, ``request_user_input``,
``view_image``, the ``multi_agent_v1`` namespace, goal tools and ``web_search``; no
``apply_patch``. It warns on stderr that it will not make helper links under ``/tmp``.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from e2e_tools import codex_skip_reason, find_codex

__all__ = [
    "API_KEY_ENV",
    "MODEL",
    "PROVIDER",
    "CodexRun",
    "codex_env",
    "codex_skip_reason",
    "find_codex",
    "run_codex",
    "write_codex_home",
]

PROVIDER: Final = "fake"
MODEL: Final = "fake-model"
API_KEY_ENV: Final = "FAKE_API_KEY"


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value))  # a TOML basic string is a JSON string here


def write_codex_home(
    codex_home: Path,
    base_url: str,
    *,
    stream_max_retries: int | None = 0,
    request_max_retries: int | None = 0,
    provider: Mapping[str, object] | None = None,
    top: Mapping[str, object] | None = None,
) -> Path:
    """Write ``codex_home/config.toml`` (module docstring); ``provider`` and ``top`` add
    keys to the provider table and to the top level. Returns the file."""
    codex_home.mkdir(parents=True, exist_ok=True)
    head: dict[str, object] = {
        "model": MODEL,
        "model_provider": PROVIDER,
        "approval_policy": "never",
        "sandbox_mode": "danger-full-access",
        **(top or {}),
    }
    table: dict[str, object] = {
        "name": "Fake",
        "base_url": base_url,
        "wire_api": "responses",
        "env_key": API_KEY_ENV,
    }
    if request_max_retries is not None:
        table["request_max_retries"] = request_max_retries
    if stream_max_retries is not None:
        table["stream_max_retries"] = stream_max_retries
    table.update(provider or {})
    lines = [f"{key} = {_toml(value)}" for key, value in head.items()]
    lines.append(f"\n[model_providers.{PROVIDER}]")
    lines += [f"{key} = {_toml(value)}" for key, value in table.items()]
    path = codex_home / "config.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def codex_env(
    home: Path, codex_home: Path, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``PATH``/``LANG`` from here, a private ``HOME``, ``CODEX_HOME``, the fake key."""
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "TERM") if k in os.environ}
    return {
        **keep,
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        API_KEY_ENV: "sk-fake",
        "RUST_LOG": "error",
        "NO_COLOR": "1",
        **(extra or {}),
    }


@dataclass(slots=True)
class CodexRun:
    """What one ``codex exec`` run did."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    events: list[dict[str, Any]]

    def items(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The completed items (``agent_message``, ``command_execution``, ``error``...)."""
        out = []
        for event in self.events:
            item = event.get("item")
            completed = event.get("type") == "item.completed" and isinstance(item, dict)
            if completed and (kind is None or item.get("type") == kind):
                out.append(item)
        return out

    @property
    def final_text(self) -> str:
        """The last agent message (``""`` when there is none)."""
        messages = self.items("agent_message")
        return str(messages[-1].get("text", "")) if messages else ""

    def turn_failure(self) -> str | None:
        """The ``turn.failed`` message, if the turn failed."""
        for event in self.events:
            if event.get("type") == "turn.failed":
                error = event.get("error")
                return str(error.get("message", "")) if isinstance(error, dict) else ""
        return None

    def errors(self) -> list[str]:
        """The ``error`` events' messages (``Reconnecting... 1/5 (...)`` on a retry)."""
        return [str(e.get("message", "")) for e in self.events if e.get("type") == "error"]


def run_codex(
    base_url: str,
    *,
    project: Path,
    root: Path,
    binary: Path | str | None = None,
    prompt: str = "go",
    stream_max_retries: int | None = 0,
    request_max_retries: int | None = 0,
    provider: Mapping[str, object] | None = None,
    top: Mapping[str, object] | None = None,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> CodexRun:
    """Run ``codex exec --json`` in ``project`` (made if missing) against ``base_url``
    (with its ``/v1``), with ``HOME`` and ``CODEX_HOME`` under ``root``. Raises
    ``subprocess.TimeoutExpired`` past ``timeout``."""
    if binary is None:
        binary = find_codex()
        if binary is None:
            raise FileNotFoundError(codex_skip_reason() or "Codex is not installed")
    project.mkdir(parents=True, exist_ok=True)
    home, codex_home = root / "home", root / "codex-home"
    home.mkdir(parents=True, exist_ok=True)
    write_codex_home(
        codex_home,
        base_url,
        stream_max_retries=stream_max_retries,
        request_max_retries=request_max_retries,
        provider=provider,
        top=top,
    )
    argv = [str(binary), "exec", "--json", "--skip-git-repo-check", *args, prompt]
    started = time.monotonic()
    done = subprocess.run(
        argv,
        cwd=project,
        env=codex_env(home, codex_home, env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    seconds = time.monotonic() - started
    events: list[dict[str, Any]] = []
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                events.append(json.loads(line))
    return CodexRun(argv, done.returncode, done.stdout, done.stderr, seconds, events)
