"""The shared machinery of the text tool-call formats: :class:`Region` (one stretch of
markup on one channel), :class:`Wrapper` (a ``{"name", "arguments"}`` JSON object read
piece by piece) and :class:`TextValue` (a raw-text parameter value written into the
argument JSON).

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
"""

from __future__ import annotations

import json.encoder
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from ._textscan import COMPLETE, MAX_HEADER_CHARS, WS, JsonExtent, MarkerSet
from ._textvalues import convert_text, loads, streams_as_string

if TYPE_CHECKING:
    from .textcalls import TextCallExtractor, TextCallFormat, _CallOut, _Channel

__all__: list[str] = []

State = Callable[[bool], bool]

_encode_string: Callable[[str], str] = json.encoder.encode_basestring

#: Longest tool name (and parameter name) accepted.
MAX_NAME_CHARS: Final = 256
NAME_BAD = re.compile(r"[\s<>{}\[\]\"'(),;=`|\\]")
NAME_START = re.compile(r"[\w.\-]")
#: Characters a JSON value can begin with (GLM values without a type are read as JSON).
_JSON_START: Final = frozenset('{["-0123456789tfn')
PY_NAME = re.compile(r"[A-Za-z_][\w.]*")


#: Members of a call's JSON wrapper that are the format's own, not arguments (Mistral
#: writes the call id after the arguments, too late to be the call's id here).
_WRAPPER_KEYS: Final = frozenset({"id", "type", "index"})


def valid_name(name: str) -> bool:
    """A tool or parameter name as the templates write them: no whitespace, no markup."""
    return 0 < len(name) <= MAX_NAME_CHARS and NAME_BAD.search(name) is None


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


def escape(text: str) -> str:
    """``text`` as the inside of a JSON string (non-ASCII kept, as ``json.dumps`` with
    ``ensure_ascii=False`` writes it; the C encoder, once per piece)."""
    return _encode_string(text)[1:-1]


class TextValue:
    """One raw-text parameter value written into the argument JSON as it arrives.

    Modes: ``stream`` (a string: passed on JSON-escaped piece by piece), ``buffer`` (typed
    by the schema, or GLM JSON: read whole, then converted), ``json`` (DSML
    ``string="false"``: the text is JSON, passed on as written). ``trim`` drops one
    framing newline at the end (Qwen3-Coder writes ``\\nVALUE\\n``)."""

    __slots__ = (
        "call",
        "json_untyped",
        "key",
        "mode",
        "nl",
        "offset",
        "parts",
        "size",
        "trim",
        "types",
    )

    def __init__(
        self,
        call: _CallOut,
        key: str,
        types: frozenset[str] | None,
        *,
        json_untyped: bool = False,
        trim: bool = False,
        raw_json: bool = False,
    ) -> None:
        self.call = call
        self.key = key
        self.types = types
        self.json_untyped = json_untyped
        self.trim = trim
        self.offset = call.size
        self.parts: list[str] = []
        self.size = 0
        self.nl = False
        self.mode: str | None
        if raw_json:
            self.mode = "json"
        elif types is None and json_untyped:
            self.mode = None  # decided by the first character
        elif streams_as_string(types):
            self.mode = "stream"
        else:
            self.mode = "buffer"

    def ends_with_newline(self) -> bool:
        if self.mode == "stream":
            return self.nl
        return bool(self.parts) and self.parts[-1].endswith("\n")

    def add(self, text: str) -> None:
        if not text:
            return
        mode = self.mode
        if mode is None:
            mode = self.mode = "buffer" if text[0] in _JSON_START else "stream"
        if mode == "stream":
            if not self.size:
                self.call.args('"')
            self.size += len(text)
            if self.nl:
                text = "\n" + text
                self.nl = False
            if self.trim and text.endswith("\n"):
                text = text[:-1]
                self.nl = True
            self.call.args(escape(text))
        elif mode == "json":
            self.size += len(text)
            self.call.args(text)
        else:
            self.size += len(text)
            self.parts.append(text)

    def finish(self) -> None:
        call = self.call
        if self.mode == "stream" or (self.mode is None and not self.size):
            call.args('"' if self.size else '""')
            return
        if self.mode == "json":
            if not self.size:
                call.args("null")
                call.repair(self.offset, f"parameter {self.key!r}: an empty value read as null")
            return
        text = "".join(self.parts)
        if self.trim and text.endswith("\n"):
            text = text[:-1]
        converted, description = convert_text(
            text, self.key, self.types, json_when_untyped=self.json_untyped
        )
        call.args(converted)
        if description is not None:
            call.repair(self.offset, description)

    def cut(self) -> None:
        """The input ended inside the value: pass on what arrived, unfinished."""
        if self.mode == "stream":
            if self.nl:
                self.call.args("\\n")
        elif self.mode != "json" and self.parts:
            self.call.args('"' + escape("".join(self.parts)))


