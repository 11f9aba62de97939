"""The tool schemas Claude Code sent to the model, read back from its session transcript.

Claude Code checks the input of its built-in tools against their schemas before any hook
runs, but it passes MCP tool calls through unchecked (it only coerces some types), and a
hook payload carries no schema. The schemas are in one place a hook can read: the session
transcript (``transcript_path`` in the payload, JSON lines). Before each model request
whose tool list changed, Claude Code 2.1.332 appends a record

    {"type": "api-request-shape", ..., "shape": {"system": ..., "tools":
        [{"name": ..., "description": ..., "input_schema": {...}}, ...]}}

so the last such record before the assistant message that made a call holds the schemas
the model was given for it. **This record is internal and undocumented**; it was measured
with 2.1.332 and may change or vanish in another version. Everything here is therefore
defensive: a missing file, a record of another shape, a transcript larger than
:data:`MAX_TRANSCRIPT_BYTES` (only its tail is read) or anything else unexpected gives
``None`` (no schema: the hook then applies only the rules that need none), never an error.

What it can and cannot see (measured):

* A deferred MCP tool (the default: Claude Code sends MCP tools by name only and the
  model loads a schema with its ``ToolSearch`` tool) is in the record from the request
  after the ``ToolSearch`` call on, which is how a model is told to call it. A model that
  calls a deferred tool directly was never sent its schema: no record holds it.
* With ``ENABLE_TOOL_SEARCH=false`` every tool is sent with its schema, in every record.
* Claude Code writes the transcript asynchronously: the assistant message carrying the
  call can land in the file a few tens of milliseconds after the hook starts. The reader
  waits for it (polling, at most ``wait`` seconds) so that it takes the record that
  preceded *this* call, not an older one.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = [
    "MAX_TRANSCRIPT_BYTES",
    "POLL_SECONDS",
    "SHAPE_RECORD",
    "TRANSCRIPT_WAIT_SECONDS",
    "request_tool_schemas",
]

#: The record type holding a request's tool list (Claude Code 2.1.332, undocumented).
SHAPE_RECORD: Final = "api-request-shape"
#: Most bytes read from the end of a transcript.
MAX_TRANSCRIPT_BYTES: Final = 16 * 2**20
#: Longest wait for the call's own message to reach the transcript.
TRANSCRIPT_WAIT_SECONDS: Final = 1.0
#: Interval between two reads while waiting.
POLL_SECONDS: Final = 0.02
# Most records named like a shape record that are parsed before giving up (the name could
# also occur inside a message).
_MAX_CANDIDATES: Final = 8
_MARKER: Final = f'"{SHAPE_RECORD}"'.encode()


def _tail(path: str) -> bytes:
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > MAX_TRANSCRIPT_BYTES:
            handle.seek(size - MAX_TRANSCRIPT_BYTES)
        return handle.read(MAX_TRANSCRIPT_BYTES)


def _tools_of(line: bytes) -> dict[str, Mapping[str, Any]] | None:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or record.get("type") != SHAPE_RECORD:
        return None
    shape = record.get("shape")
    tools = shape.get("tools") if isinstance(shape, dict) else None
    if not isinstance(tools, list):
        return None
    found: dict[str, Mapping[str, Any]] = {}
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        name, schema = tool.get("name"), tool.get("input_schema")
        if isinstance(name, str) and name and isinstance(schema, dict):
            found[name] = schema
    return found


def _last_shape(data: bytes, end: int) -> dict[str, Mapping[str, Any]] | None:
    """The tools of the last shape record starting before ``end``."""
    for _ in range(_MAX_CANDIDATES):
        at = data.rfind(_MARKER, 0, end)
        if at < 0:
            return None
        start = data.rfind(b"\n", 0, at) + 1
        stop = data.find(b"\n", at)
        tools = _tools_of(data[start : stop if stop >= 0 else len(data)])
        if tools is not None:
            return tools
        end = start
    return None


def request_tool_schemas(
    transcript_path: str,
    tool_use_id: str,
    *,
    wait: float = TRANSCRIPT_WAIT_SECONDS,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Mapping[str, Any]] | None:
    """Tool name -> input schema, as sent in the model request that produced the call
    ``tool_use_id``; ``None`` when the transcript holds no such record (see the module
    docstring). Waits up to ``wait`` seconds for the call to reach the transcript, then
    uses the last record there is."""
    if not transcript_path or not os.path.isabs(transcript_path):
        return None
    needle = tool_use_id.encode("utf-8", "replace") if tool_use_id else b""
    deadline = clock() + max(wait, 0.0)
    while True:
        try:
            data = _tail(transcript_path)
        except OSError:
            return None
        at = data.find(needle) if needle else -1
        if at >= 0 or clock() >= deadline:
            break
        sleep(POLL_SECONDS)
    return _last_shape(data, at if at >= 0 else len(data))
