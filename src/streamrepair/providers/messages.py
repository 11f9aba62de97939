"""The assistant message to append to the conversation, in the provider's format.

A :class:`TurnRecorder` keeps the turn as it streamed, as a list of :class:`Block` in
stream order (text, thinking with its signature, redacted thinking, refusal, finished
Responses items, the blocks the provider ran itself, and where each of the client's calls
began), and :func:`build_messages` turns it and the ready calls into what
``Done.messages`` holds. The stream layer's tracker owns one recorder per stream and tells
it what arrived; the recorder decides nothing about calls.

Invariants: what the provider ran on its own side (Anthropic server tools and their
results, MCP blocks, compaction, fallback; Responses hosted items; Gemini code execution
parts) is kept exactly as received, completed only by the provider's own deltas; a ready
call is echoed from the provider's own record of it (``tool_use`` block, Responses item,
Gemini part) with only its arguments replaced by the finished ones; nothing the caller
passed is shared or mutated (every kept mapping is a deep copy).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..events import ToolCallReady
from .normalizer import Provider

__all__ = ["Block", "TurnRecorder", "build_messages"]


class Block:
    """One piece of the assistant turn as it streamed, kept to build the message.

    ``kind`` is ``text``, ``thinking``, ``refusal``, ``redacted``, ``item`` (a finished
    Responses item), ``raw`` (a block the provider ran itself, kept as received) or
    ``call`` (where a client call began: ``data`` is its id, ``item`` the provider's
    record of it); ``key`` the provider's block or output index. Internal accumulator of
    :class:`TurnRecorder`.
    """

    __slots__ = ("citations", "data", "item", "key", "kind", "parts", "path", "signature")

    def __init__(
        self,
        *,
        kind: str,
        key: int | None,
        data: str = "",
        item: Mapping[str, Any] | None = None,
    ) -> None:
        self.kind = kind
        self.key = key
        self.parts: list[str] = []
        self.signature = ""
        self.data = data
        self.item = item
        self.citations: list[Any] = []
        self.path: tuple[str, ...] = ("input",)

    def text(self) -> str:
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""


class TurnRecorder:
    """The assistant turn as it streamed, kept to build ``Done.messages``.

    Consecutive pieces of one kind and block are joined into one :class:`Block`; a
    finished Responses item replaces the text blocks streamed for it. Text is stored as
    the pieces that arrived and joined once, when the message is built. :attr:`notes`
    holds what building the message found worth saying (a server block whose input did
    not parse).
    """

    __slots__ = ("_blocks", "_calls", "_raw", "notes", "reasoning_seen", "slots")

    def __init__(self) -> None:
        self._blocks: list[Block] = []
        self._calls: dict[str, Block] = {}
        self._raw: dict[int | None, Block] = {}
        #: True once any reasoning arrived (even empty): the message then carries the
        #: provider's reasoning field, which DeepSeek requires back after tool calls.
        self.reasoning_seen = False
        self.notes: list[str] = []
        #: ``(call id, position)`` of each call left out of the last built turn (see
        #: :func:`build_messages`).
        self.slots: list[tuple[str, int]] = []

    def text(self, kind: str, key: int | None, text: str) -> None:
        """Record ``text`` of ``kind`` (``text``, ``thinking``, ``refusal``) in block
        ``key``."""
        if kind == "thinking":
            self.reasoning_seen = True
        self._block(kind, key, text)

    def signature(self, key: int | None, signature: str, kind: str = "thinking") -> None:
        """Record a block's signature: a thinking block's (Anthropic ``signature_delta``,
        appended), or a text part's (Gemini ``thoughtSignature``). Text that arrives after
        a signature starts a new block, so that each signature stays on its own part."""
        if kind == "thinking":
            self._block("thinking", key, "").signature += signature
            return
        self._block(kind, key, "").signature = signature

    def redacted(self, key: int | None, data: str) -> None:
        """Record a redacted thinking block as received."""
        self._blocks.append(Block(kind="redacted", key=key, data=data))

    def citation(self, key: int | None, citation: Mapping[str, Any]) -> None:
        """Record a citation of the text block ``key`` (Anthropic ``citations_delta``)."""
        self._block("text", key, "").citations.append(_copy(citation))

    def item(self, key: int | None, item: Mapping[str, Any]) -> None:
        """Record a finished Responses output item; it replaces the text, reasoning and
        refusal streamed for the same output index."""
        self._blocks = [
            b
            for b in self._blocks
            if not (b.key == key and b.kind in ("text", "thinking", "refusal"))
        ]
        self._blocks.append(Block(kind="item", key=key, item=_copy(item)))

    def block(self, key: int | None, content: Mapping[str, Any]) -> None:
        """Record a block the provider ran or produced itself, as received."""
        block = Block(kind="raw", key=key, item=_copy(content))
        self._blocks.append(block)
        self._raw[key] = block

    def block_input(self, key: int | None, text: str, path: tuple[str, ...]) -> None:
        """Record a piece of the JSON input of the raw block ``key``."""
        block = self._raw.get(key)
        if block is not None:
            block.parts.append(text)
            block.path = path

    def block_update(
        self,
        key: int | None,
        fields: Mapping[str, Any],
        *,
        extend: bool = False,
        path: tuple[str, ...] = (),
    ) -> None:
        """Replace fields of the raw block ``key`` (or, with ``extend``, append to its
        lists), in the mapping at ``path`` inside it."""
        block = self._raw.get(key)
        if block is None or block.item is None:
            return
        target = block.item  # the recorder's own copy: safe to change
        for name in path:
            inner = target.get(name)
            if not isinstance(inner, dict):
                return
            target = inner
        assert isinstance(target, dict)
        for name, value in fields.items():
            current = target.get(name)
            if extend and isinstance(value, list) and isinstance(current, list):
                target[name] = [*current, *_copy(value)]
            else:
                target[name] = _copy(value)

    def call(self, key: int | None, call_id: str, echo: Mapping[str, Any] | None) -> None:
        """Record where the client call ``call_id`` began, or update the provider's own
        record of it (``echo``; the latest wins)."""
        block = self._calls.get(call_id)
        if block is None:
            block = Block(kind="call", key=key, data=call_id)
            self._blocks.append(block)
            self._calls[call_id] = block
        if echo is not None:
            block.item = _copy(echo)

    def keep_call(self, call_id: str) -> None:
        """Keep the provider's record of a call that is not handed out but belongs in the
        conversation (a Responses ``mcp_approval_request``, which its answer refers to),
        as an item at the place it began."""
        block = self._calls.get(call_id)
        if block is not None and block.item is not None:
            block.kind = "item"

    def reset(self) -> None:
        """Forget the turn so far (a new message was spliced into the stream)."""
        self._blocks = []
        self._calls = {}
        self._raw = {}

    def messages(
        self, provider: Provider | None, ready: list[ToolCallReady]
    ) -> tuple[dict[str, Any], ...]:
        """The messages for ``Done.messages`` (see :func:`build_messages`)."""
        self.notes = []
        self.slots = []
        return build_messages(
            provider,
            self._blocks,
            ready,
            reasoning_seen=self.reasoning_seen,
            notes=self.notes,
            slots=self.slots,
        )

    def _block(self, kind: str, key: int | None, text: str) -> Block:
        last = self._blocks[-1] if self._blocks else None
        if last is None or last.kind != kind or last.key != key or (text and last.signature):
            last = Block(kind=kind, key=key)
            self._blocks.append(last)
        if text:
            last.parts.append(text)
        return last


def _copy(value: Any) -> Any:
    """A deep copy of JSON-like data (the caller's chunks are never shared or mutated)."""
    if isinstance(value, Mapping):
        return {str(k): _copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(v) for v in value]
    return value


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _by_origin(ready: list[ToolCallReady]) -> dict[str, list[ToolCallReady]]:
    """The ready calls grouped by the streamed call they came from, in order."""
    grouped: dict[str, list[ToolCallReady]] = {}
    for event in ready:
        grouped.setdefault(event.origin_id, []).append(event)
    return grouped


def build_messages(
    provider: Provider | None,
    blocks: list[Block],
    ready: list[ToolCallReady],
    *,
    reasoning_seen: bool,
    notes: list[str] | None = None,
    slots: list[tuple[str, int]] | None = None,
) -> tuple[dict[str, Any], ...]:
    """What to append to the conversation, in the provider's format.

    ``ready`` holds the :class:`~streamrepair.ToolCallReady` events, in order; rejected
    calls are left out (sending their broken text back makes strict servers reject every
    later request, e.g. ``MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark#55``). Chat
    Completions and Ollama: one assistant message whose ``content`` is ``""`` rather than
    null, with ``reasoning_content`` whenever the provider sent any (DeepSeek thinking
    mode requires it back after tool calls, even empty). Anthropic: one assistant message
    with every block in stream order: thinking (and signature), redacted thinking, text
    (with its citations), the client's ``tool_use`` blocks as received with their
    finished input, and the blocks Anthropic ran itself exactly as received
    (``server_tool_use`` and ``mcp_tool_use`` with their input, every ``*_tool_result``,
    ``compaction``, ``fallback``...), so that a paused turn can be sent back unchanged.
    Responses: the output items (every item the provider finished as received, calls as
    received with their finished arguments). Gemini: one ``{"role": "model", "parts":
    [...]}`` content with each part's ``thoughtSignature``. Bedrock: one Converse message.
    ``notes`` (when given) receives what is worth saying about the build; ``slots`` (when
    given), for Anthropic and Responses, ``(call id, position)`` of every client call that
    began in the stream but is left out (none of its calls is ready), the position being
    the number of content blocks or output items before the place where it began (what
    ``Done.call_slots`` holds).
    """
    found = notes if notes is not None else []
    places = slots if slots is not None else []
    if provider is Provider.ANTHROPIC:
        return (_anthropic_message(blocks, ready, found, places),)
    if provider is Provider.RESPONSES:
        return _responses_items(blocks, ready, found, places)
    if provider is Provider.GEMINI:
        return (_gemini_content(blocks, ready, found),)
    if provider is Provider.BEDROCK:
        return (_bedrock_message(blocks, ready, found),)
    text = "".join(b.text() for b in blocks if b.kind == "text")
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if reasoning_seen:
        key = "reasoning_content"
        if provider is Provider.OLLAMA:
            key = "thinking"
        elif provider is Provider.COHERE:
            key = "tool_plan"
        message[key] = "".join(b.text() for b in blocks if b.kind == "thinking")
    refusal = "".join(b.text() for b in blocks if b.kind == "refusal")
    if refusal:
        message["refusal"] = refusal
    if ready:
        if provider is Provider.OLLAMA:
            message["tool_calls"] = [
                {"function": {"name": e.name, "arguments": _copy(e.arguments)}} for e in ready
            ]
        else:
            message["tool_calls"] = [
                {
                    "id": e.call_id,
                    "type": "function",
                    "function": {"name": e.name, "arguments": _json(e.arguments)},
                }
                for e in ready
            ]
    return (message,)


def _raw(block: Block, notes: list[str]) -> dict[str, Any]:
    """A block the provider ran itself, as received, its streamed input parsed in."""
    content: dict[str, Any] = _copy(block.item) if block.item is not None else {}
    text = block.text()
    if not text.strip():
        return content
    try:
        value = json.loads(text)
    except ValueError:
        where = content.get("id") or content.get("type") or "a block"
        notes.append(
            f"the streamed input of {where} is not valid JSON ({len(text)} characters); "
            "the block was kept with the input it started with"
        )
        return content
    target = content
    for name in block.path[:-1]:
        inner = target.get(name)
        if not isinstance(inner, dict):
            inner = {}
            target[name] = inner
        target = inner
    target[block.path[-1]] = value
    return content


def _anthropic_message(
    blocks: list[Block], ready: list[ToolCallReady], notes: list[str], slots: list[tuple[str, int]]
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    pending = _by_origin(ready)
    for block in blocks:
        if block.kind == "thinking":
            entry = {"type": "thinking", "thinking": block.text()}
            if block.signature:
                entry["signature"] = block.signature
            content.append(entry)
        elif block.kind == "redacted":
            content.append({"type": "redacted_thinking", "data": block.data})
        elif block.kind == "text" and (block.text() or block.citations):
            text: dict[str, Any] = {"type": "text", "text": block.text()}
            if block.citations:
                text["citations"] = _copy(block.citations)
            content.append(text)
        elif block.kind == "raw":
            content.append(_raw(block, notes))
        elif block.kind == "call":
            calls = pending.pop(block.data, ())
            if not calls:
                slots.append((block.data, len(content)))
            content.extend(_anthropic_call(e, block.item) for e in calls)
    for events in pending.values():
        content.extend(_anthropic_call(e, None) for e in events)
    return {"role": "assistant", "content": content}


def _anthropic_call(e: ToolCallReady, echo: Mapping[str, Any] | None) -> dict[str, Any]:
    entry: dict[str, Any] = _copy(echo) if echo is not None else {"type": "tool_use"}
    entry["id"] = e.call_id
    entry["name"] = e.name
    entry["input"] = _copy(e.arguments)
    return entry


def _responses_items(
    blocks: list[Block], ready: list[ToolCallReady], notes: list[str], slots: list[tuple[str, int]]
) -> tuple[dict[str, Any], ...]:
    items: list[dict[str, Any]] = []
    pending = _by_origin(ready)
    loose = [b for b in blocks if b.kind == "text"]
    for block in blocks:
        if block.kind == "item" and block.item is not None:
            items.append(_copy(block.item))
        elif block.kind == "raw":
            items.append(_raw(block, notes))
        elif block.kind == "call":
            calls = pending.pop(block.data, ())
            if not calls:
                slots.append((block.data, len(items)))
            items.extend(_responses_call(e, block.item) for e in calls)
        elif loose and block is loose[0]:  # text whose message item never arrived (cut)
            text = "".join(b.text() for b in loose)
            items.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                }
            )
    for events in pending.values():
        items.extend(_responses_call(e, None) for e in events)
    return tuple(items)


