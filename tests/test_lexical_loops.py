"""The character loops of ``syntax/_lexical.py`` give exactly what the patterns they stand
for give (the compiled build reads with the loops, the pure build with the patterns): each
loop on generated text made of the characters that decide it, and the whole machine, run
from the sources once with the loops and once with the patterns, on generated JSON,
malformed JSON and any text, at random chunkings. This runs without a compiled build
(tests/test_builds_agree.py compares the builds themselves)."""

from __future__ import annotations

import re
from importlib import import_module

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from _builds_support import cut, record
from streamrepair._build import pure_copy
from streamrepair.syntax import _lexical as lx
from test_assembler_properties import _mutations, documents

# The characters the rules turn on, and a few they do not.
ALPHABET = '0123456789-+.eE"\\ \t\n\r,:]}[{truefalsnxyz_\x01\x1f\ud800\udfffé'
texts = st.text(alphabet=ALPHABET, max_size=24)

NUMBER_LANE_PART = re.compile(
    r"-?(?>0|[1-9][0-9]{0,99}+)(?>\.[0-9]{1,100}+)?(?>[eE][+-]?+[0-9]{1,2}+)?"
)
SCALAR = re.compile(lx.SCALAR)
VALUE = re.compile(f"(?:{lx.SCALAR}|{lx.PLAIN_STRING})(?=[ \t\n\r]*[,\\]}}])")


def spans(text: str) -> list[tuple[int, int]]:
    """Every (pos, n) with pos <= n <= len(text): each place a loop may be asked about."""
    return [(pos, n) for n in range(len(text) + 1) for pos in range(n + 1)]


def end_or(match: re.Match[str] | None, default: int) -> int:
    return default if match is None else match.end()


def check_numbers(sample: str, places: list[tuple[int, int]]) -> None:
    for pos, n in places:
        assert lx.number_end(sample, pos, n, False) == end_or(
            lx.NUMBER.match(sample, pos, n), -1
        ), (sample, pos, n)
        assert lx.number_end(sample, pos, n, True) == end_or(
            NUMBER_LANE_PART.match(sample, pos, n), -1
        ), (sample, pos, n)
        assert lx.number_prefix_end(sample, pos, n) == end_or(
            lx.NUMBER_PREFIX_LONGEST.match(sample, pos, n), pos
        ), (sample, pos, n)
        if pos < n:
            assert lx.scalar_end(sample, pos, n) == end_or(SCALAR.match(sample, pos, n), -1), (
                sample,
                pos,
                n,
            )
    whole = len(sample)
    assert lx.grows_by_digits(sample) == (lx.GROWS_BY_DIGITS.fullmatch(sample) is not None)
    full = lx.number_end(sample, 0, whole, True) == whole
    assert full == (lx.NUMBER_LANE.fullmatch(sample) is not None), sample


@settings(max_examples=150)
@given(texts)
@example("1e123,")
@example("-0.5E+12}")
@example("1.e5,")
@example("00,")
def test_number_loops_match_the_patterns(text: str) -> None:
    check_numbers(text, spans(text))


def test_number_loops_keep_the_lanes_bounds() -> None:
    # The lanes read at most 100 digits before and after the point, 2 in the exponent.
    for sample in ("1" * 101, "1" * 100, "1." + "5" * 101, "-0." + "0" * 100, "1e12", "1e123"):
        for tail in ("", ",", "]", "5"):
            text = sample + tail
            n = len(text)
            check_numbers(text, [(0, n), (1, n), (0, n - 1), (2, n)])


scalars = st.from_regex(
    r"\A(?:-?(?:0|[1-9][0-9]{0,30})(?:\.[0-9]{1,10})?(?:[eE][+-]?[0-9]{1,2})?|true|false|null)\Z"
)


@settings(max_examples=300)
@given(scalars)
@example("-0")
@example("123456789012345678")
@example("1234567890123456789")
@example("-" + "9" * 20)
def test_scalar_values_match(token: str) -> None:
    expected = lx.scalar(token)
    for got in (lx.scalar_value(token), lx.item_value(f"[{token}]", 1, len(token) + 1)):
        assert type(got) is type(expected)
        assert got == expected
    assert lx.item_value(f'["{token}"]', 1, len(token) + 3) == lx.lane_value(f'"{token}"')


@settings(max_examples=150)
@given(texts)
def test_run_loops_match_the_patterns(text: str) -> None:
    for pos, n in spans(text):
        assert lx.ws_end(text, pos, n) == end_or(lx.WS.match(text, pos, n), pos)
        assert lx.plain_end(text, pos, n, 34) == end_or(lx.DQ_RUN.match(text, pos, n), pos)
        assert lx.plain_end(text, pos, n, 39) == end_or(lx.SQ_RUN.match(text, pos, n), pos)
        assert lx.token_end(text, pos, n) == end_or(lx.TOKEN_RUN.match(text, pos, n), pos)
        assert lx.value_end(text, pos, n) == end_or(VALUE.match(text, pos, n), -1), (text, pos)


