"""Cohere Command A / R7B: ``<|START_ACTION|>[{"tool_call_id": "0", "tool_name": N,
"parameters": {...}}, ...]<|END_ACTION|>``. The ``tool_call_id`` becomes the call's id; the
argument text is passed on as the model wrote it.

The rest of the template's markup (``<|START_THINKING|>...<|END_THINKING|>``,
``<|START_RESPONSE|>`` or ``<|START_TEXT|>`` around the reply, citations ``<co>...</co: 0:[1]>``)
is the content's, passed on as it came, as a ``<think>`` block is for the other formats."""

from __future__ import annotations

from ._calllist import CallListRegion
from ._formats import COMMAND_ACTION, TextCallFormat

__all__: list[str] = []


class CommandRegion(CallListRegion):
    """``<|START_ACTION|>`` then a JSON array of actions, then ``<|END_ACTION|>``."""

    fmt = TextCallFormat.COMMAND
    CLOSE = ((COMMAND_ACTION, "<|END_ACTION|>"),)
    NAME_KEY = "tool_name"
    ARGUMENT_KEYS = ("parameters",)
    ID_KEY = "tool_call_id"
