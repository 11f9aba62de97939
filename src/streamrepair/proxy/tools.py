"""The request's tools as the relays read them: the function tools it lists
(:func:`usable_tools`), and the schemas of tools it does not list (:func:`with_schemas`,
``serve --schemas``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..schema.tools import tool_schemas

__all__ = ["usable_tools", "with_schemas"]


def usable_tools(tools: object) -> list[dict[str, Any]] | None:
    """The entries of a request's ``tools`` that name a function tool (built-in and
    server tools without a name are left out); None when there are none, so that no
    call is rejected as an unknown tool for want of a list."""
    if not isinstance(tools, list):
        return None
    out: list[dict[str, Any]] = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        try:
            tool_schemas([tool])
        except ValueError:
            continue
        out.append(tool)
    return out or None


def with_schemas(
    tools: list[dict[str, Any]] | None, schemas: Mapping[str, Mapping[str, Any]] | None
) -> list[dict[str, Any]] | None:
    """``tools`` (a request's :func:`usable_tools`) and, for each tool of ``schemas``
    (name -> parameter schema) that ``tools`` does not name, an entry with that schema:
    the request's own schema wins. ``tools`` is not mutated."""
    if not schemas:
        return tools
    listed = tool_schemas(tools) if tools else {}
    extra = [
        {"name": name, "input_schema": dict(schema)}
        for name, schema in schemas.items()
        if name not in listed
    ]
    return [*(tools or ()), *extra] or None
