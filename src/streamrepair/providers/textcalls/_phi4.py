"""Phi-4-mini: ``functools[{"name": N, "arguments": {...}}, ...]`` (``functools`` is a token
of its vocabulary; vLLM's ``phi4_mini_json`` parser). Named only, never in ``auto``:
``functools`` is also a word of Python prose."""

from __future__ import annotations

from ._calllist import CallListRegion
from ._formats import TextCallFormat

__all__: list[str] = []


class Phi4MiniRegion(CallListRegion):
    """``functools`` then a JSON array of calls."""

    fmt = TextCallFormat.PHI4_MINI
