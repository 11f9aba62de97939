"""Replaying a recording by path or as a whole body reads and emits a block at a time;
RecordingReader gives the same bytes whatever the blocks; a long argument is kept as a
few large pieces (the memory figures themselves are in benchmarks/bench_memory.py)."""

from __future__ import annotations

import collections
import gc
import io
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamrepair import ToolCallDelta, ToolCallReady, ToolCallStream, iter_events
from streamrepair.stream import drivers
from streamrepair.stream.recordings import SNIFF_BYTES, RecordingReader, load_recording
from streamrepair.stream.tracker import ToolCallTracker

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sse"


def write_recording(size: int, delta: int = 16) -> bytes:
    """An OpenAI stream of one write_file call whose arguments are ``size`` characters."""
    content = ('def f(x):\n    return x  # "q" \\\\ é\n' * (size // 30 + 1))[:size]
    arguments = json.dumps({"path": "big.py", "content": content})
    lines = [
        {"choices": [{"index": 0, "delta": {"role": "assistant"}}]},
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [{"index": 0, "id": "c1", "function": {"name": "write_file"}}]
                    },
                }
            ]
        },
    ]
    for i in range(0, len(arguments), delta):
        piece = arguments[i : i + delta]
        tool = {"index": 0, "function": {"arguments": piece}}
        lines.append({"choices": [{"index": 0, "delta": {"tool_calls": [tool]}}]})
    lines.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    body = "".join(f"data: {json.dumps(line)}\n\n" for line in lines) + "data: [DONE]\n\n"
    return body.encode()


