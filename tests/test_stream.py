"""The sans-IO ToolCallStream and its drivers: bytes vs chunks, sniffing, every source kind,
sync and async (asyncio and trio), early exit and cancellation."""

from __future__ import annotations

import copy
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamrepair import (
    CallProgress,
    ClosedError,
    Done,
    Provider,
    RejectReason,
    StopReason,
    StreamEvent,
    StreamFailed,
    TextDelta,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStream,
    aiter_events,
    iter_events,
    load_recording,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sse"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


CHUNKS = [
    chunk({"role": "assistant", "content": "Hi. "}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "f", "arguments": ""},
                }
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a": '}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}),
    chunk({}, "tool_calls"),
]


def sse_bytes(chunks: list[dict[str, Any]], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def dicts(events: list[StreamEvent]) -> list[dict[str, Any]]:
    return [e.to_dict() for e in events]


def kinds(events: list[StreamEvent]) -> list[str]:
    return [e.type for e in events]


EXPECTED = [
    "text_delta",
    "tool_call_started",
    "tool_call_delta",
    "tool_call_delta",
    "tool_call_ready",
    "done",
]


# -- the core ------------------------------------------------------------------------------


def test_bytes_and_chunks_give_the_same_events() -> None:
    from_bytes = ToolCallStream()
    events = from_bytes.feed(sse_bytes(CHUNKS)) + from_bytes.finish()
    from_chunks = ToolCallStream()
    before = copy.deepcopy(CHUNKS)
    events2: list[StreamEvent] = []
    for c in CHUNKS:
        events2 += from_chunks.feed(c)
    events2 += from_chunks.finish()
    assert before == CHUNKS  # nothing the caller passed is mutated
    assert kinds(events) == EXPECTED
    assert dicts(events) == dicts(events2)
    assert from_bytes.provider is Provider.OPENAI


def test_text_input_and_ndjson_sniffing() -> None:
    text = ToolCallStream()
    events = text.feed(sse_bytes(CHUNKS).decode()) + text.finish()
    assert kinds(events) == EXPECTED
    ndjson = ("\ufeff \n" + "\n".join(json.dumps(c) for c in CHUNKS)).encode()
    for size in (1, 2, 7, len(ndjson)):
        core = ToolCallStream()
        out: list[StreamEvent] = []
        for i in range(0, len(ndjson), size):
            out += core.feed(ndjson[i : i + size])
        out += core.finish()
        # No [DONE] in NDJSON: the stop reason plus the end of input finish it.
        assert dicts(out) == dicts(events), size


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_chunk_count_is_the_chunks_read_in_any_split(data: st.DataObject) -> None:
    body = sse_bytes(CHUNKS) + b"data: [DONE]\n\n"  # markers and repeats are no chunks
    random_split = data.draw(st.lists(st.integers(0, len(body)), max_size=12))
    cuts = sorted(set(random_split))
    splits = [[body], [body[i : i + 1] for i in range(len(body))]]
    splits.append([body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)])
    for pieces in splits:
        core = ToolCallStream()
        for piece in pieces:
            core.feed(piece)
        core.finish()
        assert core.chunk_count == len(CHUNKS)
    given_chunks = ToolCallStream()
    for c in CHUNKS:
        given_chunks.feed(c)
    assert given_chunks.chunk_count == len(CHUNKS)


@pytest.mark.parametrize("body", [b"", b"hello\n", b": ping\n\n", b"data: [DONE]\n\n"])
def test_chunk_count_is_zero_when_the_input_holds_no_stream(body: bytes) -> None:
    core = ToolCallStream()
    events = core.feed(body) + core.finish()
    assert core.chunk_count == 0
    assert kinds(events) == ["done"]
    assert core.done is not None
    assert core.done.stop_reason is StopReason.MISSING


