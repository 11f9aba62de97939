"""Granite 3.x: ``<|tool_call|>`` (3.0) or ``<tool_call>`` (3.1 to 3.3) before a JSON array of
``{"name": N, "arguments": {...}}`` with no closing tag (vLLM's ``granite`` parser; Granite
writes the arguments before the name at times). Named only, never in ``auto``: Granite 4
writes Hermes markup (``granite4`` is ``hermes``), and ``<tool_call>[`` is not Hermes'."""

from __future__ import annotations

from ._calllist import CallListRegion
from ._formats import TOOL_CALL, TextCallFormat

__all__: list[str] = []


class GraniteRegion(CallListRegion):
    """``<|tool_call|>`` or ``<tool_call>``, then a JSON array of calls."""

    fmt = TextCallFormat.GRANITE
    CLOSE = ((TOOL_CALL, "</tool_call>"),)
