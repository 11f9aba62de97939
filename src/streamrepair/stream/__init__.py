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
    from ..errors import EventStreamError as EventStreamError
    from ..errors import SSEDecodeError as SSEDecodeError
    from ..errors import SSEError as SSEError
    from ..errors import SSELimitError as SSELimitError
    from .calls import ArgumentCheck as ArgumentCheck
    from .calls import CallProgress as CallProgress
    from .drivers import READ_CHUNK_BYTES as READ_CHUNK_BYTES
    from .drivers import aiter_events as aiter_events
    from .drivers import iter_events as iter_events
    from .eventstream import DEFAULT_MAX_MESSAGE_BYTES as DEFAULT_MAX_MESSAGE_BYTES
    from .eventstream import EventStreamDecoder as EventStreamDecoder
    from .eventstream import EventStreamMessage as EventStreamMessage
    from .eventstream import frame_chunk as frame_chunk
    from .eventstream import looks_like_eventstream as looks_like_eventstream
    from .pipeline import ToolCallStream as ToolCallStream
    from .recordings import MAX_ERROR_RESPONSE_BYTES as MAX_ERROR_RESPONSE_BYTES
    from .recordings import SNIFF_BYTES as SNIFF_BYTES
    from .recordings import RecordingReader as RecordingReader
    from .recordings import load_recording as load_recording
    from .sse import DEFAULT_MAX_EVENT_BYTES as DEFAULT_MAX_EVENT_BYTES
    from .sse import DEFAULT_MAX_LINE_BYTES as DEFAULT_MAX_LINE_BYTES
    from .sse import JSONLinesDecoder as JSONLinesDecoder
    from .sse import SSEDecoder as SSEDecoder
    from .sse import SSEEvent as SSEEvent
    from .tracker import DEFAULT_MAX_TEXT_CHARS as DEFAULT_MAX_TEXT_CHARS
    from .tracker import MAX_BLOCKS as MAX_BLOCKS
    from .tracker import MAX_TOOL_CALLS as MAX_TOOL_CALLS
    from .tracker import ToolCallTracker as ToolCallTracker

__all__, __getattr__, __dir__ = attach(__name__, __file__)
