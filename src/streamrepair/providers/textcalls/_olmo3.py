"""OLMo 3: ``<function_calls>f(a="x")\ng(b=1)</function_calls>``, Python calls one a line,
no list around them. Its template writes each value with ``json.Marshal`` (Ollama's
``model/renderers/olmo3.go``), so values are JSON as written; Python literals (``'x'``,
``True``, ``None``) are read as the pythonic reader reads them (vLLM's ``olmo3`` parser
accepts both)."""

from __future__ import annotations

from ._formats import TextCallFormat
from ._llama import PythonicRegion
from ._scan import MarkerSet

__all__: list[str] = []


class Olmo3Region(PythonicRegion):
    """``<function_calls>`` then Python calls one a line, then ``</function_calls>``."""

    fmt = TextCallFormat.OLMO3
    END = MarkerSet(["</function_calls>"])
    BRACKETS = False
