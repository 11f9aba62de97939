"""Tool calls written as text: the optional stage that finds them in content and reasoning
and turns them into the wire deltas of a structured call.

Theory of operation
-------------------
Open models served without a tool parser (llama.cpp or Ollama in raw mode, vLLM or SGLang
without ``--tool-call-parser``) write their calls into the content in their chat
template's markup (``<tool_call>{...}</tool_call>``, ``<function=f><parameter=k>``,
``<｜tool▁call▁begin｜>``, ``[TOOL_CALLS]``...). :class:`TextCallExtractor` sits between
the :class:`~streamrepair.providers.ChunkNormalizer` and the
:class:`~streamrepair.stream.tracker.ToolCallTracker`: ``feed(delta)`` takes one wire
delta and returns the deltas to pass on. Everything but :class:`WireText` and
:class:`WireReasoning` passes through unchanged; text is scanned, and a call found in it
becomes :class:`WireToolCall` pieces (name, then argument text as it arrives) and a
:class:`WireToolEnd` when its markup is complete, so the tracker, the assembler, previews,
the finish policy and the schema check apply exactly as to a structured call. The markup
is removed from the text passed on; everything else is passed on as it came.

Invariants:

* **Chunking-invariant.** Every decision depends on the text, never on where a delta
  ended: a marker split anywhere is found, and whatever the split, the same text, calls
  and argument text come out.
* **Bounded hold-back.** Text that could still be the start of a marker is held, and
  released as soon as it cannot be one: at most the longest active marker minus one
  character (27 in ``auto``), and released when the provider closes its block. After a
  whole start marker, the markup up to the call's name is held while it can still be a
  call: released at the first character that rules one out (a character no name has,
  one that cannot come next in a JSON body), and at most :data:`MAX_HEADER_CHARS` (a
  JSON wrapper that puts its ``"arguments"`` before its ``"name"`` is held up to
  ``max_size``). A lookahead that decides whether a closing tag
  is structural holds at most :data:`MAX_HEADER_CHARS`. Markup that turns out not to be
  a call is released as text, never dropped.
* **Flat per-delta cost.** Each character is looked at once by one state, except a held
  marker prefix, which is looked at again with the next delta; a delta with no character
  that can begin a marker is passed on as the same object.
* **Never ready when cut off.** Every extracted call expects its end (``expects_end``);
  a call whose markup did not finish (its closing tag never came, or the stream ended
  inside it) is judged ``cut_off`` by the tracker's finish policy. A call cut off before
  its name is text: no call can be announced without a name.

Formats (:class:`TextCallFormat`, the details in ``docs/text-tool-calls.md``): Hermes /
Qwen2.5 / Qwen3 ``<tool_call>`` JSON, Qwen3-Coder XML, GLM-4.5+ ``<arg_key>`` pairs,
DeepSeek V3/R1/V3.1 tokens, DeepSeek V3.2 and V4 DSML, Kimi K2 sections, Kimi K3 XTML,
Mistral ``[TOOL_CALLS]``, Llama 3.x JSON and ``<|python_tag|>``, Llama 4 pythonic lists,
gpt-oss Harmony, MiniMax M2 and M3 ``<invoke>``, Seed-OSS ``<seed:tool_call>``, Gemma 4
and FunctionGemma, OLMo 3, LFM2, Command, Hunyuan-A13B; Granite 3.x, Phi-4-mini and xLAM
when named. ``auto`` looks for every marker-led format not marked ``named_only`` and keeps
the format of the first call it confirms; a reply that is bare JSON or a bare pythonic
list (no marker) is read in ``auto`` only when ``tools`` are given, as a call to one of
them.

Calls are read from reasoning too, except for the formats models draft while thinking
(``<tool_call>`` and its kin, Seed-OSS, bare JSON and pythonic: QwenLM/Qwen3#1459): those
are not read inside reasoning or a think block of the content (``<think>``, Seed-OSS's
``<seed:think>``).

Here is the scanning of the text between calls (a channel per kind of text), what is
held, and the deltas passed on. What a start marker opens is read by a region of its
format (``_readers.READERS`` picks it), which calls back only through the protocols of
``_contract.py``: this module is its ``Stage``, a ``_Channel`` its ``Channel``, a
``_CallOut`` its ``Call``.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from typing import Any, Final

from ...events import StopReason, normalize_stop_reason
from ...results import Repair, RepairKind
from ...schema.tools import tool_schemas
from ...syntax.assembler import DEFAULT_MAX_SIZE
from ..wire import (
    WireDelta,
    WireEnd,
    WireError,
    WireItem,
    WireReasoning,
    WireStop,
    WireText,
    WireToolCall,
    WireToolEnd,
)
from ._contract import Markup
from ._formats import TextCallFormat
from ._readers import (
    AUTO,
    BARE,
    BARE_BY_CHAR,
    DRAFTED,
    START_MARKERS,
    THINK_MARKERS,
    THINK_OPENS,
    THINK_PAIRS,
    bare_region,
    region_for,
)
from ._scan import MAX_HEADER_CHARS, WS, MarkerSet
from ._values import dumps

__all__ = ["TextCallExtractor"]


_ID_PREFIX: Final = "call"


class _Channel:
    """The content or the reasoning text of the stream, as one scanner: the undecided
    tail (``buf`` from ``pos``), the region of markup being read, held whitespace."""

    __slots__ = (
        "after_call",
        "block",
        "buf",
        "fresh",
        "kind",
        "marker_set",
        "pos",
        "region",
        "stage",
        "think",
        "think_close",
        "think_first",
        "ws",
        "ws_pending",
    )

    def __init__(self, stage: TextCallExtractor, kind: type[WireText] | type[WireReasoning]):
        self.stage = stage
        self.kind = kind
        self.block: int | None = None
        self.buf = ""
        self.pos = 0
        self.region: Markup | None = None
        self.ws = ""  # whitespace held to see whether markup follows it
        self.ws_pending = True  # at the start and after a call, whitespace is held
        self.fresh = True  # nothing but whitespace seen yet (bare formats start here)
        self.think_first = False  # a think block began while fresh: the reply follows it
        self.after_call = False
        self.think = kind is WireReasoning
        self.think_close = ""  # what ends the think block the content is in
        self.marker_set: MarkerSet | None = None  # what the text is scanned for now

    @property
    def reasoning(self) -> bool:
        return self.kind is WireReasoning

    def emit(self, text: str) -> None:
        """Pass ``text`` on as this channel's text."""
        if text:
            self.stage._text(self, text)

    def emit_as(self, reasoning: bool, text: str) -> None:
        """Pass ``text`` on as reasoning or content, in this channel's block (Harmony's
        analysis channel is reasoning)."""
        if text:
            self.stage._text_as(WireReasoning if reasoning else WireText, self.block, text)

    def open_call(
        self,
        fmt: TextCallFormat,
        name: str,
        *,
        call_id: str | None = None,
        end_marker: str | None = None,
    ) -> _CallOut:
        """Announce a call found in this channel's text."""
        return self.stage.open_call(self, fmt, name, call_id=call_id, end_marker=end_marker)

    def release(self, region: Markup) -> None:
        """``region`` is not a call (or not one any more): its first held piece (the
        opener) is text, the rest is scanned again as text."""
        held = region.held
        self.region = None
        self.fresh = False
        rest = "".join(held[1:])
        self.buf = rest + self.buf[self.pos :]
        self.pos = 0
        self.emit(held[0] if held else "")

    def end_region(self) -> None:
        """The region ended as markup: what follows is text again."""
        self.region = None
        self.ws_pending = True
        self.after_call = True

    def run(self, final: bool) -> None:
        stage = self.stage
        while True:
            if self.pos >= len(self.buf):
                region = self.region
                if not final or region is None:
                    break
                region.finish()
                continue
            region = self.region
            progressed = region.step(final) if region is not None else stage._scan_text(self, final)
            if not progressed:
                break
        if self.pos:
            self.buf = self.buf[self.pos :]
            self.pos = 0

    def settle(self) -> None:
        """Text that waits only to see whether a marker follows is decided now (the
        stream moved to the other channel, or a new block began)."""
        if self.region is not None:
            return
        if self.buf:
            text = self.buf[self.pos :]
            self.buf, self.pos = "", 0
            if self.ws:
                self.emit(self.ws)
                self.ws = ""
            self.emit(text)
            self.ws_pending = False
            self.fresh = False
        elif self.ws and not self.after_call:
            self.emit(self.ws)
            self.ws = ""
            self.ws_pending = False
            self.fresh = False

    def close(self) -> None:
        """End of input: decide everything held."""
        self.run(final=True)
        if self.ws and not self.after_call:
            self.emit(self.ws)
        self.ws = ""
        self.buf, self.pos = "", 0
        self.ws_pending = True
        self.fresh = True
        self.think_first = False
        self.after_call = False
        self.think = self.reasoning
        self.marker_set = None


