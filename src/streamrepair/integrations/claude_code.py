"""Claude Code hook: repair tool arguments before they run (``streamrepair hook claude-code``).

Protocol (Claude Code hooks reference, https://code.claude.com/docs/en/hooks):

* The hook gets the event payload on stdin: ``session_id``, ``transcript_path``, ``cwd``,
  ``permission_mode``, ``hook_event_name`` and, for tool events, ``tool_name``,
  ``tool_input``, ``tool_use_id`` (``tool_response`` after the tool ran).
* A ``PreToolUse`` hook answers on stdout, exit 0, with ``hookSpecificOutput``:
  ``permissionDecision`` ``"allow"`` (skips the permission prompt), ``"deny"`` (the call
  does not run; ``permissionDecisionReason`` is shown to Claude) or ``"ask"`` (the user
  confirms; the reason is shown to the user). ``updatedInput`` "modifies the tool's input
  parameters before execution. Replaces the entire input object", combined with
  ``"allow"`` or ``"ask"``. ``additionalContext`` is added to Claude's context.
* ``PostToolUse`` runs after a tool succeeded (``PostToolUseFailure`` after it failed).

What this hook answers:

* nothing to repair (or nothing it can read): ``{}``, the call proceeds unchanged;
* repaired and valid: the **whole** repaired input as ``updatedInput`` with ``"allow"``
  where Claude Code would not have prompted anyway (read-only tools and paths inside the
  project; edit tools in ``acceptEdits`` mode; ``bypassPermissions``) and ``"ask"``
  elsewhere, so a repair never skips a prompt the user would have seen; in ``dontAsk``
  mode (where "ask" means deny) it denies with guidance instead. The repair notes go to
  the model as ``additionalContext``;
* still invalid after repair: ``"deny"`` with the model-readable feedback;
* ``PostToolUse`` / ``PostToolUseFailure``: prints nothing; records the result.

The tool-repair skill's adapter could only block (wasting a turn) and used its own
``{"tool", "input"}`` envelope, so its hook passed every real Claude Code payload.
"""

from __future__ import annotations

import os
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
    "claude_code_hook",
    "permission_for",
    "post_tool_result",
]

#: The harness name in telemetry.
HARNESS: Final = "claude-code"
# Tools Claude Code runs without a permission prompt (read-only, or bookkeeping).
_NO_PROMPT_TOOLS: Final = frozenset(
    {"Read", "Glob", "Grep", "LS", "NotebookRead", "TodoWrite", "Task", "Agent", "BashOutput"}
)
# Tools ``acceptEdits`` mode approves for paths in the working directories.
_EDIT_TOOLS: Final = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
_PATH_FIELDS: Final = ("file_path", "path", "notebook_path")


def _inside(path: str, cwd: str) -> bool:
    if not cwd or not os.path.isabs(cwd):
        return False
    root = os.path.normpath(cwd)
    target = os.path.normpath(os.path.join(root, path))
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


def _paths_inside(arguments: Mapping[str, Any], cwd: str) -> bool:
    return all(
        _inside(arguments[name], cwd)
        for name in _PATH_FIELDS
        if isinstance(arguments.get(name), str)
    )


def permission_for(
    tool: str, arguments: Mapping[str, Any], payload: Mapping[str, Any], policy: Permission
) -> str:
    """The ``permissionDecision`` for repaired ``arguments``: ``"allow"``, ``"ask"``, or
    ``"deny"`` (``dontAsk`` mode, where an "ask" is a denial without a reason the model
    sees). See the module docstring for the ``AUTO`` policy."""
    if policy is Permission.ALLOW:
        return "allow"
    if policy is Permission.ASK:
        return "ask"
    mode = payload_text(payload, "permission_mode")
    cwd = payload_text(payload, "cwd")
    if mode == "bypassPermissions":
        return "allow"
    if tool in _NO_PROMPT_TOOLS and _paths_inside(arguments, cwd):
        return "allow"
    if mode == "acceptEdits" and tool in _EDIT_TOOLS and _paths_inside(arguments, cwd):
        return "allow"
    if mode == "dontAsk":
        return "deny"
    return "ask"


def _decision(
    decision: str, reason: str, *, updated: Any = None, context: str = ""
) -> dict[str, Any]:
    output: dict[str, Any] = {
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    }
    if updated is not None:
        output["updatedInput"] = updated
    if context:
        output["additionalContext"] = context
    return {"hookSpecificOutput": output}


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
    schema, aliases = settings.schema_for(tool, CLAUDE_CODE_SCHEMAS, CLAUDE_CODE_ALIASES)
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
    if decision == "deny":
        out = _decision("deny", verdict.guidance())
        record = call_record(verdict, payload, harness=HARNESS, model=model, denied_repairs=True)
        return HookAnswer(stdout=dumps_line(out), record=record)
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
