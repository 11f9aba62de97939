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
#: The channels of the Harmony format (openai/harmony): reasoning, tool calls and
#: preambles, the reply.
_CHANNELS: Final = frozenset({"analysis", "commentary", "final"})


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
        self.written = False  # the call's argument text other than whitespace came

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
        if self.marker == HARMONY_START and HARMONY_CHANNEL not in head:
            # "<|start|>assistant<|message|>": a message on no channel is the reply
            role = head.split()
            channel = "final" if len(role) == 1 and _CHANNEL.fullmatch(role[0]) else ""
        recipient = _RECIPIENT.search(head)
        target = recipient.group(1) if recipient is not None else ""
        if channel not in _CHANNELS and not target:
            # Harmony has three channels; any other word is not its framing, and the
            # header is released as the text it is (a message on an unknown channel
            # would drop what the model wrote before <|message|>)
            return self.fail()
        if target.startswith("functions."):
            name = target[len("functions.") :]
            if not valid_name(name):
                return self.fail()
            self.open(name, end_marker="<|call|>")
            self.written = False
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
        start = self.pos
        end = self.pass_json(final)
        if not self.written and self.pos > start:
            self.written = not self.buf[start : self.pos].isspace()
        if isinstance(end, bool):
            return end
        if end in _H_ENDS:
            if end != "<|call|>":
                # the message ended, with the token of a message rather than a call's:
                # the model finished it (Ollama's Harmony parser ends calls so)
                assert self.call is not None
                self.call.note(f"the call message ended with {end}, not <|call|>")
            return self.close_at(end, self.between)
        return self.cut_at(self.between)  # a new message began: the call never ended

    def cut(self) -> None:
        """The input ended inside a call's arguments. ``<|call|>`` is a stop token: a
        server stops on it and leaves it out of the text, so with the provider's clean
        stop a call with argument text ended there (a stream cut at ``length`` stays cut
        off, and the assembler still refuses JSON that did not close)."""
        if self.call is not None and self.written and self.stage.clean_stop:
            self.call.note("the call ended with the stream (its <|call|> stop token removed)")
            self.close()

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
