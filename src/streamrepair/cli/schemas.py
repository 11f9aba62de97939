"""``streamrepair schemas``: build the file ``--schemas`` reads.

The hooks need the schema of a tool the harness does not hand them (an MCP tool, every
DeepSeek Harness tool). This command merges what is at hand into one JSON object of tool
name -> parameter schema on stdout: files in any format :func:`load_schemas` reads (a
tool list, a saved request body, an MCP ``tools/list`` result, an earlier output), and
the tools of stdio MCP servers, asked directly (``--mcp COMMAND``), named with
``--prefix`` as the harness names them (Claude Code: ``mcp__<server>__``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Mapping
from typing import Any

from ..integrations.calls import load_schemas
from ..integrations.mcp import list_mcp_tools
from ..schema.tools import tool_schemas

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``schemas`` subcommand."""
    parser = subparsers.add_parser(
        "schemas",
        help="print a --schemas file: tool schemas from files and from MCP servers",
        description=(
            "Merge tool schemas into one JSON object of tool name -> schema (later sources "
            "win), for the hooks' --schemas option."
        ),
    )
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="a tool list (OpenAI, Responses, Anthropic, MCP), a request body, or name -> schema",
    )
    parser.add_argument(
        "--mcp",
        action="append",
        default=[],
        metavar="COMMAND",
        help="a stdio MCP server command line to ask for its tools (repeatable)",
    )
    parser.add_argument(
        "--prefix",
        default="",
        help="put this before the MCP tools' names (Claude Code: mcp__SERVER__)",
    )
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="seconds an MCP server may take (30)"
    )
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    merged: dict[str, Mapping[str, Any]] = {}
    try:
        for path in args.files:
            merged.update(load_schemas(path))
        for command in args.mcp:
            tools = list_mcp_tools(shlex.split(command), timeout=args.timeout)
            for name, schema in tool_schemas(tools).items():
                merged[args.prefix + name] = schema
    except (OSError, TimeoutError, ValueError) as exc:
        print(f"streamrepair schemas: {exc}", file=sys.stderr)
        return 1
    if not merged:
        print("streamrepair schemas: no tools found (name FILEs or --mcp servers)", file=sys.stderr)
        return 1
    print(json.dumps(merged, indent=2, ensure_ascii=False, sort_keys=True))
    return 0
