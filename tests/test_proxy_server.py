"""The proxy as a server: request-side fixes across turns, pass-through, operations.

Every test runs the proxy under uvicorn on 127.0.0.1 (port 0) in front of a fake upstream
on its own port (``_proxy_support.py``) that answers HTTP 400 to the histories the real
DeepSeek API rejects, and talks to it with the official SDKs or plain httpx.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from _proxy_support import (
    REASONING_ERROR,
    THINKING_ERROR,
    FakeUpstream,
    Reply,
    anthropic_client,
    chat_stream,
    openai_client,
    serving,
    sse_events,
    stack,
    wait_for,
)
from streamrepair.proxy import FIXES_HEADER, REFUSED_TOOL, ProxyConfig, create_app
from streamrepair.telemetry import TelemetryLog

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    },
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
    },
]


# -- DeepSeek across turns ----------------------------------------------------------------


def _naive_turn(client: openai.OpenAI, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One request the way many harnesses do it: the assistant message is rebuilt from
    the stream without ``reasoning_content`` and with ``content: None``; each call is
    answered. Returns the calls."""
    calls: dict[int, dict[str, Any]] = {}
    text = ""
    for chunk in client.chat.completions.create(
        model="deepseek-v4-flash", messages=messages, tools=TOOLS, stream=True
    ):
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for call in choice.delta.tool_calls or ():
                entry = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                entry["id"] = call.id or entry["id"]
                if call.function is not None:
                    entry["name"] = call.function.name or entry["name"]
                    entry["arguments"] += call.function.arguments or ""
    ordered = [calls[i] for i in sorted(calls)]
    messages.append(
        {
            "role": "assistant",
            "content": text or None,
            "tool_calls": [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for c in ordered
            ]
            or None,
        }
    )
    if not ordered:
        del messages[-1]["tool_calls"]
    for call in ordered:
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": "ok"})
    return ordered


def _script() -> list[Reply]:
    return [
        Reply(
            body=chat_stream(
                reasoning="The user wants the weather first.",
                calls=(("call_00_aaaa", "get_weather", '{"city": "Hangzhou", "days": "2",}'),),
            )
        ),
        Reply(
            body=chat_stream(
                reasoning="Now Suzhou, then save it.",
                calls=(
                    ("call_00_bbbb", "get_weather", '{"city": "Suzhou",}'),
                    (
                        "call_01_cccc",
                        "write_file",
                        '{"path": "[r.md](http://r.md)", "content": "x"}',
                    ),
                ),
            )
        ),
        Reply(body=chat_stream(reasoning="", content="Saved the report.")),
    ]


