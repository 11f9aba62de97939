"""Repairs carried from dispatch to the tool result, for a loop shaped like Hermes's.

For Hermes Agent itself use the plugin (:mod:`.hermes_plugin`, ``streamrepair install
hermes``): it sits on Hermes's pre-dispatch seam. The two edits the tool-repair skill
asks for, which this class was first written for, are in the wrong places (measured in
hermes-agent 0.19.0): ``sanitize_tool_call_arguments`` runs over the history while the
*next* request is built, after the previous response's tools already ran, so it cannot
stop a call; ``make_tool_result_message(name, content, tool_call_id, *,
effect_disposition=None)`` gets no history and its ``content`` may be a list of parts.

:class:`HermesRepairs` remains for a harness of one's own with the same two points (a
place where a parsed call can be rewritten before it runs, and one where its string
result is built), keyed by tool-call id, in bounded memory:

* :meth:`HermesRepairs.repair_call` before dispatch: repairs one OpenAI-format tool call
  (``{"id", "function": {"name", "arguments"}}``) in place, writing the repaired JSON
  back only when something changed, and says whether it may be dispatched;
* :meth:`HermesRepairs.result_content` where the result is built: the tool result with
  the notes appended once per conversation (or, for a call that must not run, the
  feedback);
* :meth:`HermesRepairs.observe` is the better path: feed it the stream layer's events
  (``iter_events(stream, tools=tools)``), so a truncated or unrepairable call is never
  dispatched at all and a ready call's schema repairs are noted the same way.
"""

from __future__ import annotations

import collections
import json
from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any, Final

from ..events import StreamEvent, ToolCallReady, ToolCallRejected
from ..schema.profiles import select_profiles
from ..schema.report import RepairNote
from ..telemetry.log import TelemetryLog
from .calls import CallVerdict, Decision, inspect_call

__all__ = ["HARNESS", "MAX_REMEMBERED_CALLS", "HermesRepairs"]

#: The harness name in telemetry.
HARNESS: Final = "hermes"
#: Most tool calls whose notes wait for their result message.
MAX_REMEMBERED_CALLS: Final = 1024


class HermesRepairs:
    """Repairs tool calls for a Hermes-shaped harness and remembers, per call id, the
    notes for its result message. ``schemas`` maps tool names to parameter schemas
    (``tools`` as sent to the model, reduced with
    :func:`streamrepair.schema.tools.tool_schemas`); ``profiles`` a per-model profile spec
    (off by default); ``telemetry`` gets one record per call."""

    def __init__(
        self,
        schemas: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        model: str = "",
        profiles: str | None = None,
        telemetry: TelemetryLog | None = None,
    ) -> None:
        self.schemas = dict(schemas or {})
        self.model = model
        self.profiles = select_profiles(profiles, model)
        self.telemetry = telemetry
        self._calls: collections.OrderedDict[str, tuple[CallVerdict | None, str]] = (
            collections.OrderedDict()
        )

    def _remember(self, call_id: str, verdict: CallVerdict | None, refusal: str) -> None:
        if not call_id or (not refusal and (verdict is None or not verdict.repair_count)):
            return
        self._calls[call_id] = (verdict, refusal)
        self._calls.move_to_end(call_id)
        while len(self._calls) > MAX_REMEMBERED_CALLS:
            self._calls.popitem(last=False)

    def repair_call(self, tool_call: MutableMapping[str, Any]) -> bool:
        """Repair one tool call in place; ``False`` when it must not be dispatched (its
        arguments stay invalid: answer it with :meth:`result_content`).

        ``tool_call["function"]["arguments"]`` is replaced by the repaired JSON only when
        a repair was made, so the documented write-back (``if fixed != parsed``) happens
        exactly when needed. Calls whose arguments are not a JSON object string are left
        alone (``True``): that is for Hermes's own malformed-JSON handling.
        """
        function = tool_call.get("function")
        if not isinstance(function, MutableMapping):
            return True
        name = function.get("name")
        text = function.get("arguments")
        if not isinstance(name, str) or not isinstance(text, str):
            return True
        try:
            parsed = json.loads(text) if text.strip() else {}
        except (ValueError, RecursionError):
            return True
        raw_id = tool_call.get("id")
        call_id = raw_id if isinstance(raw_id, str) else ""
        verdict = inspect_call(name, parsed, schema=self.schemas.get(name), profiles=self.profiles)
        if self.telemetry is not None:
            self.telemetry.write(verdict.record(harness=HARNESS, model=self.model, call_id=call_id))
        if verdict.decision is Decision.REWRITE:
            function["arguments"] = json.dumps(verdict.arguments, ensure_ascii=False)
        refusal = verdict.feedback() if verdict.decision is Decision.REJECT else ""
        self._remember(call_id, verdict, refusal)
        return verdict.decision is not Decision.REJECT

    def observe(self, event: StreamEvent) -> None:
        """Remember what the stream layer decided about a call: a ready call's schema
        repairs (for its result message) or a rejected call's reason."""
        if isinstance(event, ToolCallReady):
            notes = tuple(n for n in event.schema_repairs if isinstance(n, RepairNote))
            verdict = CallVerdict(
                tool=event.name, decision=Decision.REWRITE, arguments=event.arguments, notes=notes
            )
            self._remember(event.call_id, verdict, "")
        elif isinstance(event, ToolCallRejected):
            self._remember(event.call_id, None, event.detail)
        if self.telemetry is not None:
            self.telemetry.observe(event, model=self.model)

    def refusal(self, tool_call_id: str) -> str:
        """Why the call must not run (``""`` when it may)."""
        entry = self._calls.get(tool_call_id)
        return entry[1] if entry is not None else ""

    def result_content(
        self,
        tool_call_id: str,
        content: str,
        *,
        history: Iterable[str | Mapping[str, Any]] = (),
    ) -> str:
        """The tool result to send: for a refused call its feedback; otherwise
        ``content`` with the call's repair notes appended, unless ``history`` (the
        conversation so far) already taught the same lesson for the same tool. Each
        call's notes are used once."""
        entry = self._calls.pop(tool_call_id, None)
        if entry is None:
            return content
        verdict, refusal = entry
        if refusal or verdict is None:
            return refusal
        block = verdict.model_notes(history=[content, *history])
        return f"{content}\n\n{block}" if content and block else (content or block)
