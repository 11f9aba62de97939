"""``repair()``: the one-shot form of the assembler.

One contract for both: ``repair(text)`` gives what ``ArgumentAssembler`` gives for the same
text fed in one delta (the same value and repairs, or the same error), with one addition:
text longer than ``max_size`` that needs a repair raises :class:`~streamrepair.TooLargeError`.
Valid JSON goes through ``json.loads`` (fast), and its value is only taken when the machine
would have read the same: no key written twice in an object (``json.loads`` keeps the last
value silently; the machine keeps one of equal values and refuses different ones), no
surrogate code point (the machine joins or replaces them), no number past a float's range
(refused like ``Infinity``), no integer of more than ``MAX_INTEGER_DIGITS`` digits (whatever
``sys.set_int_max_str_digits`` says), no nesting past ``max_depth``. Otherwise the machine
reads the text and decides.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from typing import Any

from ..errors import TooLargeError
from ..results import Repaired
from ._lexical import MAX_INTEGER_DIGITS
from .assembler import DEFAULT_MAX_DEPTH, DEFAULT_MAX_SIZE, ArgumentAssembler

__all__ = ["REPAIR_MAX_SIZE", "repair"]

#: :func:`repair` refuses text over this size (1 MiB) when it needs any repair; valid JSON
#: of any size passes intact (the seed's rule). An error is reported as itself at any size.
REPAIR_MAX_SIZE = 1024 * 1024

_OPENERS = ("{", "[")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_INF = float("inf")


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def _bounded_int(digits: str) -> int:
    if len(digits) - (digits[0] == "-") > MAX_INTEGER_DIGITS:
        raise ValueError("integer longer than MAX_INTEGER_DIGITS")
    return int(digits)


# Keys written twice. json.loads keeps the last value without a word; the machine keeps one
# of equal values (recorded) and refuses different ones, so a text that names a key twice
# in an object goes to the machine. Two ways to see it, each cheap where the other is not:
#
# * check: json builds each object from its list of pairs through a hook that compares
#   the pairs with the keys they made: about half a microsecond per object and 50 ns per
#   member, nothing per character (a 1 MiB write is one object of three members);
# * count: the members of the decoded objects (collected by a hook on json's own path,
#   which builds each object itself) against the colons outside strings in the text, found
#   by a few passes in C: a call per object, 1 to 2 ns per character (more when the
#   strings hold many escaped quotes and backslashes).
#
# Every text is checked, for up to _CHECKED_OBJECTS objects (most arguments have a few);
# past that the check gives up and the text is counted.


class _RepeatedKey(Exception):
    """An object of the text names a key twice: the machine decides."""


class _ManyObjects(Exception):
    """The text has more objects than the pair hook checks: members are counted."""


class _Calls(threading.local):
    """Per thread: how many more objects the pair hook checks in the current call, and
    the decoder that collects the objects it builds (made once per thread)."""

    def __init__(self) -> None:
        self.objects = 0
        self.collected: list[dict[str, Any]] = []
        collect = self.collected.append

        def collected(obj: dict[str, Any]) -> dict[str, Any]:
            collect(obj)
            return obj

        self.strict = json.JSONDecoder(parse_constant=_reject_constant, object_hook=collected)
        self.bounded = json.JSONDecoder(
            parse_constant=_reject_constant, parse_int=_bounded_int, object_hook=collected
        )


_CHECKED_OBJECTS = 32
_CALLS = _Calls()


def _checked_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's ``object_pairs_hook``: the object its pairs make, when no key repeats."""
    _CALLS.objects -= 1
    if _CALLS.objects < 0:
        raise _ManyObjects
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _RepeatedKey
    return obj


# One decoder of each kind, built once: json.loads with keyword arguments would build one
# per call.
_STRICT_DECODER = json.JSONDecoder(
    parse_constant=_reject_constant, object_pairs_hook=_checked_object
)
# For a process whose int limit lets json read integers past MAX_INTEGER_DIGITS (the
# default limit refuses them in C already): such a text goes to the machine, which refuses.
_BOUNDED_DECODER = json.JSONDecoder(
    parse_constant=_reject_constant, parse_int=_bounded_int, object_pairs_hook=_checked_object
)
_int_limit = getattr(sys, "get_int_max_str_digits", None)  # Python 3.10.7 and later


def _bounded() -> bool:
    limit = 0 if _int_limit is None else _int_limit()
    return not 0 < limit <= MAX_INTEGER_DIGITS


_MACHINE = object()  # what _loads gives for a text the machine must read


