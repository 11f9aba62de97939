"""The loop layer's own parts, without a harness: the scripted upstream speaks each wire
and ends each stream the way its :class:`Ending` says, the tap hands the harness what
the proxy sent and reads its ending, and ``run_loop``'s proxy starts and relays.
"""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import pytest
from harnessloop import ProxyProcess
from scripted import (
    MAX_MAIN_REQUESTS,
    SIDE_TEXT,
    Call,
    Ending,
    Reply,
    ScriptedUpstream,
    Wire,
    assistant_calls,
    tool_results,
)
from tap import StreamCall, StreamEnd, Tap, _events, stream_calls, stream_end, stream_text

PATHS: Final = {
    Wire.ANTHROPIC: "/v1/messages",
    Wire.CHAT: "/v1/chat/completions",
    Wire.RESPONSES: "/v1/responses",
}
TOOLS: Final = {
    Wire.ANTHROPIC: [{"name": "w", "input_schema": {"type": "object"}}],
    Wire.CHAT: [{"type": "function", "function": {"name": "w", "parameters": {"type": "object"}}}],
    Wire.RESPONSES: [{"type": "function", "name": "w", "parameters": {"type": "object"}}],
}
BROKEN: Final = '{"path": "a.txt", "content": "C:\\Users\\new'


def _post(
    url: str, wire: Wire, *, tools: bool = True, stream: bool = True
) -> tuple[int, bytes, bool]:
    """POST a request of ``wire`` to ``url`` (streaming unless ``stream`` is false):
    status, body, whether reading it broke off."""
    split = urlsplit(url)
    body: dict[str, Any] = {"model": "m", "stream": stream, "max_tokens": 100}
    body["messages" if wire is not Wire.RESPONSES else "input"] = [
        {"role": "user", "content": "go"}
    ]
    if tools:
        body["tools"] = TOOLS[wire]
    connection = http.client.HTTPConnection(split.hostname, split.port, timeout=30)
    headers = {"Content-Type": "application/json", "x-api-key": "k", "Authorization": "Bearer k"}
    connection.request("POST", PATHS[wire], json.dumps(body), headers)
    response = connection.getresponse()
    chunks, broken = [], False
    while True:
        try:
            data = response.read1(65536)
        except (http.client.HTTPException, OSError):
            broken = True
            break
        if not data:
            break
        chunks.append(data)
    connection.close()
    return response.status, b"".join(chunks), broken


def _arguments(wire: Wire, body: bytes) -> str:
    """The call's argument text, joined from its deltas."""
    pieces = []
    for _, data in _events(body):
        if not isinstance(data, dict):
            continue
        if wire is Wire.ANTHROPIC and data.get("type") == "content_block_delta":
            pieces.append(data["delta"].get("partial_json", ""))
        elif wire is Wire.CHAT:
            for choice in data.get("choices") or []:
                for call in choice["delta"].get("tool_calls") or []:
                    pieces.append(call["function"].get("arguments", ""))
        elif data.get("type") == "response.function_call_arguments.delta":
            pieces.append(data["delta"])
    return "".join(pieces)


NATURAL: Final = {
    Wire.ANTHROPIC: ("tool_use", "max_tokens"),
    Wire.CHAT: ("tool_calls", "length"),
    Wire.RESPONSES: ("completed", "incomplete:max_output_tokens"),
}


@pytest.mark.parametrize("wire", list(Wire), ids=lambda w: w.value)
@pytest.mark.parametrize("ending", list(Ending), ids=lambda e: e.value)
def test_each_wire_ends_the_way_the_reply_says(wire: Wire, ending: Ending) -> None:
    with ScriptedUpstream([Reply.call("w", BROKEN, id="c", ending=ending)]) as upstream:
        status, body, broken = _post(upstream.root_url, wire)
    assert status == 200
    assert _arguments(wire, body) == BROKEN  # broken JSON streamed as written
    assert broken is (ending is Ending.DROP)
    normal, length = NATURAL[wire]
    expected = {
        Ending.NORMAL: StreamEnd(normal, True),
        Ending.LENGTH: StreamEnd(length, True),
        Ending.DROP: StreamEnd(None, False),
        Ending.NO_STOP: StreamEnd(None, False),
        Ending.ERROR_EVENT: StreamEnd("error", False),
    }[ending]
    assert stream_end(wire, body) == expected
    # the call as a client reads it, its start even when its arguments were cut
    assert stream_calls(wire, body) == [StreamCall("c", "w", BROKEN)]


