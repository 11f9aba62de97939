"""examples/deepseek_tool_loop.py end to end, offline: the OpenAI SDK against a fake
DeepSeek on 127.0.0.1 that answers HTTP 400 like the real API, and the Anthropic SDK
against a fake Anthropic Messages API that does the same. Two (three) user turns,
parallel calls, a repaired call, a cut-off call answered with guidance, an abort in the
middle of a stream, a clean turn after it, and the exact ``messages`` of every request."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import anthropic
import openai
import pytest

from streamrepair import (
    AbortFence,
    Conversation,
    FencePhaseState,
    Provider,
    ReasoningPolicy,
    RepairKind,
    SchemaRule,
    check_history,
)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "deepseek_tool_loop.py"
KEEP = ReasoningPolicy.KEEP_FOR_TOOL_CALLS
CLEAR = ReasoningPolicy.CLEAR_ON_USER_TURN
NEVER = ReasoningPolicy.NEVER_SEND

pytestmark = [
    pytest.mark.anyio,
    # openai's AsyncStream.__stream__ leaves its inner async generators (_iter_events,
    # SSEDecoder.aiter_bytes; httpcore's PoolByteStream after an early close) suspended:
    # trio's finalizer warns when they are collected, on every stream. Not ours to fix.
    pytest.mark.filterwarnings(
        "ignore:Async generator .* was garbage collected before it had been exhausted"
        ":ResourceWarning"
    ),
]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("deepseek_tool_loop", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


ex = load_example()

A, B = "call_00_Tcek83ZQ4fFb1RfPQnsPEE5w", "call_01_L8UtYbkfaMFr7hzsToGPWGfI"
C, D, N = (
    "call_00_V0Uwt4i63m5QnWRS1q1AO1tP",
    "call_00_IhCAliIHtM9gKpgfqbBV9873",
    "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF",
)
SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
NOTE = (  # the syntax repair of the argument text, then the schema rule
    "\n\n[streamrepair: arguments of get_weather were repaired]\n"
    f"- trailing_comma at character 30: {RepairKind.TRAILING_COMMA.guidance}.\n"
    f"- parse_scalar_string at $.days: {SchemaRule.PARSE_SCALAR_STRING.guidance}.\n"
    "Send plain, valid JSON of the expected types directly next time."
)
CUT_ANSWER = re.compile(
    r"\[streamrepair: write_file was not executed; status: not_started; reason: cut_off\]\n"
    r"The arguments were cut off before they were complete \(most likely at the output token "
    r"limit\), so nothing was executed\. Call the tool again with shorter arguments; if they "
    r"carried large content such as a file, send it in smaller parts over several calls\.\n"
    r"Not executed: the arguments were cut off \(provider stop reason `length`\); "
    r"\d+ characters arrived and the JSON is unfinished\."
)
ABORT_ANSWER = (
    "[streamrepair: get_weather was not executed; status: not_started; reason: aborted]\n"
    "The user interrupted the response before this call was complete, so nothing was "
    "executed. Do not repeat it unless the user asks for it.\n"
)


def user(turn: int) -> dict[str, Any]:
    return {"role": "user", "content": ex.USER_TURNS[turn]}


def assistant(step: int, *calls: tuple[str, str, str], reasoning: bool = True) -> dict[str, Any]:
    """The assistant message for script step ``step`` as the API must receive it."""
    message: dict[str, Any] = {"role": "assistant", "content": ex.SCRIPT[step].content}
    if reasoning:
        message["reasoning_content"] = ex.SCRIPT[step].reasoning
    if calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in calls
        ]
    return message


def tool(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def expected_requests(policy: ReasoningPolicy) -> list[list[dict[str, Any]]]:
    """The ``messages`` of each of the six requests, written out by hand."""
    clear = policy is CLEAR
    report = json.dumps({"path": "report.md", "content": ex.REPORT}, ensure_ascii=False)
    weather = ("get_weather", '{"city": "Hangzhou"}')
    turn1 = [
        SYSTEM,
        user(0),
        assistant(0, (A, *weather), (B, "get_weather", '{"city": "Suzhou", "days": 2}')),
        tool(A, "Hangzhou, 1 day(s): cloudy, 7~13°C"),
        tool(B, "Suzhou, 2 day(s): light rain, 9~14°C" + NOTE),
        assistant(1, (C, "write_file", "{}")),  # the cut call, with arguments that parse
        tool(C, "<cut answer>"),
        assistant(2, (D, "write_file", report)),
        tool(D, f"wrote {len(ex.REPORT)} characters to report.md"),
    ]
    # Once a new user turn begins, CLEAR drops the earlier reasoning, V4 keeps it.
    turn1_later = [
        {k: v for k, v in m.items() if not (clear and k == "reasoning_content")} for m in turn1
    ]
    # The final answer of a turn that called tools: its reasoning goes back too (V4).
    answer = assistant(3, reasoning=not clear)
    aborted = [assistant(4, (N, "get_weather", "{}"), reasoning=not clear), tool(N, "<abort>")]
    return [
        turn1[:2],
        turn1[:5],
        turn1[:7],
        turn1[:9],
        [*turn1_later, answer, user(1)],
        [*turn1_later, answer, user(1), *aborted, user(2)],
    ]


def sent_messages(server: Any) -> list[list[dict[str, Any]]]:
    """The messages of each request, with the two guidance answers checked and
    replaced by placeholders."""
    out = []
    for body in server.requests:
        messages = []
        for m in body["messages"]:
            if m.get("tool_call_id") == C:
                assert CUT_ANSWER.fullmatch(m["content"]), m["content"]
                m = tool(C, "<cut answer>")
            elif m.get("tool_call_id") == N:
                assert m["content"].startswith(ABORT_ANSWER)
                m = tool(N, "<abort>")
            messages.append(m)
        out.append(messages)
    return out


@pytest.mark.parametrize(("policy", "rule"), [(None, KEEP), (CLEAR, CLEAR)])
async def test_the_example_loop_sends_exactly_what_the_policy_says(
    policy: ReasoningPolicy | None, rule: ReasoningPolicy
) -> None:
    with ex.FakeDeepSeek(rule=rule) as server:
        result = await ex.demo(server.base_url, policy=policy)
    assert result.conversation.policy is rule  # deepseek-v4-flash -> KEEP unless overridden
    assert sent_messages(server) == expected_requests(rule)
    for body in server.requests:
        assert body["model"] == "deepseek-v4-flash"
        assert body["thinking"] == {"type": "enabled"}
        assert body["stream"] is True
        assert body["tools"] == ex.TOOLS
        assert check_history(body["messages"], policy=rule) == ()
    # The turns: finished, stopped by the user (handler run once), finished.
    assert [p.state for p in result.phases] == [
        FencePhaseState.FINISHED,
        FencePhaseState.ABORTED,
        FencePhaseState.FINISHED,
    ]
    assert [p.number for p in result.phases] == [1, 2, 3]
    assert result.stopped == [2]
    assert not result.phases[2].aborted  # the turn after the abort is clean
    assert result.workspace.files == {"report.md": ex.REPORT}  # the cut write never ran
    history = result.conversation.history
    assert history[-1] == {
        "role": "assistant",
        "content": "You're welcome!",
        "reasoning_content": "The user is done.",  # stored, even when not sent
    }


async def test_clearing_reasoning_on_a_v4_server_is_a_400() -> None:
    # The seed's documented advice, against the current API: turn 2's first request fails.
    with ex.FakeDeepSeek(rule=KEEP) as server:
        client = openai.AsyncOpenAI(api_key="sk-x", base_url=server.base_url, max_retries=0)
        conversation = Conversation(ex.MODEL, policy=CLEAR, system="You are a helpful assistant.")
        fence, workspace = AbortFence(), ex.Workspace()
        async with client:
            await ex.run_user_turn(client, conversation, fence, "q1", workspace=workspace)
            with pytest.raises(openai.BadRequestError, match=ex.REASONING_ERROR):
                await ex.run_user_turn(client, conversation, fence, "q2", workspace=workspace)
    assert len(server.requests) == 5
    rejected = server.requests[-1]["messages"]
    assert "reasoning_content" not in rejected[2]
    problems = check_history(rejected, policy=KEEP)
    assert {p.kind.value for p in problems} == {"missing_reasoning"}
    assert [p.index for p in problems] == [2, 5, 7, 9]


async def test_dropping_the_final_answers_reasoning_is_a_400() -> None:
    # The old rule (reasoning only on messages with tool_calls), against the guide's:
    # the final answer of a turn that called tools needs its reasoning_content too.
    with ex.FakeDeepSeek(rule=KEEP) as server:
        result = await ex.demo(server.base_url)
    sent = result.conversation.messages()
    answer = next(i for i, m in enumerate(sent) if m.get("content") == ex.SCRIPT[3].content)
    assert sent[answer]["reasoning_content"] == ex.SCRIPT[3].reasoning
    old_rule = [
        {k: v for k, v in m.items() if k != "reasoning_content" or m.get("tool_calls")}
        for m in sent
    ]
    problems = check_history(old_rule, policy=KEEP)
    assert [(p.kind.value, p.index) for p in problems] == [("missing_reasoning", answer)]
    assert ex.api_problem({"messages": old_rule}, KEEP) == ex.REASONING_ERROR
    assert ex.api_problem({"messages": sent}, KEEP) is None
    with ex.FakeDeepSeek((ex.Reply("Fine.", content="ok"),), rule=KEEP) as server:
        client = openai.AsyncOpenAI(api_key="sk-x", base_url=server.base_url, max_retries=0)
        async with client:
            with pytest.raises(openai.BadRequestError, match=ex.REASONING_ERROR):
                await client.chat.completions.create(
                    model=ex.MODEL, messages=old_rule, stream=True, extra_body=ex.THINKING
                )


async def test_r1_gets_no_reasoning_back_and_v4_history_is_a_400_there() -> None:
    with ex.FakeDeepSeek(rule=NEVER) as server:
        result = await ex.demo(server.base_url, policy=NEVER)
    assert len(server.requests) == 6
    assert all("reasoning_content" not in m for b in server.requests for m in b["messages"])
    assert result.stopped == [2]
    with ex.FakeDeepSeek(rule=NEVER) as server:
        client = openai.AsyncOpenAI(api_key="sk-x", base_url=server.base_url, max_retries=0)
        conversation = Conversation(ex.MODEL, system="You are a helpful assistant.")
        async with client:
            with pytest.raises(openai.BadRequestError, match="reasoning_content"):
                await ex.run_user_turn(
                    client, conversation, AbortFence(), "q", workspace=ex.Workspace()
                )
    assert [p.kind.value for p in check_history(server.requests[-1]["messages"], policy=NEVER)] == [
        "reasoning_sent"
    ]


async def test_answering_calls_missing_from_the_assistant_message_is_a_400() -> None:
    with ex.FakeDeepSeek(rule=KEEP) as server:
        result = await ex.demo(server.base_url)
    # What a harness gets when it appends Done.messages (ready calls only) and answers
    # every call, ready or rejected: the cut write's answer has no call.
    naive = []
    for message in result.conversation.messages():
        calls = message.get("tool_calls")
        if calls:
            message["tool_calls"] = [c for c in calls if c["id"] not in (C, N)]
            if not message["tool_calls"]:
                del message["tool_calls"]
        naive.append(message)
    problems = check_history(naive, policy=KEEP)
    assert [(p.kind.value, p.call_id) for p in problems] == [
        ("orphan_tool_message", C),
        ("orphan_tool_message", N),
    ]
    script = (ex.Reply("Fine.", content="ok"),)
    with ex.FakeDeepSeek(script, rule=KEEP) as server:
        client = openai.AsyncOpenAI(api_key="sk-x", base_url=server.base_url, max_retries=0)
        async with client:
            with pytest.raises(openai.BadRequestError, match="role 'tool' must be a response"):
                await client.chat.completions.create(
                    model=ex.MODEL, messages=naive, stream=True, extra_body=ex.THINKING
                )
            stream = await client.chat.completions.create(
                model=ex.MODEL,
                messages=result.conversation.messages(),
                stream=True,
                extra_body=ex.THINKING,
            )
            async with stream:
                async for _ in stream:
                    pass


def test_the_example_runs_as_a_script_offline() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "src"), env.get("PYTHONPATH", "")) if p
    )
    env.pop("DEEPSEEK_API_KEY", None)
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--trio"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "[stopped by the user]" in done.stdout
    assert done.stdout.rstrip().endswith("6 requests, files: ['report.md']")


def test_the_fake_server_only_plays_its_script() -> None:
    with ex.FakeDeepSeek(()) as server:
        client = openai.OpenAI(api_key="sk-x", base_url=server.base_url, max_retries=0)
        with pytest.raises(openai.BadRequestError, match="script exhausted"):
            client.chat.completions.create(
                model=ex.MODEL, messages=[{"role": "user", "content": "hi"}]
            )
        client.close()


# -- the Anthropic variant -----------------------------------------------------------------


def think(step: int) -> dict[str, Any]:
    reasoning = ex.SCRIPT[step].reasoning
    return {"type": "thinking", "thinking": reasoning, "signature": ex.sign(reasoning)}


def use(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def said(step: int, *calls: dict[str, Any]) -> dict[str, Any]:
    """The assistant message for script step ``step`` as the Anthropic API must get it:
    its signed thinking block first, its text, its tool_use blocks."""
    content = [think(step)]
    if ex.SCRIPT[step].content:
        content.append({"type": "text", "text": ex.SCRIPT[step].content})
    return {"role": "assistant", "content": [*content, *calls]}


def result(call_id: str, content: str, *, error: bool = False) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    return {**block, "is_error": True} if error else block


def expected_anthropic_requests() -> list[list[dict[str, Any]]]:
    report = {"path": "report.md", "content": ex.REPORT}
    turn1 = [
        user(0),
        said(
            0,
            use(A, "get_weather", {"city": "Hangzhou"}),
            use(B, "get_weather", {"city": "Suzhou", "days": 2}),
        ),
        {
            "role": "user",
            "content": [
                result(A, "Hangzhou, 1 day(s): cloudy, 7~13°C"),
                result(B, "Suzhou, 2 day(s): light rain, 9~14°C" + NOTE),
            ],
        },
        said(1, use(C, "write_file", {})),  # the cut call, with input that parses
        {"role": "user", "content": [result(C, "<cut answer>", error=True)]},
        said(2, use(D, "write_file", report)),
        {"role": "user", "content": [result(D, f"wrote {len(ex.REPORT)} characters to report.md")]},
    ]
    aborted = [
        said(4, use(N, "get_weather", {})),
        # the answer to the aborted call, then the next user message: results first
        {"role": "user", "content": [result(N, "<abort>", error=True), user(2)["content"]]},
    ]
    return [
        turn1[:1],
        turn1[:3],
        turn1[:5],
        turn1[:7],
        [*turn1, said(3), user(1)],  # the tool turn's final answer keeps its thinking
        [*turn1, said(3), user(1), *aborted],
    ]


def anthropic_sent(server: Any) -> list[list[dict[str, Any]]]:
    """The messages of each request, with the two guidance answers checked and replaced
    by placeholders, and a user's text after the results shown as its string."""
    out = []
    for body in server.requests:
        messages = copy.deepcopy(body["messages"])
        for m in messages:
            if m["role"] != "user" or not isinstance(m["content"], list):
                continue
            for b in m["content"]:
                if b["type"] == "tool_result" and b["tool_use_id"] == C:
                    assert CUT_HEAD.match(b["content"]), b["content"]
                    assert "`max_tokens`" in b["content"]
                    b["content"] = "<cut answer>"
                elif b["type"] == "tool_result" and b["tool_use_id"] == N:
                    assert b["content"].startswith(ABORT_ANSWER)
                    b["content"] = "<abort>"
            m["content"] = [b["text"] if b["type"] == "text" else b for b in m["content"]]
        out.append(messages)
    return out