member_texts = st.lists(
    st.sampled_from(['"', "key", "a b", "\\n", ":", " ", "\n", "1", "-2.5e3", "true", "nul"])
    | st.sampled_from([",", "}", "]", "'", "x", "\x01", "00", "1.", '""']),
    max_size=12,
).map("".join)


@settings(max_examples=250)
@given(member_texts)
@example('"key": 1,')
@example('"key" : "v" }')
@example('"key":')
@example('"key"  x')
def test_member_loop_matches_the_pattern(text: str) -> None:
    for pos, n in spans(text):
        if pos >= n or text[pos] != '"':
            continue
        m = lx.KEY_MEMBER.match(text, pos, n)
        if m is None:
            expected = (-1, -1, -1)
        else:
            value_start = m.start(3) if m.group(3) is not None else m.end()
            expected = (
                m.end(1),
                value_start if m.group(2) is not None else -1,
                m.end(3) if m.group(3) is not None else -1,
            )
        assert lx.member_spans(text, pos, n) == expected, (text, pos, n)


@settings(max_examples=250)
@given(member_texts)
@example(", 12")
@example(",")
@example(', "a" ]')
@example(", -")
@example(", 0123,")
def test_item_loop_matches_the_pattern(text: str) -> None:
    text = "," + text
    for pos, n in spans(text):
        m = lx.ARRAY_LANE.match(text, pos, n)
        if m is None:
            expected = (-1, -1)
        elif m.group(3) is not None:
            expected = (m.start(3), -1)
        else:
            group = 1 if m.group(1) is not None else 2
            start = m.start(group) - (group == 1)
            expected = (start, m.end(group) + (group == 1))
        assert lx.item_spans(text, pos, n) == expected, (text, pos, n)


def test_the_flag_says_how_the_module_runs() -> None:
    loaded_from = lx.__file__ or ""
    assert (not loaded_from.endswith(".py")) == lx.COMPILED


# The package run from its sources twice: with the patterns, as the pure build reads, and
# with the loops, as the compiled build reads.
PATTERNS = pure_copy()
LOOPS = pure_copy("streamrepair_loops")
for module in ("syntax._lexical", "syntax.assembler"):
    import_module(f"streamrepair_loops.{module}").COMPILED = True

MACHINE = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
POINTS = st.lists(st.integers(0, 400), max_size=12)


def assert_loops_agree(text: str, points: list[int]) -> None:
    for chunks in (cut(text, points), list(text), [text] if text else []):
        with_loops = record(LOOPS, chunks, changes=True, max_size=None)
        with_patterns = record(PATTERNS, chunks, changes=True, max_size=None)
        assert with_loops == with_patterns, chunks


@MACHINE
@given(text=documents(), points=POINTS)
def test_the_machine_reads_valid_json_the_same_with_the_loops(text: str, points: list[int]) -> None:
    assert_loops_agree(text, points)


@MACHINE
@given(text=_mutations(), points=POINTS)
def test_the_machine_reads_malformed_json_the_same_with_the_loops(
    text: str, points: list[int]
) -> None:
    assert_loops_agree(text, points)


@MACHINE
@given(
    text=st.lists(member_texts | st.sampled_from(["{", "[", '{"a": ', "[1, ", "'b'"])).map("".join),
    points=POINTS,
)
def test_the_machine_reads_any_text_the_same_with_the_loops(text: str, points: list[int]) -> None:
    assert_loops_agree(text, points)


string_bodies = st.lists(
    st.sampled_from(["a b", "\\n", "\\t", '\\"', "\\\\", "\\/", "\\x", "\x01", "é", "\\u00e9"])
    | st.sampled_from(["\ud83d", "\ude00", "\n", "'", "\\", '"']),
    max_size=10,
).map("".join)


@MACHINE
@given(
    body=string_bodies,
    key=st.sampled_from(["content", "path", "k"]),
    quote=st.sampled_from(['"', "'"]),
    points=POINTS,
)
def test_the_machine_reads_strings_the_same_with_the_loops(
    body: str, key: str, quote: str, points: list[int]
) -> None:
    assert_loops_agree(f'{{"{key}": {quote}{body}{quote}, "n": 1}}', points)


def test_the_copies_read_as_they_say() -> None:
    assert import_module("streamrepair_loops.syntax.assembler").COMPILED
    assert not import_module("streamrepair_pure.syntax.assembler").COMPILED
