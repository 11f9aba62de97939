"""What the proxy writes the same way in every API: SSE events, compact JSON, what stands
for a call the proxy refuses to send as runnable (a call to :data:`REFUSED_TOOL`, or a
notice), and the stop reason that closes a response.

The API modules (``chat.py``, ``anthropic.py``, ``responses.py``) put these where their
protocol carries them, in a stream (the relays) and in a whole body (``whole.py``).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable
from typing import Any, Final

from ..events import RejectReason, ToolCallReady, ToolCallRejected
from ..turn.replies import tool_message

__all__ = [
    "NOTICE_PREFIX",
    "REFUSED_TOOL",
    "Refusals",
    "closing_stop",
    "compact_json",
    "notice_text",
    "refusal_call",
    "refused_verdicts",
    "sse_event",
]

#: Every notice the proxy writes for a withheld call starts with this.
NOTICE_PREFIX: Final = "[streamrepair: "
#: The name a refused call goes out under. No harness has a tool by this name, so each
#: answers the call with its own "no such tool" error and its loop goes on, the model
#: reading the call's arguments (what went wrong, what to do): Claude Code ("No such
#: tool available"), Codex ("unsupported call"), OpenCode (its ``invalid`` tool), measured
#: in docs/integrations/harness-loops.md. Nothing can run it. The next request gets the
#: call back under the name the model called, answered by the proxy's guidance.
REFUSED_TOOL: Final = "streamrepair_refused_call"


class Refusals(enum.Enum):
    """How the proxy sends a call it will not send as runnable (cut off, unrepairable,
    invalid against its schema after repairs, ambiguous escapes)."""

    #: As a call to :data:`REFUSED_TOOL` whose arguments say what went wrong and what to
    #: do: the harness answers it with an error and its loop goes on, as it would have
    #: refused the broken call itself without the proxy (the default).
    CALL = "call"
    #: As a text notice: the turn ends with it (for clients that run no tools, or want
    #: to decide themselves from the text).
    NOTICE = "notice"


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


def refused_verdicts(
    verdicts: Iterable[ToolCallReady | ToolCallRejected],
) -> list[ToolCallRejected]:
    """The calls the proxy refuses to send as runnable, and answers (with a
    :func:`refusal_call` or a notice): every rejected one whose stream ended, except
    those the protocol passes on as they are (``unsupported``: a Responses
    ``mcp_approval_request``, which the client answers with an approval). A call of a
    stream that failed or ended incompletely (``stream_incomplete``, ``aborted``) gets
    nothing: the client gets the stream's end as the upstream gave it, so a harness
    retries as it would have without the proxy."""
    return [v for v in verdicts if isinstance(v, ToolCallRejected) and v.reason not in _UNANSWERED]


_UNANSWERED: Final = frozenset(
    {RejectReason.UNSUPPORTED, RejectReason.STREAM_INCOMPLETE, RejectReason.ABORTED}
)


def refusal_call(rejected: ToolCallRejected) -> ToolCallReady:
    """The call that goes out for a refused one (:attr:`Refusals.CALL`): its id and
    position, named :data:`REFUSED_TOOL`, its arguments an object naming the tool the
    model called, why it was refused and the guidance (:func:`notice_text`), so that a
    harness that echoes a failed call shows the model what to do."""
    arguments = {
        "refused_call": rejected.name,
        "reason": rejected.reason.value,
        "message": notice_text(rejected),
    }
    return ToolCallReady(
        call_id=rejected.call_id,
        index=rejected.index,
        name=REFUSED_TOOL,
        arguments=arguments,
        raw=compact_json(arguments),
        origin_id=rejected.origin_id,
    )


def closing_stop(
    upstream: str | None, *, calls_sent: bool, withheld: bool, tool: str, stop: str
) -> str | None:
    """The stop reason the client gets: the upstream's, unless the proxy changed what
    the turn holds, and then one every harness and SDK handles as a normal turn.

    A call was sent (a ready one, or a :func:`refusal_call`): ``tool``
    (``tool_calls``/``tool_use``/``completed``), so that the harness runs (or answers) it,
    also where the upstream said ``stop`` (Gemini) or hit the output limit with a later
    call (which went out refused). Calls were withheld and none was sent (notices only):
    ``stop`` where the upstream said ``tool``, else the upstream's own reason. Never a
    reason the upstream did not give for a turn the proxy did not change: an output
    limit is never invented (Codex fails a whole turn on ``incomplete``, and
    openai-python's ``stream()`` raises on ``length``)."""
    if calls_sent:
        return tool
    if withheld and upstream == tool:
        return stop
    return upstream
