"""``streamrepair install``: hook entries and the plugin file, written into temporary homes
(never the real ~), without clobbering what is there, with a diff, idempotently."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from _hook_support import cli_env, run_cli
from streamrepair.errors import InstallError
from streamrepair.integrations.install import (
    HOOK_TIMEOUT_SECONDS,
    dsh_bridge_snippet,
    hook_command,
    plan_hook_settings,
    plan_opencode_plugin,
)

COMMAND = hook_command("claude-code")


def install(home: Path, *args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    done = run_cli("install", *args, env=cli_env(home), cwd=cwd)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def our_entries(settings: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [
        entry
        for group in settings["hooks"][event]
        for entry in group["hooks"]
        if "streamrepair" in entry["command"]
    ]


def test_claude_code_user_install_creates_settings_then_changes_nothing(tmp_path: Path) -> None:
    code, out, err = install(tmp_path, "claude-code")
    assert code == 0, err
    path = tmp_path / ".claude" / "settings.json"
    assert out.startswith("--- /dev/null\n")  # the diff is shown
    assert f"+++ {path}" in out
    assert out.rstrip().endswith(f"{path}: written")
    settings = json.loads(path.read_text())
    for event in ("PreToolUse", "PostToolUse"):
        (group,) = settings["hooks"][event]
        assert group["matcher"] == "*"
        (entry,) = group["hooks"]
        assert entry["type"] == "command"
        assert entry["timeout"] == HOOK_TIMEOUT_SECONDS
        assert shlex.split(entry["command"]) == [
            sys.executable,
            "-m",
            "streamrepair.cli",
            "hook",
            "claude-code",
        ]
    first = path.read_bytes()
    code, out, _ = install(tmp_path, "claude-code")
    assert code == 0
    assert out == f"{path}: already up to date\n"
    assert path.read_bytes() == first


def test_existing_hooks_and_settings_are_kept(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    existing = {
        "model": "opus",
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "notify.sh"}]}],
        },
    }
    path.write_text(json.dumps(existing, indent=4))
    code, out, _ = install(tmp_path, "claude-code")
    assert code == 0
    assert "+" in out
    assert "guard.sh" in out
    settings = json.loads(path.read_text())
    assert settings["model"] == "opus"
    assert settings["permissions"] == existing["permissions"]
    assert settings["hooks"]["Stop"] == existing["hooks"]["Stop"]
    assert settings["hooks"]["PreToolUse"][0] == existing["hooks"]["PreToolUse"][0]
    assert len(settings["hooks"]["PreToolUse"]) == 2
    assert len(our_entries(settings, "PostToolUse")) == 1


def test_an_old_entry_is_updated_in_place_not_duplicated(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    old = "/old/venv/bin/python -m streamrepair.cli hook claude-code"
    data = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "*",
                    "hooks": [
                        {"type": "command", "command": "other.sh"},
                        {"type": "command", "command": old, "timeout": 5},
                    ],
                }
            ]
        }
    }
    path.write_text(json.dumps(data))
    plan = plan_hook_settings(path, command=COMMAND, harness="claude-code")
    assert plan.changed
    diff = plan.diff()
    assert any(line.startswith("-") and old in line for line in diff.splitlines())
    assert any(line.startswith("+") and COMMAND in line for line in diff.splitlines())
    plan.apply()
    settings = json.loads(path.read_text())
    group = settings["hooks"]["PreToolUse"][0]
    assert group["hooks"][0] == {"type": "command", "command": "other.sh"}
    assert group["hooks"][1] == {"type": "command", "command": COMMAND, "timeout": 5}
    assert len(settings["hooks"]["PreToolUse"]) == 1
    assert not plan_hook_settings(path, command=COMMAND, harness="claude-code").changed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "is not valid JSON"),
        ("[]", "must hold a JSON object"),
        ('{"hooks": []}', '"hooks" in'),
        ('{"hooks": {"PreToolUse": {}}}', '"hooks.PreToolUse"'),
    ],
)
def test_settings_that_are_not_what_they_should_be_are_not_touched(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(InstallError, match=message):
        plan_hook_settings(path, command=COMMAND, harness="claude-code")
    code, _out, err = install(tmp_path, "claude-code")
    assert code == 1
    assert message in err
    assert path.read_text() == text


def test_project_scope_writes_the_local_settings_and_dry_run_writes_nothing(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    code, out, _ = install(home, "claude-code", "--project", "--dry-run", cwd=project)
    assert code == 0
    assert "not written (--dry-run)" in out
    assert not (project / ".claude").exists()
    code, out, _ = install(home, "claude-code", "--project", "--project-dir", str(project))
    assert code == 0
    local = project / ".claude" / "settings.local.json"
    assert json.loads(local.read_text())["hooks"]["PreToolUse"]
    assert not (home / ".claude").exists()


def test_deepseek_harness_install_writes_hooks_json_and_prints_the_bridge_row(
    tmp_path: Path,
) -> None:
    code, out, _ = install(tmp_path, "deepseek-harness")
    assert code == 0
    path = tmp_path / ".dsh" / "streamrepair" / "hooks.json"
    settings = json.loads(path.read_text())
    (entry,) = our_entries(settings, "PreToolUse")
    assert entry["command"].endswith("hook deepseek-harness")
    assert "name: '@deepseek-ai/dsh-hooks-claude-code'" in out
    assert dsh_bridge_snippet(path) in out
    assert install(tmp_path, "deepseek-harness")[1].startswith(f"{path}: already up to date")


def test_opencode_install_writes_the_plugin_where_opencode_loads_it(tmp_path: Path) -> None:
    code, _out, _ = install(tmp_path, "opencode")
    assert code == 0
    path = tmp_path / "config" / "opencode" / "plugins" / "streamrepair.js"  # $XDG_CONFIG_HOME
    text = path.read_text()
    assert json.dumps([sys.executable, "-m", "streamrepair.cli", "serve", "opencode"]) in text
    assert install(tmp_path, "opencode")[1] == f"{path}: already up to date\n"


def test_opencode_install_refuses_to_replace_a_foreign_file(tmp_path: Path) -> None:
    path = tmp_path / "config" / "opencode" / "plugins" / "streamrepair.js"
    path.parent.mkdir(parents=True)
    path.write_text("export const Mine = async () => ({})\n")
    code, _, err = install(tmp_path, "opencode")
    assert code == 1
    assert "is not streamrepair's plugin" in err
    assert path.read_text().startswith("export const Mine")
    code, out, _ = install(tmp_path, "opencode", "--force")
    assert code == 0
    assert "-export const Mine" in out
    assert "streamrepair-plugin:" in path.read_text()


def test_opencode_project_scope(tmp_path: Path) -> None:
    plan = plan_opencode_plugin(tmp_path / ".opencode" / "plugins", command=["py"])
    assert plan.before is None
    assert plan.changed
    assert plan.apply() is True
    assert plan.path.read_text() == plan.after
    again = plan_opencode_plugin(tmp_path / ".opencode" / "plugins", command=["py"])
    assert not again.changed
    assert again.diff() == ""


def test_file_mode_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{}")
    path.chmod(0o600)
    plan_hook_settings(path, command=COMMAND, harness="claude-code").apply()
    assert path.stat().st_mode & 0o777 == 0o600
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


# ------------------------------------------------------------------ Hermes


def fake_hermes(bin_dir: Path, *, imports: bool, fails: bool = False) -> Path:
    """A ``hermes`` command whose interpreter (its #! line) logs the arguments it gets,
    answers like ``hermes plugins enable``, and fails ``-c`` (an import check) unless
    ``imports``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    python = bin_dir / "python-fake"
    python.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "-c" ]; then exit {0 if imports else 1}; fi\n'
        f'echo "$@" >> "{bin_dir}/calls.log"\n'
        f'echo "HOME=$HERMES_HOME PROJECT=$HERMES_ENABLE_PROJECT_PLUGINS" >> "{bin_dir}/calls.log"\n'
        + ("echo boom >&2; exit 3\n" if fails else 'echo "Plugin streamrepair enabled."\n')
    )
    python.chmod(0o755)
    hermes = bin_dir / "hermes"
    hermes.write_text(f"#!{python}\n")
    hermes.chmod(0o755)
    return bin_dir / "calls.log"


