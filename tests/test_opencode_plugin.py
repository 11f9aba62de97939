"""The OpenCode plugin under Node with a fake OpenCode host that calls its hooks, and the
helper's JSON-lines core (``streamrepair serve opencode``)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _hook_support import cli_env, run_cli
from streamrepair.cli.integrations import serve_lines
from streamrepair.integrations import HookSettings, OpenCodeHelper, plugin_source
from streamrepair.integrations.opencode import MAX_LEARNT_SCHEMAS, MAX_SESSIONS
from streamrepair.telemetry import TelemetryLog

NODE = shutil.which("node")

# A fake OpenCode host: loads the plugin like OpenCode does (a module exporting a plugin
# function), then drives its hooks with the call sequence OpenCode uses. Each scenario
# prints one JSON line of what it saw.
HOST = textwrap.dedent(
    """
    import { pathToFileURL } from "node:url"
    const [pluginPath, scenario] = process.argv.slice(2)
    const mod = await import(pathToFileURL(pluginPath).href)
    const plugins = Object.values(mod).filter((v) => typeof v === "function")
    if (plugins.length !== 1) throw new Error("expected one exported plugin")
    // client.tool.list as OpenCode 1.18.33 answers it: {data: [{id, description, parameters}]}
    const listed = []
    const client = {
      tool: {
        list: async (request) => {
          listed.push(request)
          if (process.env.SR_TOOL_LIST === "hang") return new Promise(() => {})
          return { data: [{ id: "counter", description: "", parameters: { type: "object", properties: { n: { type: "integer" } } } }] }
        },
      },
    }
    const hooks = await plugins[0]({ project: {}, client, $: null, directory: ".", worktree: "." })

    async function call(tool, args, callID, output = "tool output", mcp = false) {
      const outputArgs = { args }
      const before = outputArgs.args
      let error = null
      try {
        await hooks["tool.execute.before"]({ tool, sessionID: "ses_1", callID }, outputArgs)
      } catch (e) {
        error = e.message
      }
      // an MCP tool's result is the MCP content, with no output field
      const result = mcp ? { content: [{ type: "text", text: output }] } : { title: tool, output, metadata: {} }
      if (error === null) {
        await hooks["tool.execute.after"]({ tool, sessionID: "ses_1", callID, args: outputArgs.args }, result)
      }
      return { args: outputArgs.args, same: outputArgs.args === before, error, output: mcp ? result.content : result.output }
    }

    const out = {}
    const started = Date.now()
    if (scenario === "main") {
      await hooks["chat.params"]({ sessionID: "ses_1", model: { id: "deepseek-chat", providerID: "deepseek" }, provider: {} }, {})
      await hooks["chat.params"]({ sessionID: "ses_1", model: { id: "deepseek-chat", providerID: "deepseek" }, provider: {} }, {})
      out.listed = listed
      await hooks["tool.definition"]({ toolID: "mcp_tags" }, { description: "", parameters: { type: "object", properties: { tags: { type: "array" } } } })
      await hooks["tool.definition"]({ toolID: "zod_tool" }, { description: "", parameters: { _def: {}, type: "object" } })
      out.read = await call("read", { filePath: "/p/[a.md](http://a.md)", limit: null }, "c1")
      out.edit = await call("edit", { file_path: "/p/a", old_string: "x", new_string: "y" }, "c2")
      out.clean = await call("bash", { command: "ls", description: "list" }, "c3")
      out.reject = await call("write", { content: 5 }, "c4")
      out.mcp = await call("mcp_tags", { tags: "one" }, "c5")
      out.listedTool = await call("counter", { n: "3" }, "c8")
      out.mcpResult = await call("fs_read", { path: "/p/[c.md](http://c.md)" }, "c9", "file text", true)
      out.again = await call("read", { filePath: "/p/b", limit: null }, "c6")
      const big = await call("write", { filePath: "/p/[b.txt](http://b.txt)", content: "\u00e9x".repeat(150000) }, "c7")
      out.big = { filePath: big.args.filePath, length: big.args.content.length, same: big.same }
    } else if (scenario === "restart") {
      out.first = await call("read", { filePath: "/p/a", limit: null }, "r1")
      const fs = await import("node:fs")
      const pids = fs.readFileSync(process.env.SR_STARTS, "utf8").trim().split("\\n")
      process.kill(Number(pids[pids.length - 1]), "SIGKILL")
      await new Promise((r) => setTimeout(r, 300))
      out.second = await call("read", { filePath: "/p/b", limit: null }, "r2")
    } else if (scenario === "hanging-list") {
      await hooks["chat.params"]({ sessionID: "ses_1", model: { id: "m", providerID: "p" }, provider: {} }, {})
      out.read = await call("read", { filePath: "/p/[a.md](http://a.md)" }, "h1")
    } else if (scenario === "unavailable") {
      out.calls = []
      for (let i = 0; i < 6; i++) out.calls.push(await call("read", { filePath: "/p/a", limit: null }, "u" + i))
    }
    out.elapsed = Date.now() - started
    console.log(JSON.stringify(out))
    process.exit(0)
    """
)

# Starts the real helper, noting each start's pid (to count processes and kill one).
WRAPPER = textwrap.dedent(
    """
    import os, sys
    with open(os.environ["SR_STARTS"], "a") as f:
        f.write(f"{os.getpid()}\\n")
    from streamrepair.cli import main
    sys.exit(main(["serve", "opencode"]))
    """
)


def run_host(tmp_path: Path, scenario: str, command: list[str], **env: str) -> dict[str, Any]:
    if NODE is None:
        pytest.skip("node is not installed")
    plugin = tmp_path / "plugins" / "streamrepair.js"
    plugin.parent.mkdir(exist_ok=True)
    plugin.write_text(plugin_source(command))
    host = tmp_path / "host.mjs"
    host.write_text(HOST)
    environment = cli_env(tmp_path, SR_STARTS=str(tmp_path / "starts.txt"), **env)
    done = subprocess.run(
        [NODE, str(host), str(plugin), scenario],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    result["stderr"] = done.stderr
    return result


def starts(tmp_path: Path) -> int:
    path = tmp_path / "starts.txt"
    return len(path.read_text().split()) if path.exists() else 0


@pytest.fixture
def helper_command(tmp_path: Path) -> list[str]:
    wrapper = tmp_path / "helper.py"
    wrapper.write_text(WRAPPER)
    return [sys.executable, str(wrapper)]


def test_plugin_repairs_rejects_and_notes_through_one_helper(
    tmp_path: Path, helper_command: list[str]
) -> None:
    out = run_host(tmp_path, "main", helper_command)
    read = out["read"]
    assert read["args"] == {"filePath": "/p/a.md"}
    assert read["same"] is True  # rewritten in place
    assert read["error"] is None
    assert read["output"].startswith("[streamrepair: arguments of read were repaired]\n")
    assert "drop_null at $.limit" in read["output"]
    assert read["output"].endswith("\n\ntool output")
    assert out["edit"]["args"] == {"filePath": "/p/a", "oldString": "x", "newString": "y"}
    assert out["clean"] == {
        "args": {"command": "ls", "description": "list"},
        "same": True,
        "error": None,
        "output": "tool output",
    }
    reject = out["reject"]
    assert reject["error"].startswith('Invalid input for tool "write". Please correct and retry:')
    assert "$.filePath: required property is missing" in reject["error"]
    assert out["mcp"]["args"] == {"tags": ["one"]}  # schema learnt from tool.definition
    # the schemas OpenCode reports (client.tool.list), asked for once per model
    assert out["listed"] == [{"query": {"provider": "deepseek", "model": "deepseek-chat"}}]
    assert out["listedTool"]["args"] == {"n": 3}
    # an MCP result has no text output: the note becomes its first content part
    mcp = out["mcpResult"]
    assert mcp["args"] == {"path": "/p/c.md"}
    assert mcp["output"][0]["type"] == "text"
    assert mcp["output"][0]["text"].startswith("[streamrepair: arguments of fs_read were repaired]")
    assert mcp["output"][1:] == [{"type": "text", "text": "file text"}]
    # The same lesson is not repeated in the session.
    assert out["again"]["args"] == {"filePath": "/p/b"}
    assert out["again"]["output"] == "tool output"
    # A reply larger than a pipe buffer arrives in many pieces and is reassembled.
    assert out["big"] == {"filePath": "/p/b.txt", "length": 300_000, "same": True}
    assert starts(tmp_path) == 1  # one helper for every call
    text = (tmp_path / "state/streamrepair/telemetry.jsonl").read_text()
    log = [json.loads(x) for x in text.splitlines()]
    calls = [r for r in log if r["event"] == "call"]
    assert [r["outcome"] for r in calls] == [
        "repaired",
        "repaired",
        "clean",
        "rejected",
        "repaired",
        "repaired",
        "repaired",
        "repaired",
        "repaired",
    ]
    assert {r["model"] for r in log} == {"deepseek/deepseek-chat"}
    assert sum(r["event"] == "result" for r in log) == 8


def test_a_tool_list_that_never_answers_delays_only_the_first_step(
    tmp_path: Path, helper_command: list[str]
) -> None:
    out = run_host(tmp_path, "hanging-list", helper_command, SR_TOOL_LIST="hang")
    assert out["read"]["args"] == {"filePath": "/p/a.md"}  # the built-in schema still works
    assert out["elapsed"] >= 2000  # it waited for the list, then went on without it


def test_plugin_restarts_a_helper_that_died(tmp_path: Path, helper_command: list[str]) -> None:
    out = run_host(tmp_path, "restart", helper_command)
    assert out["first"]["args"] == {"filePath": "/p/a"}
    assert out["second"]["args"] == {"filePath": "/p/b"}
    assert starts(tmp_path) == 2
    assert "helper exited" in out["stderr"]


def test_plugin_passes_through_when_the_helper_cannot_start(tmp_path: Path) -> None:
    out = run_host(tmp_path, "unavailable", [str(tmp_path / "no-such-python")])
    for call in out["calls"]:
        assert call == {
            "args": {"filePath": "/p/a", "limit": None},
            "same": True,
            "error": None,
            "output": "tool output",
        }
    assert "passing tool calls through from now on" in out["stderr"]
    assert out["stderr"].count("[streamrepair]") == 4  # 1 start + 3 restarts, then quiet


def test_plugin_passes_through_when_the_helper_is_too_slow(tmp_path: Path) -> None:
    silent = [sys.executable, "-c", "import sys; sys.stdin.read()"]  # never answers
    out = run_host(
        tmp_path,
        "unavailable",
        silent,
        STREAMREPAIR_OPENCODE_STARTUP_MS="200",
        STREAMREPAIR_OPENCODE_TIMEOUT_MS="200",
    )
    assert all(c["args"] == {"filePath": "/p/a", "limit": None} for c in out["calls"])
    assert out["elapsed"] < 20_000
    # A helper that stops answering is replaced after three silent requests.
    assert "helper exited (SIGTERM)" in out["stderr"]


def test_installed_plugin_names_the_helper_command(tmp_path: Path) -> None:
    text = plugin_source(["/opt/py/bin/python3", "-m", "streamrepair.cli", "serve", "opencode"])
    assert (
        'const COMMAND = ["/opt/py/bin/python3", "-m", "streamrepair.cli", "serve", "opencode"]'
        in text
    )
    assert "streamrepair-plugin:" in text
    assert 'const COMMAND = ["streamrepair", "serve", "opencode"]' in plugin_source()


# ------------------------------------------------------------------ the helper core


def helper(**kwargs: Any) -> OpenCodeHelper:
    return OpenCodeHelper(HookSettings(environ={}, **kwargs))


def test_helper_answers_every_op() -> None:
    h = helper()
    assert h.handle({"id": 1, "op": "hello"})["ok"] is True
    assert h.handle({"id": 2, "op": "model", "sessionID": "s", "model": "xai/grok-4"}) == {
        "id": 2,
        "ok": True,
    }
    reply = h.handle(
        {"id": 3, "op": "before", "tool": "read", "sessionID": "s", "args": {"filePath": "/a"}}
    )
    assert reply == {"id": 3, "action": "pass"}
    assert h.handle({"id": 4, "op": "after", "tool": "read", "sessionID": "s"}) == {
        "id": 4,
        "ok": True,
    }


@pytest.mark.parametrize(
    "request_",
    [
        None,
        [1],
        {"id": 1},
        {"id": 1, "op": "nope"},
        {"id": 1, "op": 5},
        {"id": 1, "op": "schema", "tool": "t"},
        {"id": 1, "op": "schema", "schema": {}},
    ],
)
def test_helper_answers_bad_requests_with_an_error(request_: Any) -> None:
    reply = helper().handle(request_)
    assert "error" in reply
    assert "action" not in reply


def test_helper_before_with_bad_args_passes() -> None:
    reply = helper().handle({"id": 1, "op": "before", "tool": "read", "args": [1, 2]})
    assert reply == {"id": 1, "action": "pass"}


def test_helper_profiles_follow_the_session_model() -> None:
    h = helper(profiles="auto")
    request = {
        "op": "before",
        "tool": "bash",
        "sessionID": "s",
        "args": {"command": "a &amp;&amp; b"},
    }
    assert h.handle({"id": 1, **request})["action"] == "pass"
    h.handle({"id": 2, "op": "model", "sessionID": "s", "model": "xai/grok-4"})
    reply = h.handle({"id": 3, **request})
    assert reply["args"] == {"command": "a && b"}


def test_helper_memory_is_bounded() -> None:
    h = helper()
    for i in range(MAX_LEARNT_SCHEMAS):
        assert h.handle({"id": i, "op": "schema", "tool": f"t{i}", "schema": {}})["ok"]
    full = h.handle({"id": 0, "op": "schema", "tool": "extra", "schema": {}})
    assert full["ok"] is False
    assert h.handle({"id": 0, "op": "schema", "tool": "t1", "schema": {}})["ok"] is True
    for i in range(MAX_SESSIONS + 10):
        h.handle({"id": i, "op": "model", "sessionID": f"s{i}", "model": "m"})
    assert len(h._sessions) == MAX_SESSIONS


def test_serve_lines_skips_notifications_and_survives_garbage(tmp_path: Path) -> None:
    log = TelemetryLog(tmp_path / "t.jsonl")
    source = io.BytesIO(
        b'{"id": 1, "op": "hello"}\n'
        b"\n"
        b"not json\n"
        b'{"id": null, "op": "after", "tool": "read"}\n'
        b'{"id": 2, "op": "before", "tool": "read", "args": {"filePath": "/a", "limit": null}}\n'
    )
    out = io.BytesIO()
    assert serve_lines(source, out, OpenCodeHelper(HookSettings(environ={}), telemetry=log)) == 4
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["id"] for r in replies] == [1, None, 2]
    assert replies[1]["error"] == "request is not JSON"
    assert replies[2]["args"] == {"filePath": "/a"}
    assert len((tmp_path / "t.jsonl").read_text().splitlines()) == 2


def test_serve_lines_rejects_overlong_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    import streamrepair.cli.integrations as cli

    monkeypatch.setattr(cli, "MAX_REQUEST_BYTES", 64)
    source = io.BytesIO(
        b'{"id": 1, "op": "hello", "pad": "' + b"x" * 200 + b'"}\n{"id": 2, "op": "hello"}\n'
    )
    out = io.BytesIO()
    serve_lines(source, out, helper())
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert replies[0] == {"id": None, "error": "request longer than 64 bytes"}
    assert replies[1]["id"] == 2


def test_serve_subprocess_round_trip(tmp_path: Path) -> None:
    requests = (
        b'{"id": 7, "op": "before", "tool": "glob", "args": {"pattern": "*.py", "path": null}}\n'
    )
    done = run_cli("serve", "opencode", stdin=requests, env=cli_env(tmp_path))
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["id"] == 7
    assert reply["args"] == {"pattern": "*.py"}


class Trickle(io.RawIOBase):
    """A pipe that delivers its bytes in the given piece sizes."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self.data, self.sizes, self.at = data, sizes, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = self.sizes.pop(0) if self.sizes else len(buffer)
        piece = self.data[self.at : self.at + min(size, len(buffer))]
        buffer[: len(piece)] = piece
        self.at += len(piece)
        return len(piece)


