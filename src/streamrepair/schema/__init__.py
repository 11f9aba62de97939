"""The schema layer: finished argument values checked and repaired against the tool's schema.

* :mod:`.report`: what a schema repair reports (:class:`SchemaRule`, :class:`RepairNote`,
  :class:`SchemaIssue`, :class:`ArgumentRepair`); no jsonschema;
* :mod:`.rules`: :func:`repair_arguments` (validate, then repair; uses jsonschema);
* :mod:`.tools`: tool lists (OpenAI, Responses, Anthropic) read into schemas;
* :mod:`.check`: :class:`ToolSchemaCheck`, the check the stream layer is given;
* :mod:`.quick`: :func:`surely_clean`, "nothing to repair" decided without jsonschema;
* :mod:`.notes`: the repair notes for the model, once per rule and tool;
* :mod:`.profiles`: per-model repairs (Grok's HTML entities in commands, ...);
* ``_values`` and ``_access`` (private): JSON-value helpers and the caller's schema made safe.

Only :mod:`.rules` and ``_access`` import jsonschema, so carrying or rendering schema
repairs costs nothing. The names are imported on first use.
"""

from __future__ import annotations

import typing as _typing

from .._lazy import attach

if _typing.TYPE_CHECKING:
    from .check import (
        CheckResult,
        ToolSchemaCheck,
    )
    from .notes import (
        MAX_PATHS_PER_NOTE,
        append_repair_notes,
        repair_note_fingerprints,
    )
    from .profiles import (
        COMMAND_FIELDS,
        MAX_PROFILE_TEXT_CHARS,
        PROFILES,
        Profile,
        ProfileRepair,
        ProfileRule,
        apply_profiles,
        profile_names,
        select_profiles,
    )
    from .quick import (
        MAX_QUICK_DEPTH,
        MAX_QUICK_NODES,
        surely_clean,
    )
    from .report import (
        MAX_FEEDBACK_ISSUES,
        ArgumentRepair,
        RepairNote,
        SchemaIssue,
        SchemaRule,
    )
    from .rules import (
        MAX_REPAIR_PASSES,
        MAX_VALIDATION_DEPTH,
        repair_arguments,
    )
    from .tools import (
        tool_schemas,
    )

_EXPORTS: dict[str, str] = {
    "ArgumentRepair": "report",
    "COMMAND_FIELDS": "profiles",
    "CheckResult": "check",
    "MAX_FEEDBACK_ISSUES": "report",
    "MAX_PATHS_PER_NOTE": "notes",
    "MAX_PROFILE_TEXT_CHARS": "profiles",
    "MAX_QUICK_DEPTH": "quick",
    "MAX_QUICK_NODES": "quick",
    "MAX_REPAIR_PASSES": "rules",
    "MAX_VALIDATION_DEPTH": "rules",
    "PROFILES": "profiles",
    "Profile": "profiles",
    "ProfileRepair": "profiles",
    "ProfileRule": "profiles",
    "RepairNote": "report",
    "SchemaIssue": "report",
    "SchemaRule": "report",
    "ToolSchemaCheck": "check",
    "append_repair_notes": "notes",
    "apply_profiles": "profiles",
    "profile_names": "profiles",
    "repair_arguments": "rules",
    "repair_note_fingerprints": "notes",
    "select_profiles": "profiles",
    "surely_clean": "quick",
    "tool_schemas": "tools",
}

__all__ = [
    "COMMAND_FIELDS",
    "MAX_FEEDBACK_ISSUES",
    "MAX_PATHS_PER_NOTE",
    "MAX_PROFILE_TEXT_CHARS",
    "MAX_QUICK_DEPTH",
    "MAX_QUICK_NODES",
    "MAX_REPAIR_PASSES",
    "MAX_VALIDATION_DEPTH",
    "PROFILES",
    "ArgumentRepair",
    "CheckResult",
    "Profile",
    "ProfileRepair",
    "ProfileRule",
    "RepairNote",
    "SchemaIssue",
    "SchemaRule",
    "ToolSchemaCheck",
    "append_repair_notes",
    "apply_profiles",
    "profile_names",
    "repair_arguments",
    "repair_note_fingerprints",
    "select_profiles",
    "surely_clean",
    "tool_schemas",
]

__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__)