def test_deepseek_conversation_dropping_reasoning_gets_no_400() -> None:
    fake = FakeUpstream(script=_script())
    with stack(fake) as url:
        client = openai_client(base_url=f"{url}/v1", api_key="sk-test", max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather, then save."}]
        first = _naive_turn(client, messages)
        second = _naive_turn(client, messages)
        third = _naive_turn(client, messages)
    # What the client received: the repaired arguments, valid JSON.
    assert json.loads(first[0]["arguments"]) == {"city": "Hangzhou", "days": 2}
    assert [json.loads(c["arguments"]) for c in second] == [
        {"city": "Suzhou"},
        {"path": "r.md", "content": "x"},
    ]
    assert third == []
    # What the upstream received: the reasoning put back, content "" instead of null.
    sent = [r.body for r in fake.requests]
    assert len(sent) == 3
    turn1 = sent[1]["messages"][1]
    assert turn1["reasoning_content"] == "The user wants the weather first."
    assert turn1["content"] == ""
    later = sent[2]["messages"]
    assert later[1]["reasoning_content"] == "The user wants the weather first."
    assert later[3]["reasoning_content"] == "Now Suzhou, then save it."
    # Repair notes: in the tool message of the repaired call, once per rule and tool.
    tool_texts = [m["content"] for m in later if m["role"] == "tool"]
    assert "[streamrepair: arguments of get_weather were repaired]" in tool_texts[0]
    assert "- trailing_comma at" in tool_texts[0]
    assert "- parse_scalar_string at $.days" in tool_texts[0]
    assert "trailing_comma" not in tool_texts[1]  # the same rule for the same tool: noted once
    assert "- unwrap_autolink at $.path" in tool_texts[2]
    assert all(t.startswith("ok") for t in tool_texts)  # the tool's own output comes first
    # The client's own history was not touched.
    assert messages[1]["content"] is None
    assert "reasoning_content" not in messages[1]


def test_reasoning_of_a_non_streaming_turn_is_remembered() -> None:
    message = {
        "role": "assistant",
        "content": "",
        "reasoning_content": "Non-streamed thoughts.",
        "tool_calls": [
            {
                "id": "call_ns",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
            }
        ],
    }
    completion = {
        "id": "x",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
    }
    fake = FakeUpstream(script=[Reply(json=completion), Reply(body=chat_stream(content="Cold."))])
    with stack(fake) as url:
        client = openai_client(base_url=f"{url}/v1", api_key="sk-test", max_retries=0)
        history: list[dict[str, Any]] = [{"role": "user", "content": "Oslo?"}]
        raw = client.chat.completions.with_raw_response.create(
            model="deepseek-v4-flash", messages=history, tools=TOOLS
        )
        # nothing to change: as sent
        assert json.loads(raw.http_response.content) == completion
        call = {
            "id": "call_ns",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
        }
        history += [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_ns", "content": "-3"},
        ]
        list(
            client.chat.completions.create(
                model="deepseek-v4-flash", messages=history, tools=TOOLS, stream=True
            )
        )
    assert fake.requests[1].body["messages"][1]["reasoning_content"] == "Non-streamed thoughts."


def test_the_same_client_without_the_proxy_gets_the_400() -> None:
    fake = FakeUpstream(script=_script())
    with serving(fake.app()) as upstream:
        client = openai_client(base_url=f"{upstream}/v1", api_key="sk-test", max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather, then save."}]
        calls: dict[int, dict[str, Any]] = {}
        for chunk in client.chat.completions.create(
            model="deepseek-v4-flash", messages=messages, tools=TOOLS, stream=True
        ):
            for choice in chunk.choices:
                for call in choice.delta.tool_calls or ():
                    entry = calls.setdefault(call.index, {"id": "", "args": ""})
                    entry["id"] = call.id or entry["id"]
                    entry["args"] += (call.function.arguments or "") if call.function else ""
        # the broken JSON reaches the client as the model wrote it
        assert calls[0]["args"] == '{"city": "Hangzhou", "days": "2",}'
        call = {"id": calls[0]["id"], "type": "function"}
        call["function"] = {"name": "get_weather", "arguments": "{}"}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": calls[0]["id"], "content": "ok"})
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(
                model="deepseek-v4-flash", messages=messages, tools=TOOLS, stream=True
            )
    assert REASONING_ERROR in str(caught.value)


def test_unanswered_calls_are_answered_and_orphans_reported() -> None:
    reply = {"id": "x", "object": "chat.completion", "choices": []}
    fake = FakeUpstream(script=[Reply(json=reply), Reply(json=reply)], deepseek_rules=False)
    history = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{}"},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "write_file", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "user", "content": "and?"},
    ]
    with stack(fake) as url:
        answer = httpx.post(
            f"{url}/v1/chat/completions", json={"model": "gpt-x", "messages": history}
        )
        orphan = [*history[:3], {"role": "tool", "tool_call_id": "zz", "content": "?"}, history[3]]
        other = httpx.post(
            f"{url}/v1/chat/completions", json={"model": "gpt-x", "messages": orphan}
        )
    assert answer.status_code == 200
    assert answer.headers[FIXES_HEADER] == "unanswered_call_answered=1"
    sent = fake.requests[0].body["messages"]
    assert [m.get("tool_call_id") for m in sent] == [None, None, "c1", "c2", None]
    assert sent[3]["content"].startswith(
        "[streamrepair: write_file was not executed; status: not_started]"
    )
    assert other.headers[FIXES_HEADER] == "orphan_tool_message=1, unanswered_call_answered=1"
    assert fake.requests[1].body["messages"][3] == orphan[3]  # reported, left as it was


def test_anthropic_thinking_is_restored_for_deepseek() -> None:
    tool_turn = sse_events(
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "deepseek-v4-flash",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 5, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Read it first."},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "c2lnbmVk"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {
                "type": "input_json_delta",
                "partial_json": '{"file_path": "a.md", "limit": null}',
            },
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
        named=True,
    )
    done = sse_events(
        {
            "type": "message_start",
            "message": {
                "id": "msg_2",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [],
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "Done."},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 2},
        },
        {"type": "message_stop"},
        named=True,
    )
    tools = [
        {
            "name": "Read",
            "input_schema": {
                "type": "object",
                "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["file_path"],
                "additionalProperties": False,
            },
        }
    ]
    fake = FakeUpstream(script=[Reply(body=tool_turn), Reply(body=done)])
    with stack(fake) as url:
        client = anthropic_client(base_url=url, api_key="sk-ant-test", max_retries=0)
        first = client.messages.create(
            model="deepseek-v4-flash",
            max_tokens=100,
            tools=tools,
            stream=True,
            messages=[{"role": "user", "content": "read a.md"}],
        )
        blocks: dict[int, Any] = {}
        for event in first:
            if event.type == "content_block_start":
                blocks[event.index] = event.content_block
            elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                blocks[event.index].input = json.loads(event.delta.partial_json)
        use = next(b for b in blocks.values() if b.type == "tool_use")
        assert use.input == {"file_path": "a.md"}  # the null optional dropped in the stream
        # The client keeps only the tool_use block (thinking dropped).
        second = client.messages.create(
            model="deepseek-v4-flash",
            max_tokens=100,
            tools=tools,
            messages=[
                {"role": "user", "content": "read a.md"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": use.id, "name": "Read", "input": use.input}
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "hello"}],
                },
            ],
            stream=True,
        )
        text = "".join(
            e.delta.text
            for e in second
            if e.type == "content_block_delta" and e.delta.type == "text_delta"
        )
    assert text == "Done."
    sent = fake.requests[1].body["messages"]
    assert sent[1]["content"][0] == {
        "type": "thinking",
        "thinking": "Read it first.",
        "signature": "c2lnbmVk",
    }
    result = sent[2]["content"][0]["content"]
    assert result.startswith("hello\n\n[streamrepair: arguments of Read were repaired]")
    assert THINKING_ERROR  # the rule the fake applies (a 400 without the proxy's fix)


