"""Progressive arguments (``--stream-arguments``): the first call's arguments go out as
they become final, on Anthropic Messages and Responses; Chat Completions calls stay held.

Checked on generated streams (a long ``write_file``, one cut off mid-content, one with a
markdown-linked path, one the schema rejects after its content went out, a key written
twice, two calls, text around the call, a call nothing of which can stream, syntax
repairs) and on every fixture: the bytes a client receives parse to the same calls as
when every call is held; the same bytes at any chunking; what went out before the
verdict is a prefix of the final text and never valid JSON on its own; a streamed call
that ends rejected is never closed (no ``content_block_stop``, no ``output_item.done``)
and has a notice; and through the proxy the SDKs' stream events show a long write's
content grow while the upstream is still streaming.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _proxy_support import (
    FIXTURES,
    RELAYS,
    FakeUpstream,
    Reply,
    anthropic_client,
    chat_stream,
    openai_client,
    protocol_of,
    protocol_tools,
    relay_run,
    responses_ending,
    split,
    sse_events,
    stack,
)
from streamrepair import ToolCallReady, ToolCallStream
from streamrepair.proxy import (
    STREAM_ARGUMENTS_HEADER,
    ProgressiveArguments,
    Refusals,
    Relay,
    refused_verdicts,
    streamable_fields,
    usable_tools,
)

CHAT_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "content": {"type": "string"},
                    "mode": {"type": "integer"},
                },
                "required": ["path", "content"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "run_tests",
            "parameters": {
                "type": "object",
                "properties": {"paths": {"type": "array"}, "timeout": {"type": "number"}},
            },
        },
    },
]
CONTENT = "".join(
    f'Line {n}: the "quick" brown fox – naïve café \\ tab\there ✓\n' for n in range(60)
)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    text: str  # the argument text as the model writes it
    closed: bool = True  # the provider closed the call (False: cut off)


@dataclass(frozen=True)
class Case:
    name: str
    calls: tuple[Call, ...]
    stop: str = "tool_use"  # tool_use, end_turn or max_tokens
    before: str = ""  # text before the calls
    after: str = ""  # text after them
    streams: bool = True  # the first call's arguments go out before the verdict


WRITE = '{"path": "docs/notes.md", "content": ' + _json(CONTENT) + "}"
CASES = [
    Case("long-write", (Call("call_w1", "write_file", WRITE),), before="Writing it."),
    Case(
        "cut-off-mid-content",
        (Call("call_w2", "write_file", WRITE[: len(WRITE) // 2], closed=False),),
        stop="max_tokens",
    ),
    Case(
        "markdown-linked-path",
        (
            Call(
                "call_w3",
                "write_file",
                '{"path": "/p/[notes.md](http://notes.md)", "content": "hello\\nworld"}',
            ),
        ),
    ),
    Case(
        "rejected-after-its-content",
        (Call("call_w4", "write_file", '{"path": "a.md", "content": "abc", "mode": "rw"}'),),
    ),
    Case(
        "key-written-twice",
        (Call("call_w5", "write_file", '{"content": "first", "path": "a.md", "content": "x"}'),),
    ),
    Case(
        "two-calls",
        (
            Call("call_w6", "write_file", '{"path": "a.md", "content": "one\\ntwo"}'),
            Call("call_t6", "run_tests", '{"paths": ["tests/"], "timeout": 30}'),
        ),
    ),
    Case(
        "text-after-the-call",
        (Call("call_w7", "write_file", '{"path": "a.md", "content": "body"}'),),
        before="First.",
        after="And after it.",
    ),
    Case(
        "nothing-streamable-first",
        (
            Call("call_t8", "run_tests", '{"paths": ["a"], "timeout": 5}'),
            Call("call_w8", "write_file", '{"path": "a.md", "content": "x"}'),
        ),
        streams=False,
    ),
    Case(
        "syntax-repairs",
        (Call("call_w9", "write_file", '{"path": "a.md", "content": "x\ty", "mode": 420,}'),),
    ),
]


def anthropic_stream(case: Case) -> bytes:
    message = {
        "id": "msg_prog",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    index = 0

    def text_block(text: str) -> None:
        nonlocal index
        block = {"type": "text", "text": ""}
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        for piece in pieces(text, 4):
            delta = {"type": "text_delta", "text": piece}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
        index += 1

    if case.before:
        text_block(case.before)
    for call in case.calls:
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        for piece in pieces(call.text):
            delta = {"type": "input_json_delta", "partial_json": piece}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        if call.closed:
            events.append({"type": "content_block_stop", "index": index})
        index += 1
    if case.after:
        text_block(case.after)
    delta = {"stop_reason": case.stop, "stop_sequence": None}
    events.append({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 99}})
    events.append({"type": "message_stop"})
    return sse_events(*events, named=True)


def responses_stream(case: Case) -> bytes:
    response: dict[str, Any] = {"id": "resp_prog", "status": "in_progress", "output": []}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": response}]
    output: list[dict[str, Any]] = []

    def message(text: str) -> None:
        index = len(output)
        item_id = f"msg_{index}"
        item = {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant"}
        events.append(
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "content": []},
            }
        )
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        part = {"type": "output_text", "text": "", "annotations": []}
        events.append({"type": "response.content_part.added", **where, "part": part})
        for piece in pieces(text, 4):
            events.append({"type": "response.output_text.delta", **where, "delta": piece})
        events.append({"type": "response.output_text.done", **where, "text": text})
        events.append(
            {"type": "response.content_part.done", **where, "part": {**part, "text": text}}
        )
        done = {**item, "status": "completed", "content": [{**part, "text": text}]}
        events.append({"type": "response.output_item.done", "output_index": index, "item": done})
        output.append(done)

    if case.before:
        message(case.before)
    for call in case.calls:
        index = len(output)
        item = {
            "id": f"fc_{call.id}",
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": call.id,
            "name": call.name,
        }
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        for piece in pieces(call.text):
            events.append(
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "delta": piece,
                }
            )
        if call.closed:
            events.append(
                {
                    "type": "response.function_call_arguments.done",
                    "item_id": item["id"],
                    "output_index": index,
                    "arguments": call.text,
                }
            )
            done = {**item, "status": "completed", "arguments": call.text}
            events.append(
                {"type": "response.output_item.done", "output_index": index, "item": done}
            )
            output.append(done)
        else:
            output.append({**item, "arguments": call.text})
    if case.after:
        message(case.after)
    return responses_ending(events, response, output, incomplete=case.stop == "max_tokens")


def stream_of(protocol: str, case: Case) -> bytes:
    if protocol == "anthropic":
        return anthropic_stream(case)
    if protocol == "responses":
        return responses_stream(case)
    finish = {"tool_use": "tool_calls", "end_turn": "stop", "max_tokens": "length"}[case.stop]
    return chat_stream(
        content=case.before,
        calls=tuple((c.id, c.name, c.text) for c in case.calls),
        finish=finish,
        model="m",
        piece=7,
    )


def run(
    protocol: str,
    data: bytes,
    tools: Any,
    pieces: list[bytes] | None = None,
    *,
    on: bool = True,
    refusals: Refusals = Refusals.CALL,
) -> tuple[bytes, bytes, Relay]:
    """(what went out while streaming, at the end, the relay), arguments streamed (``on``)
    or held."""
    relay = RELAYS[protocol](tools=usable_tools(tools), stream_arguments=on, refusals=refusals)
    return (*relay_run(relay, [data] if pieces is None else pieces), relay)


def read_calls(protocol: str, data: bytes, tools: Any) -> tuple[list[Any], int, str | None]:
    """(ready calls, notices, raw stop reason) of what a client receives."""
    core = ToolCallStream(provider=RELAYS[protocol].provider, tools=tools)
    events = core.feed(data) + core.finish()
    text = "".join(getattr(e, "text", "") for e in events if type(e).__name__ == "TextDelta")
    calls = [(e.name, e.arguments) for e in events if isinstance(e, ToolCallReady)]
    assert core.done is not None
    return calls, text.count("[streamrepair: "), core.done.raw_stop_reason


def _events(data: bytes) -> list[dict[str, Any]]:
    out = []
    for block in data.decode("utf-8").split("\n\n"):
        for line in block.split("\n"):
            if line.startswith("data: ") and not line.startswith("data: [DONE]"):
                out.append(json.loads(line[6:]))
    return out


def streamed_text(protocol: str, data: bytes) -> dict[str, str]:
    """Argument text per call as the client accumulates it (Anthropic: per block index,
    Responses: per item id)."""
    texts: dict[str, str] = {}
    for event in _events(data):
        if protocol == "anthropic" and event.get("type") == "content_block_delta":
            delta = event["delta"]
            if delta.get("type") == "input_json_delta":
                key = str(event["index"])
                texts[key] = texts.get(key, "") + delta["partial_json"]
        elif protocol == "responses" and event.get("type") == (
            "response.function_call_arguments.delta"
        ):
            texts[event["item_id"]] = texts.get(event["item_id"], "") + event["delta"]
    return texts


PROTOCOLS = ("anthropic", "responses")
GENERATED = [(p, c) for p in PROTOCOLS for c in CASES]
GENERATED_IDS = [f"{p}-{c.name}" for p, c in GENERATED]


@pytest.mark.parametrize(("protocol", "case"), GENERATED, ids=GENERATED_IDS)
def test_progressive_and_held_give_the_same_calls(protocol: str, case: Case) -> None:
    tools = protocol_tools(protocol, CHAT_TOOLS)
    data = stream_of(protocol, case)
    live, final, relay = run(protocol, data, tools)
    held_live, held_final, held = run(protocol, data, tools, on=False)
    got = read_calls(protocol, live + final, tools)
    want = read_calls(protocol, held_live + held_final, tools)
    assert got[0] == want[0]  # the ready calls (a refusal, to an unlisted name, is none)
    if relay.streamed is not None and relay.streamed in {v.call_id for v in relay.refused()}:
        # The streamed call, left open, was refused: notices, and the upstream's stop
        # reason (refusal calls would end the turn with calls, and an SDK keeps the open
        # block in its final message); held, the refusals go out as calls.
        noticed = run(protocol, data, tools, on=False, refusals=Refusals.NOTICE)
        assert got == read_calls(protocol, noticed[0] + noticed[1], tools)
        assert got[1] == len(relay.refused())
        assert want[1] == 0
        assert len(held.refusal_calls()) == len(held.refused())
    else:
        assert got == want
    assert (relay.streamed is not None) is case.streams
    if not case.streams:  # nothing could stream: exactly the held bytes
        assert live + final == held_live + held_final


@pytest.mark.parametrize(("protocol", "case"), GENERATED, ids=GENERATED_IDS)
def test_never_a_byte_taken_back_and_never_runnable_early(protocol: str, case: Case) -> None:
    tools = protocol_tools(protocol, CHAT_TOOLS)
    live, final, relay = run(protocol, stream_of(protocol, case), tools)
    before = streamed_text(protocol, live)
    whole = streamed_text(protocol, live + final)
    for key, text in before.items():
        assert whole[key].startswith(text)  # later bytes only continue it
        with pytest.raises(json.JSONDecodeError):
            json.loads(text)  # on its own, never a value a client could run
    verdict = (
        next(v for v in relay.verdicts if v.call_id == relay.streamed) if relay.streamed else None
    )
    if verdict is None:
        assert before == {}
        return
    assert before  # the first call's arguments went out before its verdict
    key = next(iter(before))
    events = _events(live + final)
    if isinstance(verdict, ToolCallReady):
        assert json.loads(whole[key]) == verdict.arguments
        if case.name == "long-write":
            assert len(before[key]) > len(WRITE) * 0.8  # the content grew as it came
    else:  # withheld after its bytes went out: never closed, and a notice says why
        if protocol == "anthropic":
            assert not any(
                e["type"] == "content_block_stop" and str(e["index"]) == key for e in events
            )
        else:
            assert not any(
                e["type"] in ("response.output_item.done", "response.function_call_arguments.done")
                and (e.get("item_id") == key or e.get("item", {}).get("id") == key)
                for e in events
            )
            terminal = events[-1]["response"]["output"]
            assert all(i.get("id") != key for i in terminal)
        assert verdict in refused_verdicts(relay.verdicts)
        assert b"[streamrepair: write_file was not executed" in final


@pytest.mark.parametrize(("protocol", "case"), GENERATED, ids=GENERATED_IDS)
def test_one_byte_at_a_time_gives_the_same_bytes(protocol: str, case: Case) -> None:
    tools = protocol_tools(protocol, CHAT_TOOLS)
    data = stream_of(protocol, case)
    whole = run(protocol, data, tools)
    one = run(protocol, data, tools, [data[i : i + 1] for i in range(len(data))])
    assert whole[0] + whole[1] == one[0] + one[1]


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(GENERATED),
    st.lists(st.integers(min_value=1, max_value=30_000), max_size=30),
)
def test_random_splits_give_the_same_bytes(generated: tuple[str, Case], cuts: list[int]) -> None:
    protocol, case = generated
    tools = protocol_tools(protocol, CHAT_TOOLS)
    data = stream_of(protocol, case)
    whole = run(protocol, data, tools)
    other = run(protocol, data, tools, split(data, cuts))
    assert whole[0] + whole[1] == other[0] + other[1]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_chat_completions_calls_stay_held(case: Case) -> None:
    data = stream_of("chat", case)
    on = run("chat", data, CHAT_TOOLS)
    off = run("chat", data, CHAT_TOOLS, on=False)
    assert on[0] + on[1] == off[0] + off[1]
    assert on[2].streamed is None
    assert b"tool_calls" not in on[0]


def _fixture_tools(path: Path) -> Any:
    tools = path.with_name(path.name.split(".")[0] + ".tools.json")
    return json.loads(tools.read_text()) if tools.exists() else None


FIXTURE_CASES = [
    p
    for p in sorted(FIXTURES.glob("*.sse"))
    if protocol_of(p.read_bytes()) in ("chat", "anthropic", "responses")
]


@pytest.mark.parametrize("path", FIXTURE_CASES, ids=[p.name for p in FIXTURE_CASES])
def test_every_fixture_reads_the_same_streamed_or_held(path: Path) -> None:
    data = path.read_bytes()
    protocol = protocol_of(data)
    tools = _fixture_tools(path)
    on = run(protocol, data, tools)
    off = run(protocol, data, tools, on=False)
    assert read_calls(protocol, on[0] + on[1], tools) == read_calls(
        protocol, off[0] + off[1], tools
    )
    one = run(protocol, data, tools, [data[i : i + 1] for i in range(len(data))])
    assert on[0] + on[1] == one[0] + one[1]


# -- the emitter on its own -------------------------------------------------------------------


def test_streamable_fields_are_plain_strings_and_path_like_ones_are_known() -> None:
    schema = CHAT_TOOLS[0]["function"]["parameters"]
    fields = streamable_fields(schema)
    assert set(fields) == {"path", "content"}
    assert fields["path"][0] is True  # the check unwraps autolinks there
    assert fields["content"][0] is False
    assert (
        streamable_fields({"type": "object", "anyOf": [], "properties": {"a": {"type": "string"}}})
        == {}
    )
    assert streamable_fields({"type": "array"}) == {}
    assert (
        streamable_fields({"type": "object", "properties": {"a": {"type": ["string", "null"]}}})
        == {}
    )
    assert (
        streamable_fields({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}}})
        == {}
    )


def test_a_rejected_write_is_left_half_sent_and_the_rest_is_never_made_up() -> None:
    emitter = ProgressiveArguments(streamable_fields(CHAT_TOOLS[0]["function"]["parameters"]))
    core = ToolCallStream(provider="openai", tools=CHAT_TOOLS, previews=True)
    events = core.feed(chat_stream(calls=(("c", "write_file", WRITE[:300]),), model="m", piece=9))
    sent = "".join(emitter.feed(e) for e in events if type(e).__name__ == "ToolCallDelta")
    assert sent.startswith('{"path":"docs/notes.md","content":"Line 0')
    assert sent.endswith(emitter.sent[-20:])
    assert not sent.endswith('"')  # the prefix ends inside a string


# -- through the proxy, read by the SDKs --------------------------------------------------------


LONG = Case("ui", (Call("call_ui", "write_file", WRITE),), before="Writing.")


def test_anthropic_sdk_shows_the_write_grow_before_the_call_is_judged() -> None:
    """The SDK's ``input_json`` events carry the argument text as it comes (its
    ``snapshot``, parsed with jiter's partial mode, leaves an unfinished string out: it
    shows the content once the string closes; a UI shows the growing text)."""
    tools = protocol_tools("anthropic", CHAT_TOOLS)
    fake = FakeUpstream(
        script=[Reply(body=anthropic_stream(LONG), chunk=150, delay=0.01)], deepseek_rules=False
    )
    with stack(fake, stream_arguments=True) as url:
        client = anthropic_client(base_url=url, api_key="sk", max_retries=0)
        text = ""
        grown: list[int] = []
        finished_then: list[int] = []
        with client.messages.stream(
            model="m", max_tokens=9000, messages=[{"role": "user", "content": "w"}], tools=tools
        ) as stream:
            for event in stream:
                if event.type == "input_json":
                    text += event.partial_json
                    grown.append(text.count("Line "))
                    finished_then.append(fake.streams_finished)
            message = stream.get_final_message()
    assert len(grown) > 20
    assert grown == sorted(grown)
    middle = len(grown) // 2
    assert 0 < grown[middle] < 60  # part of the content, while...
    assert finished_then[middle] == 0  # ...the upstream was still streaming
    calls = [(b.name, b.input) for b in message.content if b.type == "tool_use"]
    assert calls == [("write_file", {"path": "docs/notes.md", "content": CONTENT})]
    assert json.loads(text) == calls[0][1]
    assert message.stop_reason == "tool_use"


def test_responses_sdk_shows_the_write_grow_before_the_call_is_judged() -> None:
    tools = protocol_tools("responses", CHAT_TOOLS)
    fake = FakeUpstream(
        script=[Reply(body=responses_stream(LONG), chunk=150, delay=0.01)], deepseek_rules=False
    )
    with stack(fake) as url:
        client = openai_client(base_url=f"{url}/v1", api_key="sk", max_retries=0)
        grown: list[int] = []
        finished_then: list[int] = []
        text = ""
        final = None
        for event in client.responses.create(
            model="m",
            input="w",
            stream=True,
            tools=tools,
            extra_headers={STREAM_ARGUMENTS_HEADER: "on"},
        ):
            if event.type == "response.function_call_arguments.delta":
                text += event.delta
                grown.append(len(text))
                finished_then.append(fake.streams_finished)
            elif event.type == "response.completed":
                final = event.response
    assert len(grown) > 20
    assert finished_then[len(grown) // 2] == 0
    assert final is not None
    calls = [(i.name, json.loads(i.arguments)) for i in final.output if i.type == "function_call"]
    assert calls == [("write_file", {"path": "docs/notes.md", "content": CONTENT})]
    assert json.loads(text) == calls[0][1]


CUT = Case(
    "cut",
    (Call("call_cut", "write_file", WRITE[: len(WRITE) // 2], closed=False),),
    stop="max_tokens",
)


def test_what_the_sdks_keep_of_a_streamed_call_that_was_cut_off() -> None:
    """Measured: the anthropic SDK's final message keeps the never-closed block with the
    input parsed so far (the reason progressive arguments are opt-in: a client that runs
    every ``tool_use`` of the final message whatever its stop reason would run it);
    the openai SDK's terminal response lists no call, and no ``output_item.done`` came."""
    fake = FakeUpstream(
        script=[Reply(body=anthropic_stream(CUT)), Reply(body=responses_stream(CUT))],
        deepseek_rules=False,
    )
    with stack(fake, stream_arguments=True) as url:
        client = anthropic_client(base_url=url, api_key="sk", max_retries=0)
        with client.messages.stream(
            model="m",
            max_tokens=9000,
            messages=[{"role": "user", "content": "w"}],
            tools=protocol_tools("anthropic", CHAT_TOOLS),
        ) as stream:
            stops = [e.index for e in stream if e.type == "content_block_stop"]
            message = stream.get_final_message()
        events = list(
            openai_client(base_url=f"{url}/v1", api_key="sk", max_retries=0).responses.create(
                model="m", input="w", stream=True, tools=protocol_tools("responses", CHAT_TOOLS)
            )
        )
    assert message.stop_reason == "max_tokens"
    tool = next(b for b in message.content if b.type == "tool_use")
    assert tool.input.get("path") == "docs/notes.md"  # parsed so far, never closed
    assert message.content.index(tool) not in stops
    assert "[streamrepair: write_file was not executed" in message.content[-1].text
    assert any(e.type == "response.function_call_arguments.delta" for e in events)
    assert not any(
        e.type == "response.output_item.done" and e.item.type == "function_call" for e in events
    )
    assert events[-1].type == "response.incomplete"
    assert [i.type for i in events[-1].response.output] == ["message"]


