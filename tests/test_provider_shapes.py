"""Streams as real providers send them (issue 12): blocks the provider runs itself never
become calls and stay in the message as received; the Responses items the client runs
are calls with their kind and input; Gemini and Bedrock; the end-marker finish policy; a
named provider or choice that does not fit the stream. The fixtures' golden files pin
the events at every chunking (tests/test_fixtures_replay.py); these tests pin what the
goldens cannot say on their own."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from streamrepair import (
    Done,
    RejectReason,
    StopReason,
    StreamEvent,
    StreamFailed,
    ToolCallDelta,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStarted,
    ToolCallStream,
    iter_events,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sse"


def run(*chunks: Any, **options: Any) -> list[StreamEvent]:
    core = ToolCallStream(**options)
    events: list[StreamEvent] = []
    for chunk in chunks:
        before = copy.deepcopy(chunk)
        events.extend(core.feed(chunk))
        assert chunk == before, "a chunk was modified"
    events.extend(core.finish())
    return events


def done_of(events: list[StreamEvent]) -> Done:
    last = events[-1]
    assert isinstance(last, Done)
    return last


def calls(events: list[StreamEvent]) -> list[tuple[str, str, Any]]:
    out: list[tuple[str, str, Any]] = []
    for e in events:
        if isinstance(e, ToolCallReady):
            out.append(("ready", e.name, e.arguments))
        elif isinstance(e, ToolCallRejected):
            out.append(("rejected", e.name, e.reason))
    return out


def sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()


# -- Anthropic: server tools, MCP, pause_turn ----------------------------------------------


def test_pause_turn_message_is_the_continuation_request() -> None:
    events = list(iter_events(FIXTURES / "anthropic-server-tool-web-search-pause-turn.sse"))
    assert not [e for e in events if isinstance(e, ToolCallStarted | ToolCallDelta)]
    done = done_of(events)
    assert done.stop_reason is StopReason.PAUSED
    assert done.raw_stop_reason == "pause_turn"
    assert not done.stop_reason.clean
    request = json.loads(
        (FIXTURES / "anthropic-server-tool-web-search-pause-turn.continue.json").read_text(
            encoding="utf-8"
        )
    )
    # The continuation is the same request with the paused turn appended unchanged, as
    # the last message: no user message after it, no tool_result.
    assert request["messages"][-1] == done.messages[0]
    assert [b["type"] for b in done.messages[0]["content"]] == [
        "text",
        "server_tool_use",
        "web_search_tool_result",
        "text",
        "server_tool_use",
        "web_search_tool_result",
    ]


def test_the_continuation_validates_as_anthropic_message_params() -> None:
    pydantic = pytest.importorskip("pydantic")
    types = pytest.importorskip("anthropic.types")
    done = done_of(list(iter_events(FIXTURES / "anthropic-server-tool-web-search-pause-turn.sse")))
    adapter = pydantic.TypeAdapter(list[types.MessageParam])
    adapter.validate_python(list(done.messages), strict=True)
    content = done.messages[0]["content"]
    blocks = pydantic.TypeAdapter(list[types.ContentBlockParam]).validate_python(content)
    assert len(list(blocks)) == 6


def test_server_blocks_are_never_calls_whatever_the_stop_reason() -> None:
    events = list(iter_events(FIXTURES / "anthropic-mcp-tool-use-result.sse"))
    assert calls(events) == []
    content = done_of(events).messages[0]["content"]
    assert [b["type"] for b in content] == [
        "mcp_tool_use",
        "mcp_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
        "text",
    ]
    assert content[0]["input"] == {"query": "mooring fees", "limit": 3}
    assert content[3] == {
        "type": "mcp_tool_result",
        "tool_use_id": "mcptoolu_01DraftDocsFetch0000002",
        "is_error": True,
        "content": "page fees-2026 is not published yet",
    }


def data_lines(name: str) -> list[dict[str, Any]]:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def no_unknown_fields(value: Any, where: str) -> None:
    """Every field of an SDK object is one the SDK declares (pydantic keeps the others
    as extras), recursively: the fixture's shape is the SDK's, not a guess."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        assert not value.model_extra, (where, value.model_extra)
        for field in type(value).model_fields:
            no_unknown_fields(getattr(value, field), f"{where}.{field}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            no_unknown_fields(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            no_unknown_fields(item, f"{where}.{key}")


@pytest.mark.parametrize(
    ("fixture", "module", "union"),
    [
        (
            "anthropic-server-tool-search-code-execution.sse",
            "anthropic.types",
            "RawMessageStreamEvent",
        ),
        ("responses-hosted-items.sse", "openai.types.responses", "ResponseStreamEvent"),
    ],
)
def test_fixture_events_have_the_sdk_shape(fixture: str, module: str, union: str) -> None:
    pydantic = pytest.importorskip("pydantic")
    adapter = pydantic.TypeAdapter(getattr(pytest.importorskip(module), union))
    for chunk in data_lines(fixture):
        if chunk["type"] == "ping":  # on the wire, not in the SDK's union (it skips them)
            continue
        no_unknown_fields(adapter.validate_python(chunk), chunk["type"])


def test_tool_search_and_code_execution_blocks_stay_as_received() -> None:
    name = "anthropic-server-tool-search-code-execution.sse"
    events = list(iter_events(FIXTURES / name))
    assert calls(events) == [
        ("ready", "book_berth", {"port": "Brest", "berth": 6, "arrival": "2026-12-02T04:00"})
    ]
    assert {e.call_id for e in events if isinstance(e, ToolCallStarted | ToolCallDelta)} == {
        "toolu_01DraftBookBerth000001"
    }
    # What was received, read straight from the wire: each block as it started, its
    # streamed input (or text) joined.
    blocks: list[dict[str, Any]] = []
    streamed: dict[int, str] = {}
    for chunk in data_lines(name):
        if chunk["type"] == "content_block_start":
            blocks.append(copy.deepcopy(chunk["content_block"]))
        elif chunk["type"] == "content_block_delta":
            delta = chunk["delta"]
            if delta["type"] == "text_delta":
                blocks[chunk["index"]]["text"] += delta["text"]
            else:
                streamed[chunk["index"]] = streamed.get(chunk["index"], "") + delta["partial_json"]
    for index, text in streamed.items():
        blocks[index]["input"] = json.loads(text)
    done = done_of(events)
    (message,) = done.messages
    assert message == {"role": "assistant", "content": blocks}
    assert [b["type"] for b in blocks].count("server_tool_use") == 9
    assert {b["type"] for b in blocks} == {
        "text",
        "server_tool_use",
        "tool_search_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "code_execution_tool_result",
        "web_fetch_tool_result",
        "tool_use",
    }
    assert done.response["container"]["id"] == "container_01DraftTides0001"


def test_tool_search_and_code_execution_message_is_what_the_sdk_accumulates() -> None:
    streaming = pytest.importorskip("anthropic.lib.streaming._messages")
    name = "anthropic-server-tool-search-code-execution.sse"
    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for chunk in data_lines(name):
        if chunk["type"] != "ping":
            snapshot = streaming.accumulate_event(
                event=chunk, current_snapshot=snapshot, json_bufs=buffers
            )
    content = [block.to_dict() for block in snapshot.content]
    done = done_of(list(iter_events(FIXTURES / name)))
    assert done.messages[0]["content"] == content
    # and it can be sent back as the assistant turn
    pydantic = pytest.importorskip("pydantic")
    types = pytest.importorskip("anthropic.types")
    adapter = pydantic.TypeAdapter(list[types.MessageParam])
    adapter.validate_python(list(done.messages), strict=True)


def test_a_client_call_next_to_a_pending_server_call() -> None:
    events = list(iter_events(FIXTURES / "anthropic-server-and-client-tool-mixed.sse"))
    assert calls(events) == [("ready", "calendar_lookup", {"day": "2026-12-02"})]
    content = done_of(events).messages[0]["content"]
    assert content[0]["type"] == "server_tool_use"  # its result comes after the tool_result
    assert content[1]["caller"] == {"type": "direct"}


def test_programmatic_call_keeps_caller_and_reports_the_container() -> None:
    events = list(iter_events(FIXTURES / "anthropic-programmatic-tool-call.sse"))
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert [(e.name, e.arguments, e.notes) for e in ready] == [
        ("lookup_port", {"port": "Brest"}, ())  # an object input is this block's shape
    ]
    done = done_of(events)
    assert done.messages[0]["content"][1]["caller"] == {
        "type": "code_execution_20250825",
        "tool_id": "srvtoolu_01DraftCodeExec00000001",
    }
    assert done.response["container"] == {
        "id": "container_01DraftBox0001",
        "expires_at": "2026-12-02T10:30:00Z",
    }


def test_a_server_block_whose_input_does_not_parse_is_kept_and_noted() -> None:
    chunks = [
        {"type": "message_start", "message": {"id": "m", "content": []}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "server_tool_use",
                "id": "s",
                "name": "web_search",
                "input": {},
            },
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"query": "cut'},
        },
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}},
        {"type": "message_stop"},
    ]
    done = done_of(run(*chunks))
    assert done.messages[0]["content"] == [
        {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}
    ]
    assert done.notes == (
        "the streamed input of s is not valid JSON (14 characters); the block was kept with "
        "the input it started with",
    )


