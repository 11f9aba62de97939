"""The text tool-call formats built of special tokens: DeepSeek V3 / R1 / V3.1
(``<｜tool▁call▁begin｜>``), Kimi K2 (``<|tool_call_begin|>``) and gpt-oss Harmony
(``<|channel|>``). Their argument text is JSON, passed on as the model wrote it."""

from __future__ import annotations

import re
from typing import Any, Final

from ._textbase import MAX_NAME_CHARS, NAME_BAD, HeaderCheck, NameHeader, Region, valid_name
from ._textscan import JsonExtent, MarkerSet

__all__: list[str] = []


# -- DeepSeek V3 / R1 / V3.1, and V3.2 DSML -----------------------------------------------

_DS_CALLS_BEGIN: Final = "<｜tool▁calls▁begin｜>"
_DS_CALL_BEGIN: Final = "<｜tool▁call▁begin｜>"
_DS_SEP: Final = "<｜tool▁sep｜>"
_DS_CALL_END: Final = "<｜tool▁call▁end｜>"
_DS_CALLS_END: Final = "<｜tool▁calls▁end｜>"
_FENCE: Final = "```"


class DeepSeekRegion(Region):
    """``<｜tool▁calls▁begin｜>`` then per call ``<｜tool▁call▁begin｜>`` ...
    ``<｜tool▁call▁end｜>``: V3/R1 ``function<｜tool▁sep｜>NAME`` and a fenced JSON, V3.1
    ``NAME<｜tool▁sep｜>{JSON}``."""

    fmt = "deepseek"
    SECTION = MarkerSet([_DS_CALL_BEGIN, _DS_CALLS_END])
    HEAD_END = MarkerSet([_DS_SEP])
    V3_NAME_END = MarkerSet(["\n", _FENCE, "{"])
    ARGS_END = MarkerSet([_DS_CALL_END, _DS_CALL_BEGIN, _DS_CALLS_END, _FENCE])
    CALL_END = MarkerSet([_DS_CALL_END])
    FENCE = MarkerSet([_FENCE])

    def begin(self, final: bool) -> bool:
        self.state = self.head if self.marker == _DS_CALL_BEGIN else self.section
        return True

    def section(self, final: bool) -> bool:
        found = self.expect(self.SECTION, final, frame=True)
        if isinstance(found, bool):
            return found
        if found == _DS_CALLS_END:
            self.mark()
            return self.done()
        self.state = self.head
        return True

    def head(self, final: bool) -> bool:
        found = self.read_until(self.HEAD_END, final, check=NameHeader)
        if isinstance(found, bool):
            return found
        head = found[0].strip()
        if head == "function":
            self.state = self.v3_or_v31
            return True
        return self._open(head)

    def _open(self, name: str) -> bool:
        if not valid_name(name):
            return self.fail()
        self.open(name, end_marker=_DS_CALL_END)
        self.extent = JsonExtent(self.ARGS_END, whole=False)
        self.state = self.arguments
        return True

    def v3_or_v31(self, final: bool) -> bool:
        if self.buf[self.pos] == "{":
            return self._open("function")  # V3.1, a tool named "function"
        self.state = self.v3_name
        return True

    def v3_name(self, final: bool) -> bool:
        found = self.read_until(self.V3_NAME_END, final, consume=False, check=NameHeader)
        if isinstance(found, bool):
            return found
        name = found[0].strip()
        if not valid_name(name):
            return self.fail()
        self._open(name)
        self.state = self.v3_fence
        return True

    def v3_fence(self, final: bool) -> bool:
        if not self.skip_ws():
            return self.wait(final)
        buf, pos = self.buf, self.pos
        found = self.FENCE.at(buf, pos)
        if found == "":
            return self.wait(final)
        if found:
            line = buf.find("\n", pos)
            if line < 0:
                if len(buf) - pos > MAX_NAME_CHARS:
                    return self.fail()
                return self.wait(final)
            self.take(line + 1)
        self.mark()
        self.state = self.arguments
        return True

    def arguments(self, final: bool) -> bool:
        end = self.pass_json(final)
        if isinstance(end, bool):
            return end
        if end == _DS_CALL_END:
            return self.close_at(end, self.section)
        if end == _FENCE:
            self.drop(end)
            self.state = self.v3_close
            return True
        return self.cut_at(self.section)  # no end token

    def v3_close(self, final: bool) -> bool:
        found = self.expect(self.CALL_END, final)
        if isinstance(found, bool):
            return found
        self.mark()
        self.close()
        self.state = self.section
        return True


# -- Kimi K2 -------------------------------------------------------------------------------

_KIMI_CALL_BEGIN: Final = "<|tool_call_begin|>"
_KIMI_ARGS: Final = "<|tool_call_argument_begin|>"
_KIMI_CALL_END: Final = "<|tool_call_end|>"
_KIMI_SECTION_END: Final = ("<|tool_calls_section_end|>", "<|tool_call_section_end|>")


_FUNCTIONS: Final = "functions."


def kimi_name(ident: str) -> str:
    """The tool name in a Kimi call id: what stands between ``functions.`` (or the last
    ``.``) and the last ``:``."""
    head = ident.rsplit(":", 1)[0] if ":" in ident else ident
    return head[len(_FUNCTIONS) :] if head.startswith(_FUNCTIONS) else head.rsplit(".", 1)[-1]


