"""Asking a stdio MCP server for its tools, to fill a ``--schemas`` file.

A harness that calls MCP tools does not always hand their schemas to streamrepair's
hook (Claude Code records them only once the model loaded them, DeepSeek Harness never).
The server itself says what they are: :func:`list_mcp_tools` starts it, speaks the MCP
stdio transport (one JSON-RPC message per line), sends ``initialize``, then
``tools/list`` (following ``nextCursor``), and stops it. ``streamrepair schemas --mcp
COMMAND`` prints the result as a schema file.

Bounded: one line is at most :data:`MAX_MESSAGE_BYTES`, at most :data:`MAX_PAGES` pages
are read, and the whole exchange takes at most ``timeout`` seconds; the server is
terminated (then killed) whatever happens. Failures raise ``OSError`` (the server
cannot be started), ``TimeoutError`` or ``ValueError`` (it answered something else).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any, Final

from .._version import __version__

__all__ = ["MAX_MESSAGE_BYTES", "MAX_PAGES", "MCP_PROTOCOL_VERSION", "list_mcp_tools"]

#: The protocol version offered in ``initialize`` (the server answers with its own).
MCP_PROTOCOL_VERSION: Final = "2025-06-18"
#: Longest message line read from the server.
MAX_MESSAGE_BYTES: Final = 16 * 2**20
#: Most ``tools/list`` pages read.
MAX_PAGES: Final = 100


def _reader(stream: IO[bytes], lines: queue.Queue[bytes | None]) -> None:
    try:
        while True:
            line = stream.readline(MAX_MESSAGE_BYTES + 1)
            if not line:
                break
            lines.put(line)
    except (OSError, ValueError):
        pass
    lines.put(None)


class _Session:
    def __init__(self, process: subprocess.Popen[bytes], deadline: float) -> None:
        if process.stdin is None or process.stdout is None:  # pragma: no cover - PIPE given
            raise OSError("the MCP server's stdio is not connected")
        self.process = process
        self.stdin = process.stdin
        self.deadline = deadline
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.next_id = 1
        threading.Thread(
            target=_reader, args=(process.stdout, self.lines), daemon=True, name="mcp-reader"
        ).start()

    def send(self, message: Mapping[str, Any]) -> None:
        self.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.stdin.flush()

    def call(self, method: str, params: Mapping[str, Any]) -> Any:
        request_id = self.next_id
        self.next_id += 1
        self.send({"id": request_id, "method": method, "params": dict(params)})
        while True:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"the MCP server did not answer {method} in time")
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                raise ValueError(f"the MCP server exited before answering {method}")
            if len(line) > MAX_MESSAGE_BYTES:
                raise ValueError(f"an MCP message is longer than {MAX_MESSAGE_BYTES} bytes")
            try:
                message = json.loads(line)
            except ValueError:
                continue  # not a message (a server that logs to stdout)
            if not isinstance(message, dict):
                continue
            if "method" in message:  # a request or notification from the server
                if "id" in message:
                    self.send(
                        {
                            "id": message["id"],
                            "error": {"code": -32601, "message": "not supported"},
                        }
                    )
                continue
            if message.get("id") != request_id:
                continue
            if "error" in message:
                raise ValueError(f"the MCP server answered {method} with {message['error']!r}")
            return message.get("result")


def list_mcp_tools(
    argv: Sequence[str],
    *,
    timeout: float = 30.0,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> list[dict[str, Any]]:
    """The tools (``{"name", "description"?, "inputSchema"}``) the stdio MCP server run
    by ``argv`` lists (see the module docstring)."""
    if not argv:
        raise ValueError("no MCP server command")
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=dict(env) if env is not None else None,
        cwd=cwd,
    )
    try:
        session = _Session(process, time.monotonic() + timeout)
        session.call(
            "initialize",
            {
                "protocolVersion": MCP_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "streamrepair", "version": __version__},
            },
        )
        session.send({"method": "notifications/initialized"})
        tools: list[dict[str, Any]] = []
        cursor: Any = None
        for _ in range(MAX_PAGES):
            result = session.call("tools/list", {"cursor": cursor} if cursor else {})
            page = result.get("tools") if isinstance(result, dict) else None
            if not isinstance(page, list):
                raise ValueError("the MCP server's tools/list result has no tools list")
            tools.extend(tool for tool in page if isinstance(tool, dict))
            cursor = result.get("nextCursor")
            if not cursor:
                break
        return tools
    finally:
        try:
            if process.stdin is not None:
                process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout is not None:
            process.stdout.close()
