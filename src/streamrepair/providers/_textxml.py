"""The text tool-call formats whose values are raw text: Qwen3-Coder
``<function=f><parameter=k>v</parameter></function>``, GLM ``<arg_key>``/``<arg_value>``
pairs, and DeepSeek V3.2's DSML. Values become JSON through :class:`TextValue`: strings
are passed on as they arrive, other types (by the tool's schema) once whole.

The three share :class:`ValueRegion`, the reading of one value up to a closing tag; each
format says which tags may end a value and when one that does is structural."""

from __future__ import annotations

import re
from typing import Any, Final

from ._textbase import MAX_NAME_CHARS, NameHeader, Region, State, TextValue, valid_name
from ._textscan import JsonExtent, MarkerSet
from ._textvalues import param_types

__all__: list[str] = []

_ATTR = re.compile(r'([\w\-]+)\s*=\s*"([^"]*)"')


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


class FunctionRegion(ValueRegion):
    """``<function=NAME>`` then ``<parameter=K>\\nV\\n</parameter>``... ``</function>``
    (Qwen3-Coder), or a JSON body (Llama 3.1's ``<function=NAME>{...}</function>``).

    A ``</parameter>`` is structural only when ``<parameter=``, ``</function>`` or
    ``</tool_call>`` follows it, so a value may hold the literal tag; a value whose
    ``</parameter>`` is missing ends at a structural ``</function>`` or at a new
    ``\\n<parameter=NAME>`` of a parameter not seen yet (vllm-project/vllm#37829)."""

    fmt = "qwen3_coder"
    NAME_END = MarkerSet([">"])
    BODY = MarkerSet(["<parameter=", "</function>"])
    VALUE_END = MarkerSet(["</parameter>", "<parameter=", "</function>", "</tool_call>"])
    AFTER_PARAM = MarkerSet(["<parameter=", "</function>", "</tool_call>"])
    TOOL_END = MarkerSet(["</tool_call>"])
    WRAPPED_FOLLOW = MarkerSet(["</tool_call>"])
    BARE_FOLLOW = MarkerSet(["<function=", "<tool_call>"])
    NEXT_CALL = MarkerSet(["<tool_call>"])
    JSON_END = MarkerSet(["</function>"])

    def __init__(self, *args: Any, wrapped: bool = False) -> None:
        super().__init__(*args)
        self.wrapped = wrapped
        self.name = ""
        self.seen: set[str] = set()
        self.extent = JsonExtent(self.JSON_END, whole=False)

    def end_marker(self) -> str | None:
        return "</tool_call>" if self.wrapped else "</function>"

    def begin(self, final: bool) -> bool:
        found = self.read_until(self.NAME_END, final, check=NameHeader)
        if isinstance(found, bool):
            return found
        self.name = found[0].strip()
        if not valid_name(self.name):
            return self.fail()
        self.state = self.body_start
        return True

    def body_start(self, final: bool) -> bool:
        if not self.skip_ws():
            return self.wait(final)
        buf, pos = self.buf, self.pos
        if buf[pos] == "{":
            if not self.committed and self.stage.allows("llama3_json") and not self.wrapped:
                self.fmt = "llama3_json"
            self.open(self.name, end_marker=self.end_marker())
            self.state = self.json_body
            return True
        found = self.BODY.at(buf, pos)
        if found == "":
            return self.wait(final)
        if found is None:
            return self.fail()
        self.open(self.name, end_marker=self.end_marker())
        self.drop(found)
        if found == "</function>":
            self.args("{}")
            self.state = self.after_function
        else:
            self.args("{")
            self.state = self.param_name
        return True

    def json_body(self, final: bool) -> bool:
        end = self.pass_json(final)
        if isinstance(end, bool):
            return end
        self.drop(end)
        self.state = self.after_function
        return True

    def param_name(self, final: bool) -> bool:
        found = self.read_until(self.NAME_END, final, check=NameHeader)
        if isinstance(found, bool):
            return found
        assert self.call is not None
        key = found[0].strip()
        if not valid_name(key):
            return self.fail()
        self.seen.add(key)
        self.call.key(key)
        self.mark()
        types = param_types(self.stage.schema(self.name), key)
        self.value = TextValue(self.call, key, types, trim=True)
        self.state = self.value_lead
        return True

    def value_lead(self, final: bool) -> bool:
        if self.buf[self.pos] == "\n":
            self.drop("\n")
        self.state = self.value_text
        return True

    def value_tag(self, marker: str, start: int, final: bool) -> bool:
        after = start + len(marker)
        value = self.value
        assert value is not None
        if marker == "<parameter=":
            if value.ends_with_newline():
                buf = self.buf
                close = buf.find(">", after, after + MAX_NAME_CHARS + 1)
                if close < 0 and len(buf) - after <= MAX_NAME_CHARS and not final:
                    return False
                name = buf[after:close].strip() if close >= 0 else ""
                props = self._declared()
                if valid_name(name) and name not in self.seen and (props is None or name in props):
                    return self.end_value(self._unclosed(), self.after_param)
            self.content(after)
            return True
        if marker == "</parameter>":
            follow = self.AFTER_PARAM
        elif marker == "</function>":
            follow = self.WRAPPED_FOLLOW if self.wrapped else self.BARE_FOLLOW
        elif self.wrapped:  # </tool_call>
            follow = self.NEXT_CALL
        else:
            self.content(after)
            return True
        decided = self.follows(after, follow, final)
        if decided is None:
            return False
        if not decided:
            self.content(after)
            return True
        if marker == "</parameter>":
            self.take(after)
            return self.end_value(None, self.after_param)
        return self.end_value(self._unclosed(), self.after_param)

    def _unclosed(self) -> str:
        assert self.value is not None
        return f"the value of {self.value.key!r} had no </parameter>"

    def _declared(self) -> set[str] | None:
        schema = self.stage.schema(self.name)
        props = schema.get("properties") if schema is not None else None
        return set(props) if isinstance(props, dict) else None

    def after_param(self, final: bool) -> bool:
        found = self.expect(self.AFTER_PARAM, final, drop_ws=True)
        if isinstance(found, bool):
            return found
        if found == "<parameter=":
            self.state = self.param_name
            return True
        self.mark()
        self.args("}")
        if found == "</function>":
            self.state = self.after_function
            return True
        assert self.call is not None
        self.call.note("the call had no </function>")
        self.close()
        return self.done()

    def after_function(self, final: bool) -> bool:
        if not self.wrapped:
            self.close()
            return self.done()
        found = self.expect(self.TOOL_END, final)
        if isinstance(found, bool):
            return found
        self.mark()
        self.close()
        return self.done()


