"""Moved to :mod:`streamrepair.schema.tools` (an alias of the 0.1 path, removed in 0.3)."""

from ._moved import warn_moved

warn_moved(__name__, "streamrepair.schema.tools")

from .schema.tools import (  # noqa: E402
    tool_schemas,
)

__all__ = [
    "tool_schemas",
]
