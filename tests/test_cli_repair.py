"""``streamrepair repair``: the README's main job, on the bundled example and on files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from streamrepair.cli import main


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streamrepair.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_bundled_example_is_ready_with_its_repairs() -> None:
    done = _cli("repair", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "ready"
    assert report["value"]["path"] == "C:\\Users\\dev\\project\\README.md"
    assert report["value"]["overwrite"] is True
    kinds = {r["kind"] for r in report["repairs"]}
    assert {"code_fence", "invalid_escape", "python_literal", "trailing_comma"} <= kinds


def test_text_output_names_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["repair"]) == 0
    out = capsys.readouterr().out
    assert "verdict: ready" in out
    assert "repairs: 6" in out  # one record per kind: the two trailing commas are one


def test_a_count_of_one_is_singular() -> None:
    done = _cli("repair", "--chunk", "100", "-", stdin="1")
    assert done.stdout.splitlines()[0] == "standard input: 1 character in 1 delta of 100"
    done = _cli("repair", "--chunk", "1", "-", stdin="[1]")
    assert done.stdout.splitlines()[0] == "standard input: 3 characters in 3 deltas of 1"


@pytest.mark.parametrize(
    ("text", "code", "verdict"),
    [
        ('{"path": "a.txt", "content": "hel', 3, "cut off"),
        ('{"a" 1}', 1, "unrepairable"),
        ('{"a": 1}{"a": 2}', 1, "unrepairable"),
        ("", 1, "unrepairable"),
    ],
)
def test_verdicts_and_exit_codes(text: str, code: int, verdict: str) -> None:
    for chunk in ("1", "16", "4096"):
        done = _cli("repair", "-", "--json", "--chunk", chunk, stdin=text)
        assert done.returncode == code, done.stderr
        assert json.loads(done.stdout)["verdict"] == verdict


def test_file_argument_and_bad_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "args.json"
    path.write_text('{"a": [1, 2,],}', encoding="utf-8")
    assert main(["repair", str(path)]) == 0
    assert main(["repair", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["repair", "--chunk", "0", str(path)]) == 2


def test_help_lists_the_command() -> None:
    done = _cli("--help")
    assert done.returncode == 0
    assert "repair" in done.stdout
    assert main([]) == 2
