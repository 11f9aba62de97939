"""Hunyuan-A13B: ``<tool_calls>[{"name": N, "arguments": {...}}, ...]</tool_calls>`` (vLLM's
``hunyuan_a13b`` parser); the reasoning template may close its ``</answer>`` after it,
which stays text. The argument text is passed on as the model wrote it."""

from __future__ import annotations

from ._calllist import CallListRegion
from ._formats import HUNYUAN_CALLS, TextCallFormat

__all__: list[str] = []


class HunyuanRegion(CallListRegion):
    """``<tool_calls>`` then a JSON array of calls, then ``</tool_calls>``."""

    fmt = TextCallFormat.HUNYUAN_A13B
    CLOSE = ((HUNYUAN_CALLS, "</tool_calls>"),)
