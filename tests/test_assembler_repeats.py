"""A key written twice in one object (issue 21): equal values are kept once and recorded,
different values are refused at the first character that decides it, with the error at
the second key. The second value is never stored, shown in a preview or reported as a
change; repair() agrees with the machine, whatever json.loads would have kept."""

from __future__ import annotations

import copy
import itertools
import json
import pickle
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _support import assert_same_everywhere, chunkings, monotonic_violation, run, split_points
from streamrepair import ArgumentAssembler, RepairKind, Status, UnrepairableError, repair
from streamrepair.syntax import ValueBuilder, normalize
from streamrepair.syntax._repeats import float_reachable, text_continues, token_continues
from test_assembler_properties import JSON, OBJECTS

# (text, the value kept): the second value equals the first, however it is spelled.
EQUAL = [
    ('{"x": 1.5, "x": 1.50}', {"x": 1.5}),
    ('{"x": 1.5, "x": 15e-1}', {"x": 1.5}),
    ('{"x": 1.5, "x": 0.15E+1}', {"x": 1.5}),
    ('{"x": 0, "x": -0}', {"x": 0}),
    ('{"x": 0.0, "x": -0.0}', {"x": 0.0}),
    ('{"x": 12345678901234567890, "x": 12345678901234567890}', {"x": 12345678901234567890}),
    ('{"x": true, "x": True}', {"x": True}),
    ('{"x": null, "x": None, "x": NULL}', {"x": None}),
    ('{"x": "ab", "x": "a\\u0062"}', {"x": "ab"}),
    ('{"x": "\\u00e9", "x": "é"}', {"x": "é"}),
    ('{"x": "😀", "x": "\\ud83d\\ude00"}', {"x": "😀"}),
    ('{"x": "a/b", "x": "a\\/b"}', {"x": "a/b"}),
    ("{'x': 'it's', 'x': 'it\\'s'}", {"x": "it's"}),
    ('{"x": "both", "x": both}', {"x": "both"}),
    (
        '{"x": [1, {"a": [true, null]}], "x": [1, {"a": [true, null,],},]}',
        {"x": [1, {"a": [True, None]}]},
    ),
    ('{"x": {}, "x": {}, "y": [], "y": []}', {"x": {}, "y": []}),
    ('{"x": {"a": 1}, "x": {"a": 1, "a": 1}}', {"x": {"a": 1}}),  # twice in there too
    ('{"x": {"a": 1, "b": 2}, "x": {"b": 2, "a": 1}}', {"x": {"a": 1, "b": 2}}),  # any order
    ('{"ab": 1, "a\\u0062": 1}', {"ab": 1}),  # the same key, spelled otherwise
    ("{ab: 1, 'ab': 1, \"ab\": 1}", {"ab": 1}),
    ('{"o": {"k": "v", "k": "v"}, "k": 2}', {"o": {"k": "v"}, "k": 2}),
    # read literally twice under a path-like key (the ambiguous-escapes rule)
    ('{"path": "C:\\Users\\new", "path": "C:\\Users\\new"}', {"path": "C:\\Users\\new"}),
]


@pytest.mark.parametrize(("text", "value"), EQUAL)
def test_equal_values_keep_one_and_say_so(text: str, value: Any) -> None:
    whole = assert_same_everywhere(text)
    assert whole.result is not None, whole.error
    result = whole.result
    assert json.dumps(result.value) == json.dumps(value)
    assert not result.structure_synthesized
    repeats = [r for r in result.repairs if r.kind is RepairKind.DUPLICATE_KEY]
    assert len(repeats) == 1
    assert not RepairKind.DUPLICATE_KEY.synthesizes_structure
    assert "written twice" in repeats[0].description
    assert repair(text) == result
    assert whole.statuses[len(text)] is Status.COMPLETE


def test_each_repeat_is_counted_on_one_record() -> None:
    (rec,) = repair('{"x": null, "x": None, "y": 1, "x": NULL}').repairs[:1]
    assert (rec.kind, rec.count) == (RepairKind.DUPLICATE_KEY, 2)


def test_the_record_points_at_the_second_key() -> None:
    text = '{"path": "a.txt",\n "path": "a.txt"}'
    (rec,) = repair(text).repairs
    assert rec.kind is RepairKind.DUPLICATE_KEY
    assert rec.offset == text.rindex('"path"')
    assert "'path'" in rec.description
    assert RepairKind.DUPLICATE_KEY.guidance == "write each key once in an object"


