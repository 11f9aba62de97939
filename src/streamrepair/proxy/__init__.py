"""The repairing proxy: ``streamrepair serve --upstream URL``.

A layer above the turn and telemetry layers, below the CLI. One ASGI app (Starlette,
served by uvicorn) forwards every request to one upstream with a pooled aiohttp
session; the streams of Chat Completions, Anthropic Messages and Responses requests go through a
sans-IO :class:`~.relay.Relay` that sends text as it arrives and each tool call as valid,
repaired JSON once it is judged ready, and withholds (with a notice) what was cut off
or cannot be repaired. See ``docs/proxy.md``.

* :mod:`.chat`, :mod:`.anthropic`, :mod:`.responses`: one module per API, with all the
  proxy does differently for it (its relay: :class:`ChatRelay`, ...), each one row of
  the table of APIs (``_table.py``);
* :mod:`.relay`: :class:`Relay` (the shared stream driving and end of a response);
  :mod:`.emitters`: :class:`ArgumentEmitter`, :class:`HeldArguments`,
  :class:`ProgressiveArguments`; :mod:`.wire`: :func:`sse_event`, :func:`notice_text`,
  :func:`closing_stop`; :mod:`.memo`: :class:`CallMemo`;
* :mod:`.whole`: :func:`judge_body` (a non-streamed response judged by the same relay);
* :mod:`.fixes`: :func:`fix_request` (request-side fixes) and :func:`referenced_calls`;
* :mod:`.store`: :class:`MemoryStore`, :class:`RedisStore`, :func:`open_store`;
* :mod:`.metrics`: :class:`ProxyMetrics` (``/metrics``);
* :mod:`.config`: :class:`ProxyConfig`; :mod:`.app`: :func:`create_app` (needs the
  ``serve`` extra).

The names are imported on first use.
"""

from __future__ import annotations

import typing as _typing

from .._lazy import attach

if _typing.TYPE_CHECKING:
    from .anthropic import AnthropicRelay
    from .app import FIXES_HEADER, STREAM_ARGUMENTS_HEADER, TEXT_CALLS_HEADER, create_app
    from .chat import ChatRelay
    from .config import (
        DEFAULT_CONNECT_TIMEOUT,
        DEFAULT_MAX_REQUEST_BYTES,
        DEFAULT_READ_TIMEOUT,
        ProxyConfig,
    )
    from .emitters import (
        FIELDS_CACHE_SIZE,
        ArgumentEmitter,
        HeldArguments,
        ProgressiveArguments,
        argument_text,
        streamable_fields,
    )
    from .fixes import RequestFixes, fix_request, referenced_calls
    from .memo import CallMemo, note_dicts, turn_memos
    from .metrics import MAX_LABEL_VALUES, ProxyMetrics
    from .relay import (
        MAX_HELD_EVENTS,
        ApiProtocol,
        Relay,
        Renumbering,
        usable_tools,
        with_schemas,
    )
    from .responses import ResponsesRelay, notice_item
    from .store import (
        DEFAULT_MAX_CHARS,
        DEFAULT_MAX_ENTRIES,
        DEFAULT_TTL,
        MemoryStore,
        RedisStore,
        StateStore,
        memo_key,
        open_store,
    )
    from .upstream import (
        DECODABLE_ENCODINGS,
        AiohttpUpstream,
        HttpxUpstream,
        UpstreamClient,
        UpstreamResponse,
    )
    from .whole import body_events, judge_body, memos_of_response, rewrite_body
    from .wire import (
        NOTICE_PREFIX,
        closing_stop,
        compact_json,
        notice_text,
        notice_verdicts,
        sse_event,
    )

_EXPORTS: dict[str, str] = {
    "AnthropicRelay": "anthropic",
    "ApiProtocol": "relay",
    "ArgumentEmitter": "emitters",
    "CallMemo": "memo",
    "ChatRelay": "chat",
    "DEFAULT_CONNECT_TIMEOUT": "config",
    "DEFAULT_MAX_CHARS": "store",
    "DEFAULT_MAX_ENTRIES": "store",
    "DEFAULT_MAX_REQUEST_BYTES": "config",
    "DEFAULT_READ_TIMEOUT": "config",
    "DEFAULT_TTL": "store",
    "FIXES_HEADER": "app",
    "TEXT_CALLS_HEADER": "app",
    "STREAM_ARGUMENTS_HEADER": "app",
    "ProgressiveArguments": "emitters",
    "FIELDS_CACHE_SIZE": "emitters",
    "streamable_fields": "emitters",
    "HeldArguments": "emitters",
    "Renumbering": "relay",
    "turn_memos": "memo",
    "MAX_LABEL_VALUES": "metrics",
    "MAX_HELD_EVENTS": "relay",
    "MemoryStore": "store",
    "NOTICE_PREFIX": "wire",
    "ProxyConfig": "config",
    "ProxyMetrics": "metrics",
    "RedisStore": "store",
    "Relay": "relay",
    "RequestFixes": "fixes",
    "ResponsesRelay": "responses",
    "StateStore": "store",
    "argument_text": "emitters",
    "closing_stop": "wire",
    "compact_json": "wire",
    "memos_of_response": "whole",
    "note_dicts": "memo",
    "sse_event": "wire",
    "create_app": "app",
    "fix_request": "fixes",
    "memo_key": "store",
    "notice_text": "wire",
    "notice_verdicts": "wire",
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
    "notice_item": "responses",
    "rewrite_body": "whole",
}

__all__ = [
    "DECODABLE_ENCODINGS",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_ENTRIES",
    "DEFAULT_MAX_REQUEST_BYTES",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_TTL",
    "FIELDS_CACHE_SIZE",
    "FIXES_HEADER",
    "MAX_HELD_EVENTS",
    "MAX_LABEL_VALUES",
    "NOTICE_PREFIX",
    "STREAM_ARGUMENTS_HEADER",
    "TEXT_CALLS_HEADER",
    "AiohttpUpstream",
    "AnthropicRelay",
    "ApiProtocol",
    "ArgumentEmitter",
    "CallMemo",
    "ChatRelay",
    "HeldArguments",
    "HttpxUpstream",
    "MemoryStore",
    "ProgressiveArguments",
    "ProxyConfig",
    "ProxyMetrics",
    "RedisStore",
    "Relay",
    "Renumbering",
    "RequestFixes",
    "ResponsesRelay",
    "StateStore",
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
    "turn_memos",
    "usable_tools",
    "with_schemas",
]

__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__)
