"""OpenAI Responses API stream events.

``output_item.added``/``.done``, ``function_call_arguments.delta``/``.done`` (which closes
the call), custom tool input, the items the client runs (``apply_patch_call`` with its
diff deltas, ``shell_call`` with a local environment, ``local_shell_call``,
``tool_search_call`` with client execution, ``computer_call``; ``mcp_approval_request``
as a call that is not handed out), output text, refusal and reasoning text,
``response.created``/``.completed``/``.incomplete``/``.failed``, ``error`` (both shapes).
Hosted items (what the provider ran itself) are :class:`WireItem`, never calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ._reader import Reader, error_delta, integer, is_map, mapping, nonempty, pick
from .wire import (
    WireDelta,
    WireEnd,
    WireItem,
    WireReasoning,
    WireRefusal,
    WireResponse,
    WireStop,
    WireText,
    WireToolArguments,
    WireToolCall,
    WireToolEnd,
    WireToolValue,
    WireUsage,
)

__all__ = ["ResponsesReader", "responses_client_item"]

#: Responses items the client runs whose input is an object: item type -> (kind, field).
_CLIENT_ITEMS: Final[dict[str, tuple[str, str | None]]] = {
    "apply_patch_call": ("apply_patch", "operation"),
    "shell_call": ("shell", "action"),
    "local_shell_call": ("local_shell", "action"),
    "tool_search_call": ("tool_search", "arguments"),
    "computer_call": ("computer", None),
}

#: Argument text deltas: event type -> the kind of call they belong to.
_ARGUMENT_DELTAS: Final = {
    "response.function_call_arguments.delta": "function",
    "response.custom_tool_call_input.delta": "custom",
    "response.apply_patch_call_operation_diff.delta": "apply_patch",
}


def responses_client_item(itype: object, item: Mapping[str, Any]) -> tuple[str, str | None] | None:
    """(kind, input field) when the Responses item ``item`` (of type ``itype``) is one
    the client runs (an ``apply_patch_call``, a ``shell_call`` outside a container, ...),
    None for anything else (function and custom tool calls included)."""
    if not isinstance(itype, str):
        return None
    spec = _CLIENT_ITEMS.get(itype)
    if spec is None:
        return None
    if itype == "shell_call":  # hosted in a container unless its environment is local
        environment = mapping(item.get("environment")).get("type")
        if isinstance(environment, str) and environment.startswith("container"):
            return None
    if itype == "tool_search_call" and item.get("execution") != "client":
        return None
    return spec


def _client_input(item: Mapping[str, Any], field: str | None) -> Any:
    if field is not None:
        return item.get(field)
    return {k: item[k] for k in ("action", "actions", "pending_safety_checks") if k in item}


class ResponsesReader(Reader):
    """Responses API events. Keeps the map from ``item_id`` to ``call_id`` (deltas carry
    the first, the conversation needs the second)."""

    __slots__ = ("_call_ids",)

    def __init__(self, choice: int) -> None:
        self._call_ids: dict[str, str] = {}

    def read(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        kind = chunk.get("type")
        index = integer(chunk.get("output_index"))
        call_kind = _ARGUMENT_DELTAS.get(kind) if isinstance(kind, str) else None
        if call_kind is not None:
            delta = chunk.get("delta")
            call_id = self._call_ids.get(str(chunk.get("item_id")))
            if not isinstance(delta, str):
                return []
            if call_kind == "apply_patch" and call_id is None:
                return []
            return [
                WireToolCall(
                    id=call_id, index=index, arguments=delta, kind=call_kind, expects_end=True
                )
            ]
        if kind == "response.output_text.delta":
            delta = chunk.get("delta")
            return [WireText(text=delta, block=index)] if isinstance(delta, str) and delta else []
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            delta = chunk.get("delta")
            return [WireReasoning(text=delta, block=index)] if isinstance(delta, str) else []
        if kind == "response.refusal.delta":
            delta = chunk.get("delta")
            return [WireRefusal(text=delta)] if isinstance(delta, str) and delta else []
        if kind == "response.output_item.added":
            return self._item(mapping(chunk.get("item")), index, added=True)
        if kind in (
            "response.function_call_arguments.done",
            "response.custom_tool_call_input.done",
        ):
            # The final text, and the end of the call: a server that never sends
            # output_item.done has still finished it.
            final = chunk.get("arguments" if kind.endswith("arguments.done") else "input")
            call_id = self._call_ids.get(str(chunk.get("item_id")))
            out: list[WireDelta] = []
            if isinstance(final, str):
                out.append(WireToolArguments(id=call_id, index=index, arguments=final))
            out.append(WireToolEnd(id=call_id, index=index))
            return out
        if kind == "response.output_item.done":
            return self._item(mapping(chunk.get("item")), index, added=False)
        if kind in ("response.created", "response.in_progress"):
            response = mapping(chunk.get("response"))
            fields = pick(response, {"id": "id", "model": "model"})
            return [WireResponse(fields=fields)] if fields else []
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            return _end(kind, mapping(chunk.get("response")))
        if kind == "error":
            return [error_delta(chunk)]
        return []

    def _item(self, item: Mapping[str, Any], index: int | None, *, added: bool) -> list[WireDelta]:
        itype = item.get("type")
        call_id = nonempty(item.get("call_id")) or nonempty(item.get("id"))
        item_id = nonempty(item.get("id"))
        if itype in ("function_call", "custom_tool_call"):
            if item_id is not None and call_id is not None:
                self._call_ids[item_id] = call_id
            custom = itype == "custom_tool_call"
            text = item.get("input" if custom else "arguments")
            kind = "custom" if custom else "function"
            start = WireToolCall(
                id=call_id,
                index=index,
                name=nonempty(item.get("name")),
                arguments=text if added and isinstance(text, str) and text else None,
                kind=kind,
                expects_end=True,
                echo=item,
            )
            if added:
                return [start]
            out: list[WireDelta] = [start]
            # Gateways may send an empty item here while ".done" had the arguments
            # (jjang-ai/vmlx#192): only a non-empty text is authoritative.
            if isinstance(text, str) and text:
                out.append(WireToolArguments(id=call_id, index=index, arguments=text))
            out.append(WireToolEnd(id=call_id, index=index))
            return out
        client = responses_client_item(itype, item)
        if client is not None or itype == "mcp_approval_request":
            if item_id is not None and call_id is not None:
                self._call_ids[item_id] = call_id
            if client is None:
                name = nonempty(item.get("name")) or "mcp_approval_request"
                kind = "mcp_approval_request"
                value: Any = item.get("arguments")
                unsupported = (
                    f"Not run: an MCP approval request (server "
                    f"{item.get('server_label')!r}, tool {name!r}) asks for an approval, "
                    "not a result: answer it with an mcp_approval_response item."
                )
            else:
                kind, field = client
                name = kind
                value = _client_input(item, field)
                unsupported = None
            out = [
                WireToolCall(
                    id=call_id,
                    index=index,
                    name=name,
                    kind=kind,
                    expects_end=True,
                    echo=item,
                    unsupported=unsupported,
                )
            ]
            if not added:
                out.append(WireToolValue(id=call_id, index=index, value=value))
                out.append(WireToolEnd(id=call_id, index=index))
            return out
        if not added:  # messages, reasoning, and what the provider ran itself
            return [WireItem(item=item, block=index)]
        return []


def _end(kind: str, response: Mapping[str, Any]) -> list[WireDelta]:
    out: list[WireDelta] = []
    if kind == "response.failed":
        error = response.get("error")
        out.append(error_delta({"error": error} if isinstance(error, Mapping) else response))
        return out
    fields = pick(response, {"id": "id", "model": "model"})
    if fields:
        out.append(WireResponse(fields=fields))
    usage = response.get("usage")
    if is_map(usage):
        out.append(WireUsage(usage=usage))
    if kind == "response.completed":
        out.append(WireStop(reason="completed"))
    else:
        reason = mapping(response.get("incomplete_details")).get("reason")
        out.append(WireStop(reason=f"incomplete:{reason if isinstance(reason, str) else ''}"))
    out.append(WireEnd())
    return out
