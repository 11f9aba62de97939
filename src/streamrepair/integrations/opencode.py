"""OpenCode: a plugin that repairs tool arguments through one long-lived helper process.

OpenCode loads JavaScript plugins from ``~/.config/opencode/plugins/`` (or a project's
``.opencode/plugins/``). Its ``tool.execute.before`` hook receives ``{tool, sessionID,
callID}`` and ``{args}``, and may change the arguments (in place: a reassigned
``output.args`` is ignored) or throw to stop the call; ``tool.execute.after`` receives
``{tool, sessionID, callID, args}`` and ``{title, output, metadata}`` (an MCP tool's
result is ``{content}``) and may change what the model reads. Measured with OpenCode
1.18.33: ``tool.execute.before`` gets the model's arguments JSON-parsed and nothing
else (no coercion), and OpenCode validates them against the tool's schema only
afterwards; arguments that do not parse never reach it (OpenCode turns the call into
its ``invalid`` tool first).

The plugin (``opencode_plugin.js``, written by ``streamrepair install opencode``) keeps
**one** ``streamrepair serve opencode`` process per OpenCode process and speaks JSON
lines with it over stdio; it restarts the helper if it dies (at most
``MAX_RESTARTS`` times) and passes arguments through untouched when the helper is
unavailable or slow. It never starts a process per tool call.

This module is the helper's sans-IO core, :class:`OpenCodeHelper`: one request object in,
one response object out. Requests and responses (one JSON object per line, ``id``
echoed):

* ``{"op": "hello"}`` -> ``{"ok": true, "protocol": 1, "version": ...}``
* ``{"op": "before", "tool", "sessionID", "callID", "args", "model"?}`` ->
  ``{"action": "pass"}``, ``{"action": "rewrite", "args": {...}, "notes": "..."}`` (run
  these arguments; prepend ``notes`` to the tool output) or ``{"action": "reject",
  "message": "..."}`` (throw: the model reads the message as the tool error)
* ``{"op": "after", "tool", "sessionID", "callID", "error"?}`` -> ``{"ok": true}``
  (records the result)
* ``{"op": "schema", "tool", "schema"}`` -> ``{"ok": true}``: a tool's JSON schema as
  OpenCode reported it (``client.tool.list``: exactly what it sends the model; or
  ``tool.definition``'s ``jsonSchema``), used before the built-in one
* ``{"op": "model", "sessionID", "model"}`` -> ``{"ok": true}``: the session's model
* anything else -> ``{"error": "..."}``, which the plugin treats as ``pass``.
"""

from __future__ import annotations

import collections
import json
from collections.abc import Mapping
from importlib import resources
from typing import Any, Final

from .._version import __version__
from ..telemetry.log import TelemetryLog
from ..telemetry.record import Outcome, TelemetryRecord
from .builtin_schemas import OPENCODE_ALIASES, OPENCODE_SCHEMAS
from .calls import Decision, inspect_call, resolve_model
from .hooks import HookSettings

__all__ = [
    "COMMAND_PLACEHOLDER",
    "HARNESS",
    "MAX_LEARNT_SCHEMAS",
    "MAX_NOTES_PER_SESSION",
    "MAX_SESSIONS",
    "PROTOCOL",
    "OpenCodeHelper",
    "plugin_source",
]

#: The harness name in telemetry.
HARNESS: Final = "opencode"
#: Version of the JSON-lines protocol.
PROTOCOL: Final = 1
#: Most tool schemas learnt from ``schema`` requests.
MAX_LEARNT_SCHEMAS: Final = 512
#: Most sessions whose model and notes are remembered (least recently used dropped).
MAX_SESSIONS: Final = 256
#: Most note blocks remembered per session (to avoid repeating a lesson).
MAX_NOTES_PER_SESSION: Final = 32
#: The text in the plugin template replaced by the helper command (a JSON array).
COMMAND_PLACEHOLDER: Final = '["streamrepair", "serve", "opencode"]'
_PLUGIN_FILE: Final = "opencode_plugin.js"


def plugin_source(command: list[str] | None = None) -> str:
    """The plugin file's text, starting the helper with ``command`` (an argv list;
    default ``streamrepair serve opencode`` from ``PATH``)."""
    text = resources.files("streamrepair.integrations").joinpath(_PLUGIN_FILE).read_text("utf-8")
    if command is not None:
        text = text.replace(COMMAND_PLACEHOLDER, json.dumps(command), 1)
    return text


class _Session:
    __slots__ = ("model", "notes")

    def __init__(self) -> None:
        self.model = ""
        self.notes: collections.deque[str] = collections.deque(maxlen=MAX_NOTES_PER_SESSION)


