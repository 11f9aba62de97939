"""Claude Code hook: repair tool arguments before they run (``streamrepair hook claude-code``).

Protocol (Claude Code hooks reference, https://code.claude.com/docs/en/hooks):

* The hook gets the event payload on stdin: ``session_id``, ``transcript_path``, ``cwd``,
  ``permission_mode``, ``hook_event_name`` and, for tool events, ``tool_name``,
  ``tool_input``, ``tool_use_id`` (``tool_response`` after the tool ran).
* A ``PreToolUse`` hook answers on stdout, exit 0, with ``hookSpecificOutput``:
  ``updatedInput`` replaces the whole input, ``permissionDecision`` ``"allow"`` /
  ``"deny"`` / ``"ask"`` overrides the permission flow, ``additionalContext`` is added to
  the model's context.
* ``PostToolUse`` runs after a tool succeeded (``PostToolUseFailure`` after it failed).

What reaches this seam (measured with Claude Code 2.1.332, docs/integrations/claude-code.md):
for a built-in tool, only input that already passed Claude Code's JSON parse, its schema
check (which coerces ``"10"`` to 10 and rejects nulls, renamed keys and wrong types before
any hook runs) and its path normalisation (``path.resolve``-like, so a markdown-linked path
``[a.md](http://a.md)`` arrives as ``<cwd>/[a.md](http:/a.md)``). For an MCP tool, what the
model sent, with some types coerced and nothing rejected. An ``updatedInput`` is checked
against the tool's schema again.

What this hook answers:

* nothing to repair (or nothing it can read): ``{}``, the call proceeds unchanged;
* repaired and valid: the **whole** repaired input as ``updatedInput`` and the repair
  notes for the model as ``additionalContext``; the permission decision follows the
  policy (:class:`~.hooks.Permission`): by default none, so Claude Code's own rules and
  prompts decide about the repaired call as they would have about the original;
* still invalid after repair: ``"deny"`` with the model-readable feedback;
* ``PostToolUse`` / ``PostToolUseFailure``: prints nothing; records the result.

Schemas: the built-in tools' (loose) schemas are in :mod:`.builtin_schemas`; an MCP tool's
schema comes from ``--schemas`` or, failing that, from the request Claude Code recorded in
the session transcript (:mod:`.transcript`; an undocumented record, read defensively).

The tool-repair skill's adapter could only block (wasting a turn) and used its own
``{"tool", "input"}`` envelope, so its hook passed every real Claude Code payload.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..telemetry.record import Outcome, TelemetryRecord
from .builtin_schemas import CLAUDE_CODE_ALIASES, CLAUDE_CODE_SCHEMAS
from .calls import CallVerdict, Decision, inspect_call, skipped_verdict
from .hooks import (
    HookAnswer,
    HookSettings,
    Permission,
    call_record,
    dispatch,
    dumps_line,
    pass_through,
    payload_text,
)

__all__ = [
    "HARNESS",
    "MCP_PREFIX",
    "claude_code_hook",
    "permission_for",
    "post_tool_result",
]

#: The harness name in telemetry.
HARNESS: Final = "claude-code"
#: Prefix of the tools Claude Code does not schema-check (``mcp__<server>__<tool>``).
MCP_PREFIX: Final = "mcp__"


def permission_for(
    tool: str, arguments: Mapping[str, Any], payload: Mapping[str, Any], policy: Permission
) -> str:
    """The ``permissionDecision`` attached to repaired ``arguments``: ``""`` (none:
    Claude Code's own rules decide) for :attr:`Permission.AUTO`, else ``"allow"`` or
    ``"ask"``. ``tool``, ``arguments`` and ``payload`` are accepted for callers of the
    earlier signature; the decision no longer depends on them."""
    if policy is Permission.ALLOW:
        return "allow"
    if policy is Permission.ASK:
        return "ask"
    return ""


def _decision(
    decision: str, reason: str, *, updated: Any = None, context: str = ""
) -> dict[str, Any]:
    output: dict[str, Any] = {"hookEventName": "PreToolUse"}
    if decision:
        output["permissionDecision"] = decision
        output["permissionDecisionReason"] = reason
    if updated is not None:
        output["updatedInput"] = updated
    if context:
        output["additionalContext"] = context
    return {"hookSpecificOutput": output}


def _schema(
    tool: str, payload: Mapping[str, Any], settings: HookSettings
) -> tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]:
    schema, aliases = settings.schema_for(tool, CLAUDE_CODE_SCHEMAS, CLAUDE_CODE_ALIASES)
    if schema is None and settings.transcript_schemas and tool.startswith(MCP_PREFIX):
        from .transcript import request_tool_schemas  # only for an MCP call

        sent = request_tool_schemas(
            payload_text(payload, "transcript_path"), payload_text(payload, "tool_use_id")
        )
        schema = sent.get(tool) if sent else None
    return schema, aliases


def _summary(verdict: CallVerdict) -> str:
    places = [f"{r.rule.value} at {r.location}" for r in verdict.profile_repairs]
    places += [f"{n.rule.value} at {n.location}" for n in verdict.notes]
    shown = ", ".join(places[:5]) + (f" and {len(places) - 5} more" if len(places) > 5 else "")
    return f"streamrepair repaired the arguments of {verdict.tool}: {shown}"


def _pre_tool_use(payload: Mapping[str, Any], settings: HookSettings) -> HookAnswer:
    tool = payload_text(payload, "tool_name")
    model = settings.model_for(payload)
    if not tool:
        verdict = skipped_verdict("", payload.get("tool_input"), "no tool_name")
        answer = pass_through("the payload has no tool_name")
        return _with_record(answer, call_record(verdict, payload, harness=HARNESS, model=model))
    schema, aliases = _schema(tool, payload, settings)
    verdict = inspect_call(
        tool,
        payload.get("tool_input"),
        schema=schema,
        aliases=aliases,
        profiles=settings.profiles_for(model),
    )
    if verdict.skipped:
        answer = pass_through(f"{verdict.skipped} in the {tool} call")
        return _with_record(answer, call_record(verdict, payload, harness=HARNESS, model=model))
    if verdict.decision is Decision.PASS:
        record = call_record(verdict, payload, harness=HARNESS, model=model)
        return HookAnswer(stdout="{}", record=record)
    if verdict.decision is Decision.REJECT:
        out = _decision("deny", verdict.feedback())
        record = call_record(verdict, payload, harness=HARNESS, model=model)
        return HookAnswer(stdout=dumps_line(out), record=record)
    decision = permission_for(tool, verdict.arguments, payload, settings.permission)
    out = _decision(
        decision, _summary(verdict), updated=verdict.arguments, context=verdict.model_notes()
    )
    record = call_record(verdict, payload, harness=HARNESS, model=model)
    return HookAnswer(stdout=dumps_line(out), record=record)


def _with_record(answer: HookAnswer, record: TelemetryRecord) -> HookAnswer:
    return HookAnswer(
        stdout=answer.stdout, stderr=answer.stderr, exit_code=answer.exit_code, record=record
    )


def post_tool_result(
    payload: Mapping[str, Any], settings: HookSettings, *, harness: str
) -> HookAnswer:
    """A ``PostToolUse``/``PostToolUseFailure`` payload: print nothing, record the
    result (shared with the DeepSeek Harness adapter)."""
    tool = payload_text(payload, "tool_name")
    failed = payload.get("hook_event_name") == "PostToolUseFailure"
    response = payload.get("tool_response")
    if isinstance(response, Mapping) and (
        response.get("is_error") is True or response.get("isError") is True
    ):
        failed = True
    record = TelemetryRecord(
        harness=harness,
        tool=tool,
        outcome=Outcome.FAILED if failed else Outcome.SUCCEEDED,
        model=settings.model_for(payload),
        event="result",
        session=payload_text(payload, "session_id"),
        call_id=payload_text(payload, "tool_use_id"),
    )
    return HookAnswer(stdout="", record=record if tool else None)


def claude_code_hook(payload: Any, settings: HookSettings | None = None) -> HookAnswer:
    """Answer one Claude Code hook payload (any JSON value; see the module docstring).
    Never raises for bad input: what it cannot read passes through with a stderr line."""
    settings = settings if settings is not None else HookSettings()
    return dispatch(
        payload,
        settings,
        pre_tool_use=_pre_tool_use,
        post_tool_use=lambda p, s: post_tool_result(p, s, harness=HARNESS),
    )
