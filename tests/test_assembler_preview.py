"""preview(): the jsonriver-style monotonicity promises, checked one character at a time."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

import pytest

from _support import monotonic_violation
from streamrepair import ArgumentAssembler


def _char_previews(text: str) -> list[Any]:
    assembler = ArgumentAssembler()
    previews = []
    for ch in text:
        assembler.feed(ch)
        previews.append(copy.deepcopy(assembler.preview()))  # previews are live
    return previews


def _strings(value: Any) -> list[str]:
    found, pending = [], [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return found


def test_numbers_and_literals_appear_only_once_complete() -> None:
    seen_n, seen_t = set(), set()
    for preview in _char_previews('{"n": 123, "t": true, "x": [-1.5e3, null]}'):
        if isinstance(preview, dict):
            if "n" in preview:
                seen_n.add(preview["n"])
            if "t" in preview:
                seen_t.add(preview["t"])
            for item in preview.get("x", []):
                assert item in (-1500.0, None)
    assert seen_n == {123}
    assert seen_t == {True}


def test_half_escapes_and_half_surrogate_pairs_are_never_shown() -> None:
    text = json.dumps({"e": 'a😀b\u00e9\n"q\\'}, ensure_ascii=True)
    previews = _char_previews(text)
    for before, after in itertools.pairwise(previews):
        assert monotonic_violation(before, after) is None
    for preview in previews:
        for s in _strings(preview):
            assert "\\" not in s or s.endswith('"q\\')  # only the real escaped backslash
            assert not any("\ud800" <= ch <= "\udfff" for ch in s)
            assert "\ufffd" not in s
    assert previews[-1] == {"e": 'a😀b\u00e9\n"q\\'}


def test_keys_appear_only_with_a_value_of_their_final_type() -> None:
    text = '{"path": "a.txt", "lines": [1, 2], "opts": {"x": false}, "n": 7}'
    expected = json.loads(text)
    for preview in _char_previews(text):
        if preview is None:
            continue
        for key, value in preview.items():
            assert type(value) is type(expected[key]), (key, value)


@pytest.mark.parametrize(
    ("text", "preview"),
    [
        ('{"a": "hel', {"a": "hel"}),
        ('{"a": [1, {"b": ', {"a": [1, {}]}),
        ('{"ke', {}),
        ('{"key": ', {}),
        ('{"a": 12', {}),
        ("{'a': 'it'", {"a": "it"}),
        ('{"a": "x\\u00', {"a": "x"}),
        ('```json\n{"a": [', {"a": []}),
    ],
)
def test_preview_of_a_cut_text(text: str, preview: Any) -> None:
    for chunks in ([text], list(text)):
        assembler = ArgumentAssembler()
        for chunk in chunks:
            assembler.feed(chunk)
        assert assembler.preview() == preview


def test_preview_follows_the_value_being_read_when_values_are_concatenated() -> None:
    assembler = ArgumentAssembler()
    assembler.feed('{}{"city": "Par')
    assert assembler.preview() == {"city": "Par"}


def test_the_preview_is_the_live_value_and_becomes_the_result() -> None:
    assembler = ArgumentAssembler()
    assembler.feed('{"items": [1, 2], "note": "ab')
    live = assembler.preview(live=True)
    assert live == {"items": [1, 2], "note": "ab"}
    snapshot = assembler.preview()
    assembler.feed('c", "more": ["x", "y')
    assert assembler.preview(live=True) is live  # updated in place, nothing copied
    assert snapshot == {"items": [1, 2], "note": "ab"}  # a snapshot never changes
    assert live == {"items": [1, 2], "note": "abc", "more": ["x", "y"]}
    assembler.feed('z"]}')
    result = assembler.finish()
    assert result.value is live
    assert live == {"items": [1, 2], "note": "abc", "more": ["x", "yz"]}


@pytest.mark.parametrize("live_first", [True, False])
def test_previews_of_both_kinds_between_deltas_do_not_change_the_result(live_first: bool) -> None:
    text = '{"a": ["p", "qr", {"s": "tu"}], "b": "v"}'
    assembler = ArgumentAssembler()
    for ch in text:
        assembler.feed(ch)
        snapshot = assembler.preview(live=live_first)
        other = assembler.preview(live=not live_first)
        assert snapshot == other
    assert assembler.finish().value == json.loads(text)


def test_snapshots_do_not_leak_caller_mutations_of_open_containers() -> None:
    assembler = ArgumentAssembler()
    assembler.feed('{"a": [1, 2], "b": {"c": "x')
    snapshot = assembler.preview()
    snapshot["injected"] = True
    snapshot["b"]["c"] = "changed"
    assembler.feed('yz"}}')
    assert assembler.finish().value == {"a": [1, 2], "b": {"c": "xyz"}}


@pytest.mark.parametrize(
    "text",
    [
        '{"path": "C:\\temp\\Users\\x", "n": 1}',  # read literally when it closes
        '{"file_path": "C:\\new\\file.txt"}',  # valid JSON: a newline and a form feed
        '{"paths": ["a\\tb\\U", "x"]}',
        '{"content": "a\\tb\\U"}',  # not a path: JSON's reading, shown as it streams
        '["\ud83d',
    ],
)
def test_previews_stay_monotonic_when_a_reading_is_decided_at_the_close(text: str) -> None:
    # Under a path-like key a string's \b \f \n \r \t may be read literally once it closes,
    # so its preview holds at its first such escape until then: every preview is a prefix
    # of what the string finally is, and no half surrogate pair is ever shown.
    for chunks in ([text], list(text), [text[:13], text[13:20], text[20:]]):
        assembler = ArgumentAssembler()
        before: Any = None
        for chunk in chunks:
            assembler.feed(chunk)
            now = copy.deepcopy(assembler.preview())
            assert monotonic_violation(before, now) is None, (text, before, now)
            assert not any("\ud800" <= ch <= "\udfff" for s in _strings(now) for ch in s)
            before = now
        final = assembler.finish().value
        assert monotonic_violation(before, final) is None, (text, before, final)


def test_a_path_preview_holds_at_its_first_control_escape() -> None:
    assembler = ArgumentAssembler()
    assembler.feed('{"path": "C:\\temp\\Us')
    assert assembler.preview() == {"path": "C:"}
    assembler.feed('ers"}')
    assert assembler.preview() == {"path": "C:\\temp\\Users"}
    other = ArgumentAssembler()
    other.feed('{"note": "C:\\temp\\Us')
    assert other.preview() == {"note": "C:\temp\\Us"}
