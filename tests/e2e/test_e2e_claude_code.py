"""The Claude Code hook inside the real Claude Code (the pinned native binary), against a
scripted Anthropic API on loopback.

Each run: a temporary HOME and project, the hook installed with the project's own
``streamrepair install claude-code --project``, ``claude -p`` with telemetry and updates
off, and a scripted model whose calls carry the mistakes. The assertions are on what ran:
the files on disk (Claude Code's Write result echoes the path the *model* sent, not the
one written), what the MCP server received, and the ``tool_result`` blocks of the next
request. The control run is the same script without the hook.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import streamrepair
from ccharness import (
    ClaudeRun,
    FakeAnthropic,
    ToolResult,
    run_claude,
    tool_turn,
    write_mcp_config,
)
from streamrepair.integrations import CLAUDE_CODE_SCHEMAS

HERE = Path(__file__).resolve().parent
SRC = str(Path(streamrepair.__file__).resolve().parent.parent)
MCP_SERVER = HERE / "mcp_echo_server.py"
NOTES = "".join(f"NOTES-LINE-{i}\n" for i in range(1, 6))
ECHO = "mcp__echo__echo"


@dataclass
class Outcome:
    run: ClaudeRun
    project: Path
    home: Path
    mcp_calls: list[dict[str, Any]]

    def result_of(self, turn: int) -> ToolResult:
        """The tool_result answering the call of script turn ``turn``."""
        return self.run.tool_results()[turn]

    def files(self) -> list[str]:
        return sorted(
            str(p.relative_to(self.project))
            for p in self.project.rglob("*")
            if p.is_file() and ".claude" not in p.parts and p.name != ".mcp.json"
        )

    def telemetry(self) -> list[dict[str, Any]]:
        path = self.home / ".local" / "state" / "streamrepair" / "telemetry.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _install_hook(project: Path, home: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "streamrepair.cli", "install", "claude-code", "--project"],
        cwd=project,
        env={"HOME": str(home), "PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "settings.local.json: written" in done.stdout
    settings: dict[str, Any] = json.loads(
        (project / ".claude" / "settings.local.json").read_text(encoding="utf-8")
    )
    return settings


def _script(project: Path) -> list[Any]:
    linked = f"{project}/[notes.md](http://notes.md)"
    return [
        # 0: Write to a markdown-linked relative path
        tool_turn("Write", json.dumps({"file_path": "[new.md](http://new.md)", "content": "hi\n"})),
        # 1: Read a markdown-linked absolute path
        tool_turn("Read", json.dumps({"file_path": linked})),
        # 2: an MCP call with a link and a null, straight to the deferred tool
        tool_turn(ECHO, json.dumps({"path": linked, "count": None})),
        # 3: the schema loaded the way Claude Code tells the model to
        tool_turn("ToolSearch", json.dumps({"query": f"select:{ECHO}"})),
        # 4: the same MCP call again, now with its schema in the request
        tool_turn(ECHO, json.dumps({"path": linked, "count": None})),
    ]


def _run(root: Path, claude: Path, *, hook: bool, mode: str, script: str = "all") -> Outcome:
    project, home = root / "project", root / "home"
    project.mkdir(parents=True)
    home.mkdir()
    (project / "notes.md").write_text(NOTES, encoding="utf-8")
    mcp_log = root / "mcp.jsonl"
    write_mcp_config(
        project, {"echo": [sys.executable, str(MCP_SERVER)]}, env={"MCP_ECHO_LOG": str(mcp_log)}
    )
    if hook:
        _install_hook(project, home)
    turns = _script(project) if script == "all" else _script(project)[:1]
    env = {"PYTHONPATH": SRC, "STREAMREPAIR_TELEMETRY_ARGUMENTS": "1"}
    with FakeAnthropic(turns) as api:
        run = run_claude(
            api,
            project=project,
            home=home,
            binary=claude,
            permission_mode=mode,
            args=["--allowedTools", ECHO],
            env=env,
        )
    assert run.returncode == 0, run.stderr
    calls = []
    if mcp_log.exists():
        for line in mcp_log.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("name") == "echo":
                calls.append(record["arguments"])
    return Outcome(run=run, project=project, home=home, mcp_calls=calls)


@pytest.fixture(scope="module")
def control(claude: Path, tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    return _run(tmp_path_factory.mktemp("control"), claude, hook=False, mode="acceptEdits")


@pytest.fixture(scope="module")
def hooked(claude: Path, tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    return _run(tmp_path_factory.mktemp("hooked"), claude, hook=True, mode="acceptEdits")


# ------------------------------------------------------------------ the control run


def test_without_the_hook_a_linked_write_path_makes_a_folder(control: Outcome) -> None:
    # Claude Code resolves the path (// becomes /) and writes into a folder "[new.md](http:"
    assert control.files() == ["[new.md](http:/new.md)", "notes.md"]
    assert "File created successfully at: [new.md](http://new.md)" in control.result_of(0).text


def test_without_the_hook_a_linked_read_path_is_not_found(control: Outcome) -> None:
    result = control.result_of(1)
    assert "File does not exist" in result.text
    assert "NOTES-LINE-1" not in result.text


def test_without_the_hook_the_mcp_server_gets_the_link_and_the_null(control: Outcome) -> None:
    linked = f"{control.project}/[notes.md](http://notes.md)"
    assert control.mcp_calls == [{"path": linked, "count": None}] * 2
    assert control.telemetry() == []


# ------------------------------------------------------------------ with the hook


def test_install_registers_the_hook_for_every_tool(claude: Path, tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "h").mkdir()
    settings = _install_hook(tmp_path / "p", tmp_path / "h")
    for event in ("PreToolUse", "PostToolUse"):
        (group,) = settings["hooks"][event]
        assert group["matcher"] == "*"
        assert group["hooks"][0]["command"].endswith("-m streamrepair.cli hook claude-code")


def test_a_linked_write_path_is_written_where_the_model_meant(hooked: Outcome) -> None:
    assert hooked.files() == ["new.md", "notes.md"]
    assert (hooked.project / "new.md").read_text(encoding="utf-8") == "hi\n"
    result = hooked.result_of(0)
    assert not result.is_error
    assert f"File created successfully at: {hooked.project}/new.md" in result.text


def test_a_linked_read_path_reads_the_file(hooked: Outcome) -> None:
    result = hooked.result_of(1)
    assert not result.is_error
    assert "NOTES-LINE-1" in result.text
    assert "NOTES-LINE-5" in result.text


def test_an_mcp_call_is_repaired_with_the_schema_claude_code_sent(hooked: Outcome) -> None:
    plain = f"{hooked.project}/notes.md"
    assert hooked.mcp_calls == [
        # called directly, the deferred tool's schema was never sent: the link (no
        # schema needed) is repaired, the null is left for the server
        {"path": plain, "count": None},
        # after ToolSearch the request carried the schema: the null is dropped too
        {"path": plain},
    ]
    assert hooked.result_of(2).text == f'ECHO {{"count": null, "path": "{plain}"}}'
    assert hooked.result_of(4).text == f'ECHO {{"path": "{plain}"}}'


def test_the_model_is_told_about_each_repair(hooked: Outcome) -> None:
    # additionalContext reaches the model beside the tool result
    told = json.dumps(hooked.run.followups())
    assert "unwrap_autolink at $.file_path" in told
    assert "drop_null at $.count" in told


def test_telemetry_records_each_call_and_its_result(hooked: Outcome) -> None:
    calls = [r for r in hooked.telemetry() if r["event"] == "call"]
    assert [(r["tool"], r["outcome"], r["rules"]) for r in calls] == [
        ("Write", "repaired", ["unwrap_autolink"]),
        ("Read", "repaired", ["unwrap_autolink"]),
        (ECHO, "repaired", ["unwrap_autolink"]),
        ("ToolSearch", "clean", []),
        (ECHO, "repaired", ["unwrap_autolink", "drop_null"]),
    ]
    assert calls[0]["arguments"]["file_path"] == f"{hooked.project}/[new.md](http:/new.md)"
    results = [r["outcome"] for r in hooked.telemetry() if r["event"] == "result"]
    assert results == ["succeeded"] * 5


def test_a_repair_never_skips_a_permission_prompt(claude: Path, tmp_path: Path) -> None:
    # default mode under -p: nobody can approve a Write, with or without the hook; the
    # denial names the repaired path, and nothing is written anywhere
    outcome = _run(tmp_path, claude, hook=True, mode="default", script="write")
    result = outcome.result_of(0)
    assert result.is_error
    assert f"permissions to write to {outcome.project}/new.md" in result.text
    assert outcome.files() == ["notes.md"]


def test_the_builtin_schemas_are_never_stricter_than_claude_codes(control: Outcome) -> None:
    # Claude Code validates its built-in tools before any hook: the hook's (loose) schemas
    # must accept everything Claude Code's accept, or the hook would deny valid calls.
    first = control.run.main_requests[0]
    checked = 0
    for name, ours in CLAUDE_CODE_SCHEMAS.items():
        theirs = first.tool_schema(name)
        if theirs is None:
            continue  # not sent by this version (or deferred)
        checked += 1
        assert set(ours.get("required", ())) <= set(theirs.get("required", ())), name
        for key, prop in ours["properties"].items():
            assert key in theirs["properties"], f"{name}.{key} is not a Claude Code parameter"
            wanted = theirs["properties"][key].get("type")
            if wanted is not None and prop.get("type") is not None:
                looser = (prop["type"], wanted) == ("number", "integer")
                assert prop["type"] == wanted or looser, f"{name}.{key}: {prop['type']} vs {wanted}"
    assert checked >= 4
