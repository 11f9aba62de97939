"""Every recorded stream through the proxy, read by the official SDKs (sync and async).

For each fixture in ``fixtures/sse`` and each Chat Completions, Anthropic or Responses
recording in ``../shared/corpus`` (skipped when absent): the fake upstream replays it,
the proxy relays it, and the ``openai`` / ``anthropic`` SDK reads it. What the SDK
receives must parse cleanly and carry exactly the calls the library judges ready, with
their repaired arguments, in order, and each call the proxy refuses as a call to
``REFUSED_TOOL`` in its place (``sent_calls``); the text is what the upstream streamed,
with no notice in it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from _proxy_support import (
    CORPUS,
    FIXTURES,
    FakeUpstream,
    anthropic_client,
    as_sse,
    openai_client,
    protocol_of,
    sent_calls,
    stack,
)
from streamrepair import TextDelta, ToolCallStream
from streamrepair.proxy import REFUSED_TOOL


@dataclass(frozen=True)
class Case:
    name: str  # path under fixtures/sse or the corpus
    protocol: str
    tools: list[dict[str, Any]] | None
    calls: list[tuple[str, Any]]
    text: str


def _case(name: str, path: Path) -> Case | None:
    data = path.read_bytes()
    sse = as_sse(data)
    if sse is None:
        return None
    protocol = protocol_of(sse)
    if protocol == "other":
        return None
    tools_file = path.with_name(path.name.split(".")[0] + ".tools.json")
    tools = json.loads(tools_file.read_text()) if tools_file.exists() else None
    core = ToolCallStream(tools=tools, reject_unknown_tools=False)  # as the proxy judges
    events = core.feed(sse) + core.finish()
    return Case(
        name=name,
        protocol=protocol,
        tools=tools,
        calls=sent_calls(events),
        text="".join(e.text for e in events if isinstance(e, TextDelta)),
    )


def _cases() -> Iterator[Case]:
    for path in sorted(FIXTURES.glob("*.sse")):
        case = _case(path.name, path)
        if case is not None:
            yield case
    if CORPUS.is_dir():
        for path in sorted(CORPUS.glob("*/*")):
            if path.suffix in (".md",) or "__blocking__" in path.name:
                continue
            case = _case(str(path.relative_to(CORPUS)), path)
            if case is not None:
                yield case


CASES = list(_cases())


@dataclass
class Received:
    calls: list[tuple[str, Any]] = field(default_factory=list)
    text: str = ""
    error: Exception | None = None


@pytest.fixture(scope="module")
def proxy() -> Iterator[str]:
    with stack(FakeUpstream(deepseek_rules=False)) as url:
        yield url


def _chat_accumulate(chunks: list[Any], got: Received) -> None:
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            delta = choice.delta
            if delta.content:
                got.text += delta.content
            legacy = delta.function_call  # the legacy shape comes back in its own shape
            if legacy is not None:
                entry = calls.setdefault(0, {"name": "", "arguments": ""})
                entry["name"] = legacy.name or entry["name"]
                entry["arguments"] += legacy.arguments or ""
            for call in delta.tool_calls or ():
                entry = calls.setdefault(call.index, {"name": "", "arguments": ""})
                if call.function is not None:
                    entry["name"] = call.function.name or entry["name"]
                    entry["arguments"] += call.function.arguments or ""
    got.calls = [(c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())]


def _anthropic_final(message: Any, got: Received) -> None:
    for block in message.content:
        if block.type == "text":
            got.text += block.text
        elif block.type == "tool_use":
            got.calls.append((block.name, block.input))


def _responses_accumulate(events: list[Any], got: Received) -> None:
    done_items = []
    final = None
    for event in events:
        if event.type == "response.output_text.delta":
            got.text += event.delta
        elif event.type == "response.output_item.done" and event.item.type in (
            "function_call",
            "custom_tool_call",
        ):
            done_items.append(event.item)
        elif event.type in ("response.completed", "response.incomplete"):
            final = event.response
    for item in done_items:
        if item.type == "function_call":
            got.calls.append((item.name, json.loads(item.arguments)))
        else:
            got.calls.append((item.name, item.input))
    if final is not None:  # the terminal response lists the same calls
        listed = [
            (i.name, json.loads(i.arguments) if i.type == "function_call" else i.input)
            for i in final.output
            if i.type in ("function_call", "custom_tool_call")
        ]
        assert listed == got.calls


def _kwargs(case: Case) -> dict[str, Any]:
    return {"tools": case.tools} if case.tools else {}


def run_sync(url: str, case: Case) -> Received:
    got = Received()
    model = f"replay:{case.name}"
    if case.protocol == "anthropic":
        client = anthropic_client(base_url=url, api_key="sk-test", max_retries=0)
        try:
            with client.messages.stream(
                model=model,
                max_tokens=1024,
                messages=[{"role": "user", "content": "go"}],
                **_kwargs(case),
            ) as stream:
                for _ in stream:
                    pass
                _anthropic_final(stream.get_final_message(), got)
        except anthropic.APIError as exc:
            got.error = exc
        return got
    client_ = openai_client(base_url=f"{url}/v1", api_key="sk-test", max_retries=0)
    items: list[Any] = []
    try:
        if case.protocol == "chat":
            for chunk in client_.chat.completions.create(
                model=model,
                messages=[{"role": "user", "content": "go"}],
                stream=True,
                **_kwargs(case),
            ):
                items.append(chunk)
        else:
            for event in client_.responses.create(
                model=model, input="go", stream=True, **_kwargs(case)
            ):
                items.append(event)
    except openai.APIError as exc:
        got.error = exc
    (_chat_accumulate if case.protocol == "chat" else _responses_accumulate)(items, got)
    return got


async def run_async(url: str, case: Case) -> Received:
    got = Received()
    model = f"replay:{case.name}"
    if case.protocol == "anthropic":
        client = anthropic.AsyncAnthropic(base_url=url, api_key="sk-test", max_retries=0)
        try:
            async with client.messages.stream(
                model=model,
                max_tokens=1024,
                messages=[{"role": "user", "content": "go"}],
                **_kwargs(case),
            ) as stream:
                async for _ in stream:
                    pass
                _anthropic_final(await stream.get_final_message(), got)
        except anthropic.APIError as exc:
            got.error = exc
        await client.close()
        return got
    client_ = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="sk-test", max_retries=0)
    items: list[Any] = []
    try:
        if case.protocol == "chat":
            stream = await client_.chat.completions.create(
                model=model,
                messages=[{"role": "user", "content": "go"}],
                stream=True,
                **_kwargs(case),
            )
        else:
            stream = await client_.responses.create(
                model=model, input="go", stream=True, **_kwargs(case)
            )
        async for item in stream:
            items.append(item)
    except openai.APIError as exc:
        got.error = exc
    await client_.close()
    (_chat_accumulate if case.protocol == "chat" else _responses_accumulate)(items, got)
    return got


def check(case: Case, got: Received) -> None:
    assert got.calls == case.calls, case.name
    if got.error is None:
        assert got.text == case.text, case.name
    else:  # the upstream reported an error: nothing was ready, nothing refused
        assert case.calls == []
        assert got.calls == []
    assert "[streamrepair: " not in got.text  # refusals go out as calls, not as text


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_sync_sdk_receives_the_judged_calls(proxy: str, case: Case) -> None:
    check(case, run_sync(proxy, case))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_async_sdk_receives_the_judged_calls(proxy: str, case: Case) -> None:
    check(case, asyncio.run(run_async(proxy, case)))


def test_the_cases_cover_every_protocol_and_outcome() -> None:
    protocols = {c.protocol for c in CASES}
    assert protocols == {"chat", "anthropic", "responses"}
    for protocol in protocols:  # each reads a refused call among its cases
        assert any(
            name == REFUSED_TOOL for c in CASES if c.protocol == protocol for name, _ in c.calls
        ), protocol
    assert sum(len(c.calls) for c in CASES) > 40
