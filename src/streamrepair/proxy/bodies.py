"""Request bodies parsed, fixed and encoded again without stalling the event loop.

Parsing a 10 MiB history, fixing it and encoding it again on the event loop froze every
other stream of the process for 166-198 ms (30 MiB: about 650 ms; issue 22). A body of
``large`` bytes or more is therefore worked on in a worker thread (:func:`off_loop`).
A thread alone is not enough: ``json.loads`` and ``json.dumps`` are single C calls that
hold the interpreter lock until they are done, so the event loop would wait for them
all the same. Here they are cut at the history: :func:`loads_stepwise` parses a
top-level object one member at a time, and the items of its arrays one at a time, and
:func:`dumps_stepwise` encodes them one at a time, so that the lock changes hands between
items (the interpreter's switch interval, 5 ms) and the event loop runs in between.

Both give exactly what ``json.loads`` and ``json.dumps(value, ensure_ascii=False,
separators=(",", ":"))`` give (the same C scanner and encoder, item by item; tested
against them): the same values, duplicate keys and all, and the same errors, because any
input the stepwise parser does not accept is handed to ``json.loads`` whole.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable
from json import decoder as _json_decoder
from typing import Any, Final, TypeVar

import anyio.to_thread

__all__ = ["dumps_stepwise", "encode_json", "loads_stepwise", "off_loop", "parse_json"]

_T = TypeVar("_T")
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")  # json.decoder's
#: Bytes decoded at a time (about a millisecond's work).
_SLICE: Final = 1 << 20
#: The C string scanner json's decoder uses (not in typeshed's json.decoder).
_scanstring: Final[Callable[[str, int, bool], tuple[str, int]]] = _json_decoder.scanstring  # type: ignore[attr-defined]


async def off_loop(large: bool, work: Callable[..., _T], *args: Any) -> _T:
    """``work(*args)``: in a worker thread when ``large``, else here."""
    if not large:
        return work(*args)
    return await anyio.to_thread.run_sync(work, *args)


async def parse_json(body: bytes, *, large: bool) -> Any:
    """``json.loads(body)``, stepwise in a worker thread when ``large``. Raises what
    ``json.loads`` raises."""
    if not large:
        return json.loads(body)
    return await anyio.to_thread.run_sync(loads_stepwise, body)


async def encode_json(value: Any, *, large: bool) -> bytes:
    """``value`` as compact UTF-8 JSON (non-ASCII characters as they are), stepwise in a
    worker thread when ``large``."""
    if not large:
        return _ENCODER.encode(value).encode("utf-8")
    return await anyio.to_thread.run_sync(dumps_stepwise, value)


def loads_stepwise(data: bytes | str) -> Any:
    """``json.loads(data)``, with a top-level object parsed one member, and the items of
    its top-level arrays one item, at a time (module docstring)."""
    try:
        text = data if isinstance(data, str) else _decode(data)
        return _object(text)
    except (ValueError, RecursionError, IndexError):
        return json.loads(data)  # the very error json.loads gives, or its value


def dumps_stepwise(value: Any) -> bytes:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` in UTF-8, with a
    top-level object's members, and the items of its top-level arrays, encoded one at a
    time (module docstring)."""
    encode = _ENCODER.encode
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        return encode(value).encode("utf-8")
    parts: list[bytes] = []  # encoded one by one: one large encode would keep the lock
    for key, member in value.items():
        if parts:
            parts.append(b",")
        parts.append(f"{encode(key)}:".encode())
        if isinstance(member, list):
            items = [encode(item).encode("utf-8") for item in member]
            parts += (b"[", b",".join(items), b"]")
        else:
            parts.append(encode(member).encode("utf-8"))
    return b"{" + b"".join(parts) + b"}"


def _decode(data: bytes) -> str:
    """``data`` decoded as ``json.loads`` decodes it, a slice at a time (a 30 MiB body
    decoded in one call keeps the interpreter lock for tens of milliseconds)."""
    decoder = codecs.getincrementaldecoder(json.detect_encoding(data))("surrogatepass")
    view = memoryview(data)
    pieces = [decoder.decode(view[at : at + _SLICE]) for at in range(0, len(data), _SLICE)]
    pieces.append(decoder.decode(b"", True))
    return "".join(pieces)


def _skip(text: str, at: int) -> int:
    """The index of the first character at or after ``at`` that is not whitespace."""
    found = _WHITESPACE.match(text, at)
    return found.end() if found is not None else at


def _object(text: str) -> Any:
    skip = _skip
    decode = json.JSONDecoder().raw_decode  # one per parse: its key memo is its own
    at = skip(text, 0)
    if text[at : at + 1] != "{":
        raise ValueError("not an object")  # parsed whole by json.loads
    out: dict[str, Any] = {}
    at = skip(text, at + 1)
    if text[at : at + 1] == "}":
        at += 1
    else:
        while True:
            if text[at : at + 1] != '"':
                raise ValueError("expected a key")
            key, at = _scanstring(text, at + 1, True)
            at = skip(text, at)
            if text[at : at + 1] != ":":
                raise ValueError("expected ':'")
            at = skip(text, at + 1)
            if text[at : at + 1] == "[":
                out[key], at = _array(text, at, decode)
            else:
                out[key], at = decode(text, at)
            at = skip(text, at)
            mark = text[at : at + 1]
            if mark == ",":
                at = skip(text, at + 1)
                continue
            if mark == "}":
                at += 1
                break
            raise ValueError("expected ',' or '}'")
    if skip(text, at) != len(text):
        raise ValueError("extra data")
    return out


def _array(
    text: str, at: int, decode: Callable[[str, int], tuple[Any, int]]
) -> tuple[list[Any], int]:
    skip = _skip
    items: list[Any] = []
    at = skip(text, at + 1)
    if text[at : at + 1] == "]":
        return items, at + 1
    while True:
        item, at = decode(text, at)
        items.append(item)
        at = skip(text, at)
        mark = text[at : at + 1]
        if mark == ",":
            at = skip(text, at + 1)
            continue
        if mark == "]":
            return items, at + 1
        raise ValueError("expected ',' or ']'")
