"""Seed-OSS: ``<seed:tool_call>\n<function=NAME>\n<parameter=K>V</parameter>\n</function>
\n</seed:tool_call>``, Qwen3-Coder's inner XML in its own wrapper, values written inline
(no framing newlines: a value's newlines are its own). Values are raw text typed by the
tool's schema (:class:`TextValue`; the template writes non-strings with Jinja's
``|string``). The model also drafts calls inside its ``<seed:think>`` block: those are
not read (``_readers.py`` gives the format its think markers)."""

from __future__ import annotations

from ._formats import TextCallFormat
from ._qwen3_coder import FunctionRegion
from ._region import Region
from ._scan import MarkerSet

__all__: list[str] = []

_END = "</seed:tool_call>"


class SeedFunctionRegion(FunctionRegion):
    """``<function=NAME>...</function>`` inside ``<seed:tool_call>``: Qwen3-Coder's reading
    with Seed-OSS's wrapper, and no framing newlines around values."""

    fmt = TextCallFormat.SEED_OSS
    END_TAG = _END
    TRIM = False
    VALUE_END = MarkerSet(["</parameter>", "<parameter=", "</function>", _END])
    AFTER_PARAM = MarkerSet(["<parameter=", "</function>", _END])
    TOOL_END = MarkerSet([_END])
    WRAPPED_FOLLOW = MarkerSet([_END])
    NEXT_CALL = MarkerSet(["<seed:tool_call>"])


class SeedToolCallTag(Region):
    """``<seed:tool_call>``: after whitespace, ``<function=`` begins the call; anything
    else is text."""

    fmt = TextCallFormat.SEED_OSS
    FUNCTION = MarkerSet(["<function="])

    def begin(self, final: bool) -> bool:
        found = self.expect(self.FUNCTION, final)
        if isinstance(found, bool):
            return found
        return self.become(SeedFunctionRegion, wrapped=True)
