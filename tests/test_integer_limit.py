"""Long integers (issue 11): the verdict on an integer never depends on the process's int
conversion limit (``sys.set_int_max_str_digits``). An integer of at most
``MAX_INTEGER_DIGITS`` digits is read, a longer one refused with a message naming the limit,
under the default setting, with the limit lifted (0) and with the lowest one Python allows;
``repair()`` and the assembler agree, whole, one character at a time and at random splits."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _support import chunkings, run, split_points
from streamrepair import (
    MAX_INTEGER_DIGITS,
    ArgumentAssembler,
    Status,
    UnrepairableError,
    repair,
)
from streamrepair.syntax import MAX_INTEGER_DIGITS as SYNTAX_MAX_INTEGER_DIGITS

_get_limit = getattr(sys, "get_int_max_str_digits", None)
_set_limit = getattr(sys, "set_int_max_str_digits", None)
needs_limit = pytest.mark.skipif(_set_limit is None, reason="Python before 3.10.7 has no limit")

# The default, lifted, the lowest Python accepts, and one above ours.
LIMITS = [4300, 0, 640, 10_000]

DIGITS = "9" * MAX_INTEGER_DIGITS
LONGER = DIGITS + "9"

ACCEPTED = [
    ('{"n": ' + DIGITS + "}", {"n": int(DIGITS)}),
    ("[-" + DIGITS + ", 1]", [-int(DIGITS), 1]),
    (DIGITS, int(DIGITS)),  # at the top level
    ('{"n": 1' + "0" * (MAX_INTEGER_DIGITS - 1) + ".5e-4000}", None),  # a float, 1e299
    ('{"n": 0.' + "1" * 6000 + "}", {"n": float("0." + "1" * 6000)}),  # a long fraction
]

REFUSED = [
    # (text, offset of the error: the character that ends the integer, or the end)
    ('{"n": ' + LONGER + "}", 6 + len(LONGER)),
    ("[-" + LONGER + ", 1]", 2 + len(LONGER)),
    ("[1, " + "9" * 6000 + "]", 4 + 6000),  # past MAX_SCALAR_CHARS too, in a container
    (LONGER, len(LONGER)),  # at the top level: the end of input ends it
    ('{"n": ' + LONGER + " }", 6 + len(LONGER)),
]


@pytest.fixture(params=LIMITS, ids=[f"int_limit={n}" for n in LIMITS])
def int_limit(request: pytest.FixtureRequest) -> Iterator[int]:
    if _set_limit is None or _get_limit is None:
        pytest.skip("Python before 3.10.7 has no int conversion limit")
    before = _get_limit()
    _set_limit(request.param)
    try:
        yield request.param
    finally:
        _set_limit(before)


def _value(text: str, expected: Any) -> Any:
    if expected is not None:
        return expected
    # json reads this float without int(); the limit does not apply to it.
    return json.loads(text, parse_float=lambda s: float(Decimal(s)))


def test_the_limit_is_exported_where_the_other_limits_are() -> None:
    assert MAX_INTEGER_DIGITS == SYNTAX_MAX_INTEGER_DIGITS == 4300


@needs_limit
@pytest.mark.parametrize(("text", "expected"), ACCEPTED, ids=range(len(ACCEPTED)))
def test_an_integer_within_the_limit_is_read_whatever_the_setting(
    int_limit: int, text: str, expected: Any
) -> None:
    value = _value(text, expected)
    result = repair(text)
    assert (result.value, result.repairs, result.structure_synthesized) == (value, (), False)
    for chunks in chunkings(text):  # whole, one character at a time, random splits
        outcome = run(chunks)
        assert outcome.error is None, (int_limit, outcome.error)
        assert outcome.result == result
        assert outcome.statuses[len(text)] is Status.COMPLETE
        if text[0] in "{[":  # a top-level number in progress has no preview yet
            assert outcome.previews[-1] == value
    assert _get_limit is not None
    assert _get_limit() == int_limit  # the setting is untouched


@needs_limit
@pytest.mark.parametrize(("text", "offset"), REFUSED, ids=range(len(REFUSED)))
def test_a_longer_integer_is_refused_whatever_the_setting(
    int_limit: int, text: str, offset: int
) -> None:
    with pytest.raises(UnrepairableError) as info:
        repair(text)
    error = info.value
    assert f"integer longer than {MAX_INTEGER_DIGITS} digits" in error.reason
    assert "out of range" not in error.reason
    assert (error.offset, error.line, error.column) == (offset, 1, offset + 1)
    for chunks in chunkings(text):
        outcome = run(chunks)
        assert outcome.error == (
            UnrepairableError,
            error.reason,
            error.offset,
            error.line,
            error.column,
        )
        if offset < len(text):  # the character that ends it is in the text: refused there
            last = max(outcome.statuses)
            assert last > offset
            assert outcome.statuses[last] is Status.UNREPAIRABLE


@needs_limit
def test_until_it_ends_a_long_integer_may_still_become_a_float(int_limit: int) -> None:
    assembler = ArgumentAssembler()
    assembler.feed('{"n": ' + LONGER)
    assert assembler.status is Status.INCOMPLETE  # ".5e-9000" could still follow
    assembler.feed(".5e-9000}")
    assert assembler.finish().value == {"n": 0.0}


@needs_limit
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), accepted=st.booleans(), limit=st.sampled_from(LIMITS))
def test_random_splits(data: st.DataObject, accepted: bool, limit: int) -> None:
    assert _set_limit is not None
    assert _get_limit is not None
    text = '{"a": [1, ' + (DIGITS if accepted else LONGER) + '], "b": 2}'
    chunks = data.draw(split_points(text))
    before = _get_limit()
    _set_limit(limit)
    try:
        outcome = run(chunks)
    finally:
        _set_limit(before)
    if accepted:
        assert outcome.result is not None
        assert outcome.result.value == {"a": [1, int(DIGITS)], "b": 2}
    else:
        assert outcome.error is not None
        assert outcome.error[1].startswith(f"integer longer than {MAX_INTEGER_DIGITS} digits")
        assert outcome.error[2] == text.index("]")
