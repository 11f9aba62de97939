"""Parameter values written as raw text, for the formats whose values are not JSON as
written (Qwen3-Coder ``<parameter=k>``, GLM ``<arg_value>``, DSML ``<｜DSML｜parameter>``):
:class:`TextValue` writes one value into the argument JSON as it arrives (strings passed
on as they arrive, other types, by the tool's schema, once whole), and
:class:`ValueRegion` reads one value up to a closing tag; each format says which tags may
end a value and when one that does is structural."""

from __future__ import annotations

from typing import Any, Final

from ._contract import Call
from ._region import Region, State, escape
from ._scan import MarkerSet
from ._values import convert_text, streams_as_string

__all__: list[str] = []

#: Characters a JSON value can begin with (GLM values without a type are read as JSON).
_JSON_START: Final = frozenset('{["-0123456789tfn')


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
        call: Call,
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


class ValueRegion(Region):
    """A region whose parameter values are raw text (:class:`TextValue`), each read up to
    one of ``VALUE_END``: :meth:`value_text` passes the text before a tag on as value,
    and :meth:`value_tag` decides whether the tag ends the value (:meth:`end_value`) or
    is part of it. The open value is ``value``; the input ending inside it passes on
    what arrived (:meth:`cut`)."""

    VALUE_END: MarkerSet

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.value: TextValue | None = None

    def value_text(self, final: bool) -> bool:
        buf, pos = self.buf, self.pos
        start, marker = self.VALUE_END.find(buf, pos)
        if start > pos:
            self.content(start)
        if marker is None:
            if start == len(buf):
                return True
            if final:
                self.content(len(buf))
                return True
            return False
        return self.value_tag(marker, start, final)

    def value_tag(self, marker: str, start: int, final: bool) -> bool:
        """``marker`` (one of ``VALUE_END``) stands at ``start``: end the value, take the
        tag as value text, or return False to wait for what follows it."""
        raise NotImplementedError

    def content(self, end: int) -> None:
        """The text up to ``end`` is value text."""
        assert self.value is not None
        self.value.add(self.take(end))
        self.mark()

    def end_value(self, note: str | None, then: State) -> bool:
        """The value is complete (``note`` says what was missing): on to state ``then``."""
        assert self.value is not None
        assert self.call is not None
        self.value.finish()
        if note:
            self.call.note(note)
        self.value = None
        self.mark()
        self.state = then
        return True

    def cut(self) -> None:
        if self.value is not None:
            self.value.cut()
            self.value = None
