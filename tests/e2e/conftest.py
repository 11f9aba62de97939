"""End-to-end tests in the real harnesses (Claude Code, Codex, OpenCode, Hermes Agent).

Every test here carries the ``e2e`` marker and runs by default wherever its harness is
installed (``python tests/e2e/e2e_tools.py install``, as ``.ci/run`` does); where it is
not, the fixture below skips the test and says why and how to install it. Deselect
them all with ``-m "not e2e"``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from harnessloop import Bench

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


@pytest.fixture(scope="session")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    """One scripted upstream and one ``streamrepair serve`` in front of it for the whole
    session (``run_loop(..., bench=bench)``: the proxy starts once, not per run)."""
    with Bench(tmp_path_factory.mktemp("bench")) as shared:
        yield shared
