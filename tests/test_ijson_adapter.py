"""The ijson adapter: its events, fed to ijson's own parse/items/kvitems, agree with ijson
run over the repaired JSON text, for any chunking; cut-off text gives a prefix of them."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import ijson
import ijson.backends.python as ijson_python
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _support import chunkings, split_points
from streamrepair import (
    ArgumentAssembler,
    ChangeOrderError,
    Status,
    ToolCallDelta,
    ToolCallReady,
    UnrepairableError,
    iter_events,
)
from streamrepair.syntax import IjsonAdapter, ijson_events
from test_assembler_properties import _mutations, documents


def _finite(value: Any) -> bool:
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return True


def _events(chunks: list[str], **options: Any) -> tuple[list[Any], ArgumentAssembler]:
    assembler = ArgumentAssembler(changes=True)
    try:
        events = list(ijson_events(chunks, assembler=assembler, **options))
    except UnrepairableError:
        events = []
    return events, assembler


def _check(chunks: list[str]) -> list[Any] | None:
    """The adapter's events for one chunking, checked against ijson over the repaired
    text; None when the text was unrepairable."""
    assembler = ArgumentAssembler(changes=True)
    adapter = IjsonAdapter()
    events: list[Any] = []
    for chunk in chunks:
        if assembler.status is Status.UNREPAIRABLE:
            return None
        assembler.feed(chunk)
        changes = assembler.take_changes()
        events.extend(adapter.feed(changes))
    try:
        values = assembler.finish_values()
    except UnrepairableError:
        return None
    events.extend(adapter.feed(assembler.take_changes()))
    if assembler.value_count != 1 or not _finite(values[0].value):
        return events
    value = values[0].value
    # ijson's reference backend: yajl2_c writes "item" instead of ".item" for an array under
    # an empty key at the top ('{"": [1]}'); the adapter follows the reference.
    repaired = list(ijson_python.parse(json.dumps(value).encode()))
    if values[0].structure_synthesized:
        # Cut off: what the model finished, as a prefix; nothing invented.
        assert events == repaired[: len(events)], chunks
        return events
    built = list(ijson.items(iter(events), ""))
    assert len(built) == 1
    assert json.dumps(built[0], default=float) == json.dumps(value)
    assert events == repaired, chunks
    return events


def _check_everywhere(text: str, extra: list[str]) -> None:
    results = [_check(chunks) for chunks in [*chunkings(text), extra]]
    reference = results[0]
    for other in results[1:]:
        if reference is not None and other is not None:
            assert other == reference, text


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(text=documents(), data=st.data())
def test_events_equal_ijson_over_the_repaired_text_for_valid_json(
    text: str, data: st.DataObject
) -> None:
    _check_everywhere(text, data.draw(split_points(text)))


@SETTINGS
@given(text=_mutations(), data=st.data())
def test_events_equal_ijson_over_the_repaired_text_for_text_that_needs_repair(
    text: str, data: st.DataObject
) -> None:
    _check_everywhere(text, data.draw(split_points(text)))


MULTI_EDIT = json.dumps(
    {
        "path": "src/app.py",
        "edits": [
            {"old": "def f(x):", "new": "def f(x: int) -> int:"},
            {"old": "return x", "new": "return x * 2  # doubled\n"},
            {"old": "f(1)", "new": "f(2)", "all": True},
        ],
    }
)


def test_each_edit_comes_out_of_ijson_items_as_soon_as_it_is_closed() -> None:
    # ijson's own push machinery (items_basecoro), fed the adapter's events delta by delta.
    found: list[Any] = ijson.sendable_list()
    items = ijson.common.items_basecoro(found, "edits.item")
    assembler = ArgumentAssembler(changes=True)
    adapter = IjsonAdapter()
    seen_at = []
    for offset, ch in enumerate(MULTI_EDIT, 1):
        assembler.feed(ch)
        for event in adapter.feed(assembler.take_changes()):
            items.send(event)
        if found:
            seen_at.append((offset, found[0]))
            del found[:]
    expected = json.loads(MULTI_EDIT)["edits"]
    assert [edit for _, edit in seen_at] == expected
    # Each edit came out on the very character that closed it.
    for offset, _ in seen_at:
        assert MULTI_EDIT[offset - 1] == "}"


def test_kvitems_and_basic_parse_run_on_the_events() -> None:
    text = '{"path": "a.md", "lines": [1, 2.5], "ok": true, "none": null}'
    events = list(ijson_events(list(text)))
    assert list(ijson.kvitems(iter(events), "")) == [
        ("path", "a.md"),
        ("lines", [1, Decimal("2.5")]),
        ("ok", True),
        ("none", None),
    ]
    data = text.encode()
    assert list(ijson_events([text], basic=True)) == list(ijson.basic_parse(data))
    assert list(ijson_events([text], use_float=True)) == list(ijson.parse(data, use_float=True))


def test_repairs_happen_before_ijson_sees_the_text() -> None:
    text = "```json\n{'path': 'a.md', 'tags': ['x', 'y',], 'dry_run': True,}\n```"
    with pytest.raises(ijson.JSONError):
        list(ijson.parse(text.encode()))
    assert list(ijson.items(ijson_events(list(text)), "")) == [
        {"path": "a.md", "tags": ["x", "y"], "dry_run": True}
    ]


def test_cut_off_text_gives_what_the_model_finished_and_nothing_more() -> None:
    events = list(ijson_events(['{"edits": [{"old": "a", "new": "b"}, {"old": "c", "ne']))
    assert list(ijson.items(iter(events), "edits.item")) == [{"old": "a", "new": "b"}]
    assert events[-1] == ("edits.item", "map_key", "old") or events[-1][1] == "string"
    assert not any(event[1] in ("end_array", "end_map") for event in events[-3:])


def test_unrepairable_text_raises_our_error_after_the_events_before_it() -> None:
    got: list[Any] = []
    events = ijson_events(['{"a": 1, ', '"b": [2 }'])
    with pytest.raises(UnrepairableError) as info:
        got.extend(events)
    assert info.value.offset == 17
    assert got == [
        ("", "start_map", None),
        ("", "map_key", "a"),
        ("a", "number", 1),
        ("", "map_key", "b"),
        ("b", "start_array", None),
        ("b.item", "number", 2),
    ]


def test_concatenated_values_follow_one_another_as_with_multiple_values() -> None:
    text = '{"a": 1}{"b": [true]}'
    ours = list(ijson_events(list(text)))
    assert ours == list(ijson.parse(text.encode(), multiple_values=True))


def test_a_top_level_value_read_whole() -> None:
    assert list(ijson_events(['"{\\"a\\": [1, {\\"b\\": null}]}"'])) == list(
        ijson.parse(b'{"a": [1, {"b": null}]}')
    )
    assert list(ijson_events(["12"])) == [("", "number", 12)]


def _ijson_parse_of(chunks: list[str]) -> tuple[list[Any], Any] | None:
    """(``ijson.parse`` over the adapter's basic pairs, what they are input for; the
    repaired value), or None when the text was unrepairable, cut off, or is not one finite
    value."""
    assembler = ArgumentAssembler(changes=True)
    try:
        basic = list(ijson_events(chunks, basic=True, assembler=assembler))
    except UnrepairableError:
        return None
    values = assembler.finish_values()
    if len(values) != 1 or not _finite(values[0].value) or values[0].structure_synthesized:
        return None
    # basic_parse -> parse: ijson's own chaining, from the pairs to the prefixed events.
    return list(ijson_python.parse(iter(basic))), values[0].value


@SETTINGS
@given(text=st.one_of(documents(), _mutations()), data=st.data())
def test_basic_pairs_fed_to_ijson_parse_equal_ijson_parse_of_the_whole_text(
    text: str, data: st.DataObject
) -> None:
    for chunks in [*chunkings(text), data.draw(split_points(text))]:
        result = _ijson_parse_of(chunks)
        if result is None:
            continue
        got, value = result
        repaired = json.dumps(value)
        expected = list(ijson_python.parse(repaired.encode()))
        assert got == expected, chunks
        # and the prefixed events ijson.parse made of them build the same value
        built = list(ijson_python.items(iter(got), ""))
        assert json.dumps(built, default=float) == json.dumps([json.loads(repaired)])


def test_basic_pairs_are_input_for_ijson_parse_not_basic_parse() -> None:
    text = '{"edits": [{"old": "a", "new": "b"}], "n": 2.5}'
    pairs = list(ijson_events(list(text), basic=True))
    assert pairs == list(ijson.basic_parse(text.encode()))
    assert list(ijson.parse(iter(pairs))) == list(ijson.parse(text.encode()))
    with pytest.raises(ValueError, match="source"):  # basic_parse reads bytes, not events
        list(ijson.basic_parse(iter(pairs)))


# -- the example of docs/streams.md ("Each edit as it completes, with ijson") ----------------

ROOT = Path(__file__).resolve().parent.parent
INTERLEAVED = ROOT / "fixtures" / "sse" / "multi-edit-interleaved.sse"


def _docs_ijson_example() -> dict[str, Any]:
    text = (ROOT / "docs" / "streams.md").read_text(encoding="utf-8")
    (block,) = [
        b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "IjsonAdapter" in b
    ]
    namespace: dict[str, Any] = {}
    exec(compile(block, "docs/streams.md", "exec"), namespace)  # runs its own asserts
    return namespace


def test_the_docs_ijson_example_keeps_interleaved_calls_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    example = _docs_ijson_example()
    path = str(INTERLEAVED)
    ready = {e.call_id: e.arguments for e in iter_events(path) if isinstance(e, ToolCallReady)}
    assert len(ready) == 2
    for call_id, arguments in ready.items():
        got = list(ijson.items(example["call_events"](path, call_id), "edits.item"))
        assert got == arguments["edits"]
        got_pairs = list(ijson.kvitems(example["call_events"](path, call_id), ""))
        assert dict(got_pairs) == arguments

    # The calls really interleave: one adapter fed both calls' changes gives neither.
    def shared_events() -> Any:
        adapter = IjsonAdapter()
        for event in iter_events(path):
            if isinstance(event, ToolCallDelta):
                yield from adapter.feed(event.changes)

    with pytest.raises(ChangeOrderError) as caught:  # the adapter sees the mix, says so
        list(ijson.items(shared_events(), "edits.item"))
    assert caught.value.reason.startswith("a value at a path")
