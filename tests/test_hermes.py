"""Hermes: minimal stand-ins shaped like Hermes's ``sanitize_tool_call_arguments`` and
``make_tool_result_message``, wired the three documented ways (the skill's compat API,
``HermesRepairs``, the stream layer), and the examples of docs/integrations/hermes.md."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from streamrepair import ToolCallReady, ToolCallRejected, iter_events
from streamrepair.compat.tool_repair import deduplicate_repair_notes, repair_function_args
from streamrepair.integrations.hermes import MAX_REMEMBERED_CALLS, HermesRepairs
from streamrepair.schema.tools import tool_schemas
from streamrepair.telemetry import TelemetryLog

ROOT = Path(__file__).resolve().parent.parent
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "limit": {"type": "integer"},
                    "files": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["path"],
            },
        },
    }
]
SCHEMAS = tool_schemas(TOOLS)


def assistant(*arguments: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": "read_file", "arguments": a},
            }
            for i, a in enumerate(arguments, 1)
        ],
    }


# ------------------------------------------------------------------ A. the compat API


class CompatHermes:
    """Stand-in with the skill's two calls inside Hermes-shaped functions."""

    def __init__(self) -> None:
        self.pending: dict[str, list[str]] = {}

    def sanitize_tool_call_arguments(self, messages: list[dict[str, Any]]) -> int:
        repaired = 0
        for message in messages:
            for call in message.get("tool_calls") or []:
                function = call["function"]
                try:
                    parsed = json.loads(function["arguments"])
                except json.JSONDecodeError:
                    function["arguments"] = "{}"  # Hermes's own handling
                    continue
                fixed, notes = repair_function_args(
                    function["name"], parsed, SCHEMAS[function["name"]]
                )
                if fixed != parsed:
                    function["arguments"] = json.dumps(fixed)
                    repaired += 1
                self.pending[call["id"]] = notes
        return repaired

    def make_tool_result_message(self, call: dict[str, Any], content: str) -> dict[str, Any]:
        notes = self.pending.pop(call["id"], [])
        content = deduplicate_repair_notes(content, notes, call["function"]["name"])
        return {"role": "tool", "tool_call_id": call["id"], "content": content}


def test_compat_wiring_writes_back_only_repaired_calls() -> None:
    hermes = CompatHermes()
    clean = '{"path": "/data/x", "limit": 5}'
    messages = [
        assistant('{"path": "/data/x", "limit": null}', clean, '{"path": "a", "files": "b.txt"}')
    ]
    assert hermes.sanitize_tool_call_arguments(messages) == 2
    first, second, third = messages[0]["tool_calls"]
    assert json.loads(first["function"]["arguments"]) == {"path": "/data/x"}
    assert second["function"]["arguments"] is clean  # untouched, not re-serialized
    assert json.loads(third["function"]["arguments"]) == {"path": "a", "files": ["b.txt"]}
    result = hermes.make_tool_result_message(first, "ok")["content"]
    assert result.startswith("ok\n\n[Hermes repaired: read_file]\n")
    assert "null values removed" in result
    assert hermes.make_tool_result_message(second, "ok")["content"] == "ok"


# ------------------------------------------------------------------ B. HermesRepairs


class NativeHermes:
    def __init__(self, repairs: HermesRepairs) -> None:
        self.repairs = repairs
        self.dispatched: list[str] = []

    def sanitize_tool_call_arguments(self, messages: list[dict[str, Any]]) -> None:
        for message in messages:
            for call in message.get("tool_calls") or []:
                try:
                    json.loads(call["function"]["arguments"])
                except json.JSONDecodeError:
                    continue
                if self.repairs.repair_call(call):
                    self.dispatched.append(call["id"])

    def make_tool_result_message(
        self, call: dict[str, Any], content: str, history: list[Any]
    ) -> dict[str, Any]:
        content = self.repairs.result_content(call["id"], content, history=history)
        return {"role": "tool", "tool_call_id": call["id"], "content": content}