def install_hermes(home: Path, *args: str, path: str = "/usr/bin:/bin", **env: str) -> Any:
    return run_cli("install", "hermes", *args, env={**cli_env(home), "PATH": path, **env}, cwd=home)


def test_hermes_install_writes_the_plugin_and_enables_it_with_hermes(tmp_path: Path) -> None:
    calls = fake_hermes(tmp_path / "bin", imports=True)
    hermes_home = tmp_path / "hh"
    done = install_hermes(
        tmp_path, path=f"{tmp_path / 'bin'}:/usr/bin:/bin", HERMES_HOME=str(hermes_home)
    )
    assert done.returncode == 0, done.stderr
    plugin = hermes_home / "plugins" / "streamrepair"
    manifest = (plugin / "plugin.yaml").read_text()
    assert "name: streamrepair\n" in manifest
    assert "kind: standalone\n" in manifest
    init = (plugin / "__init__.py").read_text()
    assert "from streamrepair.integrations.hermes_plugin import register" in init
    compile(init, "__init__.py", "exec")
    out = done.stdout.decode()
    assert "Plugin streamrepair enabled." in out
    logged = calls.read_text().splitlines()
    assert logged[0].endswith("hermes plugins enable streamrepair --no-allow-tool-override")
    assert logged[1] == f"HOME={hermes_home} PROJECT="
    assert b"cannot import streamrepair" not in done.stderr
    again = install_hermes(
        tmp_path, path=f"{tmp_path / 'bin'}:/usr/bin:/bin", HERMES_HOME=str(hermes_home)
    )
    assert again.stdout.decode().count("already up to date") == 2