def test_done_marker_ends_the_stream_and_later_input_is_ignored() -> None:
    core = ToolCallStream()
    events = core.feed(sse_bytes(CHUNKS) + b"data: {not json}\n\n")
    assert kinds(events) == EXPECTED
    assert isinstance(core.done, Done)
    assert core.feed(b"data: more\n\n") == []
    assert core.feed(CHUNKS[0]) == []
    assert core.finish() == []
    with pytest.raises(ClosedError):
        core.feed(b"x")
    with pytest.raises(ClosedError):
        core.finish()
    assert core.abort() == []  # safe at any time


def test_bad_payload_and_unsupported_chunks_fail_the_stream() -> None:
    core = ToolCallStream()
    events = core.feed(sse_bytes(CHUNKS[:3], done=False) + b"data: [1, 2]\n\n")
    failed = [e for e in events if isinstance(e, StreamFailed)]
    assert [f.code for f in failed] == ["bad_chunk"]
    assert [e.reason for e in events if isinstance(e, ToolCallRejected)] == [
        RejectReason.STREAM_INCOMPLETE
    ]
    other = ToolCallStream()
    events = other.feed({"outputs": []}) + other.finish()
    assert [e.code for e in events if isinstance(e, StreamFailed)] == ["unsupported_chunk"]
    sdk = ToolCallStream()
    events = sdk.feed(object())
    assert [e.code for e in events if isinstance(e, StreamFailed)] == ["unsupported_chunk"]


def test_sse_limits_become_a_stream_failure() -> None:
    core = ToolCallStream(max_line_bytes=32)
    events = core.feed(b"data: " + b"x" * 100)
    assert [e.code for e in events if isinstance(e, StreamFailed)] == ["sse"]
    assert core.done is not None
    assert core.done.stop_reason is StopReason.ERROR
    late = ToolCallStream(max_line_bytes=32)
    late.feed(b"data: ")
    events = late.feed(b"\xff\xfe\n\n")
    assert [e.code for e in events if isinstance(e, StreamFailed)] == ["sse"]
    blank = ToolCallStream(max_line_bytes=4)
    events = blank.feed(b"\n" * 10) + blank.feed(b"data: 123456\n\n")
    assert [e.code for e in events if isinstance(e, StreamFailed)] == ["sse"]


def test_unterminated_last_event_is_read_at_finish() -> None:
    core = ToolCallStream()
    body = sse_bytes(CHUNKS, done=False).rstrip(b"\n")
    events = core.feed(body) + core.finish()
    assert kinds(events) == EXPECTED


def test_fail_from_outside_the_data() -> None:
    core = ToolCallStream()
    core.feed(sse_bytes(CHUNKS[:3], done=False))
    events = core.fail("connection reset", code="network")
    assert kinds(events) == ["stream_failed", "tool_call_rejected", "done"]
    assert core.calls == (("c1", "f", CallProgress.REJECTED),)
    assert core.fail("again") == []


def test_choice_option_follows_another_choice() -> None:
    path = FIXTURES / "openai-n2-choices.sse"
    first = [e for e in iter_events(path) if isinstance(e, ToolCallReady)]
    second = [e for e in iter_events(path, choice=1) if isinstance(e, ToolCallReady)]
    assert [(e.call_id, e.arguments) for e in first] == [("call_choice0", {"city": "Oslo"})]
    assert [(e.call_id, e.arguments) for e in second] == [("call_choice1", {"city": "Lima"})]


def test_explicit_provider_and_previews_off() -> None:
    core = ToolCallStream(provider="openai", previews=False)
    events = core.feed(sse_bytes(CHUNKS)) + core.finish()
    assert all(e.preview is None for e in events if e.type == "tool_call_delta")
    assert core.provider is Provider.OPENAI


# -- recordings ----------------------------------------------------------------------------


