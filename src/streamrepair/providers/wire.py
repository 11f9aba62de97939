"""The normalized vocabulary every provider format is turned into: wire deltas.

``normalizer.py`` turns each provider's chunks into these; ``stream/tracker.py`` consumes
them. They say what arrived (text, reasoning, a piece of a tool call, a block the provider
ran itself, a stop reason, usage, an error, the end marker) and nothing about what it
means for a call: identity and the finish policy are the tracker's.

Two kinds of content are kept apart: the client's calls (:class:`WireToolCall` and the
deltas that complete it), which the tracker judges, and everything the provider ran or
produced on its own side (:class:`WireBlock`, :class:`WireItem`: server tools and their
results, compaction, hosted items), which is never a call and is kept for the message
exactly as received.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..results import Repair

__all__ = [
    "WireBlock",
    "WireBlockInput",
    "WireBlockUpdate",
    "WireCitation",
    "WireDelta",
    "WireEnd",
    "WireError",
    "WireItem",
    "WireMessageStart",
    "WireReasoning",
    "WireRedactedThinking",
    "WireRefusal",
    "WireResponse",
    "WireSignature",
    "WireStop",
    "WireText",
    "WireToolArguments",
    "WireToolCall",
    "WireToolEnd",
    "WireToolValue",
    "WireUsage",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class WireDelta:
    """Base class of the normalized deltas."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WireMessageStart(WireDelta):
    """A message begins (Anthropic ``message_start``)."""

    message_id: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireText(WireDelta):
    """Content text. ``block`` is the provider's block/output index, if any."""

    text: str
    block: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireReasoning(WireDelta):
    """Reasoning text (may be ``""``: DeepSeek opens thinking mode with it)."""

    text: str
    block: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireSignature(WireDelta):
    """The signature of a block: Anthropic ``signature_delta`` of a thinking block,
    Bedrock ``reasoningContent.signature``, Gemini ``thoughtSignature`` on a text part.
    ``kind`` is the kind of block it signs (``thinking`` or ``text``)."""

    signature: str
    block: int | None = None
    kind: str = "thinking"


@dataclass(frozen=True, slots=True, kw_only=True)
class WireRedactedThinking(WireDelta):
    """An Anthropic ``redacted_thinking`` block (kept for the conversation)."""

    data: str
    block: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireRefusal(WireDelta):
    """Refusal text."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WireToolCall(WireDelta):
    """A piece of a tool call: any of id, index, name and argument text may be absent.

    ``expects_end`` says the provider closes each call explicitly (Anthropic
    ``content_block_stop``, Responses ``output_item.done``), so a call never closed was
    cut off. ``from_object`` says ``arguments`` was sent as an object and serialized
    here. ``kind`` is ``"function"`` (JSON arguments), ``"custom"`` (Responses free-text
    tools: ``arguments`` is the text itself, never parsed) or the kind of a Responses
    item the client runs whose input is an object (``"apply_patch"``, ``"shell"``,
    ``"local_shell"``, ``"tool_search"``, ``"computer"``): its value comes whole in a
    :class:`WireToolValue`, and ``arguments`` pieces are only shown as they stream.
    ``echo`` is the provider's own record of the call (the Anthropic ``tool_use`` block,
    the Responses item, the Gemini part), kept to echo it in the message with its
    finished arguments; the latest one wins. ``unsupported`` says why a call of a kind
    that is not handed out (a Responses ``mcp_approval_request``) is rejected, and how to
    answer it.

    Calls found in text (:mod:`.textcalls`) also carry ``notes`` and ``repairs`` for the
    call (how its markup was read; offsets in its argument text), and ``end_marker``,
    what closes the call, named when it never came.
    """

    id: str | None = None
    index: int | None = None
    name: str | None = None
    arguments: str | None = None
    kind: str = "function"
    expects_end: bool = False
    from_object: bool = False
    echo: Mapping[str, Any] | None = None
    unsupported: str | None = None
    notes: tuple[str, ...] = ()
    repairs: tuple[Repair, ...] = ()
    end_marker: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireToolValue(WireDelta):
    """The whole input of a call whose input is an object, not text (a Responses
    ``apply_patch_call``'s ``operation``, a ``shell_call``'s ``action``...), as the
    provider finished it; None when the item carried none."""

    id: str | None
    index: int | None
    value: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class WireToolArguments(WireDelta):
    """The provider's own final argument text for a call (Responses ``.done``)."""

    id: str | None
    index: int | None
    arguments: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WireToolEnd(WireDelta):
    """The provider closed a call (or a content block that may be one)."""

    id: str | None
    index: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireStop(WireDelta):
    """A stop reason, as the provider spelled it."""

    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WireUsage(WireDelta):
    """Token usage. ``merge`` updates the usage seen so far instead of replacing it."""

    usage: Mapping[str, Any]
    merge: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class WireError(WireDelta):
    """An error reported inside the stream."""

    message: str
    code: str | None = None
    error_type: str | None = None
    raw: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireItem(WireDelta):
    """A finished Responses output item that is not the client's call (message,
    reasoning, and the items the provider ran itself: web search, MCP, code interpreter,
    hosted shell...), kept as received."""

    item: Mapping[str, Any]
    block: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireBlock(WireDelta):
    """A content block that is neither text, reasoning nor the client's call, started:
    Anthropic ``server_tool_use``, ``mcp_tool_use`` and every ``*_tool_result``,
    ``compaction``, ``fallback``, ``container_upload``, unknown block types; Gemini parts
    such as ``executableCode``; Bedrock server tool blocks. It is never a call: it is
    kept for the message exactly as received (``content``), completed by
    :class:`WireBlockInput` and :class:`WireBlockUpdate`."""

    content: Mapping[str, Any]
    block: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireBlockInput(WireDelta):
    """A piece of the JSON input of a :class:`WireBlock` (Anthropic ``input_json_delta``
    of a ``server_tool_use`` or ``mcp_tool_use`` block, Bedrock ``toolUse.input`` of a
    server tool); the joined text, parsed, replaces the value at ``path`` in the block
    (``input``; Bedrock: ``toolUse``, ``input``) once the message is built."""

    text: str
    block: int | None = None
    path: tuple[str, ...] = ("input",)


@dataclass(frozen=True, slots=True, kw_only=True)
class WireBlockUpdate(WireDelta):
    """Fields that replace those of a :class:`WireBlock` (Anthropic ``compaction_delta``)
    or, with ``extend``, whose list values are appended to the block's lists (Bedrock
    ``toolResult`` pieces). ``path`` leads to the mapping inside the block that holds
    the fields (Bedrock: ``toolResult``)."""

    fields: Mapping[str, Any]
    block: int | None = None
    extend: bool = False
    path: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class WireCitation(WireDelta):
    """A citation of a text block (Anthropic ``citations_delta``)."""

    citation: Mapping[str, Any]
    block: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireResponse(WireDelta):
    """Fields about the response itself, as the provider sent them: ``id``, ``model``,
    Anthropic's ``container``. Later values update earlier ones; reported on ``Done``."""

    fields: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class WireEnd(WireDelta):
    """The provider's end marker (``[DONE]``, ``message_stop``, ``response.completed``,
    Ollama ``done``)."""
