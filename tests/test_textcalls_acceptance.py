"""Acceptance set for tool calls written as text: model outputs transcribed from the serving
engines' own parser tests (vLLM, SGLang, llama.cpp, Ollama), one JSON object a line in
``tests/textcalls_acceptance/<engine>.jsonl`` (README there: the fields, where each case
comes from).

Every case is streamed whole, one character at a time, in 7-character pieces and at a
seeded random split, as Chat Completions content, through ``text_tool_calls`` = the case's
format (where streamrepair reads it) and ``"auto"``:

* ``test_same_at_every_chunking``: the four chunkings give the same calls, refusals and
  text. It holds for every case, read or not.
* ``test_reads_as_the_engine``: the ready calls are the engine's calls (name and
  arguments), in order; a call the engine runs although the model did not finish it
  (``engine_runs_unfinished``, the call's ``"finished": false``) is refused here, never
  ready; the text left is the engine's content (reasoning and content together where the
  engine splits them, compared without whitespace and thinking delimiters), unless a call
  was refused (its markup then is in the refusal's ``raw``) or the case is in
  ``KEEPS_TEXT``.

Where streamrepair does not read a case yet, the case is ``xfail(strict=True)`` with the
reason; the implementation removes marks as it goes. The tables below are this test's
judgement of each case; the data files hold only what the engines do.
"""

from __future__ import annotations

import functools
import json
import random
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from streamrepair import (
    ReasoningDelta,
    TextDelta,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStream,
)

DATA = Path(__file__).resolve().parent / "textcalls_acceptance"
ENGINES = ("vllm", "sglang", "llama.cpp", "ollama")


def _load() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for engine in ENGINES:
        with (DATA / f"{engine}.jsonl").open(encoding="utf-8") as f:
            cases.extend(json.loads(line) for line in f if line.strip())
    return cases


CASES = _load()
BY_ID = {case["id"]: case for case in CASES}

# The engine's parser (or chat template) name -> the format streamrepair reads it with;
# None: not read yet (the case runs with "auto" only).
FORMATS: dict[str, str | None] = {
    # <tool_call>{"name": ..., "arguments": ...}</tool_call>
    "hermes": "hermes",
    "qwen3": "hermes",
    "qwen3-thinking": "hermes",
    "granite4": "hermes",
    "ibm-granite-granite-4.0.jinja": "hermes",
    "ollama-tools:qwen": "hermes",
    "sglang-base:<tool_call>": "hermes",
    # <tool_call><function=N><parameter=K>V</parameter></function></tool_call>
    "qwen3_coder": "qwen3_coder",
    "qwen3-coder": "qwen3_coder",
    "qwen3.5": "qwen3_coder",
    "nemotron-3-nano": "qwen3_coder",
    "step3p5": "qwen3_coder",
    "Qwen3-Coder.jinja": "qwen3_coder",
    # <tool_call>N<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>
    "glm45": "glm",
    "glm47": "glm",
    "glm-4.6": "glm",
    "glm-4.7": "glm",
    # <｜tool▁calls▁begin｜>...
    "deepseek_v3": "deepseek",
    "deepseek_v31": "deepseek",
    "deepseek3": "deepseek",
    "deepseek-ai-DeepSeek-V3.1.jinja": "deepseek",
    "deepseek_v32": "dsml",
    "deepseekv32": "dsml",
    "deepseek-ai-DeepSeek-V3.2.jinja": "dsml",
    "kimi_k2": "kimi_k2",
    "Kimi-K2-Thinking.jinja": "kimi_k2",
    "mistral": "mistral",
    "ministral": "mistral",
    "ollama-tools:mistral": "mistral",
    "llama3_json": "llama3_json",
    "ollama-tools:json": "llama3_json",
    "llama4_pythonic": "pythonic",
    "pythonic": "pythonic",
    "openai": "harmony",
    "harmony": "harmony",
    "gpt-oss": "harmony",
    # not read yet
    "deepseek_v4": "dsml_v4",
    "kimi_k3": "kimi_k3",
    "Kimi-K3.jinja": "kimi_k3",
    "gemma4": None,
    "functiongemma": None,
    "minimax_m2": "minimax_m2",
    "MiniMax-M2.jinja": "minimax_m2",
    "MiniMax-M3.jinja": "minimax_m3",
    "granite": None,
    "hunyuan_a13b": None,
    "hy_v4": None,
    "seed_oss": "seed_oss",
    "ByteDance-Seed-OSS.jinja": "seed_oss",
    "step3": None,
    "xlam": None,
    "phi4_mini_json": None,
    "olmo3": None,
    "lfm2": None,
    "LFM2.5-8B-A1B.jinja": None,
    "cohere": None,
    "cohere_command": None,
    "ollama-tools:list": None,
}

