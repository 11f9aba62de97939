"""DeepSeek's DSML: V3.2's ``<｜DSML｜function_calls>`` (V4's ``<｜DSML｜tool_calls>``)
wrapping ``<｜DSML｜invoke name="N">`` blocks of ``<｜DSML｜parameter name="K"
string="true|false">V</｜DSML｜parameter>``. Values are raw text (:class:`TextValue`):
``string="true"`` ones strings, ``"false"`` ones JSON, without the attribute typed by
the tool's schema."""

from __future__ import annotations

from typing import Final

from ._contract import Channel, Stage
from ._formats import TextCallFormat
from ._invoke import InvokeRegion
from ._rawtext import TextValue
from ._scan import MAX_HEADER_CHARS
from ._values import loads

__all__: list[str] = []

_DSML: Final = "｜DSML｜"


class DsmlRegion(InvokeRegion):
    """``<｜DSML｜function_calls>`` wrapping ``<｜DSML｜invoke name="N">`` blocks of
    ``<｜DSML｜parameter name="K" string="true|false">V</｜DSML｜parameter>``
    (DeepSeek V3.2): ``string="true"`` values are strings, ``"false"`` ones JSON."""

    fmt = TextCallFormat.DSML
    BLOCK_CLOSE = f"</{_DSML}function_calls>"
    INVOKE_OPEN = f"<{_DSML}invoke"
    INVOKE_CLOSE = f"</{_DSML}invoke>"
    PARAM_OPEN = f"<{_DSML}parameter"
    PARAM_CLOSE = f"</{_DSML}parameter>"

    def __init__(self, stage: Stage, ch: Channel, opener: str, marker: str = "") -> None:
        super().__init__(stage, ch, opener, marker)
        self.unwrapped = False  # the invoke's lone "arguments" parameter became its arguments
        self.wrapped: list[str] = []  # the text of an "arguments" parameter held

    def invoke_end(self) -> None:
        if not self.unwrapped:
            self.args("}")
        self.unwrapped = False

    def param(self, key: str, attrs: dict[str, str]) -> bool:
        assert self.call is not None
        flag = attrs.get("string", "").strip().lower()
        if self.params == 1 and key == "arguments" and flag != "true" and self._unlisted(key):
            self.mark()
            self.wrapped = []
            self.limit = self.stage.max_size
            self.state = self.wrapped_value
            return True
        if flag == "true":
            self.call.key(key)
            self.mark()
            self.value = TextValue(self.call, key, frozenset({"string"}))
        elif flag == "false":
            self.call.key(key)
            self.mark()
            self.value = TextValue(self.call, key, None, raw_json=True)
        else:
            return super().param(key, attrs)
        self.state = self.value_text
        return True

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
        if marker != self.PARAM_CLOSE:
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


class DsmlV4Region(DsmlRegion):
    """DeepSeek V4: V3.2's DSML in a ``<｜DSML｜tool_calls>`` block (vLLM's
    ``deepseek_v4`` parser turns the V3.2 block away; in ``auto`` both are read)."""

    fmt = TextCallFormat.DSML_V4
    BLOCK_CLOSE = f"</{_DSML}tool_calls>"
