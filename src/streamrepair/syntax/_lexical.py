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
from typing import TYPE_CHECKING, Any, Final

from ..results import RepairKind

if TYPE_CHECKING:
    # The compiled build's 64-bit integers (docs/build.md); plain ints when interpreted.
    from mypy_extensions import i64

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
LITERALS: Final[dict[str, Any]] = {"true": True, "false": False, "null": None}
PY_LITERALS: Final[dict[str, Any]] = {"True": True, "False": False, "None": None}
# Any letter case of a JSON or Python literal spells that literal (FALSE, Null, none).
CASELESS_LITERALS: Final[dict[str, Any]] = {
    "true": True,
    "false": False,
    "null": None,
    "none": None,
}
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

ESCAPES: Final = {
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
CONTROL_NAMES: Final = {"\n": "newline", "\r": "carriage return", "\t": "tab"}
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
    if (
        number_end(token, 0, len(token), False) == len(token)
        if COMPILED
        else NUMBER.fullmatch(token) is not None
    ):
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


# -- the same rules read by character (the compiled build) --------------------------------
# Compiled, a loop over a few characters costs far less than a call into the regular
# expression engine (the call, the match object, each group a method call of its own);
# interpreted, the opposite holds. The compiled build reads the commonest stretches with
# these loops, the pure build with the patterns above: each loop gives exactly what its
# pattern gives (tests/test_lexical_loops.py compares them on generated text), so the two
# builds read every text the same way.


def _compiled() -> bool:
    """Whether this module runs compiled: mypyc makes its functions built-in ones."""
    return type(_compiled).__name__ != "function"


#: Whether the syntax layer runs compiled (all of its modules are, or none: docs/build.md).
COMPILED: Final = _compiled()


def ws_end(text: str, pos: i64, n: i64) -> i64:
    """Where the whitespace at ``pos`` ends (``WS``)."""
    while pos < n:
        c = ord(text[pos])
        if c != 32 and c != 10 and c != 13 and c != 9:
            return pos
        pos += 1
    return pos


def plain_end(text: str, pos: i64, n: i64, quote: i64) -> i64:
    """Where the plain string characters at ``pos`` end (``DQ_RUN`` for the quote 34,
    ``SQ_RUN`` for 39): at the quote, a backslash, a control character or a surrogate."""
    while pos < n:
        c = ord(text[pos])
        if c == quote or c == 92 or c < 32 or 0xD800 <= c <= 0xDFFF:
            return pos
        pos += 1
    return pos


def digits_end(text: str, pos: i64, n: i64, most: i64) -> i64:
    """Where the run of at most ``most`` ASCII digits at ``pos`` ends."""
    end = pos + most
    if end > n:
        end = n
    while pos < end:
        c = ord(text[pos])
        if c < 48 or c > 57:
            return pos
        pos += 1
    return pos


def number_end(text: str, pos: i64, n: i64, lane: bool) -> i64:
    """Where the JSON number at ``pos`` ends (its longest reading), or -1 when none
    begins there. With ``lane``, as the lanes' ``SCALAR`` reads one: at most 100 digits
    before and after the point and 2 in the exponent (the caller then finds a digit where
    a separator must be); without, as ``NUMBER``."""
    most = 100 if lane else n
    if pos < n and text[pos] == "-":
        pos += 1
    if pos >= n:
        return -1
    c = ord(text[pos])
    if c == 48:  # 0
        pos += 1
    elif 49 <= c <= 57:
        pos = digits_end(text, pos + 1, n, most - 1)
    else:
        return -1
    if pos + 1 < n and text[pos] == ".":
        end = digits_end(text, pos + 1, n, most)
        if end > pos + 1:
            pos = end
    if pos + 1 < n and (text[pos] == "e" or text[pos] == "E"):
        at = pos + 1
        if text[at] == "+" or text[at] == "-":
            at += 1
        end = digits_end(text, at, n, 2 if lane else n)
        if end > at:
            pos = end
    return pos


def number_prefix_end(text: str, pos: i64, n: i64) -> i64:
    """Where the longest beginning of a number at ``pos`` ends (``NUMBER_PREFIX_LONGEST``):
    ``-``, ``12.``, ``1e+`` and ``""`` begin one."""
    if pos < n and text[pos] == "-":
        pos += 1
    if pos >= n:
        return pos
    c = ord(text[pos])
    if c == 48:
        pos += 1
    elif 49 <= c <= 57:
        pos = digits_end(text, pos + 1, n, n)
    else:
        return pos
    if pos < n and text[pos] == ".":
        end = digits_end(text, pos + 1, n, n)
        if end == pos + 1:
            return end  # "1." begins a number, "1.e" does not
        pos = end
    if pos < n and (text[pos] == "e" or text[pos] == "E"):
        pos += 1
        if pos < n and (text[pos] == "+" or text[pos] == "-"):
            pos += 1
        pos = digits_end(text, pos, n, n)
    return pos


def _word_at(text: str, pos: i64, n: i64, word: str) -> bool:
    size = len(word)
    if pos + size > n:
        return False
    return all(ord(text[pos + i]) == ord(word[i]) for i in range(size))


def scalar_end(text: str, pos: i64, n: i64) -> i64:
    """Where the lanes' ``SCALAR`` at ``pos`` ends, or -1 when none begins there."""
    c = ord(text[pos])
    if c == 116:  # t
        return pos + 4 if _word_at(text, pos, n, "true") else -1
    if c == 102:  # f
        return pos + 5 if _word_at(text, pos, n, "false") else -1
    if c == 110:  # n
        return pos + 4 if _word_at(text, pos, n, "null") else -1
    return number_end(text, pos, n, True)


def separator_follows(text: str, pos: i64, n: i64) -> bool:
    """Whether whitespace and then ``,``, ``]`` or ``}`` follow ``pos`` in the text (the
    lookahead after a lane's value)."""
    pos = ws_end(text, pos, n)
    if pos >= n:
        return False
    c = ord(text[pos])
    return c == 44 or c == 93 or c == 125  # , ] }


def value_end(text: str, pos: i64, n: i64) -> i64:
    """Where the whole lane value at ``pos`` ends (a plain string, quotes included, or a
    scalar, followed by a separator in the text), or -1."""
    if pos >= n:
        return -1
    if text[pos] == '"':
        end = plain_end(text, pos + 1, n, 34)
        if end >= n or text[end] != '"':
            return -1
        end += 1
    else:
        end = scalar_end(text, pos, n)
        if end < 0:
            return -1
    return end if separator_follows(text, end, n) else -1


def item_spans(text: str, pos: i64, n: i64) -> tuple[i64, i64]:
    """An array's next item after a comma at ``pos``, as ``ARRAY_LANE`` reads it:
    ``(start, end)`` of a whole item (a plain string, quotes included, or a scalar,
    followed by a separator in the text); ``(start, -1)`` when the text ends in the
    beginning of a number at ``start`` (or after the comma and whitespace); ``(-1, -1)``
    when neither, or when no comma is at ``pos``."""
    if pos >= n or text[pos] != ",":
        return -1, -1
    start = ws_end(text, pos + 1, n)
    if start >= n:
        return start, -1
    end = value_end(text, start, n)
    if end >= 0:
        return start, end
    if number_prefix_end(text, start, n) == n:
        return start, -1
    return -1, -1


def member_spans(text: str, pos: i64, n: i64) -> tuple[i64, i64, i64]:
    """An object's member at the opening quote of its key at ``pos``, as ``KEY_MEMBER``
    reads it: ``(key_end, value_start, value_end)``, where ``key_end`` is the key's
    closing quote (-1: no member here, the key is not plain text closed in the text),
    ``value_start`` where the value begins after the colon and whitespace (-1: no colon
    follows the key), ``value_end`` where the whole value ends (-1: it is not a whole
    lane value followed by a separator in the text)."""
    key_end = plain_end(text, pos + 1, n, 34)
    if key_end >= n or text[key_end] != '"':
        return -1, -1, -1
    at = ws_end(text, key_end + 1, n)
    if at >= n or text[at] != ":":
        return key_end, -1, -1
    start = ws_end(text, at + 1, n)
    return key_end, start, value_end(text, start, n)


def item_value(text: str, start: i64, end: i64) -> Any:
    """The value of the lane's item ``text[start:end]`` (a plain string with its quotes,
    or a scalar): what ``lane_value`` gives, as the compiled build computes it."""
    if text[start] == '"':
        return text[start + 1 : end - 1]
    return scalar_value(text[start:end])


def scalar_value(token: str) -> Any:
    """What ``scalar`` gives, as the compiled build computes it: a literal by its first
    letter, an integer of up to 18 digits from its digits (int() parses a string in a
    more general way, at a cost that dwarfs a short number's)."""
    c = ord(token[0])
    if c == 116 or c == 102 or c == 110:  # t f n: the only words a lane reads
        return LITERALS[token]
    n = len(token)
    if n > 18:
        return scalar(token)
    i = 1 if c == 45 else 0  # -
    value = 0
    while i < n:
        c = ord(token[i])
        if c < 48 or c > 57:
            return float(token)  # a point or an exponent
        value = value * 10 + c - 48
        i += 1
    return -value if token[0] == "-" else value


def grows_by_digits(token: str) -> bool:
    """Whether digits appended to ``token`` keep it a number (``GROWS_BY_DIGITS``): no
    exponent, and no leading zero but that of ``0.``."""
    n = len(token)
    pos = 1 if n and token[0] == "-" else 0
    if pos >= n:
        return False
    c = ord(token[pos])
    if c == 48:
        return pos + 1 < n and token[pos + 1] == "." and digits_end(token, pos + 2, n, n) == n
    if c < 49 or c > 57:
        return False
    pos = digits_end(token, pos + 1, n, n)
    if pos < n and token[pos] == ".":
        pos = digits_end(token, pos + 1, n, n)
    return pos == n


def token_end(text: str, pos: i64, n: i64) -> i64:
    """Where the token characters at ``pos`` end (``TOKEN_RUN``: letters, digits, ``_``,
    ``.``, ``+`` and ``-``)."""
    while pos < n:
        c = ord(text[pos])
        if 97 <= c <= 122 or 48 <= c <= 57 or 65 <= c <= 90 or c in (95, 46, 45, 43):
            pos += 1
        else:
            return pos
    return pos
