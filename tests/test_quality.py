"""The project's own checks, run by the one test command: the README's example runs, mypy
--strict and ruff are clean (the public API: test_public_api.py; the layers: test_layers.py)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


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
