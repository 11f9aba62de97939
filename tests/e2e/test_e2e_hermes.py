"""The Hermes plugin inside the real hermes-agent (the pinned PyPI package, in its own
venv), against a scripted OpenAI-compatible server on loopback.

The plugin is installed with the project's own ``streamrepair install hermes`` (which
writes the directory plugin and runs ``hermes plugins enable``). The assertions are on
what each tool received (the probe tools record it), what the model read in the next
request, and the requests Hermes made; the control runs are the same scripts without the
plugin, and show what Hermes does on its own before the seam.
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
from hharness import Call, ScenarioResult, Turn, prepare_home, run_scenario

import streamrepair

SRC = str(Path(streamrepair.__file__).resolve().parent.parent)
LINK_1 = "/x/[notes.md](http://notes.md)"
LINK_2 = "/x/[b.md](http://b.md)"

MISTAKES = [
    # 0: a markdown-linked path and a null optional
    Turn(calls=(Call("probe_read", json.dumps({"path": LINK_1, "limit": None}), "call_1"),)),
    # 1: the same mistakes again (the lesson is not repeated)
    Turn(calls=(Call("probe_read", json.dumps({"path": LINK_2, "limit": None}), "call_2"),)),
    # 2: still invalid after every repair (path missing)
    Turn(calls=(Call("probe_read", '{"limit": "ten"}', "call_3"),)),
    # 3: a repaired call whose tool returns a multimodal result
    Turn(calls=(Call("probe_shot", '{"label": "x", "scale": null}', "call_4"),)),
    # 4: a number as a string (Hermes's own coercion also converts it)
    Turn(calls=(Call("probe_read", '{"path": "a.txt", "limit": "42"}', "call_5"),)),
]
TRAILING_COMMA = [
    Turn(calls=(Call("probe_read", '{"path": "a.txt", "limit": 5,}', "call_1"),)),
]


@dataclass
class Run:
    result: ScenarioResult
    telemetry: list[dict[str, Any]]

    def received(self) -> list[Any]:
        return [r["args"] for r in self.result.receipts]

    def told(self) -> dict[str, Any]:
        """Each tool_call_id's result as the model read it last."""
        return {m["tool_call_id"]: m["content"] for m in self.result.tool_messages()}


def _hermes_bin(python: Path) -> Path:
    return python.parent


