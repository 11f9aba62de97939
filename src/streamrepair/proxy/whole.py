"""Non-streamed responses: the relays' judging, applied to a whole JSON body.

Theory of operation
-------------------
A ``200`` JSON answer to a Chat Completions, Anthropic Messages or Responses request
whose ``stream`` is absent or false carries the same tool calls a stream would, all at
once. :func:`judge_body` tells the body to the protocol's :class:`~.relay.Relay` as the
stream that would have carried it (:func:`body_events`: the message with its calls
whole, its stop reason, the end marker), so that every decision is the relay's, made
once: the stream core with the request's ``tools`` as the schemas, the finish policy,
the argument-size limit, the upstream's stop reason, the memos for the next request.
What the relay would have sent to a streaming client is not read; the body is instead
rewritten in place (:func:`rewrite_body`), by the API's module (``chat.py``,
``anthropic.py``, ``responses.py``: the ``body_events`` and ``rewrite_body`` of its row):

* each ready call keeps its entry, block or item with every field it had; only its
  arguments change, to the text :func:`~.emitters.argument_text` gives (Anthropic: the
  ``input`` object, the finished repaired value), and its id when one call's arguments
  held several values (each then its own call, as in a stream);
* each call that was cut off, cannot be repaired or names no tool the request offered
  is removed, and the notice the streaming relays send
  (:func:`~.wire.notice_text`) is added where the protocol carries text: appended to
  the Chat ``content``, as a ``text`` block at the end of the Anthropic ``content``, as a
  message item at the end of the Responses ``output``;
* the stop reason becomes what :func:`~.wire.closing_stop` says for the calls kept
  (Chat ``finish_reason``, Anthropic ``stop_reason``, Responses ``status`` with
  ``incomplete_details``);
* everything else (ids, usage, reasoning, thinking blocks with their signatures, server
  tool blocks and items, fields no one knows yet) is kept as the upstream sent it.

Invariants: a body with nothing to change gives None (the caller sends the upstream's
bytes, byte for byte); a body that is not one response of the protocol (not JSON, no
calls, ``n > 1`` choices, a Responses body still in progress) gives None without being
judged; the body passed in is never mutated; no call the relay would withhold from a
stream is left runnable in the body returned.
"""

from __future__ import annotations

import json
from typing import Any

from ._table import APIS
from .memo import CallMemo
from .relay import ApiProtocol, Relay
from .wire import compact_json, sse_event

__all__ = ["body_events", "judge_body", "memos_of_response", "rewrite_body"]


def judge_body(relay: Relay, data: bytes) -> bytes | None:
    """The body to send instead of ``data`` (a whole response of ``relay``'s protocol),
    or None to send ``data`` itself: not a response with calls, or nothing to change.
    ``relay`` must be new; afterwards its :attr:`~.relay.Relay.verdicts` and
    :meth:`~.relay.Relay.memos` are those of the body."""
    try:
        body = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(body, dict):
        return None
    events = body_events(relay.protocol, body)
    if events is None:
        return None
    for name, payload in events:
        relay.feed(sse_event(payload, name))  # what a stream client would get: unused
    relay.finish()
    rewritten = rewrite_body(relay, body)
    if rewritten == body:
        return None
    return compact_json(rewritten).encode("utf-8")


def body_events(protocol: ApiProtocol, body: dict[str, Any]) -> list[tuple[str | None, str]] | None:
    """The stream events (``event`` name, ``data``) that carry ``body``, a whole response
    of ``protocol``; None when it is not one with calls to judge."""
    return APIS[protocol].body_events(body)


def rewrite_body(relay: Relay, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as the client gets it, now that ``relay`` judged its calls (module
    docstring); equal to ``body`` when nothing changes. ``body`` is not mutated."""
    return APIS[relay.protocol].rewrite_body(relay, body)


def memos_of_response(protocol: ApiProtocol, body: object) -> list[CallMemo]:
    """What to remember from a non-streaming response passed through untouched (the app
    reads none but ``n > 1`` Chat bodies): the turn's reasoning (Chat
    ``reasoning_content``) or thinking blocks (Anthropic), on its first call. Responses
    bodies give none."""
    reader = APIS[protocol].memos
    if reader is None or not isinstance(body, dict):
        return []
    return reader(body)
