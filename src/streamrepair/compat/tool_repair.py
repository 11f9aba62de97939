"""Drop-in for the tool-repair skill's Python API, with its v1.0.5+ behaviour.

The skill (bojansandhaus/tool-repair-skill-for-hermes-and-opencode,
``references/tool_repair.py``) is what Hermes harnesses import as
``agent.tool_repair``; switching to ``streamrepair.compat.tool_repair`` keeps the same
three functions, note texts and order. What it does, exactly as the skill documents it:

* **Top-level keys only**; nested objects are never touched.
* Works on a **deep copy**, so the caller's dict is unchanged and the documented
  write-back ``if fixed != parsed: ...`` fires only when something was repaired.
* In this order, each adding its note at most once:

  0. markdown autolinks ``[t](http://t)`` / ``[t](https://host/t)`` unwrapped in every
     top-level string (the v1.0.3+ regex);
  1. ``null`` removed unless the key is in a list-valued ``required`` or its property
     schema admits null (``type: "null"``, a type list with "null", an ``anyOf``/
     ``oneOf`` variant of type null); **without a schema every null is removed**;
  2. any top-level string that, trimmed, starts with ``[``, ends with ``]`` and parses
     to a list is replaced by it (no schema needed, whatever the field);
  3. (only when ``tool_schema is not None``) ``{}`` becomes ``[]`` in array fields;
  4. (same gate) a string in an array field becomes ``[string]``, unless it is
     bracket-shaped (``"[not json]"`` is never wrapped).

* Malformed or boolean schemas never raise; unreadable parts are ignored.

The native :func:`streamrepair.repair_arguments` is stricter on purpose (validates
first, so valid input is never touched; works at any depth; unwraps links only in path
fields); see docs/rules.md.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any, Final

__all__ = [
    "NOTE_AUTOLINK",
    "NOTE_BARE_STRING",
    "NOTE_EMPTY_OBJECT",
    "NOTE_NULL",
    "deduplicate_repair_notes",
    "make_repair_note_block",
    "repair_function_args",
]

NOTE_AUTOLINK: Final = "[repair: unwrapped markdown autolinks in file paths]"
NOTE_NULL: Final = "[repair: null values removed for optional fields]"
_NOTE_STRINGIFIED: Final = "[repair: string values parsed as arrays for: {keys}]"
NOTE_EMPTY_OBJECT: Final = "[repair: empty objects replaced with empty arrays]"
NOTE_BARE_STRING: Final = "[repair: bare strings wrapped as single-element arrays]"
_BLOCK_FOOTER: Final = "Next time use the correct format directly — the schema expects these types."
# v1.0.3+: the link text equals the URL minus its scheme, or its one path segment
# after the host.
_AUTOLINK_RE: Final = re.compile(r"\[([^\]]+)\]\(https?://(?:[^/]+/)?\1\)")
_FINGERPRINT_CHARS: Final = 40


def _null_is_removable(key: str, schema: Any) -> bool:
    if not isinstance(schema, dict):
        return True
    required = schema.get("required")
    if isinstance(required, list) and key in required:
        return False
    properties = schema.get("properties")
    prop = properties.get(key) if isinstance(properties, dict) else None
    if not isinstance(prop, dict):
        return True
    declared = prop.get("type")
    if declared == "null" or (isinstance(declared, list) and "null" in declared):
        return False
    for keyword in ("anyOf", "oneOf"):
        variants = prop.get(keyword)
        if isinstance(variants, list) and any(
            isinstance(v, dict) and v.get("type") == "null" for v in variants
        ):
            return False
    return True


def _array_fields(schema: Any) -> set[str]:
    if not isinstance(schema, dict):
        return set()
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return set()
    fields: set[str] = set()
    for name, prop in properties.items():
        if not isinstance(prop, dict):
            continue
        declared = prop.get("type")
        if declared == "array" or (isinstance(declared, list) and "array" in declared):
            fields.add(name)
            continue
        for keyword in ("anyOf", "oneOf"):
            variants = prop.get(keyword)
            if isinstance(variants, list) and any(
                isinstance(v, dict) and v.get("type") == "array" for v in variants
            ):
                fields.add(name)
    return fields


def _bracket_shaped(text: str) -> bool:
    stripped = text.strip()
    return stripped.startswith("[") and stripped.endswith("]")


def _parse_stringified_array(text: str) -> list[Any] | None:
    if not _bracket_shaped(text):
        return None
    try:
        parsed = json.loads(text.strip())
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, list) else None


def repair_function_args(
    function_name: str,
    function_args: dict[str, Any],
    tool_schema: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Repair a decoded tool call's arguments dict: ``(repaired_args, repair_notes)``.

    ``function_name`` is accepted for compatibility (the skill uses it for logging).
    ``repaired_args`` is always a deep copy; ``repair_notes`` is empty when nothing was
    repaired. A non-dict ``function_args`` is returned (copied) with no notes.
    """
    args = copy.deepcopy(function_args)
    notes: list[str] = []
    if not isinstance(args, dict):
        return args, notes

    unwrapped = False
    for key, value in args.items():
        if isinstance(value, str):
            fixed = _AUTOLINK_RE.sub(r"\1", value)
            if fixed != value:
                args[key] = fixed
                unwrapped = True
    if unwrapped:
        notes.append(NOTE_AUTOLINK)

    nulls = [k for k, v in args.items() if v is None and _null_is_removable(k, tool_schema)]
    for key in nulls:
        del args[key]
    if nulls:
        notes.append(NOTE_NULL)

    parsed_keys: list[str] = []
    for key, value in args.items():
        if isinstance(value, str):
            parsed = _parse_stringified_array(value)
            if parsed is not None:
                args[key] = parsed
                parsed_keys.append(key)
    if parsed_keys:
        notes.append(_NOTE_STRINGIFIED.format(keys=", ".join(map(str, parsed_keys))))

    array_fields = _array_fields(tool_schema) if tool_schema is not None else set()
    emptied = False
    for key, value in args.items():
        if key in array_fields and isinstance(value, dict) and not value:
            args[key] = []
            emptied = True
    if emptied:
        notes.append(NOTE_EMPTY_OBJECT)

    wrapped = False
    for key, value in args.items():
        if key in array_fields and isinstance(value, str) and not _bracket_shaped(value):
            args[key] = [value]
            wrapped = True
    if wrapped:
        notes.append(NOTE_BARE_STRING)
    return args, notes


def make_repair_note_block(notes: list[str], tool_name: str) -> str | None:
    """The block appended to a tool result, or ``None`` when there are no notes."""
    if not notes:
        return None
    lines = "\n".join(f"  • {note}" for note in notes)
    return f"\n\n[Hermes repaired: {tool_name}]\n{lines}\n{_BLOCK_FOOTER}"


def _fingerprint(note: str) -> str:
    if "]" in note:
        return note.split("]")[0].strip("[").rstrip()
    return note[:_FINGERPRINT_CHARS]


def deduplicate_repair_notes(content: str, new_notes: list[str], tool_name: str = "") -> str:
    """``content`` plus a block of those ``new_notes`` whose fingerprint (the text inside
    the note's first ``[...]``, or its first 40 characters) is not already in
    ``content``; ``content`` unchanged when none is new. Applying it twice with the same
    notes gives the same result as once."""
    if not new_notes:
        return content
    remaining = [note for note in new_notes if _fingerprint(note) not in content]
    if not remaining:
        return content
    block = make_repair_note_block(remaining, tool_name)
    return content + (block or "")
