"""What crosses the proxy on its way to the upstream and back, and what does not.

* :func:`upstream_url`: the upstream's address for a request (``upstream + path``, one
  ``/v1`` when both the upstream and the path carry it).
* :func:`forwarded_headers`: the request's headers as they go upstream: hop-by-hop
  headers, ``Expect`` and the proxy's own headers dropped; with the proxy's own token
  set, the presented token swapped for the upstream key; ``identity`` asked for where a
  relay reads the answer.
* :func:`handling`: what the proxy does with the upstream's answer (:class:`Handling`).
* :func:`slices`: how bytes that arrived at once are cut before they are relayed.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

from .config import STREAM_ARGUMENTS_HEADER, TEXT_CALLS_HEADER
from .upstream import DECODABLE_ENCODINGS

if TYPE_CHECKING:
    from starlette.requests import Request

    from ._api import Api
    from .config import ProxyConfig
    from .upstream import UpstreamResponse


#: Request header carrying the proxy's own token (never sent upstream).
TOKEN_HEADER: Final = "x-streamrepair-token"

_HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
#: Headers of the upstream's answer the proxy does not pass on: the hop-by-hop ones, and
#: ``date`` and ``server``, which the server the proxy runs under writes itself (uvicorn
#: does; passed on, the client got two of each).
ANSWER_DROPPED: Final = _HOP_BY_HOP | {"date", "server"}
#: How much of what arrived at once is relayed before its output goes out (:func:`slices`).
SLICE_BYTES: Final = 4096


def presented_token(request: Request) -> tuple[str | None, str | None]:
    """The token a client presented to the proxy and the header it came in, or
    ``(None, None)``: :data:`TOKEN_HEADER`, ``x-api-key``, or a bearer ``authorization``."""
    for name in (TOKEN_HEADER, "x-api-key"):
        value = request.headers.get(name)
        if value:
            return value, name
    auth = request.headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip(), "authorization"
    return None, None


def upstream_url(base: str, request: Request) -> str:
    """Where ``request`` goes: ``base`` (no trailing slash) and the request's path and
    query; a path's leading ``/v1`` is dropped when ``base`` already ends in it."""
    path = request.url.path
    if base.endswith("/v1") and (path == "/v1" or path.startswith("/v1/")):
        path = path[3:]
    query = request.url.query
    return f"{base}{path}" + (f"?{query}" if query else "")


def forwarded_headers(
    request: Request, api: Api | None, config: ProxyConfig
) -> list[tuple[str, str]]:
    """The headers ``request`` (of ``api``, None: no API's) is sent upstream with."""
    drop = set(_HOP_BY_HOP)
    drop.update((TEXT_CALLS_HEADER, STREAM_ARGUMENTS_HEADER))
    # The server here answered Expect (100 Continue) and read the body: forwarded, the
    # upstream client would hold the body back for a 100 that never comes.
    drop.add("expect")
    extra: list[tuple[str, str]] = []
    if config.token is not None:
        _, where = presented_token(request)
        drop.add(TOKEN_HEADER)
        if where in ("authorization", "x-api-key"):
            drop.update({"authorization", "x-api-key"})
            key = config.upstream_key
            if key:
                if where == "x-api-key" or (api is not None and api.key_header == "x-api-key"):
                    extra.append(("x-api-key", key))
                extra.append(("authorization", f"Bearer {key}"))
    if api is not None:
        drop.add("accept-encoding")  # the relay reads the stream: ask for it plain
        extra.append(("accept-encoding", "identity"))
    headers = [(k, v) for k, v in request.headers.items() if k.lower() not in drop]
    return headers + extra


def raw_headers(headers: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    """``headers`` as ASGI wants them: lower-case latin-1 bytes."""
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]


class Handling(enum.Enum):
    """What the proxy does with an upstream's answer."""

    RELAY = "relay"  # a stream, through the API's relay
    JUDGE = "judge"  # a whole body, judged by the API's relay (whole.py)
    REMEMBER = "remember"  # a whole body passed through, its memos read (n > 1)
    PASS = "pass"  # passed through untouched


def handling(api: Api | None, parsed: dict[str, Any] | None, answer: UpstreamResponse) -> Handling:
    """What to do with ``answer``, the upstream's answer to a request of ``api`` (None:
    no API's) whose body is ``parsed`` (None: not a JSON object). Only a ``200`` is read:
    a stream whose encoding the relay can undo through the relay, an uncompressed JSON
    body judged whole; a body of a request the API does not follow is read for its
    memos when the API has a reader, and everything else passes untouched."""
    if api is None or parsed is None or answer.status != 200:
        return Handling.PASS
    encoding = answer.header("content-encoding").strip().lower()
    if parsed.get("stream") is True:
        if "text/event-stream" not in answer.header("content-type"):
            return Handling.PASS
        if encoding not in DECODABLE_ENCODINGS:
            return Handling.PASS  # asked for identity, got an encoding it cannot read
        return Handling.RELAY if api.follows(parsed) else Handling.PASS
    if "json" not in answer.header("content-type") or encoding not in ("", "identity"):
        return Handling.PASS  # not JSON, or compressed: passed on unread
    if api.follows(parsed):
        return Handling.JUDGE
    return Handling.REMEMBER if api.memos is not None else Handling.PASS


def slices(data: bytes) -> Iterator[bytes]:
    """``data`` in pieces that end at an event's end where one can: the first event on
    its own, then about :data:`SLICE_BYTES` at a time. The relay's output is the same
    for any split; this decides only when it goes out. Everything the upstream sent at
    once arrives in one piece, and relaying it whole before sending a byte would hold the
    first event back by the time the rest takes; sending after every event would cost a
    write per event."""
    size = len(data)
    if size <= SLICE_BYTES and data.find(b"\n\n", 0, size - 2) < 0:
        if data:
            yield data  # at most one event: the usual case on a real stream
        return
    start = 0
    step = 0
    while start < size:
        cut = data.find(b"\n\n", start + step)
        end = size if cut < 0 else cut + 2
        yield data[start:end]
        start = end
        step = SLICE_BYTES
