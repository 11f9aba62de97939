"""``repair()``: the one-shot form of the assembler."""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import ConcatenatedValuesError, TooLargeError, UnrepairableError
from ..results import Repaired
from .assembler import DEFAULT_MAX_SIZE, ArgumentAssembler

__all__ = ["REPAIR_MAX_SIZE", "repair"]

#: :func:`repair` refuses text over this size (1 MiB) when it needs any repair; valid JSON
#: of any size passes intact (the seed's rule).
REPAIR_MAX_SIZE = 1024 * 1024

_OPENERS = ("{", "[")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


# One decoder, built once: json.loads with keyword arguments would build one per call.
_STRICT_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def repair(text: str, *, max_size: int = REPAIR_MAX_SIZE) -> Repaired:
    """Repair one whole argument text; the one-shot form of :class:`ArgumentAssembler`.

    Valid JSON comes back as ``json.loads`` would give it, with no repairs, at any size.
    Text that needs a repair and is longer than ``max_size`` characters raises
    :class:`~streamrepair.TooLargeError`. Unrepairable or empty text raises
    :class:`~streamrepair.UnrepairableError`; several distinct concatenated values raise
    :class:`~streamrepair.ConcatenatedValuesError`.
    """
    if not isinstance(text, str):
        raise TypeError(f"repair() takes str, not {type(text).__name__}")
    # Fast path for valid JSON: json.loads gives exactly what the machine would for a
    # container whose value holds no lone surrogate (the machine replaces those; the
    # differential tests hold the two paths equal).
    # Top-level strings may be double-encoded and go to the machine.
    if text[:1] in _OPENERS or text.lstrip()[:1] in _OPENERS:
        try:
            value = _STRICT_DECODER.decode(text)
        except (ValueError, RecursionError):
            pass
        else:
            if not _holds_surrogates(value, text):
                return Repaired(value=value, structure_synthesized=False)
    assembler = ArgumentAssembler(max_size=max(len(text), DEFAULT_MAX_SIZE))
    assembler.feed(text)
    too_large = len(text) > max_size
    try:
        result = assembler.finish()
    except ConcatenatedValuesError:
        if too_large:
            raise _too_large(text, max_size) from None
        raise
    except UnrepairableError:
        if too_large:
            raise _too_large(text, max_size) from None
        raise
    if too_large and result.repairs:
        raise _too_large(text, max_size)
    return result


#: The walk may visit one node of the decoded value per this many characters of text;
#: past that budget scanning the text is cheaper (a string-heavy write has a handful of
#: nodes, a list of numbers thousands).
_CHARS_PER_NODE = 512


def _holds_surrogates(value: Any, text: str) -> bool:
    """Whether json.loads' ``value`` holds a surrogate code point: a lone surrogate, which
    the machine replaces (escaped pairs are already joined). An all-ASCII string answers
    in O(1), so a long write costs nothing; a non-ASCII string, or more nodes than
    scanning ``text`` would cost, hands over to the scan of the text."""
    budget = len(text) // _CHARS_PER_NODE + 16
    pending = [value]
    while pending:
        budget -= 1
        if budget < 0:
            return _has_surrogates(text)
        item = pending.pop()
        if isinstance(item, str):
            if not item.isascii():
                return _has_surrogates(text)
        elif isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def _has_surrogates(text: str) -> bool:
    """Whether ``text`` holds a surrogate escape or a raw surrogate (which the machine
    replaces and json.loads keeps). Both checks run in C; the second only for non-ASCII."""
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
