"""The project's own checks, run by the one test command: the public API matches __all__,
the README's example runs, mypy --strict and ruff are clean."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import streamrepair

ROOT = Path(__file__).resolve().parent.parent


def test_all_matches_what_is_importable() -> None:
    public = {name for name in dir(streamrepair) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(streamrepair, name)).__name__ == "module"}
    assert set(streamrepair.__all__) - {"__version__"} == public - modules
    for name in streamrepair.__all__:
        assert getattr(streamrepair, name) is not None


def test_readme_python_examples_run() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert blocks, "the README should show the library in use"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def _tool(name: str) -> list[str]:
    if shutil.which(name) is None and not (Path(sys.executable).parent / name).exists():
        pytest.fail(f"{name} is not installed; install the test extras: pip install -e '.[test]'")
    return [sys.executable, "-m", name]


def test_mypy_strict_is_clean() -> None:
    done = subprocess.run(
        [*_tool("mypy"), "--strict", "src"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_is_clean() -> None:
    check = subprocess.run(
        [*_tool("ruff"), "check", "src", "tests", "benchmarks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    fmt = subprocess.run(
        [*_tool("ruff"), "format", "--check", "src", "tests", "benchmarks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