def test_anthropic_without_the_proxy_gets_the_thinking_400() -> None:
    fake = FakeUpstream()
    with serving(fake.app()) as upstream:
        client = anthropic_client(base_url=upstream, api_key="k", max_retries=0)
        with pytest.raises(anthropic.BadRequestError, match="thinking mode must be passed back"):
            client.messages.create(
                model="deepseek-v4-flash",
                max_tokens=10,
                messages=[
                    {"role": "user", "content": "x"},
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {}}],
                    },
                    {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": "t", "content": "y"}],
                    },
                ],
            )


# -- streaming behaviour ------------------------------------------------------------------


def _slow_text_stream(pieces: int) -> bytes:
    return chat_stream(content="x" * pieces, piece=1, model="gpt-test")


def test_text_goes_out_before_the_upstream_finishes() -> None:
    fake = FakeUpstream(script=[Reply(body=_slow_text_stream(40), chunk=200, delay=0.05)])
    with stack(fake) as url:
        body = {
            "model": "gpt-test",
            "messages": [{"role": "user", "content": "hi"}],
            "stream": True,
        }
        with httpx.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
            lines = response.iter_lines()
            first = next(line for line in lines if '"content": "x"' in line)
            finished_then = fake.streams_finished
            rest = list(lines)
    assert first.startswith("data: ")
    assert finished_then == 0  # the first text arrived while the upstream was streaming
    assert rest[-2:] == ["data: [DONE]", ""]


def test_client_disconnect_closes_the_upstream_stream() -> None:
    fake = FakeUpstream(script=[Reply(body=_slow_text_stream(400), chunk=100, delay=0.05)])
    with stack(fake) as url:
        body = {
            "model": "gpt-test",
            "messages": [{"role": "user", "content": "hi"}],
            "stream": True,
        }
        with httpx.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
            for line in response.iter_lines():
                if '"content": "x"' in line:
                    break  # read one piece of text, then hang up
        assert wait_for(lambda: fake.streams_cancelled == 1)
        metrics = httpx.get(f"{url}/metrics").text
    assert fake.streams_finished == 0
    assert "streamrepair_proxy_client_disconnects_total 1" in metrics


