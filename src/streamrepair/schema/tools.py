"""Reading the tool lists callers already have (OpenAI Chat, Responses, Anthropic) into the
schemas of each tool's arguments. Kept apart from the stream layer so that a hook process
can use it without importing the stream machinery."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["tool_schemas"]


def tool_schemas(tools: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Tool name -> JSON schema of its arguments, from an OpenAI Chat tool list
    (``{"type": "function", "function": {"name", "parameters"}}``), a Responses tool list
    (``{"type": "function", "name", "parameters"}``), an Anthropic tool list
    (``{"name", "input_schema"}``) or an MCP ``tools/list`` result's tools (``{"name",
    "inputSchema"}``). Raises ``ValueError`` on an entry with no name."""
    out: dict[str, Mapping[str, Any]] = {}
    for tool in tools:
        if not isinstance(tool, Mapping):
            raise ValueError(f"a tool must be a mapping, not {type(tool).__name__}")
        function = tool.get("function")
        spec: Mapping[str, Any] = function if isinstance(function, Mapping) else tool
        name = spec.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"tool without a name: {tool!r:.80}")
        schema = spec.get("parameters", spec.get("input_schema", spec.get("inputSchema")))
        out[name] = schema if isinstance(schema, Mapping) else {}
    return out
