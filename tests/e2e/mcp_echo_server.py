#!/usr/bin/env python3
"""A tiny stdio MCP server (JSON-RPC 2.0, one JSON message per line) with one tool.

``echo`` answers ``ECHO <the exact arguments it got, as sorted JSON>``. inputSchema:
``path`` (string, required), ``count`` (integer, optional), ``tags`` (array of strings,
optional), no other properties.

Every call is appended to ``$MCP_ECHO_LOG`` (JSON lines) when that is set, as are the
JSON-RPC method names. Usage: ``python3 mcp_echo_server.py`` (stdlib only).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Final

PROTOCOL: Final = "2025-06-18"
TOOL: Final[dict[str, Any]] = {
    "name": "echo",
    "description": "Echo the arguments back as JSON. `path` is a file path.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "A file path"},
            "count": {"type": "integer", "description": "Optional count"},
            "tags": {"type": "array", "items": {"type": "string"}, "description": "Optional"},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
}


def _log(record: dict[str, Any]) -> None:
    path = os.environ.get("MCP_ECHO_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")


def _answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method = request.get("method")
    if "id" not in request:  # a notification
        return None
    rid = request["id"]
    params = request.get("params") or {}
    if method == "initialize":
        version = params.get("protocolVersion") or PROTOCOL
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "echo", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        arguments = params.get("arguments")
        _log({"name": params.get("name"), "arguments": arguments})
        text = "ECHO " + json.dumps(arguments, sort_keys=True)
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        result = {}
    elif method in ("resources/list", "prompts/list", "resources/templates/list"):
        key = {
            "resources/list": "resources",
            "prompts/list": "prompts",
            "resources/templates/list": "resourceTemplates",
        }[method]
        result = {key: []}
    else:
        return {
            "jsonrpc": "2.0",
            "id": rid,
            "error": {"code": -32601, "message": f"method not found: {method}"},
        }
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main() -> int:
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            request = json.loads(line)
        except ValueError:
            continue
        _log({"rpc": request.get("method") if isinstance(request, dict) else None})
        if not isinstance(request, dict):
            continue
        answer = _answer(request)
        if answer is not None:
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
