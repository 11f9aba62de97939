"""The Chat Completions relay (OpenAI and compatibles: DeepSeek, Qwen, GLM, Kimi, ...).

What the client receives (see ``relay.py`` for the general rules):

* every chunk without ``tool_calls`` goes out as the upstream sent it (content,
  ``reasoning_content``, refusals, keep-alives, unknown fields);
* a chunk with ``tool_calls`` (or the legacy ``function_call``) goes out without them,
  or not at all when nothing else is in it;
* the chunk carrying ``finish_reason``, and everything after it (the usage chunk,
  ``[DONE]``), is held until the stream ends; any text on it goes out at once;
* at the end: one chunk per ready call (``index`` 0, 1, ... in call order, ``id``,
  ``type``, ``function.name`` and the whole ``arguments`` in the first delta, as
  OpenCode's parser requires), one content chunk per withheld call with the notice,
  then the held chunks with ``finish_reason`` as :func:`~.relay.closing_stop` says
  (``tool_calls`` when a call was sent, ``length`` when one was cut off).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Final

from ..events import Done, StreamEvent, ToolCallReady
from .relay import (
    ApiProtocol,
    Relay,
    closing_stop,
    compact_json,
    notice_text,
    notice_verdicts,
    sse_event,
)

__all__ = ["ChatRelay"]

_TEMPLATE_KEYS: Final = ("id", "object", "created", "model", "system_fingerprint")
_TEXT_KEYS: Final = ("content", "reasoning_content", "reasoning")


class ChatRelay(Relay):
    """Chat Completions: see the module docstring. Follows choice 0 (the proxy passes
    requests with ``n > 1`` through untouched)."""

    protocol: ClassVar[ApiProtocol] = ApiProtocol.CHAT

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._template: dict[str, Any] = {}
        self._finish_seen = False
        self._legacy = False
        self._text_sent = False
        self._reasoning_key = "reasoning_content"  # OpenRouter spells it "reasoning"

    def _chunk(
        self,
        name: str | None,
        data: str,
        chunk: dict[str, Any],
        events: list[StreamEvent],
        out: list[bytes],
    ) -> None:
        choices = chunk.get("choices")
        if not self._template.get("id") and choices:
            # the first chunk with choices (Azure's first chunk has none, and an empty id)
            self._template = {k: chunk[k] for k in _TEMPLATE_KEYS if k in chunk}
        if self._finish_seen or (chunk.get("error") and not choices):
            self._hold((name, data))
            return
        if type(choices) is not list:
            out.append(sse_event(data, name))
            return
        followed = [c for c in choices if isinstance(c, dict) and (c.get("index") or 0) == 0]
        choice = followed[0] if followed else None
        delta = choice.get("delta") if choice is not None else None
        calls = isinstance(delta, dict) and ("tool_calls" in delta or "function_call" in delta)
        reason = choice.get("finish_reason") if choice is not None else None
        rewritten = False
        if self.text_calls and isinstance(delta, dict):
            # The text the text-call stage left (markup removed), not the upstream's.
            released, reasoning = self._take()
            new = self._with_text(delta, released, reasoning)
            if new is not delta:
                assert choice is not None
                delta, rewritten = new, True
                choice = {**choice, "delta": delta}
                choices = [choice if c is followed[0] else c for c in choices]
        if isinstance(delta, dict) and (delta.get("content") or delta.get(self._reasoning_key)):
            self._text_sent = True
        if not calls and not reason and not rewritten:
            out.append(sse_event(data, name))
            return
        assert choice is not None
        if isinstance(delta, dict) and "function_call" in delta:
            self._legacy = True
        # Rewrite: the chunk without its tool-call pieces.
        kept = (
            {k: v for k, v in delta.items() if k not in ("tool_calls", "function_call")}
            if (isinstance(delta, dict))
            else {}
        )
        if reason:
            self._finish_seen = True
            if isinstance(reason, str):
                self.upstream_stop = reason
            text = {k: v for k, v in kept.items() if k in _TEXT_KEYS}
            if any(text.values()):
                now = dict(chunk)
                now["choices"] = [{**choice, "delta": {**kept}, "finish_reason": None}]
                now.pop("usage", None)
                out.append(sse_event(compact_json(now), name))
                kept = {}
            held = dict(chunk)
            held["choices"] = [
                {**c, "delta": kept} if c is choice else c for c in choices if isinstance(c, dict)
            ]
            self._hold((name, compact_json(held)))
            return
        nothing = not kept or (self.text_calls and _empty(kept))
        if nothing and len(choices) == 1 and not chunk.get("usage"):
            return  # only tool-call pieces (or markup): nothing to send now
        now = dict(chunk)
        now["choices"] = [{**c, "delta": kept} if c is choice else c for c in choices]
        out.append(sse_event(compact_json(now), name))

    def _with_text(self, delta: dict[str, Any], text: str, reasoning: str) -> dict[str, Any]:
        """``delta`` with the content and reasoning the text-call stage released for it
        (the same object when they are what the upstream sent)."""
        key = self._reasoning_key
        if "reasoning" in delta and "reasoning_content" not in delta:
            key = self._reasoning_key = "reasoning"
        content, thought = delta.get("content"), delta.get(key)
        if (content if type(content) is str else "") == text and (
            thought if type(thought) is str else ""
        ) == reasoning:
            return delta
        new = dict(delta)
        if text or type(content) is str:
            new["content"] = text
        if reasoning or type(thought) is str:
            new[key] = reasoning
        return new

    def _turn_state(self, done: Done) -> tuple[str | None, tuple[dict[str, Any], ...]]:
        message = done.messages[0] if done.messages else {}
        reasoning = message.get("reasoning_content")
        return (reasoning if isinstance(reasoning, str) else None), ()

    def _final(self, done: Done) -> list[bytes]:
        out: list[bytes] = []
        base = dict(self._template)
        base.setdefault("object", "chat.completion.chunk")
        text, reasoning = _late_text(self._late_pieces())
        if text or reasoning:  # held by the text-call stage until the end
            late: dict[str, Any] = {}
            if reasoning:
                late[self._reasoning_key] = reasoning
            if text:
                late["content"] = text
                self._text_sent = True
            chunk = {**base, "choices": [{"index": 0, "delta": late, "finish_reason": None}]}
            out.append(sse_event(compact_json(chunk)))
        index = 0
        for verdict in self.verdicts:
            if isinstance(verdict, ToolCallReady):
                arguments = self._arguments(verdict)
                if self._legacy:
                    delta: dict[str, Any] = {
                        "function_call": {"name": verdict.name, "arguments": arguments}
                    }
                else:
                    delta = {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": verdict.call_id,
                                "type": "function",
                                "function": {"name": verdict.name, "arguments": arguments},
                            }
                        ]
                    }
                index += 1
                chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
                out.append(sse_event(compact_json(chunk)))
        for verdict in notice_verdicts(self.verdicts):
            text = notice_text(verdict)
            if self._text_sent:
                text = "\n\n" + text
            self._text_sent = True
            delta = {"content": text}
            chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            out.append(sse_event(compact_json(chunk)))
        tool = "function_call" if self._legacy else "tool_calls"
        stop = closing_stop(
            self.upstream_stop, self.verdicts, tool=tool, length="length", stop="stop"
        )
        if not self._finish_seen and stop == tool and index:
            # No stop reason came (OpenRouter sends none), but calls were sent: say so,
            # or a harness that runs calls only on `tool_calls` drops them.
            delta = {"index": 0, "delta": {}, "finish_reason": tool}
            out.append(sse_event(compact_json({**base, "choices": [delta]})))
        for name, data in self.tail.events:
            if stop != self.upstream_stop and '"finish_reason"' in data:
                data = _with_finish(data, stop)
            out.append(sse_event(data, name))
        return out


def _empty(delta: dict[str, Any]) -> bool:
    """Whether a delta carries nothing (no key, or only empty text and nulls)."""
    return all(value is None or value == "" for value in delta.values())


def _late_text(pieces: list[tuple[bool, str]]) -> tuple[str, str]:
    text = "".join(t for r, t in pieces if not r)
    reasoning = "".join(t for r, t in pieces if r)
    return text, reasoning


def _with_finish(data: str, stop: str | None) -> str:
    try:
        chunk = json.loads(data)
    except ValueError:
        return data
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    if not isinstance(choices, list):
        return data
    for choice in choices:
        if (
            isinstance(choice, dict)
            and (choice.get("index") or 0) == 0
            and choice.get("finish_reason")
        ):
            choice["finish_reason"] = stop
    return compact_json(chunk)
