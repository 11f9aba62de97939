"""The turn-loop history: reasoning_content policies, every call answered (rejected ones
with guidance, status not_started), repair notes once per conversation, and the
histories the APIs answer with HTTP 400, asserted on the produced messages."""

from __future__ import annotations

import copy
import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamrepair import (
    Conversation,
    Done,
    HistoryError,
    ProblemKind,
    Provider,
    ReasoningPolicy,
    RejectReason,
    RunState,
    SchemaRule,
    StopReason,
    StreamEvent,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStream,
    UnansweredCallsError,
    assistant_message,
    check_history,
    normalize_stop_reason,
    prepare_messages,
    repair_history,
    tool_message,
)

ROOT = Path(__file__).resolve().parent.parent
KEEP = ReasoningPolicy.KEEP_FOR_TOOL_CALLS
CLEAR = ReasoningPolicy.CLEAR_ON_USER_TURN
NEVER = ReasoningPolicy.NEVER_SEND
AS_RECEIVED = ReasoningPolicy.AS_RECEIVED

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
            "name": "read_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["path"],
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


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "3f1d2c4b",
        "object": "chat.completion.chunk",
        "model": "deepseek-v4-flash",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def response(
    reasoning: str | None,
    calls: list[tuple[str, str | None, str]] | None = None,
    *,
    content: str = "",
    finish: str | None = "tool_calls",
) -> list[dict[str, Any]]:
    """DeepSeek-style chunks: reasoning, content, then each call (id, name, argument text),
    then the finish chunk (none when ``finish`` is None: the stream is still going)."""
    out = [chunk({"role": "assistant", "content": None, "reasoning_content": ""})]
    if reasoning:
        out.append(chunk({"content": None, "reasoning_content": reasoning}))
    if content:
        out.append(chunk({"content": content, "reasoning_content": None}))
    for index, (call_id, name, arguments) in enumerate(calls or []):
        function = {"arguments": ""} if name is None else {"name": name, "arguments": ""}
        out.append(chunk({"tool_calls": [{"index": index, "id": call_id, "function": function}]}))
        for k in range(0, len(arguments), 3):
            piece = {"index": index, "function": {"arguments": arguments[k : k + 3]}}
            out.append(chunk({"tool_calls": [piece]}))
    if finish is not None:
        out.append(chunk({"content": "", "reasoning_content": None}, finish))
    return out


def run(chunks: list[dict[str, Any]]) -> tuple[list[StreamEvent], ToolCallStream]:
    core = ToolCallStream(tools=TOOLS)
    events = [e for c in chunks for e in core.feed(c)]
    events += core.finish()
    return events, core


PARALLEL = response(
    "Two cities.",
    [
        ("call_00_A", "get_weather", '{"city": "Hangzhou"}'),
        ("call_01_B", "get_weather", '{"city": "Suzhou", "days": "2"}'),
    ],
)
CUT = response(
    "Weather, then the file.",
    [
        ("call_00_C", "get_weather", '{"city": "Ningbo"}'),
        ("call_01_D", "write_file", '{"path": "report.md", "content": "# Report\\n\\nHangzhou'),
    ],
    finish="length",
)
FINAL = response("Done thinking.", content="Here it is.", finish="stop")


def pairing(messages: list[dict[str, Any]]) -> list[tuple[list[str], list[str]]]:
    """(call ids of each assistant message with calls, ids of the tool messages right
    after it): a check written apart from check_history."""
    pairs = []
    for i, message in enumerate(messages):
        if message["role"] == "assistant" and message.get("tool_calls"):
            ids = [c["id"] for c in message["tool_calls"]]
            answers = []
            for after in messages[i + 1 :]:
                if after["role"] != "tool":
                    break
                answers.append(after["tool_call_id"])
            pairs.append((ids, answers))
    return pairs


def assert_every_call_answered(messages: list[dict[str, Any]]) -> None:
    for ids, answers in pairing(messages):
        assert ids == answers
    tool_ids = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert sorted(tool_ids) == sorted(i for ids, _ in pairing(messages) for i in ids)


# -- policies ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "policy"),
    [
        ("deepseek-v4-flash", KEEP),
        ("deepseek-v4-pro", KEEP),
        ("deepseek-chat", KEEP),
        ("deepseek-reasoner", KEEP),
        ("DeepSeek-V3.2", KEEP),
        ("deepseek/deepseek-chat-v3.1", KEEP),
        ("deepseek-r1", NEVER),
        ("deepseek-ai/DeepSeek-R1", NEVER),
        ("deepseek-r1:14b", NEVER),
        ("DeepSeek-R1-Distill-Qwen-32B", NEVER),
        ("deepseek/deepseek-r1-0528", NEVER),
        ("gpt-4o", AS_RECEIVED),
        ("claude-sonnet-4", AS_RECEIVED),
        ("", AS_RECEIVED),
        ("r1-model", AS_RECEIVED),
    ],
)
def test_policy_is_chosen_from_the_model_name(model: str, policy: ReasoningPolicy) -> None:
    assert ReasoningPolicy.for_model(model) is policy
    assert Conversation(model).policy is policy


