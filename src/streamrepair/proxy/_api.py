"""What one API module gives the proxy: a row of the table of APIs (``_table.py``).

Everything the proxy does differently per API (Chat Completions, Anthropic Messages,
Responses) lives in that API's module (``chat.py``, ``anthropic.py``, ``responses.py``),
and the module hands it over as one :class:`Api`: the route the proxy answers, the relay
that reads the stream, the whole-body judging, the request-side fixes, the memo reader,
the error body and the header the upstream's key goes in. The shared flows (``app.py``,
``whole.py``, ``fixes.py``) look the row up and call it; none of them names an API.
This module is the contract between the two sides, so that neither imports the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..turn.history import ReasoningPolicy
    from .memo import CallMemo
    from .relay import ApiProtocol, Relay

__all__ = ["Answer", "Api", "CallSite", "openai_error"]

#: The stream events (``event`` name, ``data``) a stream would carry a whole body in.
BodyEvents = list[tuple[str | None, str]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """A tool result in a request's history, as the repair-notes stage of the
    request-side fixes reads it (``fixes.py``): the call it answers, its content, the
    history before it (notes given there are not given again) and how to put new content
    in its place (in the copy of the history the fixes work on)."""

    call_id: Any
    content: Any
    earlier: Callable[[], list[Any]]
    replace: Callable[[Any], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class CallSite:
    """A call in a request's history (a Chat ``tool_calls`` entry, an Anthropic
    ``tool_use`` block, a Responses ``function_call`` item), as the request-side fixes
    read it: its id, its name as the history has it, and how to put the call back as the
    model made it, ``restore(name, arguments)`` (``arguments`` JSON text of an object),
    in the copy of the history the fixes work on."""

    call_id: Any
    name: Any
    restore: Callable[[str, str], None]


def openai_error(status: int, message: str, kind: str) -> dict[str, Any]:
    """The proxy's own error body in OpenAI's shape (Chat Completions, Responses, and
    every path that is no API's)."""
    return {"error": {"message": message, "type": kind, "code": status}}


@dataclass(frozen=True, slots=True, kw_only=True)
class Api:
    """One API the proxy repairs: a row of ``_table.APIS``.

    * ``protocol``: its name (logs, metrics) and key; ``relay``: the :class:`~.relay.Relay`
      subclass that reads its streams;
    * ``path``: the end of the request path it is served on (``POST`` only);
      ``follows``: whether the proxy reads the answer to a request body at all (Chat
      Completions: not with ``n > 1``);
    * ``key_header``: the header the API reads its key from (the proxy's
      ``upstream_key`` goes there, and in ``Authorization: Bearer``); ``error_body``:
      the proxy's own error answers ``(status, message, kind)`` in its shape;
    * ``body_events`` and ``rewrite_body``: a whole (non-streamed) body told as the stream
      that would carry it (None: no calls to judge), and rewritten once the relay judged
      it (``whole.py``);
    * ``history``: the request's list of messages or items; ``referenced_calls``: the
      call ids it mentions; ``before``: the fixes only the proxy can make (reasoning put
      back from the memos, unanswered calls answered), True when it changed something;
      ``answers``: its tool results, for the repair notes; ``note_part``: the type of a
      text part added to a list of content;
    * ``calls``: the calls in its history (a refused call is put back under the name
      the model called, :class:`CallSite`);
    * ``memos``: what to remember from a body passed through unread (None: nothing).
    """

    protocol: ApiProtocol
    relay: type[Relay]
    path: str
    follows: Callable[[Mapping[str, Any]], bool]
    key_header: str
    error_body: Callable[[int, str, str], dict[str, Any]]
    body_events: Callable[[dict[str, Any]], BodyEvents | None]
    rewrite_body: Callable[[Relay, dict[str, Any]], dict[str, Any]]
    history: str
    referenced_calls: Callable[[Mapping[str, Any]], list[str]]
    before: Callable[
        [dict[str, Any], Mapping[str, CallMemo], ReasoningPolicy, dict[str, int]], bool
    ]
    answers: Callable[[list[Any]], Iterator[Answer]]
    calls: Callable[[list[Any]], Iterator[CallSite]]
    note_part: str
    memos: Callable[[dict[str, Any]], list[CallMemo]] | None

    def serves(self, method: str, path: str) -> bool:
        """Whether a request is one of this API's (a trailing ``/`` is ignored)."""
        return method == "POST" and path.rstrip("/").endswith(self.path)
