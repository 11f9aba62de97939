"""Kimi K3's XTML: every tag is ``<|open|>NAME attr="v"...<|sep|>`` or
``<|close|>NAME<|sep|>`` (llama.cpp's ``Kimi-K3.jinja``, vLLM's ``kimi_k3`` parser). An
assistant turn is ``<|open|>think<|sep|>...<|close|>think<|sep|>`` (when thinking),
``<|open|>response<|sep|>REPLY<|close|>response<|sep|>``, then the calls::

    <|open|>tools<|sep|>
      <|open|>call tool="N" index="1"<|sep|>
        <|open|>argument key="K" type="string"<|sep|>V<|close|>argument<|sep|>
        ...
      <|close|>call<|sep|>
    <|close|>tools<|sep|>

and ``<|close|>message<|sep|>``. The generation prompt opens ``think`` (or ``response``),
so the output often has only the closing tag of the first section.

The ``response`` and ``message`` tags are framing: dropped, the reply is text. The
``think`` tags are text, as ``<think>`` is (the prompt opened the section, so the text
before its closing tag has gone out as content by then). A ``type="string"`` argument
is raw text (a string, streamed), another JSON type's is JSON as written; a call may
carry its arguments as one ``<|open|>json type="object"<|sep|>{...}<|close|>json<|sep|>``
instead. Attribute values are XML-escaped (``&quot;``, ``&amp;``), bodies raw."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ._formats import XTML_OPEN, TextCallFormat
from ._invoke import attributes
from ._rawtext import TextValue, ValueRegion
from ._region import MAX_NAME_CHARS, HeaderCheck, valid_name
from ._scan import JsonExtent, MarkerSet
from ._values import param_types

__all__: list[str] = []

_SEP: Final = "<|sep|>"
_CLOSE: Final = "<|close|>"
_ARG_CLOSE: Final = f"{_CLOSE}argument{_SEP}"
_CALL_CLOSE: Final = f"{_CLOSE}call{_SEP}"
_JSON_CLOSE: Final = f"{_CLOSE}json{_SEP}"
_ARG_OPEN: Final = f"{XTML_OPEN}argument"
#: The JSON types an argument's ``type=`` may name (its value is JSON as written).
_JSON_TYPES: Final = frozenset({"number", "integer", "boolean", "null", "object", "array"})


def _unescape(value: str) -> str:
    """An attribute value as the template escaped it: ``&quot;`` first, then ``&amp;``."""
    return value.replace("&quot;", '"').replace("&amp;", "&")


class XtmlHead(HeaderCheck):
    """The head of an XTML tag, read up to its ``<|sep|>``: optional whitespace, one of
    ``tags``, then (for the tags in ``attrs``) whitespace and attributes, else only
    whitespace. Ruled out at the first character of the name no tag goes on with."""

    __slots__ = ("after", "attrs", "tags", "word")

    def __init__(self, tags: tuple[str, ...], attrs: frozenset[str] = frozenset()) -> None:
        self.tags = tags
        self.attrs = attrs
        self.word = ""
        self.after = False  # the name ended

    def feed(self, piece: str) -> bool:
        for i, char in enumerate(piece):
            if self.after:
                if self.word in self.attrs:
                    return True  # attributes: held to the header bound
                if not char.isspace():
                    return False
            elif char.isspace():
                if self.word:
                    if self.word not in self.tags:
                        return False
                    self.after = True
                    if self.word in self.attrs:
                        return True
            else:
                self.word += piece[i]
                if not any(tag.startswith(self.word) for tag in self.tags):
                    return False
        return True


def _head(tags: tuple[str, ...], attrs: frozenset[str] = frozenset()) -> Callable[[], XtmlHead]:
    return lambda: XtmlHead(tags, attrs)


_OPENING = _head(("response", "tools"))
_CLOSING = _head(("response", "message"))
_IN_TOOLS_OPEN = _head(("call",), frozenset({"call"}))
_IN_TOOLS_CLOSE = _head(("tools",))
_IN_CALL_OPEN = _head(("argument", "json"), frozenset({"argument", "json"}))
_IN_CALL_CLOSE = _head(("call",))


class XtmlRegion(ValueRegion):
    """One XTML tag of a Kimi K3 turn (see the module docstring), opened by
    ``<|open|>`` or ``<|close|>``: the ``response``/``message`` framing, dropped, or a
    ``tools`` section, read call by call; any other tag is text."""

    fmt = TextCallFormat.KIMI_K3
    SEP = MarkerSet([_SEP])
    TAG = MarkerSet([XTML_OPEN, _CLOSE])
    VALUE_END = MarkerSet([_ARG_CLOSE, _ARG_OPEN, _CALL_CLOSE])
    AFTER_ARG = MarkerSet([_ARG_OPEN, f"{XTML_OPEN}json", _CALL_CLOSE])

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.name = ""
        self.opening = self.marker == XTML_OPEN  # the tag being read opens
        self.members = 0  # members of the open call's arguments (a json block: -1)

    def begin(self, final: bool) -> bool:
        found = self.read_until(self.SEP, final, check=_OPENING if self.opening else _CLOSING)
        if isinstance(found, bool):
            return found
        tag = found[0].strip()
        if tag not in ("tools", "response", "message"):
            return self.fail()
        self.commit()
        self.mark()
        if tag != "tools":
            return self.done()  # framing: the reply around it is text
        self.state = self.tools
        return True

    # -- the tools section: calls ---------------------------------------------------------

    def tools(self, final: bool) -> bool:
        found = self.expect(self.TAG, final, frame=True)
        if isinstance(found, bool):
            return found
        self.opening = found == XTML_OPEN
        self.state = self.tools_tag
        return True

    def tools_tag(self, final: bool) -> bool:
        check = _IN_TOOLS_OPEN if self.opening else _IN_TOOLS_CLOSE
        found = self.read_until(self.SEP, final, check=check)
        if isinstance(found, bool):
            return found
        head = found[0].strip()
        if not self.opening:  # </tools>
            self.mark()
            return self.done()
        name = _unescape(attributes(head).get("tool", "")).strip()
        if not head.startswith("call") or not valid_name(name):
            return self.fail()
        self.name = name
        self.members = 0
        self.open(name, end_marker=_CALL_CLOSE)
        self.state = self.call_body
        return True

    # -- a call: arguments, or one json block ---------------------------------------------

    def call_body(self, final: bool) -> bool:
        found = self.expect(self.TAG, final, drop_ws=True)
        if isinstance(found, bool):
            return found
        self.opening = found == XTML_OPEN
        self.state = self.call_tag
        return True

    def call_tag(self, final: bool) -> bool:
        check = _IN_CALL_OPEN if self.opening else _IN_CALL_CLOSE
        found = self.read_until(self.SEP, final, check=check)
        if isinstance(found, bool):
            return found
        head = found[0].strip()
        if not self.opening:  # </call>
            self.mark()
            if self.members == 0:
                self.args("{}")
            elif self.members > 0:
                self.args("}")
            self.close()
            self.state = self.tools
            return True
        if self.members < 0:
            return self.fail()  # nothing follows a json block but the call's end
        if head.startswith("json"):
            if self.members:
                return self.fail()  # a json block carries all the arguments, or none
            self.members = -1
            self.mark()
            self.extent = JsonExtent(MarkerSet([_JSON_CLOSE]), whole=False)
            self.state = self.json_block
            return True
        return self.argument(attributes(head))

    def argument(self, attrs: dict[str, str]) -> bool:
        assert self.call is not None
        key = _unescape(attrs.get("key", ""))
        if not key or len(key) > MAX_NAME_CHARS:
            return self.fail()
        kind = _unescape(attrs.get("type", "string")).strip()
        if not self.members:
            self.args("{")
        self.members += 1
        self.call.key(key)
        self.mark()
        if kind == "string":
            self.value = TextValue(self.call, key, frozenset({"string"}))
        elif kind in _JSON_TYPES:
            self.value = TextValue(self.call, key, None, raw_json=True)
        else:  # a type the template does not write: the tool's schema decides
            self.value = TextValue(self.call, key, param_types(self.stage.schema(self.name), key))
        self.state = self.value_text
        return True

    def value_tag(self, marker: str, start: int, final: bool) -> bool:
        """``<|close|>argument<|sep|>`` ends the value when the next argument, the call's
        end (or the input's end) follows it, so a value may hold the literal tag (vLLM's
        parser documents that it cannot); a next argument or the call's end met inside
        the value ends it, noted."""
        assert self.value is not None
        after = start + len(marker)
        if marker == _ARG_CLOSE:
            decided = self.follows(after, self.AFTER_ARG, final)
            if decided is None:
                return False
            if not decided:
                self.content(after)
                return True
            self.take(after)
            return self.end_value(None, self.call_body)
        return self.end_value(
            f"the value of {self.value.key!r} had no {_ARG_CLOSE}", self.call_body
        )

    def json_block(self, final: bool) -> bool:
        end = self.pass_json(final)
        if isinstance(end, bool):
            return end
        self.drop(end)
        self.state = self.call_body
        return True