def test_policy_can_be_overridden() -> None:
    conversation = Conversation("deepseek-v4-flash", policy=CLEAR)
    assert conversation.policy is CLEAR
    with pytest.raises(TypeError):
        Conversation("deepseek-v4-flash", policy="keep")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ReasoningPolicy.for_model(None)  # type: ignore[arg-type]


def test_the_conversation_exposes_its_policy_and_checks_what_it_sends() -> None:
    conversation = conversation_after(PARALLEL, FINAL)
    assert conversation.policy is KEEP
    assert conversation.provider is Provider.OPENAI
    conversation.add_user("next")
    assert conversation.check() == check_history(conversation.messages(), policy=KEEP) == ()
    conversation.policy = CLEAR  # what a test of the seed's advice would do
    assert conversation.policy is CLEAR
    assert conversation.check() == ()
    assert [p.kind for p in check_history(conversation.messages(), policy=KEEP)] == [
        ProblemKind.MISSING_REASONING,
        ProblemKind.MISSING_REASONING,
    ]
    with pytest.raises(TypeError):
        conversation.policy = "keep"  # type: ignore[assignment]
    assert conversation.policy is CLEAR
    conversation.add_response(run(PARALLEL)[0])
    with pytest.raises(UnansweredCallsError):
        conversation.check()  # nothing can be sent while a call has no answer


STORED = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "q1"},
    {"role": "assistant", "content": "", "reasoning_content": "r1", "tool_calls": [{"id": "x"}]},
    {"role": "tool", "tool_call_id": "x", "content": "out x"},
    {"role": "assistant", "content": "a1", "reasoning_content": "r2"},
    {"role": "user", "content": "q2"},
    {"role": "assistant", "content": "a2", "reasoning_content": "r3"},  # a turn without tools
    {"role": "user", "content": "q3"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "y"}]},
    {"role": "tool", "tool_call_id": "y", "content": "out y"},
    {"role": "assistant", "content": "a3"},
]


DROP = None  # a change to None removes the key


@pytest.mark.parametrize(
    ("policy", "changed"),
    [
        # V4: in a turn that called tools, every assistant message keeps its reasoning
        # in every later request (the final answer included), "" when none was streamed;
        # the reasoning of a turn without tools is not sent.
        (
            KEEP,
            {
                6: {"reasoning_content": DROP},
                8: {"content": "", "reasoning_content": ""},
                10: {"reasoning_content": ""},
            },
        ),
        # Seed: everything before the last user message loses its reasoning.
        (
            CLEAR,
            {
                2: {"reasoning_content": DROP},
                4: {"reasoning_content": DROP},
                6: {"reasoning_content": DROP},
                8: {"content": "", "reasoning_content": ""},
                10: {"reasoning_content": ""},
            },
        ),
        # R1: never sent.
        (
            NEVER,
            {
                2: {"reasoning_content": DROP},
                4: {"reasoning_content": DROP},
                6: {"reasoning_content": DROP},
                8: {"content": ""},
            },
        ),
        (AS_RECEIVED, {8: {"content": ""}}),
    ],
)
def test_prepare_messages_applies_each_policy(
    policy: ReasoningPolicy, changed: dict[int, dict[str, Any]]
) -> None:
    stored = copy.deepcopy(STORED)
    expected = []
    for i, message in enumerate(STORED):
        out = dict(message)
        for key, value in changed.get(i, {}).items():
            if value is DROP:
                out.pop(key, None)
            else:
                out[key] = value
        expected.append(out)
    sent = prepare_messages(stored, policy=policy)
    assert sent == expected
    assert stored == STORED  # nothing passed is modified
    assert check_history(sent, policy=policy) == ()
    repaired = repair_history(stored, policy=policy)
    assert repaired.messages == sent
    assert repaired.problems == ()
    assert repaired.ok
    # every change is reported, once, at the message it changed
    reported = sorted((c.index, c.kind.value) for c in repaired.changes)
    kinds = {
        ("content", ""): "content_filled",
        ("reasoning_content", ""): "reasoning_filled",
        ("reasoning_content", DROP): "reasoning_dropped",
    }
    assert reported == sorted(
        (i, kinds[key, value]) for i, change in changed.items() for key, value in change.items()
    )


def test_prepare_messages_reads_sdk_objects_and_rejects_other_things() -> None:
    class SDKMessage:  # like openai's ChatCompletionMessage
        def to_dict(self, **_: Any) -> dict[str, Any]:
            return {"role": "assistant", "content": None, "tool_calls": [{"id": "z"}]}

    sent = prepare_messages([{"role": "user", "content": "q"}, SDKMessage()], policy=KEEP)
    assert sent[1] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "z"}],
        "reasoning_content": "",
    }
    with pytest.raises(TypeError):
        prepare_messages([42], policy=KEEP)
    with pytest.raises(TypeError):
        prepare_messages([], policy="keep")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        check_history([], policy="keep")  # type: ignore[arg-type]


