"""Changes a consumer cannot follow: ValueBuilder and IjsonAdapter answer them with
ChangeOrderError (never an assertion or an IndexError), apply nothing of the offending
change, and keep what came before it."""

from __future__ import annotations

import copy
import pickle
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamrepair import ArgumentAssembler, ChangeOrderError, StreamRepairError
from streamrepair.syntax import (
    Appended,
    Assigned,
    Change,
    Closed,
    IjsonAdapter,
    KeyRead,
    Opened,
    ValueBuilder,
    ValueKind,
)
from test_assembler_properties import documents


def _changes(text: str, cuts: list[int] | None = None) -> list[Change]:
    assembler = ArgumentAssembler(changes=True)
    out: list[Change] = []
    last = 0
    for cut in [*(cuts or []), len(text)]:
        assembler.feed(text[last:cut])
        out.extend(assembler.take_changes())
        last = cut
    return out


OBJECT = Opened((), ValueKind.OBJECT)
ARRAY = Opened((), ValueKind.ARRAY)

BAD: list[tuple[str, list[Change], str]] = [
    ("append first", [Appended(("a",), "x")], "text appended while no string is open"),
    ("close first", [Closed(())], "a value closed while nothing is open"),
    ("member with nothing open", [Assigned(("a",), 1)], "a value at a path 1 deep"),
    ("second root inside the first", [OBJECT, ARRAY], "a value at a path 0 deep"),
    (
        "value while a string is open",
        [OBJECT, Opened(("a",), ValueKind.STRING), Assigned(("b",), 1)],
        "a new value while a string is open",
    ),
    ("top-level string opened", [Opened((), ValueKind.STRING)], "a string opened at the top"),
    ("too deep", [OBJECT, Assigned(("a", "b"), 1)], "a value at a path 2 deep"),
]
# Only the builder knows the keys and indexes it fills.
BUILDER_ONLY: list[tuple[str, list[Change], str]] = [
    ("array item skipped", [ARRAY, Assigned((1,), "x")], "array item 1 where item 0"),
    ("index as an object key", [OBJECT, Assigned((0,), "x")], "an object member with the key 0"),
]


@pytest.mark.parametrize(("name", "changes", "reason"), BAD + BUILDER_ONLY)
def test_value_builder_refuses_what_cannot_follow(
    name: str, changes: list[Change], reason: str
) -> None:
    good, bad = changes[:-1], changes[-1]
    builder = ValueBuilder()
    builder.apply_all(good)
    before = copy.deepcopy(builder.snapshot())
    with pytest.raises(ChangeOrderError) as caught:
        builder.apply(bad)
    assert caught.value.reason.startswith(reason)
    assert caught.value.change is bad
    assert builder.snapshot() == before  # nothing of it applied

    fresh = ValueBuilder()
    with pytest.raises(ChangeOrderError) as caught:
        fresh.apply_all(changes)
    assert caught.value.index == len(changes) - 1
    assert isinstance(caught.value, StreamRepairError)
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(("name", "changes", "reason"), BAD)
def test_ijson_adapter_refuses_what_cannot_follow(
    name: str, changes: list[Change], reason: str
) -> None:
    adapter = IjsonAdapter()
    expected_events = IjsonAdapter().feed(changes[:-1])
    with pytest.raises(ChangeOrderError) as caught:
        adapter.feed(changes)
    error = caught.value
    assert error.reason.startswith(reason)
    assert error.index == len(changes) - 1
    assert error.change is changes[-1]
    assert list(error.events) == expected_events  # what came before is not lost


def test_a_refused_change_leaves_consumers_where_they_were() -> None:
    text = '{"path": "a.md", "edits": [{"old": "x", "new": "y"}]}'
    changes = _changes(text, list(range(1, len(text))))
    middle = len(changes) // 2
    reference = IjsonAdapter().feed(changes)
    adapter, builder = IjsonAdapter(), ValueBuilder()
    events = adapter.feed(changes[:middle])
    builder.apply_all(changes[:middle])
    stray = Opened((), ValueKind.OBJECT)  # another call's first change, mixed in
    with pytest.raises(ChangeOrderError):
        adapter.feed([stray])
    with pytest.raises(ChangeOrderError):
        builder.apply(stray)
    events += adapter.feed(changes[middle:])
    builder.apply_all(changes[middle:])
    assert events == reference
    assert builder.value == {"path": "a.md", "edits": [{"old": "x", "new": "y"}]}


def test_the_error_pickles_and_copies_with_its_attributes() -> None:
    with pytest.raises(ChangeOrderError) as caught:
        IjsonAdapter().feed([OBJECT, Assigned(("a",), 1), Appended(("b",), "x")])
    error = caught.value
    for twin in (pickle.loads(pickle.dumps(error)), copy.deepcopy(error), copy.copy(error)):
        assert type(twin) is ChangeOrderError
        assert (twin.reason, twin.index, twin.change, twin.events, str(twin)) == (
            error.reason,
            error.index,
            error.change,
            error.events,
            str(error),
        )


def test_the_changes_passed_are_not_mutated() -> None:
    changes = [OBJECT, Opened(("a",), ValueKind.STRING), Appended(("a",), "x"), Closed(())]
    before = list(changes)
    with pytest.raises(ChangeOrderError):
        IjsonAdapter().feed([*changes, Appended(("a",), "late")])
    assert changes == before


@settings(max_examples=300, deadline=None)
@given(text=documents(), seed=st.integers(0, 2**32 - 1))
def test_dropped_or_swapped_changes_give_the_error_or_a_value_never_a_crash(
    text: str, seed: int
) -> None:
    changes = _changes(text, list(range(1, len(text), 3)))
    rng = random.Random(seed)
    damaged = list(changes)
    if len(damaged) >= 2 and rng.random() < 0.5:
        i = rng.randrange(len(damaged) - 1)
        damaged[i], damaged[i + 1] = damaged[i + 1], damaged[i]
    elif damaged:
        del damaged[rng.randrange(len(damaged))]
    damaged = [c for c in damaged if type(c) is not KeyRead] if rng.random() < 0.2 else damaged
    for consumer in (ValueBuilder().apply_all, IjsonAdapter().feed, IjsonAdapter(basic=True).feed):
        try:
            consumer(damaged)
        except ChangeOrderError as error:
            assert error.reason
            assert 0 <= error.index < len(damaged)
        except Exception as error:  # anything else is a crash
            pytest.fail(f"{type(error).__name__}: {error} on {damaged!r}")


@settings(max_examples=200, deadline=None)
@given(text=documents())
def test_the_changes_of_one_value_are_never_refused(text: str) -> None:
    changes = _changes(text, list(range(1, len(text), 2)))
    ValueBuilder().apply_all(changes)
    IjsonAdapter().feed(changes)
    IjsonAdapter(basic=True).feed(changes)