def test_the_header_turns_it_on_and_off_and_is_checked() -> None:
    fake = FakeUpstream(
        script=[Reply(body=anthropic_stream(LONG)), Reply(body=anthropic_stream(LONG))],
        deepseek_rules=False,
    )
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "w"}],
        "stream": True,
        "tools": protocol_tools("anthropic", CHAT_TOOLS),
    }
    with stack(fake, stream_arguments=True) as url:
        on = httpx.post(f"{url}/v1/messages", json=body).text
        off = httpx.post(
            f"{url}/v1/messages", json=body, headers={STREAM_ARGUMENTS_HEADER: "off"}
        ).text
        bad = httpx.post(
            f"{url}/v1/messages", json=body, headers={STREAM_ARGUMENTS_HEADER: "maybe"}
        )
    assert on.count("input_json_delta") > 20
    assert off.count("input_json_delta") == 1  # held: one delta with the whole input
    assert bad.status_code == 400
    assert all(STREAM_ARGUMENTS_HEADER not in seen.headers for seen in fake.requests)


def test_off_by_default() -> None:
    fake = FakeUpstream(script=[Reply(body=anthropic_stream(LONG))], deepseek_rules=False)
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "w"}],
        "stream": True,
        "tools": protocol_tools("anthropic", CHAT_TOOLS),
    }
    with stack(fake) as url:
        text = httpx.post(f"{url}/v1/messages", json=body).text
    assert text.count("input_json_delta") == 1


