"""Lexical tables of the assembler: the character classes and patterns it scans with, and
the classification of a finished token (number, literal, bare word).

The fast lanes here (``WHOLE_*``, ``*_LANE``) only ever match text that the character-level
path would read the same way; they exist so that common, well-formed stretches are consumed
in C.
"""

from __future__ import annotations

import json.decoder
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final

from ..results import RepairKind

#: Most digits an integer may have (Python's default int limit, so ``json.loads`` under
#: the default setting agrees). The verdict never depends on ``sys.set_int_max_str_digits``:
#: an integer of at most this many digits is read whatever the setting, a longer one is
#: refused whatever the setting (reading one costs time quadratic in its length).
MAX_INTEGER_DIGITS: Final = 4300

WS: Final = re.compile(r"[ \t\n\r]+")
DQ_RUN: Final = re.compile(r'[^"\\\x00-\x1f\ud800-\udfff]+')
# Plain characters and simple escapes (no \u) of a double-quoted string.
RAW_SURROGATE: Final = re.compile("[\ud800-\udfff]")
SQ_RUN: Final = re.compile(r"[^'\\\x00-\x1f\ud800-\udfff]+")
TOKEN_RUN: Final = re.compile(r"[A-Za-z0-9_.+\-]+")
# Fast lanes: a whole number or literal, or a whole string without escapes or control
# characters, that lies inside one delta. They give exactly what the character-level path
# would (which handles everything else, including the same text split across deltas).
# Numbers stop at 100 digits here so int() never meets Python's digit limit on this lane,
# and exponents at two digits so no number on a lane can overflow a float (< 1e200). The
# parts of a number are atomic groups and possessive repeats: a lane's match must end at a
# separator, so giving digits back never helps, and not keeping the places to backtrack to
# halves the time of a match.
SCALAR = r"-?(?>0|[1-9][0-9]{0,99}+)(?>\.[0-9]{1,100}+)?(?>[eE][+-]?+[0-9]{1,2}+)?|true|false|null"
PLAIN_STRING = r'"[^"\\\x00-\x1f\ud800-\udfff]*+"'
PLAIN_TEXT = r'[^"\\\x00-\x1f\ud800-\udfff]*+'
WHOLE_SCALAR: Final = re.compile(f"({SCALAR})(?=[ \t\n\r,\\]}}])")
WHOLE_STRING: Final = re.compile(r'"([^"\\\x00-\x1f\ud800-\udfff]*)"')
# A number that stays one whatever digits are appended (no exponent, no leading zero).
GROWS_BY_DIGITS: Final = re.compile(r"-?(?:[1-9][0-9]*+(?:\.[0-9]*+)?|0\.[0-9]*+)")
# A whole number short enough for int() and the scalar lanes.
NUMBER_LANE: Final = re.compile(
    r"-?(?:0|[1-9][0-9]{0,99})(?:\.[0-9]{1,100})?(?:[eE][+-]?[0-9]{1,2})?"
)
# An object's member as far as the delta holds it: its key, then its colon, then its value
# when the value is whole (a scalar or a plain string followed by a separator). After a
# comma (OBJECT_LANE) or where a key is expected (KEY_MEMBER).
_MEMBER = (
    f'"({PLAIN_TEXT})"(?:[ \t\n\r]*(:)[ \t\n\r]*'
    f"(?:({SCALAR}|{PLAIN_STRING})(?=[ \t\n\r]*[,\\]}}]))?)?"
)
OBJECT_LANE: Final = re.compile(",[ \t\n\r]*" + _MEMBER)
KEY_MEMBER: Final = re.compile(_MEMBER)
TOKEN_START: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
NUMBER_START: Final = frozenset("0123456789-")
# An unquoted key: an identifier as JavaScript writes one (letters, digits, _ and $).
KEY_START: Final = re.compile(r"[^\W\d]|\$")
KEY_RUN: Final = re.compile(r"[\w$]+")
HEX: Final = frozenset("0123456789abcdefABCDEF")
FENCE_INFO: Final = re.compile(r"[A-Za-z0-9_+.\-]+")

NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
NUMBER_PREFIX = (
    r"-?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|(?:0|[1-9][0-9]*)(?:\.[0-9]+)?[eE][+-]?[0-9]*)?"
)
# The longest prefix of a text that can still begin a number (the exponent alternative
# first: Python's re takes the first alternative that matches, not the longest).
NUMBER_PREFIX_LONGEST: Final = re.compile(
    r"-?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]+)?[eE][+-]?[0-9]*|(?:0|[1-9][0-9]*)(?:\.[0-9]*)?)?"
)
# After a comma in an array: the next item when it is whole (a plain string's text, or a
# scalar, followed by a separator), or the number the delta ends in (possibly nothing of
# it yet: the delta ends after the comma).
ARRAY_LANE: Final = re.compile(
    f',[ \t\n\r]*+(?:"({PLAIN_TEXT})"(?=[ \t\n\r]*[,\\]}}])|({SCALAR})(?=[ \t\n\r]*[,\\]}}])'
    f"|({NUMBER_PREFIX})\\Z)"
)
BARE_WORD: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
UUID: Final = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
UUID_PREFIX = (
    r"[0-9a-fA-F]{0,8}|[0-9a-fA-F]{8}-[0-9a-fA-F]{0,4}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-"
    r"[0-9a-fA-F]{0,4}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{0,4}|"
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{0,12}"
)
LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}
PY_LITERALS: dict[str, Any] = {"True": True, "False": False, "None": None}
# Any letter case of a JSON or Python literal spells that literal (FALSE, Null, none).
CASELESS_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None, "none": None}
LITERAL_PREFIX = (
    "(?i:"
    + "|".join(
        "".join(f"(?:{ch}" for ch in word) + ")?" * (len(word) - 1) + ")"
        for word in CASELESS_LITERALS
    )
    + ")"
)
# A token at the top level may only become a number or a literal; inside a container it
# may also become a bare word or an unquoted UUID.
TOP_VIABLE: Final = re.compile(f"{NUMBER_PREFIX}|{LITERAL_PREFIX}")
INNER_VIABLE: Final = re.compile(f"{NUMBER_PREFIX}|{UUID_PREFIX}|[A-Za-z_][A-Za-z0-9_.\\-]*")
UUID_VIABLE: Final = re.compile(UUID_PREFIX)
#: Words that look like values in other languages but have no JSON meaning (any case).
REFUSED_WORDS: Final = frozenset({"nan", "inf", "infinity", "undefined", "nil"})
# A number whose exponent can only grow: more digits never bring it back in range.
_POSITIVE_EXPONENT: Final = re.compile(r"[eE]\+?[0-9]+")

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
# The control characters JSON's simple escapes produce; in a string that also shows a raw
# backslash they may have been raw backslashes (C:\new), and this reads them back so.
CONTROL_ESCAPES: Final = re.compile("[\b\f\n\r\t]")
# A run of \uXXXX escapes.
UNICODE_RUN: Final = re.compile(r"(?:\\u[0-9a-fA-F]{4})+")
# A \u escape of a control character (and, more rarely, text that only looks like one).
CONTROL_U: Final = re.compile(r"\\u00[01][0-9a-fA-F]")
LITERAL_CONTROLS: Final = str.maketrans(
    {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
)
# json's C string decoder (typeshed does not declare it): (text, index) -> (decoded, end).
scanstring: Callable[[str, int], tuple[str, int]] = getattr(json.decoder, "scanstring")  # noqa: B009
CONTROL_NAMES = {"\n": "newline", "\r": "carriage return", "\t": "tab"}
# The last word of a key that names a file system path (file_path, filePath, dir, cwd).
_KEY_WORDS: Final = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
PATH_WORDS: Final = frozenset(
    {"path", "paths", "file", "files", "filename", "filenames", "filepath", "dir", "dirs"}
    | {"directory", "directories", "folder", "folders", "cwd", "workdir"}
)


def number_signature(prefix: str) -> str:
    """A short text in the same state of the number grammar as ``prefix`` (a number's
    beginning): what may follow one may follow the other. A number longer than
    ``MAX_SCALAR_CHARS`` is checked piece by piece against its signature, never re-read."""
    e = max(prefix.rfind("e"), prefix.rfind("E"))
    if e >= 0:
        tail = prefix[e + 1 :]
        return "1e" if not tail else ("1e+" if tail in ("+", "-") else "1e1")
    dot = prefix.find(".")
    if dot >= 0:
        return "1." if dot == len(prefix) - 1 else "1.1"
    body = prefix[1:] if prefix[:1] == "-" else prefix
    return "-" if not body else ("0" if body == "0" else "1")


def path_like(key: str | None) -> bool:
    """Whether a key names a file system path (its last word: ``path``, ``file``,
    ``dir``, ``folder``, ``cwd`` ...): ``file_path``, ``filePath``, ``notebook_path``."""
    if not key:
        return False
    words = _KEY_WORDS.findall(key[-64:])
    return bool(words) and words[-1].lower() in PATH_WORDS


def overflows(token: str) -> bool:
    """Whether a number token is past a float's range and no digit added to it can bring
    it back (its exponent, positive, can only grow). Such a number is refused like
    ``Infinity``: JSON cannot write it."""
    m = _POSITIVE_EXPONENT.search(token)
    if m is None or m.end() != len(token) or NUMBER.fullmatch(token) is None:
        return False
    return math.isinf(float(token))


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


def long_integer(token: str) -> bool:
    """Whether a token is an integer of more than :data:`MAX_INTEGER_DIGITS` digits."""
    digits = len(token) - (token[:1] == "-")
    return (
        digits > MAX_INTEGER_DIGITS
        and NUMBER.fullmatch(token) is not None
        and (token.isdigit() or token[1:].isdigit())
    )


def number(token: str) -> Any:
    """The value of a token that matches ``NUMBER``, or None when it is refused: an
    integer of more than :data:`MAX_INTEGER_DIGITS` digits, or a float past the float range
    (``1e400``), which JSON cannot write back (json.loads would give ``inf``). Neither
    verdict depends on the process's int conversion limit."""
    if token.isdigit() or (token[0] == "-" and token[1:].isdigit()):
        if len(token) - (token[0] == "-") > MAX_INTEGER_DIGITS:
            return None
        try:
            return int(token)
        except ValueError:  # the process set a lower int limit: read it without int()
            return int(Decimal(token))
    value = float(token)
    return None if math.isinf(value) else value


def classify(token: str, *, in_container: bool) -> tuple[Any, RepairKind | None] | None:
    """The value of a complete token and the repair reading it needed, or None when it is
    not a value. Only inside a container may a bare word or UUID stand for a string."""
    if token in LITERALS:
        return LITERALS[token], None
    if NUMBER.fullmatch(token):
        value = number(token)
        return None if value is None else (value, None)
    if token in PY_LITERALS:
        return PY_LITERALS[token], RepairKind.PYTHON_LITERAL
    if len(token) <= 5:
        lowered = token.lower()
        if lowered in CASELESS_LITERALS:
            return CASELESS_LITERALS[lowered], RepairKind.LITERAL_CASE
    if not in_container or token.lower() in REFUSED_WORDS:
        return None
    if len(token) <= 5 and any(word.startswith(token.lower()) for word in CASELESS_LITERALS):
        return None  # a cut-short literal such as "tru" or "FALS" is not a word
    if BARE_WORD.fullmatch(token) or UUID.fullmatch(token):
        return token, RepairKind.BARE_WORD
    return None
