"""The relays' fast way for the most common event, a chunk of only text or reasoning
(``Relay._passes``, the core's ``ToolCallStream.feed_text_only``), against the full
reading of every chunk: the same bytes out, the same verdicts, memos and ``Done``, for
every recording and for generated streams of every odd chunk shape, at any split and
with every option that changes what a relay does with text."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _proxy_support import CORPUS, FIXTURES, RELAYS, as_sse, protocol_of, relay_run, split
from streamrepair import (
    Done,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallStream,
)
from streamrepair.proxy import ChatRelay, Refusals, usable_tools

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    }
]


@contextlib.contextmanager
def full_reading() -> Iterator[None]:
    """Every chunk read in full (the reference): the core never takes one the fast way."""
    with (
        mock.patch.object(ToolCallStream, "feed_text_only", return_value=False),
        mock.patch.object(ToolCallStream, "feed_arguments_only", return_value=False),
    ):
        yield


def _recordings() -> list[tuple[str, bytes, Any]]:
    """(name, SSE bytes, tools) of every fixture and corpus recording the relays read."""
    out = []
    paths = sorted(FIXTURES.glob("*.sse"))
    if CORPUS.is_dir():
        paths += [
            p
            for p in sorted(CORPUS.glob("*/*"))
            if p.suffix != ".md" and "__blocking__" not in p.name
        ]
    for path in paths:
        sse = as_sse(path.read_bytes())
        if sse is None or protocol_of(sse) not in RELAYS:
            continue
        tools_file = path.with_name(path.name.split(".")[0] + ".tools.json")
        tools = json.loads(tools_file.read_text()) if tools_file.exists() else None
        out.append((path.name, sse, tools))
    return out


RECORDINGS = _recordings()
OPTIONS: list[dict[str, Any]] = [
    {},
    {"text_tool_calls": "auto"},
    {"stream_arguments": True},
    {"refusals": Refusals.NOTICE},
]


def outcome(protocol: str, tools: Any, pieces: list[bytes], **options: Any) -> tuple[object, ...]:
    """Everything a relay gives and holds: bytes while streaming and at the end, the
    verdicts, the memos, the core's ``Done``, how many chunks it read, the stop reason."""
    relay = RELAYS[protocol](tools=usable_tools(tools), **options)
    live, final = relay_run(relay, pieces)
    return (
        live,
        final,
        relay.verdicts,
        relay.memos(),
        relay.done,
        relay.stream.chunk_count,
        relay.chunks,
        relay.upstream_stop,
        relay.failure,
    )


def test_the_fast_way_is_taken() -> None:
    """A stream of text goes the fast way (else the tests below compare nothing)."""
    taken: list[bool] = []
    real = ToolCallStream.feed_text_only

    def spy(self: ToolCallStream, chunk: dict[str, Any]) -> bool:
        taken.append(real(self, chunk))
        return taken[-1]

    data = {name: sse for name, sse, _ in RECORDINGS}["deepseek-thinking-tools.sse"]
    with mock.patch.object(ToolCallStream, "feed_text_only", spy):
        outcome("chat", None, [data])
    assert taken.count(True) > 10


@pytest.mark.parametrize("options", OPTIONS, ids=["default", "text-calls", "progressive", "notice"])
@pytest.mark.parametrize(("name", "sse", "tools"), RECORDINGS, ids=[r[0] for r in RECORDINGS])
def test_every_recording_gives_what_the_full_reading_gives(
    name: str, sse: bytes, tools: Any, options: dict[str, Any]
) -> None:
    protocol = protocol_of(sse)
    fast = outcome(protocol, tools, [sse], **options)
    with full_reading():
        assert outcome(protocol, tools, [sse], **options) == fast
    # and at a split that cuts most events (the decoder then reads them line by line)
    assert outcome(protocol, tools, split(sse, list(range(7, len(sse), 13))), **options) == fast


# -- generated Chat Completions streams, with every odd chunk shape ---------------------------

_TEXTS = st.sampled_from(["", "a", "word ", "é", "<tool_call>", "{", "\n"])
_MAYBE_TEXT = st.one_of(st.none(), _TEXTS, st.just(5))
_INDEXES = st.sampled_from([0, 0, 0, 1, None, "0", True, 0.0, "absent"])


_PIECES = st.sampled_from(
    ['{"path":', '"a.py",', '"content":"x = 1\\n"', "}", ",}", '{"a":1}{"b":2}', "", "nul"]
)


