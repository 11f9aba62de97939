"""Calls to tools a request does not list, through the proxy, at every protocol.

Claude Code (2.1.332, measured) sends only its built-in tools in ``tools``; the MCP tools
it defers (found through ToolSearch) are not there, yet it runs them when the model calls
them. So the proxy sends a call to a name the request does not list as a call, with the
syntax repairs and no schema rules (the harness decides what to do with a name it does
not know); a cut-off or unrepairable one is withheld like any other. ``schemas`` (the
``--schemas`` option) gives such tools their schema rules.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _proxy_support import (
    RELAYS,
    FakeUpstream,
    Reply,
    anthropic_client,
    call_stream,
    openai_client,
    protocol_tools,
    relay_run,
    split,
    stack,
)
from streamrepair import (
    RejectReason,
    StopReason,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStream,
)
from streamrepair.proxy import (
    REFUSED_TOOL,
    Relay,
    usable_tools,
    with_schemas,
)

PROTOCOLS = ("chat", "anthropic", "responses")
# What Claude Code lists: its built-in tools only (one here).
READ_TOOL = [
    {
        "type": "function",
        "function": {
            "name": "Read",
            "parameters": {
                "type": "object",
                "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["file_path"],
            },
        },
    }
]
MCP_NAME = "mcp__echo__echo"
MCP_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "repeat": {"type": "integer"}},
    "required": ["text"],
}
# A trailing comma (syntax), a null in an optional field (a schema rule's business).
BROKEN = '{"text": "hi", "repeat": null,}'
CUT = '{"text": "a long answer that never'


def run(protocol: str, pieces: list[bytes], tools: Any) -> tuple[bytes, Relay]:
    """(everything the relay sent, the relay)."""
    relay = RELAYS[protocol](tools=tools)
    return b"".join(relay_run(relay, pieces)), relay


def received(protocol: str, sent: bytes) -> list[Any]:
    """The calls a client reading ``sent`` gets (read back without any tool list)."""
    return read_back(protocol, sent)[0]


def read_back(protocol: str, sent: bytes) -> tuple[list[Any], StopReason | None]:
    """The calls a client reading ``sent`` gets, and the stop reason it reads."""
    core = ToolCallStream(provider="openai" if protocol == "chat" else protocol)
    events = core.feed(sent) + core.finish()
    calls = [e for e in events if isinstance(e, ToolCallReady | ToolCallRejected)]
    return calls, core.done.stop_reason if core.done is not None else None


# -- the relays ----------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_call_to_an_unlisted_tool_goes_out_with_syntax_repairs_only(protocol: str) -> None:
    tools = usable_tools(protocol_tools(protocol, READ_TOOL))
    data = call_stream(protocol, (("call_1", MCP_NAME, BROKEN),))
    sent, relay = run(protocol, [data], tools)
    (verdict,) = relay.verdicts
    assert isinstance(verdict, ToolCallReady)
    assert verdict.name == MCP_NAME
    assert verdict.arguments == {"text": "hi", "repeat": None}  # the null is not a syntax matter
    assert [r.kind.value for r in verdict.repairs] == ["trailing_comma"]
    assert verdict.schema_repairs == ()
    (got,), stop = read_back(protocol, sent)
    assert isinstance(got, ToolCallReady)
    assert (got.name, got.arguments, got.repairs) == (MCP_NAME, verdict.arguments, ())
    if protocol != "responses":  # (a Responses stream says "completed")
        assert stop is StopReason.TOOL_CALLS  # the harness runs it
    assert b"[streamrepair: " not in sent
    (memo,) = relay.memos()  # its repair notes go into the answer's tool message
    assert memo.tool == MCP_NAME
    assert [n.get("syntax") for n in memo.notes] == ["trailing_comma"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_listed_tool_keeps_its_schema_rules_beside_an_unlisted_one(protocol: str) -> None:
    tools = usable_tools(protocol_tools(protocol, READ_TOOL))
    calls = (
        ("call_1", "Read", '{"file_path": "a.md", "limit": null}'),
        ("call_2", MCP_NAME, BROKEN),
    )
    data = call_stream(protocol, calls)
    sent, relay = run(protocol, [data], tools)
    read, mcp = relay.verdicts
    assert isinstance(read, ToolCallReady)
    assert isinstance(mcp, ToolCallReady)
    assert read.arguments == {"file_path": "a.md"}  # null optional dropped by the schema
    assert mcp.arguments == {"text": "hi", "repeat": None}
    assert [(c.name, c.arguments) for c in received(protocol, sent)] == [
        ("Read", {"file_path": "a.md"}),
        (MCP_NAME, {"text": "hi", "repeat": None}),
    ]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_cut_off_call_to_an_unlisted_tool_is_still_withheld(protocol: str) -> None:
    tools = usable_tools(protocol_tools(protocol, READ_TOOL))
    data = call_stream(protocol, (("call_1", MCP_NAME, CUT),), cut=True)
    sent, relay = run(protocol, [data], tools)
    (verdict,) = relay.verdicts
    assert isinstance(verdict, ToolCallRejected)
    assert verdict.reason is RejectReason.CUT_OFF
    # only the refusal goes out, which no harness can run
    names = [c.name for c in received(protocol, sent) if isinstance(c, ToolCallReady)]
    assert names == [REFUSED_TOOL]
    assert f"[streamrepair: {MCP_NAME} was not executed".encode() in sent
    assert [(m.call_id, m.tool, m.stand_in) for m in relay.memos()] == [("call_1", MCP_NAME, "{}")]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_unrepairable_call_to_an_unlisted_tool_is_still_withheld(protocol: str) -> None:
    tools = usable_tools(protocol_tools(protocol, READ_TOOL))
    data = call_stream(protocol, (("call_1", MCP_NAME, '{"text": "a"]'),))
    sent, relay = run(protocol, [data], tools)
    (verdict,) = relay.verdicts
    assert isinstance(verdict, ToolCallRejected)
    assert verdict.reason is RejectReason.UNREPAIRABLE
    names = [c.name for c in received(protocol, sent) if isinstance(c, ToolCallReady)]
    assert names == [REFUSED_TOOL]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_given_schemas_bring_the_schema_rules_and_the_request_s_own_schema_wins(
    protocol: str,
) -> None:
    request_tools = protocol_tools(protocol, READ_TOOL)
    before = json.dumps(request_tools)
    # A given schema for Read that would forbid file_path: the request's own wins.
    schemas = {MCP_NAME: MCP_SCHEMA, "Read": {"type": "object", "additionalProperties": False}}
    tools = with_schemas(usable_tools(request_tools), schemas)
    assert json.dumps(request_tools) == before  # nothing the caller passed is mutated
    calls = (
        ("call_1", "Read", '{"file_path": "a.md", "limit": null}'),
        ("call_2", MCP_NAME, BROKEN),
    )
    data = call_stream(protocol, calls)
    _, relay = run(protocol, [data], tools)
    read, mcp = relay.verdicts
    assert isinstance(read, ToolCallReady)
    assert isinstance(mcp, ToolCallReady)
    assert read.arguments == {"file_path": "a.md"}
    assert mcp.arguments == {"text": "hi"}  # the given schema's rules now apply
    assert [n.rule.value for n in mcp.schema_repairs] == ["drop_null"]


def test_with_schemas_alone_and_without_any() -> None:
    assert with_schemas(None, None) is None
    assert with_schemas(None, {}) is None
    tools = [{"name": "a", "input_schema": {}}]
    assert with_schemas(tools, None) is tools
    assert with_schemas(None, {MCP_NAME: MCP_SCHEMA}) == [
        {"name": MCP_NAME, "input_schema": MCP_SCHEMA}
    ]


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(PROTOCOLS),
    st.lists(st.integers(min_value=1, max_value=4000), max_size=20),
)
def test_any_split_gives_the_same_bytes(protocol: str, cuts: list[int]) -> None:
    tools = usable_tools(protocol_tools(protocol, READ_TOOL))
    calls = (
        ("call_1", "Read", '{"file_path": "a.md", "limit": null}'),
        ("call_2", MCP_NAME, BROKEN),
    )
    data = call_stream(protocol, calls)
    whole, _ = run(protocol, [data], tools)
    other, _ = run(protocol, split(data, cuts), tools)
    assert whole == other
    one, _ = run(protocol, [data[i : i + 1] for i in range(len(data))], tools)
    assert whole == one


# -- through the server, with the official SDKs --------------------------------------------


def sdk_calls(protocol: str, url: str, tools: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """(name, arguments) of each call the official SDK client receives, and the stop."""
    messages = [{"role": "user", "content": "echo hi"}]
    if protocol == "chat":
        client = openai_client(base_url=f"{url}/v1", api_key="sk-test", max_retries=0)
        calls: dict[int, list[str]] = {}
        finish = None
        for chunk in client.chat.completions.create(
            model="fake-model", messages=messages, tools=tools, stream=True
        ):
            for choice in chunk.choices:
                finish = choice.finish_reason or finish
                for call in choice.delta.tool_calls or ():
                    entry = calls.setdefault(call.index, ["", ""])
                    if call.function is not None:
                        entry[0] += call.function.name or ""
                        entry[1] += call.function.arguments or ""
        return [(n, json.loads(a)) for n, a in (calls[i] for i in sorted(calls))] + [
            ("stop", finish)
        ]
    if protocol == "anthropic":
        aclient = anthropic_client(base_url=url, api_key="sk-test", max_retries=0)
        with aclient.messages.stream(
            model="fake-model", max_tokens=100, messages=messages, tools=tools
        ) as stream:
            message = stream.get_final_message()
        out: list[tuple[str, Any]] = [
            (b.name, b.input) for b in message.content if b.type == "tool_use"
        ]
        return [*out, ("stop", message.stop_reason)]
    rclient = openai_client(base_url=f"{url}/v1", api_key="sk-test", max_retries=0)
    with rclient.responses.stream(model="fake-model", input="echo hi", tools=tools) as stream:
        response = stream.get_final_response()
    out = [
        (item.name, json.loads(item.arguments))
        for item in response.output
        if item.type == "function_call"
    ]
    return [*out, ("stop", response.status)]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("given", [False, True], ids=["no-schemas", "schemas"])
def test_the_sdk_receives_the_unlisted_call(protocol: str, given: bool) -> None:
    data = call_stream(protocol, (("call_1", MCP_NAME, BROKEN),))
    fake = FakeUpstream(script=[Reply(body=data, chunk=7)], deepseek_rules=False)
    config: dict[str, Any] = {"schemas": {MCP_NAME: MCP_SCHEMA}} if given else {}
    with stack(fake, **config) as url:
        got = sdk_calls(protocol, url, protocol_tools(protocol, READ_TOOL))
    arguments = {"text": "hi"} if given else {"text": "hi", "repeat": None}
    stop = {"chat": "tool_calls", "anthropic": "tool_use", "responses": "completed"}[protocol]
    assert got == [(MCP_NAME, arguments), ("stop", stop)]


@pytest.mark.parametrize("given", [False, True], ids=["no-schemas", "schemas"])
def test_a_non_streamed_answer_gets_the_same_decision(given: bool) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": MCP_NAME, "arguments": BROKEN}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    body = {
        "id": "chatcmpl-u",
        "object": "chat.completion",
        "created": 1,
        "model": "fake-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
    }
    reply = Reply(body=json.dumps(body).encode(), media_type="application/json")
    fake = FakeUpstream(script=[reply], deepseek_rules=False)
    config: dict[str, Any] = {"schemas": {MCP_NAME: MCP_SCHEMA}} if given else {}
    with stack(fake, **config) as url:
        client = openai_client(base_url=f"{url}/v1", api_key="sk-test", max_retries=0)
        answer = client.chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": "echo hi"}],
            tools=protocol_tools("chat", READ_TOOL),
        )
    (got,) = answer.choices[0].message.tool_calls
    assert got.function.name == MCP_NAME
    want = {"text": "hi"} if given else {"text": "hi", "repeat": None}
    assert json.loads(got.function.arguments) == want
    assert answer.choices[0].finish_reason == "tool_calls"
