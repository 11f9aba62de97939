"""The schema check the stream layer runs on each finished call, built from a tool list.

:class:`ToolSchemaCheck` is what :class:`~streamrepair.ToolCallStream` and
:class:`~streamrepair.ToolCallTracker` are given when the caller passes ``tools``: it
knows the tool names (a call to any other name is rejected) and schema-repairs a call's
finished arguments with :func:`~streamrepair.repair_arguments`. ``jsonschema`` is imported
on the first :meth:`~ToolSchemaCheck.check`, never before, so a stream without tools (or
whose calls all fail before the check) never loads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .report import RepairNote
from .tools import tool_schemas

__all__ = ["CheckResult", "ToolSchemaCheck"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckResult:
    """The outcome of checking one call: ``ok`` when ``value`` (repaired where needed)
    satisfies the tool's schema; ``notes`` the schema repairs made; ``feedback`` what to
    tell the model when not ``ok``."""

    ok: bool
    value: Any
    notes: tuple[RepairNote, ...] = ()
    feedback: str = ""


class ToolSchemaCheck:
    """Tool names and schemas from an OpenAI Chat, Responses or Anthropic tool list.

    Any object with a ``names`` collection and this ``check(name, value)`` method can
    stand in for it (a harness with its own validation passes its own)."""

    def __init__(self, tools: Iterable[Mapping[str, Any]]) -> None:
        self.schemas = tool_schemas(tools)

    @property
    def names(self) -> frozenset[str]:
        """The known tool names."""
        return frozenset(self.schemas)

    def check(self, name: str, value: Any) -> CheckResult:
        """Schema-repair ``value``, the finished arguments of a call to ``name`` (a known
        name). The caller's ``value`` is never mutated."""
        from .rules import repair_arguments  # jsonschema: only once a call is checked

        result = repair_arguments(value, self.schemas[name], tool_name=name)
        if result.ok:
            return CheckResult(ok=True, value=result.value, notes=result.notes)
        return CheckResult(
            ok=False, value=value, notes=result.notes, feedback=result.feedback(name)
        )
