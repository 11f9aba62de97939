"""The real Claude Code binary through the proxy, end to end (opt-in).

Claude Code checks a built-in tool's input (JSON parse, then its own schema) before any
hook runs, so these three calls end as ``InputValidationError`` or a wrong file without
the proxy (``../shared/reference/proxy-compatibility.md`` section 6), and run with the
repaired input through it:

1. ``Read`` with ``"limit": null`` (the schema wants a number);
2. ``Read`` whose input JSON has a trailing comma;
3. ``Write`` to a markdown-linked path, ``<project>/[out.md](http://out.md)``.

The scripted upstream is the Claude Code harness's ``FakeAnthropic`` (module
``ccharness``: the tests folder, or the folder named by ``$STREAMREPAIR_CCHARNESS_DIR``);
the binary is the npm package ``@anthropic-ai/claude-code-linux-x64`` (``$CLAUDE_BINARY``
or a ``node_modules`` the harness finds). Opt in with ``STREAMREPAIR_CLAUDE_CODE=1``
(``.ci/run`` sets it when node is present); otherwise, or when the harness or the
binary is missing, the test is skipped with the reason.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

from _proxy_support import serving
from streamrepair.proxy import ProxyConfig, create_app

pytestmark = pytest.mark.claude_code
OPT_IN = "STREAMREPAIR_CLAUDE_CODE"


def _harness() -> ModuleType:
    if os.environ.get(OPT_IN) != "1":
        pytest.skip(f"the Claude Code end-to-end test is opt-in: set {OPT_IN}=1 (needs node)")
    extra = os.environ.get("STREAMREPAIR_CCHARNESS_DIR")
    if extra and extra not in sys.path:
        sys.path.insert(0, extra)
    try:
        harness = importlib.import_module("ccharness")
    except ImportError:
        pytest.skip(
            "the Claude Code harness (ccharness.py) is not in tests/ and "
            "$STREAMREPAIR_CCHARNESS_DIR does not name a folder holding it"
        )
    reason = harness.claude_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    return harness


def _script(harness: ModuleType, project: Path) -> list[object]:
    notes = f"{project}/notes.md"
    return [
        harness.tool_turn("Read", f'{{"file_path": "{notes}", "limit": null}}', id="toolu_null"),
        harness.tool_turn("Read", f'{{"file_path": "{notes}", "limit": 3,}}', id="toolu_comma"),
        harness.tool_turn(
            "Write",
            f'{{"file_path": "{project}/[out.md](http://out.md)", "content": "hello\\n"}}',
            id="toolu_link",
        ),
    ]


def _run(harness: ModuleType, tmp: Path, name: str, through_proxy: bool) -> tuple[object, Path]:
    project = tmp / name / "project"
    project.mkdir(parents=True)
    (project / "notes.md").write_text("".join(f"NOTES-LINE-{i}\n" for i in range(1, 21)))
    with harness.FakeAnthropic(_script(harness, project)) as api:
        if through_proxy:
            with serving(create_app(ProxyConfig(upstream=api.url))) as url:
                run = harness.run_claude(
                    api,
                    project=project,
                    home=tmp / name / "home",
                    permission_mode="bypassPermissions",
                    env={"ANTHROPIC_BASE_URL": url},
                    timeout=180,
                )
        else:
            run = harness.run_claude(
                api,
                project=project,
                home=tmp / name / "home",
                permission_mode="bypassPermissions",
                timeout=180,
            )
    return run, project


def test_claude_code_runs_repaired_calls_through_the_proxy(tmp_path: Path) -> None:
    harness = _harness()
    run, project = _run(harness, tmp_path, "proxy", through_proxy=True)
    results = {r.tool_use_id: r for r in run.tool_results()}
    assert set(results) == {"toolu_null", "toolu_comma", "toolu_link"}, run.stderr
    null, comma, link = results["toolu_null"], results["toolu_comma"], results["toolu_link"]
    assert not null.is_error
    assert "NOTES-LINE-20" in null.text  # the whole file: the null limit was dropped
    assert "drop_null at $.limit" in null.text  # and the model was told, once
    assert not comma.is_error
    assert "NOTES-LINE-3" in comma.text
    assert "NOTES-LINE-4" not in comma.text  # limit 3 kept
    assert not link.is_error
    assert f"{project}/out.md" in link.text
    assert (project / "out.md").read_text() == "hello\n"
    assert not any("[" in p.name for p in project.iterdir())


def test_without_the_proxy_the_same_calls_fail(tmp_path: Path) -> None:
    harness = _harness()
    run, project = _run(harness, tmp_path, "direct", through_proxy=False)
    results = {r.tool_use_id: r for r in run.tool_results()}
    assert "InputValidationError" in results["toolu_null"].text
    assert "could not be parsed as JSON" in results["toolu_comma"].text
    assert not (project / "out.md").exists()
    assert any(p.name.startswith("[out.md]") for p in project.iterdir())  # a nested folder