class _CallOut:
    """One extracted call as it is passed on: its id and name, the argument text sent so
    far (``size``), and the JSON-writing steps of the formats whose values are not JSON.

    Its deltas carry no index: the provider sent none, and an index would let the
    tracker route a structured call's id-less deltas into it."""

    __slots__ = ("call_id", "members", "name", "notes", "repairs", "size", "stage")

    def __init__(self, stage: TextCallExtractor, call_id: str, name: str) -> None:
        self.stage = stage
        self.call_id = call_id
        self.name = name
        self.size = 0
        self.members = 0
        self.repairs: list[Repair] = []
        self.notes: list[str] = []

    def args(self, text: str) -> None:
        """Pass on argument text."""
        if text:
            self.size += len(text)
            self.stage._args(self, text)

    def key(self, key: str) -> None:
        """Begin a member of the argument object: ``"key": ``."""
        sep = ", " if self.members else ""
        self.members += 1
        self.args(f"{sep}{dumps(key)}: ")

    def note(self, text: str) -> None:
        """Record a note for the call (``ToolCallReady.notes``)."""
        if text not in self.notes:
            self.notes.append(text)
            self.stage._touch(self)

    def repair(self, offset: int, description: str) -> None:
        """Record a :attr:`RepairKind.MARKUP_VALUE` repair at ``offset`` of the text."""
        self.repairs.append(
            Repair(kind=RepairKind.MARKUP_VALUE, offset=offset, description=description)
        )
        self.stage._touch(self)

    def end(self) -> None:
        """The call's markup is complete."""
        self.stage._end(self)


