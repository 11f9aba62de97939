"""Preview changes: what each ``feed()`` changed in the value, in a vocabulary a UI applies
without diffing.

An :class:`~streamrepair.ArgumentAssembler` made with ``changes=True`` records, as it
reads, every change to the value it is building; its ``take_changes()`` hands them out
(the stream layer puts them on each :class:`~streamrepair.ToolCallDelta` as
``changes``). A path is a tuple of object keys (``str``) and array indexes (``int``);
``()`` is the whole value.

The vocabulary
--------------
=====================  ====================================================================
:class:`Opened`        an object, array or string began at ``path``: it is ``{}``, ``[]`` or
                       ``""`` for now
:class:`KeyRead`       the delta ended after the key ``path[-1]`` of the object at
                       ``path[:-1]``, before anything of its value showed (it changes
                       nothing yet: a key shows in the value together with its value)
:class:`Appended`      the string at ``path`` grew by ``text``: decoded text, never a half
                       escape or half a surrogate pair
:class:`Assigned`      the value at ``path`` is ``value``, final: a number or literal once
                       complete, a string that arrived whole, a whole top-level value
:class:`Closed`        the model closed the object, array or string at ``path``: it will
                       not change again
:class:`Reset`         the text began another top-level value (``{..}{..}``): what was built
                       is discarded, the next change starts the new value
=====================  ====================================================================

Guarantees (tested with hypothesis, whole, one character at a time and at random splits,
on valid and on malformed text):

* **Snapshot equality.** Applying every change so far, in order, to an empty value
  (:class:`ValueBuilder`) gives exactly what ``preview()`` returns after the same ``feed``.
* **Document order.** Changes come in the order of the text: a container's ``Opened``
  before any change inside it and its ``Closed`` after them; object members in the order
  the model wrote them; array members at indexes 0, 1, 2, ... A member's key first shows
  in the path of the first change of its value, unless a delta ends between the two: that
  delta's last change is then a ``KeyRead`` of the member (once), and the value's first
  change comes later. In a value the model finished, every ``KeyRead`` is followed by its
  value.
* **Nothing is taken back.** An ``Appended`` text, an ``Assigned`` value and a ``Closed``
  are never revised by a later change, with one stated exception: ``Reset`` (a new
  top-level value replaces the old one). A key the model wrote twice in one object is
  reported once: its second value is compared with the first, never reported (equal, it
  is dropped; different, the text is unrepairable and the changes stop). A string whose
  reading is decided only when it closes (a path that shows raw backslashes,
  docs/repairs.md) reports no text past that point until it closes, then the rest as it
  was read.
* **Only what the model wrote.** ``finish()`` reports no invented structure: a string or
  container the model left open stays open in the changes (no ``Closed``), a dangling key
  or half number gets nothing. The only changes ``finish()`` adds are the ``Assigned`` of
  a top-level number, literal or single-quoted string that ended with the input.
* **Chunking invariance.** Any split of the same text gives the same changes once a
  string's ``Opened, Appended..., Closed`` is read as one ``Assigned`` (a string that
  arrives whole inside one delta is reported that way), the ``Appended`` texts of a string
  still open are joined, and ``KeyRead`` (which says where a delta ended) is left out;
  see :func:`normalize`.
* **Cost.** Recording costs O(1) per value and per delta: no rescans, and an open
  string's text is reported as the delta's new text only, never the whole string again.

Changes are :class:`typing.NamedTuple` classes, not dataclasses like the stream events: one
or two are made for every member of an argument, and a NamedTuple is built several times
faster than a frozen dataclass (the per-delta budget is about a microsecond). Two changes
of different classes never compare equal, even when their fields do.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any, NamedTuple, Union

from .._build import mypyc_attr
from ..errors import ChangeOrderError

__all__ = [
    "Appended",
    "Assigned",
    "Change",
    "Closed",
    "KeyRead",
    "Opened",
    "Path",
    "Reset",
    "ValueBuilder",
    "ValueKind",
    "apply_changes",
    "change_from_dict",
    "normalize",
]

#: Where a change applies: object keys and array indexes from the top; ``()`` is the root.
Path = tuple[Union[str, int], ...]  # noqa: UP007 - a runtime alias on Python 3.10


class ValueKind(enum.Enum):
    """What an :class:`Opened` value is."""

    OBJECT = "object"
    ARRAY = "array"
    STRING = "string"

    def empty(self) -> Any:
        """A new empty value of this kind: ``{}``, ``[]`` or ``""``."""
        if self is ValueKind.OBJECT:
            return {}
        if self is ValueKind.ARRAY:
            return []
        return ""


# The compiled build (docs/build.md) keeps these classes ordinary Python classes: mypyc's
# native classes cannot derive from tuple.
@mypyc_attr(native_class=False)
class _Distinct(tuple[Any, ...]):
    """Equality that also compares the class: ``KeyRead(p) != Closed(p)``, although both
    are the tuple ``(p,)``."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return tuple.__hash__(self)


