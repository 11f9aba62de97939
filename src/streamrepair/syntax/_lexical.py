"""Lexical tables of the assembler: the character classes and patterns it scans with, and
the classification of a finished token (number, literal, bare word).

The fast lanes here (``WHOLE_*``, ``*_LANE``) only ever match text that the character-level
path would read the same way; they exist so that common, well-formed stretches are consumed
in C.
"""

from __future__ import annotations

import json.decoder
import re
from collections.abc import Callable
from typing import Any

from ..results import RepairKind

WS = re.compile(r"[ \t\n\r]+")
DQ_RUN = re.compile(r'[^"\\\x00-\x1f\ud800-\udfff]+')
# Plain characters and simple escapes (no \u) of a double-quoted string.
RAW_SURROGATE = re.compile("[\ud800-\udfff]")
SQ_RUN = re.compile(r"[^'\\\x00-\x1f\ud800-\udfff]+")
TOKEN_RUN = re.compile(r"[A-Za-z0-9_.+\-]+")
# Fast lanes: a whole number or literal, or a whole string without escapes or control
# characters, that lies inside one delta. They give exactly what the character-level path
# would (which handles everything else, including the same text split across deltas).
# Numbers stop at 100 digits here so int() never meets Python's digit limit on this lane.
SCALAR = r"-?(?:0|[1-9][0-9]{0,99})(?:\.[0-9]{1,100})?(?:[eE][+-]?[0-9]{1,4})?|true|false|null"
PLAIN_STRING = r'"[^"\\\x00-\x1f\ud800-\udfff]*"'
WHOLE_SCALAR = re.compile(f"({SCALAR})(?=[ \t\n\r,\\]}}])")
WHOLE_STRING = re.compile(r'"([^"\\\x00-\x1f\ud800-\udfff]*)"')
# A whole number short enough for int() and the scalar lanes.
NUMBER_LANE = re.compile(r"-?(?:0|[1-9][0-9]{0,99})(?:\.[0-9]{1,100})?(?:[eE][+-]?[0-9]{1,4})?")
# After a comma: one more whole member of an array or object, followed by a separator.
ARRAY_LANE = re.compile(f",[ \t\n\r]*({SCALAR}|{PLAIN_STRING})(?=[ \t\n\r]*[,\\]}}])")
OBJECT_LANE = re.compile(
    f',[ \t\n\r]*"([^"\\\\\\x00-\\x1f\\ud800-\\udfff]*)"[ \t\n\r]*:[ \t\n\r]*'
    f"({SCALAR}|{PLAIN_STRING})(?=[ \t\n\r]*[,\\]}}])"
)
TOKEN_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
HEX = frozenset("0123456789abcdefABCDEF")
FENCE_INFO = re.compile(r"[A-Za-z0-9_+.\-]+")

NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
NUMBER_PREFIX = (
    r"-?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|(?:0|[1-9][0-9]*)(?:\.[0-9]+)?[eE][+-]?[0-9]*)?"
)
# A comma, and a number cut by the end of the delta (possibly nothing of it yet).
ARRAY_TAIL = re.compile(f",[ \t\n\r]*({NUMBER_PREFIX})")
BARE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
UUID_PREFIX = (
    r"[0-9a-fA-F]{0,8}|[0-9a-fA-F]{8}-[0-9a-fA-F]{0,4}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-"
    r"[0-9a-fA-F]{0,4}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{0,4}|"
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{0,12}"
)
LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}
PY_LITERALS: dict[str, Any] = {"True": True, "False": False, "None": None}
ALL_LITERALS = (*LITERALS, *PY_LITERALS)
LITERAL_PREFIX = "|".join(
    "".join(f"(?:{ch}" for ch in word) + ")?" * (len(word) - 1) + ")" for word in ALL_LITERALS
)
# A token at the top level may only become a number or a literal; inside a container it
# may also become a bare word or an unquoted UUID.
TOP_VIABLE = re.compile(f"{NUMBER_PREFIX}|{LITERAL_PREFIX}")
INNER_VIABLE = re.compile(f"{NUMBER_PREFIX}|{UUID_PREFIX}|[A-Za-z_][A-Za-z0-9_.\\-]*")
#: Words that look like values in other languages but have no JSON meaning.
REFUSED_WORDS = frozenset({"NaN", "Infinity", "undefined", "nil"})

ESCAPES = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
KEPT_CONTROLS = frozenset("\n\r\t")
# json's C string decoder (typeshed does not declare it): (text, index) -> (decoded, end).
scanstring: Callable[[str, int], tuple[str, int]] = getattr(json.decoder, "scanstring")  # noqa: B009
CONTROL_NAMES = {"\n": "newline", "\r": "carriage return", "\t": "tab"}


def lane_value(token: str) -> Any:
    """The value of a string or scalar matched by a lane."""
    if token[0] == '"':
        return token[1:-1]
    return scalar(token)


def scalar(token: str) -> Any:
    """The value of a token matched by ``WHOLE_SCALAR``."""
    if token in LITERALS:
        return LITERALS[token]
    if "." in token or "e" in token or "E" in token:
        return float(token)
    return int(token)


def classify(token: str, *, in_container: bool) -> tuple[Any, RepairKind | None] | None:
    """The value of a complete token and the repair reading it needed, or None when it is
    not a value. Only inside a container may a bare word or UUID stand for a string."""
    if token in LITERALS:
        return LITERALS[token], None
    if NUMBER.fullmatch(token):
        try:
            if token.isdigit() or (token[0] == "-" and token[1:].isdigit()):
                return int(token), None
            return float(token), None
        except ValueError:  # more digits than Python's int limit
            return None
    if token in PY_LITERALS:
        return PY_LITERALS[token], RepairKind.PYTHON_LITERAL
    if not in_container or token in REFUSED_WORDS:
        return None
    if any(word.startswith(token) for word in ALL_LITERALS):
        return None  # a cut-short literal such as "tru" is not a word
    if BARE_WORD.fullmatch(token) or UUID.fullmatch(token):
        return token, RepairKind.BARE_WORD
    return None