# -- the 400 histories ---------------------------------------------------------------------


def naive_history(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a harness gets by appending Done.messages and answering every verdict."""
    events, _ = run(chunks)
    done = next(e for e in events if isinstance(e, Done))
    history: list[dict[str, Any]] = [{"role": "user", "content": "go"}, *done.messages]
    for event in events:
        if isinstance(event, ToolCallReady | ToolCallRejected):
            history.append({"role": "tool", "tool_call_id": event.call_id, "content": "x"})
    return history


def conversation_after(
    *responses: list[dict[str, Any]], model: str = "deepseek-v4-flash"
) -> Conversation:
    conversation = Conversation(model)
    conversation.add_user("go")
    for chunks in responses:
        events, _ = run(chunks)
        conversation.add_response(events)
        for call in conversation.pending:
            conversation.answer(call.call_id, f"result of {call.call_id}")
    return conversation


def test_answering_a_rejected_call_missing_from_done_messages_is_a_400() -> None:
    history = naive_history(CUT)
    problems = check_history(history, policy=KEEP)
    assert [(p.kind, p.call_id) for p in problems] == [
        (ProblemKind.ORPHAN_TOOL_MESSAGE, "call_01_D")
    ]
    # The conversation lists the rejected call in the assistant message it answers.
    sent = conversation_after(CUT).messages()
    assert check_history(sent, policy=KEEP) == ()
    assert pairing(sent) == [(["call_00_C", "call_01_D"], ["call_00_C", "call_01_D"])]
    assert_every_call_answered(sent)


def test_not_answering_rejected_calls_leaves_nothing_to_tell_the_model() -> None:
    # Answering only the ready calls of Done.messages is accepted, but the model never
    # learns its write was cut: the conversation answers it, with guidance.
    sent = conversation_after(CUT).messages()
    answer = next(m for m in sent if m.get("tool_call_id") == "call_01_D")
    assert "smaller parts" in answer["content"]


def test_dropping_tool_call_reasoning_is_a_400_under_v4() -> None:
    conversation = conversation_after(PARALLEL, FINAL)
    conversation.add_user("next question")
    sent = conversation.messages()
    assert sent[1]["reasoning_content"] == "Two cities."
    # The final answer of a turn that called tools keeps its reasoning too: DeepSeek's
    # guide ("between two user messages, if the model performed a tool call, the
    # intermediate assistant's reasoning_content ... must be passed back") and its
    # sample, which appends every sub-turn's message unchanged.
    assert sent[4]["reasoning_content"] == "Done thinking."
    assert conversation.history[4]["reasoning_content"] == "Done thinking."  # kept, lossless
    # An adapter that keeps reasoning only on the messages with tool_calls:
    calls_only = copy.deepcopy(sent)
    del calls_only[4]["reasoning_content"]
    problems = check_history(calls_only, policy=KEEP)
    assert [(p.kind, p.index) for p in problems] == [(ProblemKind.MISSING_REASONING, 4)]
    # The seed's advice (clear reasoning at a new user turn) breaks V4:
    cleared = prepare_messages(conversation.history, policy=CLEAR)
    assert "reasoning_content" not in cleared[1]
    assert "reasoning_content" not in cleared[4]
    problems = check_history(cleared, policy=KEEP)
    assert [(p.kind, p.index) for p in problems] == [
        (ProblemKind.MISSING_REASONING, 1),
        (ProblemKind.MISSING_REASONING, 4),
    ]
    assert check_history(cleared, policy=CLEAR) == ()


def test_a_turn_without_tool_calls_sends_no_reasoning() -> None:
    conversation = Conversation("deepseek-v4-flash")
    conversation.add_user("hi")
    conversation.add_response(run(FINAL)[0])
    conversation.add_user("and?")
    sent = conversation.messages()
    assert sent[1] == {"role": "assistant", "content": "Here it is."}  # the API ignores it
    assert conversation.history[1]["reasoning_content"] == "Done thinking."
    assert check_history(sent, policy=conversation.policy) == ()


def test_empty_reasoning_must_still_be_sent() -> None:
    no_reasoning = response(None, [("call_00_E", "get_weather", '{"city": "Xi\'an"}')])
    conversation = conversation_after(no_reasoning)
    stored = conversation.history[1]
    assert stored["reasoning_content"] == ""  # the provider sent "" and nothing else
    adapter = copy.deepcopy(conversation.history)
    del adapter[1]["reasoning_content"]  # "only send it when non-empty"
    assert [p.kind for p in check_history(adapter, policy=KEEP)] == [ProblemKind.MISSING_REASONING]
    assert prepare_messages(adapter, policy=KEEP)[1]["reasoning_content"] == ""
    assert conversation.messages()[1]["reasoning_content"] == ""


def test_r1_never_gets_reasoning_back() -> None:
    conversation = conversation_after(PARALLEL, FINAL, model="deepseek-r1")
    conversation.add_user("again")
    assert conversation.policy is NEVER
    sent = conversation.messages()
    assert all("reasoning_content" not in m for m in sent)
    assert check_history(sent, policy=NEVER) == ()
    kept = prepare_messages(conversation.history, policy=KEEP)
    assert [(p.kind, p.index) for p in check_history(kept, policy=NEVER)] == [
        (ProblemKind.REASONING_SENT, 1),
        (ProblemKind.REASONING_SENT, 4),
    ]


@pytest.mark.parametrize(
    ("policy", "history", "kinds"),
    [
        (
            AS_RECEIVED,
            [{"role": "user", "content": "q"}, {"role": "assistant", "content": None}],
            [ProblemKind.NULL_CONTENT],
        ),
        (
            AS_RECEIVED,
            [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "a"}, {"id": "b"}]},
                {"role": "tool", "tool_call_id": "a", "content": "1"},
                {"role": "user", "content": "q2"},
            ],
            [ProblemKind.UNANSWERED_CALL],
        ),
        (
            AS_RECEIVED,
            [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "a"}]},
            ],
            [ProblemKind.UNANSWERED_CALL],
        ),
        (
            AS_RECEIVED,
            [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "a"}]},
                {"role": "tool", "tool_call_id": "a", "content": "1"},
                {"role": "tool", "tool_call_id": "a", "content": "1"},
            ],
            [ProblemKind.DUPLICATE_ANSWER],
        ),
        (
            AS_RECEIVED,
            [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "a"}]},
                {"role": "user", "content": "q"},
                {"role": "tool", "tool_call_id": "a", "content": "1"},
            ],
            [ProblemKind.UNANSWERED_CALL, ProblemKind.ORPHAN_TOOL_MESSAGE],
        ),
        (
            KEEP,
            # Parallel calls split into assistant/tool pairs, the second without reasoning.
            [
                {"role": "user", "content": "q"},
                {
                    "role": "assistant",
                    "content": "",
                    "reasoning_content": "r",
                    "tool_calls": [{"id": "a"}],
                },
                {"role": "tool", "tool_call_id": "a", "content": "1"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "b"}]},
                {"role": "tool", "tool_call_id": "b", "content": "2"},
            ],
            [ProblemKind.MISSING_REASONING],
        ),
        (
            KEEP,
            [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "a"}, {"id": "a"}]},
                {"content": "no role"},
            ],
            [
                ProblemKind.MALFORMED,
                ProblemKind.MISSING_REASONING,
                ProblemKind.UNANSWERED_CALL,
                ProblemKind.MALFORMED,
            ],
        ),
    ],
)
def test_check_history_finds_each_rejected_shape(
    policy: ReasoningPolicy, history: list[dict[str, Any]], kinds: list[ProblemKind]
) -> None:
    before = copy.deepcopy(history)
    assert [p.kind for p in check_history(history, policy=policy)] == kinds
    assert history == before


# -- the conversation ----------------------------------------------------------------------


def test_parallel_calls_stay_in_one_message_and_are_answered_in_call_order() -> None:
    conversation = Conversation("deepseek-v4-flash", system="sys")
    conversation.add_user("weather?")
    events, _ = run(PARALLEL)
    batch = conversation.add_response(events)
    assert [c.call_id for c in batch.ready] == ["call_00_A", "call_01_B"]
    assert batch.rejected == ()
    assert [c.call_id for c in conversation.pending] == ["call_00_A", "call_01_B"]
    with pytest.raises(UnansweredCallsError) as info:
        conversation.messages()
    assert info.value.call_ids == ("call_00_A", "call_01_B")
    conversation.answer("call_01_B", "Suzhou: rain")  # finishes first
    assert [m["role"] for m in conversation.history] == ["system", "user", "assistant"]
    with pytest.raises(UnansweredCallsError):
        conversation.add_user("more")
    conversation.answer("call_00_A", "Hangzhou: cloudy")
    sent = conversation.messages()
    assert sent[2] == {
        "role": "assistant",
        "content": "",
        "reasoning_content": "Two cities.",
        "tool_calls": [
            {
                "id": "call_00_A",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Hangzhou"}'},
            },
            {
                "id": "call_01_B",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Suzhou", "days": 2}'},
            },
        ],
    }
    assert sent[3] == {"role": "tool", "tool_call_id": "call_00_A", "content": "Hangzhou: cloudy"}
    assert sent[4]["tool_call_id"] == "call_01_B"
    assert sent[4]["content"].startswith("Suzhou: rain\n\n[streamrepair: arguments of get_weather")
    assert len(sent) == 5


NOTE = (
    "[streamrepair: arguments of {tool} were repaired]\n"
    "- parse_scalar_string at {where}: {guidance}.\n"
    "Send the types the schema expects directly next time."
)


def note(tool: str, where: str) -> str:
    return NOTE.format(tool=tool, where=where, guidance=SchemaRule.PARSE_SCALAR_STRING.guidance)


def test_repair_notes_are_appended_once_per_conversation() -> None:
    twice = response(
        "Again.",
        [
            ("call_00_F", "get_weather", '{"city": "Wuxi", "days": "3"}'),
            ("call_01_G", "read_file", '{"path": "a.txt", "limit": "5"}'),
            ("call_02_H", "read_file", '{"path": "b.txt", "limit": "6"}'),
        ],
    )
    conversation = Conversation("deepseek-v4-flash")
    conversation.add_user("go")
    conversation.add_response(run(PARALLEL)[0])
    conversation.answer("call_00_A", "a")
    conversation.answer("call_01_B", "b")
    conversation.add_response(run(twice)[0])
    # Answered out of order: the note still goes on the first read_file in call order.
    conversation.answer("call_02_H", "h")
    conversation.answer("call_01_G", "g")
    conversation.answer("call_00_F", "f")
    tools = {
        m["tool_call_id"]: m["content"] for m in conversation.messages() if m["role"] == "tool"
    }
    assert tools == {
        "call_00_A": "a",
        "call_01_B": "b\n\n" + note("get_weather", "$.days"),
        "call_00_F": "f",  # the same lesson for the same tool is not repeated
        "call_01_G": "g\n\n" + note("read_file", "$.limit"),
        "call_02_H": "h",
    }


def test_a_call_that_never_ran_carries_no_note_and_the_lesson_waits() -> None:
    conversation = Conversation("deepseek-v4-flash")
    conversation.add_user("go")
    conversation.add_response(run(PARALLEL)[0])
    conversation.start("call_00_A")
    assert conversation.status("call_00_A") is RunState.RUNNING
    assert conversation.cancel_pending() == ("call_00_A", "call_01_B")
    assert conversation.cancel_pending() == ()
    sent = conversation.messages()
    assert sent[2]["content"] == (
        "[streamrepair: get_weather was interrupted; status: interrupted]\n"
        "It had started when the user interrupted the turn, so some of its effects may have "
        "happened. Check before repeating it."
    )
    assert sent[3]["content"] == (
        "[streamrepair: get_weather was not executed; status: not_started]\n"
        "The user interrupted the turn before this call started, so nothing was executed. "
        "Do not repeat it unless the user asks for it."
    )
    conversation.add_user("again")
    conversation.add_response(run(PARALLEL)[0])
    conversation.answer("call_00_A", "a")
    conversation.answer("call_01_B", "b", status=RunState.FAILED)
    last = conversation.messages()[-1]["content"]
    assert last == (
        "[streamrepair: get_weather failed; status: failed]\n"
        "It ran and failed; some of its effects may have happened.\nb\n\n"
        + note("get_weather", "$.days")
    )


def test_a_cut_off_call_is_answered_with_guidance_and_not_started() -> None:
    conversation = Conversation("deepseek-v4-flash")
    conversation.add_user("go")
    events, _ = run(CUT)
    batch = conversation.add_response(events)
    assert [c.call_id for c in batch.ready] == ["call_00_C"]
    (cut,) = batch.rejected
    assert cut.reason is RejectReason.CUT_OFF
    assert cut.raw == '{"path": "report.md", "content": "# Report\\n\\nHangzhou'  # as streamed
    assert conversation.status("call_01_D") is RunState.NOT_STARTED
    assert [c.call_id for c in conversation.pending] == ["call_00_C"]
    assert batch.message["tool_calls"][1] == {
        "id": "call_01_D",
        "type": "function",
        "function": {"name": "write_file", "arguments": "{}"},
    }
    conversation.answer("call_00_C", "Ningbo: sunny")
    answer = conversation.messages()[-1]
    assert answer["tool_call_id"] == "call_01_D"
    lines = answer["content"].split("\n")
    assert lines[0] == (
        "[streamrepair: write_file was not executed; status: not_started; reason: cut_off]"
    )
    assert "nothing was executed" in lines[1]
    assert "send it in smaller parts" in lines[1]
    assert lines[2] == cut.detail


def test_each_rejection_reason_gets_its_own_answer() -> None:
    chunks = response(
        "Try things.",
        [
            ("call_00_U", "get_wether", '{"city": "Hangzhou"}'),
            ("call_01_I", "write_file", '{"path": "a.md"}'),
            ("call_02_J", "get_weather", '{"city": "X"]'),
            ("call_03_K", "get_weather", "[1, 2]"),
        ],
    )
    conversation = Conversation("deepseek-v4-flash")
    conversation.add_user("go")
    batch = conversation.add_response(run(chunks)[0])
    reasons = {c.call_id: c.reason for c in batch.rejected}
    assert reasons == {
        "call_00_U": RejectReason.UNKNOWN_TOOL,
        "call_01_I": RejectReason.INVALID,
        "call_02_J": RejectReason.UNREPAIRABLE,
        "call_03_K": RejectReason.INVALID,
    }
    sent = conversation.messages()  # every call answered at once: nothing pending
    arguments = {c["id"]: c["function"]["arguments"] for c in sent[1]["tool_calls"]}
    assert arguments == {
        "call_00_U": '{"city": "Hangzhou"}',  # complete JSON: shown as the model wrote it
        "call_01_I": '{"path": "a.md"}',
        "call_02_J": "{}",  # broken text is never sent back
        "call_03_K": "{}",  # not an object
    }
    contents = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
    assert "Did you mean 'get_weather'?" in contents["call_00_U"]
    assert "reason: unknown_tool]" in contents["call_00_U"]
    assert "$.content: required property is missing" in contents["call_01_I"]
    assert "reason: unrepairable]" in contents["call_02_J"]
    assert check_history(sent, policy=KEEP) == ()
    assert_every_call_answered(sent)


def test_a_call_without_a_name_is_neither_listed_nor_answered() -> None:
    chunks = response("Hmm.", [("call_00_N", None, "{}")], content="Let me see.")
    conversation = Conversation("deepseek-v4-flash")
    conversation.add_user("go")
    batch = conversation.add_response(run(chunks)[0])
    assert [(c.call_id, c.reason) for c in batch.rejected] == [("call_00_N", RejectReason.INVALID)]
    sent = conversation.messages()
    assert sent[1] == {"role": "assistant", "content": "Let me see."}
    assert len(sent) == 2


def test_an_aborted_stream_keeps_its_partial_message_and_answers_its_calls() -> None:
    partial = response(
        "Ningbo too.",
        [("call_00_P", "get_weather", '{"city": "Ning')],
        content="Checking.",
        finish=None,
    )
    core = ToolCallStream(tools=TOOLS)
    seen = [e for c in partial for e in core.feed(c)]
    core.abort()  # as aiter_events does when cancelled: these events are not seen
    conversation = Conversation("deepseek-v4-flash")
    conversation.add_user("add Ningbo")
    with pytest.raises(HistoryError):
        conversation.add_response(seen)  # no Done: the core is needed
    assert conversation.history == [{"role": "user", "content": "add Ningbo"}]
    batch = conversation.add_response(seen, core=core)
    assert batch.aborted
    assert batch.ready == ()
    assert [(c.call_id, c.name, c.reason) for c in batch.rejected] == [
        ("call_00_P", "get_weather", RejectReason.ABORTED)
    ]
    conversation.add_user("never mind")
    sent = conversation.messages()
    assert sent[1] == {
        "role": "assistant",
        "content": "Checking.",
        "reasoning_content": "Ningbo too.",
        "tool_calls": [
            {
                "id": "call_00_P",
                "type": "function",
                "function": {"name": "get_weather", "arguments": "{}"},
            }
        ],
    }
    assert sent[2]["content"].startswith(
        "[streamrepair: get_weather was not executed; status: not_started; reason: aborted]\n"
        "The user interrupted the response"
    )
    assert sent[3] == {"role": "user", "content": "never mind"}
    assert check_history(sent, policy=KEEP) == ()


def test_ready_calls_the_consumer_never_saw_are_not_run() -> None:
    events, core = run(PARALLEL)
    first_ready = next(i for i, e in enumerate(events) if isinstance(e, ToolCallReady))
    conversation = Conversation("deepseek-v4-flash")
    conversation.add_user("go")
    batch = conversation.add_response(events[: first_ready + 1], core=core)
    assert [c.call_id for c in batch.ready] == ["call_00_A"]
    assert [(c.call_id, c.reason) for c in batch.rejected] == [("call_01_B", RejectReason.ABORTED)]
    assert [c.call_id for c in conversation.pending] == ["call_00_A"]
    # The finished arguments are known (Done.messages), so they are shown as finished.
    assert batch.message["tool_calls"][1]["function"]["arguments"] == (
        '{"city": "Suzhou", "days": 2}'
    )
    conversation.answer("call_00_A", "a")
    assert_every_call_answered(conversation.messages())


def test_split_concatenated_values_are_answered_each() -> None:
    chunks = response("Both.", [("call_00_S", "get_weather", '{"city": "A"}{"city": "B"}')])
    events, core = run(chunks)
    conversation = Conversation("deepseek-v4-flash")
    conversation.add_user("go")
    conversation.add_response(events)
    assert [c.call_id for c in conversation.pending] == ["call_00_S", "call_00_Sv2"]
    conversation.cancel_pending()
    assert_every_call_answered(conversation.messages())
    # Without the second value's event, it is known from Done and answered as aborted.
    other = Conversation("deepseek-v4-flash")
    other.add_user("go")
    cut = [e for e in events if not (isinstance(e, ToolCallReady) and e.call_id.endswith("v2"))]
    batch = other.add_response(cut, core=core)
    assert [c.call_id for c in batch.rejected] == ["call_00_Sv2"]


def test_bad_input_gives_clear_errors_and_changes_nothing() -> None:
    conversation = Conversation("deepseek-v4-flash")
    conversation.add_user("go")
    events, _ = run(PARALLEL)
    done = next(e for e in events if isinstance(e, Done))
    with pytest.raises(HistoryError):
        conversation.add_response([done, done])
    with pytest.raises(HistoryError):
        conversation.add_response([], core=ToolCallStream())  # not over
    anthropic = Done(
        stop_reason=StopReason.STOP,
        messages=({"role": "assistant", "content": [{"type": "text", "text": "hi"}]},),
    )
    with pytest.raises(HistoryError, match="Chat Completions"):
        conversation.add_response([anthropic])
    responses = Done(stop_reason=StopReason.STOP, messages=({"type": "message"}, {"type": "x"}))
    with pytest.raises(HistoryError):
        conversation.add_response([responses])
    with pytest.raises(TypeError):
        conversation.add_user(3)  # type: ignore[arg-type]
    assert conversation.history == [{"role": "user", "content": "go"}]
    conversation.add_response(events)
    with pytest.raises(UnansweredCallsError):
        conversation.add_response(events)
    with pytest.raises(HistoryError):
        conversation.answer("call_nope", "x")
    with pytest.raises(ValueError, match="not an answer"):
        conversation.answer("call_00_A", "x", status=RunState.RUNNING)
    with pytest.raises(TypeError):
        conversation.answer("call_00_A", {"x": 1})  # type: ignore[arg-type]
    conversation.answer("call_00_A", "a")
    with pytest.raises(HistoryError, match="already answered"):
        conversation.answer("call_00_A", "again")
    with pytest.raises(HistoryError):
        conversation.start("call_00_A")
    conversation.answer("call_01_B", "b")
    with pytest.raises(HistoryError):
        conversation.status("call_00_A")  # the batch is settled
    assert [m["role"] for m in conversation.history] == ["user", "assistant", "tool", "tool"]


def test_history_and_messages_are_copies() -> None:
    conversation = conversation_after(PARALLEL)
    conversation.messages()[1]["tool_calls"].clear()
    conversation.history[1]["reasoning_content"] = "changed"
    assert conversation.messages()[1]["reasoning_content"] == "Two cities."
    assert len(conversation.messages()[1]["tool_calls"]) == 2


def test_plain_functions_for_harnesses_with_their_own_list() -> None:
    events, _ = run(CUT)
    done = next(e for e in events if isinstance(e, Done))
    verdicts = [e for e in events if isinstance(e, ToolCallReady | ToolCallRejected)]
    history: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    history.append(assistant_message(done, verdicts))
    history.append(tool_message(verdicts[0], "Ningbo: sunny"))
    history.append(tool_message(verdicts[1]))
    assert check_history(history, policy=KEEP) == ()
    assert history[1]["tool_calls"][1]["function"]["arguments"] == "{}"
    assert done.messages[0].get("tool_calls", [])[1:] == []  # Done itself is unchanged
    with pytest.raises(ValueError, match="not_started"):
        tool_message(verdicts[1], "output")
    with pytest.raises(ValueError, match="not_started"):
        tool_message(verdicts[1], status=RunState.COMPLETED)
    with pytest.raises(TypeError):
        tool_message(done, "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        assistant_message(done, [done])  # type: ignore[list-item]
    ready = next(e for e in run(PARALLEL)[0] if isinstance(e, ToolCallReady) and e.schema_repairs)
    noted = tool_message(ready, "out")
    assert noted["content"] == "out\n\n" + note("get_weather", "$.days")
    assert tool_message(ready, "out", history=[noted])["content"] == "out"
    assert tool_message(ready, "", status=RunState.NOT_STARTED)["content"] == (
        "[streamrepair: get_weather was not executed; status: not_started]"
    )
    with pytest.raises(HistoryError):
        assistant_message(Done(stop_reason=StopReason.STOP, messages=done.messages), [ready])


# -- chunking invariance, and every call answered for any mix of verdicts --------------------


def sse(chunks: list[dict[str, Any]]) -> bytes:
    body = "".join(f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks)
    return (body + "data: [DONE]\n\n").encode()


def sent_for(pieces: list[bytes]) -> list[dict[str, Any]]:
    core = ToolCallStream(tools=TOOLS)
    events = [e for piece in pieces for e in core.feed(piece)]
    events += core.finish()
    conversation = Conversation("deepseek-v4-flash")
    conversation.add_user("go")
    conversation.add_response(events)
    for call in conversation.pending:
        conversation.answer(call.call_id, call.name)
    return conversation.messages()


BODY = sse(CUT[:-1] + response("", [], content="é ✓", finish="length")[1:])
WHOLE = sent_for([BODY])


def test_messages_do_not_depend_on_how_the_bytes_were_split() -> None:
    assert WHOLE[1]["content"] == "é ✓"
    assert sent_for([BODY[i : i + 1] for i in range(len(BODY))]) == WHOLE


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=len(BODY) - 1), max_size=12))
def test_messages_do_not_depend_on_random_splits(cuts: list[int]) -> None:
    points = [0, *sorted(set(cuts)), len(BODY)]
    assert sent_for([BODY[a:b] for a, b in itertools.pairwise(points)]) == WHOLE


CALL_KINDS = {
    "ok": '{"city": "Hangzhou"}',
    "repaired": '{"city": "Suzhou", "days": "2",}',
    "unknown": '{"x": 1}',
    "invalid": '{"days": 1}',
    "broken": '{"city": "X"]',
    "cut": '{"city": "Ha',
}


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.sampled_from(sorted(CALL_KINDS)), max_size=5),
    st.sampled_from(["tool_calls", "length", "stop", "content_filter", None]),
    st.booleans(),
    st.sampled_from(list(ReasoningPolicy)),
)
def test_every_call_is_answered_whatever_the_stream(
    kinds: list[str], finish: str | None, run_them: bool, policy: ReasoningPolicy
) -> None:
    calls = [
        (f"call_{i:02d}_Z", "nope" if kind == "unknown" else "get_weather", CALL_KINDS[kind])
        for i, kind in enumerate(kinds)
    ]
    chunks = response("Think.", calls, finish=finish)
    core = ToolCallStream(tools=TOOLS)
    events = [e for c in chunks for e in core.feed(c)]
    events += core.abort() if finish is None else core.finish()
    conversation = Conversation("deepseek-v4-flash", policy=policy)
    conversation.add_user("go")
    batch = conversation.add_response(events)
    assert len(batch.ready) + len(batch.rejected) == len(kinds)
    if finish is None or not normalize_stop_reason(finish).clean:
        assert batch.ready == ()
    for call in conversation.pending:
        if run_them:
            conversation.start(call.call_id)
            conversation.answer(call.call_id, "ok")
    conversation.cancel_pending()
    conversation.add_user("next")
    sent = conversation.messages()
    assert check_history(sent, policy=policy) == ()
    assert_every_call_answered(sent)
    statuses = re.findall(r"status: (\w+)", "\n".join(m["content"] for m in sent[2:-1]))
    assert statuses.count("not_started") >= len(batch.rejected)


# -- the docs ------------------------------------------------------------------------------


def test_turn_loop_doc_examples_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    text = (ROOT / "docs" / "turn-loop.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/turn-loop.md", "exec"), {})


def test_an_aborted_call_keeps_the_text_the_consumer_never_read() -> None:
    # The consumer stops mid-stream; abort()'s rejections are never read, yet the answer
    # and the assistant message keep what had arrived (from the core's verdicts).
    chunks = response("Writing.", [("call_00_W", "write_file", '{"path": "a.md", "content": "ab')])
    core = ToolCallStream(tools=TOOLS)
    events = [e for c in chunks for e in core.feed(c)]
    core.abort()
    conversation = Conversation("deepseek-v4-flash")
    conversation.add_user("write it")
    batch = conversation.add_response(events, core=core)
    assert batch.ready == ()
    (rejected,) = batch.rejected
    assert rejected.reason is RejectReason.ABORTED
    assert rejected.raw == '{"path": "a.md", "content": "ab'
    assert_every_call_answered(conversation.messages())


def test_syntax_repairs_are_noted_in_the_answer_once() -> None:
    # A call whose argument text needed a syntax repair (Python True, a trailing comma) is
    # ready; its answer tells the model what to send instead, once per conversation.
    sloppy = [("call_00_S", "read_file", '{"path": "a.txt", "limit": 5,}')]
    conversation = Conversation("deepseek-v4-flash")
    conversation.add_user("read")
    batch = conversation.add_response(run(response("Reading.", sloppy))[0])
    assert [c.call_id for c in batch.ready] == ["call_00_S"]
    conversation.answer("call_00_S", "file text")
    answer = conversation.messages()[-1]["content"]
    assert answer.startswith("file text\n\n[streamrepair: arguments of read_file were repaired]")
    assert "- trailing_comma at character 28: put no comma after the last member" in answer
    conversation.add_user("again")
    again = [("call_00_T", "read_file", '{"path": "b.txt", "limit": 5,}')]
    conversation.add_response(run(response("Reading.", again))[0])
    conversation.answer("call_00_T", "more text")
    assert conversation.messages()[-1]["content"] == "more text"
