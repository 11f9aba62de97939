"""``streamrepair replay``'s live view follows each call through its deltas' changes: a
long field is drawn from its tail and marked while it is written, the view never needs a
snapshot; and examples/live_write_file.py, the runnable live-UI example."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from streamrepair import ToolCallStream

pytest.importorskip("rich")

from rich.console import Console

from streamrepair.cli.replay import _render, _View
from streamrepair.syntax._recorder import LazyPreview

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "sse"


def _text(renderable: Any) -> str:
    console = Console(width=100, file=io.StringIO(), force_terminal=False)
    console.print(renderable)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


def _chunk(arguments: str, *, first: bool = False) -> bytes:
    tool: dict[str, Any] = {"index": 0, "function": {"arguments": arguments}}
    if first:
        tool.update(id="call_w", function={"name": "write_file", "arguments": arguments})
    body = {"choices": [{"index": 0, "delta": {"tool_calls": [tool]}}]}
    return f"data: {json.dumps(body)}\n\n".encode()


class NoSnapshots(Exception):
    pass


def test_the_view_draws_a_long_write_from_the_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Resolving a delta's preview would fail: the view must not need it.
    def refuse(self: object) -> Any:
        raise NoSnapshots

    core = ToolCallStream()
    view = _View()
    content = "".join(f"line {i}: {'x' * 40}\n" for i in range(200))
    text = json.dumps({"path": "notes/big.md", "content": content})
    pieces = [_chunk(text[:40], first=True)] + [
        _chunk(text[i : i + 16]) for i in range(40, len(text) - 30, 16)
    ]
    with monkeypatch.context() as patch:
        patch.setattr(LazyPreview, "resolve", refuse)
        for piece in pieces:
            for event in core.feed(piece):
                view.apply(event)
    shown = _text(_render(view, "test"))
    assert 'path: "notes/big.md"' in shown
    assert "content: " in shown
    assert "chars [writing]" in shown
    assert "line 198: xxxx" in shown  # the tail of the content
    assert "line 3:" not in shown  # not the head
    assert "streaming..." in shown


def test_a_rejected_call_shows_its_raw_text() -> None:
    from streamrepair import iter_events

    view = _View()
    for event in iter_events(FIXTURES / "finish-length-degrade.sse"):
        view.apply(event)
    shown = _text(_render(view, "test"))
    assert "rejected: cut_off" in shown
    assert '"content":"# Title' in shown  # raw, as streamed


def _load_example() -> ModuleType:
    path = ROOT / "examples" / "live_write_file.py"
    spec = importlib.util.spec_from_file_location("live_write_file", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["live_write_file"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("cut", [False, True])
def test_the_live_write_file_example_runs(cut: bool) -> None:
    example = _load_example()
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=False)
    args = ["--no-delay", "--lines", "400", *(["--cut"] if cut else [])]
    state = example.main(args, console=console)
    shown = out.getvalue()
    assert state.path == "src/generated/report.py"
    if cut:
        assert state.outcome.startswith("rejected")
        assert "NOT written" in shown
        assert state.content_chars < state.expected_chars
    else:
        assert state.outcome == "ready"
        assert state.content_chars == state.expected_chars
        assert "ready to run" in shown
    assert state.path_final_at < state.deltas // 10  # the path was final early on


def test_the_example_follows_the_write_file_call_not_the_first_call() -> None:
    # finish-length-degrade.sse: a read_file call that is ready, then a write_file call
    # cut off at max_tokens; the panel is the write's.
    example = _load_example()
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=False)
    recording = str(FIXTURES / "finish-length-degrade.sse")
    state = example.main(["--no-delay", "--file", recording], console=console)
    assert (state.call_id, state.path) == ("call_len_0002", "out.md")
    assert state.outcome == "rejected: cut_off"
    assert state.content_chars == len("# Title\n\nFirst paragraph th")
    assert "NOT written (rejected: cut_off)" in out.getvalue()
    assert "notes.md" not in out.getvalue()


def test_the_example_follows_the_tool_it_is_told_to() -> None:
    example = _load_example()
    recording = str(FIXTURES / "finish-length-degrade.sse")
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=False)
    state = example.main(
        ["--no-delay", "--file", recording, "--tool", "read_file"], console=console
    )
    assert (state.call_id, state.path, state.outcome) == ("call_len_0001", "notes.md", "ready")
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=False)
    recording = str(FIXTURES / "multi-edit-streaming.sse")
    state = example.main(["--no-delay", "--file", recording], console=console)
    assert state.call_id == ""
    assert "no write_file call in the stream" in out.getvalue()
