"""``<tool_call>``, the start marker Hermes, Qwen3-Coder and GLM share (and, when named,
Granite 3.x and xLAM): what follows the tag says which format it is, and the markup read
so far is handed to that format's region."""

from __future__ import annotations

from ._formats import FUNCTION, TextCallFormat
from ._glm import GlmRegion
from ._granite import GraniteRegion
from ._hermes import HermesRegion
from ._qwen3_coder import FunctionRegion
from ._region import NAME_START, Region
from ._scan import MarkerSet
from ._xlam import XlamRegion

__all__: list[str] = []

_FUNCTION_OPEN = MarkerSet([FUNCTION])


class ToolCallTag(Region):
    """``<tool_call>``: a ``{`` is Hermes JSON, ``<function=`` Qwen3-Coder XML, a name
    GLM (right after the tag; after whitespace, only with ``<arg_key>`` or to a known
    tool after it), a ``[`` a Granite or xLAM list (those two only when named), among
    the formats allowed now; anything else is text."""

    gap = False  # whitespace came between the tag and what follows

    def begin(self, final: bool) -> bool:
        start = self.pos
        more = self.skip_ws()
        self.gap = self.gap or self.pos > start
        if not more:
            return self.wait(final)
        buf, pos, stage = self.buf, self.pos, self.stage
        c = buf[pos]
        if c == "{" and stage.allows(TextCallFormat.HERMES):
            return self.become(HermesRegion)
        if c == "[" and stage.allows(TextCallFormat.GRANITE):
            return self.become(GraniteRegion)
        if c == "[" and stage.allows(TextCallFormat.XLAM):
            return self.become(XlamRegion)
        if c == "<" and stage.allows(TextCallFormat.QWEN3_CODER):
            found = _FUNCTION_OPEN.at(buf, pos)
            if found == "":
                return self.wait(final)
            if found:
                self.take(pos + len(found))
                return self.become(FunctionRegion, wrapped=True)
        # GLM's template writes the name right after the tag ("<tool_call>get_weather");
        # after whitespace the name is a call only once its arguments follow
        if stage.allows(TextCallFormat.GLM) and NAME_START.match(c):
            return self.become(GlmRegion, spaced=self.gap)
        return self.fail()
