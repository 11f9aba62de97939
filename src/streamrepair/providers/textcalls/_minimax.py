"""MiniMax: M2 / M2.1's ``<minimax:tool_call>`` block of ``<invoke name="N">`` elements with
``<parameter name="K">V</parameter>`` (:class:`MinimaxM2Region`), and M3's, where every
tag is prefixed by the ``]<]minimax[>[`` token and a parameter is named by its tag
(:class:`MinimaxM3Region`). Values are raw text typed by the tool's schema: the templates
write strings raw and other values with ``tojson`` (M2) or as nested tags (M3)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ._formats import TextCallFormat
from ._invoke import InvokeRegion, attributes
from ._rawtext import TextValue, ValueRegion
from ._region import valid_name
from ._scan import MarkerSet
from ._values import child_schema, dumps, schema_types

__all__: list[str] = []


class MinimaxM2Region(InvokeRegion):
    """``<minimax:tool_call>`` then ``<invoke name="N">`` elements of ``<parameter
    name="K">V</parameter>``, then ``</minimax:tool_call>`` (MiniMax M2, M2.1). The tags
    are plain XML a value may hold: a ``</parameter>`` ends a value only when the next
    parameter or the invoke's end follows it. Without a schema a value is a string (as
    vLLM's ``minimax_m2`` parser reads it)."""

    fmt = TextCallFormat.MINIMAX_M2
    BLOCK_CLOSE = "</minimax:tool_call>"
    INVOKE_OPEN = "<invoke"
    INVOKE_CLOSE = "</invoke>"
    PARAM_OPEN = "<parameter"
    PARAM_CLOSE = "</parameter>"
    ANY_TAG_ENDS_VALUE = False


#: The MiniMax namespace token, before every tag of M3's tool-call markup.
_NS: Final = "]<]minimax[>["
_ITEM: Final = "item"


@functools.lru_cache(maxsize=256)
def _leaf_end(name: str) -> MarkerSet:
    """What ends the text of element ``name``: the token (before its closing tag), or its
    closing tag written without the token."""
    return MarkerSet([_NS, f"</{name}>"])


@dataclass(slots=True)
class _Node:
    """An element of an M3 parameter value being read: its tag, what it holds (``""``
    until known, then ``"leaf"``, ``"object"`` or ``"array"``), how many members or
    items it has had, and its schema."""

    name: str
    schema: Mapping[str, Any] | None
    kind: str = ""
    count: int = 0