def test_input_json_delta_on_a_block_that_takes_none_is_ignored() -> None:
    chunks = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{}"},
        },
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
    ]
    events = run(*chunks, provider="anthropic")
    assert calls(events) == []
    assert done_of(events).messages[0]["content"] == []


def test_compaction_and_fallback_blocks_are_kept() -> None:
    done = done_of(list(iter_events(FIXTURES / "anthropic-compaction-pause.sse")))
    assert done.stop_reason is StopReason.PAUSED
    (block,) = done.messages[0]["content"]
    assert block["type"] == "compaction"
    assert block["content"].startswith("The user is planning")
    events = list(iter_events(FIXTURES / "anthropic-fallback-block.sse"))
    assert calls(events) == [("ready", "timetable_lookup", {"port": "Lorient", "season": "winter"})]
    content = done_of(events).messages[0]["content"]
    assert [b["type"] for b in content] == ["fallback", "text", "tool_use"]


def test_a_paused_turn_runs_no_call() -> None:
    chunks = [
        {"type": "message_start", "message": {"id": "m", "content": []}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{}"},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "pause_turn"}},
        {"type": "message_stop"},
    ]
    events = run(*chunks)
    (rejected,) = [e for e in events if isinstance(e, ToolCallRejected)]
    assert rejected.reason is RejectReason.STREAM_INCOMPLETE
    assert "paused the turn" in rejected.detail
    assert "send the assistant message back unchanged" in rejected.detail


def test_the_message_shares_nothing_with_the_chunks() -> None:
    data = (FIXTURES / "anthropic-server-tool-web-search-pause-turn.sse").read_text(
        encoding="utf-8"
    )
    chunks = [json.loads(line[6:]) for line in data.splitlines() if line.startswith("data: ")]
    done = done_of(run(*chunks))
    before = copy.deepcopy(chunks)
    done.messages[0]["content"][2]["content"][0]["title"] = "changed"
    done.messages[0]["content"][3]["citations"][0]["url"] = "changed"
    assert chunks == before


# -- Responses: the items the client runs ---------------------------------------------------


def responses(*events: dict[str, Any], completed: bool = True) -> list[dict[str, Any]]:
    tail = [{"type": "response.completed", "response": {"id": "resp_1", "usage": {}}}]
    return [*events, *(tail if completed else [])]


def added(item: dict[str, Any], index: int = 0) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def item_done(item: dict[str, Any], index: int = 0) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


PATCH = {
    "type": "apply_patch_call",
    "id": "apc_1",
    "call_id": "call_p",
    "status": "completed",
    "operation": {"type": "create_file", "path": "a.md", "diff": "+hi\n"},
}


@pytest.mark.parametrize(
    ("fixture", "kind", "arguments"),
    [
        (
            "responses-apply-patch-call.sse",
            "apply_patch",
            {
                "type": "update_file",
                "path": "docs/ferries.md",
                "diff": "@@\n-Winter: first crossing 08:30\n+Winter: first crossing 08:15\n",
            },
        ),
        (
            "responses-shell-call-local.sse",
            "shell",
            {
                "commands": ["ls -la docs", "grep -n 'crossing' docs/ferries.md"],
                "timeout_ms": 120000,
                "max_output_length": 4096,
            },
        ),
        (
            "responses-local-shell-call.sse",
            "local_shell",
            {
                "type": "exec",
                "command": ["bash", "-lc", "wc -l docs/ferries.md"],
                "env": {},
                "timeout_ms": 10000,
                "working_directory": "/work",
                "user": None,
            },
        ),
        ("responses-tool-search-call-client.sse", "tool_search", {"query": "ferry timetable"}),
    ],
)
def test_client_items_are_calls_with_their_kind_and_input(
    fixture: str, kind: str, arguments: dict[str, Any]
) -> None:
    events = list(iter_events(FIXTURES / fixture))
    first = next(e for e in events if isinstance(e, ToolCallReady))
    assert (first.kind, first.name, first.arguments) == (kind, kind, arguments)
    done = done_of(events)
    assert done.messages[0]["type"] == f"{kind}_call"  # echoed as received
    assert done.messages[0]["call_id"] == first.call_id
    assert not done.tool_calls_missing


def test_custom_tool_input_is_text_never_json() -> None:
    events = list(iter_events(FIXTURES / "responses-custom-tool-call.sse"))
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert ready[0].kind == "custom"
    assert ready[0].arguments == (
        "SELECT port, first_crossing FROM timetable\nWHERE season = 'winter' AND port = 'Quiberon';"
    )
    custom = [e for e in events if isinstance(e, ToolCallDelta) and e.name == "run_sql"]
    assert [e.preview for e in custom] == [None, None]
    items = done_of(events).messages
    assert [i["type"] for i in items] == ["reasoning", "custom_tool_call", "function_call"]


def test_hosted_items_are_not_calls() -> None:
    events = list(iter_events(FIXTURES / "responses-shell-call-hosted.sse"))
    assert calls(events) == []
    types = [i["type"] for i in done_of(events).messages]
    assert types == ["shell_call", "shell_call_output", "message"]
    # Every other hosted kind, streamed with its own progress and argument events (the
    # MCP call's `mcp_call_arguments.delta` is not a function call's): only the client's
    # function call is a call, and the output items are the messages as received.
    chunks = data_lines("responses-hosted-items.sse")
    events = list(iter_events(FIXTURES / "responses-hosted-items.sse"))
    assert calls(events) == [("ready", "book_berth", {"port": "Brest", "berth": 6})]
    assert {e.call_id for e in events if isinstance(e, ToolCallStarted | ToolCallDelta)} == {
        "call_draftBookBerth01"
    }
    done = done_of(events)
    output = chunks[-1]["response"]["output"]
    assert list(done.messages[:-1]) == output[:-1]  # the hosted items, as received
    call = {**output[-1], "arguments": json.dumps({"port": "Brest", "berth": 6})}
    assert done.messages[-1] == call  # the call with the arguments it is ready with
    assert [i["type"] for i in done.messages] == [
        "mcp_list_tools",
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "mcp_call",
        "image_generation_call",
        "message",
        "function_call",
    ]
    assert not done.tool_calls_missing
    server_search = {
        "type": "tool_search_call",
        "id": "ts",
        "call_id": "c",
        "execution": "server",
        "arguments": {"query": "x"},
    }
    events = run(*responses(added(server_search), item_done(server_search)))
    assert calls(events) == []
    assert done_of(events).messages == (server_search,)


def test_a_client_item_never_done_is_cut_off_with_its_kind() -> None:
    incomplete = {
        "type": "response.incomplete",
        "response": {"incomplete_details": {"reason": "max_output_tokens"}},
    }
    diff = {
        "type": "response.apply_patch_call_operation_diff.delta",
        "item_id": "apc_1",
        "output_index": 0,
        "delta": "+hi",
    }
    events = run(added({**PATCH, "status": "in_progress"}), diff, incomplete)
    (rejected,) = [e for e in events if isinstance(e, ToolCallRejected)]
    assert (rejected.reason, rejected.kind, rejected.name) == (
        RejectReason.CUT_OFF,
        "apply_patch",
        "apply_patch",
    )
    assert [e.text for e in events if isinstance(e, ToolCallDelta)] == ["+hi"]


def test_a_client_item_without_its_input_is_invalid() -> None:
    broken = {k: v for k, v in PATCH.items() if k != "operation"}
    events = run(*responses(added(broken), item_done(broken)))
    (rejected,) = [e for e in events if isinstance(e, ToolCallRejected)]
    assert rejected.reason is RejectReason.INVALID
    assert "carries no input object" in rejected.detail
    assert done_of(events).messages == ()


def test_builtin_kinds_pass_a_tool_list_that_names_only_functions() -> None:
    tools = [{"type": "function", "name": "notify", "parameters": {"type": "object"}}]
    events = run(*responses(added(PATCH), item_done(PATCH)), tools=tools)
    assert calls(events) == [("ready", "apply_patch", PATCH["operation"])]


def test_diff_deltas_of_an_unknown_item_make_no_call() -> None:
    diff = {
        "type": "response.apply_patch_call_operation_diff.delta",
        "item_id": "apc_unknown",
        "output_index": 3,
        "delta": "+x",
    }
    assert calls(run(*responses(diff))) == []


def test_the_ready_value_is_a_copy() -> None:
    chunks = responses(added(PATCH), item_done(PATCH))
    events = run(*chunks)
    (ready,) = [e for e in events if isinstance(e, ToolCallReady)]
    ready.arguments["path"] = "changed"
    assert chunks[1]["item"]["operation"]["path"] == "a.md"


def test_mcp_approval_request_is_rejected_as_unsupported_and_kept() -> None:
    events = list(iter_events(FIXTURES / "responses-mcp-approval-request.sse"))
    (rejected,) = [e for e in events if isinstance(e, ToolCallRejected)]
    assert (rejected.reason, rejected.kind) == (RejectReason.UNSUPPORTED, "mcp_approval_request")
    assert "mcp_approval_response" in rejected.detail
    types = [i["type"] for i in done_of(events).messages]
    assert types == ["mcp_list_tools", "mcp_approval_request"]


def test_arguments_done_closes_a_call_without_its_item_done() -> None:
    events = list(iter_events(FIXTURES / "responses-arguments-done-no-item-done.sse"))
    assert calls(events) == [
        ("ready", "read_file", {"path": "src/ferry/timetable.py", "start_line": 40})
    ]
    assert done_of(events).response == {"id": "resp_srArgsDone01", "model": "qwen3-coder-next"}


# -- Gemini native -----------------------------------------------------------------------------


def gemini(*parts: dict[str, Any], finish: str | None = None, **top: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **top}


def partial(path: str, **value: Any) -> dict[str, Any]:
    return {"functionCall": {"partialArgs": [{"jsonPath": path, **value}], "willContinue": True}}


def test_gemini_sse_and_ndjson_give_the_same_events() -> None:
    sse_events = [
        e.to_dict()
        for e in iter_events(FIXTURES / "gemini-native-function-call-thought-signature.sse")
    ]
    nd_events = [
        e.to_dict() for e in iter_events(FIXTURES / "gemini-native-function-call-ndjson.ndjson")
    ]
    assert sse_events == nd_events
    message = sse_events[-1]["messages"][0]
    assert message["role"] == "model"
    assert message["parts"][1]["thoughtSignature"].startswith("ZHJhZnQ")
    assert "thoughtSignature" not in message["parts"][2]


def test_gemini_partial_args_by_nested_json_path() -> None:
    chunks = [
        gemini({"functionCall": {"name": "plan", "willContinue": True}}),
        gemini(partial("$.recipe.name", stringValue="Far ", willContinue=True)),
        gemini(partial("$.recipe.name", stringValue="breton")),
        gemini(partial("$.recipe.ingredients[0].amount", numberValue=2)),
        gemini(partial("$.recipe.ingredients[0]['name']", stringValue="eggs")),
        gemini({"functionCall": {"willContinue": True}}),
        gemini(partial("$.recipe.ingredients[1].name", stringValue="prunes")),
        gemini(partial('$["tags"][0]', stringValue="dessert")),
        gemini({"functionCall": {}}, finish="STOP"),
    ]
    events = run(*chunks)
    assert calls(events) == [
        (
            "ready",
            "plan",
            {
                "recipe": {
                    "name": "Far breton",
                    "ingredients": [{"amount": 2, "name": "eggs"}, {"name": "prunes"}],
                },
                "tags": ["dessert"],
            },
        )
    ]


def test_gemini_a_string_piece_without_will_continue_starts_over() -> None:
    chunks = [
        gemini({"functionCall": {"name": "f", "willContinue": True}}),
        gemini(partial("$.a", stringValue="x")),
        gemini(partial("$.a", stringValue="y")),
        gemini({"functionCall": {}}, finish="STOP"),
    ]
    assert calls(run(*chunks)) == [("ready", "f", {"a": "y"})]


@pytest.mark.parametrize(
    ("piece", "problem"),
    [
        (partial("a.b", stringValue="x"), "cannot read jsonPath"),
        (partial("$.list[2]", stringValue="x"), "skips array elements"),
        (partial("$.a", numberValue=1), None),
        (partial("$", stringValue="x"), "cannot read jsonPath"),
        (partial("$.a", other=1), "no value"),
        (partial("$.a", stringValue=5), "not a string"),
    ],
)
def test_gemini_partial_args_that_cannot_be_read(
    piece: dict[str, Any], problem: str | None
) -> None:
    chunks = [
        gemini({"functionCall": {"name": "f", "willContinue": True}}),
        gemini(partial("$.list[0]", stringValue="x")),
        gemini(piece),
        gemini({"functionCall": {}}, finish="STOP"),
    ]
    events = run(*chunks)
    failed = [e for e in events if isinstance(e, StreamFailed)]
    if problem is None:
        assert failed == []
        return
    assert [f.code for f in failed] == ["bad_chunk"]
    assert problem in failed[0].message
    assert calls(events) == [("rejected", "f", RejectReason.STREAM_INCOMPLETE)]


def test_gemini_path_into_a_scalar_or_a_key_in_an_array() -> None:
    for path in ("$.list[0].x", "$.list.x"):
        chunks = [
            gemini({"functionCall": {"name": "f", "willContinue": True}}),
            gemini(partial("$.list[0]", stringValue="x")),
            gemini(partial(path, stringValue="y")),
        ]
        failed = [e for e in run(*chunks) if isinstance(e, StreamFailed)]
        assert [f.code for f in failed] == ["bad_chunk"], path


def test_gemini_partial_call_never_closed_is_cut_off() -> None:
    chunks = [
        gemini({"functionCall": {"name": "f", "willContinue": True}}),
        gemini(partial("$.a", stringValue="x", willContinue=True), finish="STOP"),
    ]
    assert calls(run(*chunks)) == [("rejected", "f", RejectReason.CUT_OFF)]


def test_gemini_other_parts_errors_and_blocked_prompts() -> None:
    code = {"executableCode": {"language": "PYTHON", "code": "print(6*7)"}}
    result = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n"}}
    chunks = [
        gemini(code, result, {"text": "It is 42."}, responseId="r1", modelVersion="g"),
        gemini({"text": "", "thoughtSignature": "c2ln"}, finish="STOP"),
        gemini({"functionCall": {"name": "ping"}}),  # no args: a zero-argument call
    ]
    events = run(*chunks)
    done = done_of(events)
    assert done.messages[0]["parts"] == [
        code,
        result,
        {"text": "It is 42."},
        {"text": "", "thoughtSignature": "c2ln"},
        {"functionCall": {"name": "ping", "args": {}}},
    ]
    assert done.response == {"id": "r1", "model": "g"}
    assert calls(events) == [("ready", "ping", {})]
    error = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    failed = [e for e in run(gemini({"text": "a"}), error) if isinstance(e, StreamFailed)]
    assert [(f.code, f.error_type, f.message) for f in failed] == [
        ("503", "UNAVAILABLE", "The model is overloaded.")
    ]
    blocked = {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {}}
    assert done_of(run(blocked)).stop_reason is StopReason.CONTENT_FILTER


def test_gemini_follows_the_chosen_candidate() -> None:
    two = {
        "candidates": [
            {"index": 0, "content": {"parts": [{"text": "zero"}]}, "finishReason": "STOP"},
            {"index": 1, "content": {"parts": [{"text": "one"}]}, "finishReason": "STOP"},
        ]
    }
    assert done_of(run(two, choice=1)).messages[0]["parts"] == [{"text": "one"}]


# -- Bedrock parsed events (what boto3 yields) ------------------------------------------------


def test_bedrock_reasoning_server_tools_and_exceptions() -> None:
    chunks = [
        {"messageStart": {"role": "assistant"}},
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"redactedContent": b"\x00\x01"}},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {
            "contentBlockStart": {
                "contentBlockIndex": 1,
                "start": {
                    "toolUse": {
                        "toolUseId": "s1",
                        "name": "web_grounding",
                        "type": "server_tool_use",
                    }
                },
            }
        },
        {
            "contentBlockDelta": {
                "contentBlockIndex": 1,
                "delta": {"toolUse": {"input": '{"q": "ferries"}'}},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 1}},
        {
            "contentBlockStart": {
                "contentBlockIndex": 2,
                "start": {"toolResult": {"toolUseId": "s1", "status": "success"}},
            }
        },
        {"contentBlockDelta": {"contentBlockIndex": 2, "delta": {"toolResult": [{"text": "two"}]}}},
        {
            "contentBlockDelta": {
                "contentBlockIndex": 2,
                "delta": {"toolResult": [{"text": "pages"}]},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 2}},
        {"contentBlockDelta": {"contentBlockIndex": 3, "delta": {"text": "Found it."}}},
        {"messageStop": {"stopReason": "end_turn"}},
        {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}}},
    ]
    events = run(*chunks)
    assert calls(events) == []
    done = done_of(events)
    assert done.messages[0]["content"] == [
        {"reasoningContent": {"redactedContent": "AAE="}},
        {
            "toolUse": {
                "toolUseId": "s1",
                "name": "web_grounding",
                "type": "server_tool_use",
                "input": {"q": "ferries"},
            }
        },
        {
            "toolResult": {
                "toolUseId": "s1",
                "status": "success",
                "content": [{"text": "two"}, {"text": "pages"}],
            }
        },
        {"text": "Found it."},
    ]
    assert done.usage == {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}
    throttled = {"throttlingException": {"message": "Too many requests"}}
    failed = [e for e in run(chunks[0], throttled) if isinstance(e, StreamFailed)]
    assert [(f.code, f.message) for f in failed] == [("throttlingException", "Too many requests")]
    guarded = done_of(run(chunks[0], {"messageStop": {"stopReason": "guardrail_intervened"}}))
    assert guarded.stop_reason is StopReason.CONTENT_FILTER