# (text before the deciding character, the deciding character and what may follow it, the
# second key): after the first part some continuation can still end equal; after the
# deciding character none can.
DIFFERENT = [
    ('{"x": 1.5, "x": ', "-7}", "x"),
    ('{"x": 1.5, "x": ', "2}", "x"),
    ('{"x": 1.5, "x": 1.4', ",}", "x"),  # 1.4999999999999999999 reads as 1.5
    ('{"x": 1, "x": 1', ".0}", "x"),  # 1 and 1.0 are different values
    ('{"x": 1, "x": 1', "0}", "x"),
    ('{"x": 10, "x": 1', "}", "x"),
    ('{"x": true, "x": ', "false}", "x"),
    ('{"x": true, "x": TRUE', "x}", "x"),  # a bare word, not the literal
    ('{"x": 1, "x": ', "true}", "x"),
    ('{"x": "ab", "x": "a', 'c"}', "x"),
    ('{"x": "ab", "x": "ab', 'c"}', "x"),
    ('{"x": "ab", "x": "a', '"}', "x"),
    ('{"x": "ab", "x": ', "[]}", "x"),
    ('{"x": "ab", "x": ', "1}", "x"),
    ('{"x": "ab", "x": a', "c}", "x"),  # a bare word may spell it
    ('{"x": "a b", "x": ', "a}", "x"),  # ... but not this one
    ('{"x": "é", "x": "\\u00e', '8"}', "x"),
    ('{"x": "é", "x": "\\u00', 'f0"}', "x"),
    ('{"x": "é", "x": "\\', 'n"}', "x"),
    ('{"x": "😀", "x": "\\ud83d\\ude0', '1"}', "x"),
    ('{"x": "😀", "x": "\\ud83', 'e\\ude00"}', "x"),
    ('{"x": "😀", "x": "\\ud83d', 'x"}', "x"),  # the high half alone: U+FFFD
    ("{'x': 'it', 'x': 'it'", "s'}", "x"),  # the quote was content: it's
    ('{"x": [1, 2], "x": [1, ', "3]}", "x"),
    ('{"x": [1, 2], "x": [1, 2, ', "3]}", "x"),
    ('{"x": [1, 2], "x": [1, 2,', "3]}", "x"),  # a trailing comma is no third item
    ('{"x": [1, 2], "x": [1', "]}", "x"),
    ('{"x": [1, 2], "x": ', "{}}", "x"),
    ('{"x": {"a": 1}, "x": {"b', '": 1}}', "x"),  # a key is compared once it is whole
    ('{"x": {"a": 1}, "x": {"a": 1, "a": ', "2}}", "x"),
    ('{"x": {"a": 1}, "x": {', "}}", "x"),
    ('{"o": {"a": 1, "a": ', "2}}", "a"),
    ("{a: 1, a: ", "2}", "a"),
    ('{"x": 1,\n  "y": 2,\n  "x": ', "3}", "x"),
]


@pytest.mark.parametrize(("head", "tail", "key"), DIFFERENT)
def test_different_values_are_refused_at_the_deciding_character(
    head: str, tail: str, key: str
) -> None:
    text = head + tail
    # one character at a time: viable up to the head, refused at the next character
    assembler = ArgumentAssembler()
    for i, c in enumerate(text):
        status = assembler.feed(c)
        if i < len(head):
            assert status is not Status.UNREPAIRABLE, (text, i)
        else:
            assert status is Status.UNREPAIRABLE, (text, i)
            break
    error = assembler.error
    assert error is not None
    # the error is at the second key, whichever character decided
    second = max(head.rfind(f'"{key}"'), head.rfind(f"'{key}'"), head.rfind(f"{key}:"))
    assert error.offset == second
    assert (error.line, error.column) == (
        head.count("\n", 0, second) + 1,
        second - (head.rfind("\n", 0, second) + 1) + 1,
    )
    assert error.reason == f"key {key!r} written twice with different values"
    assert error.expected == "each key written once"
    assert f"line {error.line} column {error.column}" in str(error)
    # the same whole, at random splits and in one shot
    whole = assert_same_everywhere(text)
    assert whole.error == (UnrepairableError, error.reason, second, error.line, error.column)
    with pytest.raises(UnrepairableError) as raised:
        repair(text)
    assert (raised.value.offset, raised.value.reason) == (second, error.reason)


