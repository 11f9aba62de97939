"""What every provider's chunk reader shares: the :class:`Reader` base (and
:class:`ChoiceReader`, for the formats that stream several choices at once), and the
field readers written once: a chunk is a parsed JSON object or an SDK object's dump, so
every field may be missing, null or of another type than the format says.

A reader is made for one stream by :class:`~.normalizer.ChunkNormalizer` (its table
``READERS`` picks one by :class:`~.normalizer.Provider`) and keeps only the state its
provider needs, in its own slots.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeGuard

from .wire import WireDelta, WireError

__all__ = [
    "ChoiceReader",
    "Reader",
    "arguments_text",
    "error_delta",
    "integer",
    "is_map",
    "mapping",
    "nonempty",
    "pick",
]


class Reader:
    """Reads the chunks of one stream in one provider's format (one reader per stream).

    ``read(chunk)`` returns the wire deltas the chunk carries, in order; unknown fields
    and event types give nothing. The chunk is a mapping already unwrapped from any
    wrapper, and is never modified."""

    __slots__ = ()

    def __init__(self, choice: int) -> None:
        """``choice``: the choice to follow when the format streams several (n > 1)."""

    def read(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        raise NotImplementedError

    def text_of(self, chunk: Mapping[str, Any]) -> tuple[str | None, str | None, int | None] | None:
        """``(reasoning, text, block)`` when :meth:`read` would give exactly a
        :class:`~.wire.WireReasoning` of ``reasoning`` (when not None) then a
        :class:`~.wire.WireText` of ``text`` (when not None), both of ``block``, for
        ``chunk``, and change nothing else in this reader; else None (and nothing
        changed). What most chunks of a stream are, read without building the deltas (a
        relay passing the chunk through reads none). A reader that does not tell says
        None."""
        return None

    def arguments_of(self, chunk: Mapping[str, Any]) -> tuple[int, str, bool] | None:
        """``(index, text, expects_end)`` when :meth:`read` would give exactly a
        :class:`~.wire.WireToolCall` of ``text``, a piece of the arguments of the call at
        ``index``, with no id, name or anything else but ``expects_end``, for ``chunk``,
        and change nothing else in this reader; else None (and nothing changed). The other
        most common chunk, told without building its delta. A reader that does not tell
        says None."""
        return None

    @property
    def ignored_choices(self) -> int:
        """Chunks of other choices (n > 1) that were skipped."""
        return 0

    def missing_choice(self) -> str | None:
        """Why the stream said nothing, when only other choices arrived; else None."""
        return None


class ChoiceReader(Reader):
    """A reader of a format whose chunks carry several choices (Chat Completions
    ``choices``, Gemini ``candidates``): only the chosen one is followed, and the others
    are counted, so that a stream of only other choices can say so."""

    __slots__ = ("_chosen_seen", "_ignored", "_other_choices", "choice")

    def __init__(self, choice: int) -> None:
        self.choice = choice
        self._ignored = 0
        self._chosen_seen = False
        self._other_choices: set[int] = set()

    @property
    def ignored_choices(self) -> int:
        return self._ignored

    def chosen(self, index: int) -> bool:
        """Whether choice ``index`` is the one followed (the others are counted)."""
        if index == self.choice:
            self._chosen_seen = True
            return True
        self._ignored += 1
        if len(self._other_choices) < 64:
            self._other_choices.add(index)
        return False

    def missing_choice(self) -> str | None:
        if self._chosen_seen or not self._other_choices:
            return None
        seen = ", ".join(str(c) for c in sorted(self._other_choices)[:8])
        return (
            f"no chunk of choice {self.choice} arrived; the stream has choice(s) {seen} "
            f"({self._ignored} chunk(s) skipped)"
        )


# -- fields ----------------------------------------------------------------------------


def is_map(value: object) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, with the common case (a dict) first: the ABC check
    costs five times more and runs several times per chunk."""
    return type(value) is dict or (value is not None and isinstance(value, Mapping))


def nonempty(value: object) -> str | None:
    """A non-empty string, else None (``"id": ""`` and ``"name": ""`` mean absent)."""
    return value if type(value) is str and value else None


def integer(value: object) -> int | None:
    """An int, else None (not a bool: ``type(True)`` is ``bool``)."""
    return value if type(value) is int else None


def mapping(value: object) -> Mapping[str, Any]:
    """A mapping, else an empty one."""
    if type(value) is dict:
        return value
    return value if isinstance(value, Mapping) else {}


def arguments_text(value: object) -> tuple[str | None, bool]:
    """A call's arguments as text, and whether they came as an object (Ollama native,
    MiniMax, TGI, Cohere, Gemini...) serialized here to JSON text."""
    if value is None:
        return None, False
    if type(value) is str:
        return value, False
    if isinstance(value, Mapping | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")), True
    return json.dumps(value), True


def error_delta(payload: Mapping[str, Any]) -> WireError:
    """Read both error shapes: ``{"error": {...}}`` and ``{"type": "error", "code":..}``
    (Gemini's ``status`` is read as the error type)."""
    err = payload.get("error")
    body: Mapping[str, Any] = err if isinstance(err, Mapping) else payload
    message = body.get("message")
    if not isinstance(message, str) or not message:
        message = err if isinstance(err, str) and err else "an error occurred during streaming"
    code = body.get("code")
    error_type = body.get("type")
    if not isinstance(error_type, str) or error_type == "error":
        status = body.get("status")
        error_type = status if isinstance(status, str) and status else None
    return WireError(
        message=message,
        code=str(code) if code is not None else None,
        error_type=error_type,
        raw=payload,
    )


def pick(source: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """``{ours: source[theirs]}`` for each field the source has (and is not null)."""
    return {
        ours: source[theirs] for theirs, ours in names.items() if source.get(theirs) is not None
    }
