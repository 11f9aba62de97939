"""The contract between the extractor and the format readers, written down.

A format reader (a :class:`~._region.Region` subclass, one per format) reads markup from a
channel and tells the extractor what it found; the extractor feeds the channels and drives
the region that is open. Neither side imports the other: each uses the other through the
protocols here, and this module imports nothing of the package but the format enum.

* :class:`Stage`: what a reader asks the extractor (the tools given, the bound of held
  markup, which format calls are read in) and tells it (a call in a format was confirmed);
* :class:`Channel`: the text a reader reads (``buf`` from ``pos``) and where what it
  decides goes (text passed on, a call announced, the region released or ended);
* :class:`Call`: an announced call, as a reader writes its argument text, notes and
  repairs and closes it;
* :class:`Markup`: an open region, as a channel steps it and releases it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ._formats import TextCallFormat

__all__ = ["Call", "Channel", "Markup", "Stage"]


class Call(Protocol):
    """One call announced by a reader: its argument text as the reader writes it."""

    @property
    def size(self) -> int:
        """Characters of argument text passed on so far (repair offsets count from it)."""
        ...

    def args(self, text: str) -> None:
        """Pass on argument text (JSON text, as written or as converted)."""
        ...

    def key(self, key: str) -> None:
        """Begin a member of the argument object: ``"key": `` (and the comma before it)."""
        ...

    def note(self, text: str) -> None:
        """Record a note for the call (``ToolCallReady.notes``), once."""
        ...

    def repair(self, offset: int, description: str) -> None:
        """Record a ``markup_value`` repair at ``offset`` of the argument text."""
        ...

    def end(self) -> None:
        """The call's markup is complete: the call may be judged finished."""
        ...


class Markup(Protocol):
    """An open region of markup, as its channel drives it."""

    #: The markup consumed since it last became output: released as text if the region
    #: turns out not to be markup (its first piece as text, the rest scanned again).
    held: list[str]

    def step(self, final: bool) -> bool:
        """Read from the channel's position: True when it consumed something (or ended),
        False to wait for more input. With ``final`` (the input ended) it never waits."""
        ...

    def finish(self) -> None:
        """The input ended and every character was read: pass on what an open value
        holds and release what is held."""
        ...


class Channel(Protocol):
    """The content or the reasoning text, as a reader reads it."""

    #: The undecided text; a reader reads it from ``pos`` and moves ``pos`` past what it took.
    buf: str
    pos: int
    #: The region reading the text now; a reader hands over to another by setting it.
    region: Markup | None

    def emit(self, text: str) -> None:
        """Pass ``text`` on as this channel's text."""
        ...

    def emit_as(self, reasoning: bool, text: str) -> None:
        """Pass ``text`` on as reasoning or as content, in this channel's block (Harmony's
        analysis channel is reasoning wherever it was written)."""
        ...

    def release(self, region: Markup) -> None:
        """``region`` is not markup (any more): its first held piece is text, the rest is
        scanned again."""
        ...

    def end_region(self) -> None:
        """The region ended as markup: what follows is text again."""
        ...

    def open_call(
        self,
        fmt: TextCallFormat,
        name: str,
        *,
        call_id: str | None = None,
        end_marker: str | None = None,
    ) -> Call:
        """Announce a call read in ``fmt`` (``call_id`` when the markup gives one;
        ``end_marker``, what closes it, for the tracker's notes)."""
        ...


class Stage(Protocol):
    """The extractor, as a reader asks it."""

    #: The format the caller named, or ``TextCallFormat.AUTO``.
    requested: TextCallFormat

    @property
    def max_size(self) -> int:
        """The most markup held before a call's name (a JSON wrapper that puts its
        arguments first); the assembler's bound."""
        ...

    @property
    def clean_stop(self) -> bool:
        """Whether the provider said the response stopped cleanly (``stop``,
        ``tool_calls``): when the input ends, a call whose end is a stop token the
        server removed (Harmony's ``<|call|>``) ended as the model ended it."""
        ...

    def allows(self, fmt: TextCallFormat) -> bool:
        """Whether calls in ``fmt`` may be read now (the format named, or in ``auto``
        any until the first call is confirmed)."""
        ...

    def lock(self, fmt: TextCallFormat) -> None:
        """Markup in ``fmt`` was confirmed: in ``auto``, keep to that format."""
        ...

    def known_tool(self, name: str) -> bool | None:
        """Whether ``name`` is among the tools given; None when none were."""
        ...

    def tool_may_start(self, prefix: str) -> bool | None:
        """Whether some tool's name begins with ``prefix``; None when no tools were given."""
        ...

    def schema(self, name: str) -> Mapping[str, Any] | None:
        """The argument schema of tool ``name``, when tools were given."""
        ...