def test_bedrock_tool_result_pieces_extend_its_content() -> None:
    chunks = [
        {
            "contentBlockStart": {
                "contentBlockIndex": 0,
                "start": {"toolResult": {"toolUseId": "s", "content": []}},
            }
        },
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolResult": [{"text": "a"}]}}},
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"toolResult": [{"json": {"b": 1}}]},
            }
        },
        {"messageStop": {"stopReason": "end_turn"}},
    ]
    content = done_of(run(*chunks)).messages[0]["content"]
    assert content == [
        {"toolResult": {"toolUseId": "s", "content": [{"text": "a"}, {"json": {"b": 1}}]}}
    ]


# -- the finish policy with an end marker but no stop reason -------------------------------


def test_end_marker_without_stop_reason_judges_each_call() -> None:
    events = list(iter_events(FIXTURES / "finish-done-no-reason-cut-off.sse"))
    assert calls(events) == [
        ("rejected", "write_file", RejectReason.CUT_OFF),
        ("ready", "list_dir", {"path": "notes"}),
    ]
    done = done_of(events)
    assert done.stop_reason is StopReason.MISSING
    assert done.raw_stop_reason is None
    assert "without a stop reason" in done.notes[0]


def test_without_an_end_marker_nothing_is_ready() -> None:
    data = (FIXTURES / "openrouter-kimi-k2-done-usage-no-finish-reason.sse").read_bytes()
    cut = data.replace(b"data: [DONE]\n\n", b"")
    events = list(iter_events(cut))
    assert calls(events) == [("rejected", "timetable_lookup", RejectReason.STREAM_INCOMPLETE)]
    assert done_of(events).notes == ()


