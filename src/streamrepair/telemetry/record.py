"""The telemetry record: one per tool call, and where the log lives.

A :class:`TelemetryRecord` says when, which harness and model, which tool, which rules
fired and what became of the call. **Argument contents are never part of a record
unless the log was opened with** ``include_arguments=True``.
"""

from __future__ import annotations

import enum
import hashlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

__all__ = [
    "ARGUMENTS_ENV",
    "CALL_OUTCOMES",
    "MAX_FIELD_CHARS",
    "OTEL_ENV",
    "TELEMETRY_ENV",
    "Outcome",
    "TelemetryRecord",
    "default_telemetry_path",
    "flag_from_env",
    "shorten",
    "telemetry_path_from_env",
]

#: Environment variable naming the log file (``off`` disables the log).
TELEMETRY_ENV: Final = "STREAMREPAIR_TELEMETRY"
#: Environment variable that, set to ``1``, also logs argument contents.
ARGUMENTS_ENV: Final = "STREAMREPAIR_TELEMETRY_ARGUMENTS"
#: Environment variable that, set to ``1``, also reports OpenTelemetry counters.
OTEL_ENV: Final = "STREAMREPAIR_OTEL"
#: Longest text a record field holds in the log (harness, model, tool, reason, session,
#: call id, each rule name): a model or tool name is whatever a client or a model sent,
#: and one of 256 KiB once made every log line that long. Longer ones are shortened.
MAX_FIELD_CHARS: Final = 256
_HASH_CHARS: Final = 8
_OFF: Final = frozenset({"", "0", "off", "false", "no", "none"})
_ON: Final = frozenset({"1", "on", "true", "yes"})


class Outcome(enum.Enum):
    """What became of a call (``event == "call"``) or of running it (``"result"``)."""

    #: Nothing to repair: the arguments were passed on unchanged.
    CLEAN = "clean"
    #: Repaired, and the repaired arguments were run.
    REPAIRED = "repaired"
    #: Repairable, but the harness cannot rewrite arguments: denied with guidance.
    GUIDED = "guided"
    #: Not run: invalid even after repair, cut off, or unrepairable.
    REJECTED = "rejected"
    #: Not inspected (unreadable payload, too large, no tool name): passed on untouched.
    SKIPPED = "skipped"
    #: (result) The tool ran and reported success.
    SUCCEEDED = "succeeded"
    #: (result) The tool ran and reported an error.
    FAILED = "failed"


#: The outcomes of ``call`` records, in report order.
CALL_OUTCOMES: Final = (
    Outcome.CLEAN,
    Outcome.REPAIRED,
    Outcome.GUIDED,
    Outcome.REJECTED,
    Outcome.SKIPPED,
)


def shorten(value: str, limit: int = MAX_FIELD_CHARS) -> str:
    """``value`` itself when it has at most ``limit`` characters, else its first
    characters, ``…`` and 8 hex digits of its SHA-256, ``limit`` characters in all: a
    shortened name still says how it began, and two long names that begin alike stay
    apart. ``limit`` is at least 16."""
    if len(value) <= limit:
        return value
    if limit < 16:
        raise ValueError("limit must be at least 16")
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{value[: limit - _HASH_CHARS - 1]}…{digest[:_HASH_CHARS]}"


