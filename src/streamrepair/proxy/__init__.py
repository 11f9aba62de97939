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
  :mod:`.shared_store`: :class:`SqliteStore` (several workers, one file);
* :mod:`.metrics`: :class:`ProxyMetrics` (``/metrics``);
* :mod:`.config`: :class:`ProxyConfig`; :mod:`.app`: :func:`create_app` and
  :mod:`.service`: :class:`ServiceApp`, the ASGI app (both need the ``serve`` extra);
  :mod:`.limits`: :class:`Limits`, the service limits; :mod:`.bodies`: large request
  bodies off the event loop; :mod:`.server`: :func:`serve`, uvicorn with bounded heads
  in one process or several (:mod:`.workers`).

The names are imported on first use.
"""

from __future__ import annotations

import typing as _typing

from .._lazy import attach

if _typing.TYPE_CHECKING:
    from .anthropic import AnthropicRelay as AnthropicRelay
    from .app import create_app as create_app
    from .bodies import dumps_stepwise as dumps_stepwise
    from .bodies import encode_json as encode_json
    from .bodies import loads_stepwise as loads_stepwise
    from .bodies import off_loop as off_loop
    from .bodies import parse_json as parse_json
    from .chat import ChatRelay as ChatRelay
    from .config import DEFAULT_CONNECT_TIMEOUT as DEFAULT_CONNECT_TIMEOUT
    from .config import DEFAULT_HEADER_TIMEOUT as DEFAULT_HEADER_TIMEOUT
    from .config import DEFAULT_LARGE_BODY_BYTES as DEFAULT_LARGE_BODY_BYTES
    from .config import DEFAULT_MAX_HEADER_BYTES as DEFAULT_MAX_HEADER_BYTES
    from .config import DEFAULT_MAX_REQUEST_BYTES as DEFAULT_MAX_REQUEST_BYTES
    from .config import DEFAULT_READ_TIMEOUT as DEFAULT_READ_TIMEOUT
    from .config import STREAM_ARGUMENTS_HEADER as STREAM_ARGUMENTS_HEADER
    from .config import TEXT_CALLS_HEADER as TEXT_CALLS_HEADER
    from .config import ProxyConfig as ProxyConfig
    from .emitters import FIELDS_CACHE_SIZE as FIELDS_CACHE_SIZE
    from .emitters import ArgumentEmitter as ArgumentEmitter
    from .emitters import HeldArguments as HeldArguments
    from .emitters import ProgressiveArguments as ProgressiveArguments
    from .emitters import argument_text as argument_text
    from .emitters import streamable_fields as streamable_fields
    from .fixes import FIXES_HEADER as FIXES_HEADER
    from .fixes import RequestFixes as RequestFixes
    from .fixes import fix_request as fix_request
    from .fixes import referenced_calls as referenced_calls
    from .limits import ADMITTED as ADMITTED
    from .limits import CLIENT_CONNECTIONS as CLIENT_CONNECTIONS
    from .limits import DEFAULT_MAX_BYTES_IN_FLIGHT as DEFAULT_MAX_BYTES_IN_FLIGHT
    from .limits import DEFAULT_POOL_SIZE as DEFAULT_POOL_SIZE
    from .limits import LIMIT_NAMES as LIMIT_NAMES
    from .limits import RESERVED_FILES as RESERVED_FILES
    from .limits import RETRY_AFTER as RETRY_AFTER
    from .limits import ConnectionCount as ConnectionCount
    from .limits import Limit as Limit
    from .limits import Limits as Limits
    from .limits import OpenFileLimit as OpenFileLimit
    from .limits import is_out_of_files as is_out_of_files
    from .limits import raise_open_file_limit as raise_open_file_limit
    from .limits import split_files as split_files
    from .memo import CallMemo as CallMemo
    from .memo import note_dicts as note_dicts
    from .memo import turn_memos as turn_memos
    from .metrics import MAX_LABEL_CHARS as MAX_LABEL_CHARS
    from .metrics import MAX_LABEL_VALUES as MAX_LABEL_VALUES
    from .metrics import ProxyMetrics as ProxyMetrics
    from .positions import Renumbering as Renumbering
    from .relay import MAX_HELD_EVENTS as MAX_HELD_EVENTS
    from .relay import ApiProtocol as ApiProtocol
    from .relay import Relay as Relay
    from .responses import ResponsesRelay as ResponsesRelay
    from .responses import notice_item as notice_item
    from .server import BACKLOG as BACKLOG
    from .server import bind as bind
    from .server import default_workers as default_workers
    from .server import guarded_protocol as guarded_protocol
    from .server import preload as preload
    from .server import serve as serve
    from .service import LIMIT_HEADER as LIMIT_HEADER
    from .service import RequestHandler as RequestHandler
    from .service import ServiceApp as ServiceApp
    from .service import StreamBody as StreamBody
    from .service import refusal as refusal
    from .shared_store import TOUCH_SECONDS as TOUCH_SECONDS
    from .shared_store import SqliteStore as SqliteStore
    from .shared_store import create_file as create_file
    from .store import DEFAULT_BREAKER_COOLDOWN as DEFAULT_BREAKER_COOLDOWN
    from .store import DEFAULT_BREAKER_THRESHOLD as DEFAULT_BREAKER_THRESHOLD
    from .store import DEFAULT_MAX_CHARS as DEFAULT_MAX_CHARS
    from .store import DEFAULT_MAX_ENTRIES as DEFAULT_MAX_ENTRIES
    from .store import DEFAULT_STORE_TIMEOUT as DEFAULT_STORE_TIMEOUT
    from .store import DEFAULT_TTL as DEFAULT_TTL
    from .store import MEMO_FIXES as MEMO_FIXES
    from .store import UNAVAILABLE_FIXES_HEADER as UNAVAILABLE_FIXES_HEADER
    from .store import BreakerState as BreakerState
    from .store import CircuitBreaker as CircuitBreaker
    from .store import MemoryStore as MemoryStore
    from .store import RedisStore as RedisStore
    from .store import StateStore as StateStore
    from .store import StoreLookup as StoreLookup
    from .store import StoreStats as StoreStats
    from .store import StoreStatus as StoreStatus
    from .store import memo_key as memo_key
    from .store import open_store as open_store
    from .store import unavailable_fixes as unavailable_fixes
    from .tools import usable_tools as usable_tools
    from .tools import with_schemas as with_schemas
    from .upstream import DECODABLE_ENCODINGS as DECODABLE_ENCODINGS
    from .upstream import AiohttpUpstream as AiohttpUpstream
    from .upstream import HttpxUpstream as HttpxUpstream
    from .upstream import UpstreamClient as UpstreamClient
    from .upstream import UpstreamResponse as UpstreamResponse
    from .whole import body_events as body_events
    from .whole import judge_body as judge_body
    from .whole import memos_of_response as memos_of_response
    from .whole import rewrite_body as rewrite_body
    from .wire import NOTICE_PREFIX as NOTICE_PREFIX
    from .wire import REFUSED_TOOL as REFUSED_TOOL
    from .wire import Refusals as Refusals
    from .wire import closing_stop as closing_stop
    from .wire import compact_json as compact_json
    from .wire import notice_text as notice_text
    from .wire import refusal_call as refusal_call
    from .wire import refused_verdicts as refused_verdicts
    from .wire import sse_event as sse_event
    from .workers import PUBLISH_SECONDS as PUBLISH_SECONDS
    from .workers import QUICK_DEATH as QUICK_DEATH
    from .workers import MetricsShare as MetricsShare
    from .workers import merge_pages as merge_pages
    from .workers import supervise as supervise

__all__, __getattr__, __dir__ = attach(__name__, __file__)
