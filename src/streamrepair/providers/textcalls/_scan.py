"""Scanning helpers of the text tool-call stage: marker sets and JSON extents.

Both are fed a growing text piece by piece and never look at a character twice, except
for a marker prefix at the very end of a piece (at most the longest marker's length),
which the caller holds back and shows again with the next piece.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

__all__: list[str] = []

#: Whitespace as JSON and the chat templates use it between markup.
WS: Final = " \t\r\n"
#: Most characters of markup held between a start marker and the call's name (names,
#: ids, attributes, whitespace), and of whitespace held to see what follows it.
MAX_HEADER_CHARS: Final = 512
#: What :meth:`JsonExtent.scan` returns when the value it follows is complete.
COMPLETE: Final = "\x00complete"

_IN_STRING = re.compile(r'["\\]')


class MarkerSet:
    """A set of literal markers: find the first one in a text, or the start of a tail
    that could still become one.

    ``find`` is one regular-expression search. The pattern is the markers' trie (shared
    prefixes written once), where every inner node may also end the text (``\\Z``): so
    the leftmost match is either a whole marker or a tail that is a proper prefix of
    one, found in one pass in C.
    """

    __slots__ = ("_prefixes", "_re", "firsts", "longest", "markers")

    def __init__(self, markers: Iterable[str]) -> None:
        unique = sorted({m for m in markers if m}, key=lambda m: (-len(m), m))
        self.markers: tuple[str, ...] = tuple(unique)
        self.longest = max((len(m) for m in unique), default=0)
        self.firsts = "".join(sorted({m[0] for m in unique}))
        self._prefixes = frozenset(m[:k] for m in unique for k in range(1, len(m)))
        if self._prefixes.intersection(unique):
            raise ValueError("a marker is a prefix of another; each must end where it ends")
        self._re = re.compile(_trie_pattern(unique)) if unique else None

    def __bool__(self) -> bool:
        return bool(self.markers)

    def find(self, text: str, pos: int) -> tuple[int, str | None]:
        """``(start, marker)`` of the first whole marker at or after ``pos``; otherwise
        ``(start, None)`` where ``start`` is where a tail that is a proper prefix of a
        marker begins, or ``len(text)`` when there is none."""
        if self._re is not None:
            found = self._re.search(text, pos)
            if found is not None:
                matched = found.group()
                if matched in self._prefixes:
                    return found.start(), None
                return found.start(), matched
        return len(text), None

    def at(self, text: str, i: int) -> str | None:
        """The whole marker starting at ``text[i]``; ``""`` when ``text[i:]`` is a
        proper prefix of one (more text decides); None when no marker starts there."""
        if i >= len(text) or text[i] not in self.firsts:
            return None
        for marker in self.markers:
            if text.startswith(marker, i):
                return marker
        return "" if text[i:] in self._prefixes else None


def _trie_pattern(markers: list[str]) -> str:
    """A regular expression matching any of ``markers``, or any proper prefix of one at
    the end of the text."""
    trie: dict[str, Any] = {}
    for marker in markers:
        node = trie
        for char in marker:
            node = node.setdefault(char, {})
        node[""] = {}  # the end of a whole marker

    def branch(node: dict[str, Any], root: bool) -> str:
        if "" in node:
            return ""  # markers are never prefixes of one another
        options = [re.escape(char) + branch(child, False) for char, child in node.items()]
        if not root:
            options.append(r"\Z")
        return "(?:" + "|".join(options) + ")"

    return branch(trie, True)


class JsonExtent:
    """Follows JSON text piece by piece: strings and escapes always, and with ``whole``
    the depth of ``{``/``[`` too, to say where one value ends.

    ``ends`` markers are recognized only outside strings: a literal ``</tool_call>``
    inside a string argument is argument text (vllm-project/vllm#45167). Nothing else is
    checked here; the assembler judges the text.
    """

    __slots__ = (
        "_scalar_stop",
        "_stop",
        "complete",
        "depth",
        "ends",
        "escape",
        "in_string",
        "scalar",
        "started",
        "whole",
    )

    def __init__(self, ends: MarkerSet | None, *, whole: bool) -> None:
        self.ends = ends if ends else None
        self.whole = whole
        self.depth = 0
        self.in_string = False
        self.escape = False
        self.started = False
        self.scalar = False
        self.complete = False
        firsts = re.escape(self.ends.firsts) if self.ends is not None else ""
        structural = '"{}\\[\\]' if whole else '"'
        self._stop = re.compile(f"[{structural}{firsts}]")
        self._scalar_stop = re.compile(f"[ \\t\\r\\n,}}\\]{firsts}]")

    def scan(self, text: str, pos: int) -> tuple[int, str | None]:
        """Follow ``text`` from ``pos``. Returns ``(stop, what)``: ``text[pos:stop]``
        belongs to the JSON text, and ``what`` says why it stopped there: None (all of
        ``text`` taken), ``""`` (a possible end marker begins at ``stop``: more text
        decides), an end marker (it begins at ``stop``), or :data:`COMPLETE` (with
        ``whole``: the value ended just before ``stop``)."""
        n = len(text)
        i = pos
        ends = self.ends
        while i < n:
            if self.in_string:
                if self.escape:
                    self.escape = False
                    i += 1
                    continue
                found = _IN_STRING.search(text, i)
                if found is None:
                    return n, None
                j = found.start()
                if text[j] == "\\":
                    if j + 1 >= n:
                        self.escape = True
                        return n, None
                    i = j + 2
                    continue
                self.in_string = False
                i = j + 1
                if self.whole and self.depth == 0:
                    self.complete = True
                    return i, COMPLETE
                continue
            if self.scalar:
                found = self._scalar_stop.search(text, i)
                if found is None:
                    return n, None
                j = found.start()
                if ends is not None and text[j] in ends.firsts:
                    marker = ends.at(text, j)
                    if marker is not None:
                        return j, marker
                    if text[j] not in " \t\r\n,}]":
                        i = j + 1
                        continue
                self.complete = True
                return j, COMPLETE
            if not self.started and self.whole:
                c = text[i]
                if c in WS:
                    i += 1
                    continue
                if ends is None or c not in ends.firsts or ends.at(text, i) is None:
                    self.started = True
                    if c == '"':
                        self.in_string = True
                        i += 1
                    elif c in "{[":
                        self.depth = 1
                        i += 1
                    else:
                        self.scalar = True
                    continue
            found = self._stop.search(text, i)
            if found is None:
                return n, None
            j = found.start()
            c = text[j]
            if ends is not None and c in ends.firsts:
                marker = ends.at(text, j)
                if marker is not None:
                    return j, marker
            if c == '"':
                self.in_string = True
            elif c in "{[":
                self.depth += 1
            elif c in "}]":
                self.depth -= 1
                if self.depth <= 0:
                    self.complete = True
                    return j + 1, COMPLETE
            i = j + 1
        return n, None


class PyExtent:
    """Follows a Python expression (a keyword argument's value) piece by piece, to the
    ``,`` or ``)`` that ends it: quotes (``'``, ``"`` and their triple forms), escapes,
    and the depth of brackets."""

    __slots__ = ("depth", "escape", "quote")

    def __init__(self) -> None:
        self.depth = 0
        self.quote = ""
        self.escape = False

    def scan(self, text: str, pos: int, end: int) -> int | None:
        """Follow ``text[pos:end]``; the index of the character that ends the value (a
        ``,`` or a closer at depth 0), or None when none came before ``end``. Quotes at
        the very end of a piece may start a triple quote: the caller ends the piece
        before them (:meth:`undecided`) unless the input has ended."""
        i = pos
        while i < end:
            c = text[i]
            if self.escape:
                self.escape = False
            elif self.quote:
                if c == "\\":
                    self.escape = True
                elif text.startswith(self.quote, i, end):
                    i += len(self.quote)
                    self.quote = ""
                    continue
            elif c in "'\"":
                triple = c * 3
                self.quote = triple if text.startswith(triple, i, end) else c
                i += len(self.quote)
                continue
            elif c in "([{":
                self.depth += 1
            elif c in ")]}":
                if self.depth == 0:
                    return i
                self.depth -= 1
            elif c == "," and self.depth == 0:
                return i
            i += 1
        return None

    @staticmethod
    def undecided(text: str, pos: int) -> int:
        """How many characters at the end of ``text`` (after ``pos``) may change meaning
        with the next piece: up to two quotes, which may be the start of a triple one."""
        k = 0
        while k < 2 and len(text) - k > pos and text[-1 - k] in "'\"":
            k += 1
        return k
