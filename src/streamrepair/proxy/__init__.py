"""The repairing proxy: ``streamrepair serve --upstream URL``.

A layer above the turn and telemetry layers, below the CLI. One ASGI app (Starlette,
served by uvicorn) forwards every request to one upstream with a pooled aiohttp
session; the streams of Chat Completions, Anthropic Messages and Responses requests go through a
sans-IO :class:`~.relay.Relay` that sends text as it arrives and each tool call as valid,
repaired JSON once it is judged ready, and withholds (with a notice) what was cut off
or cannot be repaired. See ``docs/proxy.md``.

* :mod:`.relay`: :class:`Relay`, :class:`ArgumentEmitter`, :class:`HeldArguments`,
  :class:`CallMemo`; :mod:`.chat`, :mod:`.anthropic`, :mod:`.responses`: one relay each;
* :mod:`.whole`: :func:`judge_body` (a non-streamed response judged by the same relay);
* :mod:`.fixes`: :func:`fix_request` (request-side fixes) and :func:`referenced_calls`;
* :mod:`.store`: :class:`MemoryStore`, :class:`RedisStore`, :func:`open_store`;
* :mod:`.metrics`: :class:`ProxyMetrics` (``/metrics``);
* :mod:`.app`: :class:`ProxyConfig` and :func:`create_app` (needs the ``serve`` extra).

The names are imported on first use.
"""

from __future__ import annotations

import typing as _typing

from .._lazy import attach

if _typing.TYPE_CHECKING:
    from .anthropic import AnthropicRelay
    from .app import (
        DEFAULT_CONNECT_TIMEOUT,
        DEFAULT_MAX_REQUEST_BYTES,
        DEFAULT_READ_TIMEOUT,
        FIXES_HEADER,
        STREAM_ARGUMENTS_HEADER,
        TEXT_CALLS_HEADER,
        ProxyConfig,
        create_app,
    )
    from .chat import ChatRelay
    from .fixes import RequestFixes, fix_request, referenced_calls
    from .metrics import MAX_LABEL_CHARS, MAX_LABEL_VALUES, ProxyMetrics
    from .progressive import FIELDS_CACHE_SIZE, ProgressiveArguments, streamable_fields
    from .relay import (
        MAX_HELD_EVENTS,
        NOTICE_PREFIX,
        ApiProtocol,
        ArgumentEmitter,
        CallMemo,
        HeldArguments,
        Relay,
        argument_text,
        closing_stop,
        compact_json,
        memos_of_response,
        note_dicts,
        notice_text,
        notice_verdicts,
        sse_event,
        usable_tools,
        with_schemas,
    )
    from .responses import ResponsesRelay
    from .store import (
        DEFAULT_BREAKER_COOLDOWN,
        DEFAULT_BREAKER_THRESHOLD,
        DEFAULT_MAX_CHARS,
        DEFAULT_MAX_ENTRIES,
        DEFAULT_STORE_TIMEOUT,
        DEFAULT_TTL,
        MEMO_FIXES,
        UNAVAILABLE_FIXES_HEADER,
        BreakerState,
        CircuitBreaker,
        MemoryStore,
        RedisStore,
        StateStore,
        StoreLookup,
        StoreStats,
        StoreStatus,
        memo_key,
        open_store,
        unavailable_fixes,
    )
    from .upstream import (
        DECODABLE_ENCODINGS,
        AiohttpUpstream,
        HttpxUpstream,
        UpstreamClient,
        UpstreamResponse,
    )
    from .whole import body_events, judge_body, notice_item, rewrite_body

