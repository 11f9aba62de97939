"""Write AWS event-stream frames (``application/vnd.amazon.eventstream``) for the tests and
the fixtures: ``<name>.frames.jsonl`` (one frame per line: ``{"headers": {...},
"payload": {...}}``, every header a string) -> ``<name>.eventstream``.

``python tests/eventstream_frames.py`` rewrites every ``fixtures/sse/*.eventstream`` from
its frames; ``tests/test_eventstream.py`` checks that the committed bytes are what the
frames give, and (with botocore installed) that botocore decodes them to the same frames.
This encoder is written from the framing's description, not from the decoder it tests.
"""

from __future__ import annotations

import binascii
import json
import struct
import sys
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sse"


def header(name: str, value: str) -> bytes:
    """One string header (type 7)."""
    raw_name, raw_value = name.encode("utf-8"), value.encode("utf-8")
    return bytes([len(raw_name)]) + raw_name + struct.pack("!BH", 7, len(raw_value)) + raw_value


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One message: prelude (lengths, CRC32 of them), headers, payload, CRC32 of it all."""
    raw_headers = b"".join(header(k, v) for k, v in headers.items())
    lengths = struct.pack("!II", 16 + len(raw_headers) + len(payload), len(raw_headers))
    body = lengths + struct.pack("!I", binascii.crc32(lengths)) + raw_headers + payload
    return body + struct.pack("!I", binascii.crc32(body))


def payload_bytes(payload: Any) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def read_frames(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def encode(frames: list[dict[str, Any]]) -> bytes:
    return b"".join(frame(f["headers"], payload_bytes(f["payload"])) for f in frames)


def main() -> int:
    for source in sorted(FIXTURES.glob("*.frames.jsonl")):
        target = source.with_name(source.name.split(".")[0] + ".eventstream")
        target.write_bytes(encode(read_frames(source)))
        print(f"wrote {target.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
