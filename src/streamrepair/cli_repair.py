"""Moved to :mod:`streamrepair.cli.repair` (an alias of the 0.1 path, removed in 0.3)."""

from ._moved import warn_moved

warn_moved(__name__, "streamrepair.cli.repair")

from .cli.repair import (  # noqa: E402
    EXIT_CUT_OFF,
    EXIT_READY,
    EXIT_UNREPAIRABLE,
    register,
)

__all__ = [
    "EXIT_CUT_OFF",
    "EXIT_READY",
    "EXIT_UNREPAIRABLE",
    "register",
]
