"""The assembler's progress as ijson events, so ijson's own ``items``, ``kvitems`` and
``parse`` run on a repaired tool call while it is still streaming.

:class:`IjsonAdapter` turns :mod:`preview changes <streamrepair.syntax.changes>` (from
``ArgumentAssembler(changes=True).take_changes()`` or from ``ToolCallDelta.changes``) into
the events ijson's parsers yield: ``(prefix, event, value)`` tuples (what ``ijson.parse``
yields, and what ``ijson.items`` and ``ijson.kvitems`` take), or with ``basic=True`` the
``(event, value)`` pairs ``ijson.basic_parse`` yields (what ``ijson.parse`` takes: ijson
chains ``basic_parse -> parse -> items``; ``basic_parse`` itself reads bytes, not events).
Events are emitted as soon as they are final:
``start_map``/``start_array`` when a container opens, ``map_key`` with the first change of
its value, a scalar once complete, a string once the model closed it, ``end_map`` /
``end_array`` when the model closed the container. ijson's functions take an iterable of
such events in place of a file::

    import ijson
    for edit in ijson.items(adapter_events, "edits.item"):  # each edit as it completes
        ...

An adapter follows one value: feed it the changes of one call only, and keep one adapter
per ``call_id`` when calls stream side by side (parallel calls interleave their deltas;
the changes of two calls in one adapter cannot make one value, and the first change that
cannot follow raises :class:`~streamrepair.ChangeOrderError`).

Guarantees: for text the assembler finishes without synthesized structure, the events
are exactly those ``ijson.parse`` yields for the repaired JSON text
(``json.dumps(result.value)``); for text that was cut off they are a prefix of those
events (nothing invented: an open string or container is never closed for you). Numbers
are ``int`` or ``decimal.Decimal`` as ijson gives them (``float`` with ``use_float=True``).
Concatenated values (``{..}{..}``) follow one another at prefix ``""``, as ijson's
``multiple_values=True`` gives them. Prefixes are those of ijson's reference (pure Python)
backend; its yajl2_c backend differs in one corner, an array under an empty key at the top
(``{"": [1]}``: ``item`` there, ``.item`` here). Nothing here imports ijson.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import Any

from .._build import mypyc_attr
from ..errors import ChangeOrderError
from .assembler import ArgumentAssembler
from .changes import (
    Appended,
    Assigned,
    Change,
    Closed,
    KeyRead,
    Opened,
    Reset,
    ValueKind,
    _value_misfit,
)

__all__ = ["IjsonAdapter", "ijson_events"]


# Subclassable in the compiled build too (docs/build.md).
@mypyc_attr(allow_interpreted_subclasses=True)
class IjsonAdapter:
    """Preview changes in, ijson events out (see the module docstring).

    ``feed(changes)`` returns the events those changes complete. ``basic=True`` gives
    ``(event, value)`` pairs (ijson's ``basic_parse`` form, input for ``ijson.parse``)
    instead of ``(prefix, event, value)`` triples (``ijson.parse``'s form, input for
    ``ijson.items`` and ``ijson.kvitems``); ``use_float=True`` gives non-integer numbers as
    ``float`` instead of ``Decimal``. Changes must be those of one call (one adapter per
    ``call_id``), fed in order, none skipped. An open string's text is kept until the
    string closes (ijson reports whole strings only).
    """

    __slots__ = ("_basic", "_float", "_prefix", "_stack", "_text")

    def __init__(self, *, basic: bool = False, use_float: bool = False) -> None:
        self._basic = basic
        self._float = use_float
        # (prefix, is an object, is nested) of each open container: ijson joins the path
        # with "." from the root's members down, so an empty key still adds a level
        self._stack: list[tuple[str, bool, bool]] = []
        self._text: list[str] | None = None  # pieces of the open string
        self._prefix = ""  # prefix of the open string

    def feed(self, changes: Iterable[Change]) -> list[tuple[Any, ...]]:
        """The ijson events that ``changes`` complete, in order."""
        out: list[tuple[Any, ...]] = []
        for index, change in enumerate(changes):
            kind = type(change)
            reason = self._misfit(change)
            if reason is not None:
                raise ChangeOrderError(reason, change=change, index=index, events=tuple(out))
            if kind is Appended:
                self._text.append(change.text)  # type: ignore[union-attr]
            elif kind is Closed:
                if self._text is not None:
                    self._emit(out, self._prefix, "string", "".join(self._text))
                    self._text = None
                else:
                    prefix, is_object, _ = self._stack.pop()
                    self._emit(out, prefix, "end_map" if is_object else "end_array", None)
            elif kind is Opened:
                prefix = self._member(change.path, out)
                value_kind = change.kind  # type: ignore[union-attr]
                if value_kind is ValueKind.STRING:
                    self._text = []
                    self._prefix = prefix
                else:
                    is_object = value_kind is ValueKind.OBJECT
                    self._emit(out, prefix, "start_map" if is_object else "start_array", None)
                    self._stack.append((prefix, is_object, bool(change.path)))
            elif kind is KeyRead or kind is Reset:
                continue  # the key goes out with its value; a new value needs no event
            else:  # Assigned
                path = change.path
                self._value(out, self._member(path, out), change.value, bool(path))  # type: ignore[union-attr]
        return out

    def _misfit(self, change: Change) -> str | None:
        """Why ``change`` cannot follow the changes fed so far, or None."""
        kind = type(change)
        if kind is Appended:
            return None if self._text is not None else "text appended while no string is open"
        if kind is Closed:
            if self._text is None and not self._stack:
                return "a value closed while nothing is open"
            return None
        if kind is Opened or kind is Assigned:
            return _value_misfit(change, self._text is not None, len(self._stack))  # type: ignore[arg-type]
        return None

    def _member(self, path: tuple[Any, ...], out: list[tuple[Any, ...]]) -> str:
        """The prefix of the value at ``path``; emits its ``map_key`` in an object."""
        if not path:
            return ""
        prefix, is_object, nested = self._stack[-1]
        if is_object:
            key = path[-1]
            self._emit(out, prefix, "map_key", key)
            return f"{prefix}.{key}" if nested else key
        return f"{prefix}.item" if nested else "item"

    def _value(self, out: list[tuple[Any, ...]], prefix: str, value: Any, nested: bool) -> None:
        """The events of a whole value (without recursion: a value may be deep)."""
        # (prefix, item, stage, nested): stage 0 a value, 1 a container's end, 2 a map_key
        pending: list[tuple[str, Any, int, bool]] = [(prefix, value, 0, nested)]
        while pending:
            where, item, stage, nested = pending.pop()
            if stage == 1:
                self._emit(out, where, "end_map" if type(item) is dict else "end_array", None)
            elif stage == 2:
                self._emit(out, where, "map_key", item)
            elif type(item) is dict:
                self._emit(out, where, "start_map", None)
                pending.append((where, item, 1, nested))
                for key, member in reversed(list(item.items())):
                    pending.append((f"{where}.{key}" if nested else key, member, 0, True))
                    pending.append((where, key, 2, nested))  # popped first
            elif type(item) is list:
                self._emit(out, where, "start_array", None)
                pending.append((where, item, 1, nested))
                inner = f"{where}.item" if nested else "item"
                pending.extend((inner, member, 0, True) for member in reversed(item))
            else:
                self._scalar(out, where, item)

    def _scalar(self, out: list[tuple[Any, ...]], prefix: str, value: Any) -> None:
        if value is None:
            self._emit(out, prefix, "null", None)
        elif value is True or value is False:
            self._emit(out, prefix, "boolean", value)
        elif type(value) is str:
            self._emit(out, prefix, "string", value)
        elif type(value) is float and not self._float:
            self._emit(out, prefix, "number", Decimal(repr(value)))
        else:
            self._emit(out, prefix, "number", value)

    def _emit(self, out: list[tuple[Any, ...]], prefix: str, event: str, value: Any) -> None:
        out.append((event, value) if self._basic else (prefix, event, value))


def ijson_events(
    chunks: Iterable[str],
    *,
    basic: bool = False,
    use_float: bool = False,
    assembler: ArgumentAssembler | None = None,
) -> Iterator[tuple[Any, ...]]:
    """ijson events of argument text arriving in ``chunks``, each as soon as it is final.

    The text goes through an :class:`ArgumentAssembler` (pass ``assembler``, made with
    ``changes=True``, to look at its status and result afterwards), so it is repaired as
    it streams. Text that is cut off gives the events of what the model finished and no
    more; text that cannot be repaired raises :class:`~streamrepair.UnrepairableError`
    (with where) once the events before the error have been yielded.
    """
    if assembler is None:
        assembler = ArgumentAssembler(changes=True)
    adapter = IjsonAdapter(basic=basic, use_float=use_float)
    for chunk in chunks:
        assembler.feed(chunk)
        yield from adapter.feed(assembler.take_changes())
        if assembler.error is not None:
            raise assembler.error
    assembler.finish_values()  # raises UnrepairableError for text that cannot be read
    yield from adapter.feed(assembler.take_changes())
