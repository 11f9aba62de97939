"""Moved to :mod:`streamrepair.syntax.assembler` (an alias of the 0.1 path, removed in 0.3)."""

from ._moved import warn_moved

warn_moved(__name__, "streamrepair.syntax.assembler")

from .syntax.assembler import (  # noqa: E402
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_SIZE,
    MAX_TOKEN_CHARS,
    ArgumentAssembler,
)

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_SIZE",
    "MAX_TOKEN_CHARS",
    "ArgumentAssembler",
]
