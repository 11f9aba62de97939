"""Repair notes for the model, appended to a tool result once per conversation.

A model that sees what the harness fixed stops making the mistake (CommandCode and the
tool-repair skill report the same retry loop disappearing within a few calls). Repeating
the same note every turn is noise, so a note is added only when no earlier message of
the conversation already carries the same rule for the same tool.

The block looks like this; its first line and the ``- <rule> at`` prefixes are the
fingerprint that later calls look for::

    [streamrepair: arguments of read_file were repaired]
    - drop_null at $.limit, $.offset: omit optional fields instead of sending null.
    Send the types the schema expects directly next time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from ..results import Repair
from .report import RepairNote

__all__ = ["MAX_PATHS_PER_NOTE", "append_repair_notes", "repair_note_fingerprints"]

#: Most paths listed on one note line; the rest are counted.
MAX_PATHS_PER_NOTE: Final = 5
#: How deep message dicts are searched for text (content parts, tool_result blocks).
_MAX_CONTENT_NESTING: Final = 4
_FOOTER: Final = "Send the types the schema expects directly next time."
_SYNTAX_FOOTER: Final = "Send plain, valid JSON of the expected types directly next time."
_HEADER_RE: Final = re.compile(r"\[streamrepair: arguments (?:of (?P<tool>.*) )?were repaired\]")
_LINE_RE: Final = re.compile(r"- (?P<rule>[a-z_]+) at ")


def _tool_key(tool_name: str | None) -> str:
    return " ".join((tool_name or "").split())


def _header(tool_key: str) -> str:
    if tool_key:
        return f"[streamrepair: arguments of {tool_key} were repaired]"
    return "[streamrepair: arguments were repaired]"


def repair_note_fingerprints(text: str) -> frozenset[tuple[str, str]]:
    """The ``(rule value, tool name)`` pairs of every note block in ``text``."""
    found: set[tuple[str, str]] = set()
    tool: str | None = None
    for line in text.splitlines():
        header = _HEADER_RE.fullmatch(line.strip())
        if header is not None:
            tool = header.group("tool") or ""
            continue
        entry = _LINE_RE.match(line) if tool is not None else None
        if entry is None:
            tool = None
            continue
        assert tool is not None
        found.add((entry.group("rule"), tool))
    return frozenset(found)


def _texts(item: Any, depth: int = 0) -> Iterator[str]:
    """The text inside one history item (see :func:`append_repair_notes`)."""
    if isinstance(item, str):
        yield item
    elif isinstance(item, Mapping):
        if depth >= _MAX_CONTENT_NESTING:
            return
        for key in ("content", "text", "output"):
            part = item.get(key)
            if isinstance(part, (str, Mapping)):
                yield from _texts(part, depth + 1)
            elif isinstance(part, list):
                for entry in part:
                    if isinstance(entry, (str, Mapping)):
                        yield from _texts(entry, depth + 1)
    elif depth == 0:
        raise TypeError(f"history items must be str or mappings, not {type(item).__name__}")


def append_repair_notes(
    result_text: str,
    notes: Iterable[RepairNote | Repair],
    tool_name: str | None,
    *,
    history: Iterable[str | Mapping[str, Any]] = (),
) -> str:
    """``result_text`` with a short block of repair notes appended, or unchanged.

    One line per rule (its paths, then what to send instead), in the order the rules
    first appear in ``notes``. A rule is left out when ``result_text`` itself or any
    ``history`` item already holds a note block with that rule for the same tool, so a
    second call with the same notes changes nothing.

    ``history`` is the conversation so far, as an iterable whose items are either
    strings (earlier tool results or message texts) or message mappings: their
    ``"content"``, ``"text"`` and ``"output"`` values are searched when they are
    strings, and when they are lists each string or mapping entry is searched the same
    way (OpenAI ``{"role": "tool", "content": ...}``, content-part lists
    ``[{"type": "text", "text": ...}]``, Anthropic ``tool_result`` blocks, Responses
    ``function_call_output`` items). Other item types raise ``TypeError``. The text
    before the block is never changed. Repairs whose kind is
    :attr:`~streamrepair.RepairKind.from_markup` (how a tool call written as text was
    read) are left out: the model wrote its own format as it should.
    """
    tool_key = _tool_key(tool_name)
    seen = {rule for rule, tool in repair_note_fingerprints(result_text) if tool == tool_key}
    for item in history:
        for text in _texts(item):
            seen.update(rule for rule, tool in repair_note_fingerprints(text) if tool == tool_key)
    paths: dict[str, list[str]] = {}
    guidance: dict[str, str] = {}
    syntax = False
    for note in notes:
        if isinstance(note, RepairNote):
            rule, location, advice = note.rule.value, note.location, note.rule.guidance
        elif isinstance(note, Repair):
            if note.kind.from_markup:
                continue  # how a call written as text was read: the model did nothing wrong
            # a syntax repair of the argument text: where is a character offset
            rule, location, advice = note.kind.value, f"character {note.offset}", note.kind.guidance
            syntax = True
        else:
            raise TypeError(
                f"notes must be RepairNote or Repair records, not {type(note).__name__}"
            )
        if rule not in seen:
            paths.setdefault(rule, []).append(location)
            guidance[rule] = advice
    if not paths:
        return result_text
    lines = [_header(tool_key)]
    for rule, locations in paths.items():
        unique = list(dict.fromkeys(locations))
        shown = ", ".join(unique[:MAX_PATHS_PER_NOTE])
        if len(unique) > MAX_PATHS_PER_NOTE:
            shown += f" and {len(unique) - MAX_PATHS_PER_NOTE} more"
        lines.append(f"- {rule} at {shown}: {guidance[rule]}.")
    lines.append(_SYNTAX_FOOTER if syntax else _FOOTER)
    block = "\n".join(lines)
    return f"{result_text}\n\n{block}" if result_text else block
