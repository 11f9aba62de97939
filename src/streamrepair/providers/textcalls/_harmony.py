"""gpt-oss Harmony: ``<|channel|>analysis<|message|>...<|end|>`` becomes reasoning,
``final`` and recipient-less ``commentary`` text, and ``commentary to=functions.N ...
<|message|>{JSON}<|call|>`` a call, its argument text passed on as the model wrote it."""

from __future__ import annotations

import re
from typing import Final

from ._contract import Channel, Stage
from ._formats import HARMONY_CHANNEL, HARMONY_START, TextCallFormat
from ._region import Region, valid_name
from ._scan import JsonExtent, MarkerSet

__all__: list[str] = []

_H_MESSAGE: Final = "<|message|>"
_H_ENDS: Final = ("<|end|>", "<|return|>", "<|call|>")
_RECIPIENT = re.compile(r"\bto=([^\s<]+)")
_CHANNEL = re.compile(r"[A-Za-z_][\w.-]*")


class HarmonyRegion(Region):
    """Harmony messages (gpt-oss): ``<|channel|>analysis<|message|>...<|end|>`` becomes
    reasoning, ``final`` and recipient-less ``commentary`` become text, and
    ``commentary to=functions.N ... <|message|>{JSON}<|call|>`` a call."""

    fmt = TextCallFormat.HARMONY
    HEADER_END = MarkerSet([_H_MESSAGE])
    BODY_END = MarkerSet([*_H_ENDS, HARMONY_START, HARMONY_CHANNEL])
    ARGS_END = MarkerSet([*_H_ENDS, HARMONY_START, HARMONY_CHANNEL])
    NEXT = MarkerSet([HARMONY_START, HARMONY_CHANNEL])

    def __init__(self, stage: Stage, ch: Channel, opener: str, marker: str = "") -> None:
        super().__init__(stage, ch, opener, marker)
        self.reasoning = False  # the message is the analysis channel

    def begin(self, final: bool) -> bool:
        self.state = self.header
        return True

    def header(self, final: bool) -> bool:
        found = self.read_until(self.HEADER_END, final)
        if isinstance(found, bool):
            return found
        head = found[0]
        if self.marker == HARMONY_CHANNEL:
            channel_text = head
        else:
            channel_text = head.split(HARMONY_CHANNEL, 1)[1] if HARMONY_CHANNEL in head else ""
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
        self.commit()
        self.mark()
        self.reasoning = channel == "analysis"
        self.state = self.body
        return True

    def body(self, final: bool) -> bool:
        buf, pos = self.buf, self.pos
        start, marker = self.BODY_END.find(buf, pos)
        if start > pos:
            self.take(start)
            self.mark()
            self.ch.emit_as(self.reasoning, buf[pos:start])
        if marker is None:
            if start == len(buf):
                return True
            if final:
                self.take(len(buf))
                self.mark()
                self.ch.emit_as(self.reasoning, buf[start:])
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