# Thinking delimiters removed before text is compared with the engine's reasoning + content.
THINK_MARKERS = (
    "<think>",
    "</think>",
    "[THINK]",
    "[/THINK]",
    "<|channel>thought",
    "<|channel>",
    "<channel|>",
    "<seed:think>",
    "</seed:think>",
    "<|START_THINKING|>",
    "<|END_THINKING|>",
    "<|close|>think<|sep|>",
    "<mm:think>",
    "</mm:think>",
)

CHUNKINGS = ("whole", "1", "7", "random")


@dataclass(frozen=True)
class Outcome:
    """What the stream gave: ready calls (name, arguments as JSON), refused calls (name,
    reason) and the text (content and reasoning in order)."""

    ready: tuple[tuple[str, str], ...]
    refused: tuple[tuple[str, str], ...]
    text: str


def pieces(case: dict[str, Any], how: str) -> list[str]:
    text: str = case["output"]
    if how == "whole" or len(text) < 2:
        return [text]
    if how in ("1", "7"):
        size = int(how)
        return [text[i : i + size] for i in range(0, len(text), size)]
    rnd = random.Random(zlib.crc32(case["id"].encode()))
    cuts = sorted(rnd.sample(range(1, len(text)), min(len(text) - 1, 1 + len(text) // 6)))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def tools_of(case: dict[str, Any]) -> list[dict[str, Any]] | None:
    tools = case["tools"]
    return None if tools is None else [{"type": "function", "function": t} for t in tools]


def stream(case: dict[str, Any], fmt: str, how: str) -> Outcome:
    core = ToolCallStream(text_tool_calls=fmt, tools=tools_of(case))
    events: list[Any] = []
    for piece in pieces(case, how):
        chunk = {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": piece}}],
        }
        events.extend(core.feed(chunk))
    end = {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }
    events.extend(core.feed(end))
    events.extend(core.finish())
    return Outcome(
        ready=tuple(
            (e.name, json.dumps(e.arguments, sort_keys=True))
            for e in events
            if isinstance(e, ToolCallReady)
        ),
        refused=tuple((e.name, e.reason.value) for e in events if isinstance(e, ToolCallRejected)),
        text="".join(e.text for e in events if isinstance(e, (TextDelta, ReasoningDelta))),
    )


@functools.cache
def outcome(case_id: str, fmt: str, how: str) -> Outcome:
    """``stream`` once per case, format and chunking (both tests use it)."""
    return stream(BY_ID[case_id], fmt, how)


def modes(case: dict[str, Any]) -> list[str]:
    named = FORMATS[case["format"]]
    return ([named] if named else []) + ["auto"]


def norm(text: str) -> str:
    for marker in THINK_MARKERS:
        text = text.replace(marker, "")
    return re.sub(r"\s+", "", text)


def _args(arguments: Any) -> str:
    # vLLM passes empty arguments as "": no arguments, as {} here.
    return json.dumps({} if arguments == "" else arguments, sort_keys=True)


def check(case: dict[str, Any], mode: str, got: Outcome) -> None:
    """Assert that ``got`` reads the case as the engine does (module docstring)."""
    cid = case["id"]
    if mode == "auto" and cid in AUTO_LEAVES_TEXT:
        assert got == Outcome((), (), case["output"]), AUTO_LEAVES_TEXT[cid]
        return
    refuse = REFUSES.get(cid, frozenset())
    calls = BY_DESIGN[cid][1] if cid in BY_DESIGN else case["calls"]
    runs = [c for c in calls if c.get("finished", True) and c["name"] not in refuse]
    assert [(n, json.loads(a)) for n, a in got.ready] == [
        (c["name"], json.loads(_args(c["arguments"]))) for c in runs
    ]
    refused_names = [n for n, _ in got.refused]
    for c in calls:
        if not c.get("finished", True) or c["name"] in refuse:
            assert c["name"] in refused_names, f"{c['name']} must be refused"
    left_as_text = cid in BY_DESIGN and len(calls) < len(case["calls"])
    if case["content"] is None or got.refused or cid in KEEPS_TEXT or left_as_text:
        return
    if "reasoning" in case:
        assert norm(got.text) == norm(case["reasoning"] + case["content"])
    else:
        assert got.text.strip() == case["content"].strip()


def xfail_reason(case: dict[str, Any], mode: str) -> str | None:
    cid = case["id"]
    for key in ((cid, mode), cid):
        if key in XFAIL:
            return XFAIL[key]
    if cid in ALREADY_READ:
        return None
    if FORMATS[case["format"]] is None and (case["calls"] or cid in NOT_READ_TEXT):
        return NOT_READ.get(case["format"], f"format not implemented: {case['format']}")
    return None


#: Formats the engines parse that are not read here, and why (docs/text-tool-calls.md,
#: "Every format the engines parse"): the engine's calls are not given for them.
NOT_READ: dict[str, str] = {
    "step3": (
        "not read by design: Step3's steptml is superseded by Step-3.5 (Qwen3-Coder XML, "
        "read), and vLLM's own tests mark its non-streaming parser broken"
    ),
    "hy_v4": (
        "not read by design: every tag carries a suffix that comes from the checkpoint's "
        "tokenizer, so there is no fixed marker to find"
    ),
}


def params() -> list[Any]:
    out = []
    for case in CASES:
        for mode in modes(case):
            reason = xfail_reason(case, mode)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(case, mode, id=f"{case['id']}-{mode}", marks=marks))
    return out


# -- this test's judgement of the cases -----------------------------------------------------

_DROPS = "the engine drops text the model wrote; streamrepair never drops text (principle 2)"
_CUT = "the engine holds back markup cut off before a call could start; it stays text here"

# The engine drops text (between or after the calls, markup that did not become a call);
# streamrepair keeps every character, so only the calls are compared.
KEEPS_TEXT: dict[str, str] = {
    "ollama/deepseek3/malformed_missing_sep": _DROPS + " (a call with no <｜tool▁sep｜>)",
    "ollama/ministral/think_block_in_content": "the engine moves a [THINK] block out of the "
    "middle of the content; the order of the compared text differs",
    "ollama/qwen35/truncated_call": _CUT,
    "ollama/tools/list_unknown_name": _DROPS + " (a JSON list naming an unknown tool)",
    "ollama/tools/mistral_list": _DROPS + " (the test template's [/TOOL_CALLS])",
    "ollama/tools/qwen_cut_in_name": _CUT,
    "sglang/gpt_oss/call_then_text": _DROPS + " (text after <|call|>, a stop token)",
    "sglang/gpt_oss/text_after_call_dropped": _DROPS + " (a final message after <|call|>)",
    "sglang/pythonic/cut_off_list": _CUT + " (the test ends before the stream does)",
    "vllm/deepseek_v31/two_calls_suffix": _DROPS + " (text after the calls)",
    "vllm/glm45/text_between_calls": _DROPS + " (text between the calls)",
    "vllm/kimi_k2/text_after_section": _DROPS + " (text after the section)",
    "vllm/mistral/pre_v11_not_json": _DROPS + " (the [TOOL_CALLS] marker before prose)",
}

# Calls the engine runs that streamrepair refuses by design although the model finished
# them: arguments that are not a JSON object, or a value the markup declares JSON
# (DSML string="false") that is not JSON.
REFUSES: dict[str, frozenset[str]] = {
    "sglang/deepseek_v32/non_json_in_string_false": frozenset({"write_note"}),
    "sglang/deepseek_v4/non_json_in_string_false": frozenset({"write_note"}),
    "sglang/kimi_k3/typed_values": frozenset({"python"}),
    "vllm/hermes/bare_string_arguments": frozenset({"do_thing"}),
    "vllm/openai/several_messages": frozenset({"not_json_no_content_type"}),
}

# What streamrepair gives by design instead of the engine's calls, and why.
_PROSE = (
    "a reply with no start marker is a call only when it begins as one; calls found inside "
    "prose are the guess smg-project/smg#2271 warns of"
)
BY_DESIGN: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "ollama/glm47/three_calls": (
        "GLM values that are JSON are read as JSON without a schema, as vLLM's glm45 does "
        "(vllm/glm45/numeric_deserialization); Ollama keeps them strings",
        [
            {"name": "first", "arguments": {"a": 1}},
            {"name": "second", "arguments": {"b": 2}},
            {"name": "third", "arguments": {"c": 3}},
        ],
    ),
    "ollama/glm47/three_calls_adjacent": (
        "GLM values that are JSON are read as JSON without a schema (see three_calls)",
        [
            {"name": "first", "arguments": {"a": 1}},
            {"name": "second", "arguments": {"b": 2}},
            {"name": "third", "arguments": {"c": 3}},
        ],
    ),
    "ollama/qwen3coder/names_with_spaces": (
        "a name with spaces is no tool name the chat APIs accept: the markup stays text",
        [],
    ),
    "vllm/kimi_k2/bare_counter_one_tool": (
        "a bare counter id names no tool: the markup is text (naming the call after the "
        "only listed tool is a guess: the model may have meant none)",
        [],
    ),
    "vllm/kimi_k2/bare_counter_infers_by_args": (
        "a bare counter id names no tool: the markup is text (picking the tool whose "
        "properties the arguments fit is a guess)",
        [],
    ),
    "vllm/mistral/pre_v11_junk_before_array": (
        "text between [TOOL_CALLS] and the array: the markup did not say where the call "
        "starts, so it stays text (the engine's regex fallback searches for an array)",
        [],
    ),
    "vllm/llama3_json/json_inside_prose": (_PROSE, []),
    "vllm/llama3_json/three_inside_prose": (_PROSE, []),
    "sglang/pythonic/text_then_list": (_PROSE, []),
    "sglang/pythonic/two_lists_with_text": (
        _PROSE + " (the second list follows prose)",
        [{"name": "get_weather", "arguments": {"location": "Berlin"}}],
    ),
}

# With "auto", a reply with no start marker and no tools listed is not guessed at
# (docs/text-tool-calls.md#auto): it stays text.
_BARE = "auto does not read a bare JSON or pythonic reply when no tools are listed"
AUTO_LEAVES_TEXT: dict[str, str] = {
    f"vllm/{name}": _BARE
    for name in (
        "llama3_json/arguments_key",
        "llama3_json/brace_in_trailing_text",
        "llama3_json/brackets_in_strings",
        "llama3_json/deeply_nested",
        "llama3_json/escaped_quotes",
        "llama3_json/json_in_trailing_text",
        "llama3_json/json_inside_prose",
        "llama3_json/parallel_sep_newline",
        "llama3_json/parallel_sep_semicolon",
        "llama3_json/parallel_sep_semicolon_newline",
        "llama3_json/parallel_sep_semicolon_space",
        "llama3_json/three_inside_prose",
        "llama3_json/three_semicolon",
        "llama3_json/three_spaced_semicolon",
        "llama3_json/two_deep",
        "llama3_json/with_arguments",
        "llama4_pythonic/empty_dict",
        "llama4_pythonic/empty_list",
        "llama4_pythonic/escaped_string",
        "llama4_pythonic/more_types",
        "llama4_pythonic/parallel",
        "llama4_pythonic/parameterless",
        "llama4_pythonic/simple",
    )
}

# Cases not compared in auto mode: auto reads them as another format, as it should.
AUTO_NOT_COMPARED: dict[str, str] = {
    "vllm/deepseek_v4/function_calls_block_not_accepted": "auto reads <｜DSML｜function_calls> "
    "as DeepSeek V3.2's block; only the deepseek_v4 parser turns it away",
}

# Cases of a format not read yet that already read right through another format's markup.
ALREADY_READ: dict[str, str] = {
    "vllm/xlam/tool_calls_token": "auto reads [TOOL_CALLS] [...] as Mistral's array",
}

# Cases without calls whose text streamrepair does not give as the engine's content yet
# (the markup of a format it does not read).
NOT_READ_TEXT: set[str] = {
    "ollama/cohere/text_block",
    "vllm/cohere_command/citations_no_call",
}

# (case id, mode) or case id -> why streamrepair does not read it as the engine yet.
XFAIL: dict[tuple[str, str] | str, str] = {
    # (issue 23's misses in the formats read before it are all read now)
}


# -- formats read since the set was made (issue 23: Gemma 4, FunctionGemma, OLMo 3, LFM2,
# Command, Hunyuan-A13B; Granite 3.x, Phi-4-mini, xLAM named only) -------------------------

FORMATS.update(
    {
        "gemma4": "gemma4",
        "functiongemma": "functiongemma",
        "olmo3": "olmo3",
        "lfm2": "lfm2",
        "LFM2.5-8B-A1B.jinja": "lfm2",
        "cohere": "command",
        "cohere_command": "command",
        "hunyuan_a13b": "hunyuan_a13b",
        "granite": "granite",
        "phi4_mini_json": "phi4_mini",
        "xlam": "xlam",
        "ollama-tools:list": "xlam",
    }
)

_REPLY_MARKERS = (
    "the engine removes the template's reply markers (<|START_TEXT|>, <|START_RESPONSE|>) "
    "and citations; streamrepair passes them on as content, as it does a <think> block"
)
KEEPS_TEXT.update(
    {
        "ollama/cohere/text_block": _REPLY_MARKERS,
        "vllm/cohere_command/citations_no_call": _REPLY_MARKERS,
    }
)

_GUESSED_SYNTAX = "a guess at what the model meant, refused (docs/text-tool-calls.md)"
REFUSES.update(
    {
        # two arguments with no comma between them (the test's chunks join so)
        "vllm/functiongemma/no_comma_between_args": frozenset({"get_weather"}),
        "vllm/functiongemma/three_args_no_commas": frozenset({"search"}),
        # LFM2: vLLM's recoveries of Python that is not Python; _lfm2.py says why not
        "vllm/lfm2/nested_same_quotes": frozenset({"bash"}),
        "vllm/lfm2/leading_zero_ints": frozenset({"set_date"}),
        "vllm/lfm2/set_argument": frozenset({"label"}),
        # a key written twice with different values: Ollama keeps the last; refused here
        # (issue 21: which one the model meant is a guess; the guidance asks for each key
        # once)
        "ollama/glm46/duplicate_key": frozenset({"test-function"}),
    }
)

_DELIMITED = (
    "a value between <escape> delimiters is a string, as the FunctionGemma template writes "
    "strings (numbers and booleans bare); Ollama keeps it a string, vLLM converts it; a "
    "tool's schema converts it in the schema check"
)
BY_DESIGN.update(
    {
        "vllm/functiongemma/escaped_number_read_as_number": (
            _DELIMITED,
            [{"name": "count_items", "arguments": {"count": "42"}}],
        ),
        "vllm/functiongemma/escaped_bool_read_as_bool": (
            _DELIMITED,
            [{"name": "toggle", "arguments": {"enabled": "true"}}],
        ),
    }
)

_NAMED_ONLY = "a format read only when named (Granite 3.x, Phi-4-mini, xLAM): auto leaves it text"
AUTO_LEAVES_TEXT.update(
    {
        cid: _NAMED_ONLY
        for cid in BY_ID
        if FORMATS[BY_ID[cid]["format"]] in ("granite", "phi4_mini", "xlam")
        and cid not in ALREADY_READ
        and BY_ID[cid]["calls"]
    }
)


@pytest.mark.parametrize(
    ("case", "mode"),
    [pytest.param(c, m, id=f"{c['id']}-{m}") for c in CASES for m in modes(c)],
)
def test_same_at_every_chunking(case: dict[str, Any], mode: str) -> None:
    whole = outcome(case["id"], mode, "whole")
    for how in CHUNKINGS[1:]:
        assert outcome(case["id"], mode, how) == whole, how


@pytest.mark.parametrize(("case", "mode"), params())
def test_reads_as_the_engine(case: dict[str, Any], mode: str) -> None:
    if mode == "auto" and case["id"] in AUTO_NOT_COMPARED:
        pytest.skip(AUTO_NOT_COMPARED[case["id"]])
    for how in CHUNKINGS:
        check(case, mode, outcome(case["id"], mode, how))


def test_every_case_is_well_formed() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids))
    for case in CASES:
        assert case["format"] in FORMATS, case["id"]
        assert set(case["source"]) == {"repo", "path", "test", "commit"}
        assert re.fullmatch(r"[0-9a-f]{40}", case["source"]["commit"])
        assert case["id"].split("/")[0] in ENGINES
        unfinished = any(not c.get("finished", True) for c in case["calls"])
        assert case["engine_runs_unfinished"] == unfinished, case["id"]
    tables = (KEEPS_TEXT, REFUSES, BY_DESIGN, AUTO_LEAVES_TEXT, AUTO_NOT_COMPARED)
    for table in (*tables, ALREADY_READ, NOT_READ_TEXT):
        assert set(table) <= set(ids)
    assert {k if isinstance(k, str) else k[0] for k in XFAIL} <= set(ids)
