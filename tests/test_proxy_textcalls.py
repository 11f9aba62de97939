"""Tool calls written as text, through the proxy (``--text-tool-calls``, or the
``x-streamrepair-text-tool-calls`` header): a server without a tool parser looks like one
that has it.

Every ``fixtures/sse/textcalls-*`` stream, as recorded (Chat Completions) and told in
the Anthropic and Responses protocols, is relayed: the relays alone whole, one byte at a
time and at random splits (the same bytes every time), and through the proxy read by the
official SDKs, sync and async, at odd chunkings. What the client receives must be the
text the stage leaves (markup removed), exactly the calls the library judges ready with
their arguments, as real calls of the protocol, a notice for each withheld one, and the
stop reason that says a call was sent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _proxy_support import (
    FIXTURES,
    RELAYS,
    FakeUpstream,
    anthropic_client,
    chat_as,
    openai_client,
    protocol_of,
    protocol_tools,
    relay_run,
    sent_calls,
    serving,
    split,
)
from streamrepair import (
    ReasoningDelta,
    TextDelta,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStream,
)
from streamrepair.proxy import (
    TEXT_CALLS_HEADER,
    ProxyConfig,
    create_app,
    refused_verdicts,
    usable_tools,
)

PROTOCOLS = ("chat", "anthropic", "responses")
#: Markers that must never reach the client as text when the stage is on.
MARKUP = (
    "<tool_call>",
    "<function=",
    "<arg_key>",
    "<｜tool▁calls▁begin｜>",
    "<｜DSML｜",
    "<|tool_calls_section_begin|>",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "<|channel|>commentary",
)


@dataclass(frozen=True)
class Case:
    name: str  # fixture file
    protocol: str
    fmt: str  # the text_tool_calls format
    tools: list[dict[str, Any]]  # in the protocol's shape
    body: bytes  # the upstream's stream in the protocol
    ready: list[tuple[str, Any]]
    calls: list[tuple[str, Any]]  # what a client gets: ready ones and refusals
    rejected: int
    text: str
    reasoning: str


def _chat_tools(path: Path, fmt: str) -> list[dict[str, Any]]:
    """The fixture's tools, or a tool with an open schema for each name a call is made to
    (the stage applies only to requests that declare tools)."""
    stem = path.name.split(".")[0]
    tools_file = path.with_name(stem + ".tools.json")
    if tools_file.exists():
        tools: list[dict[str, Any]] = json.loads(tools_file.read_text())
        return tools
    core = ToolCallStream(text_tool_calls=fmt)
    events = core.feed(path.read_bytes()) + core.finish()
    names = [e.name for e in events if isinstance(e, ToolCallReady | ToolCallRejected) and e.name]
    return [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
        for n in dict.fromkeys(names or ["unused_tool"])
    ]


def _case(path: Path, protocol: str) -> Case:
    stem = path.name.split(".")[0]
    fmt = json.loads(path.with_name(stem + ".options.json").read_text())["text_tool_calls"]
    tools = protocol_tools(protocol, _chat_tools(path, fmt))
    body = chat_as(protocol, path.read_bytes())
    core = ToolCallStream(tools=tools, text_tool_calls=fmt, provider=RELAYS[protocol].provider)
    events = core.feed(body) + core.finish()
    return Case(
        name=path.name,
        protocol=protocol,
        fmt=fmt,
        tools=tools,
        body=body,
        ready=[(e.name, e.arguments) for e in events if isinstance(e, ToolCallReady)],
        calls=sent_calls(events),
        rejected=len(
            refused_verdicts([e for e in events if isinstance(e, ToolCallReady | ToolCallRejected)])
        ),
        text="".join(e.text for e in events if isinstance(e, TextDelta)),
        reasoning="".join(e.text for e in events if isinstance(e, ReasoningDelta)),
    )


FILES = sorted(FIXTURES.glob("textcalls-*.sse"))
CASES = [_case(path, protocol) for path in FILES for protocol in PROTOCOLS]
IDS = [f"{c.protocol}-{c.name}" for c in CASES]


def test_the_cases_cover_calls_cut_offs_and_look_alikes() -> None:
    assert len(FILES) >= 15
    assert sum(len(c.ready) for c in CASES) > 60
    assert any(c.rejected for c in CASES)
    assert any(not c.ready and not c.rejected for c in CASES)  # look-alikes stay text
    assert any(c.reasoning for c in CASES)
    for protocol in PROTOCOLS:  # the same calls whichever protocol tells the reply
        chat = [c.ready for c in CASES if c.protocol == "chat"]
        assert [c.ready for c in CASES if c.protocol == protocol] == chat


# -- the relays alone -------------------------------------------------------------------------


def run(case: Case, pieces: list[bytes]) -> tuple[bytes, bytes]:
    """(what went out while streaming, what went out at the end)."""
    relay = RELAYS[case.protocol](tools=usable_tools(case.tools), text_tool_calls=case.fmt)
    return relay_run(relay, pieces)


@dataclass
class Read:
    """What a client reads from the bytes the relay sent (no text-call stage)."""

    calls: list[tuple[str, Any]] = field(default_factory=list)
    text: str = ""
    reasoning: str = ""
    stop: str | None = None


def read(case: Case, data: bytes) -> Read:
    core = ToolCallStream(
        provider=RELAYS[case.protocol].provider, tools=case.tools, reject_unknown_tools=False
    )
    events = core.feed(data) + core.finish()
    assert core.done is not None
    return Read(
        calls=[(e.name, e.arguments) for e in events if isinstance(e, ToolCallReady)],
        text="".join(e.text for e in events if isinstance(e, TextDelta)),
        reasoning="".join(e.text for e in events if isinstance(e, ReasoningDelta)),
        stop=core.done.raw_stop_reason,
    )


def check_read(case: Case, got: Read) -> None:
    assert got.calls == case.calls
    assert got.text.startswith(case.text)
    assert "[streamrepair: " not in got.text  # refusals go out as calls
    assert got.reasoning == case.reasoning
    for marker in MARKUP:
        if marker not in case.text:  # the look-alikes' markup is text as written
            assert marker not in got.text
            assert marker not in got.reasoning


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_client_gets_the_stage_text_and_the_calls(case: Case) -> None:
    live, final = run(case, [case.body])
    got = read(case, live + final)
    check_read(case, got)
    # No call goes out before the end; the stop reason says what was sent.
    for marker in (b'"tool_calls":[{', b'"type":"tool_use"', b'"type":"function_call"'):
        assert marker not in live
    if case.calls:  # ready ones, or refusals: a turn with calls
        assert got.stop in ("tool_calls", "tool_use", "completed")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_one_byte_at_a_time_gives_the_same_bytes(case: Case) -> None:
    whole = run(case, [case.body])
    data = case.body
    one = run(case, [data[i : i + 1] for i in range(len(data))])
    assert whole[0] + whole[1] == one[0] + one[1]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(CASES), st.lists(st.integers(min_value=1, max_value=20_000), max_size=25))
def test_random_splits_give_the_same_bytes(case: Case, cuts: list[int]) -> None:
    data = case.body
    whole = run(case, [data])
    other = run(case, split(data, cuts))
    assert whole[0] + whole[1] == other[0] + other[1]


def _events(data: bytes) -> list[dict[str, Any]]:
    out = []
    for event in data.decode("utf-8").split("\n\n"):
        for line in event.split("\n"):
            if line.startswith("data: ") and line[6:].strip() != "[DONE]":
                out.append(json.loads(line[6:]))
    return out


@pytest.mark.parametrize("case", [c for c in CASES if c.protocol == "anthropic"], ids=str)
def test_anthropic_blocks_are_well_formed_and_never_empty(case: Case) -> None:
    live, final = run(case, [case.body])
    started: dict[int, dict[str, Any]] = {}
    text: dict[int, str] = {}
    stopped: list[int] = []
    for event in _events(live + final):
        kind = event["type"]
        if kind == "content_block_start":
            assert event["index"] == len(started)  # positions in the final content
            assert not stopped or stopped[-1] == event["index"] - 1  # one block at a time
            started[event["index"]] = event["content_block"]
            text[event["index"]] = ""
        elif kind == "content_block_delta":
            assert event["index"] in started
            assert event["index"] not in stopped
            delta = event["delta"]
            text[event["index"]] += delta.get("text", "") + delta.get("thinking", "")
        elif kind == "content_block_stop":
            stopped.append(event["index"])
    assert sorted(stopped) == sorted(started)
    for index, block in started.items():
        if block["type"] in ("text", "thinking"):
            assert text[index], f"empty {block['type']} block {index}"


@pytest.mark.parametrize("case", [c for c in CASES if c.protocol == "responses"], ids=str)
def test_responses_items_are_numbered_and_listed_as_sent(case: Case) -> None:
    live, final = run(case, [case.body])
    events = _events(live + final)
    numbers = [e["sequence_number"] for e in events]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    done: list[dict[str, Any]] = []
    added: list[int] = []
    for event in events:
        if event["type"] == "response.output_item.added":
            assert event["output_index"] == len(added)
            added.append(event["output_index"])
        elif event["type"] == "response.output_item.done":
            done.append(event["item"])
        elif event["type"] == "response.output_text.done":
            item = next(e for e in events if e.get("item", {}).get("id") == event["item_id"])
            assert item  # the text it reports is the text its deltas carried
        if event["type"] in ("response.output_text.delta", "response.reasoning_text.delta"):
            assert event["delta"]
    terminal = events[-1]
    assert terminal["type"] in ("response.completed", "response.incomplete")
    assert terminal["response"]["output"] == done
    for item in done:
        if item["type"] == "message":
            assert all(part.get("text") for part in item["content"])


# -- through the proxy, read by the SDKs ------------------------------------------------------


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[FakeUpstream, str]]:
    fake = FakeUpstream(deepseek_rules=False)
    with serving(fake.app()) as url:
        yield fake, url


@pytest.fixture(scope="module")
def proxy(upstream: tuple[FakeUpstream, str]) -> Iterator[str]:
    """A proxy with text calls off by default: each request names its format."""
    with serving(create_app(ProxyConfig(upstream=upstream[1], access_log=False))) as url:
        yield url


@dataclass
class Received:
    calls: list[tuple[str, Any]] = field(default_factory=list)
    text: str = ""
    reasoning: str = ""
    stop: str | None = None


def _model(case: Case, chunk: int) -> str:
    return f"replay:{case.name}?as={case.protocol}&chunk={chunk}"


def run_sync(url: str, case: Case, chunk: int, headers: dict[str, str]) -> Received:
    got = Received()
    if case.protocol == "anthropic":
        client = anthropic_client(base_url=url, api_key="sk-test", max_retries=0)
        with client.messages.stream(
            model=_model(case, chunk),
            max_tokens=1024,
            messages=[{"role": "user", "content": "go"}],
            tools=case.tools,
            extra_headers=headers,
        ) as stream:
            for event in stream:
                if event.type == "text":
                    got.text += event.text
                elif event.type == "thinking":
                    got.reasoning += event.thinking
            message = stream.get_final_message()
        got.calls = [(b.name, b.input) for b in message.content if b.type == "tool_use"]
        assert got.text == "".join(b.text for b in message.content if b.type == "text")
        got.stop = message.stop_reason
        return got
    client_ = openai_client(base_url=f"{url}/v1", api_key="sk-test", max_retries=0)
    if case.protocol == "chat":
        items = client_.chat.completions.create(
            model=_model(case, chunk),
            messages=[{"role": "user", "content": "go"}],
            stream=True,
            tools=case.tools,
            extra_headers=headers,
        )
        chat_read(list(items), got)
        return got
    events = list(
        client_.responses.create(
            model=_model(case, chunk),
            input="go",
            stream=True,
            tools=case.tools,
            extra_headers=headers,
        )
    )
    responses_read(events, got)
    return got


def chat_read(items: list[Any], got: Received) -> None:
    """Text, reasoning and calls of a Chat Completions stream, from its chunks."""
    calls: dict[int, dict[str, str]] = {}
    for item in items:
        for choice in item.choices:
            delta = choice.delta
            got.text += delta.content or ""
            got.reasoning += getattr(delta, "reasoning_content", None) or ""
            for call in delta.tool_calls or ():
                entry = calls.setdefault(call.index, {"name": "", "arguments": ""})
                assert call.function is not None
                entry["name"] += call.function.name or ""
                entry["arguments"] += call.function.arguments or ""
            got.stop = choice.finish_reason or got.stop
    got.calls = [(c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())]


def responses_read(events: list[Any], got: Received) -> None:
    """Text, reasoning and calls of a Responses stream, from its events; the terminal
    response lists the items the events finished."""
    done = []
    for event in events:
        if event.type == "response.output_text.delta":
            got.text += event.delta
        elif event.type == "response.reasoning_text.delta":
            got.reasoning += event.delta
        elif event.type == "response.output_item.done":
            done.append(event.item)
    terminal = events[-1]
    assert terminal.type in ("response.completed", "response.incomplete")
    assert terminal.response.output == done
    got.calls = [(i.name, json.loads(i.arguments)) for i in done if i.type == "function_call"]
    got.stop = terminal.response.status


async def run_async(url: str, case: Case, chunk: int, headers: dict[str, str]) -> Received:
    got = Received()
    if case.protocol == "anthropic":
        client = anthropic.AsyncAnthropic(base_url=url, api_key="sk-test", max_retries=0)
        async with client.messages.stream(
            model=_model(case, chunk),
            max_tokens=1024,
            messages=[{"role": "user", "content": "go"}],
            tools=case.tools,
            extra_headers=headers,
        ) as stream:
            async for event in stream:
                if event.type == "thinking":
                    got.reasoning += event.thinking
            message = await stream.get_final_message()
        await client.close()
        got.text = "".join(b.text for b in message.content if b.type == "text")
        got.calls = [(b.name, b.input) for b in message.content if b.type == "tool_use"]
        got.stop = message.stop_reason
        return got
    client_ = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="sk-test", max_retries=0)
    try:
        if case.protocol == "chat":
            chunks = await client_.chat.completions.create(
                model=_model(case, chunk),
                messages=[{"role": "user", "content": "go"}],
                stream=True,
                tools=case.tools,
                extra_headers=headers,
            )
            chat_read([c async for c in chunks], got)
            return got
        stream_ = await client_.responses.create(
            model=_model(case, chunk),
            input="go",
            stream=True,
            tools=case.tools,
            extra_headers=headers,
        )
        responses_read([event async for event in stream_], got)
        return got
    finally:
        await client_.close()


def check(case: Case, got: Received) -> None:
    assert got.calls == case.calls, case.name
    assert got.text.startswith(case.text), case.name
    assert "[streamrepair: " not in got.text, case.name
    assert got.reasoning == case.reasoning, case.name
    if case.calls:
        assert got.stop in ("tool_calls", "tool_use", "completed")


@pytest.mark.parametrize("chunk", [7, 100_000])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_sync_sdks_get_calls_from_text(proxy: str, case: Case, chunk: int) -> None:
    check(case, run_sync(proxy, case, chunk, {TEXT_CALLS_HEADER: case.fmt}))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_async_sdks_get_calls_from_text(proxy: str, case: Case) -> None:
    check(case, asyncio.run(run_async(proxy, case, 13, {TEXT_CALLS_HEADER: case.fmt})))


def test_a_proxy_started_with_the_option_reads_text_calls(
    upstream: tuple[FakeUpstream, str],
) -> None:
    case = next(c for c in CASES if c.name == "textcalls-hermes-qwen3.sse" and c.protocol == "chat")
    config = ProxyConfig(upstream=upstream[1], access_log=False, text_tool_calls="auto")
    with serving(create_app(config)) as url:
        check(case, run_sync(url, case, 97, {}))
        # A request can turn it off: the markup is then text, as the model wrote it.
        off = run_sync(url, case, 97, {TEXT_CALLS_HEADER: "off"})
        assert off.calls == []
        assert "<tool_call>" in off.text
        # The header never reaches the upstream.
        assert all(TEXT_CALLS_HEADER not in seen.headers for seen in upstream[0].requests)


def test_off_by_default_and_without_tools(proxy: str) -> None:
    case = next(c for c in CASES if c.name == "textcalls-qwen3-coder.sse" and c.protocol == "chat")
    off = run_sync(proxy, case, 97, {})
    assert off.calls == []
    assert "<function=write_file>" in off.text
    # A request without tools: a call could not be run, so the markup stays text.
    client = openai_client(base_url=f"{proxy}/v1", api_key="sk-test", max_retries=0)
    text = ""
    for item in client.chat.completions.create(
        model=_model(case, 97),
        messages=[{"role": "user", "content": "go"}],
        stream=True,
        extra_headers={TEXT_CALLS_HEADER: "auto"},
    ):
        for choice in item.choices:
            assert not choice.delta.tool_calls
            text += choice.delta.content or ""
    assert "<function=write_file>" in text


def test_an_unknown_format_is_a_400_in_the_protocols_shape(proxy: str) -> None:
    response = httpx.post(
        f"{proxy}/v1/messages",
        json={"model": "m", "max_tokens": 1, "messages": [], "stream": True},
        headers={TEXT_CALLS_HEADER: "nonesuch"},
    )
    assert response.status_code == 400
    body = response.json()
    assert body["type"] == "error"
    assert "unknown text tool-call format 'nonesuch'" in body["error"]["message"]


def test_the_option_is_checked_when_the_proxy_starts() -> None:
    with pytest.raises(ValueError, match="unknown text tool-call format"):
        ProxyConfig(upstream="http://127.0.0.1:1", text_tool_calls="nonesuch")


# -- every other stream: the stage on changes nothing a client reads ---------------------------

OTHERS = [
    p
    for p in sorted(FIXTURES.glob("*.sse"))
    if not p.name.startswith("textcalls-") and protocol_of(p.read_bytes()) in PROTOCOLS
]


@pytest.mark.parametrize("path", OTHERS, ids=[p.name for p in OTHERS])
def test_streams_without_markup_read_the_same_with_the_stage_on(path: Path) -> None:
    """Every other fixture (structured calls, cut-offs, errors, thinking, server tools)
    relayed with ``auto``: the same calls, text and reasoning as with the stage off, and
    the same bytes one byte at a time."""
    data = path.read_bytes()
    protocol = protocol_of(data)
    stem = path.name.split(".")[0]
    tools_file = path.with_name(stem + ".tools.json")
    tools = json.loads(tools_file.read_text()) if tools_file.exists() else None

    def relayed(pieces: list[bytes], fmt: str | None) -> bytes:
        relay = RELAYS[protocol](tools=usable_tools(tools), text_tool_calls=fmt)
        return b"".join(relay_run(relay, pieces))

    def reading(out: bytes) -> tuple[Any, ...]:
        core = ToolCallStream(tools=tools)
        events = core.feed(out) + core.finish()
        return (
            [(e.name, e.arguments) for e in events if isinstance(e, ToolCallReady)],
            "".join(e.text for e in events if isinstance(e, TextDelta)),
            "".join(e.text for e in events if isinstance(e, ReasoningDelta)),
        )

    on = relayed([data], "auto")
    assert relayed([data[i : i + 1] for i in range(len(data))], "auto") == on
    assert reading(on) == reading(relayed([data], None))


@pytest.mark.parametrize("case", [c for c in CASES if c.protocol != "chat"], ids=str)
def test_calls_from_text_stream_their_arguments_too(case: Case) -> None:
    """With progressive arguments on as well, a call read from text streams like a
    structured one: the same calls and text as held, the same bytes at any chunking."""

    def streamed(pieces: list[bytes], on: bool) -> bytes:
        relay = RELAYS[case.protocol](
            tools=usable_tools(case.tools), text_tool_calls=case.fmt, stream_arguments=on
        )
        return b"".join(relay_run(relay, pieces))

    on = streamed([case.body], True)
    got = read(case, on)
    check_read(case, got)
    held = read(case, streamed([case.body], False))
    assert (got.calls, got.text, got.reasoning, got.stop) == (
        held.calls,
        held.text,
        held.reasoning,
        held.stop,
    )
    data = case.body
    assert streamed([data[i : i + 1] for i in range(len(data))], True) == on


def test_some_calls_from_text_do_stream() -> None:
    streamed = []
    for case in CASES:
        if case.protocol == "chat":
            continue
        relay = RELAYS[case.protocol](
            tools=usable_tools(case.tools), text_tool_calls=case.fmt, stream_arguments=True
        )
        relay.feed(case.body)
        relay.finish()
        relay.final()
        if relay.streamed is not None:
            streamed.append(case.name)
    assert {"textcalls-qwen3-coder.sse", "textcalls-glm45.sse"} <= set(streamed)
