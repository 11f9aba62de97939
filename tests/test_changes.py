"""Preview changes (syntax/changes.py): applied in order they reproduce preview() after
every delta, whatever the chunking; lazy previews give back the snapshot of their moment;
the vocabulary says exactly what a UI (or a proxy writing JSON) needs."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _support import chunkings, split_points
from streamrepair import ArgumentAssembler, Status, UnrepairableError
from streamrepair.syntax.changes import (
    Appended,
    Assigned,
    Change,
    Closed,
    KeyRead,
    Opened,
    Reset,
    ValueBuilder,
    ValueKind,
    apply_changes,
    change_from_dict,
    normalize,
)
from test_assembler_properties import _mutations, documents

OBJ, ARR, STR = ValueKind.OBJECT, ValueKind.ARRAY, ValueKind.STRING


def _exact(value: Any) -> str:
    """A comparison key that tells 1 from 1.0 from True and sees key order."""
    return json.dumps(value, ensure_ascii=True)


class Trace:
    """One chunking fed with changes on: the changes, eager and lazy previews per delta."""

    def __init__(self, chunks: list[str]) -> None:
        self.changes: list[Change] = []
        self.per_delta: list[tuple[Change, ...]] = []
        self.previews: list[Any] = []
        self.lazies: list[Any] = []
        self.result: Any = None
        self.error: UnrepairableError | None = None
        assembler = ArgumentAssembler(changes=True)
        builder = ValueBuilder()
        for chunk in chunks:
            if assembler.status is Status.UNREPAIRABLE:
                break
            assembler.feed(chunk)
            delta = assembler.take_changes()
            self.per_delta.append(delta)
            self.changes.extend(delta)
            builder.apply_all(delta)
            preview = assembler.preview()
            # The property the issue asks for: the changes so far give the snapshot.
            assert _exact(builder.snapshot()) == _exact(preview), (chunks, delta)
            self.previews.append(copy.deepcopy(preview))
            self.lazies.append(assembler.lazy_preview())
        try:
            self.result = assembler.finish_values()
        except UnrepairableError as exc:
            self.error = exc
        else:
            tail = assembler.take_changes()
            self.changes.extend(tail)
            builder.apply_all(tail)
            last = self.result[-1]
            if not isinstance(last.value, str) or not last.structure_synthesized:
                assert _exact(builder.value) == _exact(last.value)
        assert assembler.take_changes() == ()


def _check(chunks: list[str]) -> Trace:
    trace = Trace(chunks)
    # Lazy previews resolved after everything was read give the snapshot of their moment.
    for lazy, eager in zip(trace.lazies, trace.previews, strict=True):
        assert _exact(lazy.resolve()) == _exact(eager), chunks
    return trace


def _check_everywhere(text: str, extra: list[str] | None = None) -> None:
    runs = [_check(chunks) for chunks in chunkings(text)]
    if extra is not None:
        runs.append(_check(extra))
    reference = normalize(runs[0].changes)
    for other in runs[1:]:
        if (other.error is None) == (runs[0].error is None):
            assert normalize(other.changes) == reference, text


SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(text=documents(), data=st.data())
def test_changes_reproduce_the_snapshot_on_valid_json(text: str, data: st.DataObject) -> None:
    _check_everywhere(text, data.draw(split_points(text)))


@SETTINGS
@given(text=_mutations(), data=st.data())
def test_changes_reproduce_the_snapshot_on_text_that_needs_repair(
    text: str, data: st.DataObject
) -> None:
    _check_everywhere(text, data.draw(split_points(text)))


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="{}[]\":,\\ u0aetrnkNUL'`\n\x1b\ud83d\ude00", max_size=40))
def test_changes_reproduce_the_snapshot_on_arbitrary_text(text: str) -> None:
    _check_everywhere(text)


# -- the vocabulary, on examples ---------------------------------------------------------------


def _changes(*chunks: str, finish: bool = False) -> list[Change]:
    assembler = ArgumentAssembler(changes=True)
    out: list[Change] = []
    for chunk in chunks:
        assembler.feed(chunk)
        out.extend(assembler.take_changes())
    if finish:
        assembler.finish_values()
        out.extend(assembler.take_changes())
    return out


def test_a_write_streams_path_then_content_as_decoded_text() -> None:
    got = _changes('{"path": "a.', 'txt", "content": "line\\', "n\\u00e9", '\\"q"}')
    assert got == [
        Opened((), OBJ),
        Opened(("path",), STR),
        Appended(("path",), "a."),
        Appended(("path",), "txt"),
        Closed(("path",)),
        Opened(("content",), STR),
        Appended(("content",), "line"),
        Appended(("content",), "\né"),
        Appended(("content",), '"q'),
        Closed(("content",)),
        Closed(()),
    ]


def test_a_string_read_whole_is_assigned_and_normalizes_like_a_streamed_one() -> None:
    whole = _changes('{"a": "xy", "b": [1, "z"]}')
    assert whole == [
        Opened((), OBJ),
        Assigned(("a",), "xy"),
        Opened(("b",), ARR),
        Assigned(("b", 0), 1),
        Assigned(("b", 1), "z"),
        Closed(("b",)),
        Closed(()),
    ]
    assert normalize(_changes(*'{"a": "xy", "b": [1, "z"]}')) == whole


def test_a_key_read_shows_when_a_delta_ends_before_its_value() -> None:
    assert _changes('{"path": "a", "content"', ': "x"}') == [
        Opened((), OBJ),
        Assigned(("path",), "a"),
        KeyRead(("content",)),
        Assigned(("content",), "x"),
        Closed(()),
    ]
    assert _changes('{"n": 12', "3}")[1:3] == [KeyRead(("n",)), Assigned(("n",), 123)]
    # One character at a time: once per key, however many deltas end before the value.
    got = _changes(*'{"key"  :  [ 1 ] }')
    assert [c for c in got if isinstance(c, KeyRead)] == [KeyRead(("key",))]
    assert got.index(KeyRead(("key",))) == got.index(Opened(("key",), ARR)) - 1


def test_numbers_and_literals_are_set_once_complete() -> None:
    got = _changes('{"n": 12', "3", ", ", '"t": tr', "ue, ", '"f": 1.', "5e2}")
    sets = [c for c in got if isinstance(c, Assigned)]
    assert sets == [Assigned(("n",), 123), Assigned(("t",), True), Assigned(("f",), 150.0)]


def test_half_escapes_and_surrogate_halves_are_never_appended() -> None:
    text = json.dumps({"e": "a😀b\\"}, ensure_ascii=True)
    appended = [c.text for c in _changes(*text) if isinstance(c, Appended)]
    assert "".join(appended) == "a😀b\\"
    assert all(not ("\ud800" <= ch <= "\udfff") for piece in appended for ch in piece)


def test_concatenated_values_say_reset() -> None:
    got = _changes('{"city": "北', '京"}{"ci', 'ty": "上海"}')
    assert got[-6:] == [
        Closed(("city",)),
        Closed(()),
        Reset(1),
        Opened((), OBJ),
        Assigned(("city",), "上海"),
        Closed(()),
    ]
    assert apply_changes(got) == {"city": "上海"}


def test_top_level_scalars_show_once_whole_and_finish_reports_only_what_ended() -> None:
    assert _changes("12") == []
    assert _changes("12", finish=True) == [Assigned((), 12)]
    assert _changes('"ab', 'c"') == [Assigned((), "abc")]
    # A double-encoded object arrives as one value.
    assert _changes('"{\\"a\\": 1}"') == [Assigned((), {"a": 1})]
    assert _changes('{"a": 1}', " 7 ", finish=True) == [
        Opened((), OBJ),
        Assigned(("a",), 1),
        Closed(()),
        Reset(1),
        Assigned((), 7),
    ]


def test_finish_invents_nothing() -> None:
    # Cut off: the string and the object stay open in the changes; the half number and
    # the dangling key get nothing.
    got = _changes('{"a": [1, 2', finish=True)
    assert got == [Opened((), OBJ), Opened(("a",), ARR), Assigned(("a", 0), 1)]
    got = _changes('{"p": "x", "c": "cut', finish=True)
    assert got[-2:] == [Opened(("c",), STR), Appended(("c",), "cut")]
    assert _changes('{"k": ', finish=True) == [Opened((), OBJ), KeyRead(("k",))]


def test_a_key_written_twice_changes_nothing() -> None:
    # Equal values: the second is compared with the first, never reported; the changes are
    # those of the text written once, whatever the chunking (and no KeyRead for the second key).
    once = '{"a": "xy", "b": [1, {"c": 2}]}'
    twice = '{"a": "xy", "b": [1, {"c": 2}], "a": "xy", "b": [1, {"c": 2}]}'
    for chunks in (
        [twice],
        list(twice),
        ['{"a": "xy", "b": [1, {"c": 2}], "a"', ': "x', 'y", "b": [1, {"c"', ": 2}]}"],
    ):
        got = _changes(*chunks)
        assert normalize(got) == normalize(_changes(once))
        assert got.count(KeyRead(("a",))) <= 1
        assert got.count(KeyRead(("b",))) <= 1


def test_a_key_written_twice_with_another_value_stops_the_changes_at_the_first_value() -> None:
    assembler = ArgumentAssembler(changes=True)
    assembler.feed('{"a": "xy", "b": 2, "a": "x')
    assert assembler.status is Status.INCOMPLETE  # "xy" may still come
    assert assembler.take_changes()[-1] == Assigned(("b",), 2)
    assert assembler.preview() == {"a": "xy", "b": 2}
    assembler.feed("z")
    assert assembler.status is Status.UNREPAIRABLE
    assert assembler.take_changes() == ()
    assert assembler.preview() == assembler.preview(live=True) == {"a": "xy", "b": 2}


def test_nested_paths_use_indexes_and_keys() -> None:
    got = _changes('{"edits": [{"old": "a", "new": "b"}, {"old": "c"}]}')
    assert Assigned(("edits", 1, "old"), "c") in got
    assert Closed(("edits", 0)) in got


def test_repairs_are_applied_in_the_changes() -> None:
    got = _changes("```json\n{'a': True, 'b': [1,],}\n```")
    assert apply_changes(got) == {"a": True, "b": [1]}
    assert Assigned(("a",), True) in got


def test_unrepairable_text_stops_the_changes_where_it_failed() -> None:
    assembler = ArgumentAssembler(changes=True)
    assembler.feed('{"a": 1, "b": [2 }')
    assert assembler.status is Status.UNREPAIRABLE
    got = assembler.take_changes()
    assert apply_changes(got) == assembler.preview() == {"a": 1, "b": [2]}


def test_take_changes_needs_changes_on() -> None:
    with pytest.raises(ValueError, match="changes=True"):
        ArgumentAssembler().take_changes()


def test_changes_of_different_kinds_never_compare_equal() -> None:
    assert KeyRead(("a",)) != Closed(("a",))
    assert Closed(("a",)) == Closed(("a",))
    assert len({KeyRead(("a",)), Closed(("a",))}) == 2


@pytest.mark.parametrize(
    "change",
    [
        Opened(("a", 0), ARR),
        KeyRead(("k",)),
        Appended(("s",), "x\n"),
        Assigned((), {"a": [1, None]}),
        Closed(()),
        Reset(2),
    ],
)
def test_to_dict_round_trips_through_json(change: Change) -> None:
    data = json.loads(json.dumps(change.to_dict()))
    assert change_from_dict(data) == change


def test_change_from_dict_refuses_what_is_not_a_change() -> None:
    with pytest.raises(ValueError, match="not a change"):
        change_from_dict({"change": "nope"})


def test_the_builder_refuses_what_is_not_a_change() -> None:
    with pytest.raises(TypeError, match="not a change"):
        ValueBuilder().apply(("a",))  # type: ignore[arg-type]


def test_a_builder_applies_a_long_string_without_rebuilding_it() -> None:
    builder = ValueBuilder()
    builder.apply_all([Opened((), OBJ), Opened(("c",), STR)])
    for _ in range(10_000):
        builder.apply(Appended(("c",), "ab"))
    assert builder._parts is not None
    assert len(builder._parts) == 10_000
    assert builder.value == {"c": "ab" * 10_000}
    snapshot = builder.snapshot()
    builder.apply(Appended(("c",), "!"))
    assert snapshot == {"c": "ab" * 10_000}
    assert builder.value["c"].endswith("!")


# -- lazy previews ---------------------------------------------------------------------------


def test_a_lazy_preview_costs_nothing_until_resolved_and_then_is_its_moment() -> None:
    assembler = ArgumentAssembler(changes=True)
    assembler.feed('{"a": [1, 2], "note": "ab')
    lazy = assembler.lazy_preview()
    assembler.feed('c", "more": ["x", "y')
    assembler.feed('z"], "a": [1, 2]}')
    assembler.finish()
    assert lazy.resolve() == {"a": [1, 2], "note": "ab"}


def test_lazy_previews_survive_a_live_preview_slot_and_repeated_keys() -> None:
    assembler = ArgumentAssembler(changes=True)
    assembler.feed('{"k": {"x": 1}, "l": ["p", "q')
    assembler.preview(live=True)  # puts the open string in the array's slot
    first = assembler.lazy_preview()
    assembler.feed('r"], "k": {"x"')  # the repeated key's value is never shown
    second = assembler.lazy_preview()
    assembler.feed(': 1}, "s": "a')
    assembler.preview(live=True)  # and in the object's slot
    third = assembler.lazy_preview()
    assembler.feed('b"}')
    fourth = assembler.lazy_preview()
    assert first.resolve() == {"k": {"x": 1}, "l": ["p", "q"]}
    assert second.resolve() == {"k": {"x": 1}, "l": ["p", "qr"]}
    assert third.resolve() == {"k": {"x": 1}, "l": ["p", "qr"], "s": "a"}
    assert fourth.resolve() == {"k": {"x": 1}, "l": ["p", "qr"], "s": "ab"}


def test_a_lazy_preview_of_a_string_cut_off_and_finished() -> None:
    assembler = ArgumentAssembler(changes=True)
    assembler.feed('{"a": "x", "b": "cu')
    lazy = assembler.lazy_preview()
    assembler.feed("t off")
    assembler.finish()
    assert lazy.resolve() == {"a": "x", "b": "cu"}


# -- memory ----------------------------------------------------------------------------------


@pytest.mark.parametrize("changes", [False, True])
def test_the_pieces_of_an_open_string_stay_few(changes: bool) -> None:
    assembler = ArgumentAssembler(changes=changes)
    assembler.feed('{"content": "')
    for i in range(200_000):
        assembler.feed("é" if i % 1000 == 0 else "a")
        if changes:
            assembler.take_changes()
    pieces = assembler._str_parts
    assert len(pieces) <= 64 * 3
    assembler.feed('"}')
    content = assembler.finish().value["content"]
    assert len(content) == 200_000
    assert content.count("é") == 200


def test_a_path_read_literally_is_held_then_finished_never_taken_back() -> None:
    # Issue 11's ambiguous-escapes rule: under a path-like key, a string that shows a raw
    # backslash (\U) reads \n and \f literally when it closes. Its preview (and so its
    # changes) holds at the first such escape, and the rest comes when it closes.
    text = '{"path": "C:\\Users\\new\\file.txt", "content": "a\\nb"}'
    _check_everywhere(text)
    got = _changes(*text)
    path = "".join(c.text for c in got if isinstance(c, Appended) and c.path == ("path",))
    assert path == "C:\\Users\\new\\file.txt"
    held = [c for c in got if isinstance(c, Appended) and c.path == ("path",)]
    assert held[-1].text == "\\new\\file.txt"  # all of it at the close, nothing before
    assert apply_changes(got) == {"path": "C:\\Users\\new\\file.txt", "content": "a\nb"}


# -- the changes are enough to write JSON text as it streams (the proxy's use) ----------------


class JsonWriter:
    """The recipe of docs/streams.md ("What the changes promise"): JSON text written from
    the changes alone, only ever appended to."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.open: list[list[Any]] = []  # per open container: [closer, members written]
        self.keyed = False  # the innermost member's key is written already (KeyRead)
        self.values = 1  # top-level values begun (a Reset begins another)

    def _member(self, path: tuple[Any, ...]) -> None:
        if not path:
            return
        frame = self.open[-1]
        if self.keyed:
            self.keyed = False
            return
        if frame[1]:
            self.text.append(",")
        frame[1] += 1
        if frame[0] == "}":
            self.text.append(json.dumps(path[-1]) + ":")

    def apply(self, change: Change) -> None:
        if self.values > 1:
            return  # another top-level value: it would be written as a call of its own
        if isinstance(change, KeyRead):
            self._member(change.path)
            self.keyed = True
        elif isinstance(change, Opened):
            self._member(change.path)
            opener = {OBJ: "{", ARR: "[", STR: '"'}[change.kind]
            self.text.append(opener)
            self.open.append([{OBJ: "}", ARR: "]", STR: '"'}[change.kind], 0])
        elif isinstance(change, Appended):
            self.text.append(json.dumps(change.text)[1:-1])
        elif isinstance(change, Assigned):
            self._member(change.path)
            self.text.append(json.dumps(change.value))
        elif isinstance(change, Closed):
            self.text.append(self.open.pop()[0])
        elif isinstance(change, Reset):
            self.values += 1


@SETTINGS
@given(text=documents() | _mutations(), data=st.data())
def test_json_written_from_the_changes_parses_to_the_finished_value(
    text: str, data: st.DataObject
) -> None:
    chunks = data.draw(split_points(text))
    assembler = ArgumentAssembler(changes=True)
    writer = JsonWriter()
    try:
        for chunk in chunks:
            assembler.feed(chunk)
            for change in assembler.take_changes():
                writer.apply(change)
        result = assembler.finish()
    except UnrepairableError:  # ConcatenatedValuesError included: several values
        return
    for change in assembler.take_changes():
        writer.apply(change)
    if result.structure_synthesized or writer.values > 1:
        return  # cut off (the writer simply stopped), or repeats collapsed into one value
    assert _exact(json.loads("".join(writer.text))) == _exact(result.value)