class _Opened(NamedTuple):
    """The fields of :class:`Opened`."""

    path: Path
    kind: ValueKind

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``{"change": "opened", "path": [...], "kind": ...}``."""
        return {"change": "opened", "path": list(self.path), "kind": self.kind.value}


@mypyc_attr(native_class=False)
class Opened(_Distinct, _Opened):
    """An object, array or string began at ``path``; it is empty for now."""

    __slots__ = ()


class _KeyRead(NamedTuple):
    """The fields of :class:`KeyRead`."""

    path: Path

    @property
    def key(self) -> str:
        """The key that was read."""
        key = self.path[-1]
        assert isinstance(key, str)
        return key

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``{"change": "key", "path": [...]}``."""
        return {"change": "key", "path": list(self.path)}


@mypyc_attr(native_class=False)
class KeyRead(_Distinct, _KeyRead):
    """The delta ended after the key ``path[-1]`` of the object at ``path[:-1]``, before
    anything of its value showed. It changes nothing yet: a key shows in the value only
    with its value, whose first change comes in a later delta."""

    __slots__ = ()


class _Appended(NamedTuple):
    """The fields of :class:`Appended`."""

    path: Path
    text: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``{"change": "append", "path": [...], "text": ...}``."""
        return {"change": "append", "path": list(self.path), "text": self.text}


@mypyc_attr(native_class=False)
class Appended(_Distinct, _Appended):
    """The string at ``path`` grew by ``text`` (decoded, never half an escape)."""

    __slots__ = ()


class _Assigned(NamedTuple):
    """The fields of :class:`Assigned`."""

    path: Path
    value: Any

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``{"change": "set", "path": [...], "value": ...}``."""
        return {"change": "set", "path": list(self.path), "value": self.value}


@mypyc_attr(native_class=False)
class Assigned(_Distinct, _Assigned):
    """The value at ``path`` is ``value``, and final (a number or literal once complete,
    a string that arrived whole, or a whole top-level value)."""

    __slots__ = ()


class _Closed(NamedTuple):
    """The fields of :class:`Closed`."""

    path: Path

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``{"change": "close", "path": [...]}``."""
        return {"change": "close", "path": list(self.path)}


@mypyc_attr(native_class=False)
class Closed(_Distinct, _Closed):
    """The model closed the object, array or string at ``path``: it is final."""

    __slots__ = ()


class _Reset(NamedTuple):
    """The fields of :class:`Reset`."""

    value_index: int

    @property
    def path(self) -> Path:
        """Always ``()``: a reset replaces the whole value."""
        return ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``{"change": "reset", "value_index": ...}``."""
        return {"change": "reset", "value_index": self.value_index}


@mypyc_attr(native_class=False)
class Reset(_Distinct, _Reset):
    """The text began another top-level value, ``value_index`` (0-based: 1 for the
    second): the value built so far is replaced, starting with the next change."""

    __slots__ = ()


#: Any one change.
Change = Union[Opened, KeyRead, Appended, Assigned, Closed, Reset]  # noqa: UP007

_KINDS = {kind.value: kind for kind in ValueKind}