def test_client_disconnect_before_the_first_token_closes_the_upstream() -> None:
    fake = FakeUpstream(script=[Reply(body=_slow_text_stream(10), chunk=10_000, delay=2.0)])
    with stack(fake) as url:
        body = {
            "model": "gpt-test",
            "messages": [{"role": "user", "content": "hi"}],
            "stream": True,
        }
        with httpx.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
            assert response.status_code == 200  # headers came; no token yet
        assert wait_for(lambda: fake.streams_cancelled == 1, 1.5)  # before the first chunk
    assert fake.streams_finished == 0


def test_client_disconnect_while_a_call_streams_sends_nothing_runnable() -> None:
    """The client hangs up while a call streams, after pieces of it reached the proxy: it
    got none of the call, and the upstream stream is closed. The upstream sends a
    keep-alive comment right after the call's first argument piece; the proxy passes
    comments on as they come and keeps the upstream's order, so a client that read the
    comment knows the piece before it reached the proxy. (A proxy that passed call pieces
    straight through fails here: the client then holds a piece of the call.)"""
    arguments = '{"path": "a.txt", "content": "' + "y" * 3000 + '"}'
    stream = chat_stream(calls=(("call_1", "write_file", arguments),), model="gpt-test")
    first_piece = stream.index(json.dumps(arguments[:5])[1:-1].encode())
    cut = stream.index(b"\n\n", first_piece) + 2
    stream = stream[:cut] + b": keep-alive\n\n" + stream[cut:]
    fake = FakeUpstream(script=[Reply(body=stream, chunk=300, delay=0.05)])
    received = b""
    with stack(fake) as url:
        body = {
            "model": "gpt-test",
            "messages": [{"role": "user", "content": "w"}],
            "stream": True,
            "tools": TOOLS,
        }
        with httpx.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
            for piece in response.iter_bytes():
                received += piece
                if b": keep-alive" in received:
                    break
        assert wait_for(lambda: fake.streams_cancelled == 1)
    assert b": keep-alive" in received  # read past the call's first piece
    assert b"tool_calls" not in received
    assert b"write_file" not in received
    assert fake.streams_finished == 0  # hung up while the call was still streaming


def test_upstream_breaking_mid_stream_drops_the_client_connection(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Issue 21: the client gets the failure as the upstream gave it, so a harness retries
    # the request as it would directly (Claude Code and OpenCode retry a dropped stream;
    # a notice and an error event made Claude Code keep the notice as its answer).
    body = chat_stream(
        content="partial", calls=(("call_1", "get_weather", '{"city": "Paris"}'),), model="m"
    )
    cut = body[: body.index(b"Paris")]

    class Broken(FakeUpstream):
        async def _stream(self, reply: Reply) -> Any:
            yield cut
            await asyncio.sleep(0.05)
            raise RuntimeError("upstream crashed")

    fake = Broken(script=[Reply(body=b"")])
    with stack(fake) as url:
        client = openai_client(base_url=f"{url}/v1", api_key="sk", max_retries=0)
        chunks: list[Any] = []
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], stream=True, tools=TOOLS
        )
        with pytest.raises(openai.APIConnectionError):
            chunks.extend(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "partial"  # what the upstream sent, and nothing the proxy made up
    assert not any(c.choices and c.choices[0].delta.tool_calls for c in chunks)
    assert not any(c.choices and c.choices[0].finish_reason for c in chunks)
    # passing the failure on is not an error of the proxy's: no traceback in the log
    assert not [r for r in caplog.records if r.exc_info], caplog.text


def test_oversized_arguments_are_withheld() -> None:
    stream = chat_stream(
        calls=(("call_1", "write_file", '{"path": "a", "content": "' + "z" * 500 + '"}'),),
        model="m",
    )
    fake = FakeUpstream(script=[Reply(body=stream)])
    with stack(fake, max_argument_chars=200) as url:
        client = openai_client(base_url=f"{url}/v1", api_key="sk", max_retries=0)
        chunks = list(
            client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "x"}], stream=True, tools=TOOLS
            )
        )
    calls = [
        call.function
        for c in chunks
        if c.choices
        for call in c.choices[0].delta.tool_calls or ()
        if call.function is not None
    ]
    # the refusal only, whole in one piece, naming the bound
    assert [f.name for f in calls] == [REFUSED_TOOL]
    assert "max_size=200" in json.loads(calls[0].arguments or "")["message"]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