def test_json_loads_would_keep_the_last_value_silently() -> None:
    # the reason for all this: {"x": 1.5, "x": -7} is {"x": -7} to json.loads
    assert json.loads('{"x": 1.5, "x": -7}') == {"x": -7}
    with pytest.raises(UnrepairableError, match="written twice"):
        repair('{"x": 1.5, "x": -7}')


def test_a_refused_repeat_leaves_the_first_value_and_nothing_else_changes() -> None:
    assembler = ArgumentAssembler(changes=True)
    assembler.feed('{"a": [1, {"b": "c"}], "z": 0, "a": [1, {"b": "c')
    before = assembler.preview()
    kept = copy.deepcopy(before)
    assert before == {"a": [1, {"b": "c"}], "z": 0}  # the repeat is not shown
    builder = ValueBuilder()
    builder.apply_all(assembler.take_changes())
    assert builder.value == before
    assembler.feed('d"}]}')
    assert assembler.status is Status.UNREPAIRABLE
    error = assembler.error
    assert error is not None
    assert before == kept  # an earlier snapshot is never touched
    assert assembler.preview() == assembler.preview(live=True) == kept
    assert assembler.take_changes() == ()
    assert assembler.lazy_preview().resolve() == kept
    with pytest.raises(UnrepairableError) as again:
        assembler.feed("}")
    assert again.value is error
    with pytest.raises(UnrepairableError) as finished:
        assembler.finish()
    assert finished.value is error
    copied = pickle.loads(pickle.dumps(error))
    assert (copied.offset, copied.line, copied.column, copied.reason, copied.expected) == (
        error.offset,
        error.line,
        error.column,
        error.reason,
        error.expected,
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"x": "ab", "x": "a',
        '{"x": [1, 2], "x": [1, ',
        '{"x": 1.5, "x": 1.',
        '{"x": {"a": 1}, "x": {"a": 1',
        '{"x": 1, "x"',
        "{'x': 1, 'x'",
        '{"x": 1, "x": \\',
    ],
)
def test_a_repeat_cut_off_is_dropped_and_the_first_value_stays(text: str) -> None:
    whole = assert_same_everywhere(text)
    assert whole.result is not None
    first = {"x": 1.5} if "1.5" in text else whole.result.value
    assert whole.result.value == first
    assert "x" in whole.result.value
    assert whole.result.structure_synthesized
    assert RepairKind.DANGLING_DROPPED in {r.kind for r in whole.result.repairs}
    assert RepairKind.DUPLICATE_KEY not in {r.kind for r in whole.result.repairs}
    assert whole.statuses[len(text)] is Status.INCOMPLETE


def test_a_repeated_key_across_deltas_is_placed_where_it_began() -> None:
    text = '{"name": "a",\n"na' + 'me": "b"}'
    for chunks in (['{"name": "a",\n"na', 'me": "b"}'], ['{"name": "a",\n', '"name', '": "b"}']):
        outcome = run(chunks)
        assert outcome.error is not None
        assert outcome.error[2:] == (text.rindex('"name"'), 2, 1)
    # a quote whose role is known only after a line break: the key ends before it
    held = "{'ab': 1,\n'ab'\n: 2}"
    outcome = run(["{'ab': 1,\n'ab'", "\n", ": 2}"])
    assert outcome.error is not None
    assert outcome.error[2:] == (held.rindex("'ab'"), 2, 1)
    bare = "{name: 'a',\n  na" + "me: 'b'}"
    outcome = run(["{name: 'a',\n  na", "me: 'b'}"])
    assert outcome.error is not None
    assert outcome.error[2:] == (bare.rindex("name"), 2, 3)


def test_a_high_surrogate_before_a_quote_that_was_content_stays_in_place() -> None:
    # found on the way: the replacement of a lone high half came after the quote
    assert repair("['\\ud83d'x']").value == ["\ufffd'x"]
    assert repair('{"x": "\\ud83d", "x": "\\ufffd"}').value == {"x": "\ufffd"}


