"""The stream layer: raw bytes or SDK chunks in, trustworthy tool-call events out.

* :mod:`.sse`: :class:`SSEDecoder` and :class:`JSONLinesDecoder` (bytes in any chunking);
* :mod:`.tracker`: :class:`ToolCallTracker`, call identity and the finish policy;
* :mod:`.pipeline`: :class:`ToolCallStream`, the sans-IO core chaining the above;
* :mod:`.drivers`: :func:`iter_events` and :func:`aiter_events` (the only anyio users);
* :mod:`.recordings`: :func:`load_recording`.

The names are imported on first use; jsonschema is loaded only when ``tools`` are given
and a call is checked.
"""

from __future__ import annotations

import typing as _typing

from .._lazy import attach

if _typing.TYPE_CHECKING:
    from ..errors import (
        SSEDecodeError,
        SSEError,
        SSELimitError,
        StreamClosedError,
    )
    from .drivers import (
        READ_CHUNK_BYTES,
        aiter_events,
        iter_events,
    )
    from .pipeline import (
        ToolCallStream,
    )
    from .recordings import (
        load_recording,
    )
    from .sse import (
        DEFAULT_MAX_EVENT_BYTES,
        DEFAULT_MAX_LINE_BYTES,
        JSONLinesDecoder,
        SSEDecoder,
        SSEEvent,
    )
    from .tracker import (
        DEFAULT_MAX_TEXT_CHARS,
        MAX_TOOL_CALLS,
        ArgumentCheck,
        CallPhase,
        CallProgress,
        ToolCallTracker,
    )

_EXPORTS: dict[str, str] = {
    "ArgumentCheck": "tracker",
    "CallPhase": "tracker",
    "CallProgress": "tracker",
    "DEFAULT_MAX_EVENT_BYTES": "sse",
    "DEFAULT_MAX_LINE_BYTES": "sse",
    "DEFAULT_MAX_TEXT_CHARS": "tracker",
    "JSONLinesDecoder": "sse",
    "MAX_TOOL_CALLS": "tracker",
    "READ_CHUNK_BYTES": "drivers",
    "SSEDecodeError": "streamrepair.errors",
    "SSEDecoder": "sse",
    "SSEError": "streamrepair.errors",
    "SSEEvent": "sse",
    "SSELimitError": "streamrepair.errors",
    "StreamClosedError": "streamrepair.errors",
    "ToolCallStream": "pipeline",
    "ToolCallTracker": "tracker",
    "aiter_events": "drivers",
    "iter_events": "drivers",
    "load_recording": "recordings",
}

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_TEXT_CHARS",
    "MAX_TOOL_CALLS",
    "READ_CHUNK_BYTES",
    "ArgumentCheck",
    "CallPhase",
    "CallProgress",
    "JSONLinesDecoder",
    "SSEDecodeError",
    "SSEDecoder",
    "SSEError",
    "SSEEvent",
    "SSELimitError",
    "StreamClosedError",
    "ToolCallStream",
    "ToolCallTracker",
    "aiter_events",
    "iter_events",
    "load_recording",
]

__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__)