@pytest.mark.parametrize("wire", list(Wire), ids=lambda w: w.value)
def test_the_readers_read_a_whole_answer_as_a_stream(wire: Wire) -> None:
    """Claude Code falls back to a non-streamed request after some broken streams: the
    tap's readers take a whole JSON answer as they take a stream."""
    call = Call.of("w", {"path": "a.txt"}, id="c1")
    replies = [Reply(text="hello", calls=(call,)), Reply(text="hello")]
    with ScriptedUpstream(replies) as upstream:
        whole = [_post(upstream.root_url, wire, stream=False)[1] for _ in replies]
    with ScriptedUpstream(replies) as upstream:
        streamed = [_post(upstream.root_url, wire)[1] for _ in replies]
    for body, as_stream in zip(whole, streamed, strict=True):
        assert stream_calls(wire, body) == stream_calls(wire, as_stream)
    assert [c.name for c in stream_calls(wire, whole[0])] == ["w"]
    assert json.loads(stream_calls(wire, whole[0])[0].arguments) == {"path": "a.txt"}
    assert [stream_end(wire, b) for b in whole] == [stream_end(wire, b) for b in streamed]
    if wire is not Wire.RESPONSES:  # the scripted Responses answer carries calls only
        assert stream_text(wire, whole[1]) == stream_text(wire, streamed[1]) == "hello"
    else:
        assert stream_text(wire, streamed[1]) == "hello"


@pytest.mark.parametrize("wire", list(Wire), ids=lambda w: w.value)
def test_main_requests_take_the_script_in_order_and_side_requests_take_nothing(
    wire: Wire,
) -> None:
    script = [Reply(text="first"), Reply(text="second")]
    with ScriptedUpstream(script) as upstream:
        side = _post(upstream.root_url, wire, tools=False)[1]
        bodies = [_post(upstream.root_url, wire)[1] for _ in range(MAX_MAIN_REQUESTS)]
        over = _post(upstream.root_url, wire)
        exchanges = upstream.snapshot()
    assert SIDE_TEXT in side.decode()
    texts = [b.decode() for b in bodies]
    assert ["first" in texts[0], "second" in texts[1]] == [True, True]
    assert all("done" in text for text in texts[2:])
    assert over[0] == 400  # past the limit: no harness loops for ever
    assert [e.main_index for e in exchanges] == [None, *range(MAX_MAIN_REQUESTS + 1)]


def test_bodies_are_read_in_each_wire_shape() -> None:
    anthropic = {
        "messages": [
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "w", "input": {"a": 1}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t",
                        "content": [{"type": "text", "text": "ok"}],
                        "is_error": True,
                    }
                ],
            },
        ]
    }
    chat = {
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [{"id": "c", "function": {"name": "w", "arguments": "{"}}],
            },
            {"role": "tool", "tool_call_id": "c", "content": "bad"},
        ]
    }
    responses = {
        "input": [
            {"type": "function_call", "call_id": "r", "name": "w", "arguments": "x"},
            {"type": "function_call_output", "call_id": "r", "output": "out"},
        ]
    }
    assert [(r.call_id, r.text, r.is_error) for r in tool_results(Wire.ANTHROPIC, anthropic)] == [
        ("t", "ok", True)
    ]
    assert [(r.call_id, r.text) for r in tool_results(Wire.CHAT, chat)] == [("c", "bad")]
    assert [(r.call_id, r.text) for r in tool_results(Wire.RESPONSES, responses)] == [("r", "out")]
    assert assistant_calls(Wire.ANTHROPIC, anthropic) == [
        {"id": "t", "name": "w", "arguments": '{"a": 1}'}
    ]
    assert assistant_calls(Wire.CHAT, chat)[0]["arguments"] == "{"
    assert assistant_calls(Wire.RESPONSES, responses)[0]["arguments"] == "x"


@pytest.mark.parametrize("wire", list(Wire), ids=lambda w: w.value)
def test_the_tap_hands_over_what_the_proxy_sent(wire: Wire, tmp_path: Path) -> None:
    """A valid call through ``streamrepair serve`` and the tap: the harness's side of
    the proxy sees the call and a normal ending."""
    reply = Reply(calls=(Call.of("w", {"path": "a.txt"}),))
    with (
        ScriptedUpstream([reply]) as upstream,
        ProxyProcess(upstream.root_url, tmp_path) as proxy,
        Tap(proxy.url) as tap,
    ):
        status, body, broken = _post(tap.url, wire)
        tapped = tap.snapshot()
    assert (status, broken) == (200, False)
    assert [t.body for t in tapped] == [body]
    assert json.loads(_arguments(wire, body)) == {"path": "a.txt"}
    assert stream_end(wire, body) == StreamEnd(NATURAL[wire][0], True)
    assert '"path": "/v1/' in proxy.log()  # its access log


def test_the_tap_resets_the_client_when_its_target_drops(tmp_path: Path) -> None:
    with (
        ScriptedUpstream([Reply.call("w", BROKEN, ending=Ending.DROP)]) as upstream,
        Tap(upstream.root_url) as tap,
    ):
        status, _, broken = _post(tap.url, Wire.CHAT)
    assert (status, broken) == (200, True)
    assert tap.snapshot()[0].broken