CUT_HEAD = re.compile(
    r"\[streamrepair: write_file was not executed; status: not_started; reason: cut_off\]\n"
    r"The arguments were cut off before they were complete"
)


async def test_the_anthropic_variant_sends_exactly_what_the_api_needs() -> None:
    with ex.FakeAnthropic() as server:
        result_ = await ex.demo(server.base_url, anthropic=True)
    conversation = result_.conversation
    assert conversation.provider is Provider.ANTHROPIC
    assert conversation.policy is KEEP  # deepseek-v4-flash over /anthropic
    assert anthropic_sent(server) == expected_anthropic_requests()
    for body in server.requests:
        assert body["model"] == "deepseek-v4-flash"
        assert body["system"] == "You are a helpful assistant."
        assert body["thinking"] == ex.ANTHROPIC_THINKING
        assert body["tools"] == ex.ANTHROPIC_TOOLS
        assert body["stream"] is True
        assert ex.anthropic_problem(body) is None
        assert check_history(body["messages"], policy=KEEP, provider="anthropic") == ()
    assert [p.state for p in result_.phases] == [
        FencePhaseState.FINISHED,
        FencePhaseState.ABORTED,
        FencePhaseState.FINISHED,
    ]
    assert result_.stopped == [2]
    assert result_.workspace.files == {"report.md": ex.REPORT}  # the cut write never ran
    assert conversation.history[-1] == said(5)  # stored as received


