"""What every text tool-call format reader shares: :class:`Region` (one stretch of markup
on one channel, read state by state) and the checks a header (a name) is read with.

A region starts at a start marker (or, for the bare formats, at the first character of
the reply) and reads until its markup ends. Its states are methods ``state(final) ->
bool`` that read ``channel.buf`` from ``channel.pos``: each consumes text and returns
True, or returns False to wait for more input (only ever for a bounded tail: a marker
prefix, a name, a lookahead). With ``final`` (the input ended) a state never waits.
The readers every format shares (:meth:`Region.read_until` a header, :meth:`Region.expect`
a marker, :meth:`Region.pass_json` argument JSON) return either what they read or, as a
``bool``, what the state returns: ``if isinstance(found, bool): return found``.

A header that is a name (a tool name, a parameter name, a Mistral or DeepSeek call head)
is followed piece by piece by a :class:`HeaderCheck` while it is read: the region fails
(its markup is released as text) at the first character no valid header can go on from,
not when the header ends or its bound is hit. A check only ever rules out what the
header's final validation would reject, so it changes when markup is released, never
whether it is a call.

``held`` is the markup consumed since the last point where it became output (a call
announced, argument text passed on, framing dropped): if the markup turns out not to be
what it looked like, ``fail()`` releases it, its first piece as text and the rest to be
scanned again. A call that was announced stays open when its markup breaks off: the
tracker then judges it ``cut_off``.

A region talks to the extractor only through the protocols of ``_contract.py``: the
:class:`~._contract.Stage` (tools, bounds, the format lock), its
:class:`~._contract.Channel` (the text, and where what it decides goes) and the
:class:`~._contract.Call` it announced.
"""

from __future__ import annotations

import json.encoder
import re
from collections.abc import Callable
from typing import Any, Final

from ._contract import Call, Channel, Stage
from ._formats import TextCallFormat
from ._scan import MAX_HEADER_CHARS, WS, JsonExtent, MarkerSet

__all__: list[str] = []

State = Callable[[bool], bool]

_encode_string: Callable[[str], str] = json.encoder.encode_basestring

#: Longest tool name (and parameter name) accepted.
MAX_NAME_CHARS: Final = 256
NAME_BAD = re.compile(r"[\s<>{}\[\]\"'(),;=`|\\]")
NAME_START = re.compile(r"[\w.\-]")
PY_NAME = re.compile(r"[A-Za-z_][\w.]*")


def valid_name(name: str) -> bool:
    """A tool or parameter name as the templates write them: no whitespace, no markup."""
    return 0 < len(name) <= MAX_NAME_CHARS and NAME_BAD.search(name) is None


def escape(text: str) -> str:
    """``text`` as the inside of a JSON string (non-ASCII kept, as ``json.dumps`` with
    ``ensure_ascii=False`` writes it; the C encoder, once per piece)."""
    return _encode_string(text)[1:-1]


class HeaderCheck:
    """Follows a header piece by piece: :meth:`feed` is False as soon as no text that
    begins with what was fed can be a valid header (each piece is looked at once)."""

    __slots__ = ()

    def feed(self, piece: str) -> bool:
        raise NotImplementedError


#: A piece of a name header: whitespace, name characters, whitespace (all may be empty).
_NAME_PIECE = re.compile(r"(\s*)([^\s<>{}\[\]\"'(),;=`|\\]*)(\s*)")
_ALL_WS = re.compile(r"\s*")


class NameHeader(HeaderCheck):
    """A header that is one name with optional whitespace around it (what
    ``valid_name(header.strip())`` accepts): ruled out by a character no name has, by
    anything but whitespace after the whitespace that follows the name, and by a name
    longer than :data:`MAX_NAME_CHARS`."""

    __slots__ = ("after", "size")

    def __init__(self) -> None:
        self.size = 0  # name characters read
        self.after = False  # whitespace followed the name: only whitespace may follow

    def feed(self, piece: str) -> bool:
        if self.after:
            return _ALL_WS.fullmatch(piece) is not None
        found = _NAME_PIECE.match(piece)
        assert found is not None
        if found.end() != len(piece):
            return False
        lead, name, trail = found.groups()
        if lead and self.size:
            # whitespace right after name characters: the name ended
            self.after = True
            return not name
        if name:
            self.size += len(name)
            self.after = bool(trail)
        return self.size <= MAX_NAME_CHARS


