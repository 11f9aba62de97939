"""The Claude Code harness itself, without Claude Code: the scripted server speaks the
Anthropic Messages stream grammar, picks turns deterministically, and the stdio MCP
server answers the calls the end-to-end tests rely on."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from ccharness import FakeAnthropic, ToolCall, Turn, split_text, text_turn, tool_turn

HERE = Path(__file__).resolve().parent


def _post(url: str, body: Any, path: str = "/v1/messages?beta=true") -> tuple[int, str, bytes]:
    request = urllib.request.Request(
        url + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "x-api-key": "sk-test"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("content-type", ""), response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.headers.get("content-type", ""), error.read()


def _sse(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = []
    for chunk in data.decode().split("\n\n"):
        if chunk.strip():
            lines = dict(line.split(": ", 1) for line in chunk.splitlines())
            events.append((lines["event"], json.loads(lines["data"])))
    return events


def _body(assistant_turns: int = 0, *, stream: bool = True, tools: bool = True) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for _ in range(assistant_turns):
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "x"}]})
        messages.append({"role": "user", "content": "more"})
    body: dict[str, Any] = {"model": "m", "max_tokens": 10, "messages": messages}
    if stream:
        body["stream"] = True
    if tools:
        body["tools"] = [{"name": "Read", "input_schema": {"type": "object"}}]
    return body


def test_split_text_keeps_every_character() -> None:
    assert split_text("abcdefg", 3) == ["abc", "de", "fg"]
    assert split_text("ab", 5) == ["a", "b"]
    assert split_text("", 3) == [""]


def test_the_stream_follows_the_anthropic_grammar_and_keeps_broken_json() -> None:
    raw = '{"file_path": "/x/[a.md](http://a.md)", "limit": null,}'
    with FakeAnthropic([tool_turn("Read", raw, parts=4, text="Reading.")]) as api:
        status, ctype, data = _post(api.url, _body())
    assert (status, ctype.split(";")[0]) == (200, "text/event-stream")
    events = _sse(data)
    names = [name for name, _ in events]
    assert all(name == payload["type"] for name, payload in events)
    assert names[0] == "message_start"
    assert names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 2
    blocks = [p["content_block"] for n, p in events if n == "content_block_start"]
    assert blocks[0] == {"type": "text", "text": ""}
    assert (blocks[1]["type"], blocks[1]["name"], blocks[1]["input"]) == ("tool_use", "Read", {})
    deltas = [p["delta"] for n, p in events if n == "content_block_delta" and p["index"] == 1]
    assert [d["type"] for d in deltas] == ["input_json_delta"] * 4
    assert "".join(d["partial_json"] for d in deltas) == raw
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_turns_are_chosen_by_the_history_and_side_queries_use_none() -> None:
    turns = [tool_turn("Read", '{"file_path": "a"}'), text_turn("second")]
    with FakeAnthropic(turns) as api:
        _, ctype, first = _post(api.url, _body(0, stream=False))
        _, _, again = _post(api.url, _body(0, stream=False))
        _, _, second = _post(api.url, _body(1, stream=False))
        _, _, later = _post(api.url, _body(5, stream=False))
        _, _, side = _post(api.url, _body(0, stream=False, tools=False))
        assert [r.turn for r in api.messages_requests(main_only=False)] == [0, 0, 1, 5, None]
    assert ctype == "application/json"
    assert json.loads(first)["content"][0]["input"] == {"file_path": "a"}
    assert json.loads(again)["content"][0]["input"] == {"file_path": "a"}  # a retry
    assert json.loads(second)["content"] == [{"type": "text", "text": "second"}]
    assert json.loads(later)["content"][0]["text"] == "done"
    assert json.loads(side)["content"][0]["text"] == "ok"


def test_broken_json_is_sent_verbatim_when_not_streaming() -> None:
    with FakeAnthropic([Turn(tool_calls=(ToolCall("Read", ['{"a": 1,', "}"]),))]) as api:
        _, _, data = _post(api.url, _body(stream=False))
    assert b'"input": {"a": 1,}}' in data


def test_other_endpoints_and_scripted_errors() -> None:
    with FakeAnthropic([Turn(status=529, error_type="overloaded_error", text="busy")]) as api:
        status, _, data = _post(api.url, {"messages": []}, "/v1/messages/count_tokens")
        assert status == 200
        assert json.loads(data)["input_tokens"] >= 1
        status, _, data = _post(api.url, _body())
        assert (status, json.loads(data)["error"]["type"]) == (529, "overloaded_error")
        status, _, data = _post(api.url, {}, "/v2/elsewhere")
        assert (status, json.loads(data)["type"]) == (404, "error")


def test_the_mcp_echo_server_round_trip(tmp_path: Path) -> None:
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "x"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"path": "p", "count": None}},
        },
    ]
    log = tmp_path / "mcp.jsonl"
    done = subprocess.run(
        [sys.executable, str(HERE / "mcp_echo_server.py")],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
        env={"MCP_ECHO_LOG": str(log)},
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3]
    schema = answers[1]["result"]["tools"][0]["inputSchema"]
    assert schema["properties"]["count"]["type"] == "integer"
    assert answers[2]["result"]["content"][0]["text"] == 'ECHO {"count": null, "path": "p"}'
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert {"name": "echo", "arguments": {"path": "p", "count": None}} in calls
