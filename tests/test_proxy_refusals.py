"""Issue 21: a call the proxy will not send as runnable keeps the harness's loop going.

Measured in the real harnesses (docs/integrations/harness-loops.md): each answers a call
to a tool it does not have with its own error and goes on, and each retries a stream that
broke. So the proxy sends a refused call (cut off, unrepairable, invalid after repairs,
ambiguous escapes) as a call to ``REFUSED_TOOL`` whose arguments say what to do, ends the
turn as one with calls, and puts the call back as the model made it in the next request,
answered by its guidance; and it passes a failed stream on as it failed. Each behaviour
whole, at every byte and at random splits (the relays), then through the servers.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _proxy_support import (
    RELAYS,
    FakeUpstream,
    Reply,
    call_stream,
    protocol_tools,
    relay_run,
    sent_calls,
    split,
    stack,
)
from streamrepair import RejectReason, ToolCallReady, ToolCallRejected, ToolCallStream
from streamrepair.proxy import FIXES_HEADER, NOTICE_PREFIX, REFUSED_TOOL, Refusals

PROTOCOLS = ("chat", "anthropic", "responses")
WRITE = {
    "type": "function",
    "function": {
        "name": "write_file",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
            "additionalProperties": False,
        },
    },
}
CUT = '{"path": "notes.md", "content": "first line\\nsec'
INVALID = '{"path": "notes.md"}'  # content is required
AMBIGUOUS = '{"path": "run.bat", "content": "cd C:\\Users\\new\\tmp"}'
GOOD = '{"path": "a.md", "content": "x"}'
TWICE = '{"path": "a.md", "content": "x", "path": "b.md"}'  # a key written twice
TOOL_STOP = {"chat": "tool_calls", "anthropic": "tool_use", "responses": "completed"}
HARNESS_ERROR = f"Error: No such tool available: {REFUSED_TOOL}"


def tools(protocol: str) -> list[dict[str, Any]]:
    return protocol_tools(protocol, [WRITE])


def read(protocol: str, data: bytes) -> tuple[list[Any], str | None, str]:
    """The calls a client reading ``data`` gets, the stop reason, and the text."""
    provider = RELAYS[protocol].provider
    core = ToolCallStream(provider=provider, tools=tools(protocol), reject_unknown_tools=False)
    events = core.feed(data) + core.finish()
    assert core.done is not None
    calls = [e for e in events if isinstance(e, ToolCallReady | ToolCallRejected)]
    text = "".join(getattr(e, "text", "") for e in events if type(e).__name__ == "TextDelta")
    return calls, core.done.raw_stop_reason, text


def relayed(protocol: str, data: bytes, pieces: list[bytes] | None = None, **options: Any) -> Any:
    relay = RELAYS[protocol](tools=tools(protocol), **options)
    live, final = relay_run(relay, pieces or [data])
    return live, final, relay


# -- the relays -----------------------------------------------------------------------------

CASES = [
    # (name, calls, cut, upstream's claim, the reason the refused call gets)
    ("cut-at-limit", (("call_1", "write_file", CUT),), True, "length", RejectReason.CUT_OFF),
    ("cut-claimed-done", (("call_1", "write_file", CUT),), True, "tool", RejectReason.CUT_OFF),
    ("invalid", (("call_1", "write_file", INVALID),), False, "tool", RejectReason.INVALID),
    ("ambiguous", (("call_1", "write_file", AMBIGUOUS),), False, "tool", "ambiguous"),
    ("key-twice", (("call_1", "write_file", TWICE),), False, "tool", RejectReason.UNREPAIRABLE),
    (
        "ready-then-cut",
        (("call_1", "write_file", GOOD), ("call_2", "write_file", CUT)),
        True,
        "length",
        RejectReason.CUT_OFF,
    ),
]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_refused_call_goes_out_as_a_call_nothing_can_run(protocol: str, case: Any) -> None:
    _, calls, cut, said, reason = case
    data = call_stream(protocol, calls, cut=cut, stop=said)
    live, final, relay = relayed(protocol, data)
    assert b"write_file" not in live  # nothing of a call before its verdict
    got, stop, text = read(protocol, live + final)
    assert [(c.name, c.arguments) for c in got] == sent_calls(relay.verdicts)
    refused = got[-1]
    assert isinstance(refused, ToolCallReady)
    assert refused.name == REFUSED_TOOL
    assert refused.call_id == calls[-1][0]  # its id, so its answer finds it
    expected = RejectReason.AMBIGUOUS_ESCAPES if reason == "ambiguous" else reason
    assert refused.arguments["refused_call"] == "write_file"
    assert refused.arguments["reason"] == expected.value
    message = refused.arguments["message"]
    assert message.startswith(f"{NOTICE_PREFIX}write_file was not executed")
    assert "sec" not in json.dumps(refused.arguments)  # never the cut-off content
    assert NOTICE_PREFIX not in text  # not as text: the turn goes on
    # The proxy changed the turn: it ends as one with calls, which every harness runs.
    assert (stop or "").split(":")[0] == TOOL_STOP[protocol]
    memo = next(m for m in relay.memos() if m.call_id == calls[-1][0])
    assert (memo.tool, memo.refusal) == ("write_file", message)
    # what stands for the call in the next request: what the model finished, else {}
    stand_in = json.loads(memo.stand_in or "")
    if cut or expected is RejectReason.UNREPAIRABLE:
        assert stand_in == {}
    else:
        assert stand_in == json.loads(calls[-1][2].replace("\\U", "\\\\U"))
    if expected is RejectReason.UNREPAIRABLE:
        assert "each key written once" in message


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_refusals_are_the_same_at_every_split(protocol: str, case: Any) -> None:
    _, calls, cut, said, _ = case
    data = call_stream(protocol, calls, cut=cut, stop=said)
    whole = relayed(protocol, data)
    byte = relayed(protocol, data, [data[i : i + 1] for i in range(len(data))])
    assert whole[0] + whole[1] == byte[0] + byte[1]
    assert whole[2].memos() == byte[2].memos()


@settings(max_examples=40, deadline=None)
@given(
    protocol=st.sampled_from(PROTOCOLS),
    case=st.sampled_from(CASES),
    cuts=st.lists(st.integers(min_value=0), max_size=12),
)
def test_refusals_are_the_same_at_random_splits(protocol: str, case: Any, cuts: list[int]) -> None:
    _, calls, cut, said, _ = case
    data = call_stream(protocol, calls, cut=cut, stop=said)
    whole = relayed(protocol, data)
    other = relayed(protocol, data, split(data, cuts))
    assert whole[0] + whole[1] == other[0] + other[1]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_with_notices_the_stop_reason_is_never_invented(protocol: str) -> None:
    # Issue 21: a Responses stream that said `completed` over a cut call reached Codex as
    # `incomplete` (max_output_tokens), which fails its whole turn; a Chat one said
    # `length`, on which openai-python's stream() raises.
    data = call_stream(protocol, (("call_1", "write_file", CUT),), cut=True, stop="tool")
    live, final, relay = relayed(protocol, data, refusals=Refusals.NOTICE)
    got, stop, text = read(protocol, live + final)
    assert got == []
    assert text.count(NOTICE_PREFIX) == 1
    assert stop in ("stop", "end_turn", "completed")  # a normal end, not an invented limit
    assert relay.memos() == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_ambiguous_escapes_run_when_refusing_them_is_off(protocol: str) -> None:
    data = call_stream(protocol, (("call_1", "write_file", AMBIGUOUS),))
    live, final, _ = relayed(protocol, data, refuse_ambiguous_escapes=False)
    [call], _, _ = read(protocol, live + final)
    assert call.name == "write_file"
    assert call.arguments["content"] == "cd C:\\Users\n" + "ew\tmp"  # JSON's reading


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("cut", [False, True])
def test_a_stream_that_stops_before_its_end_ends_as_it_did(protocol: str, cut: bool) -> None:
    """No stop reason and no end marker: the upstream's connection closed early. The
    client gets what came, no call, no notice and no end the upstream did not send, so a
    harness retries as it would directly (Claude Code retries such a stream)."""
    calls = (("call_1", "write_file", CUT if cut else GOOD),)
    data = call_stream(protocol, calls, cut=cut, end=False)
    live, final, relay = relayed(protocol, data)
    assert REFUSED_TOOL.encode() not in live + final
    assert NOTICE_PREFIX.encode() not in live + final
    for end in (b'finish_reason":"', b"message_stop", b"response.completed", b"[DONE]"):
        assert end not in live + final
    assert [v.reason for v in relay.verdicts] == [RejectReason.STREAM_INCOMPLETE]
    assert relay.memos() == []


@pytest.mark.parametrize("protocol", ["chat", "anthropic"])
def test_an_upstream_error_event_is_passed_on_alone(protocol: str) -> None:
    fixture = {
        "chat": "openai-midstream-error.sse",
        "anthropic": "anthropic-error-event.sse",
    }[protocol]
    from _proxy_support import FIXTURES

    data = (FIXTURES / fixture).read_bytes()
    live, final, _ = relayed(protocol, data)
    assert NOTICE_PREFIX.encode() not in live + final
    assert REFUSED_TOOL.encode() not in live + final
    assert b"error" in final  # the upstream's own error event, as it sent it


# -- through the servers: the next request gets the call back --------------------------------


def _first(url: str, protocol: str, key: str) -> tuple[str, dict[str, Any], str]:
    """Ask once; (the refused call's id, its arguments, the text before it)."""
    headers = {"authorization": f"Bearer {key}", "x-api-key": key}
    if protocol == "chat":
        body: dict[str, Any] = {
            "model": "m",
            "stream": True,
            "messages": [{"role": "user", "content": "go"}],
        }
        path = "/v1/chat/completions"
    elif protocol == "anthropic":
        body = {"model": "m", "max_tokens": 50, "stream": True, "messages": []}
        body["messages"] = [{"role": "user", "content": "go"}]
        path = "/v1/messages"
    else:
        body = {"model": "m", "stream": True, "input": "go"}
        path = "/v1/responses"
    body["tools"] = tools(protocol)
    answer = httpx.post(url + path, json=body, headers=headers, timeout=30)
    assert answer.status_code == 200
    [call], _, text = read(protocol, answer.content)
    assert call.name == REFUSED_TOOL
    return call.call_id, call.arguments, text


def _second(protocol: str, call_id: str, arguments: dict[str, Any], name: str) -> dict[str, Any]:
    """The next request as a harness sends it: the call as it got it (or as the harness
    renamed it, as OpenCode does) answered with the harness's own error."""
    text = json.dumps(arguments)
    if protocol == "chat":
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}
        return {
            "model": "m",
            "stream": True,
            "tools": tools(protocol),
            "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": call_id, "content": HARNESS_ERROR},
            ],
        }
    if protocol == "anthropic":
        use = {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
        result = {
            "type": "tool_result",
            "tool_use_id": call_id,
            "content": HARNESS_ERROR,
            "is_error": True,
        }
        return {
            "model": "m",
            "max_tokens": 50,
            "stream": True,
            "tools": tools(protocol),
            "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [use]},
                {"role": "user", "content": [result]},
            ],
        }
    return {
        "model": "m",
        "stream": True,
        "tools": tools(protocol),
        "input": [
            {"role": "user", "content": "go"},
            {"type": "function_call", "call_id": call_id, "name": name, "arguments": text},
            {"type": "function_call_output", "call_id": call_id, "output": HARNESS_ERROR},
        ],
    }


