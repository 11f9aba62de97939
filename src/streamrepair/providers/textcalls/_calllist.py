"""A JSON array of calls, ``[{"name": N, "arguments": {...}}, ...]``, after a start marker
(Hunyuan-A13B's ``<tool_calls>``, Command's ``<|START_ACTION|>``, Granite's
``<|tool_call|>``, Phi-4-mini's ``functools``, xLAM's fence) or, for xLAM, as the whole
reply: :class:`CallListRegion`, the family each of those formats' modules subclasses.

Each element is read by :class:`~._wrapper.Wrapper` (its argument text passed on as the
model wrote it). The calls of a list end together, when its ``]`` arrives: a list whose
``]`` never came is cut off, every call in it (the model may have meant more calls, and
the engines that run the ones already closed run what it did not finish). The closing
tag after the list, when the format has one, is taken as framing when it is there.

Two calls with no comma between them (``[{...}{...}]``, which Command models write now
and then: Ollama's ``model/parsers/cohere.go``) are both read, and the second one's notes
say so: where each begins is not in doubt.
"""

from __future__ import annotations

from ._contract import Call, Channel, Stage
from ._scan import MAX_HEADER_CHARS, WS, MarkerSet
from ._wrapper import WrappedRegion, Wrapper

__all__: list[str] = []


class CallListRegion(WrappedRegion):
    """``[`` then calls as JSON objects joined by ``,``, then ``]``, then (if the format has
    one for the marker that opened it) the closing tag. A subclass gives ``fmt``, the
    closing tag of each of its start markers (``CLOSE``), and the wrapper's keys."""

    #: (start marker, the tag that closes its list) pairs; a marker not listed has none.
    CLOSE: tuple[tuple[str, str], ...] = ()

    def __init__(self, stage: Stage, ch: Channel, opener: str, marker: str = "") -> None:
        super().__init__(stage, ch, opener, marker)
        self.bare = not marker  # a reply that is the list: a call only as Llama's are
        close = dict(self.CLOSE).get(marker, "")
        self.close_tag = MarkerSet([close]) if close else None
        self.ended: list[Call] = []  # calls read whole, ended when the list is
        self.wrapper: Wrapper | None = None
        self.after_element = False  # an element was read: ",", "]" or (noted) "{" next
        self.no_comma = False

    def end_marker(self) -> str | None:
        return "]"

    def begin(self, final: bool) -> bool:
        if not self.skip_ws():
            return self.wait(final)
        if self.buf[self.pos] != "[":
            return self.fail()
        self.take(self.pos + 1)
        self.state = self.item
        return True

    def item(self, final: bool) -> bool:
        if not self.frame():
            return self.wait(final)
        c = self.buf[self.pos]
        if c == "{":
            self.no_comma = self.after_element
            self.wrapper = Wrapper(self, self.close_tag)
            self.state = self.element
            return True
        if c == "," and self.after_element:
            self.take(self.pos + 1)
            self.after_element = False
            return True
        if c == "]" and self.after_element:
            self.take(self.pos + 1)
            self.mark()
            for call in self.ended:
                call.end()
            self.ended = []
            self.state = self.closing
            return True
        return self.fail()

    def _open_wrapped(self, name: str) -> None:
        super()._open_wrapped(name)
        if self.no_comma and self.call is not None:
            self.call.note("no comma between this call and the one before it in the list")

    def element(self, final: bool) -> bool:
        w = self.wrapper
        assert w is not None
        stepped = self.step_wrapper(w, final)
        if stepped is not None:
            return stepped
        assert self.call is not None
        if w.hit is not None:
            # the closing tag came inside the list: its calls stay open (cut off)
            self.drop(w.hit)
            self.call = None
            return self.done()
        self.ended.append(self.call)
        self.call = None
        self.after_element = True
        self.state = self.item
        return True

    def closing(self, final: bool) -> bool:
        """After ``]``: the closing tag, taken when it follows (after whitespace)."""
        if self.close_tag is None:
            return self.done()
        buf = self.buf
        n = len(buf)
        i = self.pos
        while i < n and buf[i] in WS:
            i += 1
        if i == n and not final and i - self.pos <= MAX_HEADER_CHARS:
            return False
        found = self.close_tag.at(buf, i) if i < n else None
        if found == "" and not final:
            return False
        if found:
            self.take(i + len(found))
            self.mark()
        return self.done()
