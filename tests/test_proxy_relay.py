"""The sans-IO relays, without servers: chunking invariance, what goes out when, and the
request-side fixes as pure functions."""

from __future__ import annotations

import ast
import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamrepair.proxy
from _proxy_support import (
    FIXTURES,
    RELAYS,
    chat_stream,
    protocol_of,
    relay_run,
    sent_calls,
    split,
)
from streamrepair import TextDelta, ToolCallReady, ToolCallStream
from streamrepair.proxy import (
    MAX_HELD_EVENTS,
    REFUSED_TOOL,
    AnthropicRelay,
    ApiProtocol,
    CallMemo,
    ChatRelay,
    HeldArguments,
    Refusals,
    Relay,
    argument_text,
    fix_request,
    referenced_calls,
    refused_verdicts,
    usable_tools,
)
from streamrepair.proxy._table import APIS, api_for

# The fixtures of the three protocols the proxy relays (not Gemini's native stream, say).
CASES = [
    p
    for p in sorted(FIXTURES.glob("*.sse"))
    if protocol_of(p.read_bytes()) in ("chat", "anthropic", "responses")
]


def _tools(path: Path) -> Any:
    tools = path.with_name(path.name.split(".")[0] + ".tools.json")
    return json.loads(tools.read_text()) if tools.exists() else None


def run(path: Path, pieces: list[bytes]) -> tuple[bytes, bytes, Relay]:
    """(what went out while streaming, what went out at the end, the relay)."""
    relay = RELAYS[protocol_of(path.read_bytes())](tools=usable_tools(_tools(path)))
    return (*relay_run(relay, pieces), relay)


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_byte_by_byte_gives_the_same_bytes(path: Path) -> None:
    data = path.read_bytes()
    whole = run(path, [data])
    one = run(path, [data[i : i + 1] for i in range(len(data))])
    assert whole[0] + whole[1] == one[0] + one[1]
    assert whole[2].verdicts == one[2].verdicts


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(CASES), st.lists(st.integers(min_value=1, max_value=50_000), max_size=30))
def test_random_splits_give_the_same_bytes(path: Path, cuts: list[int]) -> None:
    data = path.read_bytes()
    whole = run(path, [data])
    other = run(path, split(data, cuts))
    assert whole[0] + whole[1] == other[0] + other[1]


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_no_call_goes_out_before_it_is_judged(path: Path) -> None:
    live, final, relay = run(path, [path.read_bytes()])
    for marker in (b'"tool_calls":[{', b'"function_call":{', b'"type":"tool_use"'):
        if marker == b'"tool_calls":[{' and b"n2-choices" in path.name.encode():
            continue  # choice 1 is passed through as sent (only choice 0 is followed)
        assert marker not in live
    assert b"function_call_arguments" not in live
    # Reading what went out gives exactly the ready calls and, in place of each refused
    # one, the call to REFUSED_TOOL that stands for it (never a notice in the text).
    core = ToolCallStream(tools=_tools(path), reject_unknown_tools=False)  # as the relays
    events = core.feed(live + final) + core.finish()
    got = [(e.name, e.arguments) for e in events if isinstance(e, ToolCallReady)]
    assert got == sent_calls(relay.verdicts)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert "[streamrepair: " not in text
    # The memos say how to bring each refused call back in the next request.
    memos = {m.call_id: m for m in relay.memos()}
    for verdict in refused_verdicts(relay.verdicts):
        memo = memos[verdict.call_id]
        assert memo.tool == verdict.name
        assert memo.refusal is not None
        assert memo.refusal.startswith(f"[streamrepair: {verdict.name} was not executed")


def test_valid_json_goes_out_as_the_model_wrote_it() -> None:
    text = '{ "city" : "Paris",\n "days": 2 }'
    relay = ChatRelay()
    relay.feed(chat_stream(calls=(("c1", "get_weather", text),), model="m"))
    relay.finish()
    call = next(v for v in relay.verdicts if isinstance(v, ToolCallReady))
    assert argument_text(call) == text
    assert HeldArguments().finish(call) == text


@pytest.mark.parametrize(
    ("finish", "refusals", "expected"),
    [
        # the proxy sent a call (the refusal): the turn changed, it ends as one with calls
        ("tool_calls", Refusals.CALL, "tool_calls"),
        ("length", Refusals.CALL, "tool_calls"),
        ("stop", Refusals.CALL, "tool_calls"),
        # notices: no call went out; the upstream's reason stays, never an invented limit
        ("tool_calls", Refusals.NOTICE, "stop"),
        ("length", Refusals.NOTICE, "length"),
        ("stop", Refusals.NOTICE, "stop"),
    ],
)
def test_the_stop_reason_is_the_upstreams_unless_the_turn_changed(
    finish: str, refusals: Refusals, expected: str
) -> None:
    # Issue 21: a cut call under `tool_calls` used to reach the client as `length`, a
    # reason the upstream never gave (openai-python's stream() raises on it; Codex fails
    # the turn on the Responses equivalent).
    cut = chat_stream(
        calls=(("c1", "write_file", '{"path": "a", "content": "abc'),), finish=finish, model="m"
    )
    relay = ChatRelay(refusals=refusals)
    live, final = relay_run(relay, [cut])
    reasons = re.findall(rb'"finish_reason":\s*"(\w+)"', live + final)
    assert reasons == [expected.encode()]
    assert b"write_file" not in live  # nothing of the call went out before its verdict
    if refusals is Refusals.CALL:
        assert f'"name":"{REFUSED_TOOL}"'.encode() in final
        assert b"write_file was not executed" in final  # the guidance, in its arguments
    else:
        assert b"write_file was not executed" in final  # the guidance, as text
        assert REFUSED_TOOL.encode() not in final


