"""Moved to :mod:`streamrepair.schema.notes` (an alias of the 0.1 path, removed in 0.3)."""

from ._moved import warn_moved

warn_moved(__name__, "streamrepair.schema.notes")

from .schema.notes import (  # noqa: E402
    MAX_PATHS_PER_NOTE,
    append_repair_notes,
    repair_note_fingerprints,
)

__all__ = [
    "MAX_PATHS_PER_NOTE",
    "append_repair_notes",
    "repair_note_fingerprints",
]