def _now() -> str:
    # ISO 8601 in UTC with milliseconds, from `time` (datetime costs a hook ~1.5 ms to import)
    now = time.time()
    seconds = int(now)
    return (
        time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        + f".{int((now - seconds) * 1000):03d}Z"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class TelemetryRecord:
    """One line of the log.

    ``event`` is ``"call"`` (a decision about a call's arguments) or ``"result"`` (the
    tool ran; ``outcome`` is SUCCEEDED or FAILED). ``rules`` are the rule names that fired
    (schema rules, profile rules, or the assembler's syntax repair kinds), each once, in
    order; ``repairs`` the number of individual repairs; ``errors`` the schema issues
    left; ``reason`` why a call was rejected or skipped. ``arguments`` and
    ``repaired_arguments`` are written only by a log opened with ``include_arguments``.
    """

    harness: str
    tool: str
    outcome: Outcome
    model: str = ""
    event: str = "call"
    rules: tuple[str, ...] = ()
    repairs: int = 0
    errors: int = 0
    reason: str = ""
    session: str = ""
    call_id: str = ""
    time: str = field(default_factory=_now)
    arguments: Any = None
    repaired_arguments: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.outcome, Outcome):
            raise TypeError("TelemetryRecord.outcome must be an Outcome")
        if self.event not in ("call", "result"):
            raise ValueError(
                f"TelemetryRecord.event must be 'call' or 'result', not {self.event!r}"
            )
        for name in ("harness", "tool", "model", "reason", "session", "call_id", "time"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"TelemetryRecord.{name} must be a str")
        if not all(isinstance(rule, str) for rule in self.rules):
            raise TypeError("TelemetryRecord.rules must hold str")
        for name in ("repairs", "errors"):
            count = getattr(self, name)
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise ValueError(f"TelemetryRecord.{name} must be a non-negative int")

    def to_dict(self, *, include_arguments: bool = False) -> dict[str, Any]:
        """The JSON object written to the log (arguments only when asked). Text fields
        longer than :data:`MAX_FIELD_CHARS` are :func:`shortened <shorten>`, and at most
        that many rules are listed."""
        out: dict[str, Any] = {
            "time": shorten(self.time),
            "event": self.event,
            "harness": shorten(self.harness),
            "model": shorten(self.model),
            "tool": shorten(self.tool),
            "outcome": self.outcome.value,
            "rules": [shorten(rule) for rule in self.rules[:MAX_FIELD_CHARS]],
            "repairs": self.repairs,
            "errors": self.errors,
        }
        for name in ("reason", "session", "call_id"):
            if getattr(self, name):
                out[name] = shorten(getattr(self, name))
        if include_arguments:
            if self.arguments is not None:
                out["arguments"] = self.arguments
            if self.repaired_arguments is not None:
                out["repaired_arguments"] = self.repaired_arguments
        return out

    @classmethod
    def from_dict(cls, data: Any) -> TelemetryRecord:
        """A record from a log line's object. Raises ``ValueError`` (or ``TypeError``)
        when it is not one."""
        if not isinstance(data, Mapping):
            raise ValueError("a record must be a JSON object")
        rules = data.get("rules", [])
        if not isinstance(rules, list):
            raise ValueError("rules must be a list")
        try:
            outcome = Outcome(data.get("outcome"))
        except ValueError:
            raise ValueError(f"unknown outcome {data.get('outcome')!r}") from None
        return cls(
            harness=data.get("harness", ""),
            tool=data.get("tool", ""),
            outcome=outcome,
            model=data.get("model", ""),
            event=data.get("event", "call"),
            rules=tuple(rules),
            repairs=data.get("repairs", 0),
            errors=data.get("errors", 0),
            reason=data.get("reason", ""),
            session=data.get("session", ""),
            call_id=data.get("call_id", ""),
            time=data.get("time", ""),
            arguments=data.get("arguments"),
            repaired_arguments=data.get("repaired_arguments"),
        )


def default_telemetry_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/streamrepair/telemetry.jsonl`` (``~/.local/state`` when unset)."""
    env = os.environ if environ is None else environ
    state = env.get("XDG_STATE_HOME") or ""
    base = Path(state) if os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "streamrepair" / "telemetry.jsonl"


def telemetry_path_from_env(environ: Mapping[str, str] | None = None) -> Path | None:
    """The log the hooks write: ``$STREAMREPAIR_TELEMETRY`` when set (``None`` when it
    is ``off``/``0``/empty), else :func:`default_telemetry_path`."""
    env = os.environ if environ is None else environ
    if TELEMETRY_ENV in env:
        value = env[TELEMETRY_ENV].strip()
        return None if value.lower() in _OFF else Path(value).expanduser()
    return default_telemetry_path(env)


def flag_from_env(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the environment variable ``name`` is set to ``1``/``on``/``true``/``yes``."""
    env = os.environ if environ is None else environ
    return env.get(name, "").strip().lower() in _ON