class Region:
    """One stretch of markup on one channel (see the module docstring).

    A subclass reads one format: ``fmt`` names it (a region may change it before its
    first call, when what it read turns out to be another format's), ``begin`` is its
    first state."""

    #: The format the calls of this region are read in.
    fmt: TextCallFormat
    #: Follows the argument JSON of the formats that write it as JSON (:meth:`pass_json`).
    extent: JsonExtent
    #: Follows the header :meth:`read_until` is reading, when it was given a check.
    head_check: HeaderCheck

    def __init__(self, stage: Stage, ch: Channel, opener: str, marker: str = "") -> None:
        self.stage = stage
        self.ch = ch
        self.marker = marker
        self.held: list[str] = [opener] if opener else []
        self.held_len = 0
        self.limit = MAX_HEADER_CHARS
        self.committed = False
        self.call: Call | None = None
        self.acc: list[str] = []
        self.acc_len = 0
        self.state: State = self.begin

    # -- driving -------------------------------------------------------------------------

    def begin(self, final: bool) -> bool:
        raise NotImplementedError

    def step(self, final: bool) -> bool:
        if self.held_len > self.limit:
            return self.fail()
        return self.state(final)

    def finish(self) -> None:
        """The input ended and every character was read."""
        self.cut()
        if self.held:
            self.ch.release(self)
        else:
            self.ch.region = None

    def cut(self) -> None:
        """The input ended inside the region: pass on what an open value holds."""

    # -- reading -------------------------------------------------------------------------

    @property
    def buf(self) -> str:
        return self.ch.buf

    @property
    def pos(self) -> int:
        return self.ch.pos

    def take(self, end: int) -> str:
        ch = self.ch
        piece = ch.buf[ch.pos : end]
        ch.pos = end
        if piece:
            self.held.append(piece)
            self.held_len += len(piece)
        return piece

    def mark(self) -> None:
        """What was held is now output (or framing): nothing to release any more."""
        self.held = []
        self.held_len = 0

    def drop(self, marker: str) -> None:
        """Take ``marker``, which stands at the read position, as framing."""
        self.take(self.ch.pos + len(marker))
        self.mark()

    def skip_ws(self) -> bool:
        """Take whitespace; True when a character follows it."""
        buf = self.ch.buf
        i = self.ch.pos
        n = len(buf)
        while i < n and buf[i] in WS:
            i += 1
        if i > self.ch.pos:
            self.take(i)
        return i < n

    def frame(self) -> bool:
        """Drop whitespace between calls (once a call was found, it is markup framing);
        True when a character follows it."""
        more = self.skip_ws()
        if self.committed and self.call is None and len(self.held) <= 1:
            self.mark()
        return more

    def read_until(
        self,
        markers: MarkerSet,
        final: bool,
        *,
        consume: bool = True,
        check: Callable[[], HeaderCheck] | None = None,
    ) -> tuple[str, str] | bool:
        """Read a bounded header (a name, an id, attributes) up to one of ``markers``
        (taken too unless ``consume`` is false): ``(text, marker)``; else what the state
        returns: False to wait, True when it is not there (too long, ruled out by a
        ``check`` made for the header, or the input ended: the region failed)."""
        ch = self.ch
        if check is not None and not self.acc:
            self.head_check = check()  # nothing of this header was read yet
        start, marker = markers.find(ch.buf, ch.pos)
        if marker is None:
            if start > ch.pos:
                piece = self.take(start)
                if check is not None and not self.head_check.feed(piece):
                    return self.fail()
                self.acc.append(piece)
                self.acc_len += len(piece)
            if self.acc_len > MAX_HEADER_CHARS or final:
                return self.fail()
            return False
        piece = self.take(start)
        if check is not None and piece and not self.head_check.feed(piece):
            return self.fail()
        text = "".join(self.acc) + piece if self.acc else piece
        self.acc.clear()
        self.acc_len = 0
        if len(text) > MAX_HEADER_CHARS:
            return self.fail()
        if consume:
            self.take(start + len(marker))
        return text, marker

    def expect(
        self, markers: MarkerSet, final: bool, *, frame: bool = False, drop_ws: bool = False
    ) -> str | bool:
        """After whitespace, one of ``markers``: taken (still held) and returned; else what
        the state returns: False to wait, True when something else stands there (the
        region failed). ``frame``: the whitespace may stand between calls (:meth:`frame`);
        ``drop_ws``: it is inside a call's markup, dropped before the marker is read."""
        if not (self.frame() if frame else self.skip_ws()):
            return self.wait(final)
        if drop_ws:
            self.mark()
        ch = self.ch
        found = markers.at(ch.buf, ch.pos)
        if found == "":
            return self.wait(final)
        if found is None:
            return self.fail()
        self.take(ch.pos + len(found))
        return found

    def pass_json(self, final: bool) -> str | bool:
        """Pass argument JSON on as it arrives, up to where :attr:`extent` stops it: the
        end it met (an end marker, which stands at the read position, or
        :data:`COMPLETE`); else what the state returns: False to wait (a possible end
        marker begins), True when all the text was passed on."""
        buf = self.ch.buf
        stop, what = self.extent.scan(buf, self.ch.pos)
        if what == "" and final:
            stop, what = len(buf), None
        piece = self.take(stop)
        if piece:
            self.args(piece)
        if what == "":
            return False
        if what is None:
            return True
        return what

    def follows(self, i: int, markers: MarkerSet, final: bool) -> bool | None:
        """Whether, after whitespace from ``i``, one of ``markers`` (or the end of the
        input) comes: True, False, or None to wait. Decides whether a closing tag met
        inside a value is structural or part of the value."""
        buf = self.ch.buf
        n = len(buf)
        j = i
        while j < n and buf[j] in WS:
            j += 1
        if j - i > MAX_HEADER_CHARS:
            return False
        if j == n:
            return True if final else None
        found = markers.at(buf, j)
        if found == "":
            return False if final else None
        return found is not None

    def wait(self, final: bool) -> bool:
        """Wait for more input; at the end of input, what is held is released (only
        whitespace inside a call's markup is framing, dropped)."""
        if not final:
            return False
        if self.committed and self.pos >= len(self.buf) and not "".join(self.held).strip():
            self.mark()
            return True
        return self.fail()

    def fail(self) -> bool:
        """Not (or no longer) markup: release what is held; an open call stays open."""
        self.call = None
        self.ch.release(self)
        return True

    def done(self) -> bool:
        """The region's markup ended."""
        if self.held:
            self.ch.emit("".join(self.held))
            self.mark()
        self.ch.end_region()
        return True

    # -- calls ---------------------------------------------------------------------------

    def commit(self) -> None:
        """The markup is this region's format: in ``auto``, keep to it."""
        if not self.committed:
            self.committed = True
            self.stage.lock(self.fmt)

    def open(self, name: str, *, call_id: str | None = None, end_marker: str | None = None) -> Call:
        self.commit()
        self.call = self.ch.open_call(self.fmt, name, call_id=call_id, end_marker=end_marker)
        self.mark()
        return self.call

    def close(self) -> None:
        if self.call is not None:
            self.call.end()
            self.call = None

    def close_at(self, marker: str, then: State) -> bool:
        """``marker``, the call's end, stands at the read position: take it, close the
        call, go on to state ``then``."""
        self.drop(marker)
        self.close()
        self.state = then
        return True

    def cut_at(self, then: State) -> bool:
        """The markup goes on without the call's end: the call stays open (the tracker
        judges it cut off); go on to state ``then``, which reads what came instead."""
        self.call = None
        self.state = then
        return True

    def args(self, text: str) -> None:
        assert self.call is not None
        self.call.args(text)
        self.mark()

    def become(self, cls: type[Region], **options: Any) -> bool:
        """Hand the markup read so far to the region of the format it turned out to be."""
        new = cls(self.stage, self.ch, "", self.marker, **options)
        new.held = self.held
        new.held_len = self.held_len
        self.ch.region = new
        return True
