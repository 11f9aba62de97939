"""Gemini's native ``streamGenerateContent`` (SSE or JSON lines).

Text and ``thought`` parts, ``thoughtSignature`` (on the part that carried it), whole
``functionCall`` parts (each its own call, complete when it arrives), Vertex
``partialArgs`` (values addressed by JSON path, joined into the arguments object by
:class:`PartialArgs` and handed over when ``{"functionCall": {}}`` closes the call),
``finishReason``, ``promptFeedback.blockReason``, ``usageMetadata``, other parts
(``executableCode``...) kept as received.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..syntax.assembler import DEFAULT_MAX_SIZE
from ._reader import (
    ChoiceReader,
    arguments_text,
    error_delta,
    integer,
    is_map,
    mapping,
    nonempty,
    pick,
)
from .wire import (
    WireBlock,
    WireDelta,
    WireError,
    WireReasoning,
    WireResponse,
    WireSignature,
    WireStop,
    WireText,
    WireToolCall,
    WireToolEnd,
    WireUsage,
)

__all__ = ["GeminiReader", "PartialArgs", "json_path"]


class GeminiReader(ChoiceReader):
    """Gemini candidates. Keeps the count of calls (Gemini's have no index) and the one
    call whose arguments arrive by JSON path (bounded by ``DEFAULT_MAX_SIZE``
    characters)."""

    __slots__ = ("_call_count", "_described", "_open")

    def __init__(self, choice: int) -> None:
        super().__init__(choice)
        self._described = False  # WireResponse sent
        self._call_count = 0
        self._open: PartialArgs | None = None

    def read(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        if chunk.get("error") and "candidates" not in chunk:
            return [error_delta(chunk)]
        out: list[WireDelta] = []
        if not self._described:
            fields = pick(chunk, {"responseId": "id", "modelVersion": "model"})
            if fields:
                self._described = True
                out.append(WireResponse(fields=fields))
        candidates = chunk.get("candidates")
        if type(candidates) is list:
            for candidate in candidates:
                if not is_map(candidate) or not self.chosen(integer(candidate.get("index")) or 0):
                    continue
                parts = mapping(candidate.get("content")).get("parts")
                if type(parts) is list:
                    for part in parts:
                        if is_map(part):
                            self._part(part, chunk, out)
                reason = candidate.get("finishReason")
                if isinstance(reason, str) and reason:
                    out.append(WireStop(reason=reason))
        blocked = mapping(chunk.get("promptFeedback")).get("blockReason")
        if isinstance(blocked, str) and blocked:
            out.append(WireStop(reason=blocked))
        usage = chunk.get("usageMetadata")
        if is_map(usage) and usage:
            out.append(WireUsage(usage=usage))  # cumulative: each replaces the last
        return out

    def _part(
        self, part: Mapping[str, Any], chunk: Mapping[str, Any], out: list[WireDelta]
    ) -> None:
        call = part.get("functionCall")
        if is_map(call):
            self._call(part, call, chunk, out)
            return
        text = part.get("text")
        signature = part.get("thoughtSignature")
        thought = part.get("thought") is True
        if isinstance(text, str) and (text or thought or not signature):
            if thought:
                out.append(WireReasoning(text=text))
            elif text:
                out.append(WireText(text=text))
            if isinstance(signature, str) and signature:  # on the part that carried it
                kind = "thinking" if thought else "text"
                out.append(WireSignature(signature=signature, kind=kind))
            return
        # An empty text part that only carries a signature, executableCode, inlineData,
        # toolCall...: kept as its own part, as received.
        out.append(WireBlock(content=part))

    def _call(
        self,
        part: Mapping[str, Any],
        call: Mapping[str, Any],
        chunk: Mapping[str, Any],
        out: list[WireDelta],
    ) -> None:
        name = nonempty(call.get("name"))
        partial = call.get("partialArgs")
        more = call.get("willContinue") is True
        if name is not None:
            self._close(out)
            index = self._call_count
            self._call_count += 1
            call_id = nonempty(call.get("id"))
            if not more and type(partial) is not list:  # a whole call: complete as it is
                arguments = arguments_text(call.get("args"))[0]
                out.append(
                    WireToolCall(
                        id=call_id,
                        index=index,
                        name=name,
                        arguments=arguments,
                        expects_end=True,
                        echo=part,
                    )
                )
                out.append(WireToolEnd(id=call_id, index=index))
                return
            # Vertex streamFunctionCallArguments: the values follow by JSON path.
            out.append(
                WireToolCall(id=call_id, index=index, name=name, expects_end=True, echo=part)
            )
            self._open = PartialArgs(index, call_id)
        open_call = self._open
        if open_call is None:
            return  # a continuation with no call open: nothing to add to
        if type(partial) is list:
            for arg in partial:
                problem = open_call.apply(mapping(arg))
                if problem is not None:
                    self._open = None
                    out.append(
                        WireError(
                            message=f"functionCall.partialArgs: {problem}",
                            code="too_large" if "exceed" in problem else "bad_chunk",
                            raw=chunk,
                        )
                    )
                    return
        if not more:  # {"functionCall": {}} (or a last piece) ends the call
            self._close(out)

    def _close(self, out: list[WireDelta]) -> None:
        open_call, self._open = self._open, None
        if open_call is None:
            return
        arguments = json.dumps(open_call.value, ensure_ascii=False, separators=(",", ":"))
        out.append(WireToolCall(id=open_call.call_id, index=open_call.index, arguments=arguments))
        out.append(WireToolEnd(id=open_call.call_id, index=open_call.index))


_PATH_STEP = re.compile(
    r"\.([^.\[\]]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\[\"((?:[^\"\\]|\\.)*)\"\]"
)


def json_path(path: object) -> list[str | int] | None:
    """The steps of a normalized JSON path (RFC 9535: ``$.a.b[0]``, ``$['a']``), or None
    when it is not one."""
    if not isinstance(path, str) or not path.startswith("$"):
        return None
    steps: list[str | int] = []
    pos = 1
    while pos < len(path):
        match = _PATH_STEP.match(path, pos)
        if match is None:
            return None
        name, number, single, double = match.groups()
        if number is not None:
            steps.append(int(number))
        else:
            quoted = single if single is not None else double
            steps.append(name if quoted is None else re.sub(r"\\(.)", r"\1", quoted))
        pos = match.end()
    return steps


class PartialArgs:
    """The arguments object of one Gemini call whose values arrive by JSON path."""

    __slots__ = ("call_id", "index", "open_string", "size", "value")

    def __init__(self, index: int, call_id: str | None) -> None:
        self.index = index
        self.call_id = call_id
        self.value: dict[str, Any] = {}
        self.open_string: tuple[str | int, ...] | None = None  # path of a string still growing
        self.size = 0

    def apply(self, arg: Mapping[str, Any]) -> str | None:
        """Set one ``PartialArg``; a reason when it cannot be read."""
        steps = json_path(arg.get("jsonPath"))
        if not steps:
            return f"cannot read jsonPath {arg.get('jsonPath')!r}"
        if "stringValue" in arg:
            value: Any = arg["stringValue"]
            if not isinstance(value, str):
                return "stringValue is not a string"
        elif "numberValue" in arg:
            value = arg["numberValue"]
        elif "boolValue" in arg:
            value = arg["boolValue"]
        elif "nullValue" in arg:
            value = None
        else:
            return f"no value for jsonPath {arg.get('jsonPath')!r}"
        self.size += len(value) if isinstance(value, str) else 8
        if self.size > DEFAULT_MAX_SIZE:
            return f"the arguments exceed {DEFAULT_MAX_SIZE} characters"
        key = tuple(steps)
        container: Any = self.value
        for step, following in zip(steps, [*steps[1:], None], strict=True):
            fresh: Any = [] if isinstance(following, int) else {}
            if isinstance(step, int):
                if not isinstance(container, list) or step > len(container):
                    return f"jsonPath {arg.get('jsonPath')!r} skips array elements"
                if following is None:
                    if step == len(container):
                        container.append(None)
                    container[step] = self._value(container[step], key, value)
                    break
                if step == len(container):
                    container.append(fresh)
            else:
                if not isinstance(container, dict):
                    return f"jsonPath {arg.get('jsonPath')!r} names a key inside an array"
                if following is None:
                    container[step] = self._value(container.get(step), key, value)
                    break
                container.setdefault(step, fresh)
            container = container[step]
            if not isinstance(container, dict | list):
                return f"jsonPath {arg.get('jsonPath')!r} goes inside a scalar"
        self.open_string = key if isinstance(value, str) and arg.get("willContinue") else None
        return None

    def _value(self, current: Any, key: tuple[str | int, ...], value: Any) -> Any:
        if isinstance(value, str) and isinstance(current, str) and self.open_string == key:
            return current + value  # the next piece of a string that said willContinue
        return value
