"""``<invoke name="N"><parameter name="K">V</parameter></invoke>`` blocks, the markup
DeepSeek's DSML (V3.2, V4) and MiniMax M2 share: :class:`InvokeRegion` reads one block of
invokes, each a call; a format says its tags (DSML prefixes each with ``｜DSML｜``) and
how a parameter's value is typed. Values are raw text (:class:`TextValue`)."""

from __future__ import annotations

import re
from typing import Any, Final

from ._rawtext import TextValue, ValueRegion
from ._region import MAX_NAME_CHARS, valid_name
from ._scan import MarkerSet
from ._values import param_types

__all__: list[str] = []

_ATTR: Final = re.compile(r'([\w\-]+)\s*=\s*"([^"]*)"')


def attributes(head: str) -> dict[str, str]:
    """The ``key="value"`` attributes of a tag's head."""
    return dict(_ATTR.findall(head))


class InvokeRegion(ValueRegion):
    """A block (opened by its start marker) of ``INVOKE_OPEN name="N">`` ...
    ``INVOKE_CLOSE`` invokes, each a call whose parameters are ``PARAM_OPEN name="K">V
    PARAM_CLOSE``, ended by ``BLOCK_CLOSE``.

    ``ANY_TAG_ENDS_VALUE``: a tag of the format met inside a value ends it (DSML's tags
    carry ``｜DSML｜``, which no value holds); otherwise only ``PARAM_CLOSE`` does, and
    only when the next parameter, the invoke's end or the input's end follows it, so a
    value may hold the literal tags (MiniMax's are plain XML)."""

    BLOCK_CLOSE: str
    INVOKE_OPEN: str
    INVOKE_CLOSE: str
    PARAM_OPEN: str
    PARAM_CLOSE: str
    ANY_TAG_ENDS_VALUE = True
    HEAD_END = MarkerSet([">"])
    # built from the tags above by __init_subclass__
    BLOCK: MarkerSet
    INVOKE: MarkerSet
    INVOKE_END: MarkerSet

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.BLOCK = MarkerSet([cls.INVOKE_OPEN, cls.BLOCK_CLOSE])
        cls.INVOKE = MarkerSet([cls.PARAM_OPEN, cls.INVOKE_CLOSE])
        cls.INVOKE_END = MarkerSet([cls.INVOKE_CLOSE])
        ends = [cls.PARAM_CLOSE]
        if cls.ANY_TAG_ENDS_VALUE:
            ends += [cls.PARAM_OPEN, cls.INVOKE_CLOSE]
        cls.VALUE_END = MarkerSet(ends)

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.name = ""
        self.params = 0  # parameters of the open invoke

    def begin(self, final: bool) -> bool:
        self.state = self.block
        return True

    def block(self, final: bool) -> bool:
        found = self.expect(self.BLOCK, final, frame=True)
        if isinstance(found, bool):
            return found
        if found == self.BLOCK_CLOSE:
            self.mark()
            return self.done()
        self.state = self.invoke_head
        return True

    def invoke_head(self, final: bool) -> bool:
        found = self.read_until(self.HEAD_END, final)
        if isinstance(found, bool):
            return found
        name = attributes(found[0]).get("name", "").strip()
        if not valid_name(name):
            return self.fail()
        self.name = name
        self.params = 0
        self.open(name, end_marker=self.INVOKE_CLOSE)
        self.args("{")
        self.state = self.invoke_body
        return True

    def invoke_body(self, final: bool) -> bool:
        found = self.expect(self.INVOKE, final, drop_ws=True)
        if isinstance(found, bool):
            return found
        if found == self.INVOKE_CLOSE:
            self.mark()
            self.invoke_end()
            self.close()
            self.state = self.block
        else:
            self.state = self.param_head
        return True

    def invoke_end(self) -> None:
        """The invoke closed: close its argument object."""
        self.args("}")

    def param_head(self, final: bool) -> bool:
        found = self.read_until(self.HEAD_END, final)
        if isinstance(found, bool):
            return found
        assert self.call is not None
        attrs = attributes(found[0])
        key = attrs.get("name", "").strip()
        if not key or len(key) > MAX_NAME_CHARS:
            return self.fail()
        self.params += 1
        return self.param(key, attrs)

    def param(self, key: str, attrs: dict[str, str]) -> bool:
        """A parameter ``key`` begins (its head's ``attrs``): typed by the tool's schema."""
        assert self.call is not None
        self.call.key(key)
        self.mark()
        types = param_types(self.stage.schema(self.name), key)
        self.value = TextValue(self.call, key, types)
        self.state = self.value_text
        return True

    def value_tag(self, marker: str, start: int, final: bool) -> bool:
        assert self.value is not None
        after = start + len(marker)
        if marker != self.PARAM_CLOSE:  # ANY_TAG_ENDS_VALUE: the value had no closing tag
            return self.end_value(
                f"the value of {self.value.key!r} had no closing tag", self.invoke_body
            )
        if not self.ANY_TAG_ENDS_VALUE:
            decided = self.follows(after, self.INVOKE, final)
            if decided is None:
                return False
            if not decided:
                self.content(after)
                return True
        self.take(after)
        return self.end_value(None, self.invoke_body)
