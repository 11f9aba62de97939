"""The status contract, checked exhaustively on every short string of a small alphabet:

* ``COMPLETE``: ``finish()`` returns one value with ``structure_synthesized=False``;
* ``CONCATENATED``: ``finish()`` raises ``ConcatenatedValuesError``, ``finish_values()``
  returns two or more values, none synthesized;
* ``INCOMPLETE``: ``finish()`` synthesizes or raises, and some continuation of the text is
  ``COMPLETE`` or ``CONCATENATED`` (a witness is searched for);
* ``UNREPAIRABLE``: as soon as no continuation can be valid: the error is at the last
  character of the first such prefix, with its line and column;
* after ``finish()`` raises, the status is ``UNREPAIRABLE`` and ``error`` is what it raised;
* the status is the same fed whole and one character at a time, and ``repair()`` agrees.

Strings with an UNREPAIRABLE proper prefix are not visited (the verdict is sticky, which
test_assembler_errors checks). The default run covers every string up to length 4;
``STREAMREPAIR_EXHAUSTIVE=1`` also runs length 5 (about 35 seconds; marker ``exhaustive``),
which CI (``.ci/run``) sets, so CI always runs it; locally it is opt-in.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _support import split_points
from streamrepair import (
    ArgumentAssembler,
    ConcatenatedValuesError,
    Repaired,
    RepairKind,
    Status,
    UnrepairableError,
    repair,
)
from test_assembler_properties import _mutations

# Structure, quotes, escapes, numbers, the start of literals and words, fences.
ALPHABET = "{}[]\"':, \\1-enu`"
assert len(ALPHABET) == 16
# A witness search appends characters greedily, closing what is open first: each order
# is tried in turn (one closes single-quoted strings first, one double-quoted ones), for
# at most WITNESS_STEPS characters. An unquoted UUID needs the hex digits and dashes.
WITNESS_ORDERS = ("\"'}]`:1eulnr0-", "'\"]}`:1eulnr0-", "`]}\"':0-1eulnr")
WITNESS_STEPS = 48
REPEATS = 6  # closers may repeat as deep as the text nests; quotes go round
# What ends a cut string, key, escape, token or fence before finish()'s closers.
WITNESS_ENDINGS = ("", '"', "'", "'\"", "1", "e", "l", '0000"', 'n"', "n'", "```", "``", "`")


def _fed(text: str) -> ArgumentAssembler:
    assembler = ArgumentAssembler()
    assembler.feed(text)
    return assembler


def _viable_strings(max_len: int) -> Iterator[str]:
    """Every string over ALPHABET up to ``max_len`` whose proper prefixes are not
    UNREPAIRABLE, shortest first."""
    level = [""]
    for _ in range(max_len):
        following = []
        for prefix in level:
            for c in ALPHABET:
                text = prefix + c
                yield text
                if _fed(text).status is not Status.UNREPAIRABLE:
                    following.append(text)
        level = following


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _has_witness(text: str, seen: dict[str, bool]) -> bool:
    """Some continuation of ``text`` is COMPLETE or CONCATENATED.

    First from what ``finish()`` did: the closers it appended, after the pieces that end
    a cut string, key or token. Then greedily: append, at each step, the first character
    of an order that keeps the text viable (or finishes it), never the same character
    more than REPEATS times running. Every text on a path that finished is remembered."""
    if seen.get(text):
        return True
    closers = ""
    try:
        for value in _fed(text).finish_values():
            for rec in value.repairs:
                if rec.kind is RepairKind.MISSING_CLOSERS:
                    closers = rec.description.split("'")[1]
    except UnrepairableError:
        pass
    for ending in WITNESS_ENDINGS:
        for key in ("", ":1"):
            if _finished(text + ending + key + closers):
                seen[text] = True
                return True
    for order in WITNESS_ORDERS:
        path = [text]
        current = text
        for _ in range(WITNESS_STEPS):
            chosen = None
            for c in order:
                if len(current) - len(text) >= REPEATS and current.endswith(c * REPEATS):
                    continue
                candidate = current + c
                if _finished(candidate) or seen.get(candidate):
                    seen.update(dict.fromkeys(path, True))
                    return True
                if chosen is None and _fed(candidate).status is Status.INCOMPLETE:
                    chosen = candidate
            if chosen is None:
                break
            current = chosen
            path.append(current)
    return False


def _finished(text: str) -> bool:
    return _fed(text).status in (Status.COMPLETE, Status.CONCATENATED)


def _check(text: str, seen: dict[str, bool]) -> Status:
    whole = _fed(text)
    status = whole.status
    if status in (Status.COMPLETE, Status.CONCATENATED):
        seen[text] = True
    by_char = ArgumentAssembler()
    for c in text:
        by_char.feed(c)
    assert by_char.status is status, (text, by_char.status, status)
    if status is Status.UNREPAIRABLE:
        error = whole.error
        assert error is not None
        # as soon as: the first impossible character is the last one (its prefixes were
        # viable), and the line and column describe that same character
        assert error.offset == len(text) - 1, (text, error)
        assert (error.line, error.column) == _position(text, error.offset), (text, error)
        assert by_char.error is not None
        assert (by_char.error.offset, by_char.error.line, by_char.error.column) == (
            error.offset,
            error.line,
            error.column,
        )
        with pytest.raises(UnrepairableError) as raised:
            whole.finish()
        assert raised.value is error
        with pytest.raises(UnrepairableError):
            repair(text)
        return status
    try:
        result: Repaired | None = whole.finish()
        raised_error: UnrepairableError | None = None
    except UnrepairableError as exc:
        result, raised_error = None, exc
    if status is Status.COMPLETE:
        assert result is not None, (text, raised_error)
        assert not result.structure_synthesized, text
        json.dumps(result.value, allow_nan=False)
        assert repair(text) == result, text
        assert whole.status is Status.COMPLETE
    elif status is Status.CONCATENATED:
        assert isinstance(raised_error, ConcatenatedValuesError), (text, raised_error)
        values = whole.finish_values()
        assert len(values) >= 2
        assert values == raised_error.values
        assert not any(v.structure_synthesized for v in values), text
        with pytest.raises(ConcatenatedValuesError):
            repair(text)
    else:
        assert status is Status.INCOMPLETE
        if result is not None:
            assert result.structure_synthesized, text
        elif isinstance(raised_error, ConcatenatedValuesError):
            assert any(v.structure_synthesized for v in raised_error.values), text
        assert _has_witness(text, seen), f"no continuation completes {text!r}"
    if raised_error is not None:
        # after finish() raises, the status says so and error holds what was raised
        assert whole.status is Status.UNREPAIRABLE, text
        assert whole.error is raised_error, text
    return status


def _run(max_len: int) -> dict[Status, int]:
    seen: dict[str, bool] = {}
    counts = dict.fromkeys(Status, 0)
    for text in _viable_strings(max_len):
        counts[_check(text, seen)] += 1
    return counts


def test_status_contract_on_every_string_up_to_length_4() -> None:
    counts = _run(4)
    # every verdict is reached, so the contract is tested on each
    assert all(counts.values()), counts


@pytest.mark.exhaustive
@pytest.mark.skipif(
    os.environ.get("STREAMREPAIR_EXHAUSTIVE") != "1",
    reason="opt-in locally (about 35 s): STREAMREPAIR_EXHAUSTIVE=1; CI (.ci/run) sets it",
)
def test_status_contract_on_every_string_up_to_length_5() -> None:
    counts = _run(5)
    assert all(counts.values()), counts


@pytest.mark.parametrize(
    ("text", "status"),
    [
        # the audit's contradictions
        ("1}1", Status.COMPLETE),
        ('{"a":1}}{"a":1}', Status.COMPLETE),
        ('{"a":1}{"b":2}', Status.CONCATENATED),
        ('{"path": "a.md"}}', Status.COMPLETE),
        ("```json\n{}\n`", Status.INCOMPLETE),
        ("```json\n{}\n```", Status.COMPLETE),
        ('{}{}{"a":1}', Status.COMPLETE),
        ('{"a":1}{"a":1}{"b', Status.INCOMPLETE),
        ('{"a":1} \'{"a":1}\'', Status.COMPLETE),  # the double-encoded repeat collapses
        ('{"a":1} \'{"a":2}\'', Status.CONCATENATED),
        ("tru", Status.INCOMPLETE),
        ("1e400", Status.UNREPAIRABLE),
    ],
)
def test_status_agrees_with_finish(text: str, status: Status) -> None:
    assert _check(text, {}) is status


def test_after_finish_raises_the_status_is_unrepairable() -> None:
    assembler = ArgumentAssembler()
    assert assembler.feed('{"a":1}{"b":2}') is Status.CONCATENATED
    assert assembler.error is None
    with pytest.raises(ConcatenatedValuesError) as first:
        assembler.finish()
    assert assembler.status is Status.UNREPAIRABLE
    assert assembler.error is first.value
    with pytest.raises(ConcatenatedValuesError) as again:
        assembler.finish()
    assert again.value is first.value
    # the stream layer still splits them
    assert [v.value for v in assembler.finish_values()] == [{"a": 1}, {"b": 2}]
    empty = ArgumentAssembler()
    with pytest.raises(UnrepairableError) as nothing:
        empty.finish()
    assert empty.status is Status.UNREPAIRABLE
    assert empty.error is nothing.value


def _verdict_agrees(assembler: ArgumentAssembler, text: str) -> None:
    """What ``status`` says of ``assembler`` (fed ``text``) is what ``finish()`` does."""
    status = assembler.status
    try:
        result = assembler.finish()
    except ConcatenatedValuesError as exc:
        assert status in (Status.CONCATENATED, Status.INCOMPLETE), (text, status)
        synthesized = any(v.structure_synthesized for v in exc.values)
        assert synthesized is (status is Status.INCOMPLETE), (text, status)
        raised: UnrepairableError | None = exc
    except UnrepairableError as exc:
        assert status in (Status.INCOMPLETE, Status.UNREPAIRABLE), (text, status)
        raised = exc
    else:
        assert status in (Status.COMPLETE, Status.INCOMPLETE), (text, status)
        assert result.structure_synthesized is (status is Status.INCOMPLETE), (text, status)
        json.dumps(result.value, allow_nan=False)
        assert assembler.status is status
        return
    # after finish() raises, the status says so and error holds what was raised
    assert assembler.status is Status.UNREPAIRABLE, text
    assert assembler.error is raised, text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_mutations(), data=st.data())
def test_after_every_delta_the_status_agrees_with_finish(text: str, data: st.DataObject) -> None:
    # The audit's stream check: after every delta of a random chunking of a malformed
    # argument, finishing now does what the status said (on a twin fed the same prefix).
    chunks = data.draw(split_points(text))
    fed = ""
    streaming = ArgumentAssembler()
    for chunk in chunks:
        if streaming.status is Status.UNREPAIRABLE:
            break
        streaming.feed(chunk)
        fed += chunk
        twin = _fed(fed)
        assert twin.status is streaming.status, (fed, twin.status, streaming.status)
        _verdict_agrees(twin, fed)
    _verdict_agrees(streaming, fed)
