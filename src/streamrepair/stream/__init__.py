"""The stream layer: raw bytes or SDK chunks in, trustworthy tool-call events out.

* :mod:`.sse`: :class:`SSEDecoder` and :class:`JSONLinesDecoder` (bytes in any chunking);
* :mod:`.eventstream`: :class:`EventStreamDecoder` (AWS's binary event stream, Bedrock);
* :mod:`.tracker`: :class:`ToolCallTracker`, call identity and the finish policy;
* :mod:`.pipeline`: :class:`ToolCallStream`, the sans-IO core chaining the above;
* :mod:`.drivers`: :func:`iter_events` and :func:`aiter_events` (the only anyio users);
* :mod:`.recordings`: :class:`RecordingReader` and :func:`load_recording` (recorded
  streams, read a block at a time).

The names are imported on first use; jsonschema is loaded only when ``tools`` are given
and a call is checked.
"""

from __future__ import annotations

import typing as _typing

from .._lazy import attach

if _typing.TYPE_CHECKING:
    from ..errors import (
        EventStreamError,
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
    from .eventstream import (
        DEFAULT_MAX_MESSAGE_BYTES,
        EventStreamDecoder,
        EventStreamMessage,
        frame_chunk,
        looks_like_eventstream,
    )
    from .pipeline import (
        ToolCallStream,
    )
    from .recordings import (
        MAX_ERROR_RESPONSE_BYTES,
        SNIFF_BYTES,
        RecordingReader,
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
        MAX_BLOCKS,
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
    "DEFAULT_MAX_MESSAGE_BYTES": "eventstream",
    "DEFAULT_MAX_LINE_BYTES": "sse",
    "DEFAULT_MAX_TEXT_CHARS": "tracker",
    "EventStreamDecoder": "eventstream",
    "EventStreamError": "streamrepair.errors",
    "EventStreamMessage": "eventstream",
    "JSONLinesDecoder": "sse",
    "MAX_BLOCKS": "tracker",
    "MAX_ERROR_RESPONSE_BYTES": "recordings",
    "MAX_TOOL_CALLS": "tracker",
    "READ_CHUNK_BYTES": "drivers",
    "RecordingReader": "recordings",
    "SNIFF_BYTES": "recordings",
    "SSEDecodeError": "streamrepair.errors",
    "SSEDecoder": "sse",
    "SSEError": "streamrepair.errors",
    "SSEEvent": "sse",
    "SSELimitError": "streamrepair.errors",
    "StreamClosedError": "streamrepair.errors",
    "ToolCallStream": "pipeline",
    "ToolCallTracker": "tracker",
    "aiter_events": "drivers",
    "frame_chunk": "eventstream",
    "iter_events": "drivers",
    "load_recording": "recordings",
    "looks_like_eventstream": "eventstream",
}

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_MAX_TEXT_CHARS",
    "MAX_BLOCKS",
    "MAX_ERROR_RESPONSE_BYTES",
    "MAX_TOOL_CALLS",
    "READ_CHUNK_BYTES",
    "SNIFF_BYTES",
    "ArgumentCheck",
    "CallPhase",
    "CallProgress",
    "EventStreamDecoder",
    "EventStreamError",
    "EventStreamMessage",
    "JSONLinesDecoder",
    "RecordingReader",
    "SSEDecodeError",
    "SSEDecoder",
    "SSEError",
    "SSEEvent",
    "SSELimitError",
    "StreamClosedError",
    "ToolCallStream",
    "ToolCallTracker",
    "aiter_events",
    "frame_chunk",
    "iter_events",
    "load_recording",
    "looks_like_eventstream",
]

__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__)