class MinimaxM3Region(ValueRegion):
    """``]<]minimax[>[<tool_call>`` then ``]<]minimax[>[<invoke name="N">`` elements whose
    parameters are named by their tags, ``]<]minimax[>[<K>V]<]minimax[>[</K>``, then
    ``]<]minimax[>[</tool_call>`` (MiniMax M3; every tag after the token). A value is text,
    or, for an object or array, more elements (``<k>`` members, ``<item>`` items, as the
    template's ``to_xml`` writes them): the tool's schema says which container an
    element is, else ``<item>`` children make an array. Text is typed by the schema of its
    element; an element with nothing in it is ``""`` (or the ``{}``, ``[]`` or ``null``
    its schema wants). A closing tag written without the token (``</K>`` then the
    token) is taken as the closing tag, noted."""

    fmt = TextCallFormat.MINIMAX_M3
    NS = MarkerSet([_NS])
    TAG_END = MarkerSet([">"])

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.name = ""
        self.stack: list[_Node] = []
        self.VALUE_END = self.NS

    def begin(self, final: bool) -> bool:
        self.state = self.next_tag
        return True

    def next_tag(self, final: bool) -> bool:
        """Whitespace, then the token before the next tag."""
        inside = self.call is not None
        found = self.expect(self.NS, final, frame=not inside, drop_ws=inside)
        if isinstance(found, bool):
            return found
        self.state = self.tag
        return True

    def tag(self, final: bool) -> bool:
        found = self.read_until(self.TAG_END, final)
        if isinstance(found, bool):
            return found
        head = found[0]
        if not head.startswith("<"):
            return self.fail()
        closing = head.startswith("</")
        name = head[2:] if closing else head[1:]
        if self.call is None:
            return self.block_tag(closing, name)
        if not self.stack:
            return self.invoke_tag(closing, name)
        return self.element_tag(closing, name.strip())

    def block_tag(self, closing: bool, head: str) -> bool:
        if closing:
            if head.strip() != "tool_call":
                return self.fail()
            self.mark()
            return self.done()
        name = attributes(head).get("name", "").strip()
        if not head.startswith("invoke") or not valid_name(name):
            return self.fail()
        self.name = name
        self.open(name, end_marker=f"{_NS}</invoke>")
        self.args("{")
        self.state = self.next_tag
        return True

    def invoke_tag(self, closing: bool, head: str) -> bool:
        assert self.call is not None
        key = head.strip()
        if closing:
            if key != "invoke":
                return self.fail()
            self.mark()
            self.args("}")
            self.close()
            self.state = self.next_tag
            return True
        if not valid_name(key):
            return self.fail()
        self.call.key(key)
        self.mark()
        schema = self.stage.schema(self.name)
        self.stack.append(_Node(key, child_schema(schema, schema, key)))
        self.state = self.element_start
        return True

    def element_tag(self, closing: bool, name: str) -> bool:
        """A tag inside the element on top of the stack, which holds no text."""
        node = self.stack[-1]
        if closing:
            if name != node.name:
                return self.fail()
            self.mark()
            self.close_element(node)
            return True
        if not valid_name(name):
            return self.fail()
        if not node.kind:
            types = self.types(node)
            array = "array" in types and "object" not in types if types else name == _ITEM
            node.kind = "array" if array else "object"
            self.args("[" if array else "{")
        if node.count:
            self.args(", ")
        node.count += 1
        if node.kind == "object":
            self.args(dumps(name) + ": ")
        root = self.stage.schema(self.name)
        child = child_schema(node.schema, root, None if node.kind == "array" else name)
        self.mark()
        self.stack.append(_Node(name, child))
        self.state = self.element_start
        return True

    def close_element(self, node: _Node) -> None:
        """``node``'s closing tag came (it holds no text)."""
        if node.kind == "object":
            self.args("}")
        elif node.kind == "array":
            self.args("]")
        else:  # nothing in it
            types = self.types(node) or frozenset({"string"})
            empty = next(
                (e for t, e in (("string", '""'), ("object", "{}"), ("array", "[]")) if t in types),
                "null" if "null" in types else '""',
            )
            assert self.call is not None
            if empty != '""':
                self.call.repair(
                    self.call.size, f"element <{node.name}>: nothing in it, read as {empty}"
                )
            self.args(empty)
        self.stack.pop()
        self.state = self.next_tag

    def types(self, node: _Node) -> frozenset[str] | None:
        return schema_types(node.schema, self.stage.schema(self.name))

    def element_start(self, final: bool) -> bool:
        """After an element's opening tag: another tag (a member, an item, or its own
        closing tag) or its text."""
        buf, pos = self.buf, self.pos
        if pos >= len(buf):
            return self.wait(final)
        found = self.NS.at(buf, pos)
        if found == "":
            return self.wait(final)
        if found:
            self.state = self.next_tag
            return True
        node = self.stack[-1]
        node.kind = "leaf"
        assert self.call is not None
        self.value = TextValue(self.call, node.name, self.types(node))
        self.VALUE_END = _leaf_end(node.name)
        self.state = self.value_text
        return True

    def value_tag(self, marker: str, start: int, final: bool) -> bool:
        """The token ends the text: its tag is the element's closing tag, or the text had
        none; a closing tag without the token ends it when the token follows."""
        node = self.stack[-1]
        close = f"</{node.name}>"
        if marker == _NS:
            after = start + len(marker)
            if len(self.buf) - after < len(close) and close.startswith(self.buf[after:]):
                if not final:
                    return False  # more text decides
                self.content(len(self.buf))  # cut inside the closing tag: the call stays open
                return True
            if self.buf.startswith(close, after):
                self.take(after + len(close))
                return self.end_leaf(None)
            return self.end_leaf(f"the value of {node.name!r} had no closing tag")
        after = start + len(marker)
        decided = self.follows(after, self.NS, final)
        if decided is None:
            return False
        if not decided:
            self.content(after)
            return True
        self.take(after)
        return self.end_leaf(f"the closing tag of {node.name!r} came without {_NS}")

    def end_leaf(self, note: str | None) -> bool:
        self.stack.pop()
        self.VALUE_END = self.NS
        return self.end_value(note, self.next_tag)
