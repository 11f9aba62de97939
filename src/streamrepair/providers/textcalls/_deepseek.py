"""DeepSeek V3 / R1 / V3.1: ``<｜tool▁calls▁begin｜>`` then per call
``<｜tool▁call▁begin｜>`` ... ``<｜tool▁call▁end｜>`` (V3/R1 ``function<｜tool▁sep｜>NAME`` and a
fenced JSON, V3.1 ``NAME<｜tool▁sep｜>{JSON}``). The argument text is JSON, passed on as the
model wrote it. (V3.2's DSML is ``_dsml.py``.)"""

from __future__ import annotations

from typing import Final

from ._formats import DEEPSEEK_CALL, TextCallFormat
from ._region import MAX_NAME_CHARS, NameHeader, Region, valid_name
from ._scan import JsonExtent, MarkerSet

__all__: list[str] = []

_DS_SEP: Final = "<｜tool▁sep｜>"
_DS_CALL_END: Final = "<｜tool▁call▁end｜>"
_DS_CALLS_END: Final = "<｜tool▁calls▁end｜>"
_FENCE: Final = "```"


class DeepSeekRegion(Region):
    """``<｜tool▁calls▁begin｜>`` then per call ``<｜tool▁call▁begin｜>`` ...
    ``<｜tool▁call▁end｜>``: V3/R1 ``function<｜tool▁sep｜>NAME`` and a fenced JSON, V3.1
    ``NAME<｜tool▁sep｜>{JSON}``."""

    fmt = TextCallFormat.DEEPSEEK
    SECTION = MarkerSet([DEEPSEEK_CALL, _DS_CALLS_END])
    HEAD_END = MarkerSet([_DS_SEP])
    V3_NAME_END = MarkerSet(["\n", _FENCE, "{"])
    ARGS_END = MarkerSet([_DS_CALL_END, DEEPSEEK_CALL, _DS_CALLS_END, _FENCE])
    CALL_END = MarkerSet([_DS_CALL_END])
    FENCE = MarkerSet([_FENCE])

    def begin(self, final: bool) -> bool:
        self.state = self.head if self.marker == DEEPSEEK_CALL else self.section
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