def test_hermes_install_says_when_hermes_cannot_import_streamrepair(tmp_path: Path) -> None:
    fake_hermes(tmp_path / "bin", imports=False)
    done = install_hermes(tmp_path, path=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert done.returncode == 0
    assert (tmp_path / ".hermes" / "plugins" / "streamrepair" / "plugin.yaml").exists()
    assert b"cannot import streamrepair, so the plugin stays inactive" in done.stderr
    # the hint installs from this checkout (streamrepair is on no package index yet)
    root = Path(__file__).resolve().parents[1]
    assert f"pip install -e {root}".encode() in done.stderr


def test_hermes_install_reports_a_failed_enable(tmp_path: Path) -> None:
    fake_hermes(tmp_path / "bin", imports=True, fails=True)
    done = install_hermes(tmp_path, path=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert done.returncode == 1
    assert b"failed:\nboom" in done.stderr


def test_hermes_install_without_hermes_or_with_no_enable_says_what_to_run(tmp_path: Path) -> None:
    done = install_hermes(tmp_path)
    assert done.returncode == 0
    assert (
        "Then enable it (hermes is not on PATH here): "
        "hermes plugins enable streamrepair --no-allow-tool-override"
    ) in done.stdout.decode()
    calls = fake_hermes(tmp_path / "bin", imports=True)
    done = install_hermes(tmp_path, "--no-enable", path=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert "Then enable it (not run)" in done.stdout.decode()
    assert not calls.exists()


def test_hermes_project_scope_and_a_foreign_plugin(tmp_path: Path) -> None:
    calls = fake_hermes(tmp_path / "bin", imports=True)
    done = install_hermes(tmp_path, "--project", path=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".hermes" / "plugins" / "streamrepair" / "__init__.py").exists()
    assert "HERMES_ENABLE_PROJECT_PLUGINS=1" in done.stdout.decode()
    assert calls.read_text().splitlines()[1].endswith("PROJECT=1")
    foreign = tmp_path / "hh" / "plugins" / "streamrepair" / "plugin.yaml"
    foreign.parent.mkdir(parents=True)
    foreign.write_text("name: streamrepair\n")
    done = install_hermes(tmp_path, HERMES_HOME=str(tmp_path / "hh"))
    assert done.returncode == 1
    assert b"is not streamrepair's plugin" in done.stderr
    assert foreign.read_text() == "name: streamrepair\n"


def test_install_can_name_a_schema_file_for_the_hook(tmp_path: Path) -> None:
    schemas = tmp_path / "dsh-tools.json"
    schemas.write_text(json.dumps({"readFile": {"type": "object"}}))
    code, _, err = install(
        tmp_path, "deepseek-harness", "--schemas", "dsh-tools.json", cwd=tmp_path
    )
    assert code == 0, err
    hooks = json.loads((tmp_path / ".dsh" / "streamrepair" / "hooks.json").read_text())
    (entry,) = our_entries(hooks, "PreToolUse")
    assert shlex.split(entry["command"])[-3:] == ["deepseek-harness", "--schemas", str(schemas)]
    # a second install without it puts the plain command back, in place
    install(tmp_path, "deepseek-harness", cwd=tmp_path)
    hooks = json.loads((tmp_path / ".dsh" / "streamrepair" / "hooks.json").read_text())
    (entry,) = our_entries(hooks, "PreToolUse")
    assert entry["command"] == hook_command("deepseek-harness")
    code, _, err = install(tmp_path, "opencode", "--schemas", "x.json")
    assert code == 2
    assert "--schemas is for the hooks" in err