def change_from_dict(data: dict[str, Any]) -> Change:
    """The change a ``to_dict()`` dict describes (for changes read back from JSON lines).

    Raises ``ValueError`` for a dict that describes no change.
    """
    name = data.get("change")
    path: Path = tuple(data.get("path", ()))
    if name == "opened":
        return Opened(path, _KINDS[data["kind"]])
    if name == "key":
        return KeyRead(path)
    if name == "append":
        return Appended(path, data["text"])
    if name == "set":
        return Assigned(path, data["value"])
    if name == "close":
        return Closed(path)
    if name == "reset":
        return Reset(int(data["value_index"]))
    raise ValueError(f"not a change: {data!r}")


def _value_misfit(change: Opened | Assigned, string_open: bool, depth: int) -> str | None:
    """Why a value that opens or is set at ``change.path`` cannot come next, with a
    string open or not and ``depth`` containers open (a member of the innermost one sits
    one level below it: its path is exactly ``depth`` long), or None."""
    if string_open:
        return "a new value while a string is open"
    if len(change.path) != depth:
        return f"a value at a path {len(change.path)} deep while {depth} containers are open"
    if type(change) is Opened and not depth and change.kind is ValueKind.STRING:
        return "a string opened at the top (a top-level string is assigned whole)"
    return None


# Subclassable in the compiled build too (docs/build.md).
@mypyc_attr(allow_interpreted_subclasses=True)
class ValueBuilder:
    """Apply changes in order to an empty value; :attr:`value` is then what the
    assembler's ``preview()`` gave after the same changes.

    Strings grow by appending to a list of pieces, joined only when :attr:`value` or
    :meth:`snapshot` is read, so applying a long write costs O(its text) in all, however
    many deltas it came in. Changes must be applied in the order they were recorded and
    none may be skipped.
    """

    __slots__ = ("_open", "_parts", "_root", "_slot", "_stale")

    def __init__(self) -> None:
        self._root: Any = None
        # (container, key or index in its parent) of each open object or array
        self._open: list[tuple[Any, str | int | None]] = []
        self._slot: str | int | None = None  # where the open string sits in _open[-1]
        self._parts: list[str] | None = None  # the open string's pieces
        self._stale = False  # pieces not yet written into the container

    def apply(self, change: Change) -> None:
        """Apply one change. A change that cannot follow the ones applied so far (one
        skipped, the order changed, another call's) raises
        :class:`~streamrepair.ChangeOrderError` and is not applied."""
        reason = self._misfit(change)
        if reason is not None:
            raise ChangeOrderError(reason, change=change)
        self._apply(change)

    def apply_all(self, changes: Iterable[Change]) -> None:
        """Apply each change in turn (:class:`~streamrepair.ChangeOrderError`, with the
        change's ``index``, for one that cannot follow; those before it stay applied)."""
        opened = self._open
        for index, change in enumerate(changes):
            # The common changes are checked and applied here, as _misfit and _apply do
            # (a call less for each of them); anything else goes through those two.
            kind = type(change)
            parts = self._parts
            if parts is None:
                if (kind is Assigned or kind is Opened) and len(change.path) == len(opened):
                    if opened:  # a member of the innermost open container
                        parent = opened[-1][0]
                        key = change.path[-1]
                        fits = key == len(parent) if type(parent) is list else type(key) is str
                        if fits:
                            if kind is Opened:
                                self._opened(change.path, change.kind)  # type: ignore[union-attr]
                            elif type(parent) is list:
                                parent.append(change.value)  # type: ignore[union-attr]
                            else:
                                parent[key] = change.value  # type: ignore[union-attr]
                            continue
                elif kind is Closed and opened:
                    opened.pop()
                    continue
                elif kind is KeyRead:
                    continue
            elif kind is Appended:
                parts.append(change.text)  # type: ignore[union-attr]
                self._stale = True
                continue
            elif kind is Closed:
                self._write_string()
                self._parts = None
                self._slot = None
                continue
            reason = self._misfit(change)
            if reason is not None:
                raise ChangeOrderError(reason, change=change, index=index)
            self._apply(change)

    def _misfit(self, change: Change) -> str | None:
        """Why ``change`` cannot follow the changes applied so far, or None."""
        kind = type(change)
        if kind is Appended:
            return None if self._parts is not None else "text appended while no string is open"
        if kind is Closed:
            if self._parts is None and not self._open:
                return "a value closed while nothing is open"
            return None
        if kind is Opened or kind is Assigned:
            reason = _value_misfit(change, self._parts is not None, len(self._open))  # type: ignore[arg-type]
            if reason is None and self._open:
                parent, key = self._open[-1][0], change.path[-1]
                if type(parent) is list and key != len(parent):
                    return f"array item {key!r} where item {len(parent)} comes next"
                if type(parent) is dict and type(key) is not str:
                    return f"an object member with the key {key!r}"
            return reason
        return None

    def _apply(self, change: Change) -> None:
        kind = type(change)
        if kind is Appended:
            self._parts.append(change.text)  # type: ignore[union-attr]
            self._stale = True
        elif kind is Assigned:
            path = change.path
            if path:
                self._put(path[-1], change.value)  # type: ignore[union-attr]
            else:
                self._root = change.value  # type: ignore[union-attr]
        elif kind is Opened:
            self._opened(change.path, change.kind)  # type: ignore[union-attr]
        elif kind is Closed:
            if self._parts is not None:
                self._write_string()
                self._parts = None
                self._slot = None
            else:
                self._open.pop()
        elif kind is Reset:
            self._root = None
            self._open.clear()
            self._parts = None
            self._slot = None
        elif kind is not KeyRead:
            raise TypeError(f"not a change: {change!r}")

    @property
    def value(self) -> Any:
        """The value so far, live: later changes update it in place. Read-only."""
        if self._stale:
            self._write_string()
        return self._root

    def snapshot(self) -> Any:
        """The value so far as a snapshot that later changes never alter: the open
        containers are copied (shallow), closed ones shared. Read-only."""
        root = self.value
        if not self._open:
            return root
        top = snapshot = self._open[0][0].copy()
        for container, key in self._open[1:]:
            child = container.copy()
            top[key] = child
            top = child
        return snapshot

    def _opened(self, path: Path, kind: ValueKind) -> None:
        if kind is ValueKind.STRING:
            self._put(path[-1], "")
            self._slot = path[-1]
            self._parts = []
            return
        child = kind.empty()
        if path:
            self._put(path[-1], child)
            self._open.append((child, path[-1]))
        else:
            self._root = child
            self._open.append((child, None))

    def _put(self, key: str | int, value: Any) -> None:
        top = self._open[-1][0]
        if type(top) is list and key == len(top):
            top.append(value)
        else:
            top[key] = value

    def _write_string(self) -> None:
        parts = self._parts
        assert parts is not None
        assert self._slot is not None
        if len(parts) > 1:
            parts[:] = ["".join(parts)]
        self._open[-1][0][self._slot] = parts[0] if parts else ""
        self._stale = False


