"""Llama: 3.x JSON calls (a reply that is ``{"name": N, "parameters": {...}}``, calls
joined by ``;`` or a line break, or ``<|python_tag|>`` before one) and Llama 4's pythonic
call lists (``[f(a=1), g(b="x")]``, bare or in ``<|python_start|>``), with Llama 3's
built-in calls after ``<|python_tag|>`` (``brave_search.call(query="...")``). JSON
argument text is passed on as the model wrote it; pythonic values are converted from
Python literals."""

from __future__ import annotations

import re

from ._contract import Channel, Stage
from ._formats import PYTHON_TAG, TextCallFormat
from ._region import MAX_NAME_CHARS, PY_NAME, Region, escape
from ._scan import MAX_HEADER_CHARS, WS, MarkerSet, PyExtent
from ._values import convert_python
from ._wrapper import WrappedRegion, Wrapper

__all__: list[str] = []

_PY_KWARG = re.compile(r"([A-Za-z_]\w*)\s*=")
_PY_KWARG_PREFIX = re.compile(r"[A-Za-z_]\w*\s*")


class LlamaRegion(WrappedRegion):
    """A reply that is ``{"name": N, "parameters": {...}}`` (calls joined by ``;`` or a
    line break), or ``<|python_tag|>`` before one. Without a marker the reply is a call
    only once its arguments begin after a name (one of the ``tools`` when given)."""

    fmt = TextCallFormat.LLAMA3_JSON

    def __init__(self, stage: Stage, ch: Channel, opener: str, marker: str = "") -> None:
        super().__init__(stage, ch, opener, marker)
        self.bare = self.marker != PYTHON_TAG
        # In auto a bare reply is read only as the template writes it, "name" first: a
        # JSON reply that does not begin as a call is text at its first other key.
        self.name_first = self.bare and stage.requested is TextCallFormat.AUTO
        self.wrapper: Wrapper | None = None

    def begin(self, final: bool) -> bool:
        if not self.skip_ws():
            return self.wait(final)
        c = self.buf[self.pos]
        if c == "{":
            self.wrapper = Wrapper(self, None, name_first=self.name_first)
            self.state = self.element
            return True
        if not self.bare and PY_NAME.match(c):
            return self.become(PythonicRegion, single=True)
        return self.fail()

    def end_marker(self) -> str | None:
        return "}"

    def element(self, final: bool) -> bool:
        w = self.wrapper
        assert w is not None
        stepped = self.step_wrapper(w, final)  # no end markers: it ends when its object does
        if stepped is not None:
            return stepped
        self.close()
        self.state = self.after
        return True

    def after(self, final: bool) -> bool:
        """After a call: ``;`` (with any whitespace) or a line break before a ``{``
        begins the next call (vLLM reads both: its tests join calls with ``;``, ``; ``
        and a newline); whitespace before anything else is framing, dropped."""
        buf = self.buf
        i = j = self.pos
        n = len(buf)
        while j < n and buf[j] in WS:
            j += 1
        if j == n and not final and j - i <= MAX_HEADER_CHARS:
            return False  # what follows the whitespace decides
        c = buf[j] if j < n else ""
        if c == ";" or (c == "{" and "\n" in buf[i:j]):
            self.take(j + 1 if c == ";" else j)
            self.state = self.begin
            return True
        self.take(j)
        self.mark()
        return self.done()


