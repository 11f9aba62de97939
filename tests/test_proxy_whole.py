"""Non-streamed responses (``stream`` absent or false) judged like streamed ones.

``proxy/whole.py`` tells a whole JSON body to the protocol's relay as the stream that
would carry it and rewrites the body: repaired arguments, withheld calls replaced by the
notice, the stop reason as ``closing_stop`` says, everything else kept; a body with
nothing to change goes out byte for byte. Tested sans-IO (``judge_body``), against the
streaming relay on the same reply (the same decisions), and through the proxy under
uvicorn with the official ``openai`` and ``anthropic`` SDKs as clients.
"""

from __future__ import annotations

import asyncio
import copy
import gzip
import json
from typing import Any

import anthropic
import httpx
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _proxy_support import (
    RELAYS,
    FakeUpstream,
    Reply,
    anthropic_client,
    chat_stream,
    openai_client,
    protocol_tools,
    stack,
)
from streamrepair import RejectReason, ToolCallReady, ToolCallRejected
from streamrepair.proxy import (
    NOTICE_PREFIX,
    REFUSED_TOOL,
    ChatRelay,
    Refusals,
    Relay,
    judge_body,
)

PARAMETERS = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "limit": {"type": "integer"},
        "content": {"type": "string"},
    },
    "required": ["path"],
}
CHAT_TOOLS = [
    {"type": "function", "function": {"name": "read", "parameters": PARAMETERS}},
    {"type": "function", "function": {"name": "write", "parameters": PARAMETERS}},
]
TOOLS = {p: protocol_tools(p, CHAT_TOOLS) for p in ("chat", "anthropic", "responses")}
REPAIRABLE = '{"path": "notes.md", "limit": null,}'
CUT = '{"path": "big.py", "content": "def main():\\n    retu'


# -- bodies as the three APIs send them ----------------------------------------------------


def chat_body(
    calls: list[tuple[str, str, Any]], finish: str | None, *, content: str | None = None
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "reasoning_content": "Thinking it over.",
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in calls
        ],
    }
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "deepseek-v4-flash",
        "system_fingerprint": "fp_1",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
        "x_vendor": {"kept": [1, 2]},
    }


def anthropic_body(calls: list[tuple[str, str, Any]], stop: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": "Let me look.", "signature": "EqQBCgIYAhIM"},
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "x"},
        },
        {"type": "text", "text": "Reading it."},
    ]
    for call_id, name, value in calls:
        content.append(
            {"type": "tool_use", "id": call_id, "name": name, "input": value, "x_block": 7}
        )
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 9},
        "x_vendor": "kept",
    }


def responses_body(calls: list[tuple[str, str, Any]], status: str) -> dict[str, Any]:
    output: list[dict[str, Any]] = [
        {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "gAAAA"},
    ]
    for call_id, name, text in calls:
        output.append(
            {
                "id": f"fc_{call_id}",
                "type": "function_call",
                "status": "completed",
                "call_id": call_id,
                "name": name,
                "arguments": text,
            }
        )
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": status,
        "incomplete_details": ({"reason": "max_output_tokens"} if status == "incomplete" else None),
        "model": "gpt-x",
        "output": output,
        "parallel_tool_calls": True,
        "usage": {"input_tokens": 5, "output_tokens": 9, "total_tokens": 14},
        "x_vendor": "kept",
    }


def body_of(protocol: str, calls: list[tuple[str, str, str]], stop: str) -> dict[str, Any]:
    """A body of ``protocol`` with ``calls`` (argument text) ending with ``stop`` (the
    Chat spelling: ``tool_calls``, ``length``, ``stop``)."""
    if protocol == "chat":
        return chat_body(calls, stop)
    if protocol == "anthropic":
        objects = [(i, n, _as_input(a)) for i, n, a in calls]
        return anthropic_body(objects, _ANTHROPIC_STOPS[stop])
    return responses_body(calls, "incomplete" if stop == "length" else "completed")


_ANTHROPIC_STOPS = {"tool_calls": "tool_use", "length": "max_tokens", "stop": "end_turn"}


