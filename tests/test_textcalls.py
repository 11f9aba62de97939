"""Tool calls written as text (``text_tool_calls``): every format whole, one character at a
time and at random splits; every marker split at every position; look-alikes released as
soon as they cannot be markers; calls cut off anywhere never ready; bad markup left as
text; values typed by the schema; the reasoning rule; the pipeline, drivers and CLI.

Streams are fed as Chat Completions chunks whose ``content`` (or ``reasoning_content``)
pieces are the splits under test. Results are compared as summaries: adjacent text
merged, each call's argument text joined, its last preview kept.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamrepair import (
    Done,
    ReasoningDelta,
    RepairKind,
    StreamFailed,
    TextCallExtractor,
    TextCallFormat,
    TextDelta,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStarted,
    ToolCallStream,
    aiter_events,
    append_repair_notes,
    iter_events,
    load_recording,
)
from streamrepair.providers import MAX_HEADER_CHARS, WireEnd, WireReasoning, WireText
from streamrepair.providers.textcalls._kimi import KimiId, kimi_name
from streamrepair.providers.textcalls._readers import AUTO, START_MARKERS
from streamrepair.providers.textcalls._region import NameHeader, valid_name
from streamrepair.providers.textcalls._values import convert_python, convert_text, param_types
from streamrepair.syntax.changes import change_from_dict, normalize

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"

TOOLS: list[dict[str, Any]] = [
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
                    "append": {"type": "boolean"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    },
    {"type": "function", "function": {"name": "get_time", "parameters": {}}},
]


@dataclass(frozen=True)
class Sample:
    fmt: str
    text: str
    calls: list[tuple[str, dict[str, Any]]]  # the ready calls, in order
    content: str = ""  # the text left once the markup is removed
    first_end: str = ""  # the substring whose end completes the first call
    tools: list[dict[str, Any]] | None = None
    reasoning: bool = False
    repairs: list[str] = field(default_factory=list)  # markup_value parameter names
    # with a clean stop, the substring whose end completes the first call (a call whose
    # end is a stop token the server removes: Harmony's <|call|>)
    stop_end: str = ""


SAMPLES: dict[str, Sample] = {
    "hermes": Sample(
        "auto",
        'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris </tool_call>"}}'
        '\n</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>',
        [("get_weather", {"city": "Paris </tool_call>"}), ("get_time", {})],
        "Checking.\n",
        "}}\n</tool_call>",
    ),
    "qwen3_coder": Sample(
        "auto",
        "<tool_call>\n<function=write_file>\n<parameter=path>\na.py\n</parameter>\n"
        "<parameter=content>\nx = 1 </parameter> y\n\n</parameter>\n<parameter=mode>\n644\n"
        "</parameter>\n</function>\n</tool_call>",
        [("write_file", {"path": "a.py", "content": "x = 1 </parameter> y\n", "mode": 644})],
        "",
        "</function>\n</tool_call>",
        TOOLS,
        repairs=["mode"],
    ),
    "glm": Sample(
        "glm45",
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
        "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
        [("get_weather", {"city": "Paris", "days": 3})],
        "",
        "</arg_value>\n</tool_call>",
        TOOLS,
        repairs=["days"],
    ),
    "deepseek_v3": Sample(
        "auto",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
        '{"city": "Oslo"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        [("get_weather", {"city": "Oslo"})],
        "",
        "```<｜tool▁call▁end｜>",
    ),
    "deepseek_v31": Sample(
        "deepseek_v31",
        "Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
        '{"city": "Oslo"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}'
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        [("get_weather", {"city": "Oslo"}), ("get_time", {})],
        "Sure.",
        '"}<｜tool▁call▁end｜>',
    ),
    "dsml": Sample(
        "auto",
        '\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter '
        'name="city" string="true">Oslo</｜DSML｜parameter>\n<｜DSML｜parameter name="days" '
        'string="false">2</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>',
        [("get_weather", {"city": "Oslo", "days": 2})],
        "",
        "</｜DSML｜invoke>",
    ),
    "kimi_k2": Sample(
        "auto",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"city": "Oslo"}<|tool_call_end|><|tool_calls_section_end|>',
        [("get_weather", {"city": "Oslo"})],
        "",
        '"}<|tool_call_end|>',
    ),
    "kimi_k2_reasoning": Sample(
        "auto",
        "I will look.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0"
        "<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>",
        [("get_time", {})],
        "I will look.",
        "{}<|tool_call_end|>",
        reasoning=True,
    ),
    "mistral": Sample(
        "auto",
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Oslo"}[TOOL_CALLS]get_time[CALL_ID]a1B2c3D4e'
        "[ARGS]{}",
        [("get_weather", {"city": "Oslo"}), ("get_time", {})],
        "",
        '"Oslo"}',
    ),
    "mistral_array": Sample(
        "mistral",
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Oslo"}, "id": "a1B2c3D4e"}]',
        [("get_weather", {"city": "Oslo"})],
        "",
        '"a1B2c3D4e"}',
    ),
    "llama3_json": Sample(
        "llama3_json",
        '{"name": "get_weather", "parameters": {"city": "Oslo"}}; {"name": "get_time", '
        '"parameters": {}}',
        [("get_weather", {"city": "Oslo"}), ("get_time", {})],
        "",
        '"Oslo"}}',
    ),
    "python_tag": Sample(
        "auto",
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo"}}',
        [("get_weather", {"city": "Oslo"})],
        "",
        '"Oslo"}}',
    ),
    "pythonic": Sample(
        "pythonic",
        "[get_weather(city='Oslo', days=2), get_time()]",
        [("get_weather", {"city": "Oslo", "days": 2}), ("get_time", {})],
        "",
        "days=2)",
        repairs=["city"],
    ),
    "harmony": Sample(
        "auto",
        "<|channel|>analysis<|message|>Need it.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.get_weather <|constrain|>json<|message|>{"city":"Oslo"}<|call|>',
        [("get_weather", {"city": "Oslo"})],
        "",
        "<|call|>",
        stop_end='{"city":"Oslo"}',
    ),
    # issue 23: the misses in formats already read
    "qwen3_coder_unwrapped": Sample(
        "auto",
        "Writing.\n<function=write_file>\n<parameter=path>\na.py\n</parameter>\n</function>\n"
        "</tool_call>\n<tool_call>\n<function=get_time>\n</function>\n</tool_call>",
        [("write_file", {"path": "a.py"}), ("get_time", {})],
        "Writing.\n",
        "</function>",
        TOOLS,
    ),
    "llama3_json_lines": Sample(
        "llama3_json",
        '{"name": "get_weather", "parameters": {"city": "Oslo"}}\n{"name": "get_time", '
        '"parameters": {}}',
        [("get_weather", {"city": "Oslo"}), ("get_time", {})],
        "",
        '"Oslo"}}',
    ),
    "llama3_json_auto": Sample(
        "auto",
        '{"name": "get_weather", "parameters": {"city": "Oslo"}}; {"name": "get_time", '
        '"arguments": {}}',
        [("get_weather", {"city": "Oslo"}), ("get_time", {})],
        "",
        '"Oslo"}}',
        TOOLS,
    ),
    "pythonic_auto": Sample(
        "auto",
        "[get_weather(city='Oslo', days=2), get_time()]",
        [("get_weather", {"city": "Oslo", "days": 2}), ("get_time", {})],
        "",
        "days=2)",
        TOOLS,
        repairs=["city"],
    ),
    "hermes_joined": Sample(
        "hermes",
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}, {"name": "get_time"'
        ', "arguments": {}}</tool_call>',
        [("get_weather", {"city": "Oslo"}), ("get_time", {})],
        "",
        "</tool_call>",
    ),
    "glm_spaced": Sample(
        "auto",
        "<tool_call>  get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n"
        "</tool_call>",
        [("get_weather", {"city": "Oslo"})],
        "",
        "</tool_call>",
    ),
    "harmony_end": Sample(
        "harmony",
        '<|channel|>commentary to=functions.get_weather<|message|>{"city": "Oslo"}<|end|>'
        "<|start|>assistant<|message|>Sunny.<|end|>",
        [("get_weather", {"city": "Oslo"})],
        "Sunny.",
        "<|end|>",
        stop_end='{"city": "Oslo"}',
    ),
    # issue 23: the formats read since
    "dsml_v4": Sample(
        "auto",
        'Sure.\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter '
        'name="city" string="true">Oslo</｜DSML｜parameter>\n<｜DSML｜parameter name="days" '
        'string="false">2</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>',
        [("get_weather", {"city": "Oslo", "days": 2})],
        "Sure.\n\n",
        "</｜DSML｜invoke>",
    ),
    "kimi_k3": Sample(
        "auto",
        "Thinking.<|close|>think<|sep|><|open|>response<|sep|>Checking.<|close|>response<|sep|>"
        '<|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|><|open|>argument '
        'key="city" type="string"<|sep|>Oslo<|close|>argument<|sep|><|open|>argument key="days" '
        'type="number"<|sep|>2<|close|>argument<|sep|><|close|>call<|sep|><|open|>call '
        'tool="get_time" index="2"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>'
        "<|close|>message<|sep|>",
        [("get_weather", {"city": "Oslo", "days": 2}), ("get_time", {})],
        "Thinking.<|close|>think<|sep|>Checking.",
        "<|close|>call<|sep|>",
    ),
    "minimax_m2": Sample(
        "minimax_m2",
        'Writing.\n<minimax:tool_call>\n<invoke name="write_file">\n<parameter name="path">a.py'
        '</parameter>\n<parameter name="mode">644</parameter>\n</invoke>\n<invoke name="get_time">'
        "\n</invoke>\n</minimax:tool_call>",
        [("write_file", {"path": "a.py", "mode": 644}), ("get_time", {})],
        "Writing.\n",
        "</invoke>",
        TOOLS,
        repairs=["mode"],
    ),
    "minimax_m3": Sample(
        "auto",
        "<mm:think>Plan.</mm:think>]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke "
        'name="write_file">]<]minimax[>[<path>a.py]<]minimax[>[</path>]<]minimax[>[<tags>'
        "]<]minimax[>[<item>x]<]minimax[>[</item>]<]minimax[>[<item>y]<]minimax[>[</item>"
        "]<]minimax[>[</tags>]<]minimax[>[<mode>644]<]minimax[>[</mode>]<]minimax[>[</invoke>\n"
        "]<]minimax[>[</tool_call>",
        [("write_file", {"path": "a.py", "tags": ["x", "y"], "mode": 644})],
        "<mm:think>Plan.</mm:think>",
        "]<]minimax[>[</invoke>",
        TOOLS,
        repairs=["mode"],
    ),
    "seed_oss": Sample(
        "seed_oss",
        "<seed:think>Draft: <seed:tool_call><function=get_time></function></seed:tool_call>"
        "</seed:think>\n<seed:tool_call>\n<function=write_file>\n<parameter=path>a.py</parameter>"
        "\n<parameter=content>x = 1\n</parameter>\n<parameter=mode>644</parameter>\n</function>"
        "\n</seed:tool_call>",
        [("write_file", {"path": "a.py", "content": "x = 1\n", "mode": 644})],
        "<seed:think>Draft: <seed:tool_call><function=get_time></function></seed:tool_call>"
        "</seed:think>",
        "</function>\n</seed:tool_call>",
        TOOLS,
        repairs=["mode"],
    ),
    "kimi_k2_malformed_id": Sample(
        "kimi_k2",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.bad.0<|tool_call_argument_begin|>"
        '{"a": 1}<|tool_call_end|><|tool_call_begin|>functions.get_time:1'
        "<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>",
        [("get_time", {})],
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.bad.0<|tool_call_argument_begin|>"
        '{"a": 1}<|tool_call_end|>',
        "{}<|tool_call_end|>",
    ),
    "gemma4": Sample(
        "auto",
        'Let me look.<|tool_call>call:write_file{path:<|"|>a "b" \\ c.txt<|"|>,mode:644,'
        'tags:[<|"|>x<|"|>,<|"|>y, z<|"|>],append:true}<tool_call|><|tool_call>call:get_time{}'
        "<tool_call|><|tool_response>",
        [
            (
                "write_file",
                {"path": 'a "b" \\ c.txt', "mode": 644, "tags": ["x", "y, z"], "append": True},
            ),
            ("get_time", {}),
        ],
        "Let me look.",
        "}<tool_call|>",
        TOOLS,
    ),
    "functiongemma": Sample(
        "functiongemma",
        "<start_function_call>call:get_weather{city:<escape>Oslo, NO<escape>,days:2}"
        "<end_function_call><start_function_response>",
        [("get_weather", {"city": "Oslo, NO", "days": 2})],
        "",
        "<end_function_call>",
    ),
    "olmo3": Sample(
        "auto",
        'On it.<function_calls>get_weather(city="Oslo", days=2)\nget_time()</function_calls>',
        [("get_weather", {"city": "Oslo", "days": 2}), ("get_time", {})],
        "On it.",
        "days=2)",
    ),
    "lfm2": Sample(
        "auto",
        "<|tool_call_start|>[get_weather(city='Oslo'), get_time()]<|tool_call_end|>\nDone.",
        [("get_weather", {"city": "Oslo"}), ("get_time", {})],
        "\nDone.",
        "'Oslo')",
        repairs=["city"],
    ),
    "command": Sample(
        "auto",
        "<|START_THINKING|>Plan.<|END_THINKING|><|START_ACTION|>[\n"
        '    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Oslo"}}'
        '{"tool_call_id": "1", "tool_name": "get_time", "parameters": {}}\n]<|END_ACTION|>',
        [("get_weather", {"city": "Oslo"}), ("get_time", {})],
        "<|START_THINKING|>Plan.<|END_THINKING|>",
        "\n]",
    ),
    "hunyuan_a13b": Sample(
        "auto",
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Oslo"}}]</tool_calls>',
        [("get_weather", {"city": "Oslo"})],
        "",
        "}}]",
    ),
    "granite": Sample(
        "granite",
        '<|tool_call|>[{"arguments": {"city": "Oslo"}, "name": "get_weather"}]',
        [("get_weather", {"city": "Oslo"})],
        "",
        '"get_weather"}]',
    ),
    "granite_tag": Sample(
        "granite",
        '<tool_call> [{"name": "get_time", "arguments": {}}]',
        [("get_time", {})],
        "",
        "{}}]",
    ),
    "phi4_mini": Sample(
        "phi4_mini_json",
        'Sure.\nfunctools[{"name": "get_weather", "arguments": {"city": "Oslo"}}]',
        [("get_weather", {"city": "Oslo"})],
        "Sure.\n",
        "}}]",
    ),
    "xlam": Sample(
        "xlam",
        '[{"name": "get_weather", "arguments": {"city": "Oslo"}}, {"name": "get_time", '
        '"arguments": {}}]',
        [("get_weather", {"city": "Oslo"}), ("get_time", {})],
        "",
        "{}}]",
    ),
    "xlam_fenced": Sample(
        "xlam",
        'Here.\n```json\n[{"name": "get_time", "arguments": {}}]\n```',
        [("get_time", {})],
        "Here.\n",
        "{}}]",
    ),
}


def chunks(pieces: list[str], *, reasoning: bool = False, finish: str = "stop") -> list[Any]:
    key = "reasoning_content" if reasoning else "content"
    out: list[Any] = [
        {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {key: p}}]}
        for p in pieces
    ]
    out.append(
        {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
        }
    )
    return out


def run(
    pieces: list[str],
    fmt: str | None = "auto",
    *,
    tools: list[dict[str, Any]] | None = None,
    reasoning: bool = False,
    finish: str = "stop",
) -> list[Any]:
    core = ToolCallStream(text_tool_calls=fmt, tools=tools)
    events: list[Any] = []
    for chunk in chunks(pieces, reasoning=reasoning, finish=finish):
        events.extend(core.feed(chunk))
    events.extend(core.finish())
    return events


def summary(events: list[Any], *, previews: bool = True) -> list[dict[str, Any]]:
    """Events with adjacent text merged and each call's argument pieces joined (the last
    preview kept, the changes joined and normalized; ``previews=False`` drops both)."""
    out: list[dict[str, Any]] = []
    for event in events:
        d = event.to_dict()
        if not previews:
            d.pop("preview", None)
            d.pop("changes", None)
        kind = d["type"]
        if kind in ("text_delta", "reasoning_delta") and out and out[-1]["type"] == kind:
            out[-1]["text"] += d["text"]
            continue
        same_call = out and out[-1]["type"] == kind and out[-1].get("call_id") == d.get("call_id")
        if kind == "tool_call_delta" and same_call:
            out[-1]["text"] += d["text"]
            if previews:
                out[-1]["preview"] = d["preview"]
                out[-1]["changes"] += d["changes"]
            continue
        out.append(d)
    for d in out:
        if "changes" in d:  # the same for any split of the text (syntax.changes.normalize)
            changes = normalize([change_from_dict(c) for c in d["changes"]])
            d["changes"] = [c.to_dict() for c in changes]
    return out


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c for c in cuts if 0 < c < len(text)})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


def sample_run(s: Sample, pieces: list[str], **kw: Any) -> list[dict[str, Any]]:
    return summary(run(pieces, s.fmt, tools=s.tools, reasoning=s.reasoning, **kw))


def texts(events: list[Any], kind: type = TextDelta) -> str:
    return "".join(e.text for e in events if isinstance(e, kind))


# -- each format: whole, per character, random splits, every two-way split ----------------


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_whole(name: str) -> None:
    s = SAMPLES[name]
    events = run([s.text], s.fmt, tools=s.tools, reasoning=s.reasoning)
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert [(e.name, e.arguments) for e in ready] == s.calls
    assert not any(isinstance(e, ToolCallRejected) for e in events)
    done = events[-1]
    assert isinstance(done, Done)
    if s.reasoning:
        assert texts(events) == ""
        assert texts(events, ReasoningDelta) == s.content
    else:
        assert texts(events) == s.content
        assert done.messages[0]["content"] == s.content
    assert [c["function"]["name"] for c in done.messages[0]["tool_calls"]] == [
        n for n, _ in s.calls
    ]
    for event in ready:
        assert any("extracted" in note for note in event.notes)
    named = [
        r.description.split("'")[1]
        for e in ready
        for r in e.repairs
        if r.kind is RepairKind.MARKUP_VALUE
    ]
    assert named == s.repairs


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_per_character(name: str) -> None:
    s = SAMPLES[name]
    assert sample_run(s, list(s.text)) == sample_run(s, [s.text])


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(SAMPLES)), st.lists(st.integers(1, 400), max_size=12))
def test_sample_random_splits(name: str, cuts: list[int]) -> None:
    s = SAMPLES[name]
    pieces = split(s.text, [c % (len(s.text) + 1) for c in cuts])
    assert sample_run(s, pieces) == sample_run(s, [s.text])


@pytest.mark.parametrize("name", SAMPLES)
def test_every_marker_split_at_every_position(name: str) -> None:
    # Every two-way split of the sample: each of its markers is cut at each position.
    s = SAMPLES[name]
    whole = sample_run(s, [s.text])
    for k in range(1, len(s.text)):
        assert sample_run(s, [s.text[:k], s.text[k:]]) == whole, (name, k)


@pytest.mark.parametrize("name", SAMPLES)
def test_three_pieces_around_every_marker(name: str) -> None:
    # Every start marker of the sample's text cut twice inside itself.
    s = SAMPLES[name]
    whole = sample_run(s, [s.text])
    markers = {m for ms in START_MARKERS.values() for m in ms}
    for marker in markers:
        at = s.text.find(marker)
        if at < 0:
            continue
        for a in range(at + 1, at + len(marker)):
            for b in range(a + 1, at + len(marker)):
                pieces = [s.text[:a], s.text[a:b], s.text[b:]]
                assert sample_run(s, pieces) == whole, (name, marker, a, b)


# -- cut off anywhere ----------------------------------------------------------------------


@pytest.mark.parametrize("finish", ["stop", "length"])
@pytest.mark.parametrize("name", SAMPLES)
def test_a_call_cut_anywhere_is_never_ready(name: str, finish: str) -> None:
    s = SAMPLES[name]
    end = s.stop_end if finish == "stop" and s.stop_end else s.first_end
    complete = s.text.index(end) + len(end)
    for cut in range(1, complete):
        events = run([s.text[:cut]], s.fmt, tools=s.tools, reasoning=s.reasoning, finish=finish)
        assert not any(isinstance(e, ToolCallReady) for e in events), (name, cut)
        assert isinstance(events[-1], Done)
        started = [e.call_id for e in events if isinstance(e, ToolCallStarted)]
        judged = [e.call_id for e in events if isinstance(e, ToolCallRejected)]
        assert started == judged  # every announced call is judged, none silently lost
        for e in events:
            if isinstance(e, ToolCallRejected):
                assert e.reason.value == "cut_off", (name, cut, e.detail)
    events = run([s.text[:complete]], s.fmt, tools=s.tools, reasoning=s.reasoning)
    ready = [(e.name, e.arguments) for e in events if isinstance(e, ToolCallReady)]
    assert ready[:1] == s.calls[:1]


def test_cut_off_detail_names_the_missing_tag() -> None:
    events = run(['<tool_call>\n{"name": "get_time", "arguments": {}}'], finish="stop")
    rejected = [e for e in events if isinstance(e, ToolCallRejected)]
    assert [e.reason.value for e in rejected] == ["cut_off"]
    assert "its closing </tool_call> never arrived" in rejected[0].detail
    assert rejected[0].raw == "{}"


def test_a_call_cut_before_its_name_is_text() -> None:
    text = 'Hi <tool_call>\n{"name": "get_wea'
    events = run([text], finish="length")
    assert texts(events) == text
    assert not any(isinstance(e, ToolCallStarted) for e in events)


# -- look-alikes and bad markup ------------------------------------------------------------

ALL_MARKERS = sorted({m for ms in START_MARKERS.values() for m in ms})
#: The format each marker is looked for in: "auto", or the named-only format it opens.
MARKER_FORMAT = {
    m: "auto" if any(m in START_MARKERS[f] for f in AUTO) else f.value
    for f in START_MARKERS
    for m in START_MARKERS[f]
}


@pytest.mark.parametrize("marker", ALL_MARKERS)
def test_a_marker_prefix_is_held_only_while_it_could_be_one(marker: str) -> None:
    for k in range(1, len(marker)):
        prefix = marker[:k]
        stage = TextCallExtractor(MARKER_FORMAT[marker])
        first = stage.feed(WireText(text="ab" + prefix))
        out = "".join(d.text for d in first if isinstance(d, WireText))
        assert out == "ab"  # only the prefix is held
        second = stage.feed(WireText(text="§ rest"))
        out += "".join(d.text for d in second if isinstance(d, WireText))
        assert out == "ab" + prefix + "§ rest"  # released as soon as it cannot be one
        assert stage.finish() == []


def test_the_hold_back_bound_is_the_longest_marker_minus_one() -> None:
    longest = max(len(m) for m in ALL_MARKERS)
    assert longest - 1 == 27  # stated in docs/text-tool-calls.md
    page = (ROOT / "docs" / "text-tool-calls.md").read_text(encoding="utf-8")
    assert "27 characters" in page
    assert f"{MAX_HEADER_CHARS} characters" in page


UNDECIDED = [  # (format, text, how many of its first characters are a call's markup)
    ("auto", "<tool_call>" + " " * 2000 + "x"),
    ("auto", "<tool_call>" + "n" * 2000),
    ("auto", "<tool_call>\n{" + " " * 2000 + '"'),
    ("auto", '<tool_call>\n{"' + "k" * 2000 + '"'),
    ("auto", "<function=" + "f" * 2000),
    ("auto", "<｜tool▁call▁begin｜>" + "x" * 2000),
    ("auto", "<|tool_call_begin|>" + "x" * 2000),
    ("auto", '<｜DSML｜function_calls><｜DSML｜invoke name="' + "x" * 2000),
    ("auto", "[TOOL_CALLS]" + "n" * 2000),
    ("auto", "<|channel|>" + "a" * 2000),
    ("auto", "<|python_start|>[f" + " " * 2000 + "("),
    ("pythonic", "[f" + " " * 2000 + "("),
    ("pythonic", "[f(a" + " " * 2000 + "="),
    ("pythonic", "[" + "f" * 2000),
    ("llama3_json", "{" + " " * 2000 + '"name"'),
    ("auto", "<|open|>tools" + " " * 2000 + "x"),
    ("auto", '<|open|>call tool="' + "x" * 2000),
    ("auto", "<minimax:tool_call>" + " " * 2000 + "x"),
    ("auto", '<minimax:tool_call><invoke name="' + "x" * 2000),
    ("auto", "]<]minimax[>[<tool_call>" + " " * 2000 + "x"),
    ("seed_oss", "<seed:tool_call>" + " " * 2000 + "x"),
    ("glm", "<tool_call>get_time\n<arg_key>" + "k" * 2000),  # a call with a runaway key
]
MARKUP = {len(UNDECIDED) - 1: len("<tool_call>get_time\n")}


@pytest.mark.parametrize("case", range(len(UNDECIDED)))
def test_undecided_markup_is_held_within_the_bound(case: int) -> None:
    # One character at a time: whatever is not out yet is held, and never more than the
    # header bound plus a marker (the documented bounds), whatever the markup.
    fmt, text = UNDECIDED[case]
    markup = MARKUP.get(case, 0)
    stage = TextCallExtractor(fmt)
    fed = out = 0
    most = 0
    for char in text:
        fed += 1
        for delta in stage.feed(WireText(text=char)):
            if isinstance(delta, WireText):
                out += len(delta.text)
        most = max(most, fed - out - (markup if fed >= markup else fed))
    for delta in stage.finish():
        if isinstance(delta, WireText):
            out += len(delta.text)
    assert out == fed - markup  # released as text, never dropped
    assert most <= MAX_HEADER_CHARS + 64, most


# (format, tools?, text up to and including the first character that rules a call out)
RULED_OUT = [
    ("glm", False, "<tool_call>no n"),
    ("auto", False, "<tool_call>no n"),
    ("glm", True, "<tool_call>no n"),
    ("glm", False, "<tool_call>get_weather,"),
    ("mistral", False, "[TOOL_CALLS] not j"),
    ("auto", False, "[TOOL_CALLS] not j"),
    ("mistral", True, "[TOOL_CALLS] not j"),
    ("mistral", False, "[TOOL_CALLS] ,"),
    ("mistral", False, "[TOOL_CALLS] [x"),
    ("mistral", False, "[TOOL_CALLS]get_weather,"),
    ("qwen3_coder", False, "<function=a b"),
    ("auto", False, "x <function=get w"),
    ("auto", False, "<tool_call>\n<function=write f"),
    ("auto", False, "<｜tool▁call▁begin｜>no s"),
    ("deepseek", False, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get w"),
    ("kimi_k2", False, "<|tool_call_begin|>functions.get "),  # no ":N" after a space
    ("kimi_k2", False, "<|tool_call_begin|>functions.get,"),
    ("kimi_k2", False, "<|tool_call_begin|>functions.a:0 b"),  # only spaces after ":0 "
    ("kimi_k2", False, "<|tool_call_begin|>functions.a:x "),
    ("hermes", False, '<tool_call>{"name": "get '),
    ("hermes", False, "<tool_call> x"),
    ("auto", False, '<|python_tag|>{"name": "a('),
    ("auto", False, "<|python_tag|> hello t"),
    ("llama3_json", True, '{"name": "B'),
    ("llama3_json", False, '{"name": "a '),
    ("pythonic", True, "[B"),
    ("pythonic", False, "[1"),
    ("auto", True, "[B"),  # a bare reply in auto: only to a listed tool
    ("auto", True, '{"name": "B'),
    ("auto", True, '{"c'),  # ... and only "name" first, as the template writes it
    ("auto", True, '{"name": "get_time", "x'),
    ("auto", False, "<tool_call> get_weather\nx"),  # after a space, only with <arg_key>
    ("auto", False, "<｜DSML｜tool_calls>\nx"),
    ("auto", False, "<|open|>th"),  # XTML: only the tags that frame or hold calls
    ("kimi_k3", False, "x<|close|>t"),
    ("auto", False, "<minimax:tool_call>\n<x"),
    ("auto", False, "]<]minimax[>[<tool_call>\nx"),
    ("seed_oss", False, "<seed:tool_call>\n<fun "),
]


@pytest.mark.parametrize("case", range(len(RULED_OUT)))
def test_markup_is_released_at_the_first_character_that_rules_a_call_out(case: int) -> None:
    # One character at a time: held until the last character of `text` (something is
    # still out), released whole and in order with it; the rest goes on as text.
    fmt, with_tools, text = RULED_OUT[case]
    stage = TextCallExtractor(fmt, tools=TOOLS if with_tools else None)
    out = ""
    for i, char in enumerate(text):
        out += "".join(d.text for d in stage.feed(WireText(text=char)) if isinstance(d, WireText))
        if i == len(text) - 2:
            assert len(out) < len(text) - 1, out  # the markup is held up to here
    assert out == text
    rest = "ame here, and more prose " * 30
    out += "".join(d.text for d in stage.feed(WireText(text=rest)) if isinstance(d, WireText))
    out += "".join(d.text for d in stage.finish() if isinstance(d, WireText))
    assert out == text + rest
    assert stage.calls_found == 0


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(range(len(RULED_OUT))), st.lists(st.integers(1, 60), max_size=8))
def test_ruled_out_markup_any_split(case: int, cuts: list[int]) -> None:
    fmt, with_tools, text = RULED_OUT[case]
    text += "ame here, and more <tool_call>prose"
    tools = TOOLS if with_tools else None
    whole = summary(run([text], fmt, tools=tools))
    assert summary(run(split(text, cuts), fmt, tools=tools)) == whole
    assert summary(run(list(text), fmt, tools=tools)) == whole
    assert [e["type"] for e in whole] == ["text_delta", "done"]
    assert whole[0]["text"] == text


def test_a_marker_led_call_to_an_unknown_tool_is_still_a_call() -> None:
    # The markup is the model's call; the tracker rejects it as unknown_tool (so the
    # harness can tell the model), where a bare reply to no known tool is text.
    text = "<tool_call>get_wether<arg_key>city</arg_key><arg_value>Oslo</arg_value></tool_call>"
    events = run([text], "glm", tools=TOOLS)
    (rejected,) = [e for e in events if isinstance(e, ToolCallRejected)]
    assert rejected.reason.value == "unknown_tool"
    assert texts(events) == ""


NAME_ALPHABET = st.text(st.sampled_from('ab_.:-\t\n <,"=|'), max_size=12)


@settings(max_examples=300, deadline=None)
@given(NAME_ALPHABET, st.integers(0, 300), NAME_ALPHABET, st.lists(st.integers(1, 400)))
def test_a_name_header_is_ruled_out_exactly_when_no_name_can_follow(
    head: str, run_of: int, tail: str, cuts: list[int]
) -> None:
    # NameHeader accepts a text iff it is blank or valid_name(text.strip()): the headers
    # that are blank so far or can still be ended by a marker. Any split, same verdict.
    header = head + "n" * run_of + tail
    check = NameHeader()
    verdict = all(check.feed(piece) for piece in split(header, cuts))
    assert verdict == (not header.strip() or valid_name(header.strip()))


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["", " ", "\n", "functions.", " functions.", "function", "fun.x"]),
    st.text(st.sampled_from("ab:.0 ,<"), max_size=10),
    st.integers(0, 300),
    st.text(st.sampled_from("ab:.0 ,<"), max_size=10),
    st.lists(st.integers(1, 400)),
)
def test_a_kimi_id_is_ruled_out_only_when_no_valid_name_can_follow(
    lead: str, middle: str, run_of: int, more: str, cuts: list[int]
) -> None:
    # Sound: an id whose name is valid is never ruled out, whatever came before it was
    # split into. Ruled out: no continuation makes the name valid (one that ends the name
    # at once, ":0", and one that adds nothing, are tried).
    ident = lead + middle + "a" * run_of + more
    check = KimiId()
    ruled_out = not all(check.feed(piece) for piece in split(ident, cuts))
    if valid_name(kimi_name(ident.strip())):
        assert not ruled_out
    if ruled_out:
        for after in ("", ":0", "b:0", ".b:0"):
            if ident.strip().startswith("functions."):
                assert not valid_name(kimi_name((ident + after).strip())), after


def test_plain_text_passes_through_as_the_same_objects() -> None:
    stage = TextCallExtractor("auto")
    stage.feed(WireText(text="Hi"))  # the start of a channel goes the slow way (whitespace)
    delta = WireText(text="no markers here at all")
    assert stage.feed(delta)[0] is delta
    stage.feed(WireReasoning(text="Hmm"))
    reasoning = WireReasoning(text="thinking, plainly")
    assert stage.feed(reasoning)[0] is reasoning


BAD = [
    "<tool_call>not json</tool_call>",
    "<tool_call> word </tool_call>",
    '<tool_call>{"arguments": {"a": 1}}</tool_call>',
    "<tool_call>{oops}</tool_call>",
    "<tool_call>\n<function=a b>\n</function>",
    "<function=>x",
    "<｜tool▁call▁begin｜>no separator here",
    "<｜tool▁calls▁begin｜>junk<｜tool▁calls▁end｜>",
    '<｜DSML｜function_calls><｜DSML｜invoke nome="x"></｜DSML｜invoke>',
    "<|tool_calls_section_begin|>prose<|tool_calls_section_end|>",
    "<|tool_call_begin|>functions.bad name:0<|tool_call_argument_begin|>{}",
    "[TOOL_CALLS] not a call",
    "[TOOL_CALLS] []",
    "<|python_tag|>42",
    "<|python_start|>[1, 2]<|python_end|>",
    "<|channel|><|message|>x",
    "a " * 300 + "<｜tool▁call▁begin｜>" + "n" * (MAX_HEADER_CHARS + 5),
    "<|tool_call>get_time{}<tool_call|>",
    "<|tool_call>call:a b{}<tool_call|>",
    "<start_function_call>call:{x:1}<end_function_call>",
    "<function_calls>not a call</function_calls>",
    "<function_calls>f x(a=1)</function_calls>",
    "<|tool_call_start|>[]<|tool_call_end|>",
    "<|tool_call_start|>prose<|tool_call_end|>",
    "<|START_ACTION|>[!!!]<|END_ACTION|>",
    '<|START_ACTION|>[{"name": "f", "arguments": {}}]<|END_ACTION|>',
    "<tool_calls>[1, 2]</tool_calls>",
    '<tool_calls>{"name": "f"}</tool_calls>',
    '<tool_call>[{"name": "f", "arguments": {}}]</tool_call>',
    '<|tool_call|>[{"name": "f", "arguments": {}}]',
    'functools[{"name": "f", "arguments": {}}]',
    '```json\n[{"name": "f", "arguments": {}}]\n```',
]


@pytest.mark.parametrize("text", BAD, ids=range(len(BAD)))
def test_bad_markup_is_left_as_text(text: str) -> None:
    for pieces in ([text], list(text), split(text, [3, 11, 17, 40])):
        events = run(pieces)
        assert texts(events) == text
        assert not any(isinstance(e, ToolCallStarted) for e in events)
        assert events[-1].messages[0]["content"] == text


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("llama3_json", '{"name": "Bob", "age": 3}'),
        ("llama3_json", "{not json at all"),
        ("pythonic", "[1, 2, 3] are numbers"),
        ("pythonic", "[a link](https://example.org)"),
        ("pythonic", "[f(positional)]"),
        ("hermes", "<tool_call>get_time</tool_call>"),
        ("glm", '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'),
    ],
)
def test_a_named_format_reads_only_its_own_markup(fmt: str, text: str) -> None:
    events = run([text], fmt)
    assert texts(events) == text
    assert not any(isinstance(e, ToolCallStarted) for e in events)


def test_a_bare_json_reply_is_a_call_only_to_a_known_tool() -> None:
    text = '{"name": "Bob", "parameters": {}}'
    assert texts(run([text], "llama3_json", tools=TOOLS)) == text
    ready = [e for e in run([text], "llama3_json") if isinstance(e, ToolCallReady)]
    assert [e.name for e in ready] == ["Bob"]  # without tools, the reply's shape decides


FRAGMENTS = [
    "<tool_call>",
    "</tool_call>",
    "<tool_c",
    "{",
    "}",
    '"name": "f"',
    '"arguments": {"a": 1}',
    ", ",
    ":",
    '"',
    "\\",
    "<function=f>",
    "<parameter=a>",
    "</parameter>",
    "</function>",
    "<arg_key>",
    "a</arg_key>",
    "<arg_value>",
    "1</arg_value>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>functions.f:0",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁begin｜>",
    "function<｜tool▁sep｜>f\n```json\n",
    "```",
    "<｜DSML｜function_calls>",
    '<｜DSML｜invoke name="f">',
    '<｜DSML｜parameter name="a" string="false">',
    "</｜DSML｜parameter>",
    "</｜DSML｜invoke>",
    "f(a=1",
    ")",
    "]",
    "'",
    "<|python_tag|>",
    "<think>",
    "</think>",
    "<|channel|>",
    "<|message|>",
    "<|call|>",
    "<｜DSML｜tool_calls>",
    "<|open|>tools<|sep|>",
    '<|open|>call tool="f" index="1"<|sep|>',
    '<|open|>argument key="a" type="number"<|sep|>',
    "<|close|>argument<|sep|>",
    "<|close|>call<|sep|>",
    "<|close|>response<|sep|>",
    "<minimax:tool_call>",
    '<invoke name="f">',
    '<parameter name="a">',
    "</invoke>",
    "]<]minimax[>[",
    "<a>",
    "</a>",
    "<seed:tool_call>",
    "<seed:think>",
    "</seed:think>",
    "\n",
    " ",
    "prose",
    "<",
    "[",
    "get_weather",
    '{"name": "get_time", "parameters": ',
    "[get_time(",
    "a b",
    "functions.f x:0",
    ",",
    "<|tool_call>",
    "call:f{",
    "a:",
    '<|"|>',
    "<tool_call|>",
    "<|tool_response>",
    "<start_function_call>",
    "<escape>",
    "<end_function_call>",
    "<function_calls>",
    "</function_calls>",
    "<|tool_call_start|>",
    "<|START_ACTION|>",
    "<|END_ACTION|>",
    '"tool_name": "f"',
    '"tool_call_id": "0"',
    '"parameters": {}',
    "<tool_calls>",
    "</tool_calls>",
    "<|tool_call|>",
    "functools",
    "```json",
]


# Markup that frames text rather than calls, removed without a call: Harmony's message
# headers (the final channel's text is the reply), Kimi K3's response and message tags.
FRAMING = ("<|channel|>", "<|start|>", "<|open|>", "<|close|>")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(FRAGMENTS), max_size=30),
    st.lists(st.integers(0, 600), max_size=10),
    st.sampled_from([f.value for f in TextCallFormat]),
    st.booleans(),
)
def test_fuzz_any_text_any_split(
    parts: list[str], cuts: list[int], fmt: str, with_tools: bool
) -> None:
    text = "".join(parts)
    tools = TOOLS if with_tools else None
    whole = run([text], fmt, tools=tools)
    # Previews are left out: once arguments are unrepairable (fragments often are) the
    # tracker stops previewing, so the last preview depends on which delta broke them.
    pieces = run(split(text, cuts), fmt, tools=tools)
    assert summary(pieces, previews=False) == summary(whole, previews=False)
    assert isinstance(whole[-1], Done)
    started = {e.call_id for e in whole if isinstance(e, ToolCallStarted)}
    judged = {e.origin_id for e in whole if isinstance(e, ToolCallReady)}
    judged |= {e.call_id for e in whole if isinstance(e, ToolCallRejected)}
    assert started <= judged  # every announced call is judged
    if not started and not any(tag in text for tag in FRAMING):
        assert texts(whole) == text  # nothing found: every character comes back out
    out = iter(text)
    shown = "".join(e.text for e in whole if isinstance(e, TextDelta | ReasoningDelta))
    assert all(char in out for char in shown)  # text out is text in, minus markup


# -- values ----------------------------------------------------------------------------------


def test_param_types_reads_type_unions_enums_and_refs() -> None:
    schema = {
        "type": "object",
        "$defs": {"n": {"type": "integer"}},
        "properties": {
            "a": {"type": "string"},
            "b": {"type": ["integer", "null"]},
            "c": {"anyOf": [{"type": "boolean"}, {"$ref": "#/$defs/n"}]},
            "d": {"enum": ["x", 1]},
            "e": {"description": "no type"},
            "f": {"type": ["float", "int", "bool"]},  # Python's names, as vLLM reads them
            "g": {"type": "object-ish"},
        },
    }
    assert param_types(schema, "f") == {"number", "integer", "boolean"}
    assert param_types(schema, "g") is None
    assert param_types(schema, "a") == {"string"}
    assert param_types(schema, "b") == {"integer", "null"}
    assert param_types(schema, "c") == {"boolean", "integer"}
    assert param_types(schema, "d") == {"string", "integer"}
    assert param_types(schema, "e") is None
    assert param_types(schema, "missing") is None
    assert param_types(None, "a") is None


ESCAPED = r"[{\"id\": \"1\"}]"  # SGLang's GLM test writes an array value so


@pytest.mark.parametrize(
    ("text", "types", "expected", "described"),
    [
        ("3", frozenset({"integer"}), "3", True),
        (" 3 ", frozenset({"integer"}), "3", True),
        ("3.5", frozenset({"integer"}), '"3.5"', False),
        ("3.0", frozenset({"integer"}), "3.0", True),
        ("2.5", frozenset({"number"}), "2.5", True),
        ("True", frozenset({"boolean"}), "true", True),
        ("FALSE", frozenset({"boolean"}), "false", True),
        ("yes", frozenset({"boolean"}), '"yes"', False),
        ("None", frozenset({"string", "null"}), "null", True),
        ("3", frozenset({"string", "integer"}), "3", True),  # strict JSON of the other type
        ("3 apples", frozenset({"string", "integer"}), '"3 apples"', False),
        ("3.5", frozenset({"string", "integer"}), '"3.5"', False),
        ('{"a": 1}', frozenset({"string", "object"}), '{"a": 1}', True),
        ('"a"', frozenset({"string", "object"}), '"\\"a\\""', False),  # the text, as written
        ("{'a': 1}", frozenset({"string", "object"}), "\"{'a': 1}\"", False),  # no literals
        ("[1]", frozenset({"string", "object"}), '"[1]"', False),  # not a type it allows
        ("true", frozenset({"string", "boolean"}), "true", True),
        ("True", frozenset({"string", "boolean"}), '"True"', False),
        (ESCAPED, frozenset({"array"}), '[{"id": "1"}]', True),  # quotes escaped once more
        (ESCAPED, frozenset({"string", "array"}), json.dumps(ESCAPED), False),
        (r"{\"a\": x}", frozenset({"object"}), json.dumps(r"{\"a\": x}"), False),
        ("['a', 'b']", frozenset({"array"}), '["a", "b"]', True),
        ('{"k": 1}', frozenset({"object"}), '{"k": 1}', True),
        ("{'k': (1, 2)}", frozenset({"object"}), '{"k": [1, 2]}', True),
        ("{1, 2}", frozenset({"array"}), '"{1, 2}"', False),
        ("NaN", frozenset({"number"}), '"NaN"', False),
        ("[" * 3000, frozenset({"array"}), '"' + "[" * 3000 + '"', False),
        ("line\n", frozenset({"string"}), '"line\\n"', False),
    ],
)
def test_convert_text(text: str, types: frozenset[str], expected: str, described: bool) -> None:
    converted, description = convert_text(text, "k", types, json_when_untyped=False)
    assert converted == expected
    assert (description is not None) == described


def test_convert_text_without_a_type() -> None:
    assert convert_text("3", "k", None, json_when_untyped=False) == ('"3"', None)
    converted, description = convert_text("3", "k", None, json_when_untyped=True)
    assert converted == "3"
    assert description is not None
    assert "GLM" in description
    assert convert_text("Paris", "k", None, json_when_untyped=True) == ('"Paris"', None)


def test_convert_python() -> None:
    assert convert_python(' "x" ', "k") == ('"x"', None)
    assert convert_python("'x'", "k")[0] == '"x"'
    assert convert_python("None", "k")[0] == "null"
    assert convert_python("(1, 'a')", "k")[0] == '[1, "a"]'
    assert convert_python("bare_word", "k") == ("bare_word", None)  # the assembler decides


def test_markup_value_offsets_point_at_the_converted_value() -> None:
    text = (
        "<tool_call>\n<function=write_file>\n<parameter=path>\na\n</parameter>\n<parameter=append>"
        "\nTrue\n</parameter>\n<parameter=tags>\n['x']\n</parameter>\n</function>\n</tool_call>"
    )
    (ready,) = [e for e in run([text], tools=TOOLS) if isinstance(e, ToolCallReady)]
    assert ready.arguments == {"path": "a", "append": True, "tags": ["x"]}
    assert [r.kind for r in ready.repairs] == [RepairKind.MARKUP_VALUE] * 2
    assert ready.raw[ready.repairs[0].offset :].startswith("true")
    assert ready.raw[ready.repairs[1].offset :].startswith('["x"]')


def test_markup_repairs_are_not_noted_for_the_model() -> None:
    assert RepairKind.MARKUP_VALUE.from_markup
    assert not RepairKind.TRAILING_COMMA.from_markup
    assert not RepairKind.MARKUP_VALUE.synthesizes_structure
    text = "<tool_call>get_weather<arg_key>days</arg_key><arg_value>2</arg_value></tool_call>"
    (ready,) = [e for e in run([text], tools=TOOLS) if isinstance(e, ToolCallReady)]
    assert ready.repairs
    assert append_repair_notes("result", ready.repairs, "get_weather") == "result"


def test_a_typed_value_the_schema_rejects_is_passed_on_for_the_check() -> None:
    text = "<tool_call>get_weather<arg_key>days</arg_key><arg_value>soon</arg_value></tool_call>"
    (rejected,) = [e for e in run([text], tools=TOOLS) if isinstance(e, ToolCallRejected)]
    assert rejected.reason.value == "invalid"
    assert json.loads(rejected.raw) == {"days": "soon"}


# -- where calls are read ------------------------------------------------------------------


def test_drafted_formats_are_not_read_in_reasoning() -> None:
    text = 'Maybe <tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call> later.'
    events = run([text], reasoning=True)
    assert not any(isinstance(e, ToolCallStarted) for e in events)
    assert texts(events, ReasoningDelta) == text


def test_a_think_block_in_the_content_keeps_its_drafts_as_text() -> None:
    draft = '<think>\nMaybe <tool_call>\n{"name": "draft", "arguments": {}}\n</tool_call>\n</think>'
    real = '\n\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
    events = run([draft + real])
    assert [e.name for e in events if isinstance(e, ToolCallReady)] == ["get_time"]
    assert texts(events) == draft


def test_auto_keeps_the_format_of_the_first_call() -> None:
    kimi = "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>"
    text = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>' + kimi
    stage_events = run([text])
    assert [e.name for e in stage_events if isinstance(e, ToolCallReady)] == ["get_time"]
    assert texts(stage_events) == kimi


def test_whitespace_between_calls_is_framing_but_text_is_kept() -> None:
    one = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
    events = run(["\n\n" + one + "\n" + one + "\n\n"])
    assert texts(events) == ""
    assert len([e for e in events if isinstance(e, ToolCallReady)]) == 2
    events = run(["  \n" + one + " and then words\n"])
    assert texts(events) == " and then words\n"
    assert texts(run(["  \n  "])) == "  \n  "  # no call: whitespace is content


def test_kimi_ids_become_call_ids_and_repeats_get_new_ones() -> None:
    call = (
        "<|tool_call_begin|> functions.get_time:7\n<|tool_call_argument_begin|>{}<|tool_call_end|>"
    )
    events = run(["<|tool_calls_section_begin|>" + call + call + "<|tool_calls_section_end|>"])
    ids = [e.call_id for e in events if isinstance(e, ToolCallReady)]
    assert ids == ["functions.get_time:7", "call00002"]


# -- the formats of issue 23: what is read, what is refused --------------------------------


def outcome(text: str, fmt: str, tools: list[dict[str, Any]] | None = None) -> Any:
    """Ready calls (name, arguments, repair kinds, notes), refused calls (name, reason)
    and the text, the same for the whole text and one character at a time."""
    results = []
    for pieces in ([text], list(text)):
        events = run(pieces, fmt, tools=tools)
        results.append(
            (
                [
                    (e.name, e.arguments, [r.kind.value for r in e.repairs], list(e.notes[1:]))
                    for e in events
                    if isinstance(e, ToolCallReady)
                ],
                [(e.name, e.reason.value) for e in events if isinstance(e, ToolCallRejected)],
                texts(events),
            )
        )
    assert results[0] == results[1]
    return results[0]


def test_gemma_values_are_passed_on_as_written_for_the_assembler() -> None:
    # a single-quoted value is the model's slip: repaired and reported
    ready, refused, _ = outcome("<|tool_call>call:grep{pattern:'a\\s'}<tool_call|>", "gemma4")
    assert ready == [("grep", {"pattern": "a\\s"}, ["single_quotes", "invalid_escape"], [])]
    assert refused == []
    # two members with no comma between them: unrepairable, not guessed
    text = "<start_function_call>call:f{a:<escape>x<escape>b:<escape>y<escape>}<end_function_call>"
    ready, refused, _ = outcome(text, "functiongemma")
    assert (ready, refused) == ([], [("f", "unrepairable")])


def test_a_delimited_value_is_a_string_the_schema_check_may_convert() -> None:
    text = "<start_function_call>call:count{n:<escape>42<escape>}<end_function_call>"
    assert outcome(text, "functiongemma")[0] == [("count", {"n": "42"}, [], [])]
    tools = [
        {
            "type": "function",
            "function": {
                "name": "count",
                "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
            },
        }
    ]
    events = run([text], "functiongemma", tools=tools)
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert [e.arguments for e in ready] == [{"n": 42}]
    assert ready[0].schema_repairs


def test_gemma_text_after_the_arguments_leaves_the_call_cut_off() -> None:
    text = "<|tool_call>call:f{a:1} and then<tool_call|>"
    ready, refused, shown = outcome(text, "gemma4")
    assert (ready, refused) == ([], [("f", "cut_off")])
    assert shown == "and then<tool_call|>"


def test_gemma_framing_after_a_call_is_dropped_and_text_is_kept() -> None:
    text = "<|tool_call>call:f{}<tool_call|>\n<tool_call|> <|tool_response>Done <tool_call|>"
    ready, refused, shown = outcome(text, "gemma4")
    assert (ready, refused) == ([("f", {}, [], [])], [])
    assert shown == "Done <tool_call|>"


def test_lfm2_reads_what_leaves_no_doubt_and_refuses_guesses() -> None:
    def call(args: str) -> str:
        return f"<|tool_call_start|>[f({args})]<|tool_call_end|>"

    ready, refused, _ = outcome(call("c='a\nb'"), "lfm2")
    assert ready == [("f", {"c": "a\nb"}, ["single_quotes", "raw_control_character"], [])]
    for args in ("c='sed -n '3,4p' x'", "m=07", "t={'a', 'b'}"):
        ready, refused, _ = outcome(call(args), "lfm2")
        assert (ready, [n for n, _ in refused]) == ([], ["f"]), args


def test_olmo3_calls_one_a_line_and_prose_after_them() -> None:
    text = "<function_calls>f(a=1)\ng(b=null)\nThanks for waiting"
    ready, refused, shown = outcome(text, "olmo3")
    assert [(n, a) for n, a, _, _ in ready] == [("f", {"a": 1}), ("g", {"b": None})]
    assert (refused, shown) == ([], "Thanks for waiting")


def test_command_ids_and_a_missing_comma() -> None:
    text = (
        '<|START_ACTION|>[{"tool_call_id": "7", "tool_name": "f", "parameters": {}}'
        '{"tool_call_id": "8", "tool_name": "g", "parameters": {}}, '
        '{"tool_name": "h", "parameters": {"x": 15:30}}]<|END_ACTION|>'
    )
    events = run([text], "command")
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert [(e.call_id, e.name) for e in ready] == [("7", "f"), ("8", "g")]
    assert "no comma between this call and the one before it in the list" in ready[1].notes
    rejected = [(e.call_id, e.reason.value) for e in events if isinstance(e, ToolCallRejected)]
    assert rejected == [("call00003", "unrepairable")]  # its siblings are read


def test_a_list_whose_end_never_came_is_cut_off() -> None:
    for fmt, text in (
        ("xlam", '[{"name": "f", "arguments": {}}, {"name": "g", "arguments": {}}'),
        ("hunyuan_a13b", '<tool_calls>[{"name": "f", "arguments": {}}'),
        ("hunyuan_a13b", '<tool_calls>[{"name": "f", "arguments": {}}</tool_calls>'),
    ):
        ready, refused, _ = outcome(text, fmt)
        assert (ready, {r for _, r in refused}) == ([], {"cut_off"}), text


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("granite", '<|tool_call|>[{"name": "f", "arguments": {}}]'),
        ("granite", '<tool_call>[{"name": "f", "arguments": {}}]'),
        ("phi4_mini", 'functools[{"name": "f", "arguments": {}}]'),
        ("xlam", '[{"name": "f", "arguments": {}}]'),
        ("xlam", '```json\n[{"name": "f", "arguments": {}}]\n```'),
        ("xlam", '<tool_call>[{"name": "f", "arguments": {}}]</tool_call>'),
    ],
)
def test_named_only_formats_are_read_when_named_and_never_in_auto(fmt: str, text: str) -> None:
    assert outcome(text, fmt)[0] == [("f", {}, [], [])]
    assert outcome(text, "auto") == ([], [], text)


def test_structured_calls_in_the_same_stream_keep_their_own_deltas() -> None:
    # A structured call whose later deltas carry only its index (as OpenAI sends them),
    # with a call written as text arriving between them: neither takes the other's text.
    def delta(**d: Any) -> dict[str, Any]:
        return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": d}]}

    first = {"index": 0, "id": "call_a", "type": "function", "function": {"name": "get_weather"}}
    core = ToolCallStream(text_tool_calls="auto")
    pieces = [
        delta(tool_calls=[{**first, "function": {**first["function"], "arguments": '{"ci'}}]),
        delta(
            content='<tool_call>\n{"name": "get_time", "arguments": {"tz": "CET"}}\n</tool_call>'
        ),
        delta(tool_calls=[{"index": 0, "function": {"arguments": 'ty": "Oslo"}'}}]),
        {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
        },
    ]
    events = [e for p in pieces for e in core.feed(p)] + core.finish()
    ready = {
        e.name: (e.call_id, e.index, e.arguments) for e in events if isinstance(e, ToolCallReady)
    }
    assert ready == {
        "get_weather": ("call_a", 0, {"city": "Oslo"}),
        "get_time": ("call00001", None, {"tz": "CET"}),
    }


def test_ids_fit_mistral_templates() -> None:
    events = run(['[TOOL_CALLS]get_time[ARGS]{}[TOOL_CALLS]get_time[ARGS]{"a": 1}'])
    ids = [e.call_id for e in events if isinstance(e, ToolCallReady)]
    assert ids == ["call00001", "call00002"]
    assert all(len(i) == 9 and i.isalnum() for i in ids)


def test_harmony_final_channel_is_text_and_analysis_is_reasoning() -> None:
    text = (
        "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final"
        "<|message|>Answer.<|return|>"
    )
    events = run([text])
    assert texts(events) == "Answer."
    done = events[-1]
    assert done.messages[0]["reasoning_content"] == "Think."


@pytest.mark.parametrize(
    "text",
    [
        "<|channel|>functions.f x:0<|message|>x",  # found by the fuzz test
        "<|channel|>notes<|message|>kept<|end|>",
        "<|start|>assistant<|channel|>summary<|message|>kept",
    ],
)
def test_a_harmony_header_on_no_harmony_channel_is_text(text: str) -> None:
    # Harmony's channels are analysis, commentary and final: another word is not its
    # framing, and the header is the model's text (it was dropped as framing)
    for pieces in ([text], list(text)):
        events = run(pieces, "harmony")
        assert texts(events) == text
        assert not any(isinstance(e, ToolCallStarted) for e in events)


@pytest.mark.parametrize(
    ("fmt", "reply"),
    [
        ("llama3_json", '{"name": "get_time", "parameters": {}}'),
        ("pythonic", "[get_time()]"),
        ("auto", '{"name": "get_time", "parameters": {}}'),  # tools given: a listed name
    ],
)
def test_a_bare_reply_after_a_leading_think_block_is_read(fmt: str, reply: str) -> None:
    # vLLM's xLAM tests: "<think>...</think>[{...}]"; the reply begins after the reasoning
    think = "<think>I'll check the time.</think>"
    text = think + "\n" + reply  # (whitespace before a bare call opens it, as at the start)
    for pieces in ([text], list(text), split(text, [3, 17, 40])):
        events = run(pieces, fmt, tools=TOOLS)
        assert [e.name for e in events if isinstance(e, ToolCallReady)] == ["get_time"]
        assert texts(events) == think
    # only a think block the content begins with: after other text it stays text
    late = "Sure. " + text
    events = run([late], fmt, tools=TOOLS)
    assert not any(isinstance(e, ToolCallStarted) for e in events)
    assert texts(events) == late


def test_a_kimi_id_without_an_index_is_text() -> None:
    # vLLM skips the call (markup and arguments dropped); here its markup is text, and a
    # bare counter id is no name to guess from
    for ident in ("functions.get_time.0", "functions.get_time", "0", "get_time"):
        text = f"<|tool_call_begin|>{ident}<|tool_call_argument_begin|>{{}}<|tool_call_end|>"
        events = run([text], "kimi_k2", tools=TOOLS)
        assert texts(events) == text
        assert not any(isinstance(e, ToolCallStarted) for e in events)
    assert kimi_name("functions.get_time:0") == "get_time"
    assert kimi_name("get.time:12") == "time"
    assert kimi_name("functions.get_time.0") == ""


@pytest.mark.parametrize(
    ("finish", "tail", "ready"),
    [
        ("stop", "", True),  # the server removed the <|call|> stop token
        ("tool_calls", "\n", True),
        ("length", "", False),
        ("stop", "<|start|>", False),  # a new message began: the call never ended
    ],
)
def test_a_harmony_call_ends_with_a_clean_stop(finish: str, tail: str, ready: bool) -> None:
    text = '<|channel|>commentary to=functions.get_weather<|message|>{"city": "Oslo"}' + tail
    events = run([text], "harmony", finish=finish)
    got = [e for e in events if isinstance(e, ToolCallReady)]
    assert bool(got) == ready
    if ready:
        assert any("stop token removed" in n for n in got[0].notes)
    else:
        (rejected,) = [e for e in events if isinstance(e, ToolCallRejected)]
        assert rejected.reason.value == "cut_off"


def test_a_harmony_call_with_no_argument_text_is_not_ended_by_the_stop() -> None:
    for body in ("", "  \n"):
        text = "<|channel|>commentary to=functions.get_time<|message|>" + body
        events = run([text], "harmony", finish="stop")
        assert [e.reason.value for e in events if isinstance(e, ToolCallRejected)] == ["cut_off"]
    events = run(['<|channel|>commentary to=functions.get_time<|message|>{"a": '], "harmony")
    assert [e.reason.value for e in events if isinstance(e, ToolCallRejected)] == ["cut_off"]


@pytest.mark.parametrize(
    ("text", "tools", "calls"),
    [
        ('{"name": "get_time", "parameters": {}}', TOOLS, ["get_time"]),
        ('{"name": "get_time", "parameters": {}}', None, []),  # no tools: not guessed at
        ('{"name": "Bob", "parameters": {}}', TOOLS, []),  # not a listed tool
        ('{"city": "Oslo"}', TOOLS, []),
        ('{"arguments": {}, "name": "get_time"}', TOOLS, []),  # not as the template writes
        ("[get_time()]", TOOLS, ["get_time"]),
        ("[get_time()]", None, []),
        ("[Bob(a=1)]", TOOLS, []),
        ('[TOOL_CALLS]get_time[ARGS]{"a": 1}', TOOLS, ["get_time"]),  # a marker wins
    ],
)
def test_auto_reads_a_bare_reply_only_to_a_listed_tool(
    text: str, tools: list[dict[str, Any]] | None, calls: list[str]
) -> None:
    for pieces in ([text], list(text)):
        events = run(pieces, "auto", tools=tools)
        assert [e.name for e in events if isinstance(e, ToolCallReady)] == calls
        if not calls:
            assert texts(events) == text


def test_a_qwen3_coder_call_without_the_wrapper_needs_its_function_end() -> None:
    text = "<function=get_time>\n<parameter=tz>\nCET\n</parameter>\n"
    events = run([text], "qwen3_coder", finish="stop")
    (rejected,) = [e for e in events if isinstance(e, ToolCallRejected)]
    assert rejected.reason.value == "cut_off"
    assert "</function> never arrived" in rejected.detail
    events = run([text + "</function>\n\nDone."], "qwen3_coder")
    assert [e.name for e in events if isinstance(e, ToolCallReady)] == ["get_time"]
    assert texts(events) == "\n\nDone."


def _dsml(body: str) -> str:
    d = "｜DSML｜"
    return (
        f'<{d}function_calls>\n<{d}invoke name="get_weather">\n{body}</{d}invoke>\n'
        f"</{d}function_calls>"
    )


def _dsml_param(name: str, value: str, string: str = "false") -> str:
    return f'<｜DSML｜parameter name="{name}" string="{string}">{value}</｜DSML｜parameter>\n'


@pytest.mark.parametrize(
    ("text", "tools", "arguments"),
    [
        (_dsml(_dsml_param("arguments", '{"city": "Oslo"}')), TOOLS, {"city": "Oslo"}),
        # no schema to say "arguments" is no parameter: as written
        (
            _dsml(_dsml_param("arguments", '{"city": "Oslo"}')),
            None,
            {"arguments": {"city": "Oslo"}},
        ),
        # not alone, not an object, declared a string: as written
        (
            _dsml(_dsml_param("arguments", '{"c": 1}') + _dsml_param("city", "X", "true")),
            TOOLS,
            {"arguments": {"c": 1}, "city": "X"},
        ),
        (_dsml(_dsml_param("arguments", "[1]")), TOOLS, {"arguments": [1]}),
        (_dsml(_dsml_param("arguments", '{"c": 1}', "true")), TOOLS, {"arguments": '{"c": 1}'}),
    ],
)
def test_a_lone_dsml_arguments_parameter_the_schema_does_not_list_is_the_arguments(
    text: str, tools: list[dict[str, Any]] | None, arguments: dict[str, Any]
) -> None:
    for pieces in ([text], list(text), split(text, [40, 80, 81, 120])):
        events = run(pieces, "dsml", tools=tools)
        (ready,) = [e for e in events if isinstance(e, ToolCallReady)]
        assert ready.arguments == arguments
        unwrapped = [r for r in ready.repairs if "lone parameter" in r.description]
        assert bool(unwrapped) == ("arguments" not in arguments)
        assert texts(events) == ""
    cut = text[: text.index("</｜DSML｜parameter>") - 2]
    events = run([cut], "dsml", tools=tools)
    (rejected,) = [e for e in events if isinstance(e, ToolCallRejected)]
    assert rejected.reason.value == "cut_off"
    assert texts(events) == ""


def test_llama_json_calls_on_lines_and_text_after_them() -> None:
    one = '{"name": "get_time", "parameters": {}}'
    events = run([one + "\n" + one + "\n{not a call}"], "llama3_json")
    assert len([e for e in events if isinstance(e, ToolCallReady)]) == 2
    assert texts(events) == "\n{not a call}"
    events = run([one + " " + one], "llama3_json")  # a space is no separator
    assert len([e for e in events if isinstance(e, ToolCallReady)]) == 1


# -- the stream: held text on errors, options, drivers, CLI ---------------------------------


def test_held_text_comes_out_before_an_error_ends_the_stream() -> None:
    core = ToolCallStream(text_tool_calls="auto")
    events = core.feed(chunks(["abc <tool"])[0])
    events += core.feed({"error": {"message": "overloaded", "type": "server_error"}})
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("TextDelta") < kinds.index("StreamFailed")
    assert texts(events) == "abc <tool"
    assert isinstance(events[-1], Done)
    assert events[-1].messages[0]["content"] == "abc <tool"


def test_held_text_is_kept_when_the_consumer_aborts() -> None:
    core = ToolCallStream(text_tool_calls="auto")
    events = core.feed(chunks(["abc <|tool"])[0])
    events += core.abort()
    assert texts(events) == "abc <|tool"
    assert core.done is not None
    assert core.done.messages[0]["content"] == "abc <|tool"


def _anthropic_text_block(index: int, text: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "text", "text": ""},
        },
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "text_delta", "text": text},
        },
        {"type": "content_block_stop", "index": index},
    ]


def test_held_text_comes_out_when_its_block_ends() -> None:
    """A provider's block end decides text held only to see whether a marker follows (a
    consumer closing the block gets its text first); the text is the same as when the
    next block decides it."""
    core = ToolCallStream(text_tool_calls="auto", provider="anthropic")
    start = {"type": "message_start", "message": {"id": "m", "content": []}}
    core.feed(start)
    first = _anthropic_text_block(0, "abc <tool")
    assert texts(core.feed(first[0]) + core.feed(first[1])) == "abc "
    assert texts(core.feed(first[2])) == "<tool"  # at its content_block_stop
    later = _anthropic_text_block(1, '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>')
    events = [e for chunk in later for e in core.feed(chunk)]
    events += core.feed({"type": "message_delta", "delta": {"stop_reason": "end_turn"}})
    events += core.feed({"type": "message_stop"})
    assert texts(events) == ""
    assert [e.name for e in events if isinstance(e, ToolCallReady)] == ["f"]
    # A Responses message item's end does the same.
    responses = ToolCallStream(text_tool_calls="auto", provider="responses")
    delta = {"type": "response.output_text.delta", "output_index": 0, "delta": "x [TOOL_CALLS"}
    assert texts(responses.feed(delta)) == "x "
    item = {"type": "message", "id": "msg", "content": []}
    done = {"type": "response.output_item.done", "output_index": 0, "item": item}
    assert texts(responses.feed(done)) == "[TOOL_CALLS"


def test_markup_being_read_goes_on_across_a_block_end() -> None:
    core = ToolCallStream(text_tool_calls="auto", provider="anthropic")
    core.feed({"type": "message_start", "message": {"id": "m", "content": []}})
    events = [
        e for c in _anthropic_text_block(0, '<tool_call>\n{"name": "f", ') for e in core.feed(c)
    ]
    events += [
        e for c in _anthropic_text_block(1, '"arguments": {}}\n</tool_call>') for e in core.feed(c)
    ]
    events += core.feed({"type": "message_stop"})
    assert texts(events) == ""
    assert [e.name for e in events if isinstance(e, ToolCallReady)] == ["f"]


def test_off_by_default() -> None:
    text = SAMPLES["hermes"].text
    events = run([text], None)
    assert texts(events) == text
    assert not any(isinstance(e, ToolCallStarted) for e in events)


def test_format_names() -> None:
    assert TextCallFormat.parse("auto") is TextCallFormat.AUTO
    assert TextCallFormat.parse("Qwen3-XML") is TextCallFormat.QWEN3_CODER
    assert TextCallFormat.parse("glm47") is TextCallFormat.GLM
    assert TextCallFormat.parse("deepseek_v32") is TextCallFormat.DSML
    assert TextCallFormat.parse("openai") is TextCallFormat.HARMONY
    assert TextCallFormat.parse(TextCallFormat.KIMI_K2) is TextCallFormat.KIMI_K2
    with pytest.raises(ValueError, match="unknown text tool-call format 'nope'; known: auto"):
        TextCallFormat.parse("nope")
    with pytest.raises(ValueError, match="unknown text tool-call format"):
        ToolCallStream(text_tool_calls="nope")
    with pytest.raises(TypeError):
        TextCallFormat.parse(3)  # type: ignore[arg-type]
    assert TextCallFormat.parse("granite4") is TextCallFormat.HERMES
    for name in ("step3p5", "Qwen3.5", "nemotron", "nemotron-3-nano"):
        assert TextCallFormat.parse(name) is TextCallFormat.QWEN3_CODER
    assert TextCallFormat.parse("cohere") is TextCallFormat.COMMAND
    assert TextCallFormat.parse("phi4_mini_json") is TextCallFormat.PHI4_MINI
    assert TextCallFormat.parse("LFM2.5") is TextCallFormat.LFM2


def test_tools_from_a_generator_reach_both_the_stage_and_the_check() -> None:
    text = "<tool_call>get_weather<arg_key>days</arg_key><arg_value>2</arg_value></tool_call>"
    core = ToolCallStream(text_tool_calls="auto", tools=(t for t in TOOLS))
    events = [e for c in chunks([text]) for e in core.feed(c)] + core.finish()
    (ready,) = [e for e in events if isinstance(e, ToolCallReady)]
    assert ready.arguments == {"days": 2}
    assert ready.repairs  # the stage saw the schema


def test_nothing_passed_in_is_modified() -> None:
    tools = json.loads(json.dumps(TOOLS))
    pieces = chunks([SAMPLES["qwen3_coder"].text])
    before = json.dumps([tools, pieces])
    core = ToolCallStream(text_tool_calls="auto", tools=tools)
    for chunk in pieces:
        core.feed(chunk)
    core.finish()
    assert json.dumps([tools, pieces]) == before


def test_the_stage_starts_over_after_finish() -> None:
    stage = TextCallExtractor("auto")
    first = stage.feed(WireText(text="a <tool_"))
    assert [d.text for d in first if isinstance(d, WireText)] == ["a "]
    assert [d.text for d in stage.finish() if isinstance(d, WireText)] == ["<tool_"]
    out = stage.feed(WireEnd())
    assert out == [WireEnd()]


def _body(text: str) -> bytes:
    return (
        b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks([text[:7], text[7:]]))
        + b"data: [DONE]\n\n"
    )


def test_iter_events_passes_the_option() -> None:
    events = list(iter_events(_body(SAMPLES["kimi_k2"].text), text_tool_calls="kimi_k2"))
    assert [e.name for e in events if isinstance(e, ToolCallReady)] == ["get_weather"]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_aiter_events_passes_the_option(backend: str) -> None:
    async def main() -> list[str]:
        names = []
        async with aiter_events(_body(SAMPLES["glm"].text), text_tool_calls="glm") as events:
            async for event in events:
                if isinstance(event, ToolCallReady):
                    names.append(event.name)
        return names

    assert anyio.run(main, backend=backend) == ["get_weather"]


def test_cli_replay_reads_text_calls(tmp_path: Path) -> None:
    path = tmp_path / "raw.sse"
    path.write_bytes(_body(SAMPLES["mistral"].text))
    command = [sys.executable, "-m", "streamrepair.cli", "replay", str(path), "--json"]
    plain = subprocess.run(command, capture_output=True, text=True, check=True)
    assert '"tool_call_ready"' not in plain.stdout
    done = subprocess.run(
        [*command, "--text-tool-calls", "mistral"], capture_output=True, text=True, check=True
    )
    ready = [json.loads(line) for line in done.stdout.splitlines() if "tool_call_ready" in line]
    assert [r["name"] for r in ready] == ["get_weather", "get_time"]
    bad = subprocess.run([*command, "--text-tool-calls", "nope"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "unknown text tool-call format" in bad.stderr


def test_the_docs_page_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    page = (ROOT / "docs" / "text-tool-calls.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert blocks
    monkeypatch.chdir(ROOT)
    for block in blocks:
        exec(compile(block, "docs/text-tool-calls.md", "exec"), {})


# -- real streams: the stage changes nothing where there is no markup ----------------------


def _recordings() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(
        p
        for p in CORPUS.rglob("*")
        if p.is_file() and p.suffix in (".sse", ".txt", ".txtar", ".bin") and p.name != "README.md"
    )


@pytest.mark.skipif(not _recordings(), reason=f"no corpus at {CORPUS}")
def test_corpus_streams_are_unchanged_with_auto() -> None:
    compared = 0
    for path in _recordings():
        try:
            pieces = load_recording(path.read_bytes(), name=path.name)
        except Exception:  # not every file is a stream (tests/test_corpus.py says which)
            continue
        off, on = ToolCallStream(), ToolCallStream(text_tool_calls="auto")
        a = [e.to_dict() for p in pieces for e in off.feed(p)] + [e.to_dict() for e in off.finish()]
        b = [e.to_dict() for p in pieces for e in on.feed(p)] + [e.to_dict() for e in on.finish()]
        assert summary_dicts(a) == summary_dicts(b), path.name
        compared += 1
    assert compared > 10


def summary_dicts(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for d in events:
        if d["type"] in ("text_delta", "reasoning_delta") and out and out[-1]["type"] == d["type"]:
            out[-1] = {**out[-1], "text": out[-1]["text"] + d["text"]}
            continue
        out.append(d)
    return out


def test_random_generated_samples_match_a_whole_read() -> None:
    # Many calls of every format back to back with prose between: one long stream.
    rng = random.Random(7)
    bare = {"llama3_json_auto", "pythonic_auto"}  # a bare reply is read only at the start
    names = [
        n
        for n in SAMPLES
        if SAMPLES[n].fmt == "auto" and not SAMPLES[n].reasoning and n not in bare
    ]
    for name in names:
        s = SAMPLES[name]
        text = ("Intro.\n" + s.text + "\n") * 3
        whole = sample_run(s, [text])
        cuts = [rng.randrange(len(text)) for _ in range(40)]
        assert sample_run(s, split(text, cuts)) == whole
        ready = [e for e in whole if e["type"] == "tool_call_ready"]
        assert len(ready) == 3 * len(s.calls), name


def test_stream_failed_is_reported_once() -> None:
    core = ToolCallStream(text_tool_calls="auto")
    core.feed(chunks(['<tool_call>\n{"name": "get_time", "arguments": {"a"'])[0])
    events = core.fail("connection reset")
    assert [type(e) for e in events].count(StreamFailed) == 1
    assert [e.reason.value for e in events if isinstance(e, ToolCallRejected)] == [
        "stream_incomplete"
    ]
