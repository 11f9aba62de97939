"""Repeated keys: a value read under a key its object already has.

``{"x": 1.5, "x": -7}``: ``json.loads`` silently keeps the last value, and a model that
wrote ``path`` twice would get the second one without a word. The assembler instead reads
the second value *against* the first one, which is whole by then (it is an earlier member
of the same object): an equal value (strictly equal JSON, ``1 != 1.0 != true``) is dropped
and the repeat recorded, a different one makes the text unrepairable. The second value is
never stored in the object, never shown in a preview and never reported as a change.

The verdict comes at the first character after which the second value can no longer end
equal to the first. This module answers that question for the pieces the machine reads:

* :func:`token_continues`: a number, literal or bare word read so far;
* :func:`text_continues`: an open string, from how much of the target its decoded text
  matched and where the machine stands in it (an escape, ``\\uXXXX``, a surrogate half
  waiting for its partner, a single quote whose role is not known yet);
* :func:`float_reachable`: whether some number beginning with a prefix reads as a float
  (``1.5`` is also ``1.50`` and ``15e-1``, and ``1.4999999999999999999`` rounds to it).

Inside a container under a repeated key the machine compares each member as it is read:
its key (when the key is complete), its index, its type at its first character, its value
as above, and the member count when the container closes (docs/design.md).
"""

from __future__ import annotations

import math
import re
import struct
from fractions import Fraction
from typing import Any

from ..results import RepairKind
from ._lexical import classify

# A number token's prefix in parts: sign, integer digits, fraction digits (None: no point),
# exponent sign (None: no exponent), exponent digits.
_NUMBER_PARTS = re.compile(r"(-?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?)([0-9]*))?")
# The spellings of each literal, in any letter case (``True``, ``NULL`` and ``none`` are
# read as literals, docs/repairs.md).
_SPELLINGS = {True: ("true",), False: ("false",), None: ("null", "none")}


class Repeat:
    """The value being read under a repeated key, and where it stands.

    ``depth`` is the stack depth of the object that has the key (the value's own frames
    are above it); ``first`` the value already there; ``targets`` the value each open
    container of the second value must end equal to; ``text``, ``at`` and ``literal_at``
    the open string's target and how much of it its decoded text matched (JSON's reading,
    and for a path the literal reading of the ambiguous-escapes rule; -1 once it cannot)."""

    __slots__ = (
        "at",
        "depth",
        "first",
        "key",
        "literal_at",
        "offset",
        "position",
        "targets",
        "text",
    )

    def __init__(
        self,
        key: str,
        first: Any,
        depth: int,
        offset: int,
        position: tuple[int, int] | None,
    ) -> None:
        self.key = key
        self.first = first
        self.depth = depth
        self.offset = offset  # where the repeated key begins
        self.position = position  # its line and column, once known
        self.targets: list[Any] = []
        self.text = ""
        self.at = 0
        self.literal_at = -1

    def open_text(self, target: str, literal: bool) -> None:
        """A string begins that must end as ``target`` (``literal``: under a path-like
        key, where the ambiguous-escapes rule may read it literally)."""
        self.text = target
        self.at = 0
        self.literal_at = 0 if literal else -1

    def grew(self, piece: str, literal_piece: str | None) -> None:
        """The open string's decoded text grew by ``piece`` (``literal_piece``: the same
        under the literal reading, or None when that reading is no longer possible)."""
        if self.at >= 0:
            self.at = self.at + len(piece) if self.text.startswith(piece, self.at) else -1
        if self.literal_at >= 0:
            if literal_piece is not None and self.text.startswith(literal_piece, self.literal_at):
                self.literal_at += len(literal_piece)
            else:
                self.literal_at = -1


def token_continues(token: str, target: Any) -> bool:
    """Whether some token beginning with ``token`` (a viable one) reads, inside a
    container, as a value strictly equal to ``target``."""
    kind = type(target)
    if kind is bool or target is None:
        lowered = token.lower()
        return any(word.startswith(lowered) for word in _SPELLINGS[target])
    if kind is int:
        spelled = str(target)
        return spelled.startswith(token) or (target == 0 and token in ("-", "-0"))
    if kind is float:
        return float_reachable(token, target)
    if kind is str:
        if not target.startswith(token):
            return False
        found = classify(target, in_container=True)
        return found is not None and found[1] is RepairKind.BARE_WORD
    return False  # a container is never a token


def text_continues(
    target: str,
    at: int,
    *,
    high: int | None = None,
    escape: bool = False,
    hex_digits: str | None = None,
    held: str | None = None,
) -> bool:
    """Whether an open string whose decoded text so far is ``target[:at]`` can still end
    as exactly ``target``: in plain text (any continuation), after a backslash
    (``escape``), inside ``\\u`` (``hex_digits`` read), with a high surrogate waiting for
    its low half (``high``), or at a single quote whose role is unknown (``held``: the
    quote and the whitespace after it, which become content unless the string ends)."""
    if high is not None:
        n = len(target)
        alone = _follows(target, at + 1, escape, hex_digits, held, highs_only=True)
        if at < n and target[at] == "\ufffd" and alone:
            return True  # the high half alone becomes U+FFFD, then the rest follows
        if held is not None or at >= n or ord(target[at]) < 0x10000:
            return False
        code = ord(target[at]) - 0x10000
        if 0xD800 + (code >> 10) != high:
            return False
        low = 0xDC00 + (code & 0x3FF)
        # joined with a low half: raw or escaped, or the \u escape being read
        return hex_digits is None or f"{low:04x}".startswith(hex_digits.lower())
    return _follows(target, at, escape, hex_digits, held)