class KimiId(HeaderCheck):
    """A Kimi call id as :meth:`KimiRegion.call_id` reads it. Once it begins
    ``functions.``, the name is all that stands between that and the id's last ``:``:
    ruled out by whitespace or a character no name has before the first ``:`` (only
    whitespace may follow whitespace there), by one between two ``:``, and by a name
    longer than :data:`MAX_NAME_CHARS`. An id without the prefix takes its name after
    its last ``.``, which what follows may still supply: it is held to the header
    bound."""

    __slots__ = ("bad", "colon", "free", "matched", "size", "spaced")

    def __init__(self) -> None:
        self.matched = -1  # characters of "functions." matched; -1: leading whitespace
        self.free = False  # no "functions." prefix: nothing to rule out
        self.colon = False  # a ":" came after the prefix
        self.size = 0  # name characters after the prefix (up to the last ":")
        self.bad = False  # a character no name has came since the last ":"
        self.spaced = False  # whitespace came before the first ":"

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
        if char == ":":
            if self.bad or self.spaced or self.size > MAX_NAME_CHARS:
                return False  # what came before this ":" is part of the name
            self.colon = True
        elif NAME_BAD.match(char) is not None:
            if self.colon:
                self.bad = True  # in the index, unless another ":" follows
                return True
            if not char.isspace():
                return False
            self.spaced = True
            return True
        elif self.spaced:
            return False
        self.size += 1
        return self.colon or self.size <= MAX_NAME_CHARS


class KimiRegion(Region):
    """``<|tool_calls_section_begin|>`` then per call ``<|tool_call_begin|>functions.N:I
    <|tool_call_argument_begin|>{JSON}<|tool_call_end|>``: the id is the call id, the
    name is what stands between ``functions.`` (or the last ``.``) and the last ``:``."""

    fmt = "kimi_k2"
    SECTION = MarkerSet([_KIMI_CALL_BEGIN, *_KIMI_SECTION_END])
    ID_END = MarkerSet([_KIMI_ARGS])
    ARGS_END = MarkerSet([_KIMI_CALL_END, _KIMI_CALL_BEGIN, *_KIMI_SECTION_END])

    def begin(self, final: bool) -> bool:
        self.state = self.call_id if self.marker == _KIMI_CALL_BEGIN else self.section
        return True

    def section(self, final: bool) -> bool:
        found = self.expect(self.SECTION, final, frame=True)
        if isinstance(found, bool):
            return found
        if found != _KIMI_CALL_BEGIN:
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


# -- gpt-oss Harmony -----------------------------------------------------------------------

_H_MESSAGE: Final = "<|message|>"
_H_CHANNEL: Final = "<|channel|>"
_H_START: Final = "<|start|>"
_H_ENDS: Final = ("<|end|>", "<|return|>", "<|call|>")
_RECIPIENT = re.compile(r"\bto=([^\s<]+)")
_CHANNEL = re.compile(r"[A-Za-z_][\w.-]*")


class HarmonyRegion(Region):
    """Harmony messages (gpt-oss): ``<|channel|>analysis<|message|>...<|end|>`` becomes
    reasoning, ``final`` and recipient-less ``commentary`` become text, and
    ``commentary to=functions.N ... <|message|>{JSON}<|call|>`` a call."""

    fmt = "harmony"
    HEADER_END = MarkerSet([_H_MESSAGE])
    BODY_END = MarkerSet([*_H_ENDS, _H_START, _H_CHANNEL])
    ARGS_END = MarkerSet([*_H_ENDS, _H_START, _H_CHANNEL])
    NEXT = MarkerSet([_H_START, _H_CHANNEL])

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.channel_kind: str = "text"

    def begin(self, final: bool) -> bool:
        self.state = self.header
        return True

    def header(self, final: bool) -> bool:
        found = self.read_until(self.HEADER_END, final)
        if isinstance(found, bool):
            return found
        head = found[0]
        if self.marker == _H_CHANNEL:
            channel_text = head
        else:
            channel_text = head.split(_H_CHANNEL, 1)[1] if _H_CHANNEL in head else ""
        words = channel_text.replace("<|constrain|>", " ").split()
        channel = words[0] if words else ""
        recipient = _RECIPIENT.search(head)
        target = recipient.group(1) if recipient is not None else ""
        if not _CHANNEL.fullmatch(channel) and not target:
            return self.fail()  # a channel is a word: analysis, commentary, final
        if target.startswith("functions."):
            name = target[len("functions.") :]
            if not valid_name(name):
                return self.fail()
            self.open(name, end_marker="<|call|>")
            self.extent = JsonExtent(self.ARGS_END, whole=False)
            self.state = self.arguments
            return True
        if not self.committed:
            self.committed = True
            self.stage.lock(self.format())
        self.mark()
        self.channel_kind = "reasoning" if channel == "analysis" else "text"
        self.state = self.body
        return True

    def body(self, final: bool) -> bool:
        buf, pos = self.buf, self.pos
        start, marker = self.BODY_END.find(buf, pos)
        if start > pos:
            self.take(start)
            self.mark()
            self.stage.emit_kind(self.ch, self.channel_kind == "reasoning", buf[pos:start])
        if marker is None:
            if start == len(buf):
                return True
            if final:
                self.take(len(buf))
                self.mark()
                self.stage.emit_kind(self.ch, self.channel_kind == "reasoning", buf[start:])
                return True
            return False
        if marker in _H_ENDS:
            self.drop(marker)
        self.state = self.between
        return True

    def arguments(self, final: bool) -> bool:
        end = self.pass_json(final)
        if isinstance(end, bool):
            return end
        if end == "<|call|>":
            return self.close_at(end, self.between)
        if end in _H_ENDS:
            self.drop(end)  # <|end|> or <|return|>, not <|call|>
        return self.cut_at(self.between)

    def between(self, final: bool) -> bool:
        if not self.frame():
            return self.wait(final)
        found = self.NEXT.at(self.buf, self.pos)
        if found == "":
            return self.wait(final)
        if found is None:
            self.mark()
            return self.done()
        self.drop(found)
        self.marker = found
        self.state = self.header
        return True