class Region:
    """One stretch of markup on one channel (see the module docstring)."""

    fmt: str = ""
    #: Follows the argument JSON of the formats that write it as JSON (:meth:`pass_json`).
    extent: JsonExtent
    #: Follows the header :meth:`read_until` is reading, when it was given a check.
    head_check: HeaderCheck

    def __init__(
        self, stage: TextCallExtractor, ch: _Channel, opener: str, marker: str = ""
    ) -> None:
        self.stage = stage
        self.ch = ch
        self.marker = marker
        self.held: list[str] = [opener] if opener else []
        self.held_len = 0
        self.limit = MAX_HEADER_CHARS
        self.committed = False
        self.call: _CallOut | None = None
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

    def format(self) -> TextCallFormat:
        from .textcalls import TextCallFormat

        return TextCallFormat(self.fmt)

    def open(
        self, name: str, *, call_id: str | None = None, end_marker: str | None = None
    ) -> _CallOut:
        fmt = self.format()
        if not self.committed:
            self.committed = True
            self.stage.lock(fmt)
        self.call = self.stage.open_call(self.ch, fmt, name, call_id=call_id, end_marker=end_marker)
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

    # -- JSON wrappers (Hermes, Mistral, Llama): the owner's side ------------------------

    bare = False
    pending: list[str]

    def step_wrapper(self, wrapper: Wrapper, final: bool) -> bool | None:
        """Step ``wrapper``: None when it ended (its object closed, ``done``, or an end
        marker came first, ``hit``) with a call open, what it read marked; else what the
        state returns (a broken wrapper, or one that ended before its call was announced,
        is not a call: the region failed)."""
        progressed = wrapper.step(final)
        if wrapper.broken:
            return self.fail()
        if wrapper.hit is None and not wrapper.done:
            return progressed
        if self.call is None:
            return self.fail()
        self.mark()
        return None

    def w_named(self, name: str, wrapper: Wrapper) -> bool:
        if not valid_name(name):
            return False
        known = self.stage.known_tool(name)
        if self.bare:
            if known is False:
                return False
            if not wrapper.had_args:
                return True  # a bare reply is a call once its arguments begin
        self._open_wrapped(name)
        return True

    def w_args_begin(self, wrapper: Wrapper) -> bool:
        if self.call is None:
            if wrapper.name is not None and self.bare:
                self._open_wrapped(wrapper.name)
                return True
            self.limit = self.stage.max_size  # arguments before the name: held until it
            self.pending = []
        return True

    def w_args(self, piece: str) -> None:
        if self.call is not None:
            self.args(piece)
        else:
            self.pending.append(piece)

    def w_skipped(self, key: str) -> None:
        if self.call is not None:
            if key not in _WRAPPER_KEYS:
                self.call.note(f"the member {key!r} of the call's JSON was ignored")
            self.mark()

    def _open_wrapped(self, name: str) -> None:
        call = self.open(name, end_marker=self.end_marker())
        pending = getattr(self, "pending", None)
        if pending:
            call.args("".join(pending))
            self.pending = []
        self.limit = MAX_HEADER_CHARS

    def end_marker(self) -> str | None:
        return None


