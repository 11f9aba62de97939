"""Mistral, Magistral, Devstral: ``[TOOL_CALLS]`` then a JSON array of calls (tokenizers
before v11) or ``NAME[ARGS]{JSON}`` (v11+). The argument text is passed on as the model
wrote it."""

from __future__ import annotations

from ._contract import Channel, Stage
from ._formats import MISTRAL_CALLS, TextCallFormat
from ._region import NAME_START, NameHeader, valid_name
from ._scan import COMPLETE, JsonExtent, MarkerSet
from ._wrapper import WrappedRegion, Wrapper

__all__: list[str] = []


class MistralRegion(WrappedRegion):
    """``[TOOL_CALLS]`` then a JSON array of ``{"name", "arguments"}`` (tokenizers before
    v11), or ``NAME[CALL_ID]ID[ARGS]{JSON}`` / ``NAME[ARGS]{JSON}`` (v11+; the JSON's
    own end closes the call, there is no closing token), or ``NAME{JSON}`` when
    ``[ARGS]`` was dropped as a special token."""

    fmt = TextCallFormat.MISTRAL
    NAME_END = MarkerSet(["[ARGS]", "[CALL_ID]", "{"])
    ID_END = MarkerSet(["[ARGS]"])
    NEXT = MarkerSet([MISTRAL_CALLS])

    def __init__(self, stage: Stage, ch: Channel, opener: str, marker: str = "") -> None:
        super().__init__(stage, ch, opener, marker)
        self.in_array = False
        self.name = ""
        self.wrapper: Wrapper | None = None

    def begin(self, final: bool) -> bool:
        if not self.skip_ws():
            return self.wait(final)
        c = self.buf[self.pos]
        if c == "[":
            self.take(self.pos + 1)
            self.in_array = True
            self.state = self.item
        elif c == "{":
            self.wrapper = Wrapper(self, self.NEXT)
            self.state = self.element
        elif NAME_START.match(c):
            self.state = self.v11_name
        else:
            return self.fail()
        return True

    def item(self, final: bool) -> bool:
        if not self.frame():
            return self.wait(final)
        c = self.buf[self.pos]
        if c == "{":
            self.wrapper = Wrapper(self, self.NEXT)
            self.state = self.element
        elif c == "]" and self.committed:
            self.take(self.pos + 1)
            self.mark()
            return self.done()
        elif c == "," and self.committed:
            self.take(self.pos + 1)
        else:
            return self.fail()
        return True

    def element(self, final: bool) -> bool:
        w = self.wrapper
        assert w is not None
        stepped = self.step_wrapper(w, final)
        if stepped is not None:
            return stepped
        if w.hit is not None:
            self.call = None  # the next [TOOL_CALLS] came first: this call is cut off
            return self.done()
        self.close()
        if not self.in_array:
            return self.done()
        self.state = self.item
        return True

    def v11_name(self, final: bool) -> bool:
        found = self.read_until(self.NAME_END, final, consume=False, check=NameHeader)
        if isinstance(found, bool):
            return found
        self.name = found[0].strip()
        if not valid_name(self.name):
            return self.fail()
        marker = found[1]
        if marker != "{":
            self.take(self.pos + len(marker))
        if marker == "[CALL_ID]":
            self.state = self.v11_id
            return True
        self._open_v11(None)
        if marker == "{":
            assert self.call is not None
            self.call.note("the call had no [ARGS] token")
        return True

    def v11_id(self, final: bool) -> bool:
        found = self.read_until(self.ID_END, final)
        if isinstance(found, bool):
            return found
        self._open_v11(found[0].strip() or None)
        return True

    def _open_v11(self, call_id: str | None) -> None:
        self.open(self.name, call_id=call_id, end_marker="}")
        self.extent = JsonExtent(self.NEXT, whole=True)
        self.state = self.v11_arguments

    def v11_arguments(self, final: bool) -> bool:
        end = self.pass_json(final)
        if isinstance(end, bool):
            return end
        if end is COMPLETE:
            self.close()
        else:
            self.call = None  # the next [TOOL_CALLS] came first: cut off
        return self.done()

    def end_marker(self) -> str | None:
        return "}"