async def test_what_a_naive_anthropic_harness_sends_is_a_400() -> None:
    with ex.FakeAnthropic() as server:
        result_ = await ex.demo(server.base_url, anthropic=True)
    sent = result_.conversation.messages()
    answer = 7  # said(3), the final answer of the tool turn
    assert sent[answer] == said(3)
    # Each history as a harness gets it wrong, the 400 the API answers, and what
    # check_history says about it beforehand.
    orphan = copy.deepcopy(sent)  # Done.messages holds only the ready calls...
    orphan[3]["content"] = orphan[3]["content"][:1]  # ...but every call is answered
    edited = copy.deepcopy(sent)
    edited[1]["content"][0]["thinking"] += " "  # thinking must come back unmodified
    text_first = copy.deepcopy(sent)
    text_first[2]["content"].insert(0, {"type": "text", "text": "Here are the results."})
    no_thinking = copy.deepcopy(sent)
    del no_thinking[answer]["content"][0]  # kept only on messages with tool_use
    unsigned = copy.deepcopy(sent)
    del unsigned[1]["content"][0]["signature"]
    cases = [
        (orphan, "unexpected `tool_use_id` found in `tool_result` blocks", "orphan_tool_message"),
        (edited, "Invalid `signature` in `thinking` block", None),
        (text_first, "`tool_use` ids were found without `tool_result`", "results_not_first"),
        (no_thinking, ex.ANTHROPIC_REASONING_ERROR, "missing_reasoning"),
        (unsigned, "thinking.signature: Field required", "unsigned_thinking"),
    ]
    script = tuple(ex.Reply("Fine.", content="ok") for _ in cases)
    with ex.FakeAnthropic(script) as server:
        client = anthropic.AsyncAnthropic(api_key="sk-x", base_url=server.base_url, max_retries=0)
        async with client:
            for messages, error, kind in cases:
                problems = check_history(messages, policy=KEEP, provider="anthropic")
                assert {p.kind.value for p in problems} == ({kind} if kind else set())
                with pytest.raises(anthropic.BadRequestError, match=re.escape(error)):
                    await client.messages.create(
                        model=ex.MODEL,
                        max_tokens=ex.MAX_TOKENS,
                        messages=messages,
                        thinking=ex.ANTHROPIC_THINKING,  # type: ignore[arg-type]
                        stream=True,
                    )
            stream = await client.messages.create(
                model=ex.MODEL,
                max_tokens=ex.MAX_TOKENS,
                messages=sent,
                thinking=ex.ANTHROPIC_THINKING,  # type: ignore[arg-type]
                stream=True,
            )
            async for _ in stream:
                pass


def test_a_claude_tool_loop_without_its_thinking_is_a_400() -> None:
    # Anthropic's own rule with thinking on: the last assistant message of a tool loop
    # starts with its thinking block. The conversation never drops it.
    loop = expected_anthropic_requests()[1]  # a tool call and its results
    stripped = copy.deepcopy(loop)
    del stripped[1]["content"][0]
    body = {"model": "claude-sonnet-4-5", "thinking": ex.ANTHROPIC_THINKING}
    assert ex.anthropic_problem({**body, "messages": loop}) is None
    problem = ex.anthropic_problem({**body, "messages": stripped})
    assert problem is not None
    assert "Expected `thinking` or `redacted_thinking`, but found `tool_use`" in problem


def test_the_anthropic_variant_runs_as_a_script_offline() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "src"), env.get("PYTHONPATH", "")) if p
    )
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--anthropic"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "[stopped by the user]" in done.stdout
    assert done.stdout.rstrip().endswith("6 requests, files: ['report.md']")
