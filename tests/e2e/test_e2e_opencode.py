"""The OpenCode plugin inside the real OpenCode (the pinned ``opencode`` binary), against a
scripted OpenAI-compatible provider on loopback; and the plugin file type-checked with
``tsc`` against the published plugin types (``@opencode-ai/plugin``).

The plugin is installed with the project's own ``streamrepair install opencode
--project``. The assertions are on what ran (the files on disk) and on the tool messages
of the next request; the control run is the same script without the plugin.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ocharness import RunResult, ToolCall, Turn, run_opencode

import e2e_tools
import streamrepair
from streamrepair.integrations import OPENCODE_SCHEMAS, OPENCODE_SCHEMAS_VERSION, plugin_source

SRC = str(Path(streamrepair.__file__).resolve().parent.parent)
TODOS = [{"content": "write tests", "status": "pending", "priority": "high"}]


@dataclass
class Outcome:
    result: RunResult
    root: Path

    @property
    def project(self) -> Path:
        return self.root / "project"

    def outputs(self) -> list[str]:
        return [o.content for o in self.result.tool_outputs()]

    def telemetry(self) -> list[dict[str, Any]]:
        path = self.root / "home" / ".local" / "state" / "streamrepair" / "telemetry.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _install(project: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "streamrepair.cli", "install", "opencode", "--project"],
        cwd=project,
        env={**env, "PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "streamrepair.js: written" in done.stdout


def _script(project: Path) -> list[Turn]:
    def call(name: str, args: Any) -> Turn:
        return Turn(tool_calls=(ToolCall.of(name, args),))

    return [
        # 0: a linked path and a null optional
        call("read", {"filePath": "[a.txt](http://a.txt)", "limit": None}),
        # 1: the todo list sent as a JSON string
        call("todowrite", {"todos": json.dumps(TODOS)}),
        # 2: a number sent as a string
        call("bash", {"command": "echo ran-bash", "timeout": "5000"}),
        # 3: still invalid after every repair: no content
        call("write", {"filePath": f"{project}/w.txt"}),
        # 4: Claude Code's key names
        call("edit", {"file_path": f"{project}/b.txt", "old_string": "one", "new_string": "two"}),
    ]


def _run(
    root: Path, opencode: Path, *, plugin: bool, helper_args: list[str] | None = None
) -> Outcome:
    env = {"PYTHONPATH": SRC, "STREAMREPAIR_TELEMETRY_ARGUMENTS": "1"}
    if helper_args is not None:
        command = [sys.executable, "-m", "streamrepair.cli", "serve", "opencode", *helper_args]
        env["STREAMREPAIR_OPENCODE_COMMAND"] = json.dumps(command)
    script = _script(root / "project") if helper_args is None else _script(root / "project")[:1]
    result = run_opencode(
        script,
        binary=opencode,
        workdir=root,
        files={"a.txt": "alpha\nbeta\n", "b.txt": "one\n"},
        prepare=_install if plugin else None,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return Outcome(result=result, root=root)


@pytest.fixture(scope="module")
def control(opencode: Path, tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    return _run(tmp_path_factory.mktemp("control"), opencode, plugin=False)


@pytest.fixture(scope="module")
def plugged(opencode: Path, tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    return _run(tmp_path_factory.mktemp("plugged"), opencode, plugin=True)


def _without_descriptions(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {
            key: (
                {k: _without_descriptions(v) for k, v in value.items()}
                if key == "properties"
                else _without_descriptions(value)
            )
            for key, value in schema.items()
            if key not in ("description", "$schema")
        }
    if isinstance(schema, list):
        return [_without_descriptions(item) for item in schema]
    return schema


# ------------------------------------------------------------------ the control run


def test_the_builtin_schemas_are_what_opencode_sends(control: Outcome) -> None:
    assert OPENCODE_SCHEMAS_VERSION == e2e_tools.OPENCODE_VERSION
    sent = {
        tool["function"]["name"]: _without_descriptions(tool["function"]["parameters"])
        for tool in control.result.tools_sent()
    }
    assert sent, "OpenCode sent no tools"
    for name, schema in sent.items():
        assert json.loads(json.dumps(OPENCODE_SCHEMAS[name])) == schema, name


def test_without_the_plugin_opencode_rejects_every_one_of_them(control: Outcome) -> None:
    outputs = control.outputs()
    assert len(outputs) == 5
    assert all("was called with invalid arguments: SchemaError" in text for text in outputs)
    assert (control.project / "b.txt").read_text() == "one\n"
    assert not (control.project / "w.txt").exists()


# ------------------------------------------------------------------ with the plugin


def test_a_linked_path_with_a_null_is_read(plugged: Outcome) -> None:
    text = plugged.outputs()[0]
    assert text.startswith("[streamrepair: arguments of read were repaired]")
    assert "unwrap_autolink at $.filePath" in text
    assert "drop_null at $.limit" in text
    assert "1: alpha" in text
    assert "2: beta" in text


def test_a_stringified_todo_list_and_a_string_number_run(plugged: Outcome) -> None:
    todo, bash = plugged.outputs()[1:3]
    assert "parse_json_string at $.todos" in todo
    assert "write tests" in todo
    assert "SchemaError" not in todo
    assert "ran-bash" in bash
    assert "SchemaError" not in bash
    ran = [part["state"]["input"] for part in plugged.result.tool_events()]
    assert {"command": "echo ran-bash", "timeout": 5000} in ran


def test_an_invalid_call_is_stopped_with_the_feedback(plugged: Outcome) -> None:
    text = plugged.outputs()[3]
    assert 'Invalid input for tool "write". Please correct and retry:' in text
    assert "$.content: required property is missing" in text
    assert not (plugged.project / "w.txt").exists()


def test_claude_code_key_names_are_renamed_and_the_edit_applies(plugged: Outcome) -> None:
    assert (plugged.project / "b.txt").read_text() == "two\n"
    assert "rename_alias at $.file_path" in plugged.outputs()[4]


def test_telemetry_records_the_decisions(plugged: Outcome) -> None:
    calls = [(r["tool"], r["outcome"]) for r in plugged.telemetry() if r["event"] == "call"]
    assert calls == [
        ("read", "repaired"),
        ("todowrite", "repaired"),
        ("bash", "repaired"),
        ("write", "rejected"),
        ("edit", "repaired"),
    ]


def test_the_schemas_come_from_the_running_opencode(opencode: Path, tmp_path: Path) -> None:
    # Without the built-in schemas the helper knows a tool's schema only from what the
    # plugin got from OpenCode (client.tool.list), so this repair proves that path.
    outcome = _run(tmp_path, opencode, plugin=True, helper_args=["--no-builtin-schemas"])
    text = outcome.outputs()[0]
    assert "drop_null at $.limit" in text
    assert "1: alpha" in text


# ------------------------------------------------------------------ tsc


def test_the_plugin_type_checks_against_the_published_plugin_types(tmp_path: Path) -> None:
    reason = e2e_tools.tsc_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    modules = e2e_tools.opencode_node_modules()
    (tmp_path / "node_modules").symlink_to(modules, target_is_directory=True)
    (tmp_path / "streamrepair.js").write_text(plugin_source([sys.executable, "-m", "x"]))
    config = {
        "compilerOptions": {
            "allowJs": True,
            "checkJs": True,
            "noEmit": True,
            "strict": True,
            "target": "es2022",
            "module": "nodenext",
            "moduleResolution": "nodenext",
            "types": ["node"],
            "skipLibCheck": True,
        },
        "files": ["streamrepair.js"],
    }
    (tmp_path / "tsconfig.json").write_text(json.dumps(config))
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run(
        [node, str(modules / "typescript" / "bin" / "tsc"), "-p", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # the file really is checked against the published Plugin type
    assert 'import("@opencode-ai/plugin").Plugin' in plugin_source()
