"""xLAM-2: a reply that is a JSON array of ``{"name": N, "arguments": {...}}``, or that array
in a ```` ```json ```` fence, inside ``<tool_call>...</tool_call>`` or after
``[TOOL_CALLS]`` (vLLM's ``xlam`` parser; ``[TOOL_CALLS]`` is read as Mistral's array).
Named only, never in ``auto``: a bare array has no marker to find. Without a marker the
reply is a call only as a bare Llama 3 JSON reply is (its arguments begin after a name,
one of the tools when tools are given)."""

from __future__ import annotations

from ._calllist import CallListRegion
from ._formats import TOOL_CALL, XLAM_FENCE, TextCallFormat

__all__: list[str] = []


class XlamRegion(CallListRegion):
    """A JSON array of calls: bare, fenced, or in ``<tool_call>``."""

    fmt = TextCallFormat.XLAM
    CLOSE = ((XLAM_FENCE, "```"), (TOOL_CALL, "</tool_call>"))
