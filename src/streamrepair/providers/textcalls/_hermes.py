"""Hermes / Qwen2.5 / Qwen3: ``<tool_call>{"name": N, "arguments": {...}}</tool_call>``.
The argument text is passed on as the model wrote it."""

from __future__ import annotations

from ._formats import TextCallFormat
from ._scan import MarkerSet
from ._wrapper import WrappedRegion, Wrapper

__all__: list[str] = []

_END = "</tool_call>"


class HermesRegion(WrappedRegion):
    """``<tool_call>{"name": N, "arguments": {...}}</tool_call>`` (opened by the
    ``<tool_call>`` region once a ``{`` follows the tag)."""

    fmt = TextCallFormat.HERMES
    END = MarkerSet([_END])

    def begin(self, final: bool) -> bool:
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
            return self.done()
        self.state = self.after
        return True

    def after(self, final: bool) -> bool:
        found = self.expect(self.END, final)
        if isinstance(found, bool):
            return found
        self.mark()
        self.close()
        return self.done()