# -- the comparisons, on their own ---------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "x", "reachable"),
    [
        ("1.4999999999999999999", 1.5, True),  # rounds to 1.5
        ("1.4", 1.5, True),
        ("2", 1.5, False),
        ("15e-1", 1.5, True),
        ("15e-2", 1.5, False),
        ("15e", 1.5, True),
        ("15e+", 1.5, False),
        ("-", 0.0, True),
        ("5e-3", 0.0, True),  # 5e-3000 underflows to 0.0
        ("5e3", 0.0, False),
        ("0e3", 0.0, True),
        ("-1", 1.0, False),
        ("1", 1.7976931348623157e308, True),
        ("2", 1.7976931348623157e308, False),
        ("4", 5e-324, True),  # 4e-324 rounds to the least subnormal
        ("2", 5e-324, True),  # 2.5e-324 is past half of it
        ("1", 5e-324, False),  # 1.9e-324 rounds to 0, 1e-323 to twice it
        ("1x", 1.0, False),
    ],
)
def test_float_reachable(prefix: str, x: float, reachable: bool) -> None:
    assert float_reachable(prefix, x) is reachable


_FLOATS = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [0.0, -0.0, 5e-324, 1.5, 0.1, 1e22, 2.2250738585072014e-308, 1.7976931348623157e308]
)


def _spellings(x: float) -> list[str]:
    """Ways to write ``x`` as a JSON number that reads as a float."""
    r = repr(x)
    spelled = [r, r + "0" if "e" not in r else r, f"{x:.17e}", f"{x:.25e}", r.upper()]
    mantissa, exponent = f"{x:.17e}".split("e")
    spelled.append(mantissa.replace(".", "") + "e" + str(int(exponent) - 17))
    return [t for t in spelled if float(t) == x and ("." in t or "e" in t.lower())]


@settings(max_examples=300, deadline=None)
@given(x=_FLOATS, data=st.data())
def test_every_prefix_of_a_spelling_is_reachable_and_dead_ends_are_dead(
    x: float, data: st.DataObject
) -> None:
    for spelled in _spellings(x):
        for i in range(1, len(spelled) + 1):
            assert float_reachable(spelled[:i], x), (spelled[:i], x)
    # a prefix it calls unreachable never reads as x, whatever follows
    prefix = data.draw(
        st.from_regex(r"-?[0-9]{1,4}(\.[0-9]{0,3})?([eE][+-]?[0-9]{0,3})?", fullmatch=True)
    )
    if not float_reachable(prefix, x):
        for tail in ("", "0", "5", ".5", "e0", "e-1", "e1", "1e-400", "9" * 30, ".0e0"):
            try:
                value = float(prefix + tail)
            except ValueError:
                continue
            assert value != x or not any(c in prefix + tail for c in ".eE"), (prefix, tail)


def test_token_and_text_comparisons() -> None:
    assert [token_continues(t, 0) for t in ("-", "-0", "0", "-1", "1")] == [1, 1, 1, 0, 0]
    assert [token_continues(t, None) for t in ("NU", "no", "Non", "nulL", "n0")] == [1, 1, 1, 1, 0]
    assert [token_continues("bo", s) for s in ("both", "bo th", "true")] == [1, 0, 0]
    assert not token_continues("tr", False)
    assert not token_continues("1", [1])
    assert [text_continues("ab", at) for at in (0, 1, 2, 3)] == [1, 1, 1, 0]
    got = [text_continues("a\u00e9", 1, hex_digits=h) for h in ("00e", "00E9", "01")]
    assert got == [1, 1, 0]
    assert text_continues("a\\u12", 1, hex_digits="12")  # not a \u escape after all
    assert text_continues("\ufffd", 0, hex_digits="d8")  # a high half left alone
    assert not text_continues("\ufffd\ufffd", 0, high=0xD83D, hex_digits="dc")  # it would join
    assert [text_continues(s, 2, held="'") for s in ("it", "it's", "itx")] == [1, 1, 0]


# -- properties over generated objects ------------------------------------------------------


@st.composite
def repeated(draw: st.DrawFn) -> tuple[str, str, bool]:
    """(an object's text, the same with one of its keys written again, whether the value
    written again equals the first)."""
    value = draw(OBJECTS.filter(bool))
    key = draw(st.sampled_from(sorted(value)))
    same = draw(st.booleans())
    again = value[key] if same else draw(JSON)
    equal = json.dumps(again, sort_keys=True) == json.dumps(value[key], sort_keys=True)
    once = json.dumps(value, ensure_ascii=draw(st.booleans()))
    member = json.dumps(key) + ": " + json.dumps(again, ensure_ascii=draw(st.booleans()))
    twice = once[:-1] + ", " + member + "}"
    return once, twice, equal and _strictly_equal(again, value[key])


