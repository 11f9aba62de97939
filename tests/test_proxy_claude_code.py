"""The real Claude Code binary through the proxy, end to end (opt-in).

Claude Code checks a built-in tool's input (JSON parse, then its own schema) before any
hook runs, so these three calls end as ``InputValidationError`` or a wrong file without
the proxy (measured with Claude Code 2.1.332, the control run below), and run with the
repaired input through it:

1. ``Read`` with ``"limit": null`` (the schema wants a number);
2. ``Read`` whose input JSON has a trailing comma;
3. ``Write`` to a markdown-linked path, ``<project>/[out.md](http://out.md)``.

Deferred MCP tools: Claude Code leaves them out of the request's ``tools`` and runs
them when the model calls them directly. Through the proxy a call to one is sent with its
syntax repaired (a trailing comma, which Claude Code would refuse) and reaches a stdio MCP
server; with the server's schemas given (``ProxyConfig.schemas``, ``serve --schemas``) it
also gets the schema rules (a link and a null); without the proxy the broken one never
reaches the server.

With progressive arguments (``stream_arguments``), the same binary: a ``tool_use`` block
that was never closed is dropped in every ending, a closed one is run (the ground for
leaving a rejected streamed call open); a long ``Write`` reaches it piece by piece and
runs whole; one cut off after half its content went out is never run, and the notice
reaches the model.

The scripted upstream is the Claude Code harness's ``FakeAnthropic`` (module
``ccharness``: the tests folder, or the folder named by ``$STREAMREPAIR_CCHARNESS_DIR``);
the binary is the npm package ``@anthropic-ai/claude-code-linux-x64`` (``$CLAUDE_BINARY``
or a ``node_modules`` the harness finds). Opt in with ``STREAMREPAIR_CLAUDE_CODE=1``
(``.ci/run`` sets it when node is present); otherwise, or when the harness or the
binary is missing, the test is skipped with the reason.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from _proxy_support import serving
from streamrepair.proxy import ProxyConfig, create_app

pytestmark = pytest.mark.claude_code
OPT_IN = "STREAMREPAIR_CLAUDE_CODE"


def _harness() -> ModuleType:
    if os.environ.get(OPT_IN) != "1":
        pytest.skip(f"the Claude Code end-to-end test is opt-in: set {OPT_IN}=1 (needs node)")
    extra = os.environ.get("STREAMREPAIR_CCHARNESS_DIR")
    if extra and extra not in sys.path:
        sys.path.insert(0, extra)
    try:
        harness = importlib.import_module("ccharness")
    except ImportError:
        pytest.skip(
            "the Claude Code harness (ccharness.py) is not in tests/ and "
            "$STREAMREPAIR_CCHARNESS_DIR does not name a folder holding it"
        )
    reason = harness.claude_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    return harness


def _script(harness: ModuleType, project: Path) -> list[object]:
    notes = f"{project}/notes.md"
    return [
        harness.tool_turn("Read", f'{{"file_path": "{notes}", "limit": null}}', id="toolu_null"),
        harness.tool_turn("Read", f'{{"file_path": "{notes}", "limit": 3,}}', id="toolu_comma"),
        harness.tool_turn(
            "Write",
            f'{{"file_path": "{project}/[out.md](http://out.md)", "content": "hello\\n"}}',
            id="toolu_link",
        ),
    ]


def _run(harness: ModuleType, tmp: Path, name: str, through_proxy: bool) -> tuple[object, Path]:
    project = tmp / name / "project"
    project.mkdir(parents=True)
    (project / "notes.md").write_text("".join(f"NOTES-LINE-{i}\n" for i in range(1, 21)))
    with harness.FakeAnthropic(_script(harness, project)) as api:
        if through_proxy:
            with serving(create_app(ProxyConfig(upstream=api.url))) as url:
                run = harness.run_claude(
                    api,
                    project=project,
                    home=tmp / name / "home",
                    permission_mode="bypassPermissions",
                    env={"ANTHROPIC_BASE_URL": url},
                    timeout=180,
                )
        else:
            run = harness.run_claude(
                api,
                project=project,
                home=tmp / name / "home",
                permission_mode="bypassPermissions",
                timeout=180,
            )
    return run, project


def test_claude_code_runs_repaired_calls_through_the_proxy(tmp_path: Path) -> None:
    harness = _harness()
    run, project = _run(harness, tmp_path, "proxy", through_proxy=True)
    results = {r.tool_use_id: r for r in run.tool_results()}
    assert set(results) == {"toolu_null", "toolu_comma", "toolu_link"}, run.stderr
    null, comma, link = results["toolu_null"], results["toolu_comma"], results["toolu_link"]
    assert not null.is_error
    assert "NOTES-LINE-20" in null.text  # the whole file: the null limit was dropped
    assert "drop_null at $.limit" in null.text  # and the model was told, once
    assert not comma.is_error
    assert "NOTES-LINE-3" in comma.text
    assert "NOTES-LINE-4" not in comma.text  # limit 3 kept
    assert not link.is_error
    assert f"{project}/out.md" in link.text
    assert (project / "out.md").read_text() == "hello\n"
    assert not any("[" in p.name for p in project.iterdir())


def test_without_the_proxy_the_same_calls_fail(tmp_path: Path) -> None:
    harness = _harness()
    run, project = _run(harness, tmp_path, "direct", through_proxy=False)
    results = {r.tool_use_id: r for r in run.tool_results()}
    assert "InputValidationError" in results["toolu_null"].text
    assert "could not be parsed as JSON" in results["toolu_comma"].text
    assert not (project / "out.md").exists()
    assert any(p.name.startswith("[out.md]") for p in project.iterdir())  # a nested folder


# -- deferred MCP tools: called directly, not in the request's tools ---------------------------

ECHO = "mcp__echo__echo"


def _mcp_script(harness: ModuleType, project: Path) -> list[object]:
    notes = f"{project}/notes.md"
    linked = f"{project}/[notes.md](http://notes.md)"
    return [
        # Broken JSON (a trailing comma): Claude Code refuses it before the MCP server.
        harness.tool_turn(ECHO, f'{{"path": "{notes}", "count": 2,}}', id="toolu_mcp_comma"),
        # Valid JSON, a link and a null: only the tool's schema says they are wrong.
        harness.tool_turn(ECHO, f'{{"path": "{linked}", "count": null}}', id="toolu_mcp_null"),
    ]


def _mcp_run(
    harness: ModuleType, tmp: Path, name: str, *, proxy: bool, schemas: bool = False
) -> tuple[object, list[object], Path]:
    """One ``claude -p`` run with a stdio MCP server (``mcp_echo_server.py``, beside the
    harness) whose tool the model calls directly, as deferred; returns the run, the
    arguments the MCP server received, the project. ``schemas``: the proxy gets the
    server's tool schemas, as ``streamrepair schemas --mcp ... --prefix mcp__echo__``
    builds them."""
    server = Path(harness.__file__).with_name("mcp_echo_server.py")
    if not server.is_file():
        pytest.skip(f"the MCP echo server is not beside the harness ({server})")
    project = tmp / name / "project"
    project.mkdir(parents=True)
    (project / "notes.md").write_text("NOTES\n")
    log = tmp / name / "mcp.jsonl"
    harness.write_mcp_config(
        project, {"echo": [sys.executable, str(server)]}, env={"MCP_ECHO_LOG": str(log)}
    )
    config: dict[str, object] = {}
    if schemas:
        from streamrepair.integrations.mcp import list_mcp_tools
        from streamrepair.schema.tools import tool_schemas

        listed = tool_schemas(list_mcp_tools([sys.executable, str(server)], timeout=60))
        config["schemas"] = {f"mcp__echo__{n}": schema for n, schema in listed.items()}
    home = tmp / name / "home"
    with harness.FakeAnthropic(_mcp_script(harness, project)) as api:
        if proxy:
            with serving(create_app(ProxyConfig(upstream=api.url, **config))) as url:
                run = harness.run_claude(
                    api,
                    project=project,
                    home=home,
                    permission_mode="bypassPermissions",
                    env={"ANTHROPIC_BASE_URL": url},
                    timeout=180,
                )
        else:
            run = harness.run_claude(
                api, project=project, home=home, permission_mode="bypassPermissions", timeout=180
            )
    calls = []
    if log.exists():
        for line in log.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("name") == "echo":
                calls.append(record["arguments"])
    return run, calls, project


def test_claude_code_runs_a_deferred_mcp_tool_through_the_proxy(tmp_path: Path) -> None:
    harness = _harness()
    run, calls, project = _mcp_run(harness, tmp_path, "mcp-proxy", proxy=True)
    first = run.main_requests[0]  # type: ignore[attr-defined]
    assert first.tool_names(), run.stderr  # type: ignore[attr-defined]
    assert ECHO not in first.tool_names()  # deferred: not in the request's tools
    notes, linked = f"{project}/notes.md", f"{project}/[notes.md](http://notes.md)"
    # Both calls reached the MCP server: the broken one repaired (syntax), the valid one
    # as written (no schema here: the proxy does not guess one).
    assert calls == [{"path": notes, "count": 2}, {"path": linked, "count": None}]
    results = {r.tool_use_id: r for r in run.tool_results()}  # type: ignore[attr-defined]
    assert not results["toolu_mcp_comma"].is_error
    assert "trailing_comma" in results["toolu_mcp_comma"].text  # the model is told
    assert not results["toolu_mcp_null"].is_error


def test_with_schemas_the_proxy_repairs_a_deferred_mcp_call(tmp_path: Path) -> None:
    harness = _harness()
    run, calls, project = _mcp_run(harness, tmp_path, "mcp-schemas", proxy=True, schemas=True)
    notes = f"{project}/notes.md"
    assert calls == [{"path": notes, "count": 2}, {"path": notes}], run.stderr  # type: ignore[attr-defined]
    results = {r.tool_use_id: r for r in run.tool_results()}  # type: ignore[attr-defined]
    assert "drop_null at $.count" in results["toolu_mcp_null"].text


def test_without_the_proxy_the_broken_mcp_call_never_reaches_the_server(tmp_path: Path) -> None:
    harness = _harness()
    run, calls, project = _mcp_run(harness, tmp_path, "mcp-direct", proxy=False)
    linked = f"{project}/[notes.md](http://notes.md)"
    assert calls == [{"path": linked, "count": None}], run.stderr  # type: ignore[attr-defined]
    results = {r.tool_use_id: r for r in run.tool_results()}  # type: ignore[attr-defined]
    assert results["toolu_mcp_comma"].is_error


# -- progressive arguments: what Claude Code does with a half-sent call -------------------------


class _RawAnthropic:
    """A scripted Messages API that answers the first main request with raw SSE events
    (any ending at all) and every later one with ``done``; the ``api`` ``run_claude`` takes."""

    def __init__(self, harness: ModuleType, events: list[tuple[str, dict[str, object]]]) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import urlsplit

        self.requests: list[object] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                return

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw) if raw else None
                split = urlsplit(self.path)
                api.requests.append(
                    harness.RecordedRequest(
                        method="POST",
                        path=split.path,
                        query=split.query,
                        headers={k.lower(): v for k, v in self.headers.items()},
                        raw=raw,
                        body=body,
                        at=time.time(),
                    )
                )
                if split.path.rstrip("/").endswith("count_tokens"):
                    data = b'{"input_tokens": 10}'
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                main = api.is_main(body)
                first = main and not any(m.get("role") == "assistant" for m in body["messages"])
                answer = events if first else _text_events("done" if main else "ok")
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                for name, data in answer:
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    @staticmethod
    def is_main(body: object) -> bool:
        return isinstance(body, dict) and bool(body.get("tools"))

    def snapshot(self) -> list[object]:
        return list(self.requests)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _start() -> tuple[str, dict[str, object]]:
    usage = {"input_tokens": 10, "output_tokens": 1}
    message = {
        "id": "msg_raw",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
    }
    message.update(content=[], stop_reason=None, stop_sequence=None, usage=usage)
    return "message_start", {"type": "message_start", "message": message}


def _end(reason: str) -> list[tuple[str, dict[str, object]]]:
    delta = {"stop_reason": reason, "stop_sequence": None}
    return [
        ("message_delta", {"type": "message_delta", "delta": delta, "usage": {"output_tokens": 9}}),
        ("message_stop", {"type": "message_stop"}),
    ]


def _text_block(index: int, text: str) -> list[tuple[str, dict[str, object]]]:
    start = {"type": "content_block_start", "index": index}
    return [
        ("content_block_start", {**start, "content_block": {"type": "text", "text": ""}}),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": text},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]


def _text_events(text: str) -> list[tuple[str, dict[str, object]]]:
    return [_start(), *_text_block(0, text), *_end("end_turn")]


def _tool_block(
    index: int, name: str, tool_id: str, partial: str, *, closed: bool
) -> list[tuple[str, dict[str, object]]]:
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
    out: list[tuple[str, dict[str, object]]] = [
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": block},
        )
    ]
    for i in range(0, len(partial), 40):
        delta = {"type": "input_json_delta", "partial_json": partial[i : i + 40]}
        out.append(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        )
    if closed:
        out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return out


def _raw_run(
    harness: ModuleType, tmp: Path, name: str, build: object
) -> tuple[object, Path, list[object]]:
    project = tmp / name / "project"
    project.mkdir(parents=True)
    (project / "notes.md").write_text("NOTES-LINE-1\n")
    events = build(project)
    api = _RawAnthropic(harness, events)
    try:
        run = harness.run_claude(
            api, project=project, home=tmp / name / "home", permission_mode="bypassPermissions"
        )
    finally:
        api.close()
    main = [r for r in api.requests if getattr(r, "is_messages", False) and api.is_main(r.body)]
    return run, project, main


NOTICE = "[streamrepair: Write was not executed; status: not_started; reason: cut_off]"


def _half_write(project: Path) -> str:
    return f'{{"file_path":"{project}/out.md","content":"line one\\nline two, and then the'


def test_claude_code_drops_a_tool_use_block_that_was_never_closed(tmp_path: Path) -> None:
    """Measured in the real binary, the ground the Anthropic relay's choice stands on: a
    ``tool_use`` block that was never closed is dropped (nothing runs, nothing is echoed
    back), with a notice block after it and ``max_tokens``, and also next to a complete
    call with ``tool_use``; a closed one with the same half-written input is run (here it
    fails Claude Code's JSON parse). So a streamed call that ends rejected is left open."""
    harness = _harness()
    run, project, main = _raw_run(
        harness,
        tmp_path,
        "open-notice-max-tokens",
        lambda p: [
            _start(),
            *_tool_block(0, "Write", "toolu_half", _half_write(p), closed=False),
            *_text_block(1, NOTICE),
            *_end("max_tokens"),
        ],
    )
    assert not (project / "out.md").exists()
    assert run.tool_results() == []
    echoed = [m for m in main[1].body["messages"] if m["role"] == "assistant"]
    assert [b["type"] for b in echoed[0]["content"]] == ["text"]  # the notice, no tool_use
    assert NOTICE in echoed[0]["content"][0]["text"]

    run, project, main = _raw_run(
        harness,
        tmp_path,
        "open-next-to-a-complete-call",
        lambda p: [
            _start(),
            *_tool_block(0, "Write", "toolu_half", _half_write(p), closed=False),
            *_tool_block(
                1, "Read", "toolu_read", json.dumps({"file_path": f"{p}/notes.md"}), closed=True
            ),
            *_text_block(2, NOTICE),
            *_end("tool_use"),
        ],
    )
    assert not (project / "out.md").exists()
    results = run.tool_results()
    assert [r.tool_use_id for r in results] == ["toolu_read"]
    assert "NOTES-LINE-1" in results[0].text

    run, project, main = _raw_run(
        harness,
        tmp_path,
        "closed-max-tokens",
        lambda p: [
            _start(),
            *_tool_block(0, "Write", "toolu_half", _half_write(p), closed=True),
            *_end("max_tokens"),
        ],
    )
    results = run.tool_results()
    assert [r.tool_use_id for r in results] == ["toolu_half"]  # a closed block is run
    assert "could not be parsed as JSON" in results[0].text


def _progressive_run(
    harness: ModuleType, tmp: Path, name: str, turn: object
) -> tuple[object, Path, list[dict[str, object]]]:
    project = tmp / name / "project"
    project.mkdir(parents=True)
    with harness.FakeAnthropic([turn(project)], delay=0.002) as api:
        config = ProxyConfig(upstream=api.url, stream_arguments=True, access_log=False)
        with serving(create_app(config)) as url:
            run = harness.run_claude(
                api,
                project=project,
                home=tmp / name / "home",
                permission_mode="bypassPermissions",
                args=["--include-partial-messages"],
                env={"ANTHROPIC_BASE_URL": url},
                timeout=180,
            )
    partial = [
        e["event"]["delta"]["partial_json"]
        for e in run.events
        if e.get("type") == "stream_event"
        and e["event"].get("type") == "content_block_delta"
        and e["event"]["delta"].get("type") == "input_json_delta"
    ]
    return run, project, partial


LONG_CONTENT = "".join(f"line {n}: streamed to Claude Code as it came\n" for n in range(80))


def test_claude_code_gets_a_long_write_as_it_streams_and_runs_it_whole(tmp_path: Path) -> None:
    harness = _harness()

    def turn(project: Path) -> object:
        raw = json.dumps({"file_path": f"{project}/out.md", "content": LONG_CONTENT})
        return harness.tool_turn("Write", raw, parts=60, id="toolu_long")

    _, project, partial = _progressive_run(harness, tmp_path, "long", turn)
    assert (project / "out.md").read_text() == LONG_CONTENT
    assert len(partial) > 30  # the input reached Claude Code piece by piece
    assert json.loads("".join(partial)) == {
        "file_path": f"{project}/out.md",
        "content": LONG_CONTENT,
    }


def test_claude_code_never_runs_a_streamed_write_that_was_cut_off(tmp_path: Path) -> None:
    harness = _harness()

    def turn(project: Path) -> object:
        raw = json.dumps({"file_path": f"{project}/out.md", "content": LONG_CONTENT})
        cut = raw[: len(raw) // 2]
        return harness.Turn(
            tool_calls=(harness.ToolCall("Write", harness.split_text(cut, 30), "toolu_cut"),),
            stop_reason="max_tokens",
        )

    run, project, partial = _progressive_run(harness, tmp_path, "cut", turn)
    assert len(partial) > 10
    assert "line 1" in "".join(partial)
    assert not (project / "out.md").exists()  # and nothing was written
    assert run.tool_results() == []
    follow = run.main_requests[1].body["messages"]
    echoed = next(m for m in follow if m["role"] == "assistant")["content"]
    assert [b["type"] for b in echoed] == ["text"]
    assert "[streamrepair: Write was not executed" in echoed[0]["text"]