# -- pass-through -------------------------------------------------------------------------


def test_other_paths_errors_and_unchanged_bodies_pass_through_untouched() -> None:
    """Other paths, error answers and non-streaming bodies with nothing to change go out
    as the upstream sent them; a non-streaming body with a call to withhold does not
    (``test_proxy_whole.py``)."""
    completion = {"id": "c", "object": "chat.completion", "choices": [], "x_vendor": {"a": 1}}
    unchanged = json.dumps(completion, indent=2).encode()  # not how the proxy would write it
    cut_message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_cut",
                "type": "function",
                "function": {
                    "name": "write_file",
                    "arguments": '{"path": "big.py", "content": "de',
                },
            }
        ],
    }
    cut = {
        "id": "c2",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": cut_message, "finish_reason": "length"}],
    }
    error = {"error": {"message": "Invalid model", "type": "invalid_request_error", "param": None}}
    fake = FakeUpstream(
        script=[
            Reply(body=unchanged, media_type="application/json"),
            Reply(json=cut),
            Reply(json=error, status=400),
        ],
        deepseek_rules=False,
    )
    request = {"model": "gpt-x", "messages": [{"role": "user", "content": "hi"}], "x_extra": [1]}
    raw = json.dumps(request, separators=(",", ":")).encode()
    with stack(fake) as url:
        headers = {
            "authorization": "Bearer sk-client",
            "content-type": "application/json",
            "x-custom": "1",
        }
        models = httpx.get(f"{url}/v1/models?limit=5", headers=headers)
        plain = httpx.post(f"{url}/v1/chat/completions", content=raw, headers=headers)
        judged = httpx.post(f"{url}/v1/chat/completions", content=raw, headers=headers)
        bad = httpx.post(f"{url}/v1/chat/completions", content=raw, headers=headers)
    assert models.json() == {"object": "list", "data": [{"id": "fake-model"}]}
    assert plain.content == unchanged  # byte for byte
    assert plain.headers["content-length"] == str(len(unchanged))
    message = judged.json()["choices"][0]["message"]
    [call] = message["tool_calls"]  # the cut-off call is never handed out: its refusal is
    assert call["function"]["name"] == REFUSED_TOOL
    assert "write_file was not executed" in call["function"]["arguments"]
    assert judged.headers["content-length"] == str(len(judged.content))
    assert bad.status_code == 400
    assert bad.json() == error
    assert FIXES_HEADER not in plain.headers
    seen = fake.requests
    assert seen[0].path == "/v1/models"
    assert seen[1].raw == raw  # nothing to fix: the same bytes
    assert seen[1].headers["authorization"] == "Bearer sk-client"
    assert seen[1].headers["x-custom"] == "1"


def test_one_date_and_one_server_header_on_every_answer() -> None:
    """The upstream's ``date`` and ``server`` are not passed on beside the ones uvicorn
    writes for the proxy (a client got two of each): streamed, judged, passed through and
    error answers carry one of each."""
    stream = chat_stream(calls=(("call_1", "get_weather", '{"city": "Paris"}'),), model="m")
    completion = {"id": "c", "object": "chat.completion", "choices": []}
    error = {"error": {"message": "Invalid model", "type": "invalid_request_error"}}
    fake = FakeUpstream(
        script=[Reply(body=stream), Reply(json=completion), Reply(json=error, status=400)],
        deepseek_rules=False,
    )
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}
    with stack(fake) as url:
        answers = [
            httpx.post(f"{url}/v1/chat/completions", json={**body, "stream": True}),
            httpx.post(f"{url}/v1/chat/completions", json=body),
            httpx.post(f"{url}/v1/chat/completions", json=body),
            httpx.get(f"{url}/v1/models"),
        ]
    assert [a.status_code for a in answers] == [200, 200, 400, 200]
    for answer in answers:
        assert answer.headers.get_list("date") == [answer.headers["date"]]
        assert answer.headers.get_list("server") == ["uvicorn"]


# -- operations ---------------------------------------------------------------------------


