"""Kimi K2: ``<|tool_calls_section_begin|>`` then per call ``<|tool_call_begin|>functions.N:I
<|tool_call_argument_begin|>{JSON}<|tool_call_end|>``. The argument text is JSON, passed
on as the model wrote it; the id is the call's id."""

from __future__ import annotations

import re
from typing import Final

from ._formats import KIMI_CALL, TextCallFormat
from ._region import MAX_NAME_CHARS, NAME_BAD, HeaderCheck, Region, valid_name
from ._scan import JsonExtent, MarkerSet

__all__: list[str] = []

_KIMI_ARGS: Final = "<|tool_call_argument_begin|>"
_KIMI_CALL_END: Final = "<|tool_call_end|>"
_KIMI_SECTION_END: Final = ("<|tool_calls_section_end|>", "<|tool_call_section_end|>")


_FUNCTIONS: Final = "functions."
#: A call id: ``functions.NAME:IDX`` (or ``NAME:IDX``), the index digits.
_ID = re.compile(r"(.*):[0-9]+", re.DOTALL)


def kimi_name(ident: str) -> str:
    """The tool name in a Kimi call id: what stands between ``functions.`` (or the last
    ``.``) and the last ``:``, which the index digits follow. ``""`` when ``ident`` is no
    call id (no ``:IDX`` at its end: vLLM's parser skips such a call; here its markup is
    text, see :meth:`KimiRegion.call_id`)."""
    found = _ID.fullmatch(ident)
    if found is None:
        return ""
    head = found.group(1)
    return head[len(_FUNCTIONS) :] if head.startswith(_FUNCTIONS) else head.rsplit(".", 1)[-1]


class KimiId(HeaderCheck):
    """A Kimi call id as :meth:`KimiRegion.call_id` reads it. Once it begins
    ``functions.``, the name is all that stands between that and the id's last ``:``,
    and digits follow that ``:``: ruled out by whitespace or a character no name has
    before a ``:`` (no ``:IDX`` can follow whitespace), by one after a ``:`` that is
    neither an index digit nor whitespace after the index, by anything but whitespace
    after that, and by a name longer than :data:`MAX_NAME_CHARS`. An id without the
    prefix takes its name after its last ``.``, which what follows may still supply: it
    is held to the header bound."""

    __slots__ = ("colon", "digits", "free", "matched", "other", "size", "trailing")

    def __init__(self) -> None:
        self.matched = -1  # characters of "functions." matched; -1: leading whitespace
        self.free = False  # no "functions." prefix: nothing to rule out
        self.colon = False  # a ":" came after the prefix
        self.size = 0  # characters after the prefix (the name is those before the last ":")
        self.digits = 0  # digits since the last ":"
        self.other = False  # a character other than a digit since the last ":"
        self.trailing = False  # whitespace after ":IDX": only whitespace may follow

    def feed(self, piece: str) -> bool:
        for char in piece:
            if self.free:
                return True
            if self.matched < len(_FUNCTIONS):
                if self.matched < 0:
                    if char.isspace():
                        continue
                    self.matched = 0
                if char != _FUNCTIONS[self.matched]:
                    self.free = True
                    return True
                self.matched += 1
            elif not self._after_prefix(char):
                return False
        return True

    def _after_prefix(self, char: str) -> bool:
        if self.trailing:
            return char.isspace()
        if char == ":":
            if self.size > MAX_NAME_CHARS:
                return False  # everything before this ":" is part of the name
            self.colon = True
            self.digits = 0
            self.other = False
        elif NAME_BAD.match(char) is not None:
            # in no name; after the index, whitespace is the id's end
            self.trailing = char.isspace() and self.digits > 0 and not self.other
            return self.trailing
        elif self.colon:
            if char.isdigit():
                self.digits += 1
            else:
                self.other = True  # a name with a ":" in it, if another ":" follows
        self.size += 1
        return self.colon or self.size <= MAX_NAME_CHARS


class KimiRegion(Region):
    """``<|tool_calls_section_begin|>`` then per call ``<|tool_call_begin|>functions.N:I
    <|tool_call_argument_begin|>{JSON}<|tool_call_end|>``: the id is the call id, the
    name is what stands between ``functions.`` (or the last ``.``) and the last ``:``."""

    fmt = TextCallFormat.KIMI_K2
    SECTION = MarkerSet([KIMI_CALL, *_KIMI_SECTION_END])
    ID_END = MarkerSet([_KIMI_ARGS])
    ARGS_END = MarkerSet([_KIMI_CALL_END, KIMI_CALL, *_KIMI_SECTION_END])

    def begin(self, final: bool) -> bool:
        self.state = self.call_id if self.marker == KIMI_CALL else self.section
        return True

    def section(self, final: bool) -> bool:
        found = self.expect(self.SECTION, final, frame=True)
        if isinstance(found, bool):
            return found
        if found != KIMI_CALL:
            self.mark()
            return self.done()
        self.state = self.call_id
        return True

    def call_id(self, final: bool) -> bool:
        found = self.read_until(self.ID_END, final, check=KimiId)
        if isinstance(found, bool):
            return found
        ident = found[0].strip()  # vllm-project/vllm#38579: newlines around ids
        name = kimi_name(ident)
        if not valid_name(name):
            # An id that is not [functions.]NAME:IDX (``functions.invalid.0``, a bare
            # counter ``0``) names no tool the model wrote: vLLM skips the call (its
            # markup and arguments are dropped); here the markup is text, as any markup
            # that cannot be a call. Naming it after a tool would be a guess.
            return self.fail()
        self.open(name, call_id=ident or None, end_marker=_KIMI_CALL_END)
        self.extent = JsonExtent(self.ARGS_END, whole=False)
        self.state = self.arguments
        return True

    def arguments(self, final: bool) -> bool:
        end = self.pass_json(final)
        if isinstance(end, bool):
            return end
        if end == _KIMI_CALL_END:
            return self.close_at(end, self.section)
        return self.cut_at(self.section)  # no end token
