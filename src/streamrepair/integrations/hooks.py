"""What the command hooks share: their settings, their answer, and payload parsing.

A hook is a process the harness starts per tool call with a JSON payload on stdin; it
answers with one JSON line on stdout and exit status 0. The adapters
(:mod:`~streamrepair.integrations.claude_code`,
:mod:`~streamrepair.integrations.deepseek_harness`) are pure functions from a parsed
payload and :class:`HookSettings` to a :class:`HookAnswer`; reading stdin within a time
bound and printing are the command line's job (``streamrepair hook``).

Whatever arrives, a hook must not break the session: a payload it cannot read (empty,
not UTF-8, not JSON, too large, a JSON array, ``null``, a string, a number) gives
:func:`pass_through`, which lets the call proceed untouched, with one line on stderr.
"""

from __future__ import annotations

import enum
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ..telemetry.record import TelemetryRecord
from .calls import CallVerdict, resolve_model

if TYPE_CHECKING:
    from ..schema.profiles import Profile

__all__ = [
    "MAX_PAYLOAD_BYTES",
    "PASS_THROUGH",
    "Bridge",
    "HookAnswer",
    "HookSettings",
    "Permission",
    "call_record",
    "dispatch",
    "dumps_line",
    "parse_payload",
    "pass_through",
    "payload_text",
]

#: Largest payload a hook reads (a ``Write`` of a large file arrives whole).
MAX_PAYLOAD_BYTES: Final = 32 * 2**20
#: The answer that lets a call proceed unchanged: an empty JSON object.
PASS_THROUGH: Final = "{}"


class Permission(enum.Enum):
    """Which permission decision a Claude Code hook attaches to repaired input.

    ``AUTO`` (the default) attaches none: the repaired input goes back as
    ``updatedInput`` alone, and Claude Code's own permission rules, modes and prompts
    decide about the repaired call exactly as they would have about the original one
    (measured with Claude Code 2.1.332: a repaired Read runs, a repaired Write prompts in
    ``default`` mode, the prompt shows the repaired input, ``dontAsk`` denies what no rule
    allows, and under ``claude -p`` nothing waits for an answer nobody can give).
    ``ALLOW`` answers ``"allow"``, which also skips the prompt the user would have seen;
    ``ASK`` answers ``"ask"``, which forces a prompt, and which Claude Code treats as a
    denial wherever nobody can answer (``claude -p``, the SDK).
    """

    AUTO = "auto"
    ALLOW = "allow"
    ASK = "ask"


class Bridge(enum.Enum):
    """Which DeepSeek Harness bridge runs the hook. Under ``CODEX`` the payload's
    ``tool_input`` is only ``{"command": ...}``; ``AUTO`` assumes that when
    ``tool_input`` holds exactly that key."""

    AUTO = "auto"
    CLAUDE_CODE = "claude-code"
    CODEX = "codex"


@dataclass(frozen=True, slots=True, kw_only=True)
class HookSettings:
    """How a hook decides. ``schemas`` (tool name -> parameter schema, from
    ``--schemas``) take precedence over the built-in ones; ``builtin_schemas=False``
    ignores the built-ins. ``profiles`` is a :func:`~streamrepair.schema.profiles.select_profiles`
    spec (default off); ``model`` names the model when the payload does not;
    ``environ`` is where the model and other defaults are looked up;
    ``transcript_schemas`` lets the Claude Code hook read the schema of a tool it has
    none for (an MCP tool) from the session transcript (:mod:`.transcript`)."""

    schemas: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    builtin_schemas: bool = True
    profiles: str | None = None
    model: str | None = None
    permission: Permission = Permission.AUTO
    bridge: Bridge = Bridge.AUTO
    transcript_schemas: bool = True
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))

    def model_for(self, payload: Mapping[str, Any]) -> str:
        """The model name for this payload (see :func:`~.calls.resolve_model`)."""
        return resolve_model(payload.get("model"), self.model, self.environ)

    def profiles_for(self, model: str) -> tuple[Profile, ...]:
        """The profiles enabled for ``model``; an unknown profile name enables none."""
        if self.profiles is None or self.profiles.strip() in ("", "off"):
            return ()  # the default: no profile module to import
        from ..schema.profiles import select_profiles

        try:
            return select_profiles(self.profiles, model)
        except ValueError:
            return ()

    def schema_for(
        self,
        tool: str,
        builtin: Mapping[str, Mapping[str, Any]],
        aliases: Mapping[str, Mapping[str, Sequence[str]]],
    ) -> tuple[Mapping[str, Any] | None, Mapping[str, Sequence[str]] | None]:
        """The schema and aliases for ``tool``: the user's schema, else the built-in one
        (when enabled), else ``(None, None)``."""
        if tool in self.schemas:
            return self.schemas[tool], aliases.get(tool) if self.builtin_schemas else None
        if self.builtin_schemas and tool in builtin:
            return builtin[tool], aliases.get(tool)
        return None, None


