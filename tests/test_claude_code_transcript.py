"""MCP tool schemas read back from Claude Code's session transcript (the undocumented
``api-request-shape`` record, as Claude Code 2.1.332 writes it), and the hook using them.
The end-to-end check in the real binary is tests/e2e/test_e2e_claude_code.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamrepair.integrations import HookSettings, claude_code_hook
from streamrepair.integrations import transcript as tr

ECHO = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "count": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["path"],
    "additionalProperties": False,
}


def shape(*tools: tuple[str, Any]) -> dict[str, Any]:
    return {
        "type": "api-request-shape",
        "sessionId": "s",
        "shapeHash": "h",
        "version": "2.1.332",
        "shape": {
            "system": [],
            "tools": [{"name": n, "description": "", "input_schema": s} for n, s in tools],
        },
    }


def assistant(tool_use_id: str, name: str) -> dict[str, Any]:
    return {
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tool_use_id, "name": name, "input": {}}],
        },
    }


def write(path: Path, *records: Any) -> str:
    lines = [r if isinstance(r, str) else json.dumps(r, separators=(",", ":")) for r in records]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def payload(transcript: str, tool_input: Any, tool_use_id: str = "toolu_2") -> dict[str, Any]:
    return {
        "session_id": "s",
        "transcript_path": transcript,
        "cwd": "/home/u/proj",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "mcp__echo__echo",
        "tool_input": tool_input,
        "tool_use_id": tool_use_id,
        "mcp_server": {"name": "echo", "source": "project"},
    }


# ------------------------------------------------------------------ the reader


def test_the_record_before_the_calls_own_message_is_used(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.jsonl",
        {"type": "user", "message": {"role": "user", "content": "go"}},
        shape(("Read", {"type": "object"})),
        assistant("toolu_1", "ToolSearch"),
        shape(("Read", {"type": "object"}), ("mcp__echo__echo", ECHO)),
        assistant("toolu_2", "mcp__echo__echo"),
        shape(("mcp__echo__echo", {"type": "object", "title": "later"})),
    )
    assert tr.request_tool_schemas(path, "toolu_2", wait=0) == {
        "Read": {"type": "object"},
        "mcp__echo__echo": ECHO,
    }
    assert tr.request_tool_schemas(path, "toolu_1", wait=0) == {"Read": {"type": "object"}}


def test_it_waits_for_the_call_to_reach_the_transcript(tmp_path: Path) -> None:
    # Claude Code writes the transcript asynchronously (measured: up to ~50 ms late).
    target = tmp_path / "t.jsonl"
    write(target, shape(("mcp__echo__echo", {"type": "object"})))
    now = [0.0]
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds
        if len(sleeps) == 3:
            write(target, shape(("mcp__echo__echo", ECHO)), assistant("toolu_9", "x"))

    found = tr.request_tool_schemas(
        str(target), "toolu_9", wait=1.0, clock=lambda: now[0], sleep=sleep
    )
    assert found == {"mcp__echo__echo": ECHO}
    assert sleeps == [tr.POLL_SECONDS] * 3


def test_a_call_that_never_arrives_costs_at_most_the_wait(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", shape(("a", {"type": "object"})))
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    found = tr.request_tool_schemas(path, "toolu_x", wait=0.1, clock=lambda: now[0], sleep=sleep)
    assert found == {"a": {"type": "object"}}  # the last record there is
    assert now[0] == pytest.approx(0.1, abs=tr.POLL_SECONDS)


@pytest.mark.parametrize(
    "lines",
    [
        [],
        ["not json", '{"type": "api-request-shape"'],
        [{"type": "api-request-shape", "shape": None}],
        [{"type": "api-request-shape", "shape": {"tools": "x"}}],
        [json.dumps({"type": "user", "message": "about the api-request-shape record"})],
    ],
)
def test_transcripts_without_a_usable_record_give_none(tmp_path: Path, lines: list[Any]) -> None:
    path = write(tmp_path / "t.jsonl", *lines, assistant("toolu_2", "x"))
    assert tr.request_tool_schemas(path, "toolu_2", wait=0) is None


def test_odd_tool_entries_are_skipped_and_a_mention_is_not_a_record(tmp_path: Path) -> None:
    record = shape(("good", ECHO))
    record["shape"]["tools"] += [None, {"name": 3}, {"name": "no_schema"}, {"input_schema": {}}]
    mention = json.dumps({"type": "user", "message": 'say "api-request-shape"'})
    path = write(tmp_path / "t.jsonl", record, mention, assistant("toolu_2", "good"))
    assert tr.request_tool_schemas(path, "toolu_2", wait=0) == {"good": ECHO}


def test_missing_relative_or_unreadable_paths_give_none(tmp_path: Path) -> None:
    assert tr.request_tool_schemas("", "toolu_2", wait=0) is None
    assert tr.request_tool_schemas("t.jsonl", "toolu_2", wait=0) is None
    assert tr.request_tool_schemas(str(tmp_path / "missing"), "toolu_2", wait=0) is None
    assert tr.request_tool_schemas(str(tmp_path), "toolu_2", wait=0) is None  # a directory


def test_only_the_tail_of_a_large_transcript_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tr, "MAX_TRANSCRIPT_BYTES", 4096)
    filler = {"type": "progress", "text": "x" * 1000}
    early = write(
        tmp_path / "early.jsonl",
        shape(("mcp__echo__echo", ECHO)),
        *[filler] * 8,
        assistant("toolu_2", "mcp__echo__echo"),
    )
    assert tr.request_tool_schemas(early, "toolu_2", wait=0) is None  # beyond the tail
    late = write(
        tmp_path / "late.jsonl",
        *[filler] * 8,
        shape(("mcp__echo__echo", ECHO)),
        assistant("toolu_2", "mcp__echo__echo"),
    )
    assert tr.request_tool_schemas(late, "toolu_2", wait=0) == {"mcp__echo__echo": ECHO}


# ------------------------------------------------------------------ the hook


def answer(p: dict[str, Any], settings: HookSettings | None = None) -> dict[str, Any]:
    result = claude_code_hook(p, settings or HookSettings(environ={}))
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def test_the_hook_repairs_an_mcp_call_against_the_schema_the_model_was_sent(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "t.jsonl", shape(("mcp__echo__echo", ECHO)), assistant("toolu_2", "m"))
    sent = {"path": "/home/u/proj/[notes.md](http://notes.md)", "count": None}
    spec = answer(payload(path, sent))["hookSpecificOutput"]
    assert spec["updatedInput"] == {"path": "/home/u/proj/notes.md"}
    assert "drop_null at $.count" in spec["additionalContext"]
    assert "permissionDecision" not in spec
    still_bad = answer(payload(path, {"filePath": "/x"}))["hookSpecificOutput"]
    assert still_bad["permissionDecision"] == "deny"
    assert "$.path: required property is missing" in still_bad["permissionDecisionReason"]


def test_without_the_record_only_the_schemaless_rules_apply(tmp_path: Path) -> None:
    # The default in Claude Code: a deferred MCP tool called directly was never sent.
    path = write(tmp_path / "t.jsonl", shape(("Read", {})), assistant("toolu_2", "m"))
    sent = {"path": "/home/u/proj/[notes.md](http://notes.md)", "count": None}
    spec = answer(payload(path, sent))["hookSpecificOutput"]
    assert spec["updatedInput"] == {"path": "/home/u/proj/notes.md", "count": None}


def test_user_schemas_come_first_and_the_transcript_can_be_left_alone(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", shape(("mcp__echo__echo", ECHO)), assistant("toolu_2", "m"))
    mine = {"type": "object", "properties": {"count": {"type": ["integer", "null"]}}}
    settings = HookSettings(schemas={"mcp__echo__echo": mine}, environ={})
    assert answer(payload(path, {"path": "/a", "count": None}), settings) == {}
    off = HookSettings(transcript_schemas=False, environ={})
    assert answer(payload(path, {"path": "/a", "count": None}), off) == {}
    assert (
        "updatedInput" in answer(payload(path, {"path": "/a", "count": None}))["hookSpecificOutput"]
    )


def test_built_in_tools_never_read_the_transcript(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.jsonl",
        shape(("Read", {"type": "object", "properties": {"limit": {"type": "string"}}})),
        assistant("toolu_2", "Read"),
    )
    p = payload(path, {"file_path": "/home/u/proj/a", "limit": 3}) | {"tool_name": "Read"}
    assert answer(p) == {}  # the built-in schema, not the transcript's, decides
