"""Hermes Agent plugin: repair tool arguments on the seam that runs before dispatch.

``streamrepair install hermes`` writes a directory plugin into ``$HERMES_HOME/plugins``
whose ``register(ctx)`` is :func:`register`; Hermes loads it when it is listed in
``plugins.enabled`` (``hermes plugins enable streamrepair``). streamrepair must be
importable by Hermes's own Python.

The seams, as measured in hermes-agent 0.19.0 (docs/integrations/hermes.md):

* ``tool_request`` middleware runs once per call after Hermes parsed the arguments
  (``json.loads``, which must give a dict) and before ``pre_tool_call``, guardrails,
  approval, Hermes's own type coercion (``coerce_tool_args``) and the tool; a return of
  ``{"args": {...}}`` replaces the arguments for every later step. Here the call is
  decided by :func:`~.calls.inspect_call` against the tool's registered parameter schema
  (what the model was sent; ``$STREAMREPAIR_SCHEMAS`` first): repaired arguments are
  returned, valid ones never touched.
* ``pre_tool_call`` can only veto: a call still invalid after every repair is blocked
  with the feedback as its result (``STREAMREPAIR_HERMES_BLOCK=0`` lets it run).
* ``transform_tool_result`` gets the tool's result (a string, or the multimodal
  envelope ``{"_multimodal": True, ...}``) and may replace it with a string: the repair
  notes are appended to a string result, each lesson once per session; a multimodal
  result is left exactly as it is (``None``).
* ``llm_execution`` middleware (``STREAMREPAIR_HERMES_TEXT``, on by default) wraps the
  provider call. On a non-streamed response it sees each call's argument text before
  Hermes's JSON check (which re-sends the same request twice, then answers "Invalid JSON
  arguments"): text that :func:`~streamrepair.repair` fixes without inventing structure
  is replaced by the repaired JSON; a cut-off call is left for Hermes to refuse. On a
  streamed response Hermes has already run its own repair before this seam.

Every callback fails open: an exception is logged and Hermes goes on as if the plugin
were absent. State (notes waiting for their result, refusals, lessons taught) is bounded
and locked: Hermes runs concurrent tool calls on threads.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from ..telemetry.log import TelemetryLog
from ..telemetry.record import (
    ARGUMENTS_ENV,
    Outcome,
    TelemetryRecord,
    flag_from_env,
    telemetry_path_from_env,
)
from .calls import CallVerdict, Decision, inspect_call, load_schema_files, resolve_model

__all__ = [
    "BLOCK_ENV",
    "HARNESS",
    "MAX_PENDING_CALLS",
    "MAX_SESSIONS",
    "SOURCE",
    "TEXT_ENV",
    "HermesPlugin",
    "register",
]

#: The harness name in telemetry.
HARNESS: Final = "hermes"
#: The ``source`` Hermes records in its middleware trace.
SOURCE: Final = "streamrepair"
#: ``0`` lets a call that stays invalid after repair run anyway (default: blocked).
BLOCK_ENV: Final = "STREAMREPAIR_HERMES_BLOCK"
#: ``0`` turns off the repair of argument text on non-streamed responses.
TEXT_ENV: Final = "STREAMREPAIR_HERMES_TEXT"
#: Most calls whose notes or refusal wait for their result.
MAX_PENDING_CALLS: Final = 1024
#: Most sessions whose lessons and model are remembered.
MAX_SESSIONS: Final = 256
# Hermes's ``status`` values that mean the tool did not succeed.
_FAILED_STATUSES: Final = frozenset({"error", "failed", "failure", "blocked", "timeout"})

_log = logging.getLogger("streamrepair.hermes")


def _switch(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "1").strip().lower() not in {"0", "false", "no", "off"}


def _registry_schema(tool: str) -> Mapping[str, Any] | None:
    """The parameter schema Hermes registered for ``tool`` (what the model was sent)."""
    try:
        from tools.registry import registry  # type: ignore[import-not-found]  # Hermes's

        entry = registry.get_schema(tool)
    except Exception:
        return None
    parameters = entry.get("parameters") if isinstance(entry, Mapping) else None
    return parameters if isinstance(parameters, Mapping) else None


class _Pending:
    __slots__ = ("refusal", "session", "syntax", "tool", "verdict")

    def __init__(self) -> None:
        self.verdict: CallVerdict | None = None
        self.syntax: tuple[Any, ...] = ()
        self.refusal = ""
        self.session = ""
        self.tool = ""


class HermesPlugin:
    """The plugin's state and callbacks (see the module docstring). ``schema_for`` looks
    up a tool's parameter schema (default: Hermes's tool registry); ``environ`` holds the
    settings; ``telemetry`` gets one record per call and per result."""

    def __init__(
        self,
        *,
        environ: Mapping[str, str] | None = None,
        schema_for: Callable[[str], Mapping[str, Any] | None] = _registry_schema,
        telemetry: TelemetryLog | None = None,
    ) -> None:
        env = dict(os.environ if environ is None else environ)
        self.environ = env
        self.schema_for = schema_for
        self.block = _switch(env, BLOCK_ENV)
        self.text = _switch(env, TEXT_ENV)
        self.profiles = env.get("STREAMREPAIR_PROFILES") or None
        self.schemas: dict[str, Mapping[str, Any]] = {}
        schema_file = env.get("STREAMREPAIR_SCHEMAS", "")
        if schema_file:
            try:
                self.schemas = load_schema_files(schema_file)
            except (OSError, ValueError) as exc:
                _log.warning("streamrepair: schemas not loaded (%s)", exc)
        self.telemetry = telemetry
        self._lock = threading.Lock()
        self._calls: collections.OrderedDict[str, _Pending] = collections.OrderedDict()
        self._taught: collections.OrderedDict[str, list[str]] = collections.OrderedDict()
        self._models: collections.OrderedDict[str, str] = collections.OrderedDict()

    # -- bounded stores --------------------------------------------------------------

    def _pending(self, call_id: str) -> _Pending:
        entry = self._calls.pop(call_id, None) or _Pending()
        self._calls[call_id] = entry
        while len(self._calls) > MAX_PENDING_CALLS:
            self._calls.popitem(last=False)
        return entry

    def _lessons(self, session: str) -> list[str]:
        """The note blocks already given in ``session`` (most recent sessions kept)."""
        taught = self._taught.pop(session, None)
        taught = [] if taught is None else taught
        self._taught[session] = taught
        while len(self._taught) > MAX_SESSIONS:
            self._taught.popitem(last=False)
        return taught

    def _remember_model(self, session: str, model: str) -> None:
        self._models.pop(session, None)
        self._models[session] = model
        while len(self._models) > MAX_SESSIONS:
            self._models.popitem(last=False)

    def _model(self, session: str) -> str:
        with self._lock:
            known = self._models.get(session, "")
        return resolve_model(known, None, self.environ)

    def _write(self, record: TelemetryRecord) -> None:
        if self.telemetry is not None:
            self.telemetry.write(record)

    # -- tool_request middleware -----------------------------------------------------

    def on_tool_request(
        self,
        *,
        tool_name: str = "",
        args: Any = None,
        tool_call_id: str = "",
        session_id: str = "",
        **_context: Any,
    ) -> dict[str, Any] | None:
        """The repaired arguments (``{"args": ..., "source", "reason"}``), or ``None``."""
        try:
            return self._tool_request(tool_name, args, tool_call_id, session_id)
        except Exception as exc:  # never break dispatch
            _log.warning("streamrepair: %s not inspected: %s", tool_name, exc)
            return None

    def _tool_request(
        self, tool: str, args: Any, call_id: str, session: str
    ) -> dict[str, Any] | None:
        if not isinstance(tool, str) or not isinstance(args, dict):
            return None
        schema = self.schemas.get(tool) or self.schema_for(tool)
        model = self._model(session)
        if self.profiles:
            from ..schema.profiles import select_profiles  # off by default

            profiles = select_profiles(self.profiles, model)
        else:
            profiles = ()
        verdict = inspect_call(tool, args, schema=schema, profiles=profiles)
        self._write(verdict.record(harness=HARNESS, model=model, session=session, call_id=call_id))
        if call_id:
            with self._lock:
                entry = self._pending(call_id)
                entry.session, entry.tool = session, tool
                if verdict.decision is Decision.REJECT and self.block:
                    entry.refusal = verdict.feedback()
                elif verdict.decision is Decision.REWRITE:
                    entry.verdict = verdict
        if verdict.decision is not Decision.REWRITE:
            return None
        places = [f"{r.rule.value} at {r.location}" for r in verdict.profile_repairs]
        places += [f"{n.rule.value} at {n.location}" for n in verdict.notes]
        return {"args": verdict.arguments, "source": SOURCE, "reason": ", ".join(places)}

    # -- pre_tool_call hook ----------------------------------------------------------

    def on_pre_tool_call(self, *, tool_call_id: str = "", **_context: Any) -> dict[str, str] | None:
        """``{"action": "block", "message": feedback}`` for a call that stays invalid."""
        if not tool_call_id:
            return None
        with self._lock:
            entry = self._calls.get(tool_call_id)
            refusal = entry.refusal if entry is not None else ""
            if entry is not None and refusal:
                del self._calls[tool_call_id]
        return {"action": "block", "message": refusal} if refusal else None

    # -- transform_tool_result hook --------------------------------------------------

    def on_transform_tool_result(
        self,
        *,
        tool_name: str = "",
        result: Any = None,
        tool_call_id: str = "",
        session_id: str = "",
        status: Any = None,
        error_type: Any = None,
        **_context: Any,
    ) -> str | None:
        """The string result with the call's repair notes appended (each lesson once per
        session), or ``None`` to keep the result as it is (no notes, not a string)."""
        try:
            return self._transform(tool_name, result, tool_call_id, session_id, status, error_type)
        except Exception as exc:  # never break the result
            _log.warning("streamrepair: notes for %s not added: %s", tool_name, exc)
            return None

    def _transform(
        self, tool: str, result: Any, call_id: str, session: str, status: Any, error_type: Any
    ) -> str | None:
        failed = bool(error_type) or str(status or "").lower() in _FAILED_STATUSES
        self._write(
            TelemetryRecord(
                harness=HARNESS,
                tool=tool,
                outcome=Outcome.FAILED if failed else Outcome.SUCCEEDED,
                model=self._model(session),
                event="result",
                session=session,
                call_id=call_id,
            )
        )
        if not call_id:
            return None
        with self._lock:
            entry = self._calls.pop(call_id, None)
            if entry is None or not isinstance(result, str):
                return None
            taught = self._lessons(session or entry.session or "-")
            block = self._note_block(entry, tool or entry.tool, taught)
            if block:
                taught.append(block)
        if not block:
            return None
        return f"{result}\n\n{block}" if result else block

    @staticmethod
    def _note_block(entry: _Pending, tool: str, taught: Iterable[str]) -> str:
        from ..schema.notes import append_repair_notes  # only for a repaired call

        earlier = list(taught)
        parts = []
        if entry.syntax:
            parts.append(append_repair_notes("", entry.syntax, tool, history=earlier))
        if entry.verdict is not None:
            parts.append(entry.verdict.model_notes(history=earlier))
        return "\n".join(part for part in parts if part)

    # -- llm_execution middleware ----------------------------------------------------

    def on_llm_execution(
        self,
        *,
        request: Any = None,
        next_call: Callable[[Any], Any] | None = None,
        session_id: str = "",
        model: Any = None,
        **_context: Any,
    ) -> Any:
        """The provider's response, with argument text that does not parse repaired when
        that needs no invented structure."""
        if next_call is None:
            raise TypeError("llm_execution middleware called without next_call")
        if session_id and isinstance(model, str) and model:
            with self._lock:
                self._remember_model(session_id, model)
        response = next_call(request)
        try:
            self._repair_text(response)
        except Exception as exc:  # never break the turn
            _log.warning("streamrepair: response text not repaired: %s", exc)
        return response

    def _repair_text(self, response: Any) -> None:
        from ..errors import StreamRepairError
        from ..syntax.oneshot import repair

        for choice in getattr(response, "choices", None) or ():
            message = getattr(choice, "message", None)
            for call in getattr(message, "tool_calls", None) or ():
                function = getattr(call, "function", None)
                text = getattr(function, "arguments", None)
                if function is None or not isinstance(text, str) or not text.strip():
                    continue
                try:
                    json.loads(text)
                    continue  # valid: never touched
                except ValueError:
                    pass
                try:
                    fixed = repair(text)
                except StreamRepairError:
                    continue  # unrepairable: Hermes's own handling answers it
                if fixed.structure_synthesized or not isinstance(fixed.value, dict):
                    continue  # cut off (or not an object): must not run as if finished
                function.arguments = json.dumps(fixed.value, ensure_ascii=False)
                call_id = getattr(call, "id", None)
                if isinstance(call_id, str) and call_id:
                    with self._lock:
                        self._pending(call_id).syntax = tuple(fixed.repairs)


def register(ctx: Any, *, environ: Mapping[str, str] | None = None) -> HermesPlugin:
    """Hermes's plugin entry point: register the callbacks on ``ctx`` (a Hermes
    ``PluginContext``) and return the plugin."""
    env = os.environ if environ is None else environ
    telemetry = TelemetryLog(
        telemetry_path_from_env(env),
        include_arguments=flag_from_env(ARGUMENTS_ENV, env),
        harness=HARNESS,
    )
    plugin = HermesPlugin(environ=env, telemetry=telemetry)
    ctx.register_middleware("tool_request", plugin.on_tool_request)
    ctx.register_hook("pre_tool_call", plugin.on_pre_tool_call)
    ctx.register_hook("transform_tool_result", plugin.on_transform_tool_result)
    if plugin.text:
        ctx.register_middleware("llm_execution", plugin.on_llm_execution)
    return plugin