REQUESTS = (
    b'{"id": 1, "op": "before", "tool": "read", "args": {"filePath": "/a", "limit": null}}\n'
    b'{"id": 2, "op": "before", "tool": "grep", "args": {"pattern": "\\u00e9", "path": null}}\n'
    b"garbage\n"
    b'{"id": 3, "op": "hello"}\n'
)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=40), max_size=30))
def test_serve_answers_do_not_depend_on_how_the_pipe_splits_requests(sizes: list[int]) -> None:
    whole = io.BytesIO()
    serve_lines(io.BytesIO(REQUESTS), whole, helper())
    split = io.BytesIO()
    serve_lines(io.BufferedReader(Trickle(REQUESTS, list(sizes)), buffer_size=8), split, helper())
    assert split.getvalue() == whole.getvalue()
    assert len(whole.getvalue().splitlines()) == 4


def test_profile_lessons_are_not_repeated_in_a_session() -> None:
    h = helper(profiles="grok")
    before = {
        "op": "before",
        "tool": "bash",
        "sessionID": "s",
        "args": {"command": "a &amp;&amp; b"},
    }
    first = h.handle({"id": 1, **before})
    assert "html_entities_in_commands at $.command" in first["notes"]
    second = h.handle({"id": 2, **before})
    assert second["args"] == {"command": "a && b"}
    assert second["notes"] == ""
    other = h.handle({"id": 3, **before, "sessionID": "t"})
    assert other["notes"] == first["notes"]