@st.composite
def deltas(draw: st.DrawFn, k: int) -> Any:
    """A delta: mostly of the common shapes (text, a call's start, a piece of its
    arguments), each also with what makes it uncommon."""
    shape = draw(st.integers(0, 6))
    if shape <= 1:  # text or reasoning, as most chunks are
        key = draw(st.sampled_from(["content", "reasoning_content", "reasoning"]))
        delta: dict[str, Any] = {key: draw(_TEXTS)}
        if draw(st.booleans()):
            delta["content" if key != "content" else "reasoning_content"] = None
        return delta
    if shape == 2:  # a call begins
        index = draw(st.sampled_from([0, 1, 0]))
        name = draw(st.sampled_from(["write_file", "other_tool", ""]))
        entry = {"index": index, "id": f"call_{index}", "type": "function"}
        return {"tool_calls": [{**entry, "function": {"name": name, "arguments": ""}}]}
    if shape in (3, 4):  # the next piece of a call's arguments
        entry = {"function": {"arguments": draw(_PIECES)}}
        index = draw(st.sampled_from([0] * 6 + [1, 2, "0", None, "absent", "inside"]))
        if index == "inside":  # Ollama puts it in "function"
            entry["function"]["index"] = 0
        elif index != "absent":
            entry["index"] = index
        if draw(st.integers(0, 10)) == 0:
            entry["id"] = draw(st.sampled_from(["call_0", "call_new", ""]))
        if draw(st.integers(0, 10)) == 0:
            entry["function"]["name"] = draw(st.sampled_from(["write_file", "other_tool", ""]))
        if draw(st.integers(0, 10)) == 0:
            entry["function"]["arguments"] = {"path": "a"}
        delta = {"tool_calls": [entry] * draw(st.sampled_from([1] * 9 + [2]))}
        if draw(st.integers(0, 10)) == 0:
            delta[draw(st.sampled_from(["role", "content", "refusal"]))] = None
        return delta
    if draw(st.integers(0, 20)) == 0:
        return draw(st.sampled_from([None, [], "x"]))
    delta = {}
    for key, values in (
        ("role", st.just("assistant")),
        ("content", _MAYBE_TEXT),
        ("reasoning_content", _MAYBE_TEXT),
        ("reasoning", _MAYBE_TEXT),
        ("refusal", st.sampled_from([None, "", "no"])),
    ):
        if draw(st.integers(0, 2)) == 0:
            delta[key] = draw(values)
    if draw(st.integers(0, 6)) == 0:
        delta["tool_calls"] = draw(
            st.sampled_from(
                [
                    None,
                    [],
                    [{"index": 0, "id": "call_1", "function": {"name": "write_file"}}],
                    [{"index": 0, "function": {"arguments": '{"path":"a","content":"b",}'}}],
                ]
            )
        )
    if draw(st.integers(0, 30)) == 0:
        delta["function_call"] = {"name": "write_file", "arguments": "{}"}
    return delta


@st.composite
def chat_chunks(draw: st.DrawFn, k: int) -> dict[str, Any]:
    """A chunk: mostly as a server sends it (an id, one choice at index 0), else with any
    of the odd things at the chunk's and the choice's level."""
    chunk: dict[str, Any] = {"object": "chat.completion.chunk", "model": "m"}
    if draw(st.integers(0, 3)):
        chunk["id"] = "chatcmpl-1"
        chunk["choices"] = [{"index": 0, "delta": draw(deltas(k)), "finish_reason": None}]
        return chunk
    chunk_id = draw(st.sampled_from(["chatcmpl-1", "chatcmpl-1", "", None, "absent"]))
    if chunk_id != "absent":
        chunk["id"] = chunk_id
    choices: list[Any] = []
    for _ in range(draw(st.sampled_from([1, 1, 1, 1, 0, 2]))):
        choice: dict[str, Any] = {"delta": draw(deltas(k))}
        index = draw(_INDEXES)
        if index != "absent":
            choice["index"] = index
        if draw(st.integers(0, 10)) == 0:
            choice["finish_reason"] = draw(st.sampled_from(["stop", "tool_calls", "", 0]))
        elif draw(st.booleans()):
            choice["finish_reason"] = None
        choices.append(choice if draw(st.integers(0, 30)) else "not a choice")
    if draw(st.integers(0, 30)):
        chunk["choices"] = choices
    if draw(st.integers(0, 10)) == 0:
        chunk["usage"] = draw(st.sampled_from([None, {}, {"total_tokens": 3}, "x"]))
    if draw(st.integers(0, 60)) == 0:
        chunk["error"] = {"message": "boom"}
    return chunk


