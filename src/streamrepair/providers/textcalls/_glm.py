"""GLM-4.5, 4.6, 4.7: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>
</tool_call>``. Values are raw text (:class:`TextValue`); without a schema, a value that
is valid JSON is read as JSON (GLM's template writes non-string values with ``tojson``)."""

from __future__ import annotations

from ._contract import Channel, Stage
from ._formats import TextCallFormat
from ._rawtext import TextValue, ValueRegion
from ._region import MAX_NAME_CHARS, NameHeader, valid_name
from ._scan import MAX_HEADER_CHARS, WS, MarkerSet
from ._values import param_types

__all__: list[str] = []


class GlmRegion(ValueRegion):
    """``<tool_call>NAME`` then ``<arg_key>K</arg_key><arg_value>V</arg_value>``...
    ``</tool_call>`` (GLM-4.5/4.6, and 4.7's spacing). An ``</arg_value>`` is structural
    only when ``<arg_key>`` or ``</tool_call>`` follows it."""

    fmt = TextCallFormat.GLM
    NAME_END = MarkerSet(["\n", "<arg_key>", "</tool_call>"])
    MEMBERS = MarkerSet(["<arg_key>", "</tool_call>"])
    KEY_END = MarkerSet(["</arg_key>"])
    VALUE_OPEN = MarkerSet(["<arg_value>"])
    VALUE_END = MarkerSet(["</arg_value>", "<arg_key>", "</tool_call>"])
    NEXT_CALL = MarkerSet(["<tool_call>"])

    def __init__(
        self, stage: Stage, ch: Channel, opener: str, marker: str = "", *, spaced: bool = False
    ) -> None:
        super().__init__(stage, ch, opener, marker)
        self.spaced = spaced
        self.name = ""
        self.key = ""

    def begin(self, final: bool) -> bool:
        found = self.read_until(self.NAME_END, final, consume=False, check=NameHeader)
        if isinstance(found, bool):
            return found
        self.name = found[0].strip()
        if not valid_name(self.name):
            return self.fail()
        if found[1] == "</tool_call>":
            # "<tool_call>word</tool_call>" is GLM 4.7's call without arguments, and
            # also what prose about tags looks like: a call only to a known tool (and,
            # after whitespace, only to one of the tools given)
            known = self.stage.known_tool(self.name)
            if known is False or (self.spaced and not known):
                return self.fail()
        elif self.spaced and found[1] == "\n":
            self.state = self.spaced_name
            return True
        return self.opened()

    def spaced_name(self, final: bool) -> bool:
        """Whitespace came between ``<tool_call>`` and the name (Ollama's GLM parser
        reads ``<tool_call>  get-weather``; the templates write none): a call only once
        an ``<arg_key>`` follows the name, or a ``</tool_call>`` closes a call to one of
        the tools given."""
        buf = self.buf
        i = j = self.pos
        n = len(buf)
        while j < n and buf[j] in WS:
            j += 1
        if j - i > MAX_HEADER_CHARS:
            return self.fail()
        found = self.MEMBERS.at(buf, j) if j < n else ""
        if found == "":
            return self.fail() if final else False
        if found is None or (found == "</tool_call>" and not self.stage.known_tool(self.name)):
            return self.fail()
        return self.opened()

    def opened(self) -> bool:
        self.open(self.name, end_marker="</tool_call>")
        self.args("{")
        self.state = self.members
        return True

    def members(self, final: bool) -> bool:
        found = self.expect(self.MEMBERS, final, drop_ws=True)
        if isinstance(found, bool):
            return found
        if found == "</tool_call>":
            self.mark()
            self.args("}")
            self.close()
            return self.done()
        self.state = self.key_text
        return True

    def key_text(self, final: bool) -> bool:
        found = self.read_until(self.KEY_END, final)
        if isinstance(found, bool):
            return found
        self.key = found[0].strip()
        if not self.key or len(self.key) > MAX_NAME_CHARS:
            return self.fail()
        self.state = self.value_open
        return True

    def value_open(self, final: bool) -> bool:
        if not self.skip_ws():
            return self.wait(final)
        found = self.VALUE_OPEN.at(self.buf, self.pos)
        if found == "":
            return self.wait(final)
        assert self.call is not None
        if found:
            self.take(self.pos + len(found))
        else:
            self.call.note(f"the value of {self.key!r} had no <arg_value>")
        self.call.key(self.key)
        self.mark()
        types = param_types(self.stage.schema(self.name), self.key)
        self.value = TextValue(self.call, self.key, types, json_untyped=True)
        self.state = self.value_text
        return True

    def value_tag(self, marker: str, start: int, final: bool) -> bool:
        after = start + len(marker)
        unclosed = f"the value of {self.key!r} had no </arg_value>"
        if marker == "</arg_value>":
            decided = self.follows(after, self.MEMBERS, final)
            if decided is None:
                return False
            if decided:
                self.take(after)
                return self.end_value(None, self.members)
        elif marker == "<arg_key>":
            return self.end_value(unclosed, self.members)
        else:
            decided = self.follows(after, self.NEXT_CALL, final)
            if decided is None:
                return False
            if decided:
                return self.end_value(unclosed, self.members)
        self.content(after)
        return True