def _sent_back(protocol: str, body: dict[str, Any]) -> tuple[str, Any, Any]:
    """(the call's name, its arguments, its answer) in a request the upstream got."""
    if protocol == "chat":
        call = body["messages"][1]["tool_calls"][0]["function"]
        return call["name"], call["arguments"], body["messages"][2]["content"]
    if protocol == "anthropic":
        use = body["messages"][1]["content"][0]
        return use["name"], use["input"], body["messages"][2]["content"][0]["content"]
    call, output = body["input"][1], body["input"][2]
    return call["name"], call["arguments"], output["output"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("renamed", [False, True], ids=["as-sent", "renamed-by-harness"])
def test_the_next_request_gets_the_call_back_with_the_guidance(
    protocol: str, renamed: bool
) -> None:
    cut = call_stream(protocol, (("call_9", "write_file", CUT),), cut=True)
    done = call_stream(protocol, (("call_10", "write_file", GOOD),))
    fake = FakeUpstream(script=[Reply(body=cut), Reply(body=done)], deepseek_rules=False)
    with stack(fake) as url:
        call_id, arguments, _ = _first(url, protocol, "sk-a")
        # OpenCode turns a call to a tool it does not have into its own `invalid` tool
        name = "invalid" if renamed else REFUSED_TOOL
        second = _second(protocol, call_id, arguments, name)
        before = json.dumps(second)
        answer = httpx.post(
            url
            + {"chat": "/v1/chat/completions", "anthropic": "/v1/messages"}.get(
                protocol, "/v1/responses"
            ),
            json=second,
            headers={"authorization": "Bearer sk-a", "x-api-key": "sk-a"},
            timeout=30,
        )
    assert answer.status_code == 200
    assert json.dumps(second) == before  # nothing the caller passed is mutated
    assert "refused_call_restored=1" in answer.headers[FIXES_HEADER]
    assert "refusal_answered=1" in answer.headers[FIXES_HEADER]
    name, args, result = _sent_back(protocol, fake.requests[1].body)
    assert name == "write_file"  # the tool the model called
    assert args == ({} if protocol == "anthropic" else "{}")  # never the cut fragment
    assert result == arguments["message"]  # the guidance, not the harness's error
    assert result.startswith(f"{NOTICE_PREFIX}write_file was not executed")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_without_the_memo_the_request_goes_as_the_harness_sent_it(protocol: str) -> None:
    """Another credential (or a store that lost it): the call stays the refusal, whose
    arguments still carry the guidance; the request is forwarded unchanged."""
    cut = call_stream(protocol, (("call_9", "write_file", CUT),), cut=True)
    done = call_stream(protocol, (("call_10", "write_file", GOOD),))
    fake = FakeUpstream(script=[Reply(body=cut), Reply(body=done)], deepseek_rules=False)
    with stack(fake) as url:
        call_id, arguments, _ = _first(url, protocol, "sk-a")
        second = _second(protocol, call_id, arguments, REFUSED_TOOL)
        path = {"chat": "/v1/chat/completions", "anthropic": "/v1/messages"}.get(
            protocol, "/v1/responses"
        )
        answer = httpx.post(
            url + path,
            json=second,
            headers={"authorization": "Bearer sk-b", "x-api-key": "sk-b"},
            timeout=30,
        )
    assert answer.status_code == 200
    assert FIXES_HEADER not in answer.headers
    name, _, result = _sent_back(protocol, fake.requests[1].body)
    assert (name, result) == (REFUSED_TOOL, HARNESS_ERROR)


# -- the SDKs' stream managers read a refused turn as a normal one --------------------------


def test_the_sdks_stream_managers_read_a_refused_cut_off_call_as_a_turn_with_calls() -> None:
    """Directly, openai-python's ``chat.completions.stream()`` raises
    ``LengthFinishReasonError`` on a Chat stream cut at the limit; through the proxy the
    turn ends with the refusal and ``tool_calls``, which every stream manager reads."""
    import openai
    import pydantic

    from _proxy_support import anthropic_client, openai_client

    class WriteFile(pydantic.BaseModel):
        path: str
        content: str

    cut = (("call_1", "WriteFile", CUT),)
    fake = FakeUpstream(
        script=[
            Reply(body=call_stream("chat", cut, cut=True)),
            Reply(body=call_stream("responses", cut, cut=True)),
            Reply(body=call_stream("anthropic", cut, cut=True)),
        ],
        deepseek_rules=False,
    )
    strict = openai.pydantic_function_tool(WriteFile)
    with stack(fake) as url:
        client = openai_client(base_url=f"{url}/v1", api_key="sk", max_retries=0)
        with client.chat.completions.stream(
            model="m", messages=[{"role": "user", "content": "go"}], tools=[strict]
        ) as stream:
            for _ in stream:
                pass
            chat = stream.get_final_completion().choices[0]
        with client.responses.stream(
            model="m",
            input="go",
            tools=protocol_tools(
                "responses", [{"type": "function", "function": {"name": "WriteFile"}}]
            ),
        ) as stream:
            for _ in stream:
                pass
            response = stream.get_final_response()
        with anthropic_client(base_url=url, api_key="sk", max_retries=0).messages.stream(
            model="m",
            max_tokens=50,
            messages=[{"role": "user", "content": "go"}],
            tools=protocol_tools(
                "anthropic", [{"type": "function", "function": {"name": "WriteFile"}}]
            ),
        ) as stream:
            for _ in stream:
                pass
            message = stream.get_final_message()
    assert chat.finish_reason == "tool_calls"
    [call] = chat.message.tool_calls or []
    assert (call.function.name, call.function.parsed_arguments) == (REFUSED_TOOL, None)
    assert response.status == "completed"
    assert [i.name for i in response.output if i.type == "function_call"] == [REFUSED_TOOL]
    assert message.stop_reason == "tool_use"
    assert [b.name for b in message.content if b.type == "tool_use"] == [REFUSED_TOOL]
