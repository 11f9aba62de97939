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
from ._scan import MAX_HEADER_CHARS, MarkerSet
from ._values import loads, param_types

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
    INVOKE_END = MarkerSet([f"</{_DSML}invoke>"])

    def __init__(self, stage: Stage, ch: Channel, opener: str, marker: str = "") -> None:
        super().__init__(stage, ch, opener, marker)
        self.name = ""
        self.params = 0  # parameters of the open invoke
        self.unwrapped = False  # its lone "arguments" parameter became the arguments
        self.wrapped: list[str] = []  # the text of an "arguments" parameter held

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
        self.params = 0
        self.unwrapped = False
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
            if not self.unwrapped:
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
        self.params += 1
        flag = attrs.get("string", "").strip().lower()
        if self.params == 1 and key == "arguments" and flag != "true" and self._unlisted(key):
            self.mark()
            self.wrapped = []
            self.limit = self.stage.max_size
            self.state = self.wrapped_value
            return True
        self.call.key(key)
        self.mark()
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

    # A lone "arguments" parameter the tool's schema does not list, holding a JSON object:
    # the model wrapped the arguments (as OpenAI's wire format names them); vLLM's
    # DeepSeek V3.2 parser unwraps it, and so does this (reported). Held whole, since
    # only what follows it says whether it is alone.

    def _unlisted(self, key: str) -> bool:
        schema = self.stage.schema(self.name)
        props = schema.get("properties") if schema is not None else None
        return isinstance(props, dict) and key not in props

    def wrapped_value(self, final: bool) -> bool:
        buf, pos = self.buf, self.pos
        start, marker = self.VALUE_END.find(buf, pos)
        if start > pos:
            self.wrapped.append(self.take(start))
        if marker is None:
            if final and start < len(buf):
                self.wrapped.append(self.take(len(buf)))
            return start == len(buf) or final
        if not marker.startswith(f"</{_DSML}parameter"):
            assert self.call is not None
            self.call.note("the value of 'arguments' had no closing tag")
            return self.unwrap(False)
        after = start + len(marker)
        decided = self.follows(after, self.INVOKE_END, final)
        if decided is None:
            return False
        self.take(after)
        return self.unwrap(decided)

    def unwrap(self, alone: bool) -> bool:
        """The ``arguments`` parameter ended (``alone``: its invoke ends next)."""
        assert self.call is not None
        text = "".join(self.wrapped)
        self.wrapped = []
        self.limit = MAX_HEADER_CHARS
        body = text.strip()
        try:
            value = loads(body)
        except (ValueError, RecursionError):
            value = None
        if alone and isinstance(value, dict):
            offset = self.call.size - 1
            self.args(body[1:])  # "{" is out already: the object is the arguments
            self.unwrapped = True
            self.call.repair(
                offset,
                "the lone parameter 'arguments', which the tool's schema does not list, "
                "held the arguments as a JSON object: read as the arguments",
            )
        else:
            self.call.key("arguments")
            self.args(body if body else "null")
        self.mark()
        self.state = self.invoke_body
        return True

    def cut(self) -> None:
        if self.wrapped and self.call is not None:
            self.call.key("arguments")
            self.call.args("".join(self.wrapped))
            self.wrapped = []
            self.mark()
        super().cut()
