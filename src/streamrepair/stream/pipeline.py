"""The sans-IO stream core: :class:`ToolCallStream`.

Theory of operation
-------------------
:class:`ToolCallStream` chains the push cores, each doing one job::

    bytes --SSEDecoder / JSONLinesDecoder--> JSON payloads --json.loads--> chunks
    bytes --EventStreamDecoder--> AWS event-stream messages --frame_chunk--> chunks
    chunks (dicts or SDK objects) --ChunkNormalizer--> wire deltas
    [wire deltas --TextCallExtractor--> wire deltas]   (with ``text_tool_calls``)
    wire deltas --ToolCallTracker (+ one ArgumentAssembler per call)--> events

``feed(x)`` takes bytes of a raw HTTP body (``text/event-stream``; newline-delimited
JSON when the first non-blank byte is ``{``; AWS's binary event stream when the body
starts with a NUL byte, as a Bedrock message prelude does), or one chunk (a dict or an SDK
chunk object), and returns the events that input completes; ``finish()`` says the input ended;
``abort()`` says the consumer stopped. Nothing here reads, sleeps or awaits, so the same
core serves :func:`~streamrepair.iter_events` (sync), :func:`~streamrepair.aiter_events`
(asyncio and trio through anyio, in :mod:`.drivers`) and callers who drive it themselves.
The events depend only on the input, never on how it was split.

Once :class:`~streamrepair.Done` has been emitted (end marker, error, ``finish()`` or
``abort()``) the stream is over: later input is ignored (a recording may carry bytes after
``[DONE]``), and drivers stop reading and close their source. Calling ``feed()`` or
``finish()`` after ``finish()`` or ``abort()`` raises :class:`~streamrepair.ClosedError`.

``tools`` turns on the schema check (unknown tool names rejected, ready arguments
schema-repaired); the schema machinery (jsonschema) is imported only then.

``text_tool_calls`` (``"auto"`` or a format name) adds the
:class:`~streamrepair.providers.textcalls.TextCallExtractor`: tool calls a model wrote as
text in its content (a server without a tool parser) become calls like structured ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ClosedError, EventStreamError, SSEError, UnsupportedChunkError
from ..events import Done, StreamEvent, ToolCallReady, ToolCallRejected
from ..providers.normalizer import ChunkNormalizer, Provider, as_chunk
from ..providers.wire import WireDelta, WireEnd, WireError
from ..syntax.assembler import DEFAULT_MAX_DEPTH, DEFAULT_MAX_SIZE
from .calls import ArgumentCheck, CallProgress
from .eventstream import EventStreamDecoder, EventStreamMessage, frame_chunk
from .sse import (
    DEFAULT_MAX_EVENT_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    JSONLinesDecoder,
    SSEDecoder,
)
from .tracker import DEFAULT_MAX_TEXT_CHARS, ToolCallTracker

if TYPE_CHECKING:
    from ..providers.textcalls import TextCallExtractor, TextCallFormat

__all__ = ["ToolCallStream"]

_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


class ToolCallStream:
    """Sans-IO core: raw bytes or chunks in, :class:`~streamrepair.StreamEvent` out.

    ``provider`` (``"openai"``, ``"anthropic"``, ``"responses"``, ``"ollama"``,
    ``"cohere"``, ``"gemini"``, ``"bedrock"`` or a :class:`~streamrepair.Provider`) is
    detected from the first chunk when not given; a named provider that does not match
    the stream fails it (``unsupported_chunk``) instead of reading nothing.
    ``tools`` (an OpenAI, Responses or Anthropic tool list) rejects unknown tool names and
    schema-checks ready arguments (``check`` passes a check of your own instead; see
    :class:`~streamrepair.stream.calls.ArgumentCheck`). ``choice`` is the Chat
    Completions choice (Gemini candidate) followed when ``n > 1``; a stream with other
    choices and none of this one fails at its end (``unsupported_chunk``).
    ``reject_unknown_tools=False`` sends a call to a name not in ``tools`` through with the
    syntax repairs and no schema rules instead of rejecting it (``unknown_tool``).
    ``refuse_ambiguous_escapes=True`` rejects (``ambiguous_escapes``) a call whose strings
    kept a reading of ``\\n``-like escapes that their raw backslashes make a guess
    (``docs/repairs.md``, "Ambiguous escapes"); by default it is ready, with the repair
    recorded.
    ``previews=False`` skips the preview on each :class:`ToolCallDelta`. The ``max_*``
    bounds are those of the layers (see ``sse.py``, ``eventstream.py``, ``tracker.py`` and
    :class:`~streamrepair.ArgumentAssembler`). ``text_tool_calls`` (``"auto"`` or a
    :class:`~streamrepair.TextCallFormat` or its name; default None: off) reads tool calls
    written as text in the content and reasoning (``docs/text-tool-calls.md``).

    Call :meth:`feed` with each piece of input, then :meth:`finish` once (or
    :meth:`abort`). :attr:`done` holds the :class:`~streamrepair.Done` event once the
    stream is over; :attr:`calls` lists each call's id, name and phase at any time, and
    :attr:`chunk_count` how many chunks were read.
    """

    def __init__(
        self,
        *,
        provider: Provider | str | None = None,
        tools: Iterable[Mapping[str, Any]] | None = None,
        check: ArgumentCheck | None = None,
        choice: int = 0,
        previews: bool = True,
        max_size: int = DEFAULT_MAX_SIZE,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
        text_tool_calls: TextCallFormat | str | None = None,
        reject_unknown_tools: bool = True,
        refuse_ambiguous_escapes: bool = False,
    ) -> None:
        self._text_calls: TextCallExtractor | None = None
        if text_tool_calls is not None:
            from ..providers.textcalls import TextCallExtractor

            if tools is not None:
                tools = list(tools)  # read twice: by the stage and by the schema check
            self._text_calls = TextCallExtractor(text_tool_calls, tools=tools, max_size=max_size)
        self._normalizer = ChunkNormalizer(provider, choice=choice)
        self._tracker = ToolCallTracker(
            provider=self._normalizer.provider,
            tools=tools,
            check=check,
            max_size=max_size,
            max_depth=max_depth,
            max_text_chars=max_text_chars,
            previews=previews,
            reject_unknown_tools=reject_unknown_tools,
            refuse_ambiguous_escapes=refuse_ambiguous_escapes,
        )
        self._max_line_bytes = max_line_bytes
        self._max_event_bytes = max_event_bytes
        self._mode: str | None = None  # None until sniffed: "sse", "ndjson", "eventstream"
        self._head = bytearray()  # leading bytes while the mode is unknown
        self._sse: SSEDecoder | None = None
        self._lines: JSONLinesDecoder | None = None
        self._frames: EventStreamDecoder | None = None
        self._chunk_count = 0
        self._closed = False

    # -- state ---------------------------------------------------------------------------

    @property
    def provider(self) -> Provider | None:
        """The provider, once named or detected."""
        return self._normalizer.provider

    @property
    def done(self) -> Done | None:
        """The final :class:`~streamrepair.Done` event, once the stream is over."""
        return self._tracker.done

    @property
    def chunk_count(self) -> int:
        """How many provider chunks the stream has taken so far (decoded from the bytes,
        or given). ``0`` once :attr:`done` is set means the input held no stream at all:
        no SSE event, JSON line or event-stream message with a chunk in it."""
        return self._chunk_count

    @property
    def calls(self) -> tuple[tuple[str, str | None, CallProgress], ...]:
        """``(call_id, name, phase)`` for every call so far, in order."""
        return self._tracker.calls

    @property
    def verdicts(self) -> tuple[ToolCallReady | ToolCallRejected, ...]:
        """Every ready and rejected event so far, in order, including those a consumer
        never saw because it stopped reading (a cancelled ``aiter_events``)."""
        return self._tracker.verdicts

    # -- input ---------------------------------------------------------------------------

    def feed(self, data: bytes | bytearray | memoryview | str | object) -> list[StreamEvent]:
        """Take bytes (or text) of the raw body, or one chunk; return the new events."""
        if isinstance(data, bytes | bytearray | memoryview):
            return self.feed_bytes(data)
        if isinstance(data, str):
            return self.feed_bytes(data.encode("utf-8"))
        return self.feed_chunk(data)

    def feed_bytes(self, data: bytes | bytearray | memoryview) -> list[StreamEvent]:
        """Take the next bytes of a raw SSE or newline-delimited JSON body."""
        self._check_open()
        out: list[StreamEvent] = []
        if self.done is not None or not data:
            return out
        if self._mode is None:
            data = self._sniff(data)
            if self._mode is None:
                return out
        try:
            if self._sse is not None:
                for event in self._sse.feed(data):
                    self._payload(event.data, out)
                    if self.done is not None:
                        break
            elif self._lines is not None:
                for line in self._lines.feed(data):
                    self._payload(line, out)
                    if self.done is not None:
                        break
            elif self._frames is not None:
                for message in self._frames.feed(data):
                    self._frame(message, out)
                    if self.done is not None:
                        break
                if self._frames.error is not None:
                    raise self._frames.error
        except SSEError as exc:
            self._fail(WireError(message=str(exc), code="sse"), out)
        except EventStreamError as exc:
            self._fail(WireError(message=str(exc), code="eventstream"), out)
        return out

    def feed_chunk(self, chunk: object) -> list[StreamEvent]:
        """Take one parsed chunk: a dict, or an ``openai``/``anthropic`` SDK chunk object.
        Nothing in it is modified."""
        self._check_open()
        out: list[StreamEvent] = []
        if self.done is not None:
            return out
        try:
            mapping = as_chunk(chunk)
        except UnsupportedChunkError as exc:
            self._fail(WireError(message=str(exc), code="unsupported_chunk"), out)
            return out
        self._chunk(mapping, out)
        return out

    def feed_text_only(self, chunk: dict[str, Any]) -> bool:
        """Take ``chunk`` when it carries only text or reasoning, the most common chunk
        of a stream (a Chat Completions delta of content or ``reasoning_content``, an
        Anthropic ``text_delta`` or ``thinking_delta``): its
        text is kept for :attr:`Done.messages <streamrepair.Done.messages>` as
        :meth:`feed_chunk` keeps it, and no event is made (for a caller that would read
        none: a relay that passes the chunk through as it came). Returns False, with
        nothing taken, for any other chunk, with ``text_tool_calls`` (the stage reads
        every piece of text), once the stream is over, or when the text would pass
        ``max_text_chars``: give the chunk to :meth:`feed_chunk` then."""
        if self._text_calls is not None or self._closed or type(chunk) is not dict:
            return False
        text = self._normalizer.text_of(chunk)
        if text is None or not self._tracker.take_text(*text):
            return False
        self._chunk_count += 1
        return True

    def feed_arguments_only(self, chunk: dict[str, Any]) -> bool:
        """Take ``chunk`` when it carries only the next piece of the arguments of a call
        that is streaming (a Chat Completions ``tool_calls`` entry with an index and
        argument text, no id or name; an Anthropic ``input_json_delta`` of a ``tool_use``
        block), the other most common chunk: the piece is kept and
        given to the call's assembler as :meth:`feed_chunk` does, and no
        :class:`~streamrepair.ToolCallDelta` is made. Only with ``previews=False`` (a
        delta's changes are its own). Returns False, with nothing taken, for any other
        chunk, with ``text_tool_calls``, or when the piece would do more (a new call, a
        call without a name yet, the stream over): give the chunk to :meth:`feed_chunk`
        then."""
        if self._text_calls is not None or self._closed or type(chunk) is not dict:
            return False
        piece = self._normalizer.arguments_of(chunk)
        if piece is None or not self._tracker.take_arguments(*piece):
            return False
        self._chunk_count += 1
        return True

    def finish(self) -> list[StreamEvent]:
        """The input has ended: flush the decoders, judge every call, emit ``Done``.
        Raises :class:`~streamrepair.ClosedError` if called twice."""
        self._check_open()
        out: list[StreamEvent] = []
        if self.done is None:
            try:
                if self._sse is not None:
                    for event in self._sse.finish():
                        self._payload(event.data, out)
                elif self._lines is not None:
                    for line in self._lines.finish():
                        self._payload(line, out)
                elif self._frames is not None:
                    self._frames.finish()
            except SSEError as exc:
                self._fail(WireError(message=str(exc), code="sse"), out)
            except EventStreamError as exc:
                self._fail(WireError(message=str(exc), code="eventstream"), out)
            self._check_choice(out)
            self._flush_text_calls(out)
            out.extend(self._tracker.finish())
        self._closed = True
        return out

    def fail(
        self,
        message: str,
        *,
        code: str | None = None,
        error_type: str | None = None,
        raw: Any = None,
    ) -> list[StreamEvent]:
        """End the stream with an error from outside the data (a network error, an SDK
        that raised): a :class:`~streamrepair.StreamFailed` with these fields, every call
        rejected, ``Done``. No-op once the stream is over."""
        out: list[StreamEvent] = []
        error = WireError(message=message, code=code, error_type=error_type, raw=raw)
        self._fail(error, out)
        return out

    def abort(self) -> list[StreamEvent]:
        """The consumer stopped reading: calls not yet judged end as ``aborted``; nothing
        becomes ready. Safe to call at any time, any number of times."""
        self._closed = True
        out: list[StreamEvent] = []
        self._flush_text_calls(out)
        out.extend(self._tracker.abort())
        return out

    # -- internals -----------------------------------------------------------------------

    def _fail(self, error: WireError, out: list[StreamEvent]) -> None:
        self._flush_text_calls(out)
        out.extend(self._tracker.fail(error))

    def _flush_text_calls(self, out: list[StreamEvent]) -> None:
        """Text held by the text-call stage is passed on (the stream is ending)."""
        if self._text_calls is not None and self._tracker.done is None:
            feed = self._tracker.feed
            for delta in self._text_calls.finish():
                out.extend(feed(delta))

    def _deliver(self, deltas: list[WireDelta], out: list[StreamEvent]) -> None:
        feed = self._tracker.feed
        stage = self._text_calls
        if stage is None:
            for delta in deltas:
                out.extend(feed(delta))
            return
        for delta in deltas:
            for passed in stage.feed(delta):
                out.extend(feed(passed))

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("this ToolCallStream has been finished or aborted")

    def _sync_provider(self) -> None:
        if self._tracker.provider is None:
            self._tracker.provider = self._normalizer.provider

    def _sniff(self, data: bytes | bytearray | memoryview) -> bytes:
        head = self._head
        head += data
        if head[:1] == b"\x00":  # no text body starts with NUL; an event-stream prelude does
            if len(head) < 12:
                return b""
            self._mode = "eventstream"
            self._frames = EventStreamDecoder(max_message_bytes=self._max_event_bytes)
            self._head = bytearray()
            return bytes(head)
        if len(head) < len(_BOM) and _BOM.startswith(head):
            return b""
        start = len(_BOM) if head.startswith(_BOM) else 0
        body = bytes(head[start:]).lstrip(_WHITESPACE)
        if not body:
            if len(head) > self._max_line_bytes:
                self._mode = "sse"  # let the SSE decoder see it (blank lines are harmless)
                self._sse = SSEDecoder(
                    max_line_bytes=self._max_line_bytes, max_event_bytes=self._max_event_bytes
                )
                self._head = bytearray()
                return body
            return b""
        self._head = bytearray()
        if body[:1] == b"{":
            self._mode = "ndjson"
            self._lines = JSONLinesDecoder(max_line_bytes=self._max_line_bytes)
        else:
            self._mode = "sse"
            self._sse = SSEDecoder(
                max_line_bytes=self._max_line_bytes, max_event_bytes=self._max_event_bytes
            )
        return body

    def _chunk(self, chunk: Mapping[str, Any], out: list[StreamEvent]) -> None:
        self._chunk_count += 1
        try:
            deltas = self._normalizer.normalize(chunk)
        except UnsupportedChunkError as exc:
            self._fail(WireError(message=str(exc), code="unsupported_chunk"), out)
            return
        if self._tracker.provider is None:
            self._tracker.provider = self._normalizer.provider
        self._deliver(deltas, out)

    def _check_choice(self, out: list[StreamEvent]) -> None:
        """At the end: chunks of other choices came and none of the chosen one."""
        problem = self._normalizer.missing_choice()
        if problem is not None and self.done is None:
            self._sync_provider()
            error = WireError(message=problem, code="unsupported_chunk")
            self._fail(error, out)

    def _frame(self, message: EventStreamMessage, out: list[StreamEvent]) -> None:
        try:
            chunk = frame_chunk(message)
        except ValueError as exc:
            text = message.payload[:120]
            reason = f"an event-stream message is not a chunk ({exc}): {text!r}"
            self._fail(WireError(message=reason, code="bad_chunk"), out)
            return
        if chunk is not None:
            self._chunk(chunk, out)

    def _payload(self, data: str, out: list[StreamEvent]) -> None:
        text = data if data[:1] == "{" else data.strip()
        if not text:
            return
        if text.startswith("[DONE]"):
            self._sync_provider()
            self._check_choice(out)
            self._deliver([WireEnd()], out)
            return
        try:
            chunk = json.loads(text)
        except ValueError as exc:
            message = f"a chunk is not valid JSON ({exc}): {text[:120]!r}"
            self._fail(WireError(message=message, code="bad_chunk", raw=text), out)
            return
        if type(chunk) is not dict:
            message = f"a chunk is not a JSON object: {text[:120]!r}"
            self._fail(WireError(message=message, code="bad_chunk", raw=text), out)
            return
        self._chunk(chunk, out)
