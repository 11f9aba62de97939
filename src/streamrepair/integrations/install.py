"""``streamrepair install``: write the hook entries and the plugin file, idempotently.

Each installer computes an :class:`InstallPlan` (the file, its text before and after, a
unified diff) without touching the disk; :meth:`InstallPlan.apply` writes it atomically.
Existing content is never clobbered:

* Claude Code and DeepSeek Harness settings: the JSON is read, only hook entries whose
  command runs ``streamrepair ... hook <harness>`` are updated, an entry is added where
  there is none, and everything else (other hooks, other settings) is kept. A second run
  changes nothing. A settings file that is not a JSON object is an error, not overwritten.
* The OpenCode plugin file and the Hermes plugin directory's files are replaced only
  when they are ours (they carry the ``streamrepair-plugin:`` marker), unless ``force``
  is given. Hermes loads a plugin only once it is listed in ``plugins.enabled`` of its
  ``config.yaml``; that edit is left to Hermes's own ``hermes plugins enable`` (the
  command line runs it), which knows the file's other rules.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .._version import __version__
from ..errors import InstallError
from .opencode import plugin_source

__all__ = [
    "HERMES_ENABLE_COMMAND",
    "HERMES_PLUGIN_NAME",
    "HOOK_TIMEOUT_SECONDS",
    "PLUGIN_FILE",
    "PLUGIN_MARKER",
    "InstallPlan",
    "claude_code_settings_path",
    "dsh_bridge_snippet",
    "helper_command",
    "hermes_plugin_dir",
    "hook_command",
    "opencode_plugin_dir",
    "plan_hermes_plugin",
    "plan_hook_settings",
    "plan_opencode_plugin",
]

#: The ``timeout`` (seconds) written on each hook entry; the hook itself answers sooner.
HOOK_TIMEOUT_SECONDS: Final = 30
#: The text that marks a plugin file as streamrepair's.
PLUGIN_MARKER: Final = "streamrepair-plugin:"
#: The OpenCode plugin's file name.
PLUGIN_FILE: Final = "streamrepair.js"
#: The Hermes plugin's name (its directory under ``plugins/`` and its manifest name).
HERMES_PLUGIN_NAME: Final = "streamrepair"
#: Hermes's own command that lists a plugin in ``plugins.enabled`` (the plugin replaces
#: no built-in tool, so the privileged override is declined without a prompt).
HERMES_ENABLE_COMMAND: Final = (
    "hermes",
    "plugins",
    "enable",
    HERMES_PLUGIN_NAME,
    "--no-allow-tool-override",
)
_MAX_SETTINGS_BYTES: Final = 16 * 2**20


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallPlan:
    """What installing would do to one file: ``before`` is its current text (``None`` when
    it does not exist), ``after`` the text to write."""

    path: Path
    before: str | None
    after: str

    @property
    def changed(self) -> bool:
        """Whether applying would change the file."""
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff from the current text to the new one (``""`` when unchanged)."""
        if not self.changed:
            return ""
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            fromfile=str(self.path) if self.before is not None else "/dev/null",
            tofile=str(self.path),
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)

    def apply(self) -> bool:
        """Write ``after`` (atomically, creating parent directories, keeping the file's
        mode); ``False`` when nothing needed writing."""
        if not self.changed:
            return False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        mode = self.path.stat().st_mode & 0o777 if self.path.exists() else 0o644
        fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(self.after)
            os.chmod(temp, mode)
            os.replace(temp, self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        return True


def hook_command(harness: str, python: str | None = None, options: Sequence[str] = ()) -> str:
    """The shell command a hook entry runs: this interpreter running
    ``streamrepair.cli hook <harness>``, then ``options`` (e.g. ``--schemas FILE``)."""
    argv = [python or sys.executable, "-m", "streamrepair.cli", "hook", harness, *options]
    return shlex.join(argv)


def helper_command(python: str | None = None) -> list[str]:
    """The argv the OpenCode plugin starts its helper with."""
    return [python or sys.executable, "-m", "streamrepair.cli", "serve", "opencode"]


def claude_code_settings_path(scope: str, *, home: Path, project: Path) -> Path:
    """``~/.claude/settings.json`` for ``scope == "user"``; for ``"project"`` the
    project's ``.claude/settings.local.json`` (not committed: the hook command names this
    machine's interpreter)."""
    if scope == "user":
        return home / ".claude" / "settings.json"
    if scope == "project":
        return project / ".claude" / "settings.local.json"
    raise ValueError(f"scope must be 'user' or 'project', not {scope!r}")


def opencode_plugin_dir(
    scope: str, *, home: Path, project: Path, environ: Mapping[str, str]
) -> Path:
    """``$XDG_CONFIG_HOME/opencode/plugins`` (``~/.config/opencode/plugins``) for
    ``"user"``, ``<project>/.opencode/plugins`` for ``"project"``."""
    if scope == "user":
        config = environ.get("XDG_CONFIG_HOME", "")
        base = Path(config) if os.path.isabs(config) else home / ".config"
        return base / "opencode" / "plugins"
    if scope == "project":
        return project / ".opencode" / "plugins"
    raise ValueError(f"scope must be 'user' or 'project', not {scope!r}")


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read(_MAX_SETTINGS_BYTES + 1)
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"cannot read {path}: {exc}") from None
    if len(text) > _MAX_SETTINGS_BYTES:
        raise InstallError(f"{path} is larger than {_MAX_SETTINGS_BYTES} bytes")
    return text