def _loads(text: str) -> Any:
    """``json.loads``'s reading of ``text``, when it is valid JSON naming no key twice in
    an object and within the int limit; otherwise ``_MACHINE``."""
    calls = _CALLS
    bounded = _bounded()
    calls.objects = _CHECKED_OBJECTS
    try:
        return (_BOUNDED_DECODER if bounded else _STRICT_DECODER).decode(text)
    except _ManyObjects:
        pass
    except (ValueError, RecursionError, _RepeatedKey):
        return _MACHINE
    objects = calls.collected
    try:
        value = (calls.bounded if bounded else calls.strict).decode(text)
        members = sum(map(len, objects))
    except (ValueError, RecursionError):
        return _MACHINE
    finally:
        objects.clear()
    if members != _members(text):
        return _MACHINE  # a key written twice: json kept one member of two
    return value


# Every byte but a quote and a colon, deleted by _members.
_NOT_QUOTE_OR_COLON = bytes(c for c in range(256) if c not in b'":')


def _members(text: str) -> int:
    """The members of every object of ``text`` (valid JSON): its colons outside strings.

    With escaped backslashes and then escaped quotes taken out, every quote left delimits
    a string. Of the text only quotes and colons are kept, and adjacent quotes removed: a
    string with no colon in it, or a closing and an opening quote with nothing between,
    which keeps the parity of every quote after them. What is outside strings is then
    every other piece between quotes."""
    if "\\" in text:  # (a one-character search is the fast one)
        text = text.replace("\\\\", "").replace('\\"', "")
    marks = text.encode("utf-8", "surrogatepass").translate(None, _NOT_QUOTE_OR_COLON)
    marks = marks.replace(b'""', b"")
    if b'"' not in marks:
        return len(marks)
    return sum(map(len, marks.split(b'"')[::2]))


def repair(
    text: str, *, max_size: int = REPAIR_MAX_SIZE, max_depth: int = DEFAULT_MAX_DEPTH
) -> Repaired:
    """Repair one whole argument text; the one-shot form of :class:`ArgumentAssembler`.

    Valid JSON comes back as ``json.loads`` would give it, with no repairs, at any size,
    within the assembler's rules: nested at most ``max_depth`` deep (else
    :class:`~streamrepair.TooDeepError`), no number past a float's range, lone surrogates
    replaced, no integer of more than :data:`~streamrepair.MAX_INTEGER_DIGITS` digits
    (whatever the process's int limit). Text that needs a repair and is longer than
    ``max_size`` characters raises :class:`~streamrepair.TooLargeError`. Unrepairable or
    empty text raises :class:`~streamrepair.UnrepairableError` (at any size, with the
    position of the first impossible character); several distinct concatenated values
    raise :class:`~streamrepair.ConcatenatedValuesError`.
    """
    if not isinstance(text, str):
        raise TypeError(f"repair() takes str, not {type(text).__name__}")
    # Fast path for valid JSON. Top-level strings may be double-encoded and go to the
    # machine, as do top-level scalars.
    if text[:1] in _OPENERS or text.lstrip()[:1] in _OPENERS:
        value = _loads(text)
        if value is not _MACHINE and _as_read(value, text, max_depth):
            return Repaired(value=value, structure_synthesized=False)
    assembler = ArgumentAssembler(max_size=max(len(text), DEFAULT_MAX_SIZE), max_depth=max_depth)
    assembler.feed(text)
    result = assembler.finish()  # an error raises as itself, whatever the size
    if len(text) > max_size and result.repairs:
        raise _too_large(text, max_size)
    return result


#: The walk of the decoded value may spend one unit per this many characters of text
#: (a container costs 32 units, a member 1, a member summed in C 1/8); past that budget,
#: checks on the text are cheaper (a string-heavy write has a handful of nodes, an array
#: of small objects thousands).
_CHARS_PER_UNIT = 16