def test_native_wiring_repairs_refuses_and_notes_once_per_conversation(tmp_path: Path) -> None:
    log = tmp_path / "t.jsonl"
    hermes = NativeHermes(HermesRepairs(SCHEMAS, model="glm-4.6", telemetry=TelemetryLog(log)))
    clean = '{"path": "/data/x", "limit": 5}'
    history: list[Any] = [
        assistant('{"path": "/data/x", "limit": null}', clean, '{"limit": "ten"}', "not json")
    ]
    hermes.sanitize_tool_call_arguments(history)
    calls = history[0]["tool_calls"]
    assert hermes.dispatched == ["call_1", "call_2"]
    assert calls[0]["function"]["arguments"] == '{"path": "/data/x"}'
    assert calls[1]["function"]["arguments"] is clean
    assert calls[2]["function"]["arguments"] == '{"limit": "ten"}'  # refused, kept as sent
    first = hermes.make_tool_result_message(calls[0], "contents", history)
    assert "drop_null at $.limit" in first["content"]
    history.append(first)
    assert hermes.make_tool_result_message(calls[1], "contents", history)["content"] == "contents"
    refused = hermes.make_tool_result_message(calls[2], "", history)["content"]
    assert refused.startswith('Invalid input for tool "read_file". Please correct and retry:')
    assert "$.path: required property is missing" in refused
    # The same mistake in a later turn is repaired but not lectured about again.
    later = [assistant('{"path": "/y", "limit": null}')]
    hermes.sanitize_tool_call_arguments(later)
    again = hermes.make_tool_result_message(later[0]["tool_calls"][0], "contents", history)
    assert again["content"] == "contents"
    records = [json.loads(x) for x in log.read_text().splitlines()]
    assert [r["outcome"] for r in records] == ["repaired", "clean", "rejected", "repaired"]
    assert {r["harness"] for r in records} == {"hermes"}
    assert "/data/x" not in log.read_text()


@pytest.mark.parametrize(
    "call",
    [
        {"id": "x"},
        {"id": "x", "function": "read_file"},
        {"id": "x", "function": {"name": 3, "arguments": "{}"}},
        {"id": "x", "function": {"name": "read_file", "arguments": {"path": 1}}},
        {"id": "x", "function": {"name": "read_file", "arguments": "[1, 2]"}},
        {"id": "x", "function": {"name": "read_file", "arguments": "{bad"}},
    ],
)
def test_calls_that_are_not_inspectable_are_left_alone(call: dict[str, Any]) -> None:
    before = copy.deepcopy(call)
    assert HermesRepairs(SCHEMAS).repair_call(call) is True
    assert call == before


def test_memory_is_bounded_and_notes_are_used_once() -> None:
    repairs = HermesRepairs(SCHEMAS)
    for i in range(MAX_REMEMBERED_CALLS + 5):
        call = {
            "id": f"c{i}",
            "function": {"name": "read_file", "arguments": '{"path": "a", "limit": null}'},
        }
        repairs.repair_call(call)
    assert repairs.result_content("c0", "x") == "x"  # forgotten: the oldest went first
    assert "drop_null" in repairs.result_content(f"c{MAX_REMEMBERED_CALLS}", "x")
    assert repairs.result_content(f"c{MAX_REMEMBERED_CALLS}", "x") == "x"  # used once


# ------------------------------------------------------------------ C. the stream layer


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def streamed(index: int, call_id: str, arguments: str) -> dict[str, Any]:
    return chunk(
        {
            "tool_calls": [
                {
                    "index": index,
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "read_file", "arguments": arguments},
                }
            ]
        }
    )


def test_stream_wiring_never_dispatches_a_cut_off_call() -> None:
    repairs = HermesRepairs(SCHEMAS)
    stream = [
        streamed(0, "call_1", '{"path": "a", "files": "b.txt",}'),
        streamed(1, "call_2", '{"path": "c", "limit": 1'),
        chunk({}, "length"),
    ]
    dispatched = []
    for event in iter_events(stream, tools=TOOLS):
        repairs.observe(event)
        if isinstance(event, ToolCallReady):
            dispatched.append((event.call_id, event.arguments))
        else:
            assert not isinstance(event, ToolCallRejected) or event.call_id == "call_2"
    assert dispatched == [("call_1", {"path": "a", "files": ["b.txt"]})]
    assert "wrap_bare_string at $.files" in repairs.result_content("call_1", "ok")
    refusal = repairs.refusal("call_2")
    assert refusal.startswith("Not executed: the arguments were cut off")
    assert repairs.result_content("call_2", "ignored") == refusal
    assert repairs.refusal("call_2") == ""  # answered once
    assert repairs.result_content("call_3", "ok") == "ok"


def test_hermes_doc_examples_run() -> None:
    page = (ROOT / "docs" / "integrations" / "hermes.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert len(blocks) == 2
    for block in blocks:
        exec(compile(block, "docs/integrations/hermes.md", "exec"), {})