_REQUEST: dict[str, Any] = {
    "model": "m",
    "max_tokens": 9000,
    "messages": [{"role": "user", "content": "w"}],
    "tools": protocol_tools("anthropic", CHAT_TOOLS),
}


def _read(pieces: list[str], message: Any) -> tuple[list[str], list[dict[str, Any]], str]:
    """What an anthropic SDK client read: the ``input_json`` pieces as they came, the
    final message's content blocks, its stop reason."""
    return pieces, [b.model_dump() for b in message.content], message.stop_reason


def _sync_anthropic(url: str) -> tuple[list[str], list[dict[str, Any]], str]:
    client = anthropic_client(base_url=url, api_key="sk", max_retries=0)
    with client.messages.stream(**_REQUEST) as stream:
        pieces = [e.partial_json for e in stream if e.type == "input_json"]
        return _read(pieces, stream.get_final_message())


async def _async_anthropic(url: str) -> tuple[list[str], list[dict[str, Any]], str]:
    client = anthropic.AsyncAnthropic(base_url=url, api_key="sk", max_retries=0)
    try:
        async with client.messages.stream(**_REQUEST) as stream:
            pieces = [e.partial_json async for e in stream if e.type == "input_json"]
            return _read(pieces, await stream.get_final_message())
    finally:
        await client.close()