@st.composite
def chat_streams(draw: st.DrawFn) -> bytes:
    chunks = [draw(chat_chunks(k)) for k in range(draw(st.integers(1, 24)))]
    if draw(st.integers(0, 2)):  # a call begins early, as most calls do
        start = {"index": 0, "id": "call_0", "type": "function"}
        delta = {"tool_calls": [{**start, "function": {"name": "write_file", "arguments": ""}}]}
        chunks.insert(
            draw(st.integers(0, min(2, len(chunks)))),
            {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": delta}]},
        )
    out = [f"data: {json.dumps(c)}\n\n" for c in chunks]
    if draw(st.booleans()):
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


@settings(max_examples=300, deadline=None)
@given(
    chat_streams(),
    st.sampled_from(OPTIONS),
    st.booleans(),
    st.lists(st.integers(min_value=1, max_value=5000), max_size=8),
)
def test_generated_chat_streams_give_what_the_full_reading_gives(
    data: bytes, options: dict[str, Any], tools: bool, cuts: list[int]
) -> None:
    listed = TOOLS if tools else None
    fast = outcome("chat", listed, split(data, cuts), **options)
    with full_reading():
        assert outcome("chat", listed, [data], **options) == fast


@settings(max_examples=300, deadline=None)
@given(chat_streams(), st.booleans())
def test_the_core_keeps_what_feed_chunk_keeps(data: bytes, previews: bool) -> None:
    """A chunk ``feed_text_only`` takes would have given only its text and reasoning as
    events, one ``feed_arguments_only`` takes only its piece's ``ToolCallDelta``; every
    other event, the verdicts, ``Done`` and the chunk count are ``feed_chunk``'s."""
    options: dict[str, Any] = {"tools": TOOLS, "reject_unknown_tools": False}
    full = ToolCallStream(provider="openai", previews=previews, **options)
    fast = ToolCallStream(provider="openai", previews=previews, **options)
    full_events: list[StreamEvent] = []
    fast_events: list[StreamEvent] = []
    for line in data.split(b"\n\n"):
        if not line:
            continue
        if not line.startswith(b"data: {"):
            full_events += full.feed(line + b"\n\n")
            fast_events += fast.feed(line + b"\n\n")
            continue
        chunk = json.loads(line[6:])
        given_events = full.feed_chunk(chunk)
        if fast.feed_text_only(chunk):
            assert all(type(e) in (TextDelta, ReasoningDelta) for e in given_events)
            continue
        if fast.feed_arguments_only(chunk):
            assert not previews
            (piece,) = given_events
            assert isinstance(piece, ToolCallDelta)
            entry = chunk["choices"][0]["delta"]["tool_calls"][0]
            assert (piece.index, piece.text) == (entry["index"], entry["function"]["arguments"])
            continue
        full_events += given_events
        fast_events += fast.feed_chunk(chunk)
    full_events += full.finish()
    fast_events += fast.finish()
    assert [e for e in fast_events if type(e) not in (TextDelta, ReasoningDelta)] == [
        e for e in full_events if type(e) not in (TextDelta, ReasoningDelta)
    ]
    assert fast.done == full.done
    assert fast.chunk_count == full.chunk_count
    assert fast.calls == full.calls


# -- generated Anthropic Messages streams ------------------------------------------------------

_BLOCKS = st.sampled_from(
    [
        {"type": "text", "text": ""},
        {"type": "thinking", "thinking": "", "signature": ""},
        {"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {}},
        {"type": "tool_use", "id": "toolu_2", "name": "other_tool", "input": {}},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
    ]
)
_BLOCK_DELTAS = st.one_of(
    st.builds(lambda t: {"type": "text_delta", "text": t}, st.one_of(_TEXTS, st.just(5))),
    st.builds(lambda t: {"type": "thinking_delta", "thinking": t}, _MAYBE_TEXT),
    st.builds(lambda t: {"type": "input_json_delta", "partial_json": t}, _PIECES),
    st.just({"type": "signature_delta", "signature": "sig"}),
    st.just({"type": "citations_delta", "citation": {"type": "char_location"}}),
    st.sampled_from([None, {}, {"type": "text_delta"}, "x"]),
)


@st.composite
def anthropic_events(draw: st.DrawFn) -> dict[str, Any]:
    index = draw(st.sampled_from([0, 0, 1, 1, 2, 3, None, "1", True]))
    kind = draw(st.integers(0, 9))
    if kind <= 4:
        event: dict[str, Any] = {"type": "content_block_delta", "delta": draw(_BLOCK_DELTAS)}
    elif kind <= 6:
        event = {"type": "content_block_start", "content_block": draw(_BLOCKS)}
    elif kind == 7:
        event = {"type": "content_block_stop"}
    else:
        return draw(
            st.sampled_from(
                [
                    {"type": "ping"},
                    {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
                    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
                    {"type": "message_stop"},
                    {"type": "error", "error": {"type": "overloaded_error", "message": "x"}},
                    {"type": "message_start", "message": {"id": "msg_2", "content": []}},
                ]
            )
        )
    if index is not None:
        event["index"] = index
    return event


_DELTA_OF = {
    "text": lambda t: {"type": "text_delta", "text": t},
    "thinking": lambda t: {"type": "thinking_delta", "thinking": t},
    "tool_use": lambda t: {"type": "input_json_delta", "partial_json": t},
    "server_tool_use": lambda t: {"type": "input_json_delta", "partial_json": t},
}


@st.composite
def anthropic_streams(draw: st.DrawFn) -> bytes:
    """A message of blocks as Anthropic sends them (start, deltas of the block's kind,
    stop, then the end), with odd events and odd fields mixed in."""
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_1", "role": "assistant"}}
    ]
    for index in range(draw(st.integers(0, 4))):
        block = draw(_BLOCKS)
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        make = _DELTA_OF.get(block["type"], _DELTA_OF["text"])
        for _ in range(draw(st.integers(0, 6))):
            piece = draw(_PIECES) if "input" in block else draw(_TEXTS)
            events.append({"type": "content_block_delta", "index": index, "delta": make(piece)})
            if draw(st.integers(0, 8)) == 0:
                events.append(draw(anthropic_events()))
        if draw(st.integers(0, 6)):
            events.append({"type": "content_block_stop", "index": index})
    if draw(st.integers(0, 5)):
        reason = draw(st.sampled_from(["tool_use", "end_turn", "max_tokens"]))
        events.append({"type": "message_delta", "delta": {"stop_reason": reason}})
        events.append({"type": "message_stop"})
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


@settings(max_examples=300, deadline=None)
@given(
    anthropic_streams(),
    st.sampled_from(OPTIONS),
    st.booleans(),
    st.lists(st.integers(min_value=1, max_value=5000), max_size=8),
)
def test_generated_anthropic_streams_give_what_the_full_reading_gives(
    data: bytes, options: dict[str, Any], tools: bool, cuts: list[int]
) -> None:
    listed = ANTHROPIC_TOOLS if tools else None
    fast = outcome("anthropic", listed, split(data, cuts), **options)
    with full_reading():
        assert outcome("anthropic", listed, [data], **options) == fast


ANTHROPIC_TOOLS = [
    {"name": t["function"]["name"], "input_schema": t["function"]["parameters"]} for t in TOOLS
]


def test_a_chat_relay_of_text_passes_the_upstreams_bytes() -> None:
    """The fast way sends each text chunk as the upstream framed it, not re-serialized."""
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": "é \u2028"}, "finish_reason": None}],
    }
    first = json.dumps({**chunk, "choices": [{"index": 0, "delta": {"role": "assistant"}}]})
    text = json.dumps(chunk)  # ASCII escapes, spaces: not what compact_json writes
    relay = ChatRelay()
    data = f"data: {first}\n\ndata: {text}\n\n".encode()
    assert b"".join(relay.feed(data)) == data


def test_text_past_the_bound_fails_the_stream_as_the_full_reading_does() -> None:
    chunks = [
        {"id": "c", "choices": [{"index": 0, "delta": {"content": "x" * 8}}]} for _ in range(4)
    ]
    data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode()

    def run() -> tuple[object, ...]:
        relay = ChatRelay()
        relay.stream._tracker.max_text_chars = 20
        live, final = relay_run(relay, [data])
        return live, final, relay.done, relay.failure

    fast = run()
    with full_reading():
        assert run() == fast
    done = fast[2]
    assert isinstance(done, Done)
    assert done.stop_reason.value == "error"
