"""Gemma 4 and FunctionGemma: ``<|tool_call>call:NAME{key:<|"|>text<|"|>,n:42}<tool_call|>``
(Gemma 4) and ``<start_function_call>call:NAME{key:<escape>text<escape>}<end_function_call>``
(FunctionGemma). The arguments are written like a JSON object whose keys are bare and whose
strings sit between a delimiter token (``<|"|>``, ``<escape>``) with nothing escaped inside;
every other value is written as JSON (``42``, ``true``, ``null``, ``{k:...}``, ``[...]``).
Their chat templates write them so (Ollama's ``model/renderers/gemma4.go`` and
``functiongemma.go``: ``key + ":" + value``, strings between the delimiters, the rest as
numbers, booleans, ``null``, nested maps and lists in the same syntax).

:class:`GemmaRegion` turns that into JSON as it streams: a bare key becomes a JSON string,
a delimited string a JSON string (its text escaped, streamed as it arrives), and every
other character is passed on as written, for the assembler to judge. So a value the model
wrote as JSON is kept as written, a single-quoted one or a bare word is repaired by the
assembler and reported as the model's mistake, and one that is not a value (two members
with no comma between them) makes the call unrepairable: nothing is guessed here.

A delimited string is a string, whatever it says (``<escape>42<escape>`` is the text
``"42"``: the templates write numbers bare); the schema check reads it by the tool's
schema afterwards, as it reads any string argument.

After a call, the token the template writes before the tool's response (``<|tool_response>``,
``<start_function_response>``) is framing, and so is a second ``<tool_call|>`` right after
the first (Gemma 4 writes one now and then: Ollama's parser drops them,
``model/parsers/gemma4.go``).
"""

from __future__ import annotations

import re
from typing import Final

from ._contract import Channel, Stage
from ._formats import TextCallFormat
from ._region import MAX_NAME_CHARS, NameHeader, Region, escape, valid_name
from ._scan import MAX_HEADER_CHARS, WS, MarkerSet

__all__: list[str] = []

_CALL_PREFIX: Final = "call:"
#: A bare key: what the templates write before ``:`` (no whitespace, quotes or structure).
_KEY_RUN = re.compile(r"[^\s:,{}\[\]\"'<>]+")
#: A value written as written (a number, a literal, a bare word), up to what ends it.
_SCALAR_RUN = re.compile(r"[^\s:,{}\[\]\"'<]+")
_WS_RUN = re.compile(r"[ \t\r\n]+")
_IN_DOUBLE = re.compile(r'["\\]')
_IN_SINGLE = re.compile(r"['\\]")

# What the argument reader expects next.
_KEY: Final = 0  # a member's key (after "{" or ",")
_COLON: Final = 1  # the ":" after a key
_VALUE: Final = 2  # a value (after ":", "[" or "," in a list)
_AFTER: Final = 3  # "," or a closer after a value


