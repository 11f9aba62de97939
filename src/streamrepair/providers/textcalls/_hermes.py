"""Hermes / Qwen2.5 / Qwen3: ``<tool_call>{"name": N, "arguments": {...}}</tool_call>``.
The argument text is passed on as the model wrote it."""

from __future__ import annotations

from ._contract import Call
from ._formats import TextCallFormat
from ._scan import MarkerSet
from ._wrapper import WrappedRegion, Wrapper

__all__: list[str] = []

_END = "</tool_call>"


class HermesRegion(WrappedRegion):
    """``<tool_call>{"name": N, "arguments": {...}}</tool_call>`` (opened by the
    ``<tool_call>`` region once a ``{`` follows the tag). Several objects joined by
    ``,`` in one tag are several calls (SGLang's base detector reads them so), each
    ended by the tag."""

    fmt = TextCallFormat.HERMES
    END = MarkerSet([_END])
    AFTER = MarkerSet([_END, ","])

    def begin(self, final: bool) -> bool:
        self.joined: list[Call] = []  # calls of this tag whose objects closed
        self.wrapper = Wrapper(self, self.END)
        self.state = self.body
        return True

    def end_marker(self) -> str | None:
        return _END

    def body(self, final: bool) -> bool:
        w = self.wrapper
        stepped = self.step_wrapper(w, final)
        if stepped is not None:
            return stepped
        if w.hit is not None:
            self.drop(w.hit)
            self.close()  # closed before its JSON was: the assembler says cut off
            return self.ended()
        self.state = self.after
        return True

    def after(self, final: bool) -> bool:
        found = self.expect(self.AFTER, final)
        if isinstance(found, bool):
            return found
        if found == ",":
            # another object follows in the same tag (held until it is a call): this
            # call ends with the tag
            assert self.call is not None
            self.joined.append(self.call)
            self.call = None
            self.wrapper = Wrapper(self, self.END)
            self.state = self.body
            return True
        self.mark()
        self.close()
        return self.ended()

    def ended(self) -> bool:
        """The tag closed: so did every call in it."""
        for call in self.joined:
            call.end()
        self.joined = []
        return self.done()
