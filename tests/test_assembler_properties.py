"""Properties of the assembler, checked with hypothesis over generated JSON and mutations:
differential against json.loads and ijson, chunking invariance, monotonic previews, and the
fuzz property (any input gives a value or the package's own error, never anything else)."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import ijson
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from _support import assert_same_everywhere, monotonic_violation, run, split_points
from streamrepair import ArgumentAssembler, Status, UnrepairableError, repair

# Text without lone surrogates (those are repaired on purpose, unlike json.loads).
_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=20)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT
)
JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_TEXT, inner, max_size=5),
    max_leaves=25,
)
OBJECTS = st.dictionaries(_TEXT, JSON, max_size=6)


@st.composite
def documents(draw: st.DrawFn) -> str:
    value = draw(OBJECTS | JSON)
    return json.dumps(
        value,
        ensure_ascii=draw(st.booleans()),
        indent=draw(st.sampled_from([None, 2])),
        separators=draw(st.sampled_from([None, (",", ":"), (", ", ": ")])),
    )


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(text=documents(), data=st.data())
def test_valid_json_equals_json_loads_under_any_chunking(text: str, data: st.DataObject) -> None:
    assume(not (isinstance(json.loads(text), str) and json.loads(text).lstrip()[:1] == "{"))
    chunks = data.draw(split_points(text))
    outcome = run(chunks)
    assert outcome.error is None
    assert outcome.result is not None
    assert _same(outcome.result.value, json.loads(text))
    assert outcome.result.repairs == ()
    assert outcome.result.structure_synthesized is False
    assert outcome.statuses[len(text)] is Status.COMPLETE
    # the one-shot form agrees with the machine
    assert repair(text) == outcome.result


@SETTINGS
@given(text=documents())
def test_valid_json_same_status_preview_and_result_for_every_chunking(text: str) -> None:
    assert_same_everywhere(text)


def _basic_events(value: Any) -> list[tuple[str, Any]]:
    """The event stream ijson.basic_parse gives for ``value``, built without recursion."""
    events: list[tuple[str, Any]] = []
    pending: list[Any] = [("value", value)]
    while pending:
        kind, item = pending.pop()
        if kind != "value":
            events.append((kind, item))
        elif isinstance(item, dict):
            events.append(("start_map", None))
            pending.append(("end_map", None))
            for key, child in reversed(list(item.items())):
                pending.append(("value", child))
                pending.append(("map_key", key))
        elif isinstance(item, list):
            events.append(("start_array", None))
            pending.append(("end_array", None))
            pending.extend(("value", child) for child in reversed(item))
        elif item is None:
            events.append(("null", None))
        elif isinstance(item, bool):
            events.append(("boolean", item))
        elif isinstance(item, str):
            events.append(("string", item))
        else:
            events.append(("number", item))
    return events


_IJSON = ijson.get_backend("python")


@SETTINGS
@given(value=OBJECTS, data=st.data())
def test_ijson_events_agree_with_the_finished_value(
    value: dict[str, Any], data: st.DataObject
) -> None:
    text = json.dumps(value)
    outcome = run(data.draw(split_points(text)))
    assert outcome.result is not None
    expected = [
        (event, float(item) if event == "number" and not isinstance(item, int) else item)
        for event, item in _IJSON.basic_parse(text.encode(), use_float=True)
    ]
    got = [
        (event, float(item) if event == "number" and isinstance(item, float) else item)
        for event, item in _basic_events(outcome.result.value)
    ]
    assert got == expected


@SETTINGS
@given(text=documents(), data=st.data())
def test_previews_are_monotonic_and_end_at_the_value(text: str, data: st.DataObject) -> None:
    chunks = data.draw(split_points(text)) if data.draw(st.booleans()) else list(text)
    assembler = ArgumentAssembler()
    before: Any = None
    for chunk in chunks:
        assembler.feed(chunk)
        now = copy.deepcopy(assembler.preview())  # the preview is live: snapshot it
        problem = monotonic_violation(before, now)
        assert problem is None, (text, problem)
        before = now
    result = assembler.finish()
    if isinstance(result.value, (dict, list)):
        # A top-level scalar is only shown once it is known to be whole (after finish);
        # a container's last preview is already the value.
        assert _same(before, result.value)
    assert _same(assembler.preview(), result.value)


def _mutations() -> st.SearchStrategy[str]:
    """Valid documents broken in the ways models break them."""

    @st.composite
    def mutate(draw: st.DrawFn) -> str:
        text = draw(documents())
        kind = draw(
            st.sampled_from(
                [
                    "truncate",
                    "insert",
                    "delete",
                    "trailing_comma",
                    "python",
                    "quotes",
                    "fence",
                    "repeat",
                ]
            )
        )
        if kind == "truncate":
            return text[: draw(st.integers(0, len(text)))]
        if kind == "insert":
            at = draw(st.integers(0, len(text)))
            junk = draw(
                st.sampled_from([",", "}", "]", "{", '"', "'", "\\", "\n", "\x01", " x ", ",,"])
            )
            return text[:at] + junk + text[at:]
        if kind == "delete" and text:
            at = draw(st.integers(0, len(text) - 1))
            return text[:at] + text[at + 1 :]
        if kind == "trailing_comma":
            return text.replace("}", ",}").replace("]", ",]")
        if kind == "python":
            return text.replace("true", "True").replace("null", "None")
        if kind == "quotes":
            return text.replace('"', "'")
        if kind == "repeat":  # a key written again, with its value or another
            value = json.loads(text)
            if not isinstance(value, dict) or not value:
                return text
            key = draw(st.sampled_from(sorted(value)))
            again = value[key] if draw(st.booleans()) else draw(JSON)
            member = json.dumps(key) + ": " + json.dumps(again)
            return text.rstrip()[:-1].rstrip() + ", " + member + "}"
        return "```json\n" + text + "\n```"

    return mutate()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_mutations())
def test_malformed_text_is_chunking_invariant(text: str) -> None:
    assert_same_everywhere(text)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=60) | _mutations())
def test_fuzz_any_input_gives_a_value_or_our_error(text: str) -> None:
    try:
        result = repair(text)
    except UnrepairableError as exc:
        assert 0 <= exc.offset <= len(text)
        assert exc.line >= 1
        assert exc.column >= 1
        return
    json.dumps(result.value)  # always serializable
    for rec in result.repairs:
        assert 0 <= rec.offset <= len(text)
    if not any(r.kind.synthesizes_structure for r in result.repairs):
        assert not result.structure_synthesized


@SETTINGS
@given(text=documents(), data=st.data())
def test_status_never_reports_complete_for_a_strict_prefix(text: str, data: st.DataObject) -> None:
    value = json.loads(text)
    assume(isinstance(value, (dict, list)))
    cut = data.draw(st.integers(0, len(text.rstrip()) - 1))
    assembler = ArgumentAssembler()
    assembler.feed(text[:cut])
    assert assembler.status is not Status.COMPLETE
    if assembler.status is Status.INCOMPLETE and text[:cut].strip():
        result = assembler.finish()
        assert result.structure_synthesized


def test_floats_and_big_ints_match_json_loads() -> None:
    for text in ["[1e300, -0.0, 12345678901234567890123, 1E-7, 0.1, 1e-400]", '{"n": -0}']:
        got = repair(text).value
        want = json.loads(text)
        assert repr(got) == repr(want)
    # past a float's range: refused like Infinity, by both forms (json.loads gives inf)
    assert math.isinf(json.loads("[1e400, 2]")[0])
    for text in ["[1e400, 2]", "[-1E+309]", "[1" + "0" * 400 + ".5]"]:
        with pytest.raises(UnrepairableError, match="out of range"):
            repair(text)
        assert assert_same_everywhere(text).error is not None
