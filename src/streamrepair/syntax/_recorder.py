"""The change recorder behind ``ArgumentAssembler(changes=True)``, and lazy previews.

The assembler calls the recorder at a few points of its machine, each time *before* it
changes the live value:

=================================  ==========================================================
``opened(parent, key, child)``     a container begins (``parent`` None: a top-level value)
``closed()``                       the innermost container ends
``key(key)``                       a delta ended after the innermost object's key ``key``
                                   and before anything of its value showed
``string_opened(parent, key)``     a string value begins inside a container
``grew(text)``                     new decoded text of the open string (once per delta)
``assigned(parent, key, value)``   a value is complete: a scalar, a string read whole, the
                                   end of the string being streamed; ``parent`` None: the
                                   top level
=================================  ==========================================================

It keeps the path of each open container, so a hook costs O(1) plus building its path
tuple. Values only grow (members are added, the open string is extended; a key written
twice never replaces its first value), which is what lets a :class:`LazyPreview` rebuild
an old snapshot from the live value.
"""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING, Any, Final

from ..events import DeferredPreview
from .changes import (
    Appended,
    Assigned,
    Change,
    Closed,
    KeyRead,
    Opened,
    Path,
    Reset,
    ValueKind,
)

if TYPE_CHECKING:
    from .assembler import ArgumentAssembler

_new: Final = tuple.__new__
_OBJECT: Final = ValueKind.OBJECT
_ARRAY: Final = ValueKind.ARRAY
_STRING: Final = ValueKind.STRING


class ChangeRecorder:
    """Records :mod:`~streamrepair.syntax.changes` as the assembler reads."""

    __slots__ = ("index", "key_told", "out", "paths", "sent", "str_path", "strings")

    def __init__(self) -> None:
        self.out: list[Change] = []
        self.paths: list[Path] = []  # path of each open container, outermost first
        self.key_told = False  # a KeyRead went out for the key whose value has not begun
        self.str_path: Path | None = None  # the string value being streamed
        self.sent = 0  # characters of it reported
        self.strings = 0  # strings streamed so far: the open one's serial number
        self.index = 0  # top-level values reported

    # -- hooks -------------------------------------------------------------------------------

    def _member(self, parent: Any, key: Any) -> Path:
        """The path of the next member of ``parent`` (the innermost open container)."""
        if type(parent) is list:
            return self.paths[-1] + (len(parent),)
        self.key_told = False
        return self.paths[-1] + (key,)

    def _root(self) -> None:
        if self.index:
            self.out.append(_new(Reset, (self.index,)))
        self.index += 1

    def opened(self, parent: Any, key: Any, child: Any) -> None:
        if parent is None:
            self._root()
            path: Path = ()
        else:
            path = self._member(parent, key)
        self.paths.append(path)
        self.out.append(_new(Opened, (path, _OBJECT if type(child) is dict else _ARRAY)))

    def closed(self) -> None:
        self.out.append(_new(Closed, (self.paths.pop(),)))

    def key(self, key: str) -> None:
        if not self.key_told:
            self.key_told = True
            self.out.append(_new(KeyRead, (self.paths[-1] + (key,),)))

    def string_opened(self, parent: Any, key: Any) -> None:
        if type(parent) is list:
            path = self.paths[-1] + (len(parent),)
        else:
            self.key_told = False
            path = self.paths[-1] + (key,)
        self.str_path = path
        self.sent = 0
        self.strings += 1
        self.out.append(_new(Opened, (path, _STRING)))

    def grew(self, text: str) -> None:
        path = self.str_path
        if path is not None and text:
            self.sent += len(text)
            self.out.append(_new(Appended, (path, text)))

    def assigned(self, parent: Any, key: Any, value: Any) -> None:
        out = self.out
        path = self.str_path
        if path is not None:  # the end of the string being streamed
            self.str_path = None
            if len(value) > self.sent:
                out.append(_new(Appended, (path, value[self.sent :])))
            out.append(_new(Closed, (path,)))
            return
        if parent is None:
            self._root()
            out.append(_new(Assigned, ((), value)))
        elif type(parent) is list:
            out.append(_new(Assigned, (self.paths[-1] + (len(parent),), value)))
        else:  # _member, inlined: this runs for every number and short string
            self.key_told = False
            out.append(_new(Assigned, (self.paths[-1] + (key,), value)))


class LazyPreview(DeferredPreview):
    """What ``preview()`` returned at one moment, computed only when :meth:`resolve` is
    called, however much the assembler has read since.

    Taking one costs O(depth of the open containers): it keeps, for each open container,
    the container and how many members it had, and the open string's length. Values only
    grow between deltas (members are added, strings are appended to), so truncating the
    live containers to those counts gives the old snapshot back, and the open string's
    final text begins with what was shown of it. Resolving costs what ``preview()``
    would have cost then.
    """

    __slots__ = ("_assembler", "_mark")

    def __init__(self, asm: ArgumentAssembler | None, mark: Any) -> None:
        # With an assembler, ``mark`` is (frames, open string): frames are (container, its
        # members then, its key in its parent), outermost first; the open string is (its
        # key or index, its length, its serial) or None. Without one, ``mark`` is the value
        # itself.
        self._assembler = asm
        self._mark = mark

    def resolve(self) -> Any:
        asm = self._assembler
        if asm is None:
            return self._mark
        frames, string = self._mark
        snapshot: Any = None
        top: Any = None
        for container, count, key in frames:
            if type(container) is dict:
                copy: Any = dict(islice(container.items(), count))
            else:
                copy = container[:count]
            if top is None:
                snapshot = copy
            elif key is None:
                top[-1] = copy
            else:
                top[key] = copy
            top = copy
        if string is not None:
            slot, length, serial = string
            text = asm._open_text(serial)
            if text is None:  # closed since: its final text is where it was put
                text = frames[-1][0][slot]
            if type(top) is list:
                top.append(text[:length])
            else:
                top[slot] = text[:length]
        return snapshot
