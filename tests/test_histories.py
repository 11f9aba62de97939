"""Anthropic Messages and Responses API histories: the same guarantees as Chat
Completions (every call answered, rejected calls put back with guidance, repair notes
once, reasoning kept as received), and check_history / repair_history finding each
protocol's 400 causes. Streams are built here as the providers send them, fed whole,
one byte at a time and at random splits."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamrepair import (
    ChangeKind,
    Conversation,
    Done,
    HistoryError,
    ProblemKind,
    Provider,
    ReasoningPolicy,
    RejectReason,
    RunState,
    StopReason,
    StreamEvent,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStream,
    assistant_message,
    check_history,
    function_call_output,
    iter_events,
    prepare_messages,
    repair_history,
    response_items,
    tool_result_block,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sse"

KEEP = ReasoningPolicy.KEEP_FOR_TOOL_CALLS
CLEAR = ReasoningPolicy.CLEAR_ON_USER_TURN
NEVER = ReasoningPolicy.NEVER_SEND
AS_RECEIVED = ReasoningPolicy.AS_RECEIVED

TOOLS = [
    {
        "name": "get_weather",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
    {
        "name": "write_file",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    },
]


def sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


# -- Anthropic streams ---------------------------------------------------------------------


def anthropic(*blocks: tuple[Any, ...], stop: str | None = "tool_use") -> list[dict[str, Any]]:
    """An Anthropic Messages stream: blocks ``("thinking", text, signature or None)``,
    ``("redacted", data)``, ``("text", text)``, ``("tool_use", id, name, json text)``,
    ``("server", id, name, input, result)`` (a web search with its result). A block
    ending in ``"open"`` is cut (no ``content_block_stop``, nothing after it but the
    stop reason); ``stop=None`` ends the stream there (still going)."""
    out: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_01",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "claude-sonnet-4-5",
                "stop_reason": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        }
    ]
    index = 0
    for block in blocks:
        kind, *rest = block
        cut = bool(rest) and rest[-1] == "open"
        if cut:
            rest = rest[:-1]
        if kind == "thinking":
            text, signature = rest
            out.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                }
            )
            for word in text.split(" "):
                delta = {"type": "thinking_delta", "thinking": word + " "}
                out.append({"type": "content_block_delta", "index": index, "delta": delta})
            if signature is not None:
                delta = {"type": "signature_delta", "signature": signature}
                out.append({"type": "content_block_delta", "index": index, "delta": delta})
        elif kind == "redacted":
            out.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "redacted_thinking", "data": rest[0]},
                }
            )
        elif kind == "text":
            out.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                }
            )
            delta = {"type": "text_delta", "text": rest[0]}
            out.append({"type": "content_block_delta", "index": index, "delta": delta})
        elif kind == "tool_use":
            call_id, name, text = rest
            start = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
            out.append({"type": "content_block_start", "index": index, "content_block": start})
            for k in range(0, len(text), 5):
                delta = {"type": "input_json_delta", "partial_json": text[k : k + 5]}
                out.append({"type": "content_block_delta", "index": index, "delta": delta})
        elif kind == "server":
            call_id, name, arguments, result = rest
            use = {"type": "server_tool_use", "id": call_id, "name": name, "input": arguments}
            out.append({"type": "content_block_start", "index": index, "content_block": use})
            out.append({"type": "content_block_stop", "index": index})
            index += 1
            found = {"type": "web_search_tool_result", "tool_use_id": call_id, "content": result}
            out.append({"type": "content_block_start", "index": index, "content_block": found})
        if cut:
            break
        out.append({"type": "content_block_stop", "index": index})
        index += 1
    if stop is not None:
        out.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 50},
            }
        )
        out.append({"type": "message_stop"})
    return out


def events_of(
    stream: list[dict[str, Any]] | bytes,
    *,
    abort: bool = False,
    pieces: list[bytes] | None = None,
    tools: list[dict[str, Any]] | None = TOOLS,
) -> tuple[list[StreamEvent], ToolCallStream]:
    core = ToolCallStream(tools=tools)
    data = stream if isinstance(stream, bytes) else sse(stream)
    events: list[StreamEvent] = []
    for piece in pieces if pieces is not None else [data]:
        events += core.feed(piece)
    events += core.abort() if abort else core.finish()
    return events, core


SIGNED = ("thinking", "Two cities; I call get_weather twice.", "EqQBsig01")
PARALLEL = anthropic(
    SIGNED,
    ("text", "Checking both."),
    ("tool_use", "toolu_01A", "get_weather", '{"city": "Hangzhou"}'),
    ("tool_use", "toolu_01B", "get_weather", '{"city": "Suzhou", "days": "2",}'),
)
FINAL = anthropic(
    ("thinking", "Both are in.", "EqQBsig02"), ("text", "Cloudy, then rain."), stop="end_turn"
)


def anthropic_conversation(model: str = "claude-sonnet-4-5", **kwargs: Any) -> Conversation:
    conversation = Conversation(model, provider="anthropic", system="Be brief.", **kwargs)
    conversation.add_user("Weather in Hangzhou and Suzhou?")
    return conversation


def test_an_anthropic_turn_goes_back_exactly_as_received_with_every_call_answered() -> None:
    conversation = anthropic_conversation()
    events, _ = events_of(PARALLEL)
    done = next(e for e in events if isinstance(e, Done))
    batch = conversation.add_response(events)
    assert batch.message == done.messages[0]  # thinking (signed), text, tool_use, in order
    assert [b["type"] for b in batch.message["content"]] == [
        "thinking",
        "text",
        "tool_use",
        "tool_use",
    ]
    assert batch.message["content"][0]["signature"] == "EqQBsig01"
    assert [c.call_id for c in conversation.pending] == ["toolu_01A", "toolu_01B"]
    conversation.answer("toolu_01B", "Suzhou: rain")  # finishes first
    conversation.answer("toolu_01A", "Hangzhou: cloudy")
    sent = conversation.messages()
    assert sent[0] == {"role": "user", "content": "Weather in Hangzhou and Suzhou?"}
    assert sent[1] == done.messages[0]
    results = sent[2]
    assert results["role"] == "user"
    assert [b["tool_use_id"] for b in results["content"]] == ["toolu_01A", "toolu_01B"]
    assert results["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_01A",
        "content": "Hangzhou: cloudy",
    }
    note = results["content"][1]["content"]
    assert note.startswith("Suzhou: rain\n\n[streamrepair: arguments of get_weather were repaired]")
    assert "trailing_comma" in note
    assert "parse_scalar_string" in note
    assert "is_error" not in results["content"][1]
    assert conversation.system == "Be brief."
    assert all(m["role"] != "system" for m in sent)  # Anthropic takes system= apart
    assert conversation.check() == ()
    # the next sub-turn and a new user turn: the text goes after the results
    conversation.add_response(events_of(FINAL)[0])
    conversation.add_user("Thanks!")
    sent = conversation.messages()
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[4] == {"role": "user", "content": "Thanks!"}
    assert conversation.check() == ()


def test_repair_notes_are_given_once_per_conversation_in_anthropic_too() -> None:
    conversation = anthropic_conversation()
    conversation.add_response(events_of(PARALLEL)[0])
    for call in conversation.pending:
        conversation.answer(call.call_id, "ok")
    again = anthropic(SIGNED, ("tool_use", "toolu_02", "get_weather", '{"city": "Ningbo",}'))
    conversation.add_response(events_of(again)[0])
    conversation.answer("toolu_02", "ok")
    last = conversation.messages()[-1]["content"][0]
    assert last == {"type": "tool_result", "tool_use_id": "toolu_02", "content": "ok"}


def test_anthropic_rejected_calls_are_put_back_in_call_order_and_answered_with_errors() -> None:
    stream = anthropic(
        SIGNED,
        ("tool_use", "toolu_01A", "get_weather", '{"city": "Hangzhou"}'),
        ("tool_use", "toolu_01U", "get_wether", '{"city": "Suzhou"}'),  # unknown tool
        ("tool_use", "toolu_01C", "get_weather", '{"city": "Ningbo"}'),
        ("tool_use", "toolu_01W", "write_file", '{"path": "a.md", "content": "# Rep', "open"),
        stop="max_tokens",
    )
    events, _ = events_of(stream)
    done = next(e for e in events if isinstance(e, Done))
    assert [b.get("id") for b in done.messages[0]["content"]] == [None, "toolu_01A", "toolu_01C"]
    conversation = anthropic_conversation()
    batch = conversation.add_response(events)
    assert [(c.call_id, c.reason) for c in batch.rejected] == [
        ("toolu_01U", RejectReason.UNKNOWN_TOOL),
        ("toolu_01W", RejectReason.CUT_OFF),
    ]
    content = batch.message["content"]
    assert content[0]["type"] == "thinking"  # thinking stays first, before every tool_use
    assert [(b["id"], b["input"]) for b in content[1:]] == [
        ("toolu_01A", {"city": "Hangzhou"}),
        ("toolu_01U", {"city": "Suzhou"}),  # complete JSON: what the model wrote
        ("toolu_01C", {"city": "Ningbo"}),
        ("toolu_01W", {}),  # cut off: nothing that parses without inventing
    ]
    assert batch.rejected[1].raw == '{"path": "a.md", "content": "# Rep'  # kept as streamed
    conversation.answer("toolu_01A", "cloudy")
    conversation.answer("toolu_01C", "sunny")
    results = conversation.messages()[-1]["content"]
    assert [b["tool_use_id"] for b in results] == [
        "toolu_01A",
        "toolu_01U",
        "toolu_01C",
        "toolu_01W",
    ]
    assert [b.get("is_error", False) for b in results] == [False, True, False, True]
    assert results[1]["content"].startswith(
        "[streamrepair: get_wether was not executed; status: not_started; reason: unknown_tool]"
    )
    assert "smaller parts" in results[3]["content"]
    assert conversation.check() == ()


def _shape(content: list[dict[str, Any]]) -> list[str]:
    """Each block as ``type:id`` (calls), ``type:signature`` (thinking) or ``type:text``."""
    return [
        f"{b['type']}:{b.get('id') or b.get('signature') or b.get('text') or b.get('call_id')}"
        for b in content
    ]


@pytest.mark.parametrize(
    ("blocks", "expected"),
    [
        (  # text after the rejected call stays after it
            (
                SIGNED,
                ("text", "First."),
                ("tool_use", "toolu_01U", "get_wether", '{"city": "Suzhou"}'),
                ("text", "Again."),
                ("tool_use", "toolu_01A", "get_weather", '{"city": "Suzhou"}'),
            ),
            [
                "thinking:EqQBsig01",
                "text:First.",
                "tool_use:toolu_01U",
                "text:Again.",
                "tool_use:toolu_01A",
            ],
        ),
        (  # a signed thinking block after it is not moved (Anthropic: 400 when it is)
            (
                SIGNED,
                ("tool_use", "toolu_01U", "get_wether", '{"city": "Suzhou"}'),
                ("thinking", "Wrong name.", "EqQBsig02"),
                ("tool_use", "toolu_01A", "get_weather", '{"city": "Suzhou"}'),
            ),
            [
                "thinking:EqQBsig01",
                "tool_use:toolu_01U",
                "thinking:EqQBsig02",
                "tool_use:toolu_01A",
            ],
        ),
        (  # first, before any block, and several in a row
            (
                ("tool_use", "toolu_01U", "get_wether", '{"city": "Suzhou"}'),
                ("tool_use", "toolu_01V", "get_wether", '{"city": "Ningbo"}'),
                ("text", "Hm."),
                ("tool_use", "toolu_01A", "get_weather", '{"city": "Suzhou"}'),
                ("tool_use", "toolu_01W", "write_file", '{"path": "a.md", "con', "open"),
            ),
            [
                "tool_use:toolu_01U",
                "tool_use:toolu_01V",
                "text:Hm.",
                "tool_use:toolu_01A",
                "tool_use:toolu_01W",
            ],
        ),
    ],
    ids=["text-after", "signed-thinking-after", "first-and-last"],
)
def test_anthropic_rejected_calls_go_back_where_they_began_in_the_stream(
    blocks: tuple[tuple[Any, ...], ...], expected: list[str]
) -> None:
    stream = anthropic(*blocks, stop="max_tokens" if blocks[-1][-1] == "open" else "tool_use")
    events, _ = events_of(stream)
    conversation = anthropic_conversation()
    batch = conversation.add_response(events)
    assert _shape(batch.message["content"]) == expected
    for call in conversation.pending:
        conversation.answer(call.call_id, "ok")
    assert conversation.check() == ()
    # The blocks that were streamed keep their content: only the call is added.
    done = next(e for e in events if isinstance(e, Done))
    kept = [b for b in batch.message["content"] if b.get("id") in (None, "toolu_01A")]
    assert kept == done.messages[0]["content"]


def test_without_call_slots_rejected_calls_go_back_in_call_order() -> None:
    # A Done built by hand (or by an older version) has no slots: the call order decides.
    signed = {"type": "thinking", "thinking": "t", "signature": "s"}
    use = {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {}}
    done = Done(
        stop_reason=StopReason.TOOL_CALLS,
        messages=({"role": "assistant", "content": [signed, use]},),
    )
    rejected = ToolCallRejected(
        call_id="toolu_01U",
        index=1,
        name="get_wether",
        reason=RejectReason.UNKNOWN_TOOL,
        detail="no such tool",
        raw="{}",
    )
    ready = ToolCallReady(call_id="toolu_01A", index=2, name="get_weather", arguments={})
    message = assistant_message(done, [rejected, ready], provider="anthropic")
    assert _shape(message["content"]) == ["thinking:s", "tool_use:toolu_01U", "tool_use:toolu_01A"]
    slotted = Done(
        stop_reason=StopReason.TOOL_CALLS,
        messages=done.messages,
        call_slots=(("toolu_01U", 0),),
    )
    message = assistant_message(slotted, [rejected, ready], provider="anthropic")
    assert _shape(message["content"]) == ["tool_use:toolu_01U", "thinking:s", "tool_use:toolu_01A"]
    assert slotted.to_dict()["call_slots"] == [["toolu_01U", 0]]
    assert "call_slots" not in done.to_dict()
    for bad in ((("toolu_01U", -1),), (("toolu_01U",),), [("toolu_01U", 0)], ((1, 0),)):
        with pytest.raises(TypeError, match="call_slots"):
            Done(stop_reason=StopReason.TOOL_CALLS, call_slots=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("status", "output", "expected"),
    [
        (RunState.COMPLETED, "fine", {"content": "fine"}),
        (RunState.COMPLETED, "", {}),  # an empty result: no empty content sent
        (RunState.FAILED, "OSError: disk full", {"is_error": True}),
        (RunState.INTERRUPTED, "", {"is_error": True}),
        (RunState.NOT_STARTED, "stopped first", {"is_error": True}),
    ],
)
def test_tool_result_blocks_flag_every_answer_but_completed_as_an_error(
    status: RunState, output: str, expected: dict[str, Any]
) -> None:
    call = ToolCallReady(call_id="toolu_X", index=0, name="get_weather", arguments={})
    block = tool_result_block(call, output, status=status)
    assert block["type"] == "tool_result"
    assert block["tool_use_id"] == "toolu_X"
    for key, value in expected.items():
        if key == "content":
            assert block["content"] == value
        else:
            assert block[key] == value
    if status is RunState.COMPLETED:
        assert "is_error" not in block
        assert ("content" in block) is bool(output)
    else:
        assert block["content"].startswith("[streamrepair: get_weather")
        assert f"status: {status.value}" in block["content"]


def test_an_anthropic_stream_cut_inside_its_thinking_leaves_a_sendable_history() -> None:
    # The user pressed stop while the model was thinking: no signature yet.
    stream = anthropic(("thinking", "Let me think about the", None, "open"), stop=None)
    events, core = events_of(stream, abort=True)
    conversation = anthropic_conversation()
    batch = conversation.add_response(events, core=core)
    assert batch.aborted
    assert batch.ready == batch.rejected == ()
    assert conversation.history[1]["content"][0]["thinking"].startswith("Let me think")  # kept
    conversation.add_user("Never mind.")
    sent = conversation.messages()
    # an unsigned thinking block cannot be sent; the message left empty goes too
    assert sent == [
        {"role": "user", "content": "Weather in Hangzhou and Suzhou?"},
        {"role": "user", "content": "Never mind."},
    ]
    assert conversation.check() == ()
    report = repair_history(conversation.history, policy=AS_RECEIVED, provider="anthropic")
    assert [c.kind for c in report.changes] == [
        ChangeKind.UNSIGNED_THINKING_DROPPED,
        ChangeKind.EMPTY_MESSAGE_DROPPED,
    ]
    assert check_history(conversation.history, policy=AS_RECEIVED, provider="anthropic") != ()


def test_an_anthropic_stream_cut_inside_a_call_keeps_its_thinking_and_answers_the_call() -> None:
    stream = anthropic(
        SIGNED, ("tool_use", "toolu_01N", "get_weather", '{"city": "Ning', "open"), stop=None
    )
    events, core = events_of(stream, abort=True)
    conversation = anthropic_conversation()
    batch = conversation.add_response(events[:3], core=core)  # the consumer saw 3 events
    assert [(c.call_id, c.reason) for c in batch.rejected] == [("toolu_01N", RejectReason.ABORTED)]
    conversation.add_user("Never mind.")
    sent = conversation.messages()
    assert [b["type"] for b in sent[1]["content"]] == ["thinking", "tool_use"]
    assert sent[1]["content"][1]["input"] == {}
    assert sent[2]["role"] == "user"
    assert [b["type"] for b in sent[2]["content"]] == ["tool_result", "text"]  # results first
    assert sent[2]["content"][0]["is_error"] is True
    assert "reason: aborted" in sent[2]["content"][0]["content"]
    assert conversation.check() == ()


def test_server_tool_blocks_pass_through_and_need_no_answer() -> None:
    search = [{"type": "web_search_result", "url": "https://example.com", "title": "x"}]
    history = [
        {"role": "user", "content": "Search, then read."},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Search first.", "signature": "sig"},
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": search},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "A"}],
        },
    ]
    before = copy.deepcopy(history)
    assert check_history(history, policy=AS_RECEIVED, provider="anthropic") == ()
    assert prepare_messages(history, policy=AS_RECEIVED, provider="anthropic") == history
    assert history == before


@pytest.mark.parametrize("stop", ["pause_turn", "compaction"])
def test_a_paused_turn_is_sent_back_as_it_is_to_go_on(stop: str) -> None:
    conversation = anthropic_conversation()
    paused = anthropic(SIGNED, ("text", "Searching the web..."), stop=stop)
    batch = conversation.add_response(events_of(paused)[0])
    assert batch.paused
    assert conversation.pending == ()
    sent = conversation.messages()
    assert sent[-1] == batch.message  # the final assistant message: the model goes on
    assert conversation.check() == ()
    done = conversation.add_response(events_of(FINAL)[0]).done
    assert done.raw_stop_reason == "end_turn"


def test_server_tool_blocks_stay_in_the_stored_message_in_their_place() -> None:
    # Done.messages as the tracker keeps server-tool blocks (issue 12): they stay, in
    # order, and only the client's calls are answered; a rejected call goes after the
    # client call before it.
    search = [{"type": "web_search_result", "url": "https://example.com", "title": "x"}]
    content = [
        {"type": "thinking", "thinking": "Search, then read.", "signature": "sig"},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"q": "x"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": search},
        {"type": "text", "text": "Found it; reading."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
    ]
    done = Done(
        stop_reason=StopReason.TOOL_CALLS,
        raw_stop_reason="tool_use",
        messages=({"role": "assistant", "content": content},),
    )
    ready = ToolCallReady(
        call_id="toolu_1", index=4, name="get_weather", arguments={"city": "Paris"}
    )
    unknown = ToolCallRejected(
        call_id="toolu_2",
        index=5,
        name="get_wether",
        reason=RejectReason.UNKNOWN_TOOL,
        detail="Not executed: there is no tool named 'get_wether'.",
        raw='{"city": "Lyon"}',
    )
    conversation = anthropic_conversation()
    batch = conversation.add_response([ready, unknown, done])
    assert batch.message["content"] == [
        *content,
        {"type": "tool_use", "id": "toolu_2", "name": "get_wether", "input": {"city": "Lyon"}},
    ]
    assert content[-1]["id"] == "toolu_1"  # nothing passed is modified
    conversation.answer("toolu_1", "sunny")
    results = conversation.messages()[-1]["content"]
    assert [b["tool_use_id"] for b in results] == ["toolu_1", "toolu_2"]
    assert conversation.check() == ()
    assert assistant_message(done, [unknown, ready], provider="anthropic")["content"][-2:] == [
        {"type": "tool_use", "id": "toolu_2", "name": "get_wether", "input": {"city": "Lyon"}},
        content[-1],  # call order: the rejected one first, before the call after it
    ]


def _assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def _use(call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "t", "input": {}}


def _result(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "r"}


THINK = {"type": "thinking", "thinking": "t", "signature": "s"}
Q = {"role": "user", "content": "q"}


@pytest.mark.parametrize(
    ("policy", "history", "found"),
    [
        # "tool_use ids were found without tool_result blocks immediately after"
        (
            AS_RECEIVED,
            [Q, _assistant(_use("a"), _use("b")), {"role": "user", "content": [_result("a")]}],
            [("unanswered_call", 1, "b")],
        ),
        (AS_RECEIVED, [Q, _assistant(_use("a"))], [("unanswered_call", 1, "a")]),
        # the answer a turn too late (two assistant messages are one turn to the API)
        (
            AS_RECEIVED,
            [
                Q,
                _assistant(_use("a")),
                Q,
                {"role": "assistant", "content": "x"},
                {"role": "user", "content": [_result("a")]},
            ],
            [("unanswered_call", 1, "a"), ("orphan_tool_message", 4, "a")],
        ),
        # text before the results: two user messages are one turn to the API
        (
            AS_RECEIVED,
            [
                Q,
                _assistant(_use("a")),
                {"role": "user", "content": "note"},
                {"role": "user", "content": [_result("a")]},
            ],
            [("results_not_first", 3, "a")],
        ),
        (
            AS_RECEIVED,
            [Q, _assistant(_use("a")), {"role": "user", "content": [_result("a"), _result("a")]}],
            [("duplicate_answer", 2, "a")],
        ),
        (
            AS_RECEIVED,
            [
                Q,
                _assistant({"type": "text", "text": "hi"}),
                {"role": "user", "content": [_result("z")]},
            ],
            [("orphan_tool_message", 2, "z")],
        ),
        (AS_RECEIVED, [Q, {"role": "assistant", "content": []}, Q], [("empty_content", 1, None)]),
        (AS_RECEIVED, [{"role": "user", "content": ""}], [("empty_content", 0, None)]),
        (AS_RECEIVED, [Q, _assistant({"type": "text", "text": ""})], [("empty_content", 1, None)]),
        (
            AS_RECEIVED,
            [
                Q,
                _assistant({"type": "thinking", "thinking": "t"}, {"type": "text", "text": "a"}),
                Q,
            ],
            [("unsigned_thinking", 1, None)],
        ),
        (AS_RECEIVED, [Q, {"content": "no role"}], [("malformed", 1, None)]),
        (AS_RECEIVED, [Q, {"role": "assistant", "content": 3}], [("malformed", 1, None)]),
        (
            AS_RECEIVED,
            [Q, _assistant({"type": "tool_use", "name": "t", "input": {}})],
            [("malformed", 1, None)],
        ),
        # DeepSeek over /anthropic: thinking of a tool-using turn must come back
        (
            KEEP,
            [
                Q,
                _assistant(THINK, _use("a")),
                {"role": "user", "content": [_result("a")]},
                _assistant({"type": "text", "text": "done"}),
                Q,
            ],
            [("missing_reasoning", 3, None)],
        ),
        (KEEP, [Q, _assistant({"type": "text", "text": "no tools"}), Q], []),
        (
            NEVER,
            [Q, _assistant(THINK, {"type": "text", "text": "a"}), Q],
            [("reasoning_sent", 1, None)],
        ),
        # the final assistant message may be empty (prefill); a final tool_use may not
        (AS_RECEIVED, [Q, {"role": "assistant", "content": ""}], []),
    ],
)
def test_check_history_finds_each_anthropic_400(
    policy: ReasoningPolicy, history: list[dict[str, Any]], found: list[tuple[str, int, str | None]]
) -> None:
    before = copy.deepcopy(history)
    problems = check_history(history, policy=policy, provider="anthropic")
    assert [(p.kind.value, p.index, p.call_id) for p in problems] == found
    assert history == before


def test_repair_history_fixes_what_anthropic_rejects_and_reports_each_change() -> None:
    history = [
        Q,
        _assistant({"type": "thinking", "thinking": "cut"}, {"type": "text", "text": ""}),
        Q,
        _assistant(THINK, {"type": "text", "text": ""}, _use("a")),
        {"role": "user", "content": [_result("a")]},
        _assistant({"type": "redacted_thinking", "data": "x"}, {"type": "text", "text": "ok"}),
        Q,
        _assistant(
            {"type": "thinking", "thinking": "tool-less turn", "signature": "s"},
            {"type": "text", "text": "b"},
        ),
        Q,
        {"role": "assistant", "content": []},  # the final prefill stays
    ]
    before = copy.deepcopy(history)
    report = repair_history(history, policy=KEEP, provider="anthropic")
    assert history == before
    assert [(c.kind, c.index, c.block) for c in report.changes] == [
        (ChangeKind.UNSIGNED_THINKING_DROPPED, 1, 0),
        (ChangeKind.EMPTY_BLOCK_DROPPED, 1, 1),
        (ChangeKind.EMPTY_MESSAGE_DROPPED, 1, None),
        (ChangeKind.EMPTY_BLOCK_DROPPED, 3, 1),
        (ChangeKind.REASONING_DROPPED, 7, 0),  # a turn without tools: not needed
    ]
    assert report.messages[2] == _assistant(THINK, _use("a"))
    assert report.messages[4]["content"][0]["type"] == "redacted_thinking"  # kept, in order
    assert report.messages[6] == _assistant({"type": "text", "text": "b"})
    assert report.messages[-1] == {"role": "assistant", "content": []}
    assert report.problems == ()
    assert report.ok
    assert prepare_messages(history, policy=KEEP, provider="anthropic") == report.messages


def test_deepseek_over_anthropic_keeps_the_thinking_of_every_message_of_a_tool_turn() -> None:
    conversation = anthropic_conversation("deepseek-v4-flash")
    assert conversation.policy is KEEP
    conversation.add_response(events_of(PARALLEL)[0])
    for call in conversation.pending:
        conversation.answer(call.call_id, "ok")
    conversation.add_response(events_of(FINAL)[0])
    conversation.add_user("And tomorrow?")
    no_tools = anthropic(("thinking", "Just answer.", "sig3"), ("text", "Sunny."), stop="end_turn")
    conversation.add_response(events_of(no_tools)[0])
    conversation.add_user("Thanks")
    sent = conversation.messages()
    assert sent[1]["content"][0]["type"] == "thinking"
    assert sent[3]["content"][0] == {
        "type": "thinking",
        "thinking": "Both are in. ",
        "signature": "EqQBsig02",
    }
    assert sent[5]["content"] == [{"type": "text", "text": "Sunny."}]  # a turn without tools
    assert conversation.check() == ()
    cleared = copy.deepcopy(sent)
    del cleared[3]["content"][0]  # the final answer's thinking, as an adapter drops it
    problems = check_history(cleared, policy=KEEP, provider="anthropic")
    assert [(p.kind, p.index) for p in problems] == [(ProblemKind.MISSING_REASONING, 3)]


def test_a_stream_in_another_protocol_is_refused_with_a_hint() -> None:
    conversation = Conversation("claude-sonnet-4-5")  # Chat Completions by default
    conversation.add_user("q")
    with pytest.raises(HistoryError, match=r"Anthropic Messages stream \(provider='anthropic'\)"):
        conversation.add_response(events_of(PARALLEL)[0])
    assert conversation.history == [{"role": "user", "content": "q"}]
    with pytest.raises(HistoryError, match="response_items"):
        assistant_message(Done(stop_reason=StopReason.STOP), [], provider="responses")
    with pytest.raises(ValueError, match="no history rules for 'ollama'"):
        Conversation("x", provider="ollama")
    with pytest.raises(ValueError, match="unknown provider"):
        check_history([], policy=KEEP, provider="vertex")


# -- Responses streams ---------------------------------------------------------------------


def responses(*items: tuple[Any, ...], status: str = "completed") -> list[dict[str, Any]]:
    """A Responses API stream: ``("reasoning", id, summary, encrypted or None)``,
    ``("message", id, text)``, ``("function_call", item id, call id, name, arguments)``
    (add ``"open"`` to cut it: no ``.done`` events), ``("custom", item id, call id, name,
    input)``."""
    out: list[dict[str, Any]] = [
        {
            "type": "response.created",
            "response": {"id": "resp_1", "status": "in_progress", "output": []},
        }
    ]
    for index, spec in enumerate(items):
        kind, *rest = spec
        cut = bool(rest) and rest[-1] == "open"
        if cut:
            rest = rest[:-1]
        if kind == "reasoning":
            item_id, summary, encrypted = rest
            item: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": []}
            out.append({"type": "response.output_item.added", "output_index": index, "item": item})
            out.append(
                {
                    "type": "response.reasoning_summary_text.delta",
                    "item_id": item_id,
                    "output_index": index,
                    "summary_index": 0,
                    "delta": summary,
                }
            )
            done = {**item, "summary": [{"type": "summary_text", "text": summary}]}
            if encrypted is not None:
                done["encrypted_content"] = encrypted
            out.append({"type": "response.output_item.done", "output_index": index, "item": done})
        elif kind == "message":
            item_id, text = rest
            item = {
                "id": item_id,
                "type": "message",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            }
            out.append({"type": "response.output_item.added", "output_index": index, "item": item})
            out.append(
                {
                    "type": "response.output_text.delta",
                    "item_id": item_id,
                    "output_index": index,
                    "delta": text,
                }
            )
            part = {"type": "output_text", "text": text, "annotations": []}
            done = {**item, "status": "completed", "content": [part]}
            out.append({"type": "response.output_item.done", "output_index": index, "item": done})
        else:
            item_id, call_id, name, text = rest
            custom = kind == "custom"
            key = "input" if custom else "arguments"
            itype = "custom_tool_call" if custom else "function_call"
            item = {"id": item_id, "type": itype, "call_id": call_id, "name": name, key: ""}
            out.append({"type": "response.output_item.added", "output_index": index, "item": item})
            delta_type = (
                "response.custom_tool_call_input.delta"
                if custom
                else "response.function_call_arguments.delta"
            )
            for k in range(0, len(text), 4):
                out.append(
                    {
                        "type": delta_type,
                        "item_id": item_id,
                        "output_index": index,
                        "delta": text[k : k + 4],
                    }
                )
            if not cut:
                done = {**item, key: text, "status": "completed"}
                out.append(
                    {"type": "response.output_item.done", "output_index": index, "item": done}
                )
    response: dict[str, Any] = {
        "id": "resp_1",
        "status": status,
        "usage": {"input_tokens": 5, "output_tokens": 5},
    }
    if status == "incomplete":
        response["incomplete_details"] = {"reason": "max_output_tokens"}
    out.append({"type": f"response.{status}", "response": response})
    return out


def responses_conversation(model: str = "gpt-5.4") -> Conversation:
    conversation = Conversation(model, provider=Provider.RESPONSES, system="Be brief.")
    conversation.add_user("Weather in Hangzhou and Suzhou?")
    return conversation


RESPONSE = responses(
    ("reasoning", "rs_01", "Two lookups.", "gAAAAencrypted01"),
    ("message", "msg_01", "Checking both."),
    ("function_call", "fc_01", "call_A", "get_weather", '{"city": "Hangzhou"}'),
    ("function_call", "fc_02", "call_B", "get_weather", '{"city": "Suzhou", "days": "2",}'),
)


def test_a_responses_turn_keeps_its_items_and_answers_each_call() -> None:
    conversation = responses_conversation()
    events, _ = events_of(RESPONSE)
    done = next(e for e in events if isinstance(e, Done))
    batch = conversation.add_response(events)
    assert batch.message == {}
    assert list(batch.items) == list(done.messages)
    assert batch.items[0]["encrypted_content"] == "gAAAAencrypted01"  # kept as received
    conversation.answer("call_B", "rain")
    conversation.answer("call_A", "cloudy")
    sent = conversation.messages()
    assert sent[0] == {"role": "system", "content": "Be brief."}
    assert sent[1] == {"role": "user", "content": "Weather in Hangzhou and Suzhou?"}
    assert sent[2:6] == list(done.messages)
    assert sent[6] == {"type": "function_call_output", "call_id": "call_A", "output": "cloudy"}
    assert sent[7]["call_id"] == "call_B"
    assert sent[7]["output"].startswith(
        "rain\n\n[streamrepair: arguments of get_weather were repaired]"
    )
    assert conversation.check() == ()
    conversation.add_user("Thanks")
    assert conversation.check() == ()


def test_responses_rejected_calls_are_put_back_after_the_call_before_them() -> None:
    stream = responses(
        ("reasoning", "rs_01", "Read, then write.", None),
        ("function_call", "fc_01", "call_A", "get_weather", '{"city": "Hangzhou"}'),
        (
            "function_call",
            "fc_02",
            "call_W",
            "write_file",
            '{"path": "b.md", "content": "long',
            "open",
        ),
        status="incomplete",
    )
    events, _ = events_of(stream)
    conversation = responses_conversation()
    batch = conversation.add_response(events)
    assert [(c.call_id, c.reason) for c in batch.rejected] == [("call_W", RejectReason.CUT_OFF)]
    assert [i["type"] for i in batch.items] == ["reasoning", "function_call", "function_call"]
    assert batch.items[2] == {
        "type": "function_call",
        "call_id": "call_W",
        "name": "write_file",
        "arguments": "{}",
    }
    conversation.answer("call_A", "cloudy")
    outputs = conversation.messages()[-2:]
    assert [o["call_id"] for o in outputs] == ["call_A", "call_W"]
    assert "reason: cut_off" in outputs[1]["output"]
    assert conversation.check() == ()


def test_responses_rejected_calls_go_back_where_they_began_so_reasoning_keeps_its_item() -> None:
    stream = responses(
        ("reasoning", "rs_1", "Look it up.", "gAAAAenc1"),
        ("function_call", "fc_1", "call_U", "get_wether", '{"city": "Suzhou"}'),
        ("reasoning", "rs_2", "Right name now.", "gAAAAenc2"),
        ("function_call", "fc_2", "call_A", "get_weather", '{"city": "Suzhou"}'),
    )
    events, _ = events_of(stream)
    done = next(e for e in events if isinstance(e, Done))
    assert done.call_slots == (("call_U", 1),)
    conversation = responses_conversation()
    batch = conversation.add_response(events)
    assert [(i["type"], i.get("id") or i["call_id"]) for i in batch.items] == [
        ("reasoning", "rs_1"),
        ("function_call", "call_U"),  # rs_1 is followed by its own item again
        ("reasoning", "rs_2"),
        ("function_call", "fc_2"),
    ]
    assert batch.items[1]["arguments"] == '{"city": "Suzhou"}'
    conversation.answer("call_A", "cloudy")
    assert conversation.check() == ()


@pytest.mark.parametrize(
    ("reason_input", "expected_input"),
    [("unknown", "*** Begin Patch\n*** End Patch"), ("cut", "")],
)
def test_a_rejected_custom_tool_call_goes_back_as_a_custom_tool_call(
    reason_input: str, expected_input: str
) -> None:
    patch = "*** Begin Patch\n*** End Patch"
    if reason_input == "unknown":
        item = ("custom", "ctc_01", "call_P", "apply_pach", patch)
        status = "completed"
    else:
        item = ("custom", "ctc_01", "call_P", "apply_patch", patch[:9], "open")
        status = "incomplete"
    tools = [
        {"type": "custom", "name": "apply_patch"},
        {"type": "function", "name": "get_weather", "parameters": {"type": "object"}},
    ]
    stream = responses(("reasoning", "rs_1", "Patch it.", None), item, status=status)
    events, _ = events_of(stream, tools=tools if reason_input == "unknown" else None)
    conversation = responses_conversation()
    batch = conversation.add_response(events)
    (rejected,) = batch.rejected
    assert rejected.kind == "custom"
    assert batch.items[1] == {
        "type": "custom_tool_call",
        "call_id": "call_P",
        "name": rejected.name,
        "input": expected_input,
    }
    answer = conversation.messages()[-1]
    assert answer["type"] == "custom_tool_call_output"
    assert answer["call_id"] == "call_P"
    assert "status: not_started" in answer["output"]
    assert conversation.check() == ()


def test_a_custom_tool_call_is_answered_with_a_custom_tool_call_output() -> None:
    stream = responses(
        ("custom", "ctc_01", "call_P", "apply_patch", "*** Begin Patch\n*** End Patch")
    )
    conversation = responses_conversation()
    conversation.add_response(events_of(stream, tools=None)[0])
    (call,) = conversation.pending
    assert call.kind == "custom"
    conversation.answer("call_P", "applied")
    assert conversation.messages()[-1] == {
        "type": "custom_tool_call_output",
        "call_id": "call_P",
        "output": "applied",
    }
    assert conversation.check() == ()


def _item(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


U = {"role": "user", "content": "q"}
R = _item("reasoning", id="rs_1", summary=[])
FC = _item("function_call", call_id="c1", name="t", arguments="{}")
OUT = _item("function_call_output", call_id="c1", output="x")


@pytest.mark.parametrize(
    ("policy", "items", "found"),
    [
        (AS_RECEIVED, [U, R, FC, OUT], []),
        (AS_RECEIVED, [U, R, FC], [("unanswered_call", 2, "c1")]),  # "No tool output found"
        (  # an output before its call answers nothing
            AS_RECEIVED,
            [U, OUT, FC],
            [("orphan_tool_message", 1, "c1"), ("unanswered_call", 2, "c1")],
        ),
        (AS_RECEIVED, [U, FC, OUT, OUT], [("duplicate_answer", 3, "c1")]),
        (AS_RECEIVED, [U, FC, OUT, R], [("reasoning_without_item", 3, None)]),  # nothing after it
        (AS_RECEIVED, [U, R, U], [("reasoning_without_item", 1, None)]),
        (AS_RECEIVED, [U, {"content": "no type or role"}], [("malformed", 1, None)]),
        (
            AS_RECEIVED,
            [U, _item("function_call", name="t", arguments="{}")],
            [("malformed", 1, None)],
        ),
        # DeepSeek over the Responses API: every response of a tool turn with its reasoning
        (
            KEEP,
            [U, FC, OUT, _item("message", role="assistant", content=[])],
            [("missing_reasoning", 1, None), ("missing_reasoning", 3, None)],
        ),
        (KEEP, [U, R, FC, OUT, R, _item("message", role="assistant", content=[])], []),
        (NEVER, [U, R, FC, OUT], [("reasoning_sent", 1, None)]),
    ],
)
def test_check_history_finds_each_responses_400(
    policy: ReasoningPolicy, items: list[dict[str, Any]], found: list[tuple[str, int, str | None]]
) -> None:
    before = copy.deepcopy(items)
    problems = check_history(items, policy=policy, provider="responses")
    assert [(p.kind.value, p.index, p.call_id) for p in problems] == found
    assert items == before


def test_repair_history_drops_reasoning_items_where_the_policy_says() -> None:
    answer = _item("message", role="assistant", content=[{"type": "output_text", "text": "a"}])
    items = [U, R, FC, OUT, R, answer, U, _item("reasoning", id="rs_2", summary=[]), answer, U]
    report = repair_history(items, policy=KEEP, provider="responses")
    assert [(c.kind, c.index) for c in report.changes] == [(ChangeKind.REASONING_DROPPED, 7)]
    assert report.messages == [U, R, FC, OUT, R, answer, U, answer, U]
    assert report.ok
    cleared = repair_history(items, policy=CLEAR, provider="responses")
    assert [c.index for c in cleared.changes] == [1, 4, 7]
    assert [p.kind for p in check_history(cleared.messages, policy=KEEP, provider="responses")] == [
        ProblemKind.MISSING_REASONING,
        ProblemKind.MISSING_REASONING,
    ]


def test_the_plain_functions_for_harnesses_with_their_own_list() -> None:
    events, _ = events_of(RESPONSE)
    done = next(e for e in events if isinstance(e, Done))
    calls = [e for e in events if isinstance(e, ToolCallReady | ToolCallRejected)]
    frozen = copy.deepcopy(done.messages)
    items = response_items(done, calls)
    assert items == list(done.messages)
    assert done.messages == frozen  # nothing passed is modified
    items[0]["summary"].append("changed")
    assert done.messages == frozen  # copies
    ready = calls[0]
    assert isinstance(ready, ToolCallReady)
    assert function_call_output(ready, "x") == {
        "type": "function_call_output",
        "call_id": "call_A",
        "output": "x",
    }
    with pytest.raises(TypeError):
        function_call_output(ready, 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not_started"):
        tool_result_block(
            ToolCallRejected(
                call_id="c", index=0, name="t", reason=RejectReason.CUT_OFF, detail="d"
            ),
            "output",
        )
    with pytest.raises(HistoryError, match=r"not in Done\.messages"):
        response_items(done, [*calls, ToolCallReady(call_id="zz", index=9, name="t", arguments={})])
    with pytest.raises(TypeError):
        response_items(done, ["not an event"])  # type: ignore[list-item]


# -- every chunking ------------------------------------------------------------------------


def sent_after(data: bytes, pieces: list[bytes], provider: str) -> list[dict[str, Any]]:
    events, _ = events_of(data, pieces=pieces)
    conversation = Conversation("deepseek-v4-flash", provider=provider)
    conversation.add_user("go")
    conversation.add_response(events)
    for call in conversation.pending:
        conversation.answer(call.call_id, f"result {call.call_id}")
    return conversation.messages()


CASES = [
    (sse(PARALLEL), "anthropic"),
    (sse(RESPONSE), "responses"),
    (
        sse(
            anthropic(
                SIGNED,
                ("tool_use", "toolu_01A", "get_weather", '{"city": "Hangzhou"}'),
                ("tool_use", "toolu_01W", "write_file", '{"path": "a.md", "content": "#', "open"),
                stop="max_tokens",
            )
        ),
        "anthropic",
    ),
]


@pytest.mark.parametrize(("data", "provider"), CASES)
def test_messages_do_not_depend_on_how_the_bytes_were_split(data: bytes, provider: str) -> None:
    whole = sent_after(data, [data], provider)
    assert check_history(whole, policy=KEEP, provider=provider) == ()
    assert sent_after(data, [data[i : i + 1] for i in range(len(data))], provider) == whole


@settings(max_examples=30, deadline=None)
@given(
    case=st.sampled_from(CASES),
    cuts=st.lists(st.integers(min_value=1, max_value=5000), max_size=25),
)
def test_messages_do_not_depend_on_random_splits(case: tuple[bytes, str], cuts: list[int]) -> None:
    data, provider = case
    points = sorted({c for c in cuts if c < len(data)})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert sent_after(data, pieces, provider) == sent_after(data, [data], provider)


BETWEEN = [
    (
        "anthropic-rejected-between-blocks.sse",
        "anthropic",
        [
            "thinking:EqQBCgIYAhIMrejectedOneSig0001",
            "text:Let me look that up.",
            "tool_use:toolu_01SrWrongName0000000001",
            "thinking:EqQBCgIYAhIMrejectedTwoSig0002",
            "text:Trying again.",
            "tool_use:toolu_01SrRightName0000000002",
        ],
    ),
    (
        "responses-rejected-between-items.sse",
        "responses",
        [
            "reasoning:rs_sr0042a",
            "function_call:call_SrWrongName01",
            "reasoning:rs_sr0042b",
            "function_call:fc_sr0042b",
        ],
    ),
]


def stored_turn(name: str, provider: str, pieces: list[bytes] | None = None) -> list[str]:
    path = FIXTURES / name
    tools = json.loads(path.with_name(name.split(".")[0] + ".tools.json").read_text())
    events, _ = events_of(path.read_bytes(), pieces=pieces, tools=tools)
    conversation = Conversation("m", provider=provider)
    conversation.add_user("Weather in Lyon?")
    batch = conversation.add_response(events)
    for call in conversation.pending:
        conversation.answer(call.call_id, "sunny")
    assert conversation.check() == ()
    entries = batch.message["content"] if provider == "anthropic" else list(batch.items)
    return _shape(entries)


@pytest.mark.parametrize(("name", "provider", "expected"), BETWEEN)
def test_a_rejected_call_between_blocks_stays_there_whole_and_byte_by_byte(
    name: str, provider: str, expected: list[str]
) -> None:
    data = (FIXTURES / name).read_bytes()
    assert stored_turn(name, provider) == expected
    assert stored_turn(name, provider, [data[i : i + 1] for i in range(len(data))]) == expected


@settings(max_examples=25, deadline=None)
@given(
    case=st.sampled_from(BETWEEN),
    cuts=st.lists(st.integers(min_value=1, max_value=8000), max_size=30),
)
def test_a_rejected_call_between_blocks_stays_there_at_random_splits(
    case: tuple[str, str, list[str]], cuts: list[int]
) -> None:
    name, provider, expected = case
    data = (FIXTURES / name).read_bytes()
    points = sorted({c for c in cuts if c < len(data)})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert stored_turn(name, provider, pieces) == expected


# -- properties of the pure functions ------------------------------------------------------

BLOCKS = {
    "anthropic": st.sampled_from(
        [
            {"type": "text", "text": "t"},
            {"type": "text", "text": ""},
            {"type": "thinking", "thinking": "th", "signature": "s"},
            {"type": "thinking", "thinking": "cut"},
            {"type": "redacted_thinking", "data": "d"},
            {"type": "tool_use", "id": "a", "name": "t", "input": {}},
            {"type": "tool_use", "id": "b", "name": "t", "input": {}},
            {"type": "tool_result", "tool_use_id": "a", "content": "r"},
            {"type": "tool_result", "tool_use_id": "b", "content": "r", "is_error": True},
        ]
    ),
}
ANTHROPIC_MESSAGE = st.builds(
    lambda role, content: {"role": role, "content": content},
    st.sampled_from(["user", "assistant"]),
    st.one_of(st.sampled_from(["", "hi"]), st.lists(BLOCKS["anthropic"], max_size=4)),
)
CHAT_MESSAGE = st.one_of(
    st.just({"role": "user", "content": "q"}),
    st.builds(
        lambda content, reasoning, calls: {
            "role": "assistant",
            "content": content,
            **({"reasoning_content": reasoning} if reasoning != "-" else {}),
            **({"tool_calls": [{"id": c, "type": "function"} for c in calls]} if calls else {}),
        },
        st.sampled_from([None, "", "a"]),
        st.sampled_from(["-", None, "", "r"]),
        st.lists(st.sampled_from(["a", "b"]), max_size=2, unique=True),
    ),
    st.builds(
        lambda c: {"role": "tool", "tool_call_id": c, "content": "x"}, st.sampled_from(["a", "b"])
    ),
)
RESPONSES_ITEM = st.sampled_from(
    [
        {"role": "user", "content": "q"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "message", "role": "assistant", "content": []},
        {"type": "function_call", "call_id": "a", "name": "t", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "x"},
        {"type": "custom_tool_call", "call_id": "b", "name": "t", "input": "x"},
        {"type": "custom_tool_call_output", "call_id": "b", "output": "x"},
    ]
)
HISTORIES = {
    "openai": st.lists(CHAT_MESSAGE, max_size=8),
    "anthropic": st.lists(ANTHROPIC_MESSAGE, max_size=8),
    "responses": st.lists(RESPONSES_ITEM, max_size=8),
}
# What repair_history always fixes: never left in what it returns.
FIXED = {
    ProblemKind.NULL_CONTENT,
    ProblemKind.UNSIGNED_THINKING,
    ProblemKind.REASONING_SENT,
}


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    provider=st.sampled_from(sorted(HISTORIES)),
    policy=st.sampled_from(list(ReasoningPolicy)),
)
def test_repair_history_is_idempotent_and_leaves_nothing_it_fixes(
    data: st.DataObject, provider: str, policy: ReasoningPolicy
) -> None:
    history = data.draw(HISTORIES[provider])
    before = copy.deepcopy(history)
    report = repair_history(history, policy=policy, provider=provider)
    assert history == before  # nothing passed is modified
    assert report.problems == check_history(report.messages, policy=policy, provider=provider)
    assert not {p.kind for p in report.problems} & FIXED
    if provider == "openai":  # Chat reasoning can be back-filled
        assert ProblemKind.MISSING_REASONING not in {p.kind for p in report.problems}
    again = repair_history(report.messages, policy=policy, provider=provider)
    assert again.changes == ()
    assert again.messages == report.messages
    assert prepare_messages(history, policy=policy, provider=provider) == report.messages
    assert len(report.messages) <= len(history)
    for problem in check_history(history, policy=policy, provider=provider):
        assert 0 <= problem.index < len(history)


def test_bad_input_is_refused_with_clear_errors() -> None:
    for provider in ("anthropic", "responses"):
        with pytest.raises(TypeError, match="a message must be a mapping"):
            check_history([{"role": "user", "content": "q"}, 42], policy=KEEP, provider=provider)
        with pytest.raises(TypeError, match="policy must be a ReasoningPolicy"):
            repair_history([], policy="keep", provider=provider)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no history rules for 'cohere'"):
        prepare_messages([], policy=KEEP, provider=Provider.COHERE)


CLIENT_ITEMS = [
    ("responses-apply-patch-call.sse", "apply_patch", "apply_patch_call_output"),
    ("responses-shell-call-local.sse", "shell", "shell_call_output"),
    ("responses-local-shell-call.sse", "local_shell", "local_shell_call_output"),
    ("responses-tool-search-call-client.sse", "tool_search", "tool_search_output"),
]


@pytest.mark.parametrize(("fixture", "kind", "answer"), CLIENT_ITEMS)
def test_items_the_client_runs_are_answered_with_their_own_output_item(
    fixture: str, kind: str, answer: str
) -> None:
    data = (FIXTURES / fixture).read_bytes()
    conversation = responses_conversation()
    batch = conversation.add_response(list(iter_events(data, provider="responses")))
    assert batch.ready
    assert {call.kind for call in batch.ready} == {kind}
    output = "[]" if kind == "tool_search" else "done"
    for call in batch.ready:
        conversation.answer(call.call_id, output)
    answers = conversation.messages()[-len(batch.ready) :]
    assert [a.get("call_id", a.get("id")) for a in answers] == [c.call_id for c in batch.ready]
    sent = answers[0]
    assert sent["type"] == answer
    if kind == "shell":
        assert sent["output"] == [
            {"stdout": "done", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}
        ]
    elif kind == "apply_patch":
        assert (sent["status"], sent["output"]) == ("completed", "done")
    assert conversation.check() == ()


def test_a_failed_shell_call_reports_its_text_on_stderr() -> None:
    data = (FIXTURES / "responses-shell-call-local.sse").read_bytes()
    conversation = responses_conversation()
    (call,) = conversation.add_response(list(iter_events(data, provider="responses"))).ready
    conversation.answer(call.call_id, "no such file", status=RunState.FAILED)
    (entry,) = conversation.messages()[-1]["output"]
    assert entry["stdout"] == ""
    assert entry["stderr"].endswith("no such file")
    assert entry["outcome"] == {"type": "exit", "exit_code": 1}


def test_check_history_pairs_every_kind_of_responses_call_and_skips_hosted_ones() -> None:
    local = _item("shell_call", id="sh_1", call_id="c_sh", action={"commands": ["ls"]})
    hosted = {**local, "call_id": "c_h", "environment": {"type": "container_reference"}}
    patch = _item("apply_patch_call", id="ap_1", call_id="c_ap", operation={})
    items = [U, local, hosted, patch]
    problems = check_history(items, policy=AS_RECEIVED, provider="responses")
    assert sorted(p.call_id or "" for p in problems) == ["c_ap", "c_sh"]
    answered = [
        *items,
        _item("shell_call_output", call_id="c_sh", output=[]),
        _item("apply_patch_call_output", call_id="c_ap", status="completed"),
    ]
    assert check_history(answered, policy=AS_RECEIVED, provider="responses") == ()
    stray = [U, _item("local_shell_call_output", id="c_nowhere", output="x")]
    (problem,) = check_history(stray, policy=AS_RECEIVED, provider="responses")
    assert problem.kind is ProblemKind.ORPHAN_TOOL_MESSAGE


def test_an_mcp_approval_request_is_kept_and_left_to_the_harness() -> None:
    data = (FIXTURES / "responses-mcp-approval-request.sse").read_bytes()
    conversation = responses_conversation()
    batch = conversation.add_response(list(iter_events(data, provider="responses")))
    (request,) = batch.rejected
    assert request.reason is RejectReason.UNSUPPORTED
    assert conversation.pending == ()
    sent = conversation.messages()
    assert sent[-1]["type"] == "mcp_approval_request"  # as received, no invented answer
    assert not any(item.get("type") == "function_call" for item in sent)
    assert conversation.check() == ()
    text = function_call_output(request)["output"]
    assert "reason: unsupported" in text
