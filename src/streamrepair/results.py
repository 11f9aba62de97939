"""What the assembler reports: its status, each repair it made, and the finished value."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

__all__ = ["Repair", "RepairKind", "Repaired", "Status"]


class Status(enum.Enum):
    """Where an :class:`~streamrepair.ArgumentAssembler` stands, answerable at any moment.

    ``COMPLETE``
        A whole top-level value has been read; ``finish()`` now invents nothing, so its
        result has ``structure_synthesized == False``.
    ``INCOMPLETE``
        Not (yet) a whole value: more text is needed, or structure was already invented
        (an excess closer dropped). ``finish()`` now would return a value with
        ``structure_synthesized == True``, or raise if nothing has arrived.
    ``UNREPAIRABLE``
        Something arrived that no repair can fix. The assembler stays so; ``error``
        says where.
    """

    INCOMPLETE = "incomplete"
    COMPLETE = "complete"
    UNREPAIRABLE = "unrepairable"


class RepairKind(enum.Enum):
    """The kinds of repair. Those whose :attr:`synthesizes_structure` is true change the
    structure the model wrote (they close what it left open, or drop what it over-closed);
    a value that needed one of them is never ready to run."""

    #: One or more commas before ``}``/``]`` or at the end, dropped.
    TRAILING_COMMA = "trailing_comma"
    #: A raw newline, carriage return or tab inside a string, kept as the character meant.
    RAW_CONTROL_CHARACTER = "raw_control_character"
    #: Another raw C0 control character inside a string, dropped.
    CONTROL_CHARACTER_DROPPED = "control_character_dropped"
    #: An invalid escape such as ``\\U`` in ``C:\\Users``: the backslash is kept literally.
    INVALID_ESCAPE = "invalid_escape"
    #: A lone UTF-16 surrogate, replaced by U+FFFD.
    LONE_SURROGATE = "lone_surrogate"
    #: ``True``/``False``/``None`` read as ``true``/``false``/``null``.
    PYTHON_LITERAL = "python_literal"
    #: A single-quoted string or key read as a string.
    SINGLE_QUOTES = "single_quotes"
    #: An unquoted word in value position read as a string (``"direction": both``).
    BARE_WORD = "bare_word"
    #: A markdown code fence around the whole argument, stripped.
    CODE_FENCE = "code_fence"
    #: The whole argument was a JSON string holding a JSON object; unwrapped.
    DOUBLE_ENCODED = "double_encoded"
    #: Identical top-level values repeated; collapsed into one.
    DUPLICATE_VALUE = "duplicate_value"
    #: An empty ``{}`` placeholder before the real top-level object, dropped.
    EMPTY_PLACEHOLDER = "empty_placeholder"
    #: Closers after the complete value, dropped (synthesizes structure).
    EXCESS_CLOSER = "excess_closer"
    #: A string cut off by the end of input, closed (synthesizes structure).
    UNCLOSED_STRING = "unclosed_string"
    #: A key, colon, half literal or half number cut off by the end, dropped
    #: (synthesizes structure).
    DANGLING_DROPPED = "dangling_dropped"
    #: Containers left open at the end, closed (synthesizes structure).
    MISSING_CLOSERS = "missing_closers"
    #: A parameter of a tool call written as text (Qwen3-Coder/DSML parameters, GLM
    #: arg values, pythonic keyword arguments) that is not JSON as written, read as the
    #: JSON type the tool's schema declares (or the format defines): ``3`` as a number,
    #: ``True`` as ``true``, ``{'k': 1}`` as an object. Not noted for the model: it
    #: wrote its own format (see :attr:`from_markup`).
    MARKUP_VALUE = "markup_value"

    @property
    def synthesizes_structure(self) -> bool:
        """True for the repairs that invent or discard structure."""
        return self in _SYNTHESIZING

    @property
    def from_markup(self) -> bool:
        """True for the kinds that record how a tool call written as text in a chat
        template's markup was turned into JSON arguments. The model wrote its own
        format correctly, so repair notes for the model leave them out."""
        return self is RepairKind.MARKUP_VALUE

    @property
    def guidance(self) -> str:
        """What to send instead, in words a model can act on (used in repair notes)."""
        return _GUIDANCE[self]


_GUIDANCE: dict[RepairKind, str] = {
    RepairKind.TRAILING_COMMA: "put no comma after the last member of an object or array",
    RepairKind.RAW_CONTROL_CHARACTER: "escape newlines and tabs inside strings as \\n and \\t",
    RepairKind.CONTROL_CHARACTER_DROPPED: "put no raw control characters inside strings",
    RepairKind.INVALID_ESCAPE: "write a literal backslash as \\\\ (C:\\\\Users)",
    RepairKind.LONE_SURROGATE: "send whole characters, not half of a surrogate pair",
    RepairKind.PYTHON_LITERAL: "write true, false and null, not True, False and None",
    RepairKind.SINGLE_QUOTES: "quote strings and keys with double quotes",
    RepairKind.BARE_WORD: "quote string values with double quotes",
    RepairKind.CODE_FENCE: "send the arguments as bare JSON, without a markdown code fence",
    RepairKind.DOUBLE_ENCODED: "send the arguments as a JSON object, not a string holding one",
    RepairKind.DUPLICATE_VALUE: "send the arguments once",
    RepairKind.EMPTY_PLACEHOLDER: "send one JSON object, without an empty {} before it",
    RepairKind.EXCESS_CLOSER: "close each object and array exactly once",
    RepairKind.UNCLOSED_STRING: "finish the arguments; send long content in smaller parts",
    RepairKind.DANGLING_DROPPED: "finish the arguments; send long content in smaller parts",
    RepairKind.MISSING_CLOSERS: "finish the arguments; send long content in smaller parts",
    RepairKind.MARKUP_VALUE: (
        "nothing to change: values written in the call markup are typed by the schema"
    ),
}

_SYNTHESIZING = frozenset(
    {
        RepairKind.EXCESS_CLOSER,
        RepairKind.UNCLOSED_STRING,
        RepairKind.DANGLING_DROPPED,
        RepairKind.MISSING_CLOSERS,
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Repair:
    """One repair: its kind, the 0-based character offset in the argument text where it
    applied (the first place, when ``count`` places of one string were coalesced), and a
    short human description."""

    kind: RepairKind
    offset: int
    description: str
    count: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.kind, RepairKind):
            raise TypeError(f"kind must be a RepairKind, not {type(self.kind).__name__}")
        if self.offset < 0 or self.count < 1:
            raise ValueError("offset must be >= 0 and count >= 1")


@dataclass(frozen=True, slots=True, kw_only=True)
class Repaired:
    """A finished argument value.

    ``structure_synthesized`` is true when the value only exists because structure was
    invented or discarded (see :attr:`RepairKind.synthesizes_structure`): the model did
    not finish writing it, so it must never be dispatched as if it had.
    ``repairs`` lists every repair, in the order of the text.
    """

    value: Any
    structure_synthesized: bool
    repairs: tuple[Repair, ...] = ()

    @property
    def repaired(self) -> bool:
        """True when any repair was made (the text was not valid JSON as written)."""
        return bool(self.repairs)
