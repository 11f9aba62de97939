"""Moved to :mod:`streamrepair.providers.messages` (an alias of the 0.1 path, removed in 0.3)."""

from ._moved import warn_moved

warn_moved(__name__, "streamrepair.providers.messages")

from .providers.messages import (  # noqa: E402
    Block,
    build_messages,
)

__all__ = [
    "Block",
    "build_messages",
]