def test_proxy_token_guards_and_swaps_the_key() -> None:
    reply = {"id": "c", "object": "chat.completion", "choices": []}
    fake = FakeUpstream(script=[Reply(json=reply), Reply(json=reply)], deepseek_rules=False)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with stack(fake, token="proxy-secret", upstream_key="sk-upstream") as url:
        denied = httpx.post(f"{url}/v1/chat/completions", json=body)
        wrong = httpx.post(
            f"{url}/v1/chat/completions", json=body, headers={"authorization": "Bearer nope"}
        )
        swapped = httpx.post(
            f"{url}/v1/chat/completions",
            json=body,
            headers={"authorization": "Bearer proxy-secret"},
        )
        own = httpx.post(
            f"{url}/v1/chat/completions",
            json=body,
            headers={"x-streamrepair-token": "proxy-secret", "authorization": "Bearer sk-mine"},
        )
        health = httpx.get(f"{url}/healthz")
    assert denied.status_code == wrong.status_code == 401
    assert swapped.status_code == own.status_code == 200
    assert fake.requests[0].headers["authorization"] == "Bearer sk-upstream"
    assert fake.requests[1].headers["authorization"] == "Bearer sk-mine"
    assert "x-streamrepair-token" not in fake.requests[1].headers
    assert len(fake.requests) == 2
    assert health.json()["status"] == "ok"


def test_bounds_and_upstream_failures_get_protocol_errors() -> None:
    fake = FakeUpstream()
    with stack(fake, max_request_bytes=1000) as url:
        big = httpx.post(
            f"{url}/v1/messages",
            json={"model": "m", "messages": [{"role": "user", "content": "x" * 2000}]},
        )
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    with serving(create_app(ProxyConfig(upstream=f"http://127.0.0.1:{closed}"))) as url:
        down = httpx.post(f"{url}/v1/chat/completions", json={"model": "m", "messages": []})
    assert big.status_code == 413
    assert big.json()["type"] == "error"  # Anthropic's error shape on /v1/messages
    assert fake.requests == []
    assert down.status_code == 502
    assert down.json()["error"]["type"] == "upstream_error"


def test_access_log_has_no_secrets_and_counts_calls(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    stream = chat_stream(
        calls=(("call_1", "get_weather", '{"city": "Secret City",}'),), model="gpt-test"
    )
    fake = FakeUpstream(script=[Reply(body=stream)])
    caplog.set_level(logging.INFO, logger="streamrepair.proxy")
    telemetry = TelemetryLog(tmp_path / "telemetry.jsonl", harness="proxy")
    with stack(fake, telemetry=telemetry) as url:
        client = openai_client(base_url=f"{url}/v1", api_key="sk-very-secret", max_retries=0)
        list(
            client.chat.completions.create(
                model="gpt-test",
                messages=[{"role": "user", "content": "private words"}],
                stream=True,
                tools=TOOLS,
                extra_query={"key": "query-secret"},
            )
        )
        metrics = httpx.get(f"{url}/metrics").text
    lines = [r.getMessage() for r in caplog.records if r.name == "streamrepair.proxy"]
    record = json.loads(lines[-1])
    assert record["status"] == 200
    assert record["path"] == "/v1/chat/completions"
    assert record["calls_sent"] == 1
    assert record["model"] == "gpt-test"
    text = "\n".join(lines)
    for secret in ("sk-very-secret", "query-secret", "private words", "Secret City"):
        assert secret not in text
    assert 'streamrepair_proxy_repairs_total{model="gpt-test",rule="trailing_comma"} 1' in metrics
    assert 'streamrepair_proxy_tool_calls_total{model="gpt-test",outcome="repaired"} 1' in metrics
    # A counter without labels has its 0 sample, not only its HELP and TYPE lines.
    assert "streamrepair_proxy_client_disconnects_total 0" in metrics.splitlines()
    records = [json.loads(line) for line in (tmp_path / "telemetry.jsonl").read_text().splitlines()]
    assert [(r["harness"], r["model"], r["tool"], r["outcome"], r["rules"]) for r in records] == [
        ("proxy", "gpt-test", "get_weather", "repaired", ["trailing_comma"])
    ]
    assert "Secret City" not in (tmp_path / "telemetry.jsonl").read_text()  # no arguments