def test_load_recording_txtar_sections() -> None:
    txtar = b"comment\n-- request --\n{}\n-- streaming --\ndata: x\n\n-- non-streaming --\n{}\n"
    assert load_recording(txtar, name="a.txtar") == [b"data: x\n\n"]
    assert load_recording(b"-- request --\n{}\n", name="a.txtar") == []
    http = b'-- streaming --\nHTTP/2.0 429 Too Many\nContent-Type: application/json\n\n{"error": {"message": "slow down"}}\n'
    assert load_recording(http) == [{"error": {"message": "slow down"}}]
    bare = b"-- streaming --\nHTTP/2.0 502 Bad Gateway\n\n<html>\n"
    assert load_recording(bare) == [
        {"error": {"message": "HTTP/2.0 502 Bad Gateway", "type": "http_error"}}
    ]
    assert load_recording(b"data: y\n\n", name="a.sse") == [b"data: y\n\n"]


# -- sync driver ---------------------------------------------------------------------------


def expected_events() -> list[dict[str, Any]]:
    core = ToolCallStream()
    return dicts(core.feed(sse_bytes(CHUNKS)) + core.finish())


def test_iter_events_sources(tmp_path: Path) -> None:
    want = expected_events()
    sse = sse_bytes(CHUNKS)
    path = tmp_path / "r.sse"
    path.write_bytes(sse)
    jsonl = tmp_path / "r.jsonl"
    jsonl.write_text("\n".join(json.dumps(c) for c in CHUNKS) + "\n")
    txtar = tmp_path / "r.txtar"
    txtar.write_bytes(b"-- streaming --\n" + sse + b"-- non-streaming --\n{}\n")
    pieces = [sse[i : i + 5] for i in range(0, len(sse), 5)]
    sources: list[Any] = [
        path,
        str(path),
        jsonl,
        txtar,
        sse,
        io.BytesIO(sse),
        pieces,
        iter(pieces),
        CHUNKS,
    ]
    for source in sources:
        assert dicts(list(iter_events(source))) == want, repr(source)[:40]
    with pytest.raises(TypeError, match="cannot read"):
        list(iter_events(42))


def test_iter_events_stops_reading_and_closes_at_the_end_marker() -> None:
    state = {"read": 0, "closed": False}

    def source() -> Iterator[bytes]:
        try:
            for piece in [sse_bytes(CHUNKS), b"data: after\n\n", b"data: more\n\n"]:
                state["read"] += 1
                yield piece
        finally:
            state["closed"] = True

    assert kinds(list(iter_events(source()))) == EXPECTED
    assert state == {"read": 1, "closed": True}


def test_breaking_out_of_iter_events_aborts_in_flight_calls() -> None:
    state = {"closed": False}

    def source() -> Iterator[dict[str, Any]]:
        try:
            yield from CHUNKS[:3]
            yield from CHUNKS[3:]
        finally:
            state["closed"] = True

    core = ToolCallStream()
    events = iter_events(source(), core=core)
    for event in events:
        if event.type == "tool_call_started":
            break
    events.close()  # what leaving a for loop over a generator does, made explicit
    assert state["closed"]
    assert core.calls == (("c1", "f", CallProgress.REJECTED),)
    assert core.done is not None
    assert core.done.stop_reason is StopReason.ABORTED


def test_a_source_error_is_recorded_and_propagates() -> None:
    def source() -> Iterator[dict[str, Any]]:
        yield from CHUNKS[:3]
        raise ConnectionError("reset by peer")

    core = ToolCallStream()
    seen: list[StreamEvent] = []
    with pytest.raises(ConnectionError):
        seen.extend(iter_events(source(), core=core))
    assert not any(isinstance(e, ToolCallReady) for e in seen)
    assert core.done is not None
    assert core.done.stop_reason is StopReason.ERROR
    assert core.calls == (("c1", "f", CallProgress.REJECTED),)
    # Without a core of its own, the consumer still gets the verdicts and Done, then
    # the exception.
    seen = []
    with pytest.raises(ConnectionError):
        seen.extend(iter_events(source()))
    assert kinds(seen)[-3:] == ["stream_failed", "tool_call_rejected", "done"]
    failed = seen[-3]
    assert isinstance(failed, StreamFailed)
    assert failed.code == "source_error"
    assert failed.message == "ConnectionError('reset by peer')"
    assert failed.raw == {"exception": "ConnectionError"}
    assert seen[-1] is not None