_EXPORTS: dict[str, str] = {
    "AnthropicRelay": "anthropic",
    "ApiProtocol": "relay",
    "ArgumentEmitter": "relay",
    "CallMemo": "relay",
    "ChatRelay": "chat",
    "DEFAULT_CONNECT_TIMEOUT": "app",
    "DEFAULT_MAX_CHARS": "store",
    "DEFAULT_MAX_ENTRIES": "store",
    "DEFAULT_MAX_REQUEST_BYTES": "app",
    "DEFAULT_READ_TIMEOUT": "app",
    "DEFAULT_TTL": "store",
    "FIXES_HEADER": "app",
    "TEXT_CALLS_HEADER": "app",
    "STREAM_ARGUMENTS_HEADER": "app",
    "ProgressiveArguments": "progressive",
    "FIELDS_CACHE_SIZE": "progressive",
    "streamable_fields": "progressive",
    "HeldArguments": "relay",
    "MAX_LABEL_VALUES": "metrics",
    "MAX_HELD_EVENTS": "relay",
    "MemoryStore": "store",
    "NOTICE_PREFIX": "relay",
    "ProxyConfig": "app",
    "ProxyMetrics": "metrics",
    "RedisStore": "store",
    "Relay": "relay",
    "RequestFixes": "fixes",
    "ResponsesRelay": "responses",
    "StateStore": "store",
    "DEFAULT_BREAKER_COOLDOWN": "store",
    "DEFAULT_BREAKER_THRESHOLD": "store",
    "DEFAULT_STORE_TIMEOUT": "store",
    "MEMO_FIXES": "store",
    "UNAVAILABLE_FIXES_HEADER": "store",
    "BreakerState": "store",
    "CircuitBreaker": "store",
    "StoreLookup": "store",
    "StoreStats": "store",
    "StoreStatus": "store",
    "unavailable_fixes": "store",
    "MAX_LABEL_CHARS": "metrics",
    "argument_text": "relay",
    "closing_stop": "relay",
    "compact_json": "relay",
    "memos_of_response": "relay",
    "note_dicts": "relay",
    "sse_event": "relay",
    "create_app": "app",
    "fix_request": "fixes",
    "memo_key": "store",
    "notice_text": "relay",
    "notice_verdicts": "relay",
    "open_store": "store",
    "referenced_calls": "fixes",
    "usable_tools": "relay",
    "with_schemas": "relay",
    "DECODABLE_ENCODINGS": "upstream",
    "AiohttpUpstream": "upstream",
    "HttpxUpstream": "upstream",
    "UpstreamClient": "upstream",
    "UpstreamResponse": "upstream",
    "body_events": "whole",
    "judge_body": "whole",
    "notice_item": "whole",
    "rewrite_body": "whole",
}

__all__ = [
    "DECODABLE_ENCODINGS",
    "DEFAULT_BREAKER_COOLDOWN",
    "DEFAULT_BREAKER_THRESHOLD",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_ENTRIES",
    "DEFAULT_MAX_REQUEST_BYTES",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_STORE_TIMEOUT",
    "DEFAULT_TTL",
    "FIELDS_CACHE_SIZE",
    "FIXES_HEADER",
    "MAX_HELD_EVENTS",
    "MAX_LABEL_CHARS",
    "MAX_LABEL_VALUES",
    "MEMO_FIXES",
    "NOTICE_PREFIX",
    "STREAM_ARGUMENTS_HEADER",
    "TEXT_CALLS_HEADER",
    "UNAVAILABLE_FIXES_HEADER",
    "AiohttpUpstream",
    "AnthropicRelay",
    "ApiProtocol",
    "ArgumentEmitter",
    "BreakerState",
    "CallMemo",
    "ChatRelay",
    "CircuitBreaker",
    "HeldArguments",
    "HttpxUpstream",
    "MemoryStore",
    "ProgressiveArguments",
    "ProxyConfig",
    "ProxyMetrics",
    "RedisStore",
    "Relay",
    "RequestFixes",
    "ResponsesRelay",
    "StateStore",
    "StoreLookup",
    "StoreStats",
    "StoreStatus",
    "UpstreamClient",
    "UpstreamResponse",
    "argument_text",
    "body_events",
    "closing_stop",
    "compact_json",
    "create_app",
    "fix_request",
    "judge_body",
    "memo_key",
    "memos_of_response",
    "note_dicts",
    "notice_item",
    "notice_text",
    "notice_verdicts",
    "open_store",
    "referenced_calls",
    "rewrite_body",
    "sse_event",
    "streamable_fields",
    "unavailable_fixes",
    "usable_tools",
    "with_schemas",
]

__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__)
