"""What a schema repair reports: the rules, each repair made, what still fails, and the
result of :func:`~streamrepair.repair_arguments`.

Plain records with no dependency on ``jsonschema``, so that the layers that only carry
or render them (events, notes for the model, telemetry, hooks) never import it.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ._values import JsonPath, path_text

__all__ = [
    "MAX_FEEDBACK_ISSUES",
    "ArgumentRepair",
    "RepairNote",
    "SchemaIssue",
    "SchemaRule",
]

#: Most schema errors listed by :meth:`ArgumentRepair.feedback`.
MAX_FEEDBACK_ISSUES: Final = 20


class SchemaRule(enum.Enum):
    """The repairs, in the order they are tried at one failing path."""

    #: ``null`` on an optional field whose schema does not admit null: key dropped.
    DROP_NULL = "drop_null"
    #: A string that strictly parses to the array or object the schema expects
    #: (also when doubly encoded): replaced by the parsed value.
    PARSE_JSON_STRING = "parse_json_string"
    #: The string ``"null"`` on an optional field that does not admit null: key dropped.
    DROP_NULL_STRING = "drop_null_string"
    #: A string that is exactly a JSON number, integer, boolean or null literal where the
    #: schema expects that type: converted (``"30"`` -> ``30``).
    PARSE_SCALAR_STRING = "parse_scalar_string"
    #: A plain string where an array is expected: wrapped as ``[string]``.
    WRAP_BARE_STRING = "wrap_bare_string"
    #: ``{}`` where an array (and no object) is expected: ``[]``.
    EMPTY_OBJECT_TO_ARRAY = "empty_object_to_array"
    #: A caller-declared alias key renamed to the name the schema expects.
    RENAME_ALIAS = "rename_alias"
    #: A key the schema does not list, spelled like exactly one missing property once
    #: letter case, ``_`` and ``-`` are ignored (``filePath`` for ``file_path``): renamed.
    RENAME_SPELLING = "rename_spelling"
    #: ``[t](http://t)`` in a path-like field: unwrapped to ``t``.
    UNWRAP_AUTOLINK = "unwrap_autolink"

    @property
    def guidance(self) -> str:
        """One sentence telling the model what to send instead."""
        return _GUIDANCE[self]


_GUIDANCE: Final[Mapping[SchemaRule, str]] = {
    SchemaRule.DROP_NULL: "omit optional fields instead of sending null",
    SchemaRule.PARSE_JSON_STRING: (
        "send arrays and objects as JSON values, not as strings that contain JSON"
    ),
    SchemaRule.DROP_NULL_STRING: 'omit optional fields instead of sending the string "null"',
    SchemaRule.PARSE_SCALAR_STRING: (
        "send numbers, booleans and null as JSON literals, not as strings"
    ),
    SchemaRule.WRAP_BARE_STRING: 'send a list even for a single item: ["item"]',
    SchemaRule.EMPTY_OBJECT_TO_ARRAY: "send an empty list as [], not {}",
    SchemaRule.RENAME_ALIAS: "use the parameter names the schema declares",
    SchemaRule.RENAME_SPELLING: (
        "spell parameter names exactly as the schema does (letter case, _ and -)"
    ),
    SchemaRule.UNWRAP_AUTOLINK: "write file paths as plain text, not as markdown links",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class RepairNote:
    """One repair: which rule, where (``path`` is where the model put the value, as a
    tuple of keys and indexes), and short summaries of the value before and after
    (compact JSON, truncated; never the whole content). A dropped key has
    ``after == "(removed)"``; a renamed key has the key names as before/after."""

    rule: SchemaRule
    path: JsonPath
    before: str
    after: str

    def __post_init__(self) -> None:
        if not isinstance(self.rule, SchemaRule):
            raise TypeError(f"rule must be a SchemaRule, not {type(self.rule).__name__}")

    @property
    def location(self) -> str:
        """The path rendered as JSONPath, e.g. ``$.files[0].path``."""
        return path_text(self.path)


@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaIssue:
    """One way the (repaired) value still fails its schema.

    ``path`` is the failing value (for a missing required property, the property's
    path); ``keyword`` the schema keyword that failed (``"type"``, ``"required"``,
    ``"false"`` for a false schema, ``"depth"`` when the value is too deep to check);
    ``expected`` and ``received`` short phrases; ``message`` one readable sentence;
    ``valid_shape`` the relevant part of the schema as compact JSON (truncated).
    """

    path: JsonPath
    keyword: str
    message: str
    expected: str = ""
    received: str = ""
    valid_shape: str = ""

    @property
    def location(self) -> str:
        """The path rendered as JSONPath, e.g. ``$.files[0].path``."""
        return path_text(self.path)


@dataclass(frozen=True, slots=True, kw_only=True)
class ArgumentRepair:
    """The result of :func:`repair_arguments`.

    ``value`` is a fresh object (never the caller's, sharing nothing mutable with it).
    ``notes`` lists every repair in the order made. ``errors`` lists what still fails
    the schema; when it is non-empty ``value`` is only partially repaired and must not
    be dispatched (return :meth:`feedback` to the model instead). ``schema_skipped``
    names parts of the caller's schema that could not be read and were ignored; it is
    for the harness author, not the model.
    """

    value: Any
    notes: tuple[RepairNote, ...] = ()
    errors: tuple[SchemaIssue, ...] = ()
    schema_skipped: tuple[str, ...] = ()
    tool_name: str | None = None

    @property
    def ok(self) -> bool:
        """True when ``value`` satisfies the schema (always, without a schema)."""
        return not self.errors

    @property
    def repaired(self) -> bool:
        """True when any repair was made."""
        return bool(self.notes)

    def feedback(self, tool_name: str | None = None) -> str:
        """A message to return to the model as the tool result when errors remain:
        each failing path, what the schema expected, what arrived, and the valid shape.
        Empty when :attr:`ok`. ``tool_name`` defaults to the one given to
        :func:`repair_arguments`."""
        if not self.errors:
            return ""
        name = tool_name if tool_name is not None else self.tool_name
        if name:
            head = f'Invalid input for tool "{name}". Please correct and retry:'
        else:
            head = "Invalid tool input. Please correct and retry:"
        lines = [head]
        for issue in self.errors[:MAX_FEEDBACK_ISSUES]:
            line = f"  * {issue.location}: {issue.message}"
            if issue.valid_shape:
                line += f" Valid shape: {issue.valid_shape}"
            lines.append(line)
        hidden = len(self.errors) - MAX_FEEDBACK_ISSUES
        if hidden > 0:
            lines.append(f"  * ... and {hidden} more")
        return "\n".join(lines)
