"""Calls written as a JSON object ``{"name": N, "arguments": {...}}`` (Hermes, Mistral,
Llama 3 JSON): :class:`Wrapper` reads the object piece by piece and tells the region that
owns it what it finds; :class:`WrappedRegion` is that owner's side, shared by the three
formats (a call is announced at its name, or, for a bare reply, once its arguments begin;
arguments written before the name are held until it comes)."""

from __future__ import annotations

from typing import Final

from ._contract import Channel, Stage
from ._region import MAX_NAME_CHARS, NAME_BAD, Region, State, valid_name
from ._scan import COMPLETE, MAX_HEADER_CHARS, JsonExtent, MarkerSet
from ._values import loads

__all__: list[str] = []

#: Members of a call's JSON wrapper that are the format's own, not arguments (Mistral
#: writes the call id after the arguments, too late to be the call's id here).
_WRAPPER_KEYS: Final = frozenset({"id", "type", "index"})


class WrappedRegion(Region):
    """A region whose calls are JSON wrappers: the owner's side of :class:`Wrapper`.
    ``bare``: a reply with no marker, a call only once its arguments begin (after a name
    that is one of the tools, when tools are given)."""

    bare = False
    #: The wrapper's member that names the tool, the members that hold the arguments, and
    #: the member that holds the model's own call id (read when it comes before the name).
    NAME_KEY = "name"
    ARGUMENT_KEYS: tuple[str, ...] = ("arguments", "parameters")
    ID_KEY: str | None = None

    def __init__(self, stage: Stage, ch: Channel, opener: str, marker: str = "") -> None:
        super().__init__(stage, ch, opener, marker)
        self.pending: list[str] = []  # argument text read before the name
        self.call_id: str | None = None  # the model's id for the next call

    def end_marker(self) -> str | None:
        """What closes a call of this region (for the tracker's notes)."""
        return None

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

    def w_id(self, call_id: str) -> None:
        """The model's id for the call (``ID_KEY``), read before its name."""
        self.call_id = call_id or None

    def w_skipped(self, key: str) -> None:
        if self.call is not None:
            if key not in _WRAPPER_KEYS:
                self.call.note(f"the member {key!r} of the call's JSON was ignored")
            self.mark()

    def _open_wrapped(self, name: str) -> None:
        call = self.open(name, call_id=self.call_id, end_marker=self.end_marker())
        self.call_id = None
        if self.pending:
            call.args("".join(self.pending))
            self.pending = []
        self.limit = MAX_HEADER_CHARS


#: The keys a ``name_first`` wrapper begins with, as written.
_NAME: Final = ('"name"',)
_ARGUMENTS: Final = ('"parameters"', '"arguments"')


class Wrapper:
    """One JSON object ``{"name": N, "arguments": {...}}`` read piece by piece (Hermes,
    Mistral, Llama), telling its owner region what it finds: the name, the arguments'
    text as it arrives (``"parameters"`` is read the same). Other members are skipped.
    ``ends`` markers met outside strings stop it (``hit``). The owner says which members
    are the name, the arguments and the call id (Command's ``tool_name``, ``parameters``,
    ``tool_call_id``). ``name_first``: the first member must be ``"name"`` and the second
    ``"parameters"`` or ``"arguments"`` (written plainly), else the object breaks at the
    first character of a key that rules that out."""

    def __init__(
        self, owner: WrappedRegion, ends: MarkerSet | None, *, name_first: bool = False
    ) -> None:
        self.owner = owner
        self.ends = ends
        self.name_first = name_first
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

    def _string(self, final: bool, name: bool = False, exact: tuple[str, ...] = ()) -> str | None:
        """Read a JSON string; ``exact``: the raw texts it may be (keys written plainly),
        ruled out at its first character that differs from all."""
        o = self.owner
        stop, what = self.extent.scan(o.buf, o.pos)
        piece = o.take(stop)
        self.raw.append(piece)
        if exact:
            raw = "".join(self.raw)
            if not any(e.startswith(raw) for e in exact):
                self._break()
                return None
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
        exact: tuple[str, ...] = ()
        if self.name_first and not self.had_args:
            exact = _ARGUMENTS if self.name is not None else _NAME
        key = self._string(final, exact=exact)
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
        if self.key == o.NAME_KEY and self.name is None:
            if o.buf[o.pos] != '"':
                return self._break()
            return self._string_start(self.name_text)
        if self.key == o.ID_KEY and self.name is None and o.buf[o.pos] == '"':
            return self._string_start(self.id_text)
        self.extent = JsonExtent(self.ends, whole=True)
        if self.key in o.ARGUMENT_KEYS and not self.had_args:
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

    def id_text(self, final: bool) -> bool:
        call_id = self._string(final)
        if call_id is not None:
            self.owner.w_id(call_id)
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
