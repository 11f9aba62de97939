"""GLM-4.5, 4.6, 4.7: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>
</tool_call>``. Values are raw text (:class:`TextValue`); without a schema, a value that
is valid JSON is read as JSON (GLM's template writes non-string values with ``tojson``)."""

from __future__ import annotations

from ._contract import Channel, Stage
from ._formats import TextCallFormat
from ._rawtext import TextValue, ValueRegion
from ._region import MAX_NAME_CHARS, NameHeader, valid_name
from ._scan import MarkerSet
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

    def __init__(self, stage: Stage, ch: Channel, opener: str, marker: str = "") -> None:
        super().__init__(stage, ch, opener, marker)
        self.name = ""
        self.key = ""

    def begin(self, final: bool) -> bool:
        found = self.read_until(self.NAME_END, final, consume=False, check=NameHeader)
        if isinstance(found, bool):
            return found
        self.name = found[0].strip()
        if not valid_name(self.name):
            return self.fail()
        if found[1] == "</tool_call>" and self.stage.known_tool(self.name) is False:
            # "<tool_call>word</tool_call>" is GLM 4.7's call without arguments, and
            # also what prose about tags looks like: a call only to a known tool
            return self.fail()
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