def _is_ours(entry: Any, harness: str) -> bool:
    command = entry.get("command") if isinstance(entry, dict) else None
    return (
        isinstance(command, str)
        and "streamrepair" in command
        and f"hook {harness}" in " ".join(command.split())
    )


def plan_hook_settings(
    path: Path, *, command: str, harness: str, events: Sequence[str] = ("PreToolUse", "PostToolUse")
) -> InstallPlan:
    """Add (or update) a hook entry running ``command`` for every tool (``matcher
    "*"``) under each of ``events`` in the Claude-Code-format settings file at ``path``.
    Raises :class:`InstallError` when the file is not a JSON object with a ``hooks``
    object of event lists."""
    before = _read(path)
    data: Any = {}
    if before is not None and before.strip():
        try:
            data = json.loads(before)
        except (ValueError, RecursionError) as exc:
            raise InstallError(f"{path} is not valid JSON ({exc}); fix it first") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} must hold a JSON object")
    original = json.loads(json.dumps(data))
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f'"hooks" in {path} must be an object')
    for event in events:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InstallError(f'"hooks.{event}" in {path} must be a list')
        found = False
        for group in groups:
            entries = group.get("hooks") if isinstance(group, dict) else None
            for entry in entries if isinstance(entries, list) else ():
                if _is_ours(entry, harness):
                    entry["type"] = "command"
                    entry["command"] = command
                    found = True
        if not found:
            entry = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECONDS}
            groups.append({"matcher": "*", "hooks": [entry]})
    if data == original and before is not None:
        return InstallPlan(path=path, before=before, after=before)
    after = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return InstallPlan(path=path, before=before, after=after)


def plan_opencode_plugin(
    directory: Path, *, command: list[str], force: bool = False
) -> InstallPlan:
    """Write the plugin file into ``directory``, starting the helper with ``command``.
    Raises :class:`InstallError` when a different file of the same name is there
    (unless ``force``)."""
    path = directory / PLUGIN_FILE
    before = _read(path)
    if before is not None and PLUGIN_MARKER not in before and not force:
        raise InstallError(
            f"{path} exists and is not streamrepair's plugin; use --force to replace it"
        )
    return InstallPlan(path=path, before=before, after=plugin_source(command))


def dsh_bridge_snippet(hooks_file: Path) -> str:
    """The ``cordis.patch.yml`` row that makes DeepSeek Harness load ``hooks_file``."""
    return (
        "- id: streamrepair-hooks\n"
        "  name: '@deepseek-ai/dsh-hooks-claude-code'\n"
        "  config:\n"
        f"    configPath: {json.dumps(str(hooks_file))}\n"
    )


def hermes_plugin_dir(scope: str, *, home: Path, project: Path, environ: Mapping[str, str]) -> Path:
    """``$HERMES_HOME/plugins/streamrepair`` (``~/.hermes``) for ``"user"``;
    ``<project>/.hermes/plugins/streamrepair`` for ``"project"`` (Hermes loads those
    only with ``HERMES_ENABLE_PROJECT_PLUGINS=1``)."""
    if scope == "user":
        configured = environ.get("HERMES_HOME", "").strip()
        base = Path(configured).expanduser() if configured else home / ".hermes"
        return base / "plugins" / HERMES_PLUGIN_NAME
    if scope == "project":
        return project / ".hermes" / "plugins" / HERMES_PLUGIN_NAME
    raise ValueError(f"scope must be 'user' or 'project', not {scope!r}")


_HERMES_HEADER: Final = (
    f"# {PLUGIN_MARKER} v1 (written by `streamrepair install hermes`; "
    "see docs/integrations/hermes.md)\n"
)
_HERMES_MANIFEST: Final = """\
name: streamrepair
version: "{version}"
description: Repairs tool-call arguments against the tool's schema before Hermes runs them.
author: streamrepair developers
kind: standalone
provides_hooks: [pre_tool_call, transform_tool_result]
"""
_HERMES_INIT: Final = '''\
"""streamrepair for Hermes Agent: repairs tool-call arguments before Hermes runs them.

The plugin is streamrepair.integrations.hermes_plugin, which must be importable by the
Python that runs Hermes (install streamrepair into Hermes's environment).
"""

try:
    from streamrepair.integrations.hermes_plugin import register
except ImportError as _error:  # Hermes goes on as if the plugin were absent
    import logging as _logging

    _REASON = str(_error)

    def register(ctx):
        _logging.getLogger("streamrepair.hermes").warning(
            "streamrepair plugin inactive: %s (install streamrepair into Hermes's Python)",
            _REASON,
        )
'''


def plan_hermes_plugin(directory: Path, *, force: bool = False) -> list[InstallPlan]:
    """The Hermes directory plugin in ``directory``: ``plugin.yaml`` and ``__init__.py``.
    Raises :class:`InstallError` when a file there is not streamrepair's (unless
    ``force``)."""
    plans = []
    for name, text in (
        ("plugin.yaml", _HERMES_MANIFEST.format(version=__version__)),
        ("__init__.py", _HERMES_INIT),
    ):
        path = directory / name
        before = _read(path)
        if before is not None and PLUGIN_MARKER not in before and not force:
            raise InstallError(
                f"{path} exists and is not streamrepair's plugin; use --force to replace it"
            )
        plans.append(InstallPlan(path=path, before=before, after=_HERMES_HEADER + text))
    return plans