class CountingFile(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.read_so_far = 0

    def read(self, size: int | None = -1) -> bytes:
        block = super().read(size)
        self.read_so_far += len(block)
        return block


def test_replay_by_path_emits_events_before_the_file_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_recording(200_000)
    path = tmp_path / "big.sse"
    path.write_bytes(data)
    opened: list[CountingFile] = []

    def spy_open(file: Any, mode: str = "r") -> CountingFile:
        assert mode == "rb"
        handle = CountingFile(Path(file).read_bytes())
        opened.append(handle)
        return handle

    monkeypatch.setattr(drivers, "open", spy_open, raising=False)
    read_at_first_delta = None
    ready = None
    for event in iter_events(path):
        if isinstance(event, ToolCallDelta) and read_at_first_delta is None:
            read_at_first_delta = opened[0].read_so_far
        if isinstance(event, ToolCallReady):
            ready = event
    assert read_at_first_delta is not None
    assert read_at_first_delta <= drivers.READ_CHUNK_BYTES < len(data) / 4
    assert ready is not None
    assert ready.arguments["path"] == "big.py"
    assert opened[0].closed


def test_a_whole_body_is_fed_a_block_at_a_time() -> None:
    data = write_recording(200_000)
    feeds: list[int] = []

    class Counting(ToolCallStream):
        def feed(self, data: Any) -> list[Any]:
            feeds.append(len(data))
            return super().feed(data)

    events = iter_events(data, core=Counting())
    first = next(e for e in events if isinstance(e, ToolCallDelta))
    assert first.call_id == "c1"
    assert feeds == [drivers.READ_CHUNK_BYTES]
    rest = list(events)
    assert sum(feeds) == len(data)
    assert isinstance(rest[-2], ToolCallReady)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_async_replay_by_path_reads_a_block_at_a_time(
    tmp_path: Path, anyio_backend: str
) -> None:
    data = write_recording(200_000)
    path = tmp_path / "big.sse"
    path.write_bytes(data)
    events = drivers.aiter_events(path)
    async with events:
        async for event in events:
            if isinstance(event, ToolCallDelta):
                handle = events._resource  # the driver's open file
                assert handle is not None
                position = await anyio.to_thread.run_sync(handle.wrapped.tell)  # type: ignore[attr-defined]
                assert position <= drivers.READ_CHUNK_BYTES
                break
    assert events.core.done is not None  # left early: aborted, file closed


TXTAR = (
    b"A recorded exchange.\n\n-- request --\n{}\n-- streaming --\n"
    + (FIXTURES / "repairs-needed.sse").read_bytes()
    + b"-- non-streaming --\n{}\n"
)


@settings(max_examples=100, deadline=None)
@given(cuts=st.lists(st.integers(1, len(TXTAR) - 1), max_size=30), named=st.booleans())
def test_recording_reader_gives_the_same_bytes_for_any_blocks(cuts: list[int], named: bool) -> None:
    points = sorted(set(cuts))
    blocks = [TXTAR[a:b] for a, b in zip([0, *points], [*points, len(TXTAR)], strict=True)]
    reader = RecordingReader(name="a.txtar" if named else "a.sse")
    pieces: list[Any] = []
    for block in blocks:
        pieces.extend(reader.feed(block))
    pieces.extend(reader.finish())
    assert all(isinstance(p, bytes) for p in pieces)
    section = TXTAR.split(b"-- streaming --\n")[1].split(b"\n-- ")[0] + b"\n"
    assert b"".join(pieces) == section
    assert load_recording(TXTAR) == [section]


def test_a_txtar_marker_past_the_sniffed_head_is_plain_text_unless_named() -> None:
    late = b":" + b" " * SNIFF_BYTES + b"\n-- streaming --\ndata: x\n\n"
    assert load_recording(late) == [late]
    assert load_recording(late, name="r.txtar") == [b"data: x\n\n"]


def test_a_recorded_error_response_is_kept_whole_across_blocks() -> None:
    text = b'-- streaming --\nHTTP/2.0 429 Too Many\n\n{"error": {"message": "slow down"}}\n'
    reader = RecordingReader()
    pieces = [p for i in range(len(text)) for p in reader.feed(text[i : i + 1])]
    pieces += reader.finish()
    assert pieces == [{"error": {"message": "slow down"}}]


def test_a_calls_raw_text_is_kept_in_few_pieces() -> None:
    from streamrepair.providers.wire import WireStop, WireToolCall

    tracker = ToolCallTracker()
    tracker.feed(WireToolCall(id="c", index=0, name="write", arguments='{"content": "'))
    for _ in range(50_000):
        tracker.feed(WireToolCall(id=None, index=0, arguments="abcdefghijklmnop"))
    tracker.feed(WireToolCall(id=None, index=0, arguments='"}'))
    call = tracker._calls[0]
    assert len(call.parts) <= 3 * 64
    tracker.feed(WireStop(reason="stop"))
    events = tracker.finish()
    ready = next(e for e in events if isinstance(e, ToolCallReady))
    assert ready.arguments == {"content": "abcdefghijklmnop" * 50_000}


def _held_by_a_batch(event: object) -> bool:
    """Whether a list or deque (a driver's batch of events) still refers to ``event``."""
    return any(isinstance(r, list | collections.deque) for r in gc.get_referrers(event))


def test_iter_events_lets_go_of_each_event_as_it_is_yielded(tmp_path: Path) -> None:
    # A delta's preview, once read, is kept on its event: a driver holding a block's
    # events would hold a snapshot per delta of the block.
    data = write_recording(20_000)
    path = tmp_path / "r.sse"
    path.write_bytes(data)
    for source in (data, path):
        deltas = 0
        for event in iter_events(source):
            if isinstance(event, ToolCallDelta):
                assert event.preview is not None
                if deltas % 97 == 0:  # get_referrers scans every object: a sample
                    assert not _held_by_a_batch(event)
                deltas += 1
        assert deltas > 100  # many deltas in one 64 KiB block


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_aiter_events_lets_go_of_each_event_as_it_is_yielded(
    tmp_path: Path, anyio_backend: str
) -> None:
    path = tmp_path / "r.sse"
    path.write_bytes(write_recording(20_000))
    deltas = 0
    async with drivers.aiter_events(path) as events:
        async for event in events:
            if isinstance(event, ToolCallDelta):
                assert event.preview is not None
                if deltas % 97 == 0:  # get_referrers scans every object: a sample
                    assert not _held_by_a_batch(event)
                deltas += 1
    assert deltas > 100


def test_replay_json_reads_events_through_iter_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from streamrepair.cli import main, replay

    path = tmp_path / "r.sse"
    path.write_bytes(write_recording(5_000))
    seen: list[bool] = []
    real = replay.iter_events

    def spy(source: Any, **options: Any) -> Any:
        for event in real(source, **options):
            if isinstance(event, ToolCallDelta) and len(seen) < 5:
                seen.append(_held_by_a_batch(event))
            yield event

    monkeypatch.setattr(replay, "iter_events", spy)
    assert main(["replay", "--json", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert seen == [False] * 5
    assert json.loads(lines[-2])["type"] == "tool_call_ready"
