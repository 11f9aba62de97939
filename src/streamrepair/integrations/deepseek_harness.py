"""DeepSeek Harness hook (``streamrepair hook deepseek-harness``).

DeepSeek Harness (``dsh``) runs Claude-Code-format command hooks through its bridge
plugins: ``@deepseek-ai/dsh-hooks-claude-code`` (hooks from a Claude Code settings-style
file) and ``@deepseek-ai/dsh-hooks-codex``. The payload carries ``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, ``tool_name``, ``tool_input`` and
``tool_use_id``. On exit 0, stdout starting with ``{`` is a structured decision: a
top-level ``decision``/``reason`` and a ``hookSpecificOutput`` block naming its event. A
``PreToolUse`` deny means the call never runs and the reason goes back to the model.

Limits this adapter works within:

* **The seam cannot rewrite.** dsh's pre-tool decision is allow/deny/cancel/ask;
  ``updatedInput`` is logged and warned about but not honoured. So where Claude Code
  gets repaired input, here a repairable call is **denied with guidance**: each fix as an
  instruction, and the corrected arguments when they are short, so the retry is right
  the first time. Calls that stay invalid are denied with the schema feedback.
* **Under the Codex bridge only ``tool_input.command`` is visible** (the bridge sends
  ``{"command": commandOf(exec.arguments)}``): the hook says so on stderr on every such
  call, and checks the command against the ``command`` part of the schema only.
* dsh tool schemas are not built in (they are not published as data); pass them with
  ``--schemas FILE``. Without a schema only the rules that need none apply (markdown
  autolinks in path fields), plus any enabled per-model profile.

Answers: ``{}`` to proceed; ``{"decision": "block", "reason": ..., "hookSpecificOutput":
{"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason":
...}}`` to deny (both forms, so either reading of the output denies). The skill's adapter
printed ``{"decision": "block", "message": ...}``; ``message`` is not in the bridge's
output format, which carries the explanation in ``reason``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .calls import Decision, inspect_call, skipped_verdict
from .claude_code import post_tool_result
from .hooks import (
    Bridge,
    HookAnswer,
    HookSettings,
    call_record,
    dispatch,
    dumps_line,
    pass_through,
    payload_text,
)

__all__ = ["HARNESS", "PROJECTION_NOTE", "deepseek_harness_hook"]

#: The harness name in telemetry.
HARNESS: Final = "deepseek-harness"
#: The stderr line for a call seen through the Codex bridge's projection.
PROJECTION_NOTE: Final = (
    "streamrepair: codex bridge projection: only tool_input.command is visible; "
    "every other argument of the call was not inspected"
)


def _command_schema(schema: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The part of a tool schema that constrains ``command`` (the only visible key)."""
    if schema is None:
        return None
    properties = schema.get("properties")
    prop = properties.get("command") if isinstance(properties, Mapping) else None
    if not isinstance(prop, (Mapping, bool)):
        return None
    projected: dict[str, Any] = {"type": "object", "properties": {"command": prop}}
    required = schema.get("required")
    if isinstance(required, list) and "command" in required:
        projected["required"] = ["command"]
    return projected


def _deny(text: str) -> str:
    return dumps_line(
        {
            "decision": "block",
            "reason": text,
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": text,
            },
        }
    )


def _pre_tool_use(payload: Mapping[str, Any], settings: HookSettings) -> HookAnswer:
    tool = payload_text(payload, "tool_name")
    model = settings.model_for(payload)
    arguments = payload.get("tool_input")
    if not tool:
        verdict = skipped_verdict("", arguments, "no tool_name")
        answer = pass_through("the payload has no tool_name")
        return HookAnswer(
            stdout=answer.stdout,
            stderr=answer.stderr,
            record=call_record(verdict, payload, harness=HARNESS, model=model),
        )
    schema, aliases = settings.schema_for(tool, {}, {})
    stderr: tuple[str, ...] = ()
    projected = settings.bridge is Bridge.CODEX or (
        settings.bridge is Bridge.AUTO
        and isinstance(arguments, dict)
        and list(arguments) == ["command"]
    )
    if projected:
        stderr = (PROJECTION_NOTE,)
        schema, aliases = _command_schema(schema), None
    verdict = inspect_call(
        tool, arguments, schema=schema, aliases=aliases, profiles=settings.profiles_for(model)
    )
    if verdict.skipped:
        answer = pass_through(f"{verdict.skipped} in the {tool} call")
        return HookAnswer(
            stdout=answer.stdout,
            stderr=stderr + answer.stderr,
            record=call_record(verdict, payload, harness=HARNESS, model=model),
        )
    if verdict.decision is Decision.PASS:
        return HookAnswer(
            stdout="{}",
            stderr=stderr,
            record=call_record(verdict, payload, harness=HARNESS, model=model),
        )
    record = call_record(
        verdict,
        payload,
        harness=HARNESS,
        model=model,
        denied_repairs=verdict.decision is Decision.REWRITE,
    )
    return HookAnswer(stdout=_deny(verdict.guidance()), stderr=stderr, record=record)


def deepseek_harness_hook(payload: Any, settings: HookSettings | None = None) -> HookAnswer:
    """Answer one DeepSeek Harness hook payload (any JSON value; see the module
    docstring). Never raises for bad input: what it cannot read passes through."""
    settings = settings if settings is not None else HookSettings()
    return dispatch(
        payload,
        settings,
        pre_tool_use=_pre_tool_use,
        post_tool_use=lambda p, s: post_tool_result(p, s, harness=HARNESS),
    )