def _as_input(text: str) -> Any:
    """Anthropic sends ``input`` as an object; an argument text that is not JSON comes
    as the string an Anthropic-compatible server passed on."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def calls_of(protocol: str, body: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """(id, name, arguments value) of the calls in a body."""
    if protocol == "chat":
        message = body["choices"][0]["message"]
        return [
            (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in message.get("tool_calls") or ()
        ]
    if protocol == "anthropic":
        return [
            (b["id"], b["name"], b["input"]) for b in body["content"] if b["type"] == "tool_use"
        ]
    return [
        (i["call_id"], i["name"], json.loads(i["arguments"]))
        for i in body["output"]
        if i["type"] == "function_call"
    ]


def text_of(protocol: str, body: dict[str, Any]) -> str:
    if protocol == "chat":
        return str(body["choices"][0]["message"]["content"] or "")
    if protocol == "anthropic":
        return "".join(b["text"] for b in body["content"] if b["type"] == "text")
    return "".join(
        part["text"]
        for item in body["output"]
        if item["type"] == "message"
        for part in item["content"]
    )


def stop_of(protocol: str, body: dict[str, Any]) -> Any:
    if protocol == "chat":
        return body["choices"][0]["finish_reason"]
    if protocol == "anthropic":
        return body["stop_reason"]
    return (body["status"], body["incomplete_details"])


def judge(
    protocol: str, body: dict[str, Any], refusals: Refusals = Refusals.CALL
) -> tuple[dict[str, Any] | None, Relay]:
    relay = RELAYS[protocol](tools=TOOLS[protocol], refusals=refusals)
    data = json.dumps(body).encode()
    out = judge_body(relay, data)
    return (json.loads(out) if out is not None else None), relay


PROTOCOLS = ["chat", "anthropic", "responses"]


# -- judge_body, sans-IO -------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_repairable_call_is_repaired_and_the_rest_kept(protocol: str) -> None:
    body = body_of(protocol, [("call_1", "read", REPAIRABLE)], "tool_calls")
    before = copy.deepcopy(body)
    out, relay = judge(protocol, body)
    assert body == before  # nothing the caller passed is mutated
    assert out is not None
    assert calls_of(protocol, out) == [("call_1", "read", {"path": "notes.md"})]
    assert stop_of(protocol, out) == stop_of(protocol, body)
    # Everything else as the upstream sent it: ids, usage, unknown fields, reasoning,
    # thinking with its signature, server tool blocks.
    if protocol == "chat":
        assert out["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == (
            '{"path":"notes.md"}'
        )
        assert {k: v for k, v in out.items() if k != "choices"} == {
            k: v for k, v in body.items() if k != "choices"
        }
        message = out["choices"][0]["message"]
        assert message["reasoning_content"] == "Thinking it over."
        assert out["choices"][0]["logprobs"] is None
    elif protocol == "anthropic":
        assert out["content"][:3] == body["content"][:3]
        assert out["content"][3] == {**body["content"][3], "input": {"path": "notes.md"}}
        assert {k: v for k, v in out.items() if k != "content"} == {
            k: v for k, v in body.items() if k != "content"
        }
    else:
        assert out["output"][0] == body["output"][0]
        assert out["output"][1] == {**body["output"][1], "arguments": '{"path":"notes.md"}'}
        assert {k: v for k, v in out.items() if k != "output"} == {
            k: v for k, v in body.items() if k != "output"
        }
    # What the next request needs: the repairs as notes (and the turn's reasoning).
    memos = relay.memos()
    assert [m.call_id for m in memos] == ["call_1"]
    assert any(n.get("schema") == "drop_null" for n in memos[0].notes)
    if protocol == "chat":
        assert memos[0].reasoning == "Thinking it over."
    if protocol == "anthropic":
        assert memos[0].thinking == (body["content"][0],)


CUT_CASES = [
    # (protocol, stop as the upstream said, what the client gets with notices: the
    # upstream's own reason, but `stop` where it said calls and none is left; never an
    # output limit the upstream did not report)
    ("chat", "length", "length"),
    ("chat", "tool_calls", "stop"),  # truncation reported as a normal stop
    ("chat", "stop", "stop"),
    ("anthropic", "length", "max_tokens"),
    ("anthropic", "tool_calls", "end_turn"),
    ("responses", "length", ("incomplete", {"reason": "max_output_tokens"})),
    ("responses", "tool_calls", ("completed", None)),
]
#: What a turn whose cut call went out as a refusal ends with: one with calls.
TOOL_STOPS = {"chat": "tool_calls", "anthropic": "tool_use", "responses": ("completed", None)}


@pytest.mark.parametrize(("protocol", "stop", "expected"), CUT_CASES)
def test_a_cut_off_call_goes_out_refused(protocol: str, stop: str, expected: Any) -> None:
    body = body_of(protocol, [("call_1", "write", CUT)], stop)
    out, relay = judge(protocol, body)
    assert out is not None
    [verdict] = relay.verdicts
    assert isinstance(verdict, ToolCallRejected)
    assert verdict.reason is RejectReason.CUT_OFF
    [(call_id, name, arguments)] = calls_of(protocol, out)
    assert (call_id, name) == ("call_1", REFUSED_TOOL)  # nothing can run it
    assert arguments["refused_call"] == "write"
    assert arguments["reason"] == "cut_off"
    assert arguments["message"].startswith(f"{NOTICE_PREFIX}write was not executed")
    assert "retu" not in json.dumps(out)  # never the truncated arguments
    assert NOTICE_PREFIX not in text_of(protocol, out)
    assert stop_of(protocol, out) == TOOL_STOPS[protocol]  # the proxy changed the turn
    [memo] = relay.memos()
    assert (memo.call_id, memo.tool, memo.stand_in) == ("call_1", "write", "{}")
    assert memo.refusal == arguments["message"]


@pytest.mark.parametrize(("protocol", "stop", "expected"), CUT_CASES)
def test_a_cut_off_call_is_withheld_with_a_notice_when_asked(
    protocol: str, stop: str, expected: Any
) -> None:
    body = body_of(protocol, [("call_1", "write", CUT)], stop)
    out, relay = judge(protocol, body, Refusals.NOTICE)
    assert out is not None
    assert calls_of(protocol, out) == []
    text = text_of(protocol, out)
    assert text.count(NOTICE_PREFIX) == 1
    assert "write was not executed" in text
    assert "retu" not in text  # the notice, not the truncated arguments
    assert stop_of(protocol, out) == expected
    assert relay.memos() == []


def test_an_anthropic_call_at_the_output_limit_is_cut_off_though_its_input_parses() -> None:
    # A non-streamed Anthropic body brings input as an object, parsed by the server from
    # whatever the model wrote before the limit: the last block is unfinished.
    body = anthropic_body(
        [("toolu_1", "read", {"path": "a.md"}), ("toolu_2", "write", {"path": "big.py"})],
        "max_tokens",
    )
    out, relay = judge("anthropic", body)
    assert out is not None
    assert calls_of("anthropic", out)[0] == ("toolu_1", "read", {"path": "a.md"})
    assert calls_of("anthropic", out)[1][:2] == ("toolu_2", REFUSED_TOOL)
    assert [type(v) for v in relay.verdicts] == [ToolCallReady, ToolCallRejected]
    assert out["stop_reason"] == "tool_use"  # a call was sent: the harness runs it


def test_a_responses_call_item_marked_incomplete_is_cut_off() -> None:
    body = responses_body([("call_1", "read", '{"path": "a.md"}')], "incomplete")
    body["output"][1]["status"] = "incomplete"
    out, _ = judge("responses", body, Refusals.NOTICE)
    assert out is not None
    assert calls_of("responses", out) == []
    assert out["output"][-1]["id"] == "msg_streamrepair_1"
    assert out["status"] == "incomplete"  # as the upstream said: no call went out
    out, _ = judge("responses", body)
    assert out is not None
    assert [c[1] for c in calls_of("responses", out)] == [REFUSED_TOOL]
    assert (out["status"], out["incomplete_details"]) == ("completed", None)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_body_with_nothing_to_change_is_left_as_it_is(protocol: str) -> None:
    body = body_of(
        protocol, [("c1", "read", '{"path": "a.md"}'), ("c2", "read", '{"path":"b"}')], "tool_calls"
    )
    out, relay = judge(protocol, body)
    assert out is None
    assert [type(v) for v in relay.verdicts] == [ToolCallReady, ToolCallReady]
    assert [m.call_id for m in relay.memos()] == ["c1", "c2"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_unrepairable_calls_are_withheld_and_unlisted_tools_sent(protocol: str) -> None:
    calls = [("c1", "read", '{"path": "a.md"}'), ("c2", "read", '{"path": "a.md"]')]
    # (Anthropic: the input as the string an Anthropic-compatible server passed on.)
    out, _ = judge(protocol, body_of(protocol, calls, "tool_calls"))
    assert out is not None
    assert [c[:2] for c in calls_of(protocol, out)] == [("c1", "read"), ("c2", REFUSED_TOOL)]
    assert NOTICE_PREFIX not in text_of(protocol, out)
    # A tool the request does not list (Claude Code's deferred MCP tools): sent, with
    # the syntax repairs and no schema rules; the harness decides what to do with it.
    unlisted = [("c1", "read", '{"path": "a.md"}'), ("c3", "mcp__x__y", '{"a": null,}')]
    out, relay = judge(protocol, body_of(protocol, unlisted, "tool_calls"))
    assert [type(v) for v in relay.verdicts] == [ToolCallReady, ToolCallReady]
    assert out is not None
    assert calls_of(protocol, out) == [
        ("c1", "read", {"path": "a.md"}),
        ("c3", "mcp__x__y", {"a": None}),
    ]
    assert NOTICE_PREFIX not in text_of(protocol, out)
    broken = [("c3", "mcp__x__y", '{"a": 1]')]
    out, _ = judge(protocol, body_of(protocol, broken, "tool_calls"))
    assert out is not None
    [(_, name, arguments)] = calls_of(protocol, out)
    assert (name, arguments["refused_call"]) == (REFUSED_TOOL, "mcp__x__y")


def test_concatenated_values_become_calls_of_their_own() -> None:
    body = chat_body([("call_1", "read", '{"path":"a"}{"path":"b"}')], "tool_calls")
    out, _ = judge("chat", body)
    assert out is not None
    assert calls_of("chat", out) == [
        ("call_1", "read", {"path": "a"}),
        ("call_1v2", "read", {"path": "b"}),
    ]


def test_the_legacy_function_call_is_judged_in_its_own_shape() -> None:
    body = chat_body([], "function_call")
    message = body["choices"][0]["message"]
    del message["tool_calls"]
    message["function_call"] = {"name": "read", "arguments": '{"path": "a",}'}
    out, _ = judge("chat", body)
    assert out is not None
    assert out["choices"][0]["message"]["function_call"] == {
        "name": "read",
        "arguments": '{"path":"a"}',
    }
    assert out["choices"][0]["finish_reason"] == "function_call"
    message["function_call"] = {"name": "read", "arguments": '{"path": "a'}
    out, _ = judge("chat", body)
    assert out is not None
    assert out["choices"][0]["message"]["function_call"]["name"] == REFUSED_TOOL
    assert out["choices"][0]["finish_reason"] == "function_call"
    out, _ = judge("chat", body, Refusals.NOTICE)
    assert out is not None
    assert "function_call" not in out["choices"][0]["message"]
    assert out["choices"][0]["message"]["content"].startswith(NOTICE_PREFIX)
    assert out["choices"][0]["finish_reason"] == "stop"  # the upstream said function_call


def test_arguments_sent_as_an_object_are_kept_when_valid() -> None:
    body = chat_body([("call_1", "read", {"path": "a"})], "tool_calls")
    assert judge("chat", body)[0] is None
    body = chat_body([("call_1", "read", {"path": "a", "limit": None})], "tool_calls")
    out, _ = judge("chat", body)
    assert out is not None
    assert out["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == (
        '{"path":"a"}'
    )


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not json",
        b"[1, 2]",
        b'{"id": "c", "object": "chat.completion", "choices": []}',
        json.dumps(
            {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}]}
        ).encode(),
        json.dumps({**chat_body([("c", "read", CUT)], "length"), "choices": [{}, {}]}).encode(),
    ],
)
def test_bodies_without_calls_to_judge_are_left_alone(data: bytes) -> None:
    relay = ChatRelay(tools=TOOLS["chat"])
    assert judge_body(relay, data) is None
    assert relay.verdicts == ()


def test_a_responses_body_still_in_progress_is_left_alone() -> None:
    body = responses_body([("c", "read", CUT)], "in_progress")
    assert judge("responses", body)[0] is None


# -- the same decisions as the stream -------------------------------------------------------

_FRAGMENTS = [
    '{"path": "a.md"}',
    '{"path": "a.md", "limit": null,}',
    '{"path": "a.md", "limit": "5"}',
    '{"path": "a.md"',
    '{"path": "a',
    '{"path": "<http://x.md>"}',
    '{"path": "a"}{"path": "b"}',
    '```json\n{"path": "a"}\n```',
    '{"path": "a.md"]',
    "",
]


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=3),
    finish=st.sampled_from(["tool_calls", "length", "stop"]),
    piece=st.integers(min_value=1, max_value=9),
)
def test_a_chat_body_gets_the_decisions_its_stream_gets(
    texts: list[str], finish: str, piece: int
) -> None:
    calls = [(f"call_{k}", "read", t) for k, t in enumerate(texts)]
    streamed = ChatRelay(tools=TOOLS["chat"])
    sse = chat_stream(
        reasoning="Thinking it over.", content="Hm.", calls=tuple(calls), finish=finish, piece=piece
    )
    sent = b"".join(streamed.feed(sse) + streamed.finish() + streamed.final())
    out, whole = judge("chat", chat_body(calls, finish, content="Hm."))
    assert whole.verdicts == streamed.verdicts
    assert [m.to_dict() for m in whole.memos()] == [m.to_dict() for m in streamed.memos()]
    body = out if out is not None else chat_body(calls, finish, content="Hm.")
    # What the stream's client assembles: the same calls, arguments and finish reason.
    streamed_calls: dict[int, list[str]] = {}
    finish_sent = None
    for line in sent.decode().split("\n"):
        if not line.startswith("data: {"):
            continue
        for choice in json.loads(line[6:])["choices"]:
            finish_sent = choice.get("finish_reason") or finish_sent
            for call in choice["delta"].get("tool_calls") or ():
                entry = streamed_calls.setdefault(call["index"], ["", "", ""])
                entry[0] = call.get("id") or entry[0]
                entry[1] = call["function"].get("name") or entry[1]
                entry[2] += call["function"].get("arguments") or ""
    message = body["choices"][0]["message"]
    assert [
        (c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in message.get("tool_calls") or ()
    ] == [tuple(streamed_calls[k]) for k in sorted(streamed_calls)]
    assert body["choices"][0]["finish_reason"] == finish_sent


# -- through the proxy, read by the official SDKs -------------------------------------------


def _json(body: dict[str, Any]) -> Reply:
    # Sent whole, as these bytes (indented: a rewritten body would not be).
    return Reply(body=json.dumps(body, indent=1).encode(), media_type="application/json")


def test_openai_chat_sdk_gets_repaired_calls_and_notices() -> None:
    valid = chat_body([("call_v", "read", '{"path": "a.md"}')], "tool_calls")
    fake = FakeUpstream(
        script=[
            _json(chat_body([("call_r", "read", REPAIRABLE)], "tool_calls")),
            _json(chat_body([("call_l", "write", CUT)], "length")),
            _json(chat_body([("call_t", "read", '{"path": "a.txt", "limit": 1')], "tool_calls")),
            _json(valid),
            _json(chat_body([("call_a", "read", REPAIRABLE)], "tool_calls")),
        ],
        deepseek_rules=False,
    )
    with stack(fake) as url:
        client = openai_client(base_url=f"{url}/v1", api_key="sk-test", max_retries=0)
        ask: dict[str, Any] = {
            "model": "deepseek-v4-flash",
            "messages": [{"role": "user", "content": "go"}],
            "tools": CHAT_TOOLS,
        }
        repaired = client.chat.completions.create(**ask)
        cut = client.chat.completions.create(**ask)
        cut_stop = client.chat.completions.create(**ask)
        raw = client.chat.completions.with_raw_response.create(**ask)

        async def run_async() -> Any:
            async_client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="sk-test")
            async with async_client:
                return await async_client.chat.completions.create(**ask)

        repaired_async = asyncio.run(run_async())
    for answer in (repaired, repaired_async):
        [call] = answer.choices[0].message.tool_calls or []
        assert json.loads(call.function.arguments) == {"path": "notes.md"}
        assert answer.choices[0].finish_reason == "tool_calls"
        assert answer.choices[0].message.model_extra["reasoning_content"] == "Thinking it over."
        assert answer.model_extra["x_vendor"] == {"kept": [1, 2]}
        assert answer.usage is not None
        assert answer.usage.total_tokens == 30
    for answer in (cut, cut_stop):
        message = answer.choices[0].message
        [call] = message.tool_calls or []  # never a runnable call: the refusal stands for it
        assert call.function.name == REFUSED_TOOL
        assert json.loads(call.function.arguments)["message"].startswith(NOTICE_PREFIX)
        assert NOTICE_PREFIX not in (message.content or "")
        assert answer.choices[0].finish_reason == "tool_calls"
    # Nothing to change: the upstream's bytes, byte for byte, with their length.
    assert raw.http_response.content == json.dumps(valid, indent=1).encode()
    assert raw.http_response.headers["content-length"] == str(len(raw.http_response.content))
    assert raw.parse().choices[0].message.tool_calls[0].id == "call_v"


def test_anthropic_sdk_gets_repaired_inputs_and_notices() -> None:
    valid = anthropic_body([("toolu_v", "read", {"path": "a.md"})], "tool_use")
    fake = FakeUpstream(
        script=[
            _json(
                anthropic_body([("toolu_r", "read", {"path": "n.md", "limit": None})], "tool_use")
            ),
            _json(anthropic_body([("toolu_m", "write", {"path": "big.py"})], "max_tokens")),
            _json(anthropic_body([("toolu_s", "write", '{"path": "a",')], "tool_use")),
            _json(valid),
        ],
        deepseek_rules=False,
    )
    with stack(fake) as url:
        client = anthropic_client(base_url=url, api_key="sk-test", max_retries=0)
        ask: dict[str, Any] = {
            "model": "claude-x",
            "max_tokens": 100,
            "messages": [{"role": "user", "content": "go"}],
            "tools": TOOLS["anthropic"],
        }
        repaired = client.messages.create(**ask)
        cut = client.messages.create(**ask)
        cut_stop = client.messages.create(**ask)
        raw = client.messages.with_raw_response.create(**ask)
    uses = [b for b in repaired.content if b.type == "tool_use"]
    assert [(b.id, b.input) for b in uses] == [("toolu_r", {"path": "n.md"})]
    assert repaired.stop_reason == "tool_use"
    thinking = repaired.content[0]
    assert thinking.type == "thinking"
    assert thinking.signature == "EqQBCgIYAhIM"
    assert repaired.content[1].type == "server_tool_use"
    assert repaired.model_extra is not None
    assert repaired.model_extra["x_vendor"] == "kept"
    for answer in (cut, cut_stop):
        [use] = [b for b in answer.content if b.type == "tool_use"]
        assert use.name == REFUSED_TOOL
        assert use.input["message"].startswith(NOTICE_PREFIX)  # type: ignore[index]
        assert answer.stop_reason == "tool_use"
    assert raw.http_response.content == json.dumps(valid, indent=1).encode()


def test_openai_responses_sdk_gets_repaired_calls_and_notices() -> None:
    valid = responses_body([("call_v", "read", '{"path": "a.md"}')], "completed")
    fake = FakeUpstream(
        script=[
            _json(responses_body([("call_r", "read", REPAIRABLE)], "completed")),
            _json(responses_body([("call_i", "write", CUT)], "incomplete")),
            _json(responses_body([("call_c", "write", CUT)], "completed")),
            _json(valid),
        ],
        deepseek_rules=False,
    )
    with stack(fake) as url:
        client = openai_client(base_url=f"{url}/v1", api_key="sk-test", max_retries=0)
        ask: dict[str, Any] = {"model": "gpt-x", "input": "go", "tools": TOOLS["responses"]}
        repaired = client.responses.create(**ask)
        cut = client.responses.create(**ask)
        cut_stop = client.responses.create(**ask)
        raw = client.responses.with_raw_response.create(**ask)
    calls = [i for i in repaired.output if i.type == "function_call"]
    assert [(c.call_id, json.loads(c.arguments)) for c in calls] == [
        ("call_r", {"path": "notes.md"})
    ]
    assert repaired.status == "completed"
    assert repaired.output[0].type == "reasoning"
    assert repaired.output[0].encrypted_content == "gAAAA"
    for answer in (cut, cut_stop):
        [item] = [i for i in answer.output if i.type == "function_call"]
        assert item.name == REFUSED_TOOL
        assert json.loads(item.arguments)["message"].startswith(NOTICE_PREFIX)
        assert NOTICE_PREFIX not in answer.output_text
        assert answer.status == "completed"  # a call went out: the turn is one with calls
        assert answer.incomplete_details is None
    assert raw.http_response.content == json.dumps(valid, indent=1).encode()


def test_a_non_streamed_repair_reaches_the_next_request() -> None:
    """The memos of a judged body are stored like a stream's: the reasoning goes back
    for a client that drops it, and the repair notes into the tool message."""
    first = chat_body([("call_r", "read", REPAIRABLE)], "tool_calls")
    fake = FakeUpstream(script=[_json(first), Reply(body=chat_stream(content="Done."))])
    with stack(fake) as url:
        client = openai_client(base_url=f"{url}/v1", api_key="sk-test", max_retries=0)
        history: list[dict[str, Any]] = [{"role": "user", "content": "read it"}]
        answer = client.chat.completions.create(
            model="deepseek-v4-flash", messages=history, tools=CHAT_TOOLS
        )
        call = answer.choices[0].message.tool_calls[0]
        history += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": "read", "arguments": call.function.arguments},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call.id, "content": "ok"},
        ]
        list(
            client.chat.completions.create(
                model="deepseek-v4-flash", messages=history, tools=CHAT_TOOLS, stream=True
            )
        )
    sent = fake.requests[1].body["messages"]
    assert sent[1]["reasoning_content"] == "Thinking it over."
    assert "[streamrepair: arguments of read were repaired]" in sent[2]["content"]
    assert "drop_null" in sent[2]["content"]


def test_compressed_and_non_json_bodies_pass_untouched() -> None:
    body = json.dumps(chat_body([("c", "write", CUT)], "length")).encode()
    packed = gzip.compress(body)
    fake = FakeUpstream(
        script=[
            Reply(body=packed, media_type="application/json", headers={"content-encoding": "gzip"}),
            Reply(body=body, media_type="text/plain"),
        ],
        deepseek_rules=False,
    )
    ask = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": CHAT_TOOLS}
    with stack(fake) as url, httpx.Client() as client:
        zipped = client.post(f"{url}/v1/chat/completions", json=ask)
        plain = client.post(f"{url}/v1/chat/completions", json=ask)
    assert zipped.content == body  # decoded by httpx: the upstream's bytes, unjudged
    assert zipped.headers["content-encoding"] == "gzip"
    assert plain.content == body


def test_a_body_larger_than_the_bound_passes_unread() -> None:
    body = chat_body([("c", "write", CUT)], "length")
    body["x_pad"] = "p" * 5000
    data = json.dumps(body).encode()
    fake = FakeUpstream(
        script=[Reply(body=data, media_type="application/json")], deepseek_rules=False
    )
    ask = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": CHAT_TOOLS}
    with stack(fake, max_request_bytes=2000) as url:
        answer = httpx.post(f"{url}/v1/chat/completions", json=ask)
    assert answer.content == data
    assert answer.headers["content-length"] == str(len(data))


def test_an_anthropic_sdk_message_is_what_the_library_judges() -> None:
    """The whole body parses as the SDK's Message with anthropic's own types (no
    leftover shape from the rewrite)."""
    body = anthropic_body([("toolu_1", "read", {"path": "a", "limit": None})], "tool_use")
    out, _ = judge("anthropic", body)
    assert out is not None
    message = anthropic.types.Message.model_validate(out)
    assert message.content[-1].type == "tool_use"
    assert message.content[-1].input == {"path": "a"}