@dataclass(frozen=True, slots=True, kw_only=True)
class HookAnswer:
    """What a hook prints (``stdout``: one JSON line, or ``""`` for nothing), the lines
    it writes to stderr, its exit status, and the telemetry record of the call (if any)."""

    stdout: str
    stderr: tuple[str, ...] = ()
    exit_code: int = 0
    record: TelemetryRecord | None = None


def pass_through(reason: str, *, stdout: str = PASS_THROUGH) -> HookAnswer:
    """Let the call proceed untouched, saying why on stderr."""
    return HookAnswer(stdout=stdout, stderr=(f"streamrepair: {reason}; passed through",))


def parse_payload(data: bytes) -> tuple[Any, str]:
    """``(payload, "")`` for any JSON value, or ``(None, problem)`` when ``data`` is
    empty, too large (over :data:`MAX_PAYLOAD_BYTES`), not UTF-8 or not JSON."""
    if len(data) > MAX_PAYLOAD_BYTES:
        return None, f"hook input is larger than {MAX_PAYLOAD_BYTES} bytes"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, "hook input is not UTF-8"
    if not text.strip():
        return None, "hook input is empty"
    try:
        return json.loads(text), ""
    except (ValueError, RecursionError):
        return None, "hook input is not JSON"


def dumps_line(value: Any) -> str:
    """One JSON line a harness can read whatever the strings hold (ASCII escapes, so a
    lone surrogate from the payload cannot break the encoding of stdout)."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def payload_text(payload: Mapping[str, Any], key: str) -> str:
    """``payload[key]`` when it is a string, else ``""``."""
    value = payload.get(key)
    return value if isinstance(value, str) else ""


def call_record(
    verdict: CallVerdict,
    payload: Mapping[str, Any],
    *,
    harness: str,
    model: str,
    denied_repairs: bool = False,
) -> TelemetryRecord:
    """The telemetry record of ``verdict`` for a hook payload (its session and call id)."""
    return verdict.record(
        harness=harness,
        model=model,
        session=payload_text(payload, "session_id"),
        call_id=payload_text(payload, "tool_use_id"),
        denied_repairs=denied_repairs,
    )


def dispatch(
    payload: Any,
    settings: HookSettings,
    *,
    pre_tool_use: Callable[[Mapping[str, Any], HookSettings], HookAnswer],
    post_tool_use: Callable[[Mapping[str, Any], HookSettings], HookAnswer],
) -> HookAnswer:
    """Route one hook payload (any JSON value) by its ``hook_event_name``. Never raises for
    bad input: what it cannot read, or an event it does not handle, passes through."""
    if not isinstance(payload, dict):
        kind = "null" if payload is None else type(payload).__name__
        return pass_through(f"hook input is a JSON {kind}, not an object")
    event = payload.get("hook_event_name")
    if event in ("PostToolUse", "PostToolUseFailure"):
        return post_tool_use(payload, settings)
    if event not in (None, "PreToolUse"):
        return pass_through(f"the hook is registered for {event!r}, which it does not handle")
    return pre_tool_use(payload, settings)