class GlmRegion(ValueRegion):
    """``<tool_call>NAME`` then ``<arg_key>K</arg_key><arg_value>V</arg_value>``...
    ``</tool_call>`` (GLM-4.5/4.6, and 4.7's spacing). An ``</arg_value>`` is structural
    only when ``<arg_key>`` or ``</tool_call>`` follows it."""

    fmt = "glm"
    NAME_END = MarkerSet(["\n", "<arg_key>", "</tool_call>"])
    MEMBERS = MarkerSet(["<arg_key>", "</tool_call>"])
    KEY_END = MarkerSet(["</arg_key>"])
    VALUE_OPEN = MarkerSet(["<arg_value>"])
    VALUE_END = MarkerSet(["</arg_value>", "<arg_key>", "</tool_call>"])
    NEXT_CALL = MarkerSet(["<tool_call>"])

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
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


_DSML: Final = "｜DSML｜"


class DsmlRegion(ValueRegion):
    """``<｜DSML｜function_calls>`` wrapping ``<｜DSML｜invoke name="N">`` blocks of
    ``<｜DSML｜parameter name="K" string="true|false">V</｜DSML｜parameter>``
    (DeepSeek V3.2): ``string="true"`` values are strings, ``"false"`` ones JSON."""

    fmt = "dsml"
    BLOCK = MarkerSet([f"<{_DSML}invoke", f"</{_DSML}function_calls>"])
    HEAD_END = MarkerSet([">"])
    INVOKE = MarkerSet([f"<{_DSML}parameter", f"</{_DSML}invoke>"])
    VALUE_END = MarkerSet([f"</{_DSML}parameter>", f"<{_DSML}parameter", f"</{_DSML}invoke>"])

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
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
