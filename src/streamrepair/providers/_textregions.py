"""Which region a start marker opens: the registry of the text tool-call formats, and
``<tool_call>``, which Hermes, Qwen3-Coder and GLM share (what follows it decides)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ._textbase import NAME_START, Region
from ._textjson import HermesRegion, LlamaRegion, MistralRegion, PythonicRegion
from ._textscan import MarkerSet
from ._texttokens import DeepSeekRegion, HarmonyRegion, KimiRegion
from ._textxml import DsmlRegion, FunctionRegion, GlmRegion

if TYPE_CHECKING:
    from .textcalls import TextCallExtractor, TextCallFormat, _Channel

__all__: list[str] = []

_FUNCTION_OPEN = MarkerSet(["<function="])


class ToolCallTag(Region):
    """``<tool_call>``: what follows says which format it is."""

    gap = False  # whitespace came between the tag and what follows

    def begin(self, final: bool) -> bool:
        start = self.pos
        more = self.skip_ws()
        self.gap = self.gap or self.pos > start
        if not more:
            return self.wait(final)
        buf, pos, stage = self.buf, self.pos, self.stage
        c = buf[pos]
        if c == "{" and stage.allows("hermes"):
            return self.become(HermesRegion)
        if c == "<" and stage.allows("qwen3_coder"):
            found = _FUNCTION_OPEN.at(buf, pos)
            if found == "":
                return self.wait(final)
            if found:
                self.take(pos + len(found))
                return self.become(FunctionRegion, wrapped=True)
        # GLM's template writes the name right after the tag ("<tool_call>get_weather")
        if not self.gap and stage.allows("glm") and NAME_START.match(c):
            return self.become(GlmRegion)
        return self.fail()


# -- choosing a region ---------------------------------------------------------------------

#: The markers that open each format's markup in text (by format value).
START_MARKERS: Final[dict[str, tuple[str, ...]]] = {
    "hermes": ("<tool_call>",),
    "qwen3_coder": ("<tool_call>", "<function="),
    "glm": ("<tool_call>",),
    "deepseek": ("<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>"),
    "dsml": ("<｜DSML｜function_calls>",),
    "kimi_k2": (
        "<|tool_calls_section_begin|>",
        "<|tool_call_section_begin|>",
        "<|tool_call_begin|>",
    ),
    "mistral": ("[TOOL_CALLS]",),
    "llama3_json": ("<|python_tag|>", "<function="),
    "pythonic": ("<|python_start|>",),
    "harmony": ("<|channel|>", "<|start|>"),
}

_REGIONS: Final[dict[str, type[Region]]] = {
    "<tool_call>": ToolCallTag,
    "<function=": FunctionRegion,
    "<｜tool▁calls▁begin｜>": DeepSeekRegion,
    "<｜tool▁call▁begin｜>": DeepSeekRegion,
    "<｜DSML｜function_calls>": DsmlRegion,
    "<|tool_calls_section_begin|>": KimiRegion,
    "<|tool_call_section_begin|>": KimiRegion,
    "<|tool_call_begin|>": KimiRegion,
    "[TOOL_CALLS]": MistralRegion,
    "<|python_tag|>": LlamaRegion,
    "<|python_start|>": PythonicRegion,
    "<|channel|>": HarmonyRegion,
    "<|start|>": HarmonyRegion,
}


def region_for(stage: TextCallExtractor, ch: _Channel, marker: str, opener: str) -> Region:
    """The region a start marker opens."""
    return _REGIONS[marker](stage, ch, opener, marker)


def bare_region(stage: TextCallExtractor, ch: _Channel, fmt: TextCallFormat, opener: str) -> Region:
    """The region of a bare reply (``{`` for Llama JSON, ``[`` for pythonic)."""
    if fmt.value == "pythonic":
        return PythonicRegion(stage, ch, opener, "")
    return LlamaRegion(stage, ch, opener, "")
