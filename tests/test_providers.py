"""Provider chunk formats -> wire deltas: detection, each format's fields and quirks, SDK
objects, and that nothing passed in is modified."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from streamrepair import ChunkNormalizer, Provider
from streamrepair.providers import (
    UnsupportedChunkError,
    as_chunk,
    detect_provider,
)
from streamrepair.providers.wire import (
    WireBlock,
    WireCitation,
    WireDelta,
    WireEnd,
    WireError,
    WireItem,
    WireMessageStart,
    WireReasoning,
    WireRedactedThinking,
    WireRefusal,
    WireResponse,
    WireSignature,
    WireStop,
    WireText,
    WireToolArguments,
    WireToolCall,
    WireToolEnd,
    WireUsage,
)


def norm(*chunks: dict[str, Any], provider: str | None = None, choice: int = 0) -> list[WireDelta]:
    normalizer = ChunkNormalizer(provider, choice=choice)
    out: list[WireDelta] = []
    for chunk in chunks:
        before = copy.deepcopy(chunk)
        out.extend(normalizer.normalize(chunk))
        assert chunk == before, "the chunk was modified"
    return out


def chat(delta: dict[str, Any], finish: str | None = None, index: int = 0, **top: Any) -> Any:
    return {
        "object": "chat.completion.chunk",
        "choices": [{"index": index, "delta": delta, "finish_reason": finish}],
        **top,
    }


@pytest.mark.parametrize(
    ("chunk", "provider"),
    [
        (chat({"content": "x"}), Provider.OPENAI),
        ({"choices": [], "prompt_filter_results": []}, Provider.OPENAI),  # Azure's first chunk
        ({"type": "message_start", "message": {}}, Provider.ANTHROPIC),
        ({"type": "ping"}, Provider.ANTHROPIC),
        ({"type": "response.created", "response": {}}, Provider.RESPONSES),
        ({"model": "m", "message": {"content": ""}, "done": False}, Provider.OLLAMA),
        ({"type": "tool-plan-delta", "delta": {}}, Provider.COHERE),
        ({"error": {"message": "x"}}, None),
        ({"type": "error", "error": {"message": "x"}}, None),
        ({"candidates": []}, Provider.GEMINI),
        ({"usageMetadata": {}, "modelVersion": "g"}, Provider.GEMINI),
        ({"contentBlockDelta": {"delta": {"text": "x"}}}, Provider.BEDROCK),
        ({"throttlingException": {"message": "slow down"}}, Provider.BEDROCK),
        ({"outputs": []}, None),
    ],
)
def test_detection(chunk: dict[str, Any], provider: Provider | None) -> None:
    assert detect_provider(chunk) is provider


def test_an_error_first_is_reported_and_detection_waits() -> None:
    normalizer = ChunkNormalizer()
    out = normalizer.normalize({"error": {"message": "Overloaded", "type": "overloaded_error"}})
    assert out == [
        WireError(
            message="Overloaded",
            error_type="overloaded_error",
            raw={"error": {"message": "Overloaded", "type": "overloaded_error"}},
        )
    ]
    assert normalizer.provider is None


def test_unrecognized_first_chunk_is_a_clear_error() -> None:
    with pytest.raises(UnsupportedChunkError, match="unrecognized chunk format"):
        ChunkNormalizer().normalize({"outputs": [{"content": {}}]})
    with pytest.raises(UnsupportedChunkError, match="mapping"):
        ChunkNormalizer().normalize([1, 2])  # type: ignore[arg-type]


def test_explicit_provider_and_bad_name() -> None:
    assert ChunkNormalizer("anthropic").provider is Provider.ANTHROPIC
    with pytest.raises(ValueError, match="vertex"):
        ChunkNormalizer("vertex")
    with pytest.raises(ValueError, match="choice"):
        ChunkNormalizer(choice=-1)


# -- OpenAI Chat Completions ---------------------------------------------------------------


def test_openai_text_reasoning_refusal_and_stop() -> None:
    out = norm(
        chat({"role": "assistant", "content": None, "reasoning_content": ""}),
        chat({"reasoning_content": "hm", "content": None}),
        chat({"reasoning": "router spelling"}),
        chat({"content": "Hi", "refusal": None}),
        chat({"refusal": "No."}),
        chat({}, "stop", usage={"total_tokens": 3}),
    )
    assert out == [
        WireReasoning(text=""),  # DeepSeek opens thinking mode with "" (kept for the message)
        WireReasoning(text="hm"),
        WireReasoning(text="router spelling"),
        WireText(text="Hi"),
        WireRefusal(text="No."),
        WireStop(reason="stop"),
        WireUsage(usage={"total_tokens": 3}),
    ]


def test_openai_tool_call_fields_and_quirks() -> None:
    out = norm(
        chat({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {}}]}),
        chat({"tool_calls": [{"index": 0, "id": "", "function": {"name": "", "arguments": "{"}}]}),
        chat(
            {"tool_calls": [{"id": "c2", "function": {"index": 3, "name": "f", "arguments": {}}}]}
        ),
        chat({"tool_calls": [{"function": {"name": "g", "arguments": {"k": "ü"}}}]}),
        chat({"tool_calls": [{"index": 1, "function": {"arguments": None}}, "junk"]}),
    )
    assert out == [
        WireToolCall(id="c1", index=0),
        WireToolCall(index=0, arguments="{"),  # "" id and name mean absent
        WireToolCall(id="c2", index=3, name="f", arguments="{}", from_object=True),
        WireToolCall(name="g", arguments='{"k":"ü"}', from_object=True),
        WireToolCall(index=1),
    ]


def test_openai_legacy_function_call() -> None:
    out = norm(chat({"function_call": {"name": "f", "arguments": ""}}), chat({}, "function_call"))
    assert out == [WireToolCall(index=0, name="f", arguments=""), WireStop(reason="function_call")]


def test_openai_choice_index_is_not_tool_index() -> None:
    tool = {"tool_calls": [{"index": 0, "function": {"arguments": "x"}}]}
    chunks = [chat(tool, index=0), chat(tool, index=1), chat({"content": "b"}, index=1)]
    normalizer = ChunkNormalizer(choice=1)
    out = [d for c in chunks for d in normalizer.normalize(c)]
    assert out == [WireToolCall(index=0, arguments="x"), WireText(text="b")]
    assert normalizer.ignored_choices == 1


def test_openai_usage_chunk_and_error_chunk() -> None:
    out = norm(
        {"object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 1}},
        {"choices": [], "usage": None},
        {"error": {"message": "boom", "type": "server_error", "code": 500}},
        provider="openai",
    )
    assert out == [
        WireUsage(usage={"prompt_tokens": 1}),
        WireError(
            message="boom",
            code="500",
            error_type="server_error",
            raw={"error": {"message": "boom", "type": "server_error", "code": 500}},
        ),
    ]


# -- Anthropic ---------------------------------------------------------------------------


def test_anthropic_events() -> None:
    chunks = [
        {"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 5}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "t"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "s"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "redacted_thinking", "data": "d"},
        },
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {"type": "ping"},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "citations_delta"}},
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "citations_delta", "citation": {"cited_text": "c"}},
        },
        {
            "type": "content_block_start",
            "index": 3,
            "content_block": {"type": "tool_use", "id": "tu", "name": "f", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 3,
            "delta": {"type": "input_json_delta", "partial_json": ""},
        },
        {
            "type": "content_block_start",
            "index": 4,
            "content_block": {"type": "server_tool_use", "id": "srv", "name": "web_search"},
        },
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    assert norm(*chunks) == [
        WireMessageStart(message_id="msg_1"),
        WireResponse(fields={"id": "msg_1"}),
        WireUsage(usage={"input_tokens": 5}),
        WireReasoning(text="", block=0),
        WireReasoning(text="t", block=0),
        WireSignature(signature="s", block=0),
        WireToolEnd(id=None, index=0),
        WireRedactedThinking(data="d", block=1),
        WireText(text="Hi", block=2),
        WireCitation(citation={"cited_text": "c"}, block=2),
        # the {} placeholder is dropped; the block is kept to echo it (caller, ...)
        WireToolCall(
            id="tu", index=3, name="f", expects_end=True, echo=chunks[11]["content_block"]
        ),
        WireToolCall(index=3, arguments="", expects_end=True),
        # Anthropic runs its server tools: a block kept as received, never a call
        WireBlock(content=chunks[13]["content_block"], block=4),
        WireStop(reason="tool_use"),
        WireUsage(usage={"output_tokens": 9}, merge=True),
        WireEnd(),
    ]


def test_anthropic_whole_input_in_block_start_and_error() -> None:
    start = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {"a": 1}},
    }
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    out = norm(start, error)
    # An object is this field's normal shape (programmatic tool calling): no note.
    assert out[0] == WireToolCall(
        id="t",
        index=0,
        name="f",
        arguments='{"a":1}',
        expects_end=True,
        echo=start["content_block"],
    )
    assert out[1] == WireError(message="Overloaded", error_type="overloaded_error", raw=error)


# -- OpenAI Responses --------------------------------------------------------------------


def test_responses_function_call_maps_item_id_to_call_id() -> None:
    item = {
        "id": "fc_1",
        "type": "function_call",
        "call_id": "call_1",
        "name": "f",
        "arguments": "",
    }
    done_item = {**item, "arguments": '{"a":1}', "status": "completed"}
    chunks = [
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 0,
            "delta": '{"a"',
        },
        {
            "type": "response.function_call_arguments.done",
            "item_id": "fc_1",
            "output_index": 0,
            "arguments": '{"a":1}',
        },
        {"type": "response.output_item.done", "output_index": 0, "item": done_item},
        {
            "type": "response.output_item.done",
            "output_index": 1,
            "item": {**done_item, "arguments": ""},
        },
        {"type": "response.output_text.delta", "output_index": 2, "delta": "Hi"},
        {"type": "response.refusal.delta", "delta": "No"},
        {"type": "response.reasoning_summary_text.delta", "output_index": 3, "delta": "r"},
        {
            "type": "response.output_item.done",
            "output_index": 2,
            "item": {"type": "message", "content": []},
        },
        {"type": "response.completed", "response": {"usage": {"total_tokens": 4}}},
    ]

    def start(echo: dict[str, Any], index: int) -> WireToolCall:
        return WireToolCall(id="call_1", index=index, name="f", expects_end=True, echo=echo)

    assert norm(*chunks) == [
        start(item, 0),
        WireToolCall(id="call_1", index=0, arguments='{"a"', expects_end=True),
        WireToolArguments(id="call_1", index=0, arguments='{"a":1}'),
        WireToolEnd(id="call_1", index=0),  # .done closes the call
        start(done_item, 0),
        WireToolArguments(id="call_1", index=0, arguments='{"a":1}'),
        WireToolEnd(id="call_1", index=0),
        start({**done_item, "arguments": ""}, 1),
        WireToolEnd(id="call_1", index=1),  # an empty item.arguments is not authoritative
        WireText(text="Hi", block=2),
        WireRefusal(text="No"),
        WireReasoning(text="r", block=3),
        WireItem(item={"type": "message", "content": []}, block=2),
        WireUsage(usage={"total_tokens": 4}),
        WireStop(reason="completed"),
        WireEnd(),
    ]


def test_responses_custom_tool_incomplete_failed_and_errors() -> None:
    added = {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {
            "type": "custom_tool_call",
            "id": "ct",
            "call_id": "c",
            "name": "sql",
            "input": "",
        },
    }
    delta = {
        "type": "response.custom_tool_call_input.delta",
        "item_id": "ct",
        "output_index": 0,
        "delta": "SELECT",
    }
    incomplete = {
        "type": "response.incomplete",
        "response": {"incomplete_details": {"reason": "max_output_tokens"}},
    }
    out = norm(added, delta, incomplete)
    assert out == [
        WireToolCall(
            id="c", index=0, name="sql", kind="custom", expects_end=True, echo=added["item"]
        ),
        WireToolCall(id="c", index=0, arguments="SELECT", kind="custom", expects_end=True),
        WireStop(reason="incomplete:max_output_tokens"),
        WireEnd(),
    ]
    failed = {
        "type": "response.failed",
        "response": {"error": {"code": "server_error", "message": "m"}},
    }
    top = {"type": "error", "code": "ERR", "message": "went wrong", "param": None}
    nested = {
        "type": "error",
        "error": {"type": "insufficient_quota", "code": "q", "message": "quota"},
    }
    assert norm(failed, top, nested, provider="responses") == [
        WireError(message="m", code="server_error", raw={"error": failed["response"]["error"]}),
        WireError(message="went wrong", code="ERR", raw=top),
        WireError(message="quota", code="q", error_type="insufficient_quota", raw=nested),
    ]


# -- Ollama native and Cohere ------------------------------------------------------------


def test_ollama_native() -> None:
    call = {"id": "c", "function": {"index": 0, "name": "f", "arguments": {"x": 1}}}
    chunks = [
        {
            "model": "m",
            "message": {"role": "assistant", "content": "", "thinking": "t"},
            "done": False,
        },
        {"model": "m", "message": {"content": "a", "tool_calls": [call]}, "done": False},
        {
            "model": "m",
            "message": {"content": ""},
            "done": True,
            "done_reason": "stop",
            "eval_count": 3,
        },
    ]
    assert norm(*chunks) == [
        WireReasoning(text="t"),
        WireText(text="a"),
        WireToolCall(id="c", index=0, name="f", arguments='{"x":1}', from_object=True),
        WireStop(reason="stop"),
        WireUsage(usage={"eval_count": 3}),
        WireEnd(),
    ]


def test_cohere() -> None:
    start = {
        "type": "tool-call-start",
        "index": 0,
        "delta": {
            "message": {
                "tool_calls": {
                    "id": "w1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": ""},
                }
            }
        },
    }
    chunks = [
        {"type": "message-start", "id": "g1", "delta": {"message": {"role": "assistant"}}},
        {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "plan"}}},
        start,
        {
            "type": "tool-call-delta",
            "index": 0,
            "delta": {"message": {"tool_calls": {"function": {"arguments": "{}"}}}},
        },
        {"type": "tool-call-end", "index": 0},
        {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "ok"}}}},
        {"type": "message-end", "delta": {"finish_reason": "TOOL_CALL", "usage": {"tokens": {}}}},
    ]
    assert norm(*chunks) == [
        WireMessageStart(message_id="g1"),
        WireReasoning(text="plan"),
        WireToolCall(id="w1", index=0, name="weather", arguments="", expects_end=True),
        WireToolCall(index=0, arguments="{}", expects_end=True),
        WireToolEnd(id=None, index=0),
        WireText(text="ok", block=0),
        WireStop(reason="TOOL_CALL"),
        WireUsage(usage={"tokens": {}}),
        WireEnd(),
    ]


# -- SDK objects -------------------------------------------------------------------------


def test_as_chunk_duck_typing() -> None:
    class ToDict:
        def to_dict(self, **kwargs: Any) -> dict[str, Any]:
            return {"via": "to_dict", **kwargs}

    class OldToDict:
        def to_dict(self) -> dict[str, Any]:
            return {"via": "old"}

    class Dump:
        def model_dump(self, **kwargs: Any) -> dict[str, Any]:
            return {"via": "model_dump"}

    plain = {"a": 1}
    assert as_chunk(plain) is plain
    assert as_chunk(ToDict())["via"] == "to_dict"
    assert as_chunk(OldToDict()) == {"via": "old"}
    assert as_chunk(Dump()) == {"via": "model_dump"}
    with pytest.raises(UnsupportedChunkError):
        as_chunk(object())


def test_openai_sdk_chunk_objects_give_the_same_deltas_as_dicts() -> None:
    types = pytest.importorskip("openai.types.chat")
    raw = [
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "f", "arguments": ""},
                            }
                        ],
                    },
                    "finish_reason": None,
                }
            ],
        },
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1}'}}]},
                    "finish_reason": None,
                }
            ],
        },
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
        },
    ]
    objects = [types.ChatCompletionChunk.model_validate(c) for c in raw]
    from_objects = norm(*[dict(as_chunk(o)) for o in objects])
    assert from_objects == norm(*json.loads(json.dumps(raw)))


def test_anthropic_sdk_event_objects_give_the_same_deltas_as_dicts() -> None:
    anthropic_types = pytest.importorskip("anthropic.types")
    raw = [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "tu", "name": "f", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"a": 1}'},
        },
        {"type": "content_block_stop", "index": 0},
    ]
    classes = [
        anthropic_types.RawContentBlockStartEvent,
        anthropic_types.RawContentBlockDeltaEvent,
        anthropic_types.RawContentBlockStopEvent,
    ]
    objects = [cls.model_validate(c) for cls, c in zip(classes, raw, strict=True)]
    assert norm(*[dict(as_chunk(o)) for o in objects]) == norm(*raw)
