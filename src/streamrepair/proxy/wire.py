"""What the proxy writes the same way in every API: SSE events, compact JSON, the notice
that stands for a withheld call, and the stop reason that closes a response.

The API modules (``chat.py``, ``anthropic.py``, ``responses.py``) put these where their
protocol carries them, in a stream (the relays) and in a whole body (``whole.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Final

from ..events import RejectReason, ToolCallReady, ToolCallRejected
from ..turn.replies import tool_message

__all__ = [
    "NOTICE_PREFIX",
    "closing_stop",
    "compact_json",
    "notice_text",
    "notice_verdicts",
    "sse_event",
]

#: Every notice the proxy writes for a withheld call starts with this.
NOTICE_PREFIX: Final = "[streamrepair: "


def sse_event(data: str, event: str | None = None) -> bytes:
    """One SSE event: an optional ``event:`` line, ``data:`` lines, a blank line."""
    head = f"event: {event}\n" if event else ""
    if "\n" in data or "\r" in data:
        lines = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        body = "".join(f"data: {line}\n" for line in lines)
    else:
        body = f"data: {data}\n"
    return (head + body + "\n").encode("utf-8")


def compact_json(value: Any) -> str:
    """Compact JSON, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def notice_text(rejected: ToolCallRejected) -> str:
    """The text the client gets instead of a withheld call: what happened, what to do
    (the same words :func:`~streamrepair.tool_message` answers a rejected call with)."""
    content: str = tool_message(rejected)["content"]
    return content


def notice_verdicts(
    verdicts: Iterable[ToolCallReady | ToolCallRejected],
) -> list[ToolCallRejected]:
    """The withheld calls that get a notice: every rejected one but those the protocol
    passes on as they are (``unsupported``: a Responses ``mcp_approval_request``, which
    the client answers with an approval, not a result)."""
    return [
        v
        for v in verdicts
        if isinstance(v, ToolCallRejected) and v.reason is not RejectReason.UNSUPPORTED
    ]


def closing_stop(
    upstream: str | None,
    verdicts: Iterable[ToolCallReady | ToolCallRejected],
    *,
    tool: str,
    length: str,
    stop: str,
) -> str | None:
    """The stop reason the client gets, given what was sent.

    A call was sent: ``tool`` (``tool_calls``/``tool_use``), so that the harness runs it,
    even where the upstream said ``stop`` (Gemini) or the output limit (a later call was
    cut off: its notice says so). No call was sent but one was cut off: ``length``
    (``max_tokens``), whatever the upstream claimed (truncation is often reported as
    ``tool_calls`` or ``stop``). No call sent, upstream said tool calls: ``stop``.
    Otherwise the upstream's own reason.
    """
    items = [
        v
        for v in verdicts
        if not (isinstance(v, ToolCallRejected) and v.reason is RejectReason.UNSUPPORTED)
    ]
    if any(isinstance(v, ToolCallReady) for v in items):
        return tool
    if any(isinstance(v, ToolCallRejected) and v.reason is RejectReason.CUT_OFF for v in items):
        return length
    if upstream is not None and upstream == tool and items:
        return stop
    return upstream