class OpenCodeHelper:
    """The helper's state: schemas learnt from OpenCode, each session's model and the
    notes already shown in it, and the telemetry log. :meth:`handle` never raises for a
    bad request; it answers with an ``error``."""

    def __init__(
        self, settings: HookSettings | None = None, *, telemetry: TelemetryLog | None = None
    ) -> None:
        self.settings = settings if settings is not None else HookSettings()
        self.telemetry = telemetry
        self._learnt: dict[str, Mapping[str, Any]] = {}
        self._sessions: collections.OrderedDict[str, _Session] = collections.OrderedDict()

    def _session(self, session_id: str) -> _Session:
        session = self._sessions.pop(session_id, None) or _Session()
        self._sessions[session_id] = session
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return session

    def handle(self, request: Any) -> dict[str, Any]:
        """Answer one request (see the module docstring)."""
        if not isinstance(request, dict):
            return {"id": None, "error": "a request must be a JSON object"}
        reply: dict[str, Any] = {"id": request.get("id")}
        op = request.get("op")
        handler = {
            "hello": self._hello,
            "before": self._before,
            "after": self._after,
            "schema": self._schema,
            "model": self._model,
        }.get(op if isinstance(op, str) else "")
        if handler is None:
            reply["error"] = f"unknown op {op!r}"
            return reply
        try:
            reply.update(handler(request))
        except Exception as exc:  # the plugin passes the call through on any error
            reply["error"] = f"{type(exc).__name__}: {exc}"
        return reply

    def _hello(self, request: Mapping[str, Any]) -> dict[str, Any]:
        return {"ok": True, "protocol": PROTOCOL, "version": __version__}

    def _model(self, request: Mapping[str, Any]) -> dict[str, Any]:
        session_id = _text(request, "sessionID")
        model = resolve_model(request.get("model"), None, {})
        if session_id and model:
            self._session(session_id).model = model
        return {"ok": True}

    def _schema(self, request: Mapping[str, Any]) -> dict[str, Any]:
        tool = _text(request, "tool")
        schema = request.get("schema")
        if not tool or not isinstance(schema, dict):
            return {"error": "a schema request needs a tool name and a schema object"}
        if tool in self._learnt or len(self._learnt) < MAX_LEARNT_SCHEMAS:
            self._learnt[tool] = schema
            return {"ok": True}
        return {"ok": False, "error": f"more than {MAX_LEARNT_SCHEMAS} tool schemas"}

    def _before(self, request: Mapping[str, Any]) -> dict[str, Any]:
        tool = _text(request, "tool")
        session_id = _text(request, "sessionID")
        session = self._session(session_id) if session_id else _Session()
        if isinstance(request.get("model"), str) and request["model"]:
            session.model = request["model"]
        model = resolve_model(session.model, self.settings.model, self.settings.environ)
        if tool in self.settings.schemas:
            schema: Any = self.settings.schemas[tool]
        elif tool in self._learnt:
            schema = self._learnt[tool]
        elif self.settings.builtin_schemas:
            schema = OPENCODE_SCHEMAS.get(tool)
        else:
            schema = None
        aliases = OPENCODE_ALIASES.get(tool) if self.settings.builtin_schemas else None
        verdict = inspect_call(
            tool,
            request.get("args"),
            schema=schema,
            aliases=aliases,
            profiles=self.settings.profiles_for(model),
        )
        self._write(
            verdict.record(
                harness=HARNESS, model=model, session=session_id, call_id=_text(request, "callID")
            )
        )
        if verdict.decision is Decision.REJECT:
            return {"action": "reject", "message": verdict.feedback()}
        if verdict.decision is Decision.PASS:
            return {"action": "pass"}
        notes = verdict.model_notes(history=session.notes)
        if notes:
            session.notes.append(notes)
        return {"action": "rewrite", "args": verdict.arguments, "notes": notes}

    def _after(self, request: Mapping[str, Any]) -> dict[str, Any]:
        session_id = _text(request, "sessionID")
        session = self._sessions.get(session_id)
        model = resolve_model(
            session.model if session is not None else None,
            self.settings.model,
            self.settings.environ,
        )
        self._write(
            TelemetryRecord(
                harness=HARNESS,
                tool=_text(request, "tool"),
                outcome=Outcome.FAILED if request.get("error") is True else Outcome.SUCCEEDED,
                model=model,
                event="result",
                session=session_id,
                call_id=_text(request, "callID"),
            )
        )
        return {"ok": True}

    def _write(self, record: TelemetryRecord) -> None:
        if self.telemetry is not None:
            self.telemetry.write(record)


def _text(request: Mapping[str, Any], key: str) -> str:
    value = request.get(key)
    return value if isinstance(value, str) else ""
