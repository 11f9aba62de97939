"""Moved to :mod:`streamrepair.syntax.oneshot` (an alias of the 0.1 path, removed in 0.3)."""

from ._moved import warn_moved

warn_moved(__name__, "streamrepair.syntax.oneshot")

from .syntax.oneshot import (  # noqa: E402
    REPAIR_MAX_SIZE,
    repair,
)

__all__ = [
    "REPAIR_MAX_SIZE",
    "repair",
]