def _responses_call(e: ToolCallReady, echo: Mapping[str, Any] | None) -> dict[str, Any]:
    if e.kind not in ("function", "custom"):  # an item the client runs: as received
        if echo is not None:
            return _copy(echo)  # type: ignore[no-any-return]
        return {"type": f"{e.kind}_call", "call_id": e.call_id}
    expected = "custom_tool_call" if e.kind == "custom" else "function_call"
    if echo is not None and echo.get("type") == expected:
        entry: dict[str, Any] = _copy(echo)
        if e.call_id != e.origin_id:
            entry.pop("id", None)  # a value split from the item is not the item
    else:
        entry = {"type": expected}
    entry["call_id"] = e.call_id
    entry["name"] = e.name
    if e.kind == "custom":
        entry["input"] = e.arguments
    else:
        entry["arguments"] = _json(e.arguments)
    return entry


def _gemini_content(
    blocks: list[Block], ready: list[ToolCallReady], notes: list[str]
) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    pending = _by_origin(ready)
    for block in blocks:
        if block.kind in ("text", "thinking") and (block.text() or block.signature):
            part: dict[str, Any] = {"text": block.text()}
            if block.kind == "thinking":
                part["thought"] = True
            if block.signature:
                part["thoughtSignature"] = block.signature
            parts.append(part)
        elif block.kind == "raw":
            parts.append(_raw(block, notes))
        elif block.kind == "call":
            parts.extend(_gemini_call(e, block.item) for e in pending.pop(block.data, ()))
    for events in pending.values():
        parts.extend(_gemini_call(e, None) for e in events)
    return {"role": "model", "parts": parts}


