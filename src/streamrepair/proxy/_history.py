"""Reading and editing a request's history: what the request-side fixes of every API
share (``fixes.py`` runs them; each API module writes its own ``before`` and ``answers``
with these).

The fixes work on a copy of the body whose history list and the dicts in it are new
objects (``fixes.py``); these helpers assign into that copy and never modify anything
deeper in place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from ..events import ToolCallReady
from ..turn.replies import RunState, tool_message

__all__ = ["add_id", "count", "dicts", "insert_after", "not_started"]

_NO_ANSWER: Final = (
    "No result for this call was sent back, so it is not known to have run. Do not "
    "assume it happened; call it again if it is still needed."
)


def dicts(value: object) -> list[dict[str, Any]]:
    """The dicts in ``value`` when it is a list (``[]`` otherwise)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def add_id(ids: dict[str, None], value: object) -> None:
    """Add ``value`` to the ordered set ``ids`` when it is a call id (a non-empty string)."""
    if isinstance(value, str) and value:
        ids[value] = None


def count(counts: dict[str, int], name: str, n: int = 1) -> None:
    """Count ``n`` more of fix ``name``."""
    counts[name] = counts.get(name, 0) + n


def insert_after(items: list[Any], inserts: Mapping[int, list[dict[str, Any]]]) -> None:
    """Put ``inserts[i]`` right after ``items[i]`` (in place, one pass)."""
    if not inserts:
        return
    rebuilt: list[Any] = []
    for i, item in enumerate(items):
        rebuilt.append(item)
        rebuilt.extend(inserts.get(i, ()))
    items[:] = rebuilt


def not_started(call_id: str, name: str, arguments: object) -> str:
    """The answer to a call the history left unanswered: ``not_started`` (the header
    :func:`~streamrepair.tool_message` writes: it was never run as far as anyone knows)."""
    try:
        value = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        value = {}
    call = ToolCallReady(
        call_id=call_id,
        index=None,
        name=name or "the tool",
        arguments=value if isinstance(value, dict) else {},
    )
    reply = tool_message(call, _NO_ANSWER, status=RunState.NOT_STARTED)
    content: str = reply["content"]
    return content