def _as_read(value: Any, text: str, max_depth: int) -> bool:
    """Whether the machine reads ``text``, valid JSON, as exactly ``value`` (json.loads'
    reading) with no repair: no surrogate code point, no infinite float, no container
    deeper than ``max_depth``. Walks the value while that is cheap, then the text."""
    strings_ok = False  # no surrogate anywhere: known once a non-ASCII string is checked
    budget = len(text) // _CHARS_PER_UNIT + 256
    frames: list[tuple[Any, int]] = [(value, 1)]
    while frames:
        node, depth = frames.pop()
        budget -= 32
        if budget < 0:
            return _text_as_read(value, text, max_depth, strings_ok)
        if type(node) is dict:
            if not strings_ok and not "".join(node).isascii():
                if _has_surrogates(text):
                    return False
                strings_ok = True
            members: Any = node.values()
        else:
            members = node
        first = type(next(iter(members), None))
        if (first is dict or first is list) and 16 * len(members) > budget:
            return _text_as_read(value, text, max_depth, strings_ok)  # many containers
        if first is int or first is float:
            # Perhaps an array of numbers: summed in C, finite iff no member is infinite.
            try:
                total = sum(members, 0.0)
            except (TypeError, OverflowError):
                pass
            else:
                if total - total != 0:  # inf or nan: a member is infinite (or the sum is)
                    return _text_as_read(value, text, max_depth, strings_ok)
                budget -= len(members) >> 3
                continue
        budget -= len(members)
        if budget < 0:
            return _text_as_read(value, text, max_depth, strings_ok)
        kinds = set(map(type, members))
        if float in kinds and (_INF in members or -_INF in members):
            return False
        if str in kinds and not strings_ok:
            for member in members:
                if type(member) is str and not member.isascii():
                    if _has_surrogates(text):
                        return False
                    strings_ok = True
                    break
        if dict in kinds or list in kinds:
            if depth >= max_depth:
                return False
            budget -= 16 * len(members)  # the members are walked in Python
            if budget < 0:
                return _text_as_read(value, text, max_depth, strings_ok)
            frames.extend((m, depth + 1) for m in members if type(m) in (dict, list))
    return True


# The bytes of the text reduced, in one translation in C, to what says something about its
# numbers and its nesting: a digit or a sign as 0, an exponent mark as e, points, commas,
# brackets ({} read as []), quotes and backslashes; anything else is deleted. Then fixed
# needles are looked for.
_COMPACT = bytes(
    ord("0")
    if 48 <= c <= 57 or c in b"+-"
    else ord("e")
    if c in b"eE"
    else ord("[")
    if c == ord("{")
    else ord("]")
    if c == ord("}")
    else c
    for c in range(256)
)
_DELETED = bytes(c for c in range(256) if c not in b'0123456789+-eE.,[]{}"\\')
# A number that may be past a float's range: an exponent of three digits or more, or two
# hundred digits before a fraction or an exponent (a comma keeps numbers apart). json.loads
# would read it as ``inf``; the machine refuses it. When a needle finds one, the exact
# pattern (or the machine) decides.
_EXPONENT_NEEDLE = b"e000"
_BIG_EXPONENT = re.compile(r"[eE](?<=[0-9][eE])\+?[0-9]{3}")
_LONG_DIGITS = (b"0" * 200 + b".", b"0" * 200 + b"e")


def _text_as_read(value: Any, text: str, max_depth: int, strings_ok: bool) -> bool:
    """:func:`_as_read` from the text, for values with many nodes: a few passes in C."""
    if not strings_ok and ("\\" in text or not text.isascii()) and _has_surrogates(text):
        return False
    compact = text.encode("utf-8", "surrogatepass").translate(_COMPACT, _DELETED)
    if _EXPONENT_NEEDLE in compact and _BIG_EXPONENT.search(text) is not None:
        return False
    if any(needle in compact for needle in _LONG_DIGITS):
        return False  # two hundred digits and more: let the machine read the number
    reduced = compact.translate(None, b"0e.,")
    if reduced.count(b"[") <= max_depth:
        return True
    # Nesting from the brackets alone, when no string holds a bracket or an escape: each
    # pass removes the innermost level. A string with a bracket leaves an odd run of
    # quotes (its opening quote is not next to another); then the value is walked.
    if b"\\" in reduced or reduced.count(b'"') != 2 * reduced.count(b'""'):
        return _depth_within(value, max_depth)
    brackets = reduced.translate(None, b'"')
    for _ in range(max_depth):
        if not brackets:
            return True
        brackets = brackets.replace(b"[]", b"")
    return not brackets


def _depth_within(value: Any, max_depth: int) -> bool:
    """Whether ``value`` nests at most ``max_depth`` containers deep (a walk of its
    containers, without recursion)."""
    frames: list[tuple[Any, int]] = [(value, 1)]
    while frames:
        node, depth = frames.pop()
        for member in node.values() if type(node) is dict else node:
            if type(member) is dict or type(member) is list:
                if depth >= max_depth:
                    return False
                frames.append((member, depth + 1))
    return True


def _has_surrogates(text: str) -> bool:
    """Whether ``text`` holds a surrogate escape or a raw surrogate (which the machine
    joins or replaces, and json.loads keeps). Both checks run in C; the second only for
    non-ASCII text."""
    if "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None:
        return True
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _too_large(text: str, max_size: int) -> TooLargeError:
    line = text.count("\n", 0, max_size) + 1
    column = max_size - (text.rfind("\n", 0, max_size) + 1) + 1
    return TooLargeError(
        f"argument of {len(text)} characters needs repair but exceeds the repair bound "
        f"of {max_size}",
        limit=max_size,
        offset=max_size,
        line=line,
        column=column,
    )
