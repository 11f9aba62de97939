"""AWS Bedrock ``ConverseStream`` events (``{"contentBlockDelta": {...}}``, as botocore
yields them and as ``stream/eventstream.py`` decodes the binary framing): text, reasoning
text, signature and redacted content, ``toolUse`` input pieces, server tool blocks kept,
``messageStop``, ``metadata`` (usage; the last event, read as the end), exception events.
(``InvokeModelWithResponseStream`` ``chunk`` events are unwrapped by the normalizer to
the provider's own chunk inside.)
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Final

from ._reader import Reader, error_delta, integer, is_map, mapping, nonempty
from .wire import (
    WireBlock,
    WireBlockInput,
    WireBlockUpdate,
    WireDelta,
    WireEnd,
    WireError,
    WireReasoning,
    WireRedactedThinking,
    WireSignature,
    WireStop,
    WireText,
    WireToolCall,
    WireToolEnd,
    WireUsage,
)

__all__ = ["EVENTS", "BedrockReader"]

#: The event names (each chunk's one key) that say a stream is Bedrock's; exception
#: events (``...Exception``) say it too.
EVENTS: Final = frozenset(
    {
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    }
)


class BedrockReader(Reader):
    """Bedrock ConverseStream events. Keeps which content indexes are server tool blocks
    (their input pieces are not a call's), for the message being read."""

    __slots__ = ("_server_blocks",)

    def __init__(self, choice: int) -> None:
        self._server_blocks: dict[int, bool] = {}  # index -> True: provider's input block

    def read(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        out: list[WireDelta] = []
        for key, value in chunk.items():
            body = mapping(value)
            index = integer(body.get("contentBlockIndex"))
            if key == "contentBlockDelta":
                self._delta(mapping(body.get("delta")), index, out)
            elif key == "contentBlockStart":
                self._start(mapping(body.get("start")), index, out)
            elif key == "contentBlockStop":
                out.append(WireToolEnd(id=None, index=index))
            elif key == "messageStart":
                self._server_blocks.clear()
            elif key == "messageStop":
                reason = body.get("stopReason")
                if isinstance(reason, str) and reason:
                    out.append(WireStop(reason=reason))
            elif key == "metadata":  # after messageStop: the last event of the stream
                usage = body.get("usage")
                if is_map(usage):
                    out.append(WireUsage(usage=usage))
                out.append(WireEnd())
            elif isinstance(key, str) and key.endswith("Exception"):
                message = body.get("message") or body.get("Message")
                out.append(
                    WireError(
                        message=message if isinstance(message, str) and message else key,
                        code=key,
                        raw=chunk,
                    )
                )
            elif key == "error":
                out.append(error_delta(chunk))
        return out

    def _start(self, start: Mapping[str, Any], index: int | None, out: list[WireDelta]) -> None:
        use = start.get("toolUse")
        if is_map(use) and use.get("type") != "server_tool_use":
            out.append(
                WireToolCall(
                    id=nonempty(use.get("toolUseId")),
                    index=index,
                    name=nonempty(use.get("name")),
                    expects_end=True,
                    echo={"toolUse": use},
                )
            )
            return
        for name, content in start.items():  # a server tool, its result, an image...
            if index is not None:
                self._server_blocks[index] = name == "toolUse"
            out.append(WireBlock(content={name: content}, block=index))

    def _delta(self, delta: Mapping[str, Any], index: int | None, out: list[WireDelta]) -> None:
        text = delta.get("text")
        if isinstance(text, str) and text:
            out.append(WireText(text=text, block=index))
        use = delta.get("toolUse")
        if is_map(use) and isinstance(use.get("input"), str):
            piece = use["input"]
            server = self._server_blocks.get(index) if index is not None else None
            if server is None:
                out.append(WireToolCall(index=index, arguments=piece, expects_end=True))
            elif server:
                out.append(WireBlockInput(text=piece, block=index, path=("toolUse", "input")))
        reasoning = delta.get("reasoningContent")
        if is_map(reasoning):
            thought = reasoning.get("text")
            if isinstance(thought, str):
                out.append(WireReasoning(text=thought, block=index))
            signature = reasoning.get("signature")
            if isinstance(signature, str) and signature:
                out.append(WireSignature(signature=signature, block=index))
            redacted = reasoning.get("redactedContent")
            if isinstance(redacted, bytes | bytearray):  # botocore decodes the blob
                redacted = base64.b64encode(redacted).decode("ascii")
            if isinstance(redacted, str):
                out.append(WireRedactedThinking(data=redacted, block=index))
        result = delta.get("toolResult")
        if type(result) is list:
            update = {"content": result}
            out.append(
                WireBlockUpdate(fields=update, block=index, extend=True, path=("toolResult",))
            )
