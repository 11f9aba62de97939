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
    from .check import CheckResult as CheckResult
    from .check import ToolSchemaCheck as ToolSchemaCheck
    from .notes import MAX_PATHS_PER_NOTE as MAX_PATHS_PER_NOTE
    from .notes import append_repair_notes as append_repair_notes
    from .notes import repair_note_fingerprints as repair_note_fingerprints
    from .profiles import COMMAND_FIELDS as COMMAND_FIELDS
    from .profiles import MAX_PROFILE_TEXT_CHARS as MAX_PROFILE_TEXT_CHARS
    from .profiles import PROFILES as PROFILES
    from .profiles import Profile as Profile
    from .profiles import ProfileRepair as ProfileRepair
    from .profiles import ProfileRule as ProfileRule
    from .profiles import apply_profiles as apply_profiles
    from .profiles import profile_names as profile_names
    from .profiles import select_profiles as select_profiles
    from .quick import MAX_QUICK_DEPTH as MAX_QUICK_DEPTH
    from .quick import MAX_QUICK_NODES as MAX_QUICK_NODES
    from .quick import surely_clean as surely_clean
    from .report import MAX_FEEDBACK_ISSUES as MAX_FEEDBACK_ISSUES
    from .report import ArgumentRepair as ArgumentRepair
    from .report import RepairNote as RepairNote
    from .report import SchemaIssue as SchemaIssue
    from .report import SchemaRule as SchemaRule
    from .rules import MAX_REPAIR_PASSES as MAX_REPAIR_PASSES
    from .rules import MAX_VALIDATION_DEPTH as MAX_VALIDATION_DEPTH
    from .rules import repair_arguments as repair_arguments
    from .tools import tool_schemas as tool_schemas

__all__, __getattr__, __dir__ = attach(__name__, __file__)