class TextCallExtractor:
    """Finds tool calls written as text in content (and reasoning) and passes them on as
    structured wire deltas (see the module docstring).

    ``format`` is ``"auto"`` or a :class:`TextCallFormat` (or a name
    :meth:`TextCallFormat.parse` reads). ``tools`` (an OpenAI, Responses or Anthropic tool
    list) gives the parameter types used to convert values written as raw text (Qwen3-Coder,
    GLM, DSML) and, for bare JSON replies, the names that make one a call. ``max_size``
    bounds a JSON wrapper held before its name (the assembler's bound).

    ``feed(delta)`` returns the deltas to pass on for one delta; ``finish()`` says the
    input ended (the end marker and errors do the same as they pass through). Nothing
    passed in is modified.
    """

    def __init__(
        self,
        format: TextCallFormat | str = TextCallFormat.AUTO,
        *,
        tools: Iterable[Mapping[str, Any]] | None = None,
        max_size: int = DEFAULT_MAX_SIZE,
    ) -> None:
        self.requested = TextCallFormat.parse(format)
        self.schemas: dict[str, Mapping[str, Any]] | None = (
            tool_schemas(tools) if tools is not None else None
        )
        self.max_size = max_size
        self._names = sorted(self.schemas) if self.schemas is not None else None
        self._locked: TextCallFormat | None = (
            None if self.requested is TextCallFormat.AUTO else self.requested
        )
        self._content = _Channel(self, WireText)
        self._reasoning = _Channel(self, WireReasoning)
        self._out: list[WireDelta] = []
        self._parts: list[str] = []  # text waiting to be passed on, of one channel
        self._parts_key: tuple[type[WireText] | type[WireReasoning], int | None] | None = None
        self._call: _CallOut | None = None  # the call whose argument text is waiting
        self._call_parts: list[str] = []
        self._calls = 0
        self._ids: set[str] = set()
        self._stop = StopReason.MISSING  # the provider's stop reason, once it came
        self._markers: dict[tuple[TextCallFormat | None, str, bool], MarkerSet] = {}
        self._triggers = self._first_chars()

    # -- public --------------------------------------------------------------------------

    @property
    def format(self) -> TextCallFormat | None:
        """The format calls are read in: the one named, or (``auto``) the format of the
        first call found; None until then."""
        return self._locked

    @property
    def calls_found(self) -> int:
        """How many calls have been extracted so far."""
        return self._calls

    def feed(self, delta: WireDelta) -> list[WireDelta]:
        """Take one wire delta; return the deltas to pass on, in order."""
        if type(delta) is WireText:
            return self._feed_text(delta, self._content, self._reasoning)
        if type(delta) is WireReasoning:
            return self._feed_text(delta, self._reasoning, self._content)
        if type(delta) is WireStop:
            self._stop = normalize_stop_reason(delta.reason)
            return [delta]
        if type(delta) is WireEnd or type(delta) is WireError:
            if type(delta) is WireError:
                self._stop = StopReason.ERROR
            out = self.finish()
            out.append(delta)
            return out
        if type(delta) is WireToolEnd and delta.id is None:
            return self._block_end(delta.index, delta)
        if type(delta) is WireItem:
            return self._block_end(delta.block, delta)
        return [delta]

    def _block_end(self, block: int | None, delta: WireDelta) -> list[WireDelta]:
        """The provider closed block ``block`` (an Anthropic or Bedrock
        ``content_block_stop``, a finished Responses item): text of that block held only
        to see whether a marker follows is decided now, as a new block would decide it
        (a marker never spans blocks), so that a consumer can close the block with its
        text. Markup being read (an open region) goes on into the next block."""
        if block is None:
            return [delta]
        settled = False
        for channel in (self._content, self._reasoning):
            if channel.block == block and (channel.buf or channel.ws):
                channel.settle()
                settled = True
        if not settled:
            return [delta]
        out = self._drain()
        out.append(delta)
        return out

    def _feed_text(
        self, delta: WireText | WireReasoning, channel: _Channel, other: _Channel
    ) -> list[WireDelta]:
        text = delta.text
        if not text:
            return [delta]
        if other.buf or other.ws:
            other.settle()
        if channel.block != delta.block:
            channel.settle()
            channel.block = delta.block
        if channel.region is None and not channel.buf and not channel.ws_pending:
            for char in self._triggers:
                if char in text:
                    break
            else:
                return [delta]
            # A '<' or '[' is not yet a marker: one search decides, and plain text
            # still goes on as the same object.
            markers = channel.marker_set
            if markers is None:
                markers = self.markers(channel)
            start, marker = markers.find(text, 0)
            if marker is None and start == len(text):
                return [delta]
        channel.buf = channel.buf + text if channel.buf else text
        channel.run(final=False)
        return self._drain()

    def finish(self) -> list[WireDelta]:
        """The text ended: release what is held, leave open calls unclosed (cut off),
        except a call whose markup ends with a stop token the server removes, when the
        provider stopped cleanly (:attr:`clean_stop`). The extractor can be fed again
        afterwards (it starts over)."""
        self._content.close()
        self._reasoning.close()
        self._stop = StopReason.MISSING
        return self._drain()

    # -- what the regions ask (the Stage of _contract.py) and the channels call ----------

    def allows(self, fmt: TextCallFormat) -> bool:
        """Whether calls in ``fmt`` may be read now (in ``auto``, the formats it looks for,
        until the first call is confirmed)."""
        locked = self._locked
        return fmt in AUTO if locked is None else fmt is locked

    def lock(self, fmt: TextCallFormat) -> None:
        """A call in ``fmt`` was confirmed: in ``auto``, keep to that format."""
        if self._locked is None:
            self._locked = fmt
            self._triggers = self._first_chars()
            self._content.marker_set = self._reasoning.marker_set = None

    @property
    def clean_stop(self) -> bool:
        """Whether the provider said the response stopped cleanly (``stop`` or
        ``tool_calls``; not ``length``, an error or no reason at all)."""
        return self._stop in (StopReason.STOP, StopReason.TOOL_CALLS)

    def known_tool(self, name: str) -> bool | None:
        """Whether ``name`` is among the tools given; None when none were."""
        return None if self.schemas is None else name in self.schemas

    def tool_may_start(self, prefix: str) -> bool | None:
        """Whether some tool's name begins with ``prefix``; None when no tools were given."""
        names = self._names
        if names is None:
            return None
        at = bisect.bisect_left(names, prefix)
        return at < len(names) and names[at].startswith(prefix)

    def schema(self, name: str) -> Mapping[str, Any] | None:
        """The argument schema of tool ``name``, when tools were given."""
        return None if self.schemas is None else self.schemas.get(name)

    def open_call(
        self,
        channel: _Channel,
        fmt: TextCallFormat,
        name: str,
        *,
        call_id: str | None = None,
        end_marker: str | None = None,
    ) -> _CallOut:
        """Announce a call: its id (``call_id`` when the markup has one and it is new in
        this stream, else ``call00001``... by its position among the extracted calls)
        and name."""
        self._calls += 1
        if call_id is None or call_id in self._ids:
            call_id = f"{_ID_PREFIX}{self._calls:05d}"
            while call_id in self._ids:
                call_id += "x"
        self._ids.add(call_id)
        call = _CallOut(self, call_id, name)
        where = "reasoning" if channel.reasoning else "content"
        note = f"written as text in the {where} ({fmt.label} markup) and extracted"
        self._flush()
        self._out.append(
            WireToolCall(
                id=call_id,
                index=None,
                name=name,
                expects_end=True,
                notes=(note,),
                end_marker=end_marker,
            )
        )
        return call

    def markers(self, channel: _Channel) -> MarkerSet:
        """The markers the text of ``channel`` is scanned for now."""
        locked = self._locked
        drafted_ok = not channel.think
        key = (locked, channel.think_close if channel.think else "", channel.reasoning)
        found = self._markers.get(key)
        if found is None:
            formats = [locked] if locked is not None else list(AUTO)
            markers: set[str] = set()
            for fmt in formats:
                if drafted_ok or fmt not in DRAFTED:
                    markers.update(START_MARKERS[fmt])
            if not channel.reasoning:
                if channel.think:
                    markers.add(channel.think_close)
                else:
                    markers.update(THINK_OPENS[f] for f in formats if f in DRAFTED)
            found = self._markers[key] = MarkerSet(markers)
        channel.marker_set = found
        return found

    # -- text outside calls --------------------------------------------------------------

    def _scan_text(self, ch: _Channel, final: bool) -> bool:
        buf = ch.buf
        pos = ch.pos
        n = len(buf)
        if ch.ws_pending:
            i = pos
            while i < n and buf[i] in WS:
                i += 1
            if i > pos:
                ch.ws += buf[pos:i]
                ch.pos = pos = i
            if i == n:
                if len(ch.ws) > MAX_HEADER_CHARS:
                    ch.emit(ch.ws)
                    ch.ws = ""
                    ch.ws_pending = False
                    ch.fresh = False
                return True
            bare = self._bare_format(buf[i]) if ch.fresh and not ch.reasoning else None
            if bare is not None:
                # a start marker that begins the same way wins ([TOOL_CALLS] is no list)
                at = (ch.marker_set or self.markers(ch)).at(buf, i)
                if at == "" and not final:
                    return False
                if at:
                    bare = None
            ch.ws_pending = False
            if bare is not None:
                opener, ch.ws = ch.ws, ""
                ch.fresh = False
                ch.region = bare_region(self, ch, bare, opener)
                return True
        markers = ch.marker_set
        if markers is None:
            markers = self.markers(ch)
        start, marker = markers.find(buf, pos)
        if start > pos:
            if ch.ws:
                ch.emit(ch.ws)
                ch.ws = ""
            ch.emit(buf[pos:start])
            ch.fresh = False
            ch.after_call = False
        if marker is None:
            ch.pos = start
            if start == n:
                return True
            if final:
                if ch.ws:
                    ch.emit(ch.ws)
                    ch.ws = ""
                ch.emit(buf[start:])
                ch.pos = n
                return True
            return False
        ch.pos = start + len(marker)
        opener, ch.ws = ch.ws + marker, ""
        fresh, ch.fresh = ch.fresh, False
        if marker in THINK_MARKERS:
            ch.emit(opener)
            ch.think = marker in THINK_PAIRS
            if ch.think:
                ch.think_close = THINK_PAIRS[marker]
                ch.think_first = fresh
            elif ch.think_first:
                # A reply that begins with a think block begins again after it: a bare
                # call may follow (an xLAM or Llama 3 reply after its reasoning).
                ch.fresh = True
                ch.think_first = False
            ch.marker_set = None
            ch.ws_pending = not ch.think
            ch.after_call = False
            return True
        ch.region = region_for(self, ch, marker, opener)
        return True

    def _bare_format(self, first: str) -> TextCallFormat | None:
        """The format of a reply that begins with ``first`` and may be bare markup: the
        format named, when its bare reply begins so; in ``auto``, only when ``tools``
        were given (the region then reads a call only to one of them, in the shape the
        template writes: ``_llama.py``)."""
        locked = self._locked
        if locked is not None:
            return locked if BARE.get(locked) == first else None
        if self.schemas is None:
            return None
        return BARE_BY_CHAR.get(first)

    def _first_chars(self) -> tuple[str, ...]:
        chars: set[str] = set()
        for fmt, starts in START_MARKERS.items():
            if self._locked is not None and fmt is not self._locked:
                continue
            if self._locked is None and fmt not in AUTO:
                continue
            chars.update(s[0] for s in starts)
        if self._locked is None or self._locked in DRAFTED:
            chars.add("<")
        return tuple(sorted(chars))

    # -- output --------------------------------------------------------------------------

    def _text(self, ch: _Channel, text: str) -> None:
        self._text_as(ch.kind, ch.block, text)

    def _text_as(
        self, kind: type[WireText] | type[WireReasoning], block: int | None, text: str
    ) -> None:
        key = (kind, block)
        if self._parts_key != key:
            self._flush()
            self._parts_key = key
        self._parts.append(text)

    def _args(self, call: _CallOut, text: str) -> None:
        if self._call is not call:
            self._flush()
            self._call = call
        self._call_parts.append(text)

    def _touch(self, call: _CallOut) -> None:
        if self._call is not call:
            self._flush()
            self._call = call

    def _end(self, call: _CallOut) -> None:
        if self._call is call:
            self._flush()
        elif call.repairs or call.notes:
            self._touch(call)
            self._flush()
        self._out.append(WireToolEnd(id=call.call_id, index=None))

    def _flush(self) -> None:
        key = self._parts_key
        if key is not None:
            text = "".join(self._parts)
            self._parts.clear()
            self._parts_key = None
            self._out.append(key[0](text=text, block=key[1]))
        call = self._call
        if call is not None:
            text = "".join(self._call_parts)
            self._call_parts.clear()
            self._call = None
            repairs = tuple(call.repairs)
            notes = tuple(call.notes)
            call.repairs.clear()
            if text or repairs or notes:
                self._out.append(
                    WireToolCall(
                        id=call.call_id,
                        index=None,
                        arguments=text or None,
                        repairs=repairs,
                        notes=notes,
                    )
                )

    def _drain(self) -> list[WireDelta]:
        self._flush()
        out = self._out
        self._out = []
        return out