class GemmaRegion(Region):
    """``<|tool_call>call:NAME{...}<tool_call|>`` (Gemma 4); a subclass names the markers
    and the string delimiter of another format of the family (FunctionGemma)."""

    fmt = TextCallFormat.GEMMA4
    #: The string delimiter, the call's closing token, and the tokens dropped after it.
    QUOTE = '<|"|>'
    CALL_END = "<tool_call|>"
    AFTER_CALL = ("<|tool_response>", "<tool_call|>")

    PREFIX = MarkerSet([_CALL_PREFIX])
    NAME_END = MarkerSet(["{"])

    def __init__(self, stage: Stage, ch: Channel, opener: str, marker: str = "") -> None:
        super().__init__(stage, ch, opener, marker)
        self.tokens = MarkerSet([self.QUOTE, self.CALL_END])
        self.quote_only = MarkerSet([self.QUOTE])
        self.call_end = MarkerSet([self.CALL_END])
        self.after_call = MarkerSet(self.AFTER_CALL)
        self.stack: list[str] = []  # "o" for an object, "a" for a list, innermost last
        self.expecting = _KEY
        self.is_key = False  # the string being read is a key
        self.quote = ""  # the quote of a JSON or single-quoted string being passed on
        self.escape = False  # a backslash ended the last piece of that string
        self.key_parts: list[str] = []  # a bare key being read
        self.key_len = 0

    def begin(self, final: bool) -> bool:
        found = self.expect(self.PREFIX, final)
        if isinstance(found, bool):
            return found
        self.state = self.name
        return True

    def name(self, final: bool) -> bool:
        found = self.read_until(self.NAME_END, final, check=NameHeader)
        if isinstance(found, bool):
            return found
        name = found[0].strip()
        if not valid_name(name):
            return self.fail()
        self.open(name, end_marker=self.CALL_END)
        self.args("{")
        self.stack = ["o"]
        self.expecting = _KEY
        self.state = self.arguments
        return True

    # -- the arguments -------------------------------------------------------------------

    def arguments(self, final: bool) -> bool:
        """Read the arguments as far as the input goes (each character once): True when
        something was consumed or the state changed, False to wait for more input."""
        buf = self.buf
        n = len(buf)
        start = self.pos
        while self.state == self.arguments and self.pos < n:
            if self.key_parts:
                if not self._key(final):
                    break
                continue
            pos = self.pos
            c = buf[pos]
            if c in WS:
                found = _WS_RUN.match(buf, pos)
                assert found is not None
                self._pass(found.end())
                continue
            if c == "<":
                token = self.tokens.at(buf, pos)
                if token == "" and not final:
                    break
                if token == self.CALL_END:
                    # the call closed before its arguments did: the assembler says cut off
                    self.drop(token)
                    self.close()
                    return self.done()
                if token == self.QUOTE:
                    self.take(pos + len(token))
                    self.mark()
                    self.is_key = self.expecting == _KEY
                    self.call_args('"')
                    self.state = self.delimited
                    break
                self._scalar(pos)
                continue
            expecting = self.expecting
            if expecting == _KEY and _KEY_RUN.match(c):
                self._key(final)
                continue
            if expecting == _COLON and c == ":":
                self._pass(pos + 1)
                self.expecting = _VALUE
            elif c in "\"'":
                self.quote = c
                self.escape = False
                self.is_key = expecting == _KEY
                self._pass(pos + 1)
                self.state = self.quoted
            elif c == ",":
                self._pass(pos + 1)
                self.expecting = _KEY if self.stack[-1] == "o" else _VALUE
            elif c in "{[":
                self._pass(pos + 1)
                self.stack.append("o" if c == "{" else "a")
                self.expecting = _KEY if c == "{" else _VALUE
            elif c in "}]":
                self._pass(pos + 1)
                self.stack.pop()
                self.expecting = _AFTER
                if not self.stack:
                    self.state = self.call_close
            else:
                self._scalar(pos)
        return self.pos > start or self.state != self.arguments

    def call_args(self, text: str) -> None:
        assert self.call is not None
        self.call.args(text)

    def _pass(self, end: int) -> None:
        """The text up to ``end`` is argument text as written."""
        self.args(self.take(end))

    def _scalar(self, pos: int) -> None:
        """A value passed on as written (a number, a literal, a bare word), or a stray
        character: the assembler judges it."""
        found = _SCALAR_RUN.match(self.buf, pos)
        self._pass(found.end() if found is not None else pos + 1)
        self.expecting = _AFTER

    def _key(self, final: bool) -> bool:
        """Read a bare key (it ends at the first character no key has); False to wait
        for more input."""
        found = _KEY_RUN.match(self.buf, self.pos)
        if found is not None:
            piece = self.take(found.end())
            self.key_parts.append(piece)
            self.key_len += len(piece)
            if self.key_len > MAX_NAME_CHARS:
                # no key is that long: what was read goes on as written, to be judged
                self.args("".join(self.key_parts))
                self.key_parts = []
                self.key_len = 0
                self.expecting = _AFTER
                return True
        if self.pos < len(self.buf) or final:
            self._end_key()
            return True
        return found is not None

    def _end_key(self) -> None:
        key = "".join(self.key_parts)
        self.key_parts = []
        self.key_len = 0
        self.call_args('"' + escape(key) + '"')
        self.mark()
        self.expecting = _COLON

    def delimited(self, final: bool) -> bool:
        """A string between delimiters: its text, escaped, up to the closing delimiter."""
        buf, pos = self.buf, self.pos
        start, marker = self.quote_only.find(buf, pos)
        if marker is None and final:
            start = len(buf)
        if start > pos:
            self.call_args(escape(self.take(start)))
            self.mark()
        if marker is None:
            return start > pos
        self.take(start + len(marker))
        self.mark()
        self.call_args('"')
        self.expecting = _COLON if self.is_key else _AFTER
        self.is_key = False
        self.state = self.arguments
        return True

    def quoted(self, final: bool) -> bool:
        """A JSON string or a single-quoted one, passed on as written up to its quote."""
        buf, pos = self.buf, self.pos
        n = len(buf)
        inside = _IN_DOUBLE if self.quote == '"' else _IN_SINGLE
        i = pos
        while i < n:
            if self.escape:
                self.escape = False
                i += 1
                continue
            found = inside.search(buf, i)
            if found is None:
                i = n
                break
            j = found.start()
            if buf[j] == "\\":
                self.escape = True
                i = j + 1
                continue
            self._pass(j + 1)
            self.quote = ""
            self.expecting = _COLON if self.is_key else _AFTER
            self.is_key = False
            self.state = self.arguments
            return True
        if i > pos:
            self._pass(i)
            return True
        return False

    def call_close(self, final: bool) -> bool:
        """The arguments closed: the call's closing token comes next (anything else, and
        the call stays open: cut off)."""
        found = self.expect(self.call_end, final, drop_ws=True)
        if isinstance(found, bool):
            return found
        self.mark()
        self.close()
        self.state = self.framing
        return True

    def framing(self, final: bool) -> bool:
        """After a call: drop the template's token before a tool response, and a repeated
        closing token; anything else is the region's end."""
        buf = self.buf
        n = len(buf)
        i = self.pos
        while i < n and buf[i] in WS:
            i += 1
        if i - self.pos > MAX_HEADER_CHARS:
            return self.done()
        if i == n:
            if final:
                return self.done()
            return False
        found = self.after_call.at(buf, i)
        if found == "" and not final:
            return False
        if not found:
            return self.done()  # what follows is text again (the whitespace is framing)
        self.take(i + len(found))
        self.mark()
        return True

    def cut(self) -> None:
        if self.call is None:
            return
        if self.key_parts:
            self.call_args('"' + escape("".join(self.key_parts)))
            self.key_parts = []


class FunctionGemmaRegion(GemmaRegion):
    """``<start_function_call>call:NAME{key:<escape>text<escape>}<end_function_call>``
    (FunctionGemma): Gemma 4's syntax with ``<escape>`` around strings."""

    fmt = TextCallFormat.FUNCTIONGEMMA
    QUOTE = "<escape>"
    CALL_END = "<end_function_call>"
    AFTER_CALL = ("<start_function_response>", "<end_function_call>")
