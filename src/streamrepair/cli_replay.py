"""Moved to :mod:`streamrepair.cli.replay` (an alias of the 0.1 path, removed in 0.3)."""

from ._moved import warn_moved

warn_moved(__name__, "streamrepair.cli.replay")

from .cli.replay import (  # noqa: E402
    DEMO,
    EXIT_NOT_READY,
    EXIT_OK,
    register,
)

__all__ = [
    "DEMO",
    "EXIT_NOT_READY",
    "EXIT_OK",
    "register",
]