def _follows(
    target: str,
    at: int,
    escape: bool,
    hex_digits: str | None,
    held: str | None,
    highs_only: bool = False,
) -> bool:
    """:func:`text_continues` with no surrogate half waiting (``highs_only``: one was
    waiting and became U+FFFD, so a low half in the \\u escape would have joined it)."""
    n = len(target)
    if held is not None:  # the string ends here, or the quote was content
        return at == n or target.startswith(held, at)
    if escape:
        return at < n  # an escape gives at least one character, and \u gives any
    if hex_digits is None:
        return at <= n
    prefix = hex_digits.lower()
    if target.startswith("\\u" + hex_digits, at):
        return True  # not four hex digits after all: kept as written
    if at >= n:
        return False
    code = ord(target[at])
    if code >= 0x10000:  # a high half, then its low half
        return f"{0xD800 + ((code - 0x10000) >> 10):04x}".startswith(prefix)
    if code == 0xFFFD:  # written so, or a surrogate half left alone
        return "fffd".startswith(prefix) or _surrogate_prefix(prefix, highs_only)
    return f"{code:04x}".startswith(prefix)


def _surrogate_prefix(prefix: str, highs_only: bool) -> bool:
    """Whether ``prefix`` can begin a surrogate's four hex digits (only a high half's when
    a high half is waiting: a low half would join it)."""
    halves = "89ab" if highs_only else "89abcdef"
    return not prefix or (prefix[0] == "d" and (len(prefix) == 1 or prefix[1] in halves))


def float_reachable(prefix: str, x: float) -> bool:
    """Whether some number token beginning with ``prefix`` reads as a float equal to
    ``x`` (finite; ``-0.0`` equals ``0.0``). Exact: the decimals a prefix can still
    become are compared with the reals that round to ``x``."""
    parts = _NUMBER_PARTS.fullmatch(prefix)
    if parts is None:
        return False
    sign, whole, fraction, exp_sign, exp_digits = parts.groups()
    if (sign == "-" and x > 0) or (sign != "-" and x < 0):
        return False
    ax = abs(x)
    low, high, closed = _rounds_to(ax)
    if exp_sign is None:
        significant = (whole + (fraction or "")).lstrip("0")
        if not significant or ax == 0:
            return True  # more digits, or a large negative exponent, reach it
        # Whatever follows, the digits begin with these: a value in [a, a + ulp) times
        # any power of ten (an exponent may still come).
        size = len(significant)
        start = int(significant)
        power = _decade(ax)
        for k in range(power - 2, power + 3):
            a = _scaled(start, k - size)
            b = _scaled(start + 1, k - size)
            if max(a, low) < min(b, high) or (a == high and closed):
                return True
        return False
    digits = int(whole + (fraction or ""))
    mantissa = Fraction(digits, 10 ** len(fraction or ""))
    if mantissa == 0:
        return ax == 0
    if ax == 0:
        if exp_sign == "-" or (not exp_digits and not exp_sign):
            return True  # the exponent can still fall as far as it takes
        least = int(exp_digits) if exp_digits else 0
        return mantissa * _scaled(1, least) <= high
    # mantissa is in [10**(size - 1), 10**size): the exponent that brings it to x is near
    size = len(str(digits)) - len(fraction or "")
    power = _decade(ax) - size
    for k in range(power - 2, power + 3):
        if _exponent_allowed(k, exp_sign, exp_digits):
            value = mantissa * _scaled(1, k)
            if low < value < high or (closed and value in (low, high)):
                return True
    return False


def _rounds_to(x: float) -> tuple[Fraction, Fraction, bool]:
    """The reals that round to ``x`` (>= 0): ``(low, high, closed)``, closed when the
    halfway points round to ``x`` (round half to even: ``x``'s last bit is 0)."""
    if x == 0:
        tiny = Fraction(1, 2**1075)  # half the least subnormal
        return -tiny, tiny, True
    exact = Fraction(x)
    below = Fraction(math.nextafter(x, 0.0))
    above_x = math.nextafter(x, math.inf)
    above = exact + (exact - below) if math.isinf(above_x) else Fraction(above_x)
    even = struct.unpack("<Q", struct.pack("<d", x))[0] & 1 == 0
    return (exact + below) / 2, (exact + above) / 2, even


def _decade(x: float) -> int:
    """``k`` with ``10**(k-1) <= x < 10**k``, give or take one (checked around it)."""
    return math.floor(math.log10(x)) + 1


def _scaled(digits: int, exponent: int) -> Fraction:
    """``digits * 10**exponent``, exactly."""
    if exponent >= 0:
        return Fraction(digits * 10**exponent)
    return Fraction(digits, 10**-exponent)


def _exponent_allowed(k: int, exp_sign: str, digits: str) -> bool:
    """Whether an exponent written so far as ``e`` + ``exp_sign`` + ``digits`` can still
    become ``k``."""
    if not digits:
        return not exp_sign or (exp_sign == "+" and k >= 0) or (exp_sign == "-" and k <= 0)
    if k and (k < 0) != (exp_sign == "-"):
        return False
    magnitude, written = abs(k), int(digits)
    # the digits may still grow: 7 -> 7, 70..79, 700..799, ... (and 0 -> anything)
    return any(magnitude // 10**j == written for j in range(len(str(magnitude)) + 1))
