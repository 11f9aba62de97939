"""What the assembler reports: its status, each repair it made, and the finished value."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

__all__ = ["Repair", "RepairKind", "Repaired", "Status"]


class Status(enum.Enum):
    """Where an :class:`~streamrepair.ArgumentAssembler` stands, answerable at any moment.

    Each status says what :meth:`~streamrepair.ArgumentAssembler.finish` would do if the
    text ended now, and the assembler keeps it exact after every delta:

    ``COMPLETE``
        ``finish()`` now returns one value with ``structure_synthesized == False``.
    ``CONCATENATED``
        Several whole top-level values that do not reduce to one (``{..}{..}``, what
        providers that merge parallel calls send): ``finish()`` now raises
        :class:`~streamrepair.ConcatenatedValuesError` and ``finish_values()`` returns
        each value, none synthesized.
    ``INCOMPLETE``
        Not (yet) whole, and some continuation could still make it ``COMPLETE`` or
        ``CONCATENATED``: ``finish()`` now would synthesize structure (close what is
        open, drop what is cut off) or raise because no value has arrived yet.
    ``UNREPAIRABLE``
        No continuation can make the text a value: reported at the first character after
        which none can (a bound such as ``max_depth`` counts as broken when a character
        passes it). The assembler stays so and ``error`` says where. After ``finish()``
        raises, the status is ``UNREPAIRABLE`` too.
    """

    INCOMPLETE = "incomplete"
    COMPLETE = "complete"
    UNREPAIRABLE = "unrepairable"
    CONCATENATED = "concatenated"


class RepairKind(enum.Enum):
    """The kinds of repair. Those whose :attr:`synthesizes_structure` is true stand in for
    structure the model did not finish writing (they close what it left open, or drop what
    was cut off); a value that needed one of them is never ready to run."""

    #: One or more commas before ``}``/``]`` or at the end, dropped.
    TRAILING_COMMA = "trailing_comma"
    #: A raw control character inside a string (a newline, a tab, the ESC of an ANSI
    #: colour code, a form feed), kept as the character it is.
    RAW_CONTROL_CHARACTER = "raw_control_character"
    #: No longer made: raw control characters are kept (``raw_control_character``). The
    #: member stays so that code naming it keeps working.
    CONTROL_CHARACTER_DROPPED = "control_character_dropped"
    #: An invalid escape such as ``\\U`` in ``C:\\Users``: the backslash is kept literally.
    INVALID_ESCAPE = "invalid_escape"
    #: A string with an evident raw backslash (an invalid escape) that also holds
    #: ``\\b \\f \\n \\r \\t`` escapes, which may be raw backslashes too
    #: (``C:\\Users\\new``): under a path-like key they are read literally, elsewhere as
    #: JSON reads them; either way the string's meaning was a guess (docs/repairs.md).
    AMBIGUOUS_ESCAPES = "ambiguous_escapes"
    #: A lone UTF-16 surrogate, replaced by U+FFFD (the two halves of a pair are joined,
    #: also when they arrive in different deltas).
    LONE_SURROGATE = "lone_surrogate"
    #: ``True``/``False``/``None`` read as ``true``/``false``/``null``.
    PYTHON_LITERAL = "python_literal"
    #: A literal in another letter case (``FALSE``, ``Null``, ``none``, ``TRUE``) read as
    #: the JSON literal it spells.
    LITERAL_CASE = "literal_case"
    #: A single-quoted string or key read as a string.
    SINGLE_QUOTES = "single_quotes"
    #: An unquoted word in value position read as a string (``"direction": both``).
    BARE_WORD = "bare_word"
    #: An unquoted identifier key read as a string (``{path: "a.txt"}``).
    UNQUOTED_KEY = "unquoted_key"
    #: A ``\\n``, ``\\r`` or ``\\t`` written with a real backslash between tokens, outside
    #: any string, read as the whitespace it names (``{\\n"a": 1}``).
    ESCAPED_WHITESPACE = "escaped_whitespace"
    #: A markdown code fence around the whole argument, stripped.
    CODE_FENCE = "code_fence"
    #: The whole argument was a JSON string holding a JSON object; unwrapped.
    DOUBLE_ENCODED = "double_encoded"
    #: Identical top-level values repeated; collapsed into one.
    DUPLICATE_VALUE = "duplicate_value"
    #: A key written twice in one object with equal values (strictly equal JSON: ``1``,
    #: ``1.0`` and ``true`` differ); one kept. With different values the text is refused
    #: (``UnrepairableError`` at the second key): no value is chosen silently.
    DUPLICATE_KEY = "duplicate_key"
    #: An empty ``{}`` placeholder before the real top-level object, dropped.
    EMPTY_PLACEHOLDER = "empty_placeholder"
    #: Closers after the complete top-level value, dropped. The value was whole before
    #: them, so nothing is invented: this does not synthesize structure.
    EXCESS_CLOSER = "excess_closer"
    #: Prose after the complete top-level value (``{"path": "a.txt"} I will read it``),
    #: dropped: it is not part of any value.
    TRAILING_TEXT = "trailing_text"
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
    RepairKind.RAW_CONTROL_CHARACTER: (
        "escape control characters inside strings (\\n, \\t, \\u001b)"
    ),
    RepairKind.CONTROL_CHARACTER_DROPPED: "put no raw control characters inside strings",
    RepairKind.INVALID_ESCAPE: "write a literal backslash as \\\\ (C:\\\\Users)",
    RepairKind.AMBIGUOUS_ESCAPES: (
        "write every literal backslash as \\\\ (C:\\\\Users\\\\new), so \\n means a newline"
    ),
    RepairKind.LONE_SURROGATE: "send whole characters, not half of a surrogate pair",
    RepairKind.PYTHON_LITERAL: "write true, false and null, not True, False and None",
    RepairKind.LITERAL_CASE: "write true, false and null in lower case",
    RepairKind.SINGLE_QUOTES: "quote strings and keys with double quotes",
    RepairKind.BARE_WORD: "quote string values with double quotes",
    RepairKind.UNQUOTED_KEY: "quote keys with double quotes",
    RepairKind.ESCAPED_WHITESPACE: "write whitespace between tokens as itself, not as \\n",
    RepairKind.CODE_FENCE: "send the arguments as bare JSON, without a markdown code fence",
    RepairKind.DOUBLE_ENCODED: "send the arguments as a JSON object, not a string holding one",
    RepairKind.DUPLICATE_VALUE: "send the arguments once",
    RepairKind.DUPLICATE_KEY: "write each key once in an object",
    RepairKind.EMPTY_PLACEHOLDER: "send one JSON object, without an empty {} before it",
    RepairKind.EXCESS_CLOSER: "close each object and array exactly once",
    RepairKind.TRAILING_TEXT: "send only the JSON arguments, with no text after them",
    RepairKind.UNCLOSED_STRING: "finish the arguments; send long content in smaller parts",
    RepairKind.DANGLING_DROPPED: "finish the arguments; send long content in smaller parts",
    RepairKind.MISSING_CLOSERS: "finish the arguments; send long content in smaller parts",
    RepairKind.MARKUP_VALUE: (
        "nothing to change: values written in the call markup are typed by the schema"
    ),
}

_SYNTHESIZING = frozenset(
    {
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