class PythonicRegion(Region):
    """``[f(a=1), g(b="x")]`` (Llama 4, optionally in ``<|python_start|>...
    <|python_end|>``), or one built-in call after ``<|python_tag|>``
    (``brave_search.call(query="...")``). Each value is a Python literal, converted
    to JSON when it is not JSON as written."""

    fmt = TextCallFormat.PYTHONIC
    OPEN_PAREN = MarkerSet(["("])
    #: What may close the calls after their list (or, without ``BRACKETS``, after the
    #: last call): taken when it is there.
    END = MarkerSet(["<|python_end|>"])
    #: The calls are a list, ``[f(), g()]``; without it, one call a line, ``f()\ng()``,
    #: up to ``END`` (OLMo 3's ``<function_calls>``).
    BRACKETS = True

    def __init__(
        self, stage: Stage, ch: Channel, opener: str, marker: str = "", *, single: bool = False
    ) -> None:
        super().__init__(stage, ch, opener, marker)
        self.single = single
        self.tagged = bool(self.marker) and not single  # END may follow the list
        self.name = ""
        self.key = ""
        self.literal = PyExtent()
        self.parts: list[str] = []

    def begin(self, final: bool) -> bool:
        if self.single:
            self.fmt = TextCallFormat.LLAMA3_JSON
            self.state = self.call_name
            return True
        if not self.BRACKETS:
            self.state = self.call_name
            return True
        if not self.skip_ws():
            return self.wait(final)
        if self.buf[self.pos] != "[":
            return self.fail()
        self.take(self.pos + 1)
        self.state = self.call_name
        return True

    def call_name(self, final: bool) -> bool:
        if not self.skip_ws():
            return self.wait(final)
        buf, pos = self.buf, self.pos
        found = PY_NAME.match(buf, pos)
        if found is None or found.end() - pos > MAX_NAME_CHARS:
            return self.fail()
        if not self.marker and self.stage.tool_may_start(found.group()) is False:
            return self.fail()  # a bare reply calls only the tools given
        n = len(buf)
        k = found.end()
        while k < n and buf[k] in WS:
            k += 1
        if k - found.end() > MAX_HEADER_CHARS:
            return self.fail()
        if k == n:
            return self.wait(final)
        if buf[k] != "(":
            return self.fail()
        self.take(k + 1)
        name = found.group()
        if self.single and name.endswith(".call"):
            name = name[: -len(".call")]
        self.name = name
        self.state = self.confirm
        return True

    def confirm(self, final: bool) -> bool:
        if not self.skip_ws():
            return self.wait(final)
        buf, pos = self.buf, self.pos
        if buf[pos] != ")" and _PY_KWARG.match(buf, pos) is None:
            if self._keyword_may_follow(buf, pos, final):
                return False
            return self.fail()
        if self.bare_known() is False:
            return self.fail()
        self.open(self.name, end_marker=")")
        self.args("{")
        self.state = self.kwarg
        return True

    @staticmethod
    def _keyword_may_follow(buf: str, pos: int, final: bool) -> bool:
        """Whether the rest of ``buf`` may still become ``name=`` (within the bound)."""
        partial = _PY_KWARG_PREFIX.match(buf, pos)
        return (
            not final
            and partial is not None
            and partial.end() == len(buf)
            and len(buf) - pos <= MAX_HEADER_CHARS
        )

    def bare_known(self) -> bool | None:
        """Without a marker, a reply is a call only to a known tool (when tools are given)."""
        return self.stage.known_tool(self.name) if not self.marker else None

    def kwarg(self, final: bool) -> bool:
        if not self.skip_ws():
            return self.wait(final)
        self.mark()
        buf, pos = self.buf, self.pos
        c = buf[pos]
        if c == ")":
            self.take(pos + 1)
            self.mark()
            self.args("}")
            self.close()
            if self.single:
                return self.done()
            self.state = self.after_call
            return True
        if c == ",":
            self.take(pos + 1)
            self.mark()
            return True
        found = _PY_KWARG.match(buf, pos)
        if found is None:
            if self._keyword_may_follow(buf, pos, final):
                return False
            return self.fail()
        self.take(found.end())
        self.key = found.group(1)
        self.literal = PyExtent()
        self.parts = []
        self.limit = self.stage.max_size
        self.state = self.value
        return True

    def value(self, final: bool) -> bool:
        buf, pos = self.buf, self.pos
        end = len(buf) if final else len(buf) - PyExtent.undecided(buf, pos)
        stop = self.literal.scan(buf, pos, end)
        if stop is None:
            if end > pos:
                self.parts.append(self.take(end))
                return True
            return self.wait(final)
        self.parts.append(self.take(stop))
        self.limit = MAX_HEADER_CHARS
        if buf[stop] not in ",)":
            return self.fail()
        text = "".join(self.parts)
        self.parts = []
        if not text.strip():
            return self.fail()
        assert self.call is not None
        self.call.key(self.key)
        offset = self.call.size
        converted, description = convert_python(text, self.key)
        self.args(converted)
        if description is not None:
            self.call.repair(offset, description)
        self.mark()
        self.state = self.kwarg
        return True

    def after_call(self, final: bool) -> bool:
        if not self.frame():
            return self.wait(final)
        if not self.BRACKETS:
            return self.next_line(final)
        c = self.buf[self.pos]
        if c == ",":
            self.take(self.pos + 1)
            self.state = self.call_name
            return True
        if c == "]":
            self.take(self.pos + 1)
            self.mark()
            if self.tagged:
                self.state = self.python_end
                return True
            return self.done()
        return self.fail()

    def next_line(self, final: bool) -> bool:
        """Without ``BRACKETS``: after a call and its whitespace, ``END`` ends the calls,
        a name begins the next one."""
        buf, pos = self.buf, self.pos
        found = self.END.at(buf, pos)
        if found == "":
            return self.wait(final)
        if found:
            self.take(pos + len(found))
            self.mark()
            return self.done()
        if PY_NAME.match(buf, pos) is None:
            return self.fail()
        self.state = self.call_name
        return True

    def python_end(self, final: bool) -> bool:
        if not self.skip_ws():
            return self.wait(final)
        found = self.END.at(self.buf, self.pos)
        if found == "":
            return self.wait(final)
        if found:
            self.take(self.pos + len(found))
        self.mark()
        return self.done()

    def cut(self) -> None:
        if self.parts and self.call is not None:
            self.call.key(self.key)
            self.call.args('"' + escape("".join(self.parts)))
            self.parts = []