def test_anthropic_message_stop_without_message_delta() -> None:
    chunks = [
        {"type": "message_start", "message": {"id": "m", "content": []}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "a", "name": "f", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{}"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "b", "name": "g", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "{}"},
        },
        {"type": "message_stop"},
    ]
    assert calls(run(*chunks)) == [
        ("ready", "f", {}),
        ("rejected", "g", RejectReason.CUT_OFF),  # never closed
    ]


# -- a named provider or a choice that does not fit the stream ----------------------------------


def test_a_named_provider_that_does_not_match_fails_the_stream() -> None:
    data = (FIXTURES / "openai-n2-choices.sse").read_bytes()
    events = list(iter_events(data, provider="anthropic"))
    failed = [e for e in events if isinstance(e, StreamFailed)]
    assert [f.code for f in failed] == ["unsupported_chunk"]
    assert failed[0].message.startswith(
        "the stream was named anthropic, but this chunk is in openai's format"
    )
    assert done_of(events).stop_reason is StopReason.ERROR
    # the right name is confirmed once and then trusted
    assert not [e for e in iter_events(data, provider="openai") if isinstance(e, StreamFailed)]


def test_a_choice_that_never_comes_fails_the_stream() -> None:
    data = (FIXTURES / "openai-n2-choices.sse").read_bytes()
    for source in (data, data.replace(b"data: [DONE]", b": no end marker")):
        events = list(iter_events(source, choice=3))
        failed = [e for e in events if isinstance(e, StreamFailed)]
        assert [f.code for f in failed] == ["unsupported_chunk"]
        assert failed[0].message.startswith(
            "no chunk of choice 3 arrived; the stream has choice(s) 0, 1"
        )
    with pytest.raises(ValueError, match="choice"):
        ToolCallStream(choice=-1)


