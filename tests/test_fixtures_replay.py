"""Every fixture in fixtures/sse replays to its golden events, whatever the chunking.

Each ``<name>.sse`` (or ``.ndjson``, or ``.eventstream``: AWS binary frames) has ``<name>.events.jsonl``: the events, one JSON
object per line, as ``StreamEvent.to_dict()`` gives them. ``<name>.tools.json``, when
present, is passed as ``tools=``; ``<name>.options.json``, when present, holds other
``ToolCallStream`` options (``text_tool_calls``). Set ``STREAMREPAIR_UPDATE_GOLDEN=1`` to rewrite the
golden files after a deliberate change (then read the diff).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamrepair import ToolCallStream, iter_events

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sse"
CASES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".sse", ".ndjson", ".eventstream"))
UPDATE = os.environ.get("STREAMREPAIR_UPDATE_GOLDEN") == "1"


def _stem(path: Path) -> str:
    return path.name.split(".")[0]


def options(path: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    tools = path.with_name(_stem(path) + ".tools.json")
    if tools.exists():
        out["tools"] = json.loads(tools.read_text(encoding="utf-8"))
    extra = path.with_name(_stem(path) + ".options.json")
    if extra.exists():
        out.update(json.loads(extra.read_text(encoding="utf-8")))
    return out


def replay(path: Path, pieces: list[bytes]) -> list[dict[str, Any]]:
    core = ToolCallStream(**options(path))
    events = []
    for piece in pieces:
        events.extend(core.feed(piece))
    events.extend(core.finish())
    # Through JSON, so the comparison is with what the golden file can hold.
    return [json.loads(json.dumps(e.to_dict(), ensure_ascii=False)) for e in events]


def golden(path: Path) -> list[dict[str, Any]]:
    target = path.with_name(_stem(path) + ".events.jsonl")
    if UPDATE:
        events = replay(path, [path.read_bytes()])
        # As `streamrepair replay --json` writes them: U+2028/U+2029 escaped.
        lines = [
            json.dumps(e, ensure_ascii=False)
            .replace("\u2028", "\\u2028")
            .replace("\u2029", "\\u2029")
            for e in events
        ]
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    text = target.read_text(encoding="utf-8")
    # Not splitlines(): U+2028 inside a JSON string is not a line end.
    return [json.loads(line) for line in text.split("\n") if line]


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c for c in cuts if 0 < c < len(data)})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_whole_matches_golden(path: Path) -> None:
    assert replay(path, [path.read_bytes()]) == golden(path)


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_byte_by_byte_matches_golden(path: Path) -> None:
    data = path.read_bytes()
    assert replay(path, [data[i : i + 1] for i in range(len(data))]) == golden(path)


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(CASES), st.lists(st.integers(min_value=1, max_value=20_000), max_size=40))
def test_random_chunkings_match_golden(path: Path, cuts: list[int]) -> None:
    data = path.read_bytes()
    assert replay(path, split(data, [c % (len(data) + 1) for c in cuts])) == golden(path)


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_path_driver_matches_golden(path: Path) -> None:
    events = [e.to_dict() for e in iter_events(path, **options(path))]
    assert json.loads(json.dumps(events, ensure_ascii=False)) == golden(path)


def test_every_fixture_has_golden_and_readme_entry() -> None:
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    for path in CASES:
        assert path.with_name(_stem(path) + ".events.jsonl").exists(), path.name
        assert f"`{path.name}`" in readme, f"{path.name} is not described in the README"
    stems = {_stem(p) for p in CASES}
    for extra in FIXTURES.glob("*.json*"):
        assert _stem(extra) in stems, f"{extra.name} belongs to no fixture"


def test_golden_files_hold_the_end_of_every_stream() -> None:
    # A golden that lost its tail would still "match"; each must end with one Done.
    for path in CASES:
        events = golden(path)
        assert [e["type"] for e in events].count("done") == 1, path.name
        assert events[-1]["type"] == "done", path.name