def test_async_sdk_reads_the_same() -> None:
    """The async client reads, piece for piece, what the sync one reads from the same
    stream: the write growing as it streams, and the same final message."""
    replies = [Reply(body=anthropic_stream(LONG), chunk=97) for _ in range(2)]
    fake = FakeUpstream(script=replies, deepseek_rules=False)
    with stack(fake, stream_arguments=True) as url:
        sync = _sync_anthropic(url)
        got = asyncio.run(_async_anthropic(url))
    assert got == sync
    pieces, content, stop = got
    assert len(pieces) > 20  # streamed, not held
    assert json.loads("".join(pieces)) == {"path": "docs/notes.md", "content": CONTENT}
    calls = [(b["name"], b["input"]) for b in content if b["type"] == "tool_use"]
    assert calls == [("write_file", {"path": "docs/notes.md", "content": CONTENT})]
    assert stop == "tool_use"


def test_openai_chat_sdk_gets_held_calls_with_the_option_on() -> None:
    stream = chat_stream(calls=(("c1", "write_file", WRITE),), model="m", piece=7)
    fake = FakeUpstream(script=[Reply(body=stream, chunk=97)], deepseek_rules=False)
    with stack(fake, stream_arguments=True) as url:
        client = openai_client(base_url=f"{url}/v1", api_key="sk", max_retries=0)
        deltas = [
            call
            for chunk in client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "w"}],
                stream=True,
                tools=CHAT_TOOLS,
            )
            for choice in chunk.choices
            for call in choice.delta.tool_calls or ()
        ]
    assert len(deltas) == 1  # one piece, once judged
    assert json.loads(deltas[0].function.arguments) == {"path": "docs/notes.md", "content": CONTENT}