def _strictly_equal(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) and type(a) is type(b)


SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(case=repeated(), data=st.data())
def test_a_repeat_is_kept_once_or_refused_under_any_chunking(
    case: tuple[str, str, bool], data: st.DataObject
) -> None:
    once, twice, equal = case
    whole = assert_same_everywhere(twice)
    split = run(data.draw(split_points(twice)))
    assert split.outcome() == whole.outcome()
    if whole.result is not None:
        # equal, as far as JSON's strict equality goes (1.0 and 1 differ; json.dumps
        # writes both sides here, so -0.0 and 0.0 may meet)
        assert json.dumps(whole.result.value) == json.dumps(json.loads(once))
        assert RepairKind.DUPLICATE_KEY in {r.kind for r in whole.result.repairs}
    else:
        assert not equal
        assert whole.error is not None
        assert whole.error[2] == len(once) + 1  # at the second key
    try:
        one_shot: Any = repair(twice)
    except UnrepairableError as exc:
        one_shot = (type(exc), exc.reason, exc.offset, exc.line, exc.column)
        assert whole.error == one_shot
    else:
        assert whole.result == one_shot


def _changes(chunks: list[str]) -> tuple[list[Any], list[Any], UnrepairableError | None]:
    assembler = ArgumentAssembler(changes=True)
    builder = ValueBuilder()
    changes: list[Any] = []
    previews: list[Any] = []
    for chunk in chunks:
        if assembler.status is Status.UNREPAIRABLE:
            break
        assembler.feed(chunk)
        delta = assembler.take_changes()
        changes.extend(delta)
        builder.apply_all(delta)
        preview = assembler.preview()
        assert json.dumps(builder.snapshot()) == json.dumps(preview), chunks
        previews.append(copy.deepcopy(preview))
    return changes, previews, assembler.error


@SETTINGS
@given(case=repeated(), data=st.data())
def test_the_changes_and_previews_never_show_the_second_value(
    case: tuple[str, str, bool], data: st.DataObject
) -> None:
    once, twice, _ = case
    reference = normalize(_changes([once])[0])
    for chunks in [*chunkings(twice), data.draw(split_points(twice))]:
        changes, previews, error = _changes(chunks)
        for before, after in itertools.pairwise(previews):
            assert monotonic_violation(before, after) is None, chunks
        if error is None:
            # the changes of the text written once, whatever the chunking
            assert normalize(changes) == reference, chunks
        else:
            # the changes stop inside the first occurrence's object, with its value
            got = normalize(changes)
            assert got == reference[: len(got)], chunks
            assert previews[-1] == json.loads(once), chunks


# -- repair() on valid JSON with repeated keys: both of its fast checks ---------------------


def _many(member: str) -> str:
    items = [json.dumps({"i": i, "s": f"a:{i}", "t": 'q\\"x'}) for i in range(60)]
    items[41] = "{" + member + "}"
    return "[" + ", ".join(items) + "]"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ('{"a": 1, "a": 1}', True),
        ('{"a": 1, "a": 2}', False),
        ('{"content": "x\\ny", "path": "p", "path": "p"}', True),
        ('{"content": "x\\ny", "path": "p", "path": "q"}', False),
        (_many('"k": [1], "k": [1]'), True),  # more objects than the pair check takes
        (_many('"k": [1], "k": [2]'), False),
        (_many('"k\\"": 1, "k\\u0022": 1'), True),
        (_many('"k:": ":", "k:": ":"'), True),
        (_many('"k": "v", "K": "v"'), None),  # no repeat: json.loads' value
    ],
)
def test_repair_of_valid_json_agrees_with_the_machine_on_repeats(
    text: str, kept: bool | None
) -> None:
    json.loads(text)  # valid JSON: json.loads would take the last of each
    assembler = ArgumentAssembler()
    assembler.feed(text)
    if kept is False:
        with pytest.raises(UnrepairableError) as raised:
            repair(text)
        assert assembler.error is not None
        assert raised.value.offset == assembler.error.offset
        return
    result = repair(text)
    assert result == assembler.finish()
    assert result.value == json.loads(text)
    assert (RepairKind.DUPLICATE_KEY in {r.kind for r in result.repairs}) is bool(kept)