@pytest.fixture(scope="module")
def installed_home(hermes_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hermes-install")
    home = root / "hermes_home"
    prepare_home(home)  # the probe tools, enabled in config.yaml
    done = subprocess.run(
        [sys.executable, "-m", "streamrepair.cli", "install", "hermes"],
        env={
            "HOME": str(root),
            "HERMES_HOME": str(home),
            "PATH": f"{_hermes_bin(hermes_python)}:/usr/bin:/bin",
            "PYTHONPATH": SRC,
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "plugin.yaml: written" in done.stdout
    assert "Plugin streamrepair enabled" in done.stdout
    assert "cannot import streamrepair" not in done.stderr
    return home


def _run(home: Path, python: Path, tmp: Path, turns: list[Turn], *, stream: bool, name: str) -> Run:
    scenario_home = tmp / name
    shutil.copytree(home, scenario_home)  # Hermes writes sessions and logs into its home
    telemetry = tmp / f"{name}-telemetry.jsonl"
    result = run_scenario(
        turns,
        home=scenario_home,
        python=python,
        stream=stream,
        extra_env={"PYTHONPATH": SRC, "STREAMREPAIR_TELEMETRY": str(telemetry)},
    )
    assert not result.outcome.get("crashed"), result.stderr_tail
    records = []
    if telemetry.exists():
        records = [json.loads(line) for line in telemetry.read_text().splitlines()]
    return Run(result=result, telemetry=records)


@pytest.fixture(scope="module")
def control_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("hermes-control") / "hermes_home"
    prepare_home(home)
    return home


@pytest.fixture(scope="module")
def control(
    control_home: Path, hermes_python: Path, tmp_path_factory: pytest.TempPathFactory
) -> Run:
    tmp = tmp_path_factory.mktemp("control-runs")
    return _run(control_home, hermes_python, tmp, MISTAKES, stream=True, name="mistakes")


@pytest.fixture(scope="module")
def repaired(
    installed_home: Path, hermes_python: Path, tmp_path_factory: pytest.TempPathFactory
) -> Run:
    tmp = tmp_path_factory.mktemp("plugin-runs")
    return _run(installed_home, hermes_python, tmp, MISTAKES, stream=True, name="mistakes")


# ------------------------------------------------------------------ Hermes on its own


def test_without_the_plugin_nulls_links_and_invalid_calls_reach_the_tools(control: Run) -> None:
    assert control.received() == [
        {"path": LINK_1, "limit": None},
        {"path": LINK_2, "limit": None},
        {"limit": "ten"},  # runs, path missing
        {"label": "x", "scale": None},
        {"path": "a.txt", "limit": 42},  # Hermes's own coercion, after the seam
    ]
    assert control.telemetry == []


def test_without_the_plugin_a_plain_trailing_comma_is_retried_then_refused(
    control_home: Path, hermes_python: Path, tmp_path: Path
) -> None:
    run = _run(control_home, hermes_python, tmp_path, TRAILING_COMMA, stream=False, name="tc")
    assert run.received() == []  # never ran
    assert run.result.identical_retries() == 2  # the same request, re-sent silently
    assert "Invalid JSON arguments" in json.dumps(run.told())


# ------------------------------------------------------------------ with the plugin


def test_the_installed_plugin_is_loaded_on_the_pre_dispatch_seam(repaired: Run) -> None:
    loaded = repaired.result.outcome["plugins"]["streamrepair"]
    assert loaded["enabled"] is True
    assert loaded["error"] is None
    assert set(loaded["middleware"]) == {"tool_request", "llm_execution"}
    assert set(loaded["hooks"]) == {"pre_tool_call", "transform_tool_result"}


def test_broken_calls_are_repaired_before_the_tool_runs(repaired: Run) -> None:
    assert repaired.received() == [
        {"path": "/x/notes.md"},
        {"path": "/x/b.md"},
        # call_3 was blocked: never ran
        {"label": "x"},
        {"path": "a.txt", "limit": 42},
    ]


def test_the_note_is_appended_once_per_lesson(repaired: Run) -> None:
    told = repaired.told()
    first = told["call_1"]
    assert first.startswith('{"ok": true')  # the tool's own output comes first
    assert "[streamrepair: arguments of probe_read were repaired]" in first
    assert "drop_null at $.limit" in first
    assert "unwrap_autolink at $.path" in first
    assert "streamrepair" not in told["call_2"]  # the same lesson, not repeated
    assert "parse_scalar_string at $.limit" in told["call_5"]  # a new one
    assert "drop_null" not in told["call_5"]


def test_a_call_that_stays_invalid_is_blocked_with_the_feedback(repaired: Run) -> None:
    # Hermes turns a pre_tool_call block into the result {"error": message}
    error = json.loads(repaired.told()["call_3"])["error"]
    assert error.startswith('Invalid input for tool "probe_read". Please correct and retry:')
    assert "$.path: required property is missing" in error


def test_a_multimodal_result_is_left_intact(repaired: Run) -> None:
    content = repaired.told()["call_4"]
    assert isinstance(content, list)
    assert content[0] == {"type": "text", "text": "shot x"}
    assert content[1]["type"] == "image_url"
    assert "streamrepair" not in json.dumps(content)


def test_telemetry_records_each_decision(repaired: Run) -> None:
    calls = [(r["tool"], r["outcome"]) for r in repaired.telemetry if r["event"] == "call"]
    assert calls == [
        ("probe_read", "repaired"),
        ("probe_read", "repaired"),
        ("probe_read", "rejected"),
        ("probe_shot", "repaired"),
        ("probe_read", "repaired"),
    ]


def test_a_plain_trailing_comma_runs_on_the_first_response(
    installed_home: Path, hermes_python: Path, tmp_path: Path
) -> None:
    run = _run(installed_home, hermes_python, tmp_path, TRAILING_COMMA, stream=False, name="tc")
    assert run.received() == [{"path": "a.txt", "limit": 5}]
    assert run.result.identical_retries() == 0
    assert len(run.result.requests) == 2  # the call, then the answer to its result
    assert "trailing_comma at character" in run.told()["call_1"]
