"""Drop-in replacements for other projects' tool-argument repair APIs.

:mod:`streamrepair.compat.tool_repair` mirrors the tool-repair skill for Hermes and
OpenCode (``references/tool_repair.py``), so a harness using it can switch imports.
New code should use :func:`streamrepair.repair_arguments` instead (see docs/rules.md
for where and why the two differ).
"""

from __future__ import annotations

from .tool_repair import (
    deduplicate_repair_notes,
    make_repair_note_block,
    repair_function_args,
)

__all__ = ["deduplicate_repair_notes", "make_repair_note_block", "repair_function_args"]
