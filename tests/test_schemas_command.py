"""Filling ``--schemas``: the file formats :func:`load_schemas` reads, several files at
once, and ``streamrepair schemas`` (files and stdio MCP servers, asked directly)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from _hook_support import cli_env, run_cli
from streamrepair.integrations import load_schema_files, load_schemas
from streamrepair.integrations.mcp import list_mcp_tools

ECHO_SERVER = Path(__file__).resolve().parent / "e2e" / "mcp_echo_server.py"
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}}


@pytest.mark.parametrize(
    "content",
    [
        {"t": SCHEMA},
        [{"name": "t", "input_schema": SCHEMA}],
        [{"type": "function", "function": {"name": "t", "parameters": SCHEMA}}],
        [{"type": "function", "name": "t", "parameters": SCHEMA}],
        [{"name": "t", "inputSchema": SCHEMA}],  # MCP
        {"tools": [{"name": "t", "inputSchema": SCHEMA}], "nextCursor": None},  # tools/list
        {"model": "m", "messages": [], "tools": [{"name": "t", "input_schema": SCHEMA}]},
    ],
)
def test_every_format_gives_the_same_schemas(tmp_path: Path, content: Any) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(content))
    assert load_schemas(path) == {"t": SCHEMA}


def test_several_files_merge_later_ones_win(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps({"t": {"type": "object"}, "u": SCHEMA}))
    (tmp_path / "b.json").write_text(json.dumps([{"name": "t", "inputSchema": SCHEMA}]))
    spec = f"{tmp_path / 'a.json'}:{tmp_path / 'b.json'}:"
    assert load_schema_files(spec) == {"t": SCHEMA, "u": SCHEMA}
    with pytest.raises(OSError, match="missing"):
        load_schema_files(f"{tmp_path / 'a.json'}:{tmp_path / 'missing.json'}")


@pytest.mark.parametrize("content", ['"text"', "[1]", '{"t": 3}', "{"])
def test_other_content_is_a_clear_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=r"s\.json"):
        load_schemas(path)


# ------------------------------------------------------------------ MCP servers

PAGED = textwrap.dedent(
    """
    import json, sys
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            continue  # a notification, or the answer to the server's own request
        print("not json: a server that logs to stdout", flush=True)
        print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message"}), flush=True)
        print(json.dumps({"jsonrpc": "2.0", "id": 99, "method": "roots/list"}), flush=True)
        if msg["method"] == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {}}
        elif msg["params"].get("cursor") is None:
            result = {"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "nextCursor": "p2"}
        else:
            result = {"tools": [{"name": "b", "inputSchema": {"type": "object"}}]}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    """
)


def server(tmp_path: Path, source: str) -> list[str]:
    path = tmp_path / "server.py"
    path.write_text(source)
    return [sys.executable, str(path)]


def test_the_tools_of_an_mcp_server_page_by_page(tmp_path: Path) -> None:
    tools = list_mcp_tools(server(tmp_path, PAGED), timeout=30)
    assert [t["name"] for t in tools] == ["a", "b"]


def test_the_echo_server_used_by_the_end_to_end_tests() -> None:
    (tool,) = list_mcp_tools([sys.executable, str(ECHO_SERVER)], timeout=30)
    assert tool["name"] == "echo"
    assert tool["inputSchema"]["required"] == ["path"]


@pytest.mark.parametrize(
    ("source", "error", "match"),
    [
        ("import time; time.sleep(30)", TimeoutError, "did not answer initialize"),
        ("pass", ValueError, "exited before answering initialize"),
        (
            "import json, sys\nfor line in sys.stdin:\n    m = json.loads(line)\n"
            "    print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'error': {'code': 1}}), flush=True)\n",
            ValueError,
            "answered initialize with",
        ),
    ],
)
def test_a_server_that_does_not_answer_properly_is_a_clear_error(
    tmp_path: Path, source: str, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        list_mcp_tools(server(tmp_path, source), timeout=1.5)


def test_a_missing_server_command_is_an_os_error() -> None:
    with pytest.raises(OSError, match="mcp-server"):
        list_mcp_tools(["/nonexistent/mcp-server"])
    with pytest.raises(ValueError, match="no MCP server command"):
        list_mcp_tools([])


# ------------------------------------------------------------------ the command


def test_the_command_merges_files_and_servers_for_the_hooks(tmp_path: Path) -> None:
    (tmp_path / "body.json").write_text(
        json.dumps({"tools": [{"name": "t", "input_schema": SCHEMA}]})
    )
    env = cli_env(tmp_path)
    done = run_cli(
        "schemas",
        str(tmp_path / "body.json"),
        "--mcp",
        f"{sys.executable} {ECHO_SERVER}",
        "--prefix",
        "mcp__echo__",
        env=env,
    )
    assert done.returncode == 0, done.stderr
    merged = json.loads(done.stdout)
    assert sorted(merged) == ["mcp__echo__echo", "t"]
    out = tmp_path / "schemas.json"
    out.write_bytes(done.stdout)
    # the hook reads it: a null in the MCP tool's optional integer is dropped
    payload = {
        "hook_event_name": "PreToolUse",
        "tool_name": "mcp__echo__echo",
        "tool_input": {"path": "/p/a", "count": None},
        "tool_use_id": "toolu_1",
    }
    done = run_cli(
        "hook",
        "claude-code",
        "--schemas",
        str(out),
        "--telemetry",
        "off",
        stdin=json.dumps(payload).encode(),
        env=env,
    )
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["updatedInput"] == {"path": "/p/a"}


def test_the_command_fails_clearly(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    done = run_cli("schemas", env=env)
    assert (done.returncode, done.stdout) == (1, b"")
    assert b"no tools found" in done.stderr
    done = run_cli("schemas", str(tmp_path / "missing.json"), env=env)
    assert done.returncode == 1
    assert b"streamrepair schemas:" in done.stderr