# -- Done.response ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "response"),
    [
        (
            "deepseek-thinking-tools.sse",
            {"id": "3f1d2c4b-5a6e-4f70-8b9c-0d1e2f3a4b5c", "model": "deepseek-v4-flash"},
        ),
        ("responses-function-call.sse", {"id": "resp_sr0001", "model": "gpt-5.4"}),
        (
            "gemini-vertex-partial-args.sse",
            {"id": "DraftVertexResp001", "model": "gemini-3.1-pro-preview"},
        ),
        ("bedrock-converse-tool-use.eventstream", None),
    ],
)
def test_done_reports_what_the_provider_said_about_the_response(
    fixture: str, response: dict[str, Any] | None
) -> None:
    assert done_of(list(iter_events(FIXTURES / fixture))).response == response


# -- bounds ------------------------------------------------------------------------------------


def test_server_block_input_counts_toward_max_text_chars() -> None:
    chunks = [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "server_tool_use",
                "id": "s",
                "name": "web_search",
                "input": {},
            },
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"query": "' + "x" * 40},
        },
    ]
    events = run(*chunks, max_text_chars=32)
    failed = [e for e in events if isinstance(e, StreamFailed)]
    assert [f.code for f in failed] == ["too_large"]


def test_kept_blocks_are_bounded() -> None:
    from streamrepair.stream.tracker import MAX_BLOCKS

    block = {"type": "web_search_tool_result", "tool_use_id": "s", "content": []}
    chunks = [
        {"type": "content_block_start", "index": n, "content_block": block}
        for n in range(MAX_BLOCKS + 1)
    ]
    core = ToolCallStream(provider="anthropic")
    events: list[StreamEvent] = []
    for chunk in chunks:
        events.extend(core.feed(chunk))
    failed = [e for e in events if isinstance(e, StreamFailed)]
    assert [f.code for f in failed] == ["too_many"]
    assert len(done_of(events).messages[0]["content"]) == MAX_BLOCKS