# -- request-side fixes -------------------------------------------------------------------


def _history() -> dict[str, Any]:
    return {
        "model": "deepseek-v4-flash",
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "a", "content": "done"},
        ],
        "unknown_field": {"kept": True},
    }


def test_fixes_never_touch_what_the_caller_passed() -> None:
    body = _history()
    before = copy.deepcopy(body)
    memo = CallMemo(
        call_id="a",
        tool="f",
        notes=({"syntax": "trailing_comma", "offset": 3, "description": "x"},),
        reasoning="why",
    )
    fixes = fix_request(ApiProtocol.CHAT, body, {"a": memo})
    assert body == before
    assert fixes.body is not None
    sent = fixes.body["messages"]
    assert sent[1]["reasoning_content"] == "why"
    assert sent[1]["content"] == ""
    assert sent[2]["content"].startswith("done\n\n[streamrepair: arguments of f were repaired]")
    assert fixes.body["unknown_field"] == {"kept": True}
    assert fixes.counts == {"reasoning_restored": 1, "content_filled": 1, "repair_notes": 1}
    again = fix_request(ApiProtocol.CHAT, fixes.body, {"a": memo})
    assert again.body is None  # a fixed request needs nothing more
    assert referenced_calls(ApiProtocol.CHAT, body) == ["a"]


def test_a_clean_request_is_left_alone() -> None:
    body = _history()
    body["messages"][1]["content"] = ""
    body["messages"][1]["reasoning_content"] = ""
    assert fix_request(ApiProtocol.CHAT, body, {}).body is None
    body["model"] = "gpt-4.1"  # no reasoning rule: nothing is added
    del body["messages"][1]["reasoning_content"]
    assert fix_request(ApiProtocol.CHAT, body, {}).body is None


def test_r1_gets_its_reasoning_removed_and_others_get_none_added() -> None:
    body = _history()
    body["model"] = "deepseek-r1"
    body["messages"][1]["reasoning_content"] = "old"
    fixes = fix_request(ApiProtocol.CHAT, body, {})
    assert fixes.body is not None
    assert "reasoning_content" not in fixes.body["messages"][1]
    body["model"] = "mistral-large"
    del body["messages"][1]["reasoning_content"]
    memo = CallMemo(call_id="a", tool="f", reasoning="why")
    other = fix_request(ApiProtocol.CHAT, body, {"a": memo})
    assert other.body is not None  # only the null content
    assert "reasoning_content" not in other.body["messages"][1]


