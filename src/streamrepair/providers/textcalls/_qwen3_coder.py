"""Qwen3-Coder, Qwen3.5+: ``<tool_call><function=NAME><parameter=K>\nV\n</parameter>
</function></tool_call>`` (and the same without the ``<tool_call>`` wrapper), and Llama
3.1's ``<function=NAME>{JSON}</function>``. Values are raw text (:class:`TextValue`)."""

from __future__ import annotations

from ._contract import Channel, Stage
from ._formats import TextCallFormat
from ._rawtext import TextValue, ValueRegion
from ._region import MAX_NAME_CHARS, NameHeader, valid_name
from ._scan import MAX_HEADER_CHARS, WS, JsonExtent, MarkerSet
from ._values import param_types

__all__: list[str] = []


class FunctionRegion(ValueRegion):
    """``<function=NAME>`` then ``<parameter=K>\\nV\\n</parameter>``... ``</function>``
    (Qwen3-Coder), or a JSON body (Llama 3.1's ``<function=NAME>{...}</function>``).

    A ``</parameter>`` is structural only when ``<parameter=``, ``</function>`` or
    ``</tool_call>`` follows it, so a value may hold the literal tag; a value whose
    ``</parameter>`` is missing ends at a structural ``</function>`` or at a new
    ``\\n<parameter=NAME>`` of a parameter not seen yet (vllm-project/vllm#37829)."""

    fmt = TextCallFormat.QWEN3_CODER
    #: The wrapper's closing tag (the markers below name it too).
    END_TAG = "</tool_call>"
    #: The template writes ``\nVALUE\n``: one newline each side is framing.
    TRIM = True
    NAME_END = MarkerSet([">"])
    BODY = MarkerSet(["<parameter=", "</function>"])
    VALUE_END = MarkerSet(["</parameter>", "<parameter=", "</function>", "</tool_call>"])
    AFTER_PARAM = MarkerSet(["<parameter=", "</function>", "</tool_call>"])
    TOOL_END = MarkerSet(["</tool_call>"])
    WRAPPED_FOLLOW = MarkerSet(["</tool_call>"])
    BARE_FOLLOW = MarkerSet(["<function=", "<tool_call>"])
    NEXT_CALL = MarkerSet(["<tool_call>"])
    JSON_END = MarkerSet(["</function>"])

    def __init__(
        self, stage: Stage, ch: Channel, opener: str, marker: str = "", *, wrapped: bool = False
    ) -> None:
        super().__init__(stage, ch, opener, marker)
        self.wrapped = wrapped
        self.name = ""
        self.seen: set[str] = set()
        self.extent = JsonExtent(self.JSON_END, whole=False)

    def end_marker(self) -> str | None:
        return self.END_TAG if self.wrapped else "</function>"

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
            if (
                not self.committed
                and self.stage.allows(TextCallFormat.LLAMA3_JSON)
                and not self.wrapped
            ):
                self.fmt = TextCallFormat.LLAMA3_JSON
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
            self.function_closed()
        else:
            self.args("{")
            self.state = self.param_name
        return True

    def json_body(self, final: bool) -> bool:
        end = self.pass_json(final)
        if isinstance(end, bool):
            return end
        self.drop(end)
        self.function_closed()
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
        self.value = TextValue(self.call, key, types, trim=self.TRIM)
        self.state = self.value_lead if self.TRIM else self.value_text
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
        elif self.wrapped:  # END_TAG
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
            self.function_closed()
            return True
        assert self.call is not None
        self.call.note("the call had no </function>")
        self.close()
        return self.done()

    def function_closed(self) -> None:
        """``</function>`` was taken. Wrapped, the call ends at ``</tool_call>``;
        without the wrapper ``</function>`` is its end: it is finished now."""
        if self.wrapped:
            self.state = self.after_function
            return
        self.close()
        self.state = self.stray_close

    def after_function(self, final: bool) -> bool:
        found = self.expect(self.TOOL_END, final)
        if isinstance(found, bool):
            return found
        self.mark()
        self.close()
        return self.done()

    def stray_close(self, final: bool) -> bool:
        """After an unwrapped call: a ``</tool_call>`` (after whitespace) is the closing
        half of the wrapper whose opening the model skipped (llama.cpp's Qwen3-Coder
        parser: "some models skip the opening <tool_call>"), dropped as framing; anything
        else is text again, the whitespace left to the channel."""
        buf = self.buf
        i = j = self.pos
        n = len(buf)
        while j < n and buf[j] in WS:
            j += 1
        if j - i > MAX_HEADER_CHARS:
            return self.done()
        found = self.TOOL_END.at(buf, j) if j < n else ""
        if found == "":
            return self.done() if final else False
        if found is not None:
            self.drop(buf[i : j + len(found)])
        return self.done()
