"""The package's exceptions.

Every error raised on purpose by streamrepair derives from :class:`StreamRepairError`.
Parsing errors carry where they happened (``offset``, ``line``, ``column``), why
(``reason``) and what would have been accepted there (``expected``), so a harness
can tell the model exactly what to fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .results import Repaired

__all__ = [
    "AssemblerFinishedError",
    "ConcatenatedValuesError",
    "StreamRepairError",
    "TooDeepError",
    "TooLargeError",
    "UnrepairableError",
]


class StreamRepairError(Exception):
    """Base class of every exception streamrepair raises on purpose."""


class UnrepairableError(StreamRepairError, ValueError):
    """The argument text cannot be turned into a value without guessing.

    Attributes:
        reason: a short human sentence saying what is wrong.
        offset: 0-based character offset of the first impossible character
            (or of the end of input when the problem is that nothing arrived).
        line, column: 1-based position of that character.
        expected: what would have been accepted there, e.g. ``"',' or '}'"``;
            empty when nothing could have been.
    """

    def __init__(
        self,
        reason: str,
        *,
        offset: int,
        line: int,
        column: int,
        expected: str = "",
    ) -> None:
        self.reason = reason
        self.offset = offset
        self.line = line
        self.column = column
        self.expected = expected
        message = f"{reason} at line {line} column {column} (offset {offset})"
        if expected:
            message += f"; expected {expected}"
        super().__init__(message)


class TooLargeError(UnrepairableError):
    """The text passed a size bound (``max_size`` of an assembler, or the repair bound
    of :func:`streamrepair.repair`). ``limit`` holds the bound that was hit."""

    def __init__(self, reason: str, *, limit: int, offset: int, line: int, column: int) -> None:
        self.limit = limit
        super().__init__(reason, offset=offset, line=line, column=column)


class TooDeepError(UnrepairableError):
    """Containers nested deeper than ``max_depth``. ``limit`` holds that bound."""

    def __init__(self, reason: str, *, limit: int, offset: int, line: int, column: int) -> None:
        self.limit = limit
        super().__init__(reason, offset=offset, line=line, column=column)


class ConcatenatedValuesError(UnrepairableError):
    """The text holds several distinct top-level values (``{..}{..}``).

    Providers that merge parallel tool calls produce this. It is never merged into one
    object; ``values`` holds each value (as :class:`~streamrepair.Repaired`) so a caller,
    like the stream layer, can turn them into separate calls.
    """

    def __init__(
        self, values: tuple[Repaired, ...], *, offset: int, line: int, column: int
    ) -> None:
        self.values = values
        self.count = len(values)
        super().__init__(
            f"{self.count} distinct top-level values were concatenated",
            offset=offset,
            line=line,
            column=column,
            expected="one JSON object",
        )


class AssemblerFinishedError(StreamRepairError, RuntimeError):
    """``feed()`` was called on an assembler that has already been finished."""