def test_responses_unanswered_calls_and_notes() -> None:
    body = {
        "model": "gpt-5",
        "input": [
            {"type": "message", "role": "user", "content": "go"},
            {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
            {"type": "function_call", "call_id": "b", "name": "g", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "a", "output": "fine"},
        ],
    }
    memo = CallMemo(
        call_id="a",
        tool="f",
        notes=({"schema": "drop_null", "path": ["x"], "before": "null", "after": "(removed)"},),
    )
    fixes = fix_request(ApiProtocol.RESPONSES, body, {"a": memo})
    assert fixes.body is not None
    items = fixes.body["input"]
    assert [i["type"] for i in items] == [
        "message",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    assert items[3]["call_id"] == "b"
    assert items[3]["output"].startswith("[streamrepair: g was not executed")
    assert "- drop_null at $.x" in items[4]["output"]
    assert fixes.counts == {"unanswered_call_answered": 1, "repair_notes": 1}


def test_the_table_has_one_row_per_api_and_routes_each_once() -> None:
    assert set(APIS) == set(ApiProtocol)
    for protocol, api in APIS.items():
        assert api.protocol is protocol
        assert api.relay.protocol is protocol
    routes = {
        ("POST", "/v1/chat/completions"): ApiProtocol.CHAT,
        ("POST", "/chat/completions/"): ApiProtocol.CHAT,
        ("POST", "/v1/messages"): ApiProtocol.ANTHROPIC,
        ("POST", "/anthropic/v1/messages"): ApiProtocol.ANTHROPIC,
        ("POST", "/v1/responses"): ApiProtocol.RESPONSES,
        ("POST", "/v1/messages/count_tokens"): None,
        ("GET", "/v1/responses"): None,
        ("POST", "/v1/embeddings"): None,
    }
    for (method, path), want in routes.items():
        api = api_for(method, path)
        assert (api.protocol if api is not None else None) is want, (method, path)


@pytest.mark.parametrize("module", ["app", "whole", "fixes"])
def test_the_shared_flows_name_no_api(module: str) -> None:
    """What differs per API is in its module: the shared flows reach it only through the
    table (no API module imported, no ApiProtocol member named)."""
    source = (Path(streamrepair.proxy.__file__).parent / f"{module}.py").read_text()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            assert node.module not in {"chat", "anthropic", "responses"}, node.module
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            assert node.value.id != "ApiProtocol", ast.unparse(node)


def test_what_is_held_after_the_end_is_bounded() -> None:
    stream = chat_stream(calls=(("c1", "get_weather", '{"city": "Oslo"}'),), model="m")
    end = stream.index(b"data: [DONE]")
    extra = b'data: {"choices": [], "usage": {"total_tokens": 1}}\n\n' * (MAX_HELD_EVENTS + 5)
    relay = ChatRelay()
    out = b"".join(relay.feed(stream[:end] + extra + stream[end:]))
    assert relay.ended
    final = b"".join(relay.final())
    assert b"tool_calls" not in out + final  # cut short: the call is withheld
    assert b"more than 1000 events after its end" in final
    assert len(final) < 10_000


def _payloads(data: bytes) -> list[dict[str, Any]]:
    out = []
    for event in data.decode("utf-8").split("\n\n"):
        lines = [line[6:] for line in event.split("\n") if line.startswith("data: ")]
        if lines and lines[0] != "[DONE]":
            out.append(json.loads("\n".join(lines)))
    return out


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_what_goes_out_keeps_the_protocol_grammar(path: Path) -> None:
    live, final, relay = run(path, [path.read_bytes()])
    chunks = _payloads(live + final)
    if relay.protocol is ApiProtocol.ANTHROPIC:
        started: list[int] = []
        for chunk in chunks:
            if chunk.get("type") == "content_block_start":
                assert chunk["index"] == len(started)  # positions in the final content
                started.append(chunk["index"])
            elif chunk.get("type") in ("content_block_delta", "content_block_stop"):
                assert chunk["index"] in started
    elif relay.protocol is ApiProtocol.RESPONSES:
        added = [c["output_index"] for c in chunks if c.get("type") == "response.output_item.added"]
        assert added == list(range(len(added)))
        numbers = [c["sequence_number"] for c in chunks if "sequence_number" in c]
        if numbers:  # counting on by one, whatever was withheld
            assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    else:
        indexes = [
            call["index"]
            for chunk in chunks
            for choice in chunk.get("choices") or ()
            if (choice.get("index") or 0) == 0
            for call in (choice.get("delta") or {}).get("tool_calls") or ()
        ]
        assert indexes == list(range(len(indexes)))


def test_a_text_block_after_a_withheld_tool_block_moves_up() -> None:
    events = [
        {
            "type": "message_start",
            "message": {
                "id": "m",
                "type": "message",
                "role": "assistant",
                "content": [],
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"a": 1,}'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "text_delta", "text": "after"},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 3},
        },
        {"type": "message_stop"},
    ]
    data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
    relay = AnthropicRelay()
    live = b"".join(relay.feed(data))
    final = b"".join(relay.final())
    sent = _payloads(live)
    assert [c.get("index") for c in sent if c["type"].startswith("content_block")] == [0, 0, 0]
    tail = _payloads(final)
    assert tail[0]["content_block"]["id"] == "t1"
    assert tail[0]["index"] == 1
    assert tail[1]["delta"]["partial_json"] == '{"a":1}'
    assert tail[-2]["delta"]["stop_reason"] == "tool_use"


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(CASES),
    st.lists(st.tuples(st.integers(0, 10**6), st.binary(max_size=8)), max_size=6),
    st.sampled_from(sorted(RELAYS)),
)
def test_damaged_streams_never_crash_a_relay(
    path: Path, damage: list[tuple[int, bytes]], protocol: str
) -> None:
    """Bytes cut, spliced or garbled anywhere, given to any relay: no exception, and what
    goes out is still SSE whose payloads parse (an error event at worst)."""
    data = bytearray(path.read_bytes())
    for at, junk in damage:
        at %= len(data) + 1
        data[at : at + len(junk)] = junk
    out = b"".join(relay_run(RELAYS[protocol](tools=usable_tools(_tools(path))), [bytes(data)]))
    for event in out.decode("utf-8", errors="replace").split("\n\n"):
        lines = [line[6:] for line in event.split("\n") if line.startswith("data: ")]
        if lines and not lines[0].startswith("[DONE]") and lines[0].strip()[:1] in "{[":
            payload = "\n".join(lines)
            if payload in data.decode("utf-8", errors="replace"):
                continue  # passed through as the upstream sent it
            json.loads(payload)  # written by the relay: always valid JSON
