"""Recorded streams: the feedable pieces of a recording's bytes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["load_recording"]


def load_recording(data: bytes, *, name: str = "") -> list[bytes | Mapping[str, Any]]:
    """The feedable pieces of a recorded stream's bytes.

    A txtar file (``coder/aibridge`` fixtures; recognized by a ``-- streaming --`` line)
    gives its ``-- streaming --`` section; a recorded HTTP error response in that section
    (``HTTP/2.0 400 ...`` then a JSON body) gives that body as one error chunk. Anything
    else (SSE, or one JSON chunk per line) is returned as it is, for the core to sniff.
    """
    marker = b"-- streaming --\n"
    if name.endswith(".txtar") or marker in data:
        start = data.find(marker)
        if start < 0:
            return []
        section = data[start + len(marker) :]
        end = section.find(b"\n-- ")
        if end >= 0:
            section = section[: end + 1]
        if section.startswith(b"HTTP/"):
            _, _, body = section.partition(b"\n\n")
            try:
                payload = json.loads(body)
            except ValueError:
                payload = None
            status = section.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
            if isinstance(payload, dict) and "error" in payload:
                return [payload]
            return [{"error": {"message": status, "type": "http_error"}}]
        return [section]
    return [data]
