"""LFM2 and LFM2.5: ``<|tool_call_start|>[f(a="x"), g()]<|tool_call_end|>``, a pythonic
call list between two tokens; LFM2.5 writes its text after the calls. Values are read as
the pythonic reader reads them.

vLLM's ``lfm2`` parser also recovers Python that is not Python; here only what leaves no
doubt is read (principle 2: refuse when in doubt):

* a raw newline inside a quoted string is kept as the newline it is (the assembler's
  ``raw_control_character`` repair, reported): where the string ends is not in doubt;
* a quote of the string's own kind inside it (``'sed -n '360,450p' f.py'``) is refused:
  where the string ends is a guess;
* ``07`` is refused: Python 3 has no such number, and Python 2 read it as octal;
* a set (``{'a', 'b'}``) is refused: JSON has no sets, and reading one as a list invents
  an order and keeps duplicates the set would not have.
"""

from __future__ import annotations

from ._formats import TextCallFormat
from ._llama import PythonicRegion
from ._scan import MarkerSet

__all__: list[str] = []


class Lfm2Region(PythonicRegion):
    """``<|tool_call_start|>`` then ``[f(a=1), g()]`` then ``<|tool_call_end|>``."""

    fmt = TextCallFormat.LFM2
    END = MarkerSet(["<|tool_call_end|>"])
