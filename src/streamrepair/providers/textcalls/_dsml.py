"""DeepSeek V3.2's DSML: ``<｜DSML｜function_calls>`` wrapping ``<｜DSML｜invoke name="N">``
blocks of ``<｜DSML｜parameter name="K" string="true|false">V</｜DSML｜parameter>``. Values
are raw text (:class:`TextValue`): ``string="true"`` ones strings, ``"false"`` ones JSON."""

from __future__ import annotations

import re
from typing import Final

from ._contract import Channel, Stage
from ._formats import TextCallFormat
from ._rawtext import TextValue, ValueRegion
from ._region import MAX_NAME_CHARS, valid_name
from ._scan import MarkerSet
from ._values import param_types

__all__: list[str] = []

_ATTR = re.compile(r'([\w\-]+)\s*=\s*"([^"]*)"')
_DSML: Final = "｜DSML｜"


class DsmlRegion(ValueRegion):
    """``<｜DSML｜function_calls>`` wrapping ``<｜DSML｜invoke name="N">`` blocks of
    ``<｜DSML｜parameter name="K" string="true|false">V</｜DSML｜parameter>``
    (DeepSeek V3.2): ``string="true"`` values are strings, ``"false"`` ones JSON."""

    fmt = TextCallFormat.DSML
    BLOCK = MarkerSet([f"<{_DSML}invoke", f"</{_DSML}function_calls>"])
    HEAD_END = MarkerSet([">"])
    INVOKE = MarkerSet([f"<{_DSML}parameter", f"</{_DSML}invoke>"])
    VALUE_END = MarkerSet([f"</{_DSML}parameter>", f"<{_DSML}parameter", f"</{_DSML}invoke>"])

    def __init__(self, stage: Stage, ch: Channel, opener: str, marker: str = "") -> None:
        super().__init__(stage, ch, opener, marker)
        self.name = ""

    def begin(self, final: bool) -> bool:
        self.state = self.block
        return True

    def block(self, final: bool) -> bool:
        found = self.expect(self.BLOCK, final, frame=True)
        if isinstance(found, bool):
            return found
        if found.startswith("</"):
            self.mark()
            return self.done()
        self.state = self.invoke_head
        return True

    def invoke_head(self, final: bool) -> bool:
        found = self.read_until(self.HEAD_END, final)
        if isinstance(found, bool):
            return found
        name = dict(_ATTR.findall(found[0])).get("name", "").strip()
        if not valid_name(name):
            return self.fail()
        self.name = name
        self.open(name, end_marker=f"</{_DSML}invoke>")
        self.args("{")
        self.state = self.invoke_body
        return True

    def invoke_body(self, final: bool) -> bool:
        found = self.expect(self.INVOKE, final, drop_ws=True)
        if isinstance(found, bool):
            return found
        if found.startswith("</"):
            self.mark()
            self.args("}")
            self.close()
            self.state = self.block
        else:
            self.state = self.param_head
        return True

    def param_head(self, final: bool) -> bool:
        found = self.read_until(self.HEAD_END, final)
        if isinstance(found, bool):
            return found
        assert self.call is not None
        attrs = dict(_ATTR.findall(found[0]))
        key = attrs.get("name", "").strip()
        if not key or len(key) > MAX_NAME_CHARS:
            return self.fail()
        self.call.key(key)
        self.mark()
        flag = attrs.get("string", "").strip().lower()
        if flag == "true":
            self.value = TextValue(self.call, key, frozenset({"string"}))
        elif flag == "false":
            self.value = TextValue(self.call, key, None, raw_json=True)
        else:
            types = param_types(self.stage.schema(self.name), key)
            self.value = TextValue(self.call, key, types)
        self.state = self.value_text
        return True

    def value_tag(self, marker: str, start: int, final: bool) -> bool:
        """Any tag ends the value; only its own closing tag is taken with it."""
        assert self.value is not None
        if marker.startswith(f"</{_DSML}parameter"):
            self.take(start + len(marker))
            return self.end_value(None, self.invoke_body)
        return self.end_value(
            f"the value of {self.value.key!r} had no closing tag", self.invoke_body
        )
