"""Moved to :mod:`streamrepair.schema.rules` (an alias of the 0.1 path, removed in 0.3)."""

from ._moved import warn_moved

warn_moved(__name__, "streamrepair.schema.rules")

from .schema._values import (  # noqa: E402
    MAX_DECODE_LAYERS,
    MAX_EMBEDDED_JSON_CHARS,
)
from .schema.report import (  # noqa: E402
    MAX_FEEDBACK_ISSUES,
    ArgumentRepair,
    RepairNote,
    SchemaIssue,
    SchemaRule,
)
from .schema.rules import (  # noqa: E402
    MAX_REPAIR_PASSES,
    MAX_VALIDATION_DEPTH,
    repair_arguments,
)

__all__ = [
    "MAX_DECODE_LAYERS",
    "MAX_EMBEDDED_JSON_CHARS",
    "MAX_FEEDBACK_ISSUES",
    "MAX_REPAIR_PASSES",
    "MAX_VALIDATION_DEPTH",
    "ArgumentRepair",
    "RepairNote",
    "SchemaIssue",
    "SchemaRule",
    "repair_arguments",
]