class Wrapper:
    """One JSON object ``{"name": N, "arguments": {...}}`` read piece by piece (Hermes,
    Mistral, Llama), telling its owner region what it finds: the name, the arguments'
    text as it arrives (``"parameters"`` is read the same). Other members are skipped.
    ``ends`` markers met outside strings stop it (``hit``)."""

    ARGUMENT_KEYS: Final = ("arguments", "parameters")

    def __init__(self, owner: Region, ends: MarkerSet | None) -> None:
        self.owner = owner
        self.ends = ends
        self.state: State = self.open
        self.key = ""
        self.raw: list[str] = []
        self.extent = JsonExtent(None, whole=True)
        self.name: str | None = None
        self.name_size = 0  # raw characters of the name string read
        self.escaped = False  # the name string has an escape
        self.had_args = False
        self.hit: str | None = None
        self.done = False
        self.broken = False

    def step(self, final: bool) -> bool:
        return self.state(final)

    def _break(self) -> bool:
        self.broken = True
        return True

    def _punctuation(self, final: bool, char: str, then: State) -> bool:
        """After whitespace, ``char`` (taken), then state ``then``; anything else breaks."""
        o = self.owner
        if not o.skip_ws():
            return o.wait(final)
        if o.buf[o.pos] != char:
            return self._break()
        o.take(o.pos + 1)
        self.state = then
        return True

    def open(self, final: bool) -> bool:
        return self._punctuation(final, "{", self.key_or_end)

    def key_or_end(self, final: bool) -> bool:
        o = self.owner
        if not o.skip_ws():
            return o.wait(final)
        c = o.buf[o.pos]
        if c == '"':
            return self._string_start(self.key_text)
        return self._close_or_break(c)

    def _close_or_break(self, c: str) -> bool:
        """``}`` (taken) ends the object; anything else breaks it."""
        if c != "}":
            return self._break()
        self.owner.take(self.owner.pos + 1)
        self.done = True
        return True

    def _string_start(self, then: State) -> bool:
        """A JSON string (a key, the name) begins: state ``then`` reads it (:meth:`_string`)."""
        self.extent = JsonExtent(None, whole=True)
        self.raw = []
        self.state = then
        return True

    def _string(self, final: bool, name: bool = False) -> str | None:
        o = self.owner
        stop, what = self.extent.scan(o.buf, o.pos)
        piece = o.take(stop)
        self.raw.append(piece)
        if what is not COMPLETE:
            if final or (name and not self._name_may_go_on(piece)):
                self._break()
            return None
        try:
            value = loads("".join(self.raw))
        except ValueError:
            self._break()
            return None
        if not isinstance(value, str):
            self._break()
            return None
        return value

    def key_text(self, final: bool) -> bool:
        key = self._string(final)
        if key is not None:
            self.key = key
            self.state = self.colon
        return True

    def colon(self, final: bool) -> bool:
        return self._punctuation(final, ":", self.value)

    def value(self, final: bool) -> bool:
        o = self.owner
        if not o.skip_ws():
            return o.wait(final)
        if self.key == "name" and self.name is None:
            if o.buf[o.pos] != '"':
                return self._break()
            return self._string_start(self.name_text)
        self.extent = JsonExtent(self.ends, whole=True)
        if self.key in self.ARGUMENT_KEYS and not self.had_args:
            self.had_args = True
            if not o.w_args_begin(self):
                return self._break()
            self.state = self.arguments
        else:
            self.state = self.skip
        return True

    def _name_may_go_on(self, piece: str) -> bool:
        """Whether the name string, of which ``piece`` is the latest raw text, may still
        be a name the owner takes: no character a name cannot have, not too long, and
        (for a bare reply, when tools are given) the start of a tool's name. Escapes
        are not decoded: from the first one on, the header bound alone applies."""
        if self.escaped:
            return True
        if len(self.raw) == 1:
            piece = piece[1:]  # the opening quote
        if "\\" in piece:
            self.escaped = True
            return True
        self.name_size += len(piece)
        if NAME_BAD.search(piece) is not None or self.name_size > MAX_NAME_CHARS:
            return False
        owner = self.owner
        return not owner.bare or owner.stage.tool_may_start("".join(self.raw)[1:]) is not False

    def name_text(self, final: bool) -> bool:
        name = self._string(final, name=True)
        if name is not None:
            self.name = name
            if not self.owner.w_named(name, self):
                return self._break()
            self.state = self.after_value
        return True

    def _extent(self, final: bool, forward: bool) -> bool:
        o = self.owner
        stop, what = self.extent.scan(o.buf, o.pos)
        if what == "" and final:
            stop, what = len(o.buf), None
        piece = o.take(stop)
        if forward and piece:
            o.w_args(piece)
        if what is None:
            return True
        if what == "":
            return bool(piece)
        if what is COMPLETE:
            if not forward:
                o.w_skipped(self.key)
            self.state = self.after_value
            return True
        self.hit = what
        return True

    def arguments(self, final: bool) -> bool:
        return self._extent(final, True)

    def skip(self, final: bool) -> bool:
        return self._extent(final, False)

    def after_value(self, final: bool) -> bool:
        o = self.owner
        if not o.skip_ws():
            return o.wait(final)
        c = o.buf[o.pos]
        if c == ",":
            o.take(o.pos + 1)
            self.state = self.key_or_end
            return True
        return self._close_or_break(c)
