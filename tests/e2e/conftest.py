"""End-to-end tests in the real harnesses (Claude Code, Codex, OpenCode, Hermes Agent).

Every test here carries the ``e2e`` marker and runs by default wherever its harness is
installed (``python tests/e2e/e2e_tools.py install``, as ``.ci/run`` does); where it is
not, the fixture below skips the test and says why and how to install it. Deselect
them all with ``-m "not e2e"``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import e2e_tools

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.resolve().parent == HERE:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def claude() -> Path:
    """The pinned Claude Code binary (the test is skipped when it is missing)."""
    binary = e2e_tools.find_claude()
    if binary is None:
        pytest.skip(e2e_tools.claude_skip_reason() or "Claude Code is missing")
    return binary


@pytest.fixture(scope="session")
def codex() -> Path:
    """The pinned Codex binary (the test is skipped when it is missing)."""
    binary = e2e_tools.find_codex()
    if binary is None:
        pytest.skip(e2e_tools.codex_skip_reason() or "Codex is missing")
    return binary


@pytest.fixture(scope="session")
def opencode() -> Path:
    """The pinned OpenCode binary (the test is skipped when it is missing)."""
    binary = e2e_tools.find_opencode()
    if binary is None:
        pytest.skip(e2e_tools.opencode_skip_reason() or "OpenCode is missing")
    return binary


@pytest.fixture(scope="session")
def hermes_python() -> Path:
    """A Python with the pinned hermes-agent (the test is skipped when there is none)."""
    python = e2e_tools.find_hermes_python()
    if python is None:
        pytest.skip(e2e_tools.hermes_skip_reason() or "hermes-agent is missing")
    return python
