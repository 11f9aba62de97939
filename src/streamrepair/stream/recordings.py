"""Recorded streams: the feedable pieces of a recording's bytes, read as they come.

:class:`RecordingReader` is a push core like the others: ``feed(bytes)`` returns the pieces
to hand to :class:`~streamrepair.ToolCallStream` so far, ``finish()`` the rest. The drivers
read a recording a block at a time through it, so replaying a file of any size keeps one
block and the stream's own state in memory, never the whole file or all its events.

What it gives:

* a txtar file (``coder/aibridge`` fixtures; named ``*.txtar``, or with a
  ``-- streaming --`` line in its first :data:`SNIFF_BYTES`): the bytes of its
  ``-- streaming --`` section, up to the next ``-- name --`` line; a recorded HTTP error
  response in that section (``HTTP/2.0 400 ...`` then a JSON body) is one error chunk;
* anything else (SSE, or one JSON chunk per line): the bytes as they are, for the core to
  sniff.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_ERROR_RESPONSE_BYTES", "SNIFF_BYTES", "RecordingReader", "load_recording"]

#: How much of a recording not named ``*.txtar`` is looked at for a ``-- streaming --``
#: line before it is taken as a plain stream.
SNIFF_BYTES = 64 * 1024
#: Longest recorded HTTP error response kept whole (it is parsed as one JSON body).
MAX_ERROR_RESPONSE_BYTES = 1024 * 1024

_MARKER = b"-- streaming --\n"
_NEXT = b"\n-- "

_Piece = bytes | Mapping[str, Any]


class RecordingReader:
    """The bytes of a recording in, feedable pieces out (see the module docstring).

    ``name`` is the recording's file name (a ``.txtar`` suffix says it is a txtar file).
    Nothing is kept but what is needed to recognize a marker cut by a block boundary,
    the first block while the format is not known, and a recorded error response.
    """

    __slots__ = ("_buffer", "_state")

    def __init__(self, *, name: str = "") -> None:
        # sniff -> plain, or txtar: seek -> head -> (stream | error) -> done
        self._state = "seek" if name.endswith(".txtar") else "sniff"
        self._buffer = bytearray()

    def feed(self, data: bytes | bytearray | memoryview) -> list[_Piece]:
        """The pieces that ``data`` (the next bytes of the recording) completes."""
        state = self._state
        if state == "plain":
            return [bytes(data)] if data else []
        if state == "done" or not data:
            return []
        self._buffer += data
        return self._advance(final=False)

    def finish(self) -> list[_Piece]:
        """The recording ended: the pieces still held."""
        out = self._advance(final=True)
        self._state = "done"
        self._buffer = bytearray()
        return out

    def _advance(self, *, final: bool) -> list[_Piece]:
        out: list[_Piece] = []
        buffer = self._buffer
        if self._state in ("done", "plain"):
            return out
        if self._state == "sniff":
            if buffer.find(_MARKER, 0, SNIFF_BYTES + len(_MARKER) - 1) >= 0:
                self._state = "seek"
            elif len(buffer) >= SNIFF_BYTES or final:
                self._state = "plain"
                self._buffer = bytearray()
                return [bytes(buffer)] if buffer else []
            else:
                return out
        if self._state == "seek":
            start = buffer.find(_MARKER)
            if start < 0:
                del buffer[: max(len(buffer) - len(_MARKER) + 1, 0)]  # keep a cut marker
                return out
            del buffer[: start + len(_MARKER)]
            self._state = "head"
        if self._state == "head":
            if len(buffer) < 5 and not final:
                return out
            self._state = "error" if buffer.startswith(b"HTTP/") else "stream"
        end = buffer.find(_NEXT)
        if self._state == "stream":
            if end >= 0:
                out.append(bytes(buffer[: end + 1]))
                self._state = "done"
                buffer.clear()
            else:
                keep = len(_NEXT) - 1 if not final else 0  # a cut "\n-- " stays
                if len(buffer) > keep:
                    out.append(bytes(buffer[: len(buffer) - keep]))
                    del buffer[: len(buffer) - keep]
            return out
        # a recorded error response: kept whole (bounded), then one error chunk
        if end >= 0 or final or len(buffer) > MAX_ERROR_RESPONSE_BYTES:
            section = bytes(buffer[: end + 1] if end >= 0 else buffer)
            self._state = "done"
            buffer.clear()
            out.append(_error_chunk(section))
        return out


def _error_chunk(section: bytes) -> Mapping[str, Any]:
    _, _, body = section.partition(b"\n\n")
    try:
        payload = json.loads(body)
    except ValueError:
        payload = None
    status = section.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    if isinstance(payload, dict) and "error" in payload:
        return payload
    return {"error": {"message": status, "type": "http_error"}}


def load_recording(data: bytes, *, name: str = "") -> list[bytes | Mapping[str, Any]]:
    """The feedable pieces of a recorded stream's bytes, all at once (what a
    :class:`RecordingReader` gives for the whole of ``data``, its bytes joined)."""
    reader = RecordingReader(name=name)
    pieces = reader.feed(data)
    pieces += reader.finish()
    out: list[bytes | Mapping[str, Any]] = []
    for piece in pieces:
        if out and isinstance(piece, bytes) and isinstance(out[-1], bytes):
            out[-1] += piece
        else:
            out.append(piece)
    return out
