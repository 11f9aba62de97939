"""How the proxy runs: :class:`ProxyConfig` and its defaults (``streamrepair serve``'s
options build one; :func:`~.app.create_app` takes it). Reading it needs no part of the
``serve`` extra.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..providers.textcalls import TextCallFormat
from ..syntax.assembler import DEFAULT_MAX_SIZE
from ..telemetry.log import TelemetryLog
from .limits import DEFAULT_MAX_BYTES_IN_FLIGHT, DEFAULT_POOL_SIZE
from .wire import Refusals

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_HEADER_TIMEOUT",
    "DEFAULT_LARGE_BODY_BYTES",
    "DEFAULT_MAX_HEADER_BYTES",
    "DEFAULT_MAX_REQUEST_BYTES",
    "DEFAULT_READ_TIMEOUT",
    "STREAM_ARGUMENTS_HEADER",
    "TEXT_CALLS_HEADER",
    "ProxyConfig",
]

#: Request header that sets text tool calls for one request: a format name, ``auto``, or
#: ``off`` (never sent upstream; overrides :attr:`ProxyConfig.text_tool_calls`).
TEXT_CALLS_HEADER: Final = "x-streamrepair-text-tool-calls"
#: Request header that turns progressive arguments on or off for one request (``on`` or
#: ``off``; never sent upstream; overrides :attr:`ProxyConfig.stream_arguments`).
STREAM_ARGUMENTS_HEADER: Final = "x-streamrepair-stream-arguments"

#: Largest request body accepted (bytes): long agent histories run to megabytes.
DEFAULT_MAX_REQUEST_BYTES: Final = 32 * 2**20
#: Seconds to open a connection to the upstream.
DEFAULT_CONNECT_TIMEOUT: Final = 10.0
#: Seconds without a byte from the upstream before giving up (DeepSeek closes a queued
#: request after 10 minutes; its keep-alive comments count as bytes).
DEFAULT_READ_TIMEOUT: Final = 600.0
#: Most bytes of a request's head (request line and headers) the server reads; more is
#: answered 431 and the connection closed (a 100 MB header was once read for 110 s).
DEFAULT_MAX_HEADER_BYTES: Final = 64 * 1024
#: Seconds a client has to send a request's whole head once its connection is open or
#: its first byte came; then the connection is closed (slowloris).
DEFAULT_HEADER_TIMEOUT: Final = 10.0
#: Request bodies from this size up are parsed, fixed and re-encoded off the event loop,
#: so that one long history does not stall every other stream (``bodies.py``).
DEFAULT_LARGE_BODY_BYTES: Final = 512 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class ProxyConfig:
    """How the proxy runs. ``upstream`` is the base URL requests are forwarded to
    (``https://api.deepseek.com``, ``https://api.deepseek.com/anthropic``...): the
    request's path is appended (a ``/v1`` that both end and start with is kept once).

    ``token``: when set, every request but ``/healthz`` must carry it, as
    ``Authorization: Bearer``, ``x-api-key`` or ``x-streamrepair-token``; in the first two
    cases it is replaced by ``upstream_key`` (the proxy then holds the upstream's key),
    in the third the client's own auth headers go upstream. ``telemetry`` gets a record
    per judged call.

    ``text_tool_calls`` (``"auto"`` or a :class:`~streamrepair.TextCallFormat` name;
    default None: off) reads tool calls the model wrote as text in streamed replies to
    requests that declare ``tools`` (a server without a tool parser) and sends them as
    calls; a request's ``x-streamrepair-text-tool-calls`` header (a format, ``auto`` or
    ``off``) overrides it for that request.

    ``stream_arguments`` (default False) streams the first tool call's arguments as they
    become final, on Anthropic Messages and Responses (Chat Completions calls are always
    held: no client can be kept from running a half-sent one); a request's
    ``x-streamrepair-stream-arguments`` header (``on`` or ``off``) overrides it.

    Service bounds (``docs/proxy.md``, Operations): ``pool_size`` upstream requests at
    once and ``max_bytes_in_flight`` request body bytes at once (past either, a 503 with
    ``Retry-After``, never a queue); ``max_header_bytes`` and ``header_timeout`` bound a
    request's head (read by the server ``streamrepair serve`` runs, ``server.py``);
    bodies of ``large_body_bytes`` or more are worked on off the event loop.

    ``schemas`` (tool name -> parameter schema, as ``load_schema_files`` reads them) are
    the schemas of tools a request does not list: a call to one of them gets its schema
    rules too (Claude Code's deferred MCP tools, which are not in the request's
    ``tools``). A tool the request lists keeps the request's own schema. A call to a
    name in neither gets the syntax repairs only, and is sent like any other.

    ``refusals`` says how a call the proxy will not send as runnable (cut off,
    unrepairable, invalid against its schema after repairs, ambiguous escapes) reaches
    the client: ``Refusals.CALL`` (default) as a call to a tool no harness has, which
    each answers with its own error so that its loop goes on and the model tries again
    (the next request gets the call back as the model wrote it, answered with the
    proxy's guidance); ``Refusals.NOTICE`` as a text notice that ends the turn.
    ``refuse_ambiguous_escapes`` (default True) refuses a call whose strings hold escapes
    that their raw backslashes make a guess (``docs/repairs.md``); False sends it with
    JSON's reading, as the library reads it.
    """

    upstream: str
    token: str | None = None
    upstream_key: str | None = None
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    max_argument_chars: int = DEFAULT_MAX_SIZE
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    pool_size: int = DEFAULT_POOL_SIZE
    max_bytes_in_flight: int = DEFAULT_MAX_BYTES_IN_FLIGHT
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    large_body_bytes: int = DEFAULT_LARGE_BODY_BYTES
    access_log: bool = True
    telemetry: TelemetryLog | None = None
    text_tool_calls: str | None = None
    stream_arguments: bool = False
    schemas: Mapping[str, Mapping[str, Any]] | None = None
    refusals: Refusals = Refusals.CALL
    refuse_ambiguous_escapes: bool = True

    def __post_init__(self) -> None:
        if not self.upstream.startswith(("http://", "https://")):
            raise ValueError(f"upstream must be an http(s) URL, not {self.upstream!r}")
        if self.text_tool_calls is not None:
            TextCallFormat.parse(self.text_tool_calls)  # ValueError names the known ones
        if not isinstance(self.refusals, Refusals):
            raise TypeError(f"refusals must be a Refusals, not {self.refusals!r}")
        if self.max_request_bytes < 1 or self.max_argument_chars < 1:
            raise ValueError("max_request_bytes and max_argument_chars must be positive")
        if self.pool_size < 1 or self.max_header_bytes < 1024 or self.header_timeout <= 0:
            raise ValueError(
                "pool_size must be positive, max_header_bytes at least 1024 and "
                "header_timeout positive"
            )
        if self.max_bytes_in_flight < self.max_request_bytes:
            raise ValueError(
                f"max_bytes_in_flight ({self.max_bytes_in_flight}) must be at least "
                f"max_request_bytes ({self.max_request_bytes}): a body of the largest "
                "size accepted could never be read"
            )
