"""The call protocol of the stream layer: every call that ends ready or rejected was
announced by a ToolCallStarted (split calls and nameless ones included); each delta's
changes, applied in order, give its preview; the preview is computed only when read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamrepair import (
    StreamEvent,
    ToolCallDelta,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStarted,
    ToolCallStream,
    ToolCallTracker,
    iter_events,
)
from streamrepair.events import DeferredPreview
from streamrepair.providers.wire import WireStop, WireToolCall
from streamrepair.syntax.changes import Appended, Opened, Reset, ValueBuilder, ValueKind

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sse"
CASES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".sse", ".ndjson"))


def _options(path: Path) -> dict[str, Any]:
    tools = path.with_name(path.name.split(".")[0] + ".tools.json")
    return {"tools": json.loads(tools.read_text(encoding="utf-8"))} if tools.exists() else {}


def check_protocol(events: list[StreamEvent]) -> None:
    """Every delta and verdict names a call announced before it, once; a split call's
    start links to the streamed call."""
    started: dict[str, ToolCallStarted] = {}
    judged: set[str] = set()
    for event in events:
        if isinstance(event, ToolCallStarted):
            assert event.call_id not in started, f"{event.call_id} announced twice"
            started[event.call_id] = event
            if event.origin_id != event.call_id:
                assert event.origin_id in started
        elif isinstance(event, ToolCallDelta):
            assert event.call_id in started
            assert event.call_id not in judged
        elif isinstance(event, ToolCallReady | ToolCallRejected):
            assert event.call_id in started, f"{event.call_id} judged but never announced"
            assert event.call_id not in judged
            assert started[event.call_id].origin_id == event.origin_id
            judged.add(event.call_id)
    assert judged == set(started), "an announced call got no verdict"


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_every_fixture_keeps_the_call_protocol(path: Path) -> None:
    check_protocol(list(iter_events(path, **_options(path))))


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_each_deltas_changes_give_its_preview(path: Path) -> None:
    # All events are kept and the previews read only at the end: each lazy preview is
    # still the snapshot of its own delta.
    events = list(iter_events(path, **_options(path)))
    builders: dict[str, ValueBuilder] = {}
    expected: list[tuple[ToolCallDelta, str]] = []
    for event in events:
        if isinstance(event, ToolCallDelta):
            builder = builders.setdefault(event.call_id, ValueBuilder())
            builder.apply_all(event.changes)
            expected.append((event, json.dumps(builder.snapshot())))
    for event, snapshot in expected:
        if event.preview is None and snapshot != "null":
            # Text after the arguments turned unrepairable: no preview, no changes.
            assert event.changes == ()
            continue
        assert json.dumps(event.preview) == snapshot


def test_split_calls_are_announced_with_their_origin() -> None:
    events = list(iter_events(FIXTURES / "concatenated-values.sse"))
    check_protocol(events)
    starts = [(e.call_id, e.origin_id) for e in events if isinstance(e, ToolCallStarted)]
    assert starts == [
        ("call_gcli_0001", "call_gcli_0001"),
        ("call_gcli_0001v2", "call_gcli_0001"),
        ("call_gcli_0001v3", "call_gcli_0001"),
    ]
    resets = [c for e in events if isinstance(e, ToolCallDelta) for c in e.changes]
    assert [c for c in resets if isinstance(c, Reset)] == [Reset(1), Reset(2)]
    # Each split call's start comes right before its verdict.
    for i, event in enumerate(events):
        if isinstance(event, ToolCallStarted) and event.call_id != event.origin_id:
            assert isinstance(events[i + 1], ToolCallReady)
            assert events[i + 1].call_id == event.call_id


def test_a_rejected_split_value_is_announced_and_linked() -> None:
    tracker = ToolCallTracker()
    events = tracker.feed(WireToolCall(id="c1", index=0, name="f", arguments='{"a": 1}[2]{"b": 3}'))
    events += tracker.feed(WireStop(reason="tool_calls"))
    events += tracker.finish()
    check_protocol(events)
    rejected = [e for e in events if isinstance(e, ToolCallRejected)]
    assert [(e.call_id, e.origin_id) for e in rejected] == [("c1v2", "c1")]


def test_a_call_whose_name_never_came_is_announced_before_its_rejection() -> None:
    tracker = ToolCallTracker()
    events = tracker.feed(WireToolCall(id="c9", index=0, arguments='{"a": 1}'))
    events += tracker.feed(WireStop(reason="tool_calls"))
    events += tracker.finish()
    check_protocol(events)
    assert [type(e).__name__ for e in events[:2]] == ["ToolCallStarted", "ToolCallRejected"]
    assert events[0] == ToolCallStarted(call_id="c9", index=0, name="")


def test_a_ui_keyed_by_call_id_never_meets_an_unknown_id() -> None:
    # The failure the issue reported: a dict of panels raised KeyError on `<id>_2`.
    panels: dict[str, dict[str, Any]] = {}
    for event in iter_events(FIXTURES / "concatenated-values.sse"):
        if isinstance(event, ToolCallStarted):
            panels[event.call_id] = {"name": event.name, "status": "streaming"}
        elif isinstance(event, ToolCallReady | ToolCallRejected):
            panels[event.call_id]["status"] = type(event).__name__
    assert list(panels) == ["call_gcli_0001", "call_gcli_0001v2", "call_gcli_0001v3"]


def test_previews_off_gives_no_changes_and_no_preview() -> None:
    events = list(iter_events(FIXTURES / "repairs-needed.sse", previews=False))
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas
    assert all(e.changes == () and e.preview is None for e in deltas)


def test_the_preview_is_computed_only_when_read() -> None:
    resolved: list[int] = []

    class Counting(DeferredPreview):
        def resolve(self) -> Any:
            resolved.append(1)
            return {"a": 1}

    event = ToolCallDelta(call_id="c", index=0, name="f", text="x", preview=Counting())
    assert resolved == []
    assert event.preview == {"a": 1}
    assert event.preview == {"a": 1}
    assert resolved == [1]  # kept after the first read
    assert event.to_dict()["preview"] == {"a": 1}


def test_tool_call_delta_still_takes_a_plain_preview_and_checks_changes() -> None:
    event = ToolCallDelta(call_id="c", index=None, name="f", text="{", preview={})
    assert event.preview == {}
    assert event.changes == ()
    assert event == ToolCallDelta(call_id="c", index=None, name="f", text="{", preview={})
    with pytest.raises(TypeError, match="tuple"):
        ToolCallDelta(call_id="c", index=None, name="f", text="{", changes=[])  # type: ignore[arg-type]


def test_changes_appear_in_to_dict() -> None:
    core = ToolCallStream()
    events = core.feed(
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1",'
        b'"function":{"name":"write","arguments":"{\\"content\\": \\"ab"}}]}}]}\n\n'
    )
    delta = next(e for e in events if isinstance(e, ToolCallDelta))
    assert delta.changes == (
        Opened((), ValueKind.OBJECT),
        Opened(("content",), ValueKind.STRING),
        Appended(("content",), "ab"),
    )
    assert delta.to_dict()["changes"] == [
        {"change": "opened", "path": [], "kind": "object"},
        {"change": "opened", "path": ["content"], "kind": "string"},
        {"change": "append", "path": ["content"], "text": "ab"},
    ]


def test_to_dict_can_leave_the_preview_out_without_computing_it() -> None:
    class Refusing(DeferredPreview):
        def resolve(self) -> Any:
            raise AssertionError("computed")

    event = ToolCallDelta(call_id="c", index=0, name="f", text="x", preview=Refusing())
    data = event.to_dict(omit=("preview",))
    assert "preview" not in data
    assert data["changes"] == []


def test_replay_json_without_previews(capsys: pytest.CaptureFixture[str]) -> None:
    from streamrepair.cli import main

    path = FIXTURES / "multi-edit-streaming.sse"
    assert main(["replay", "--json", "--no-previews", str(path)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    deltas = [line for line in lines if line["type"] == "tool_call_delta"]
    assert deltas
    assert all("preview" not in line and "changes" in line for line in deltas)
    golden = FIXTURES / "multi-edit-streaming.events.jsonl"
    expected = [json.loads(line) for line in golden.read_text(encoding="utf-8").splitlines()]
    for line in expected:
        line.pop("preview", None)
    assert lines == expected