def test_openai_sdk_chunk_objects_as_a_source() -> None:
    types = pytest.importorskip("openai.types.chat")
    full = [{**c, "created": 1} for c in CHUNKS]
    objects = [types.ChatCompletionChunk.model_validate(c) for c in full]
    assert dicts(list(iter_events(objects)))[1:] == expected_events()[1:]


# -- async driver --------------------------------------------------------------------------


class AsyncSource:
    """An async iterable like an SDK AsyncStream: it has an async close()."""

    def __init__(self, items: list[Any], *, hang_after: int | None = None) -> None:
        self.items = items
        self.hang_after = hang_after
        self.closed = False
        self.hanging = anyio.Event()

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._gen()

    async def _gen(self) -> AsyncIterator[Any]:
        for n, item in enumerate(self.items):
            if self.hang_after is not None and n >= self.hang_after:
                self.hanging.set()
                await anyio.sleep_forever()
            await anyio.sleep(0)
            yield item

    async def close(self) -> None:
        self.closed = True


@pytest.mark.anyio
async def test_aiter_events_sources(tmp_path: Path) -> None:
    want = expected_events()
    path = tmp_path / "r.sse"
    path.write_bytes(sse_bytes(CHUNKS))

    async def agen() -> AsyncIterator[bytes]:
        data = sse_bytes(CHUNKS)
        for i in range(0, len(data), 7):
            yield data[i : i + 7]

    for source in [path, str(path), CHUNKS, sse_bytes(CHUNKS), agen(), AsyncSource(CHUNKS)]:
        got = [e async for e in aiter_events(source)]
        assert dicts(got) == want, repr(source)[:40]


@pytest.mark.anyio
async def test_async_and_sync_drivers_agree_on_a_fixture() -> None:
    path = FIXTURES / "deepseek-thinking-tools.sse"
    async with aiter_events(path) as events:
        got = [e async for e in events]
    assert dicts(got) == dicts(list(iter_events(path)))


@pytest.mark.anyio
async def test_cancelling_the_consumer_aborts_calls_and_closes_the_source() -> None:
    source = AsyncSource(CHUNKS, hang_after=3)  # the call is mid-arguments, then silence
    stream = aiter_events(source)
    seen: list[StreamEvent] = []

    async def consume() -> None:
        async for event in stream:
            seen.append(event)

    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        await source.hanging.wait()
        await anyio.sleep(0)
        tg.cancel_scope.cancel()

    assert kinds(seen)[:2] == ["text_delta", "tool_call_started"]
    assert not any(isinstance(e, ToolCallReady) for e in seen)
    assert stream.core.calls == (("c1", "f", CallProgress.REJECTED),)
    assert stream.core.done is not None
    assert stream.core.done.stop_reason is StopReason.ABORTED
    assert source.closed
    with pytest.raises(StopAsyncIteration):
        await stream.__anext__()


@pytest.mark.anyio
async def test_leaving_async_with_early_aborts_and_closes() -> None:
    closed = {"gen": False}

    async def agen() -> AsyncIterator[dict[str, Any]]:
        try:
            for c in CHUNKS:
                yield c
        finally:
            closed["gen"] = True

    async with aiter_events(agen()) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                break
    assert closed["gen"]
    assert events.core.done is not None
    assert events.core.done.stop_reason is StopReason.ABORTED


@pytest.mark.anyio
async def test_async_source_error_is_recorded_and_propagates() -> None:
    async def agen() -> AsyncIterator[dict[str, Any]]:
        for c in CHUNKS[:3]:
            yield c
        raise ConnectionError("reset")

    stream = aiter_events(agen())
    seen: list[StreamEvent] = []

    async def consume() -> None:
        async for event in stream:
            seen.append(event)

    with pytest.raises(ConnectionError):
        await consume()
    assert stream.core.done is not None
    assert stream.core.done.stop_reason is StopReason.ERROR
    assert seen[-1] is stream.core.done  # yielded before the exception
    assert kinds(seen)[-2:] == ["tool_call_rejected", "done"]
    with pytest.raises(StopAsyncIteration):  # raised once, then the stream is over
        await stream.__anext__()