def apply_changes(changes: Iterable[Change], builder: ValueBuilder | None = None) -> Any:
    """Apply ``changes`` (to ``builder``, or to a new empty value) and return the value."""
    if builder is None:
        builder = ValueBuilder()
    builder.apply_all(changes)
    return builder.value


def normalize(changes: Iterable[Change]) -> list[Change]:
    """The changes in the form that is the same for every split of the text: each string
    reported as ``Opened, Appended..., Closed`` turned into one ``Assigned`` of its text,
    the ``Appended`` texts of a string still open at the end joined into one, and no
    ``KeyRead`` (where deltas ended is not part of the value)."""
    out: list[Change] = []
    path: Path | None = None  # the open string's
    text: list[str] = []
    for change in changes:
        kind = type(change)
        if path is not None:
            if kind is Appended:
                text.append(change.text)  # type: ignore[union-attr]
                continue
            if kind is not Closed:
                raise ValueError(f"{change!r} while the string at {path!r} is open")
            out.append(Assigned(path, "".join(text)))
            path = None
            continue
        if kind is Opened and change.kind is ValueKind.STRING:  # type: ignore[union-attr]
            path = change.path
            text = []
            continue
        if kind is not KeyRead:
            out.append(change)
    if path is not None:
        out.append(Opened(path, ValueKind.STRING))
        if text:
            out.append(Appended(path, "".join(text)))
    return out
