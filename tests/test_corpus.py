"""Every recording in ../shared/corpus replays without error and yields the tool calls it
contains, whatever the chunking.

The corpus lives beside the repository (``<repo>/../shared/corpus``; a work tree kept
elsewhere names it with ``STREAMREPAIR_CORPUS``); the tests skip cleanly when it is absent. ``ai4j/APIResponse.md`` is left out: it is notes with fenced
captures, not a stream. txtar files without a ``-- streaming --`` section (blocking
responses) are not streams either.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from streamrepair import (
    Done,
    StreamFailed,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStream,
    iter_events,
    load_recording,
)

CORPUS = Path(
    os.environ.get("STREAMREPAIR_CORPUS")
    or Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
)
QUOTED = {
    "website_path": "/home/user/pace-landing",
    "tasks": [
        {
            "description": "Today you post every run to Strava, but Strava does not answer the "
            'question: "What should I do next after this run?". It is a great log, but it is '
            "not adaptive.",
            "type": "feature",
            "passes": False,
        }
    ],
}

# file -> (normalized stop reason, [(ready, name, arguments) | (rejected, name, reason)]).
# Checked by hand against each recording.
EXPECTED: dict[str, tuple[str, list[tuple[str, str, Any]]]] = {
    "anthropic-sdk-python/basic_response.txt": ("stop", []),
    "anthropic-sdk-python/compaction_response.txt": ("stop", []),
    "anthropic-sdk-python/fallback_credit_response.txt": ("stop", []),
    "anthropic-sdk-python/fallback_response.txt": ("stop", []),
    "anthropic-sdk-python/incomplete_partial_json_response.txt": (
        "length",
        [("rejected", "make_file", "cut_off")],
    ),
    "anthropic-sdk-python/refusal_response.txt": ("content_filter", []),
    "anthropic-sdk-python/tool_use_response.txt": (
        "tool_calls",
        [("ready", "get_weather", {"location": "Paris"})],
    ),
    "coder-aibridge/anthropic__haiku_simple.txtar": ("stop", []),
    "coder-aibridge/anthropic__multi_thinking_builtin_tool.txtar": (
        "tool_calls",
        [("ready", "Read", {"file_path": "/tmp/blah/foo"})],
    ),
    "coder-aibridge/anthropic__non_stream_error.txtar": ("error", []),
    "coder-aibridge/anthropic__simple.txtar": ("stop", []),
    "coder-aibridge/anthropic__simple_bedrock.txtar": ("stop", []),
    "coder-aibridge/anthropic__single_builtin_tool.txtar": (
        "tool_calls",
        [("ready", "Read", {"file_path": "/tmp/blah/foo"})],
    ),
    "coder-aibridge/anthropic__single_builtin_tool_parallel.txtar": (
        "tool_calls",
        [
            ("ready", "Read", {"file_path": "/tmp/blah/foo"}),
            ("ready", "Read", {"file_path": "/tmp/blah/bar"}),
        ],
    ),
    "coder-aibridge/anthropic__single_injected_tool.txtar": (
        "tool_calls",
        [("ready", "bmcp_coder_coder_list_workspaces", {"owner": "admin"})],
    ),
    "coder-aibridge/anthropic__stream_error.txtar": ("error", []),
    "coder-aibridge/openai__chatcompletions__non_stream_error.txtar": ("error", []),
    "coder-aibridge/openai__chatcompletions__simple.txtar": ("stop", []),
    "coder-aibridge/openai__chatcompletions__single_builtin_tool.txtar": (
        "tool_calls",
        [("ready", "read_file", {"path": "README.md"})],
    ),
    "coder-aibridge/openai__chatcompletions__single_injected_tool.txtar": (
        "tool_calls",
        [("ready", "bmcp_coder_coder_list_workspaces", {"owner": "admin"})],
    ),
    "coder-aibridge/openai__chatcompletions__stream_error.txtar": ("error", []),
    "coder-aibridge/openai__chatcompletions__streaming_injected_tool_no_preamble.txtar": (
        "tool_calls",
        [("ready", "bmcp_coder_coder_list_workspaces", {"owner": "me"})],
    ),
    "coder-aibridge/openai__chatcompletions__streaming_injected_tool_nonzero_index.txtar": (
        "tool_calls",
        [("ready", "bmcp_coder_coder_list_workspaces", {})],
    ),
    "coder-aibridge/openai__responses__streaming__builtin_tool.txtar": (
        "stop",
        [("ready", "add", {"a": 3, "b": 5})],
    ),
    "coder-aibridge/openai__responses__streaming__cached_input_tokens.txtar": ("stop", []),
    "coder-aibridge/openai__responses__streaming__codex_example.txtar": ("stop", []),
    "coder-aibridge/openai__responses__streaming__commentary_builtin_tool.txtar": (
        "stop",
        [("ready", "add", {"a": 3, "b": 5})],
    ),
    "coder-aibridge/openai__responses__streaming__conversation.txtar": ("error", []),
    "coder-aibridge/openai__responses__streaming__custom_tool.txtar": (
        "stop",
        [("ready", "code_exec", 'print("hello world")')],
    ),
    "coder-aibridge/openai__responses__streaming__http_error.txtar": ("error", []),
    "coder-aibridge/openai__responses__streaming__multi_reasoning_builtin_tool.txtar": (
        "stop",
        [("ready", "add", {"a": 3, "b": 5})],
    ),
    "coder-aibridge/openai__responses__streaming__prev_response_id.txtar": ("stop", []),
    "coder-aibridge/openai__responses__streaming__simple.txtar": ("stop", []),
    "coder-aibridge/openai__responses__streaming__single_builtin_tool_parallel.txtar": (
        "stop",
        [("ready", "add", {"a": 3, "b": 5}), ("ready", "add", {"a": 10, "b": 20})],
    ),
    "coder-aibridge/openai__responses__streaming__single_injected_tool.txtar": (
        "stop",
        [("ready", "bmcp_coder_coder_list_templates", {})],
    ),
    "coder-aibridge/openai__responses__streaming__single_injected_tool_error.txtar": (
        "stop",
        [
            (
                "ready",
                "bmcp_coder_coder_create_workspace_build",
                {"transition": "start", "workspace_id": "non_existing_id"},
            )
        ],
    ),
    "coder-aibridge/openai__responses__streaming__stream_error.txtar": ("error", []),
    "coder-aibridge/openai__responses__streaming__stream_failure.txtar": ("error", []),
    "coder-aibridge/openai__responses__streaming__summary_and_commentary_builtin_tool.txtar": (
        "stop",
        [("ready", "add", {"a": 3, "b": 5})],
    ),
    "coder-aibridge/openai__responses__streaming__wrong_response_format.txtar": ("stop", []),
    "openai-python/173417d55340.sse": ("stop", []),
    "openai-python/2018feb66ae1.sse": (
        "tool_calls",
        [("ready", "get_weather", {"city": "New York City"})],
    ),
    "openai-python/4cc50a6135d2.sse": ("length", []),
    "openai-python/569c877e6942.sse": ("stop", []),
    "openai-python/7e5ea4d12e7c.sse": ("stop", []),
    "openai-python/83b060bae42e.sse": ("stop", []),
    "openai-python/a247c49c5fcd.sse": (
        "tool_calls",
        [("ready", "get_weather", {"city": "San Francisco", "state": "CA"})],
    ),
    "openai-python/a491adda08c3.sse": ("stop", []),
    "openai-python/c6aa7e397b71.sse": (
        "tool_calls",
        [("ready", "GetWeatherArgs", {"city": "Edinburgh", "country": "UK", "units": "c"})],
    ),
    "openai-python/d61558011839.sse": ("stop", []),
    "openai-python/e2aad469b71d.sse": ("stop", []),
    "openai-python/f82268f2fefd.sse": (
        "tool_calls",
        [
            ("ready", "GetWeatherArgs", {"city": "Edinburgh", "country": "GB", "units": "c"}),
            ("ready", "get_stock_price", {"ticker": "AAPL", "exchange": "NASDAQ"}),
        ],
    ),
    "vercel-ai/alibaba__alibaba-tool-call.chunks.txt": (
        "tool_calls",
        [("ready", "weather", {"location": "San Francisco"})],
    ),
    "vercel-ai/anthropic__anthropic-json-tool.1.chunks.txt": (
        "tool_calls",
        [
            (
                "ready",
                "json",
                {
                    "elements": [
                        {"location": "San Francisco", "temperature": 58, "condition": "sunny"}
                    ]
                },
            )
        ],
    ),
    "vercel-ai/anthropic__anthropic-tool-no-args.chunks.txt": (
        "tool_calls",
        [("ready", "updateIssueList", {})],
    ),
    "vercel-ai/anthropic__duplicate-message-start.chunks.txt": ("stop", []),
    "vercel-ai/anthropic__issue-11719-quoted-tool-input.chunks.txt": (
        "tool_calls",
        [("ready", "website_update", QUOTED)],
    ),
    "vercel-ai/anthropic__spliced-message-start.chunks.txt": (
        "tool_calls",
        [
            ("rejected", "test-tool", "stream_incomplete"),
            ("ready", "test-tool", {"value": "Sparkle Day"}),
        ],
    ),
    "vercel-ai/azure__azure-tool-call.1.chunks.txt": (
        "stop",
        [("ready", "weather", {"location": "San Francisco"})],
    ),
    "vercel-ai/cohere__cohere-tool-call.chunks.txt": (
        "tool_calls",
        [
            ("ready", "weather", {"location": "San Francisco"}),
            ("ready", "cityAttractions", {"city": "San Francisco"}),
        ],
    ),
    "vercel-ai/deepseek__deepseek-reasoning.chunks.txt": ("stop", []),
    "vercel-ai/deepseek__deepseek-tool-call.chunks.txt": (
        "tool_calls",
        [("ready", "weather", {"location": "San Francisco"})],
    ),
    "vercel-ai/deepseek__issue-19381-thinking-reasoning.chunks.txt": ("length", []),
    "vercel-ai/deepseek__issue-19789-live-usage.chunks.txt": ("length", []),
    "vercel-ai/google__google-stream-tool-call-arguments.chunks.txt": (
        "stop",
        [
            ("ready", "getWeather", {"location": "Boston"}),
            ("ready", "getWeather", {"location": "San Francisco"}),
        ],
    ),
    "vercel-ai/groq__groq-tool-call.chunks.txt": ("tool_calls", [("ready", "weather", {})]),
    "vercel-ai/mistral__mistral-incremental-tool-call.chunks.txt": (
        "tool_calls",
        [("ready", "webSearchTool", {"query": "current Berlin weather"})],
    ),
    "vercel-ai/mistral__mistral-tool-call.chunks.txt": (
        "tool_calls",
        [("ready", "weather", {"location": "San Francisco"})],
    ),
    "vercel-ai/moonshotai__moonshotai-stream.chunks.txt": ("stop", []),
    "vercel-ai/openai-compatible__xai-tool-call.chunks.txt": (
        "tool_calls",
        [("ready", "weather", {"location": "San Francisco"})],
    ),
    "vercel-ai/openai__azure-model-router.1.chunks.txt": ("stop", []),
    "vercel-ai/openai__openai-custom-tool.1.chunks.txt": (
        "stop",
        [("ready", "write_sql", "SELECT * FROM users WHERE age > 25")],
    ),
    "vercel-ai/openai__openai-error.1.chunks.txt": ("error", []),
    "vercel-ai/openai__parallel-tool-call-wrapper.1.chunks.txt": ("error", []),
    "vercel-ai/xai__xai-tool-call.chunks.txt": (
        "tool_calls",
        [("ready", "weather", {"location": "San Francisco"})],
    ),
}

# Recordings that cannot give their tool calls, and why (asserted, so a change shows).
KNOWN_FAILURES = {
    # A hand-made fixture whose first and last lines are invalid JSON (a closing brace
    # is missing): a chunk that cannot be read fails the stream.
    "vercel-ai/openai__parallel-tool-call-wrapper.1.chunks.txt": "bad_chunk",
}


def recordings() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    found = []
    for path in sorted(CORPUS.rglob("*")):
        if not path.is_file() or path.suffix == ".md":
            continue
        if path.suffix == ".txtar" and b"-- streaming --\n" not in path.read_bytes():
            continue
        found.append(path)
    return found


RECORDINGS = recordings()
needs_corpus = pytest.mark.skipif(not RECORDINGS, reason=f"no corpus at {CORPUS}")


def key(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix()


def summary(events: list[Any]) -> tuple[str, list[tuple[str, str, Any]], list[str]]:
    calls: list[tuple[str, str, Any]] = []
    failures = []
    for e in events:
        if isinstance(e, ToolCallReady):
            calls.append(("ready", e.name, e.arguments))
        elif isinstance(e, ToolCallRejected):
            calls.append(("rejected", e.name, e.reason.value))
        elif isinstance(e, StreamFailed):
            failures.append(e.code or "")
    last = events[-1]
    assert isinstance(last, Done)
    assert sum(isinstance(e, Done) for e in events) == 1
    return last.stop_reason.value, calls, failures


@needs_corpus
@pytest.mark.parametrize("path", RECORDINGS, ids=[key(p) for p in RECORDINGS])
def test_recording_yields_its_tool_calls(path: Path) -> None:
    stop, calls, failures = summary(list(iter_events(path)))
    assert (stop, calls) == EXPECTED[key(path)]
    if key(path) in KNOWN_FAILURES:
        assert failures == [KNOWN_FAILURES[key(path)]]
    elif stop != "error":
        assert failures == []


@needs_corpus
@pytest.mark.parametrize("path", RECORDINGS, ids=[key(p) for p in RECORDINGS])
def test_recording_is_chunking_invariant(path: Path) -> None:
    pieces = load_recording(path.read_bytes(), name=path.name)
    data = pieces[0] if len(pieces) == 1 and isinstance(pieces[0], bytes) else None
    if data is None:
        pytest.skip("not a byte stream (a recorded HTTP error)")

    def replay(size: int) -> list[dict[str, Any]]:
        core = ToolCallStream()
        events = []
        for i in range(0, len(data), size):
            events.extend(core.feed(data[i : i + size]))
        events.extend(core.finish())
        return [e.to_dict() for e in events]

    whole = replay(len(data) or 1)
    assert replay(13) == whole
    if len(data) <= 16_000:
        assert replay(1) == whole


@needs_corpus
def test_follow_up_streams_in_txtar_files_replay() -> None:
    # Some txtar files hold a second stream (after the tool result) as streaming/tool-call.
    seen = 0
    for path in RECORDINGS:
        text = path.read_bytes()
        for match in re.finditer(rb"^-- (streaming/[^ ]+) --\n", text, flags=re.M):
            body = text[match.end() :]
            end = body.find(b"\n-- ")
            stop, _, failures = summary(list(iter_events(body[: end + 1] if end >= 0 else body)))
            assert failures == [], (key(path), match.group(1))
            assert stop in ("stop", "tool_calls"), (key(path), stop)
            seen += 1
    assert seen >= 5


@needs_corpus
def test_every_recording_is_expected() -> None:
    assert sorted(EXPECTED) == sorted(key(p) for p in RECORDINGS)
    assert set(KNOWN_FAILURES) <= set(EXPECTED)