@pytest.mark.anyio
async def test_async_stops_at_the_end_marker() -> None:
    source = AsyncSource([*CHUNKS, {"not": "read"}], hang_after=None)
    data = [sse_bytes(CHUNKS), b"data: never\n\n"]
    got = [e async for e in aiter_events(data)]
    assert kinds(got) == EXPECTED
    got = [e async for e in aiter_events(source)]
    assert kinds(got) == EXPECTED
    assert source.closed


# -- the docs --------------------------------------------------------------------------------


def test_docs_streams_python_examples_run(monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(__file__).resolve().parent.parent
    text = (root / "docs" / "streams.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 7  # the design card's users, the pause_turn continuation, live UIs
    monkeypatch.chdir(root)
    for block in blocks:
        exec(compile(block, "docs/streams.md", "exec"), {})


def test_docs_testing_your_harness_runs_on_trio_and_asyncio(tmp_path: Path) -> None:
    # The harness of "Async iteration" and the tests of "Testing your harness", saved as
    # the files they name and run by pytest: the anyio plugin on trio, pytest-asyncio.
    root = Path(__file__).resolve().parent.parent
    text = (root / "docs" / "streams.md").read_text(encoding="utf-8")
    files = dict(re.findall(r"```py\n# ([\w.]+\.py)\n(.*?)```", text, flags=re.S))
    assert sorted(files) == ["harness.py", "test_harness.py"]
    for name, code in files.items():
        (tmp_path / name).write_text(code, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nfilterwarnings = error\naddopts = --strict-markers\n"
        "asyncio_default_fixture_loop_scope = function\n",
        encoding="utf-8",
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root / "src"), env.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=root,  # the recordings' paths are the project's
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test_a_whole_turn_on_trio PASSED" in done.stdout
    assert "test_a_whole_turn_on_asyncio PASSED" in done.stdout
    assert " 2 passed" in done.stdout


def test_verdicts_keep_what_an_aborted_consumer_never_saw() -> None:
    from streamrepair import RejectReason, ToolCallRejected, ToolCallStream

    core = ToolCallStream()
    core.feed(
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1",'
        b'"type":"function","function":{"name":"write","arguments":"{\\"path\\": \\"a"}}]}}]}\n\n'
    )
    assert core.verdicts == ()
    core.abort()  # the consumer stopped; these events were never read
    (verdict,) = core.verdicts
    assert isinstance(verdict, ToolCallRejected)
    assert verdict.reason is RejectReason.ABORTED
    assert verdict.raw == '{"path": "a'


@pytest.mark.parametrize("step", [1, 7, 1000])
def test_surrogate_halves_in_separate_deltas_make_one_character(step: int) -> None:
    # A provider whose chunks each carry one UTF-16 half of an emoji: each chunk's JSON
    # decodes to a lone surrogate, and the two are joined again (U+FFFD is for a truly
    # lone half). End to end, from SSE bytes, however the bytes are cut.
    pieces = ['{"content": "hi ', "\ud83d", "\ude00", " and \ud83d", "\ude80", " \ud83d", '"}']
    chunks = [
        chunk(
            {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "w", "arguments": ""}}]}
        ),
        *(chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces),
        chunk({}, "tool_calls"),
    ]
    data = sse_bytes(chunks)
    assert b"\\ud83d" in data  # each half travels as its own JSON escape
    core = ToolCallStream()
    events = []
    for start in range(0, len(data), step):
        events += core.feed(data[start : start + step])
    events += core.finish()
    (ready,) = [e for e in events if isinstance(e, ToolCallReady)]
    assert ready.arguments == {"content": "hi \U0001f600 and \U0001f680 \ufffd"}
    (lone,) = ready.repairs
    assert lone.kind.value == "lone_surrogate"
    assert lone.count == 1