def _gemini_call(e: ToolCallReady, echo: Mapping[str, Any] | None) -> dict[str, Any]:
    sent = echo.get("functionCall") if echo is not None else None
    call: dict[str, Any] = {"name": e.name, "args": _copy(e.arguments)}
    if isinstance(sent, Mapping) and isinstance(sent.get("id"), str):
        call["id"] = sent["id"] if e.call_id == e.origin_id else e.call_id
    part: dict[str, Any] = {"functionCall": call}
    if echo is not None:
        part.update((k, _copy(v)) for k, v in echo.items() if k != "functionCall")
    return part


def _bedrock_message(
    blocks: list[Block], ready: list[ToolCallReady], notes: list[str]
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    pending = _by_origin(ready)
    for block in blocks:
        if block.kind == "thinking":
            reasoning: dict[str, Any] = {"text": block.text()}
            if block.signature:
                reasoning["signature"] = block.signature
            content.append({"reasoningContent": {"reasoningText": reasoning}})
        elif block.kind == "redacted":
            content.append({"reasoningContent": {"redactedContent": block.data}})
        elif block.kind == "text" and block.text():
            content.append({"text": block.text()})
        elif block.kind == "raw":
            content.append(_raw(block, notes))
        elif block.kind == "call":
            for e in pending.pop(block.data, ()):
                use = {"toolUseId": e.call_id, "name": e.name, "input": _copy(e.arguments)}
                content.append({"toolUse": use})
    for events in pending.values():
        for e in events:
            use = {"toolUseId": e.call_id, "name": e.name, "input": _copy(e.arguments)}
            content.append({"toolUse": use})
    return {"role": "assistant", "content": content}
