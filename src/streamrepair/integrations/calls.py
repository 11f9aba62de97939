"""The decision every adapter makes about one tool call, without any I/O.

A harness hands an adapter a tool name and the arguments the model sent (already parsed:
the harness did the JSON). :func:`inspect_call` applies the enabled per-model profile
rules, then :func:`~streamrepair.repair_arguments` against the tool's schema, and says
what to do:

* :attr:`Decision.PASS`: nothing to repair (or nothing it could inspect): run the call as
  sent. Valid input is never rewritten.
* :attr:`Decision.REWRITE`: repaired, and the repaired arguments satisfy the schema: run
  those (a harness that cannot rewrite denies with :meth:`CallVerdict.guidance` instead).
* :attr:`Decision.REJECT`: still invalid after every repair: do not run it; return
  :meth:`CallVerdict.feedback` to the model.

The adapters (Claude Code, DeepSeek Harness, OpenCode, Hermes) only translate payloads to
this call and the verdict to their harness's answer, and build the telemetry record with
:meth:`CallVerdict.record`.
"""

from __future__ import annotations

import enum
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ..schema.quick import surely_clean
from ..schema.tools import tool_schemas
from ..telemetry.record import Outcome, TelemetryRecord

if TYPE_CHECKING:
    from ..schema.profiles import Profile, ProfileRepair
    from ..schema.report import RepairNote, SchemaIssue

__all__ = [
    "MAX_SCHEMA_FILE_BYTES",
    "MAX_SUGGESTION_CHARS",
    "MODEL_ENV",
    "CallVerdict",
    "Decision",
    "inspect_call",
    "load_schema_files",
    "load_schemas",
    "resolve_model",
    "skipped_verdict",
]

#: Longest corrected-arguments JSON quoted back to the model in guidance.
MAX_SUGGESTION_CHARS: Final = 1000
#: Largest ``--schemas`` file read.
MAX_SCHEMA_FILE_BYTES: Final = 16 * 2**20
#: Environment variable naming the model, for telemetry and profiles.
MODEL_ENV: Final = "STREAMREPAIR_MODEL"
# Where a harness's environment may name the model: Claude Code pointed at another
# provider's Anthropic-compatible endpoint (DeepSeek, Kimi, GLM document this) sets these.
_MODEL_ENVS: Final = (MODEL_ENV, "ANTHROPIC_MODEL", "ANTHROPIC_DEFAULT_SONNET_MODEL")


class Decision(enum.Enum):
    """What to do with a call (see the module docstring)."""

    PASS = "pass"
    REWRITE = "rewrite"
    REJECT = "reject"


@dataclass(frozen=True, slots=True, kw_only=True)
class CallVerdict:
    """The decision about one call.

    ``arguments`` is what to run: the repaired value for REWRITE, the caller's own object
    for PASS, the partly repaired value for REJECT (never to be run). ``notes`` are the
    schema repairs, ``profile_repairs`` the profile rule changes, ``errors`` what still
    fails the schema (``schema_feedback`` says so for the model). ``schema_known`` says
    whether a schema was available; ``skipped`` (PASS only) why nothing was inspected.
    """

    tool: str
    decision: Decision
    arguments: Any
    original: Any = None
    notes: tuple[RepairNote, ...] = ()
    profile_repairs: tuple[ProfileRepair, ...] = ()
    errors: tuple[SchemaIssue, ...] = ()
    schema_known: bool = False
    skipped: str = ""
    schema_feedback: str = ""

    @property
    def rules(self) -> tuple[str, ...]:
        """Names of the rules that fired, each once, profile rules first."""
        names = [r.rule.value for r in self.profile_repairs] + [n.rule.value for n in self.notes]
        return tuple(dict.fromkeys(names))

    @property
    def repair_count(self) -> int:
        """How many individual repairs were made."""
        return len(self.notes) + len(self.profile_repairs)

    def model_notes(self, history: Iterable[str | Mapping[str, Any]] = ()) -> str:
        """The note block telling the model what was repaired (``""`` when nothing was,
        or when ``history`` already holds the same notes for this tool)."""
        from ..schema.notes import append_repair_notes  # only for a repaired call

        seen = list(history)
        text = append_repair_notes("", self.notes, self.tool, history=seen)
        head = f"[streamrepair: a model profile repaired the arguments of {self.tool}]"
        earlier = "\n".join(_plain_texts(seen))
        lines = []
        for rule in dict.fromkeys(r.rule for r in self.profile_repairs):
            if head in earlier and f"- {rule.value} at " in earlier:
                continue  # already taught in this conversation
            where = ", ".join(
                dict.fromkeys(r.location for r in self.profile_repairs if r.rule is rule)
            )
            lines.append(f"- {rule.value} at {where}: {rule.guidance}.")
        if lines:
            block = "\n".join([head, *lines])
            text = f"{block}\n{text}" if text else block
        return text

    def feedback(self) -> str:
        """For REJECT: what still fails, per path, with the valid shape (``""`` otherwise)."""
        if self.decision is not Decision.REJECT:
            return ""
        fixes = self._fix_lines()
        if fixes:
            fixes = ["Also fix these (streamrepair could repair them, but not the rest):", *fixes]
        return "\n".join([self.schema_feedback, *fixes])

    def guidance(self) -> str:
        """For a harness that cannot rewrite arguments: why the call was not run and how
        to send it (the repairs as instructions, the remaining errors, and the corrected
        arguments when they are short). ``""`` for PASS."""
        if self.decision is Decision.PASS:
            return ""
        if self.decision is Decision.REJECT:
            return self.feedback()
        head = (
            f'[streamrepair] The call to "{self.tool}" was not run: its arguments need these fixes:'
        )
        lines = [head, *self._fix_lines()]
        try:
            suggestion = json.dumps(self.arguments, ensure_ascii=False)
        except (TypeError, ValueError):  # pragma: no cover - arguments come from JSON
            suggestion = ""
        if suggestion and len(suggestion) <= MAX_SUGGESTION_CHARS:
            lines.append(f"Send the call again with these arguments: {suggestion}")
        else:
            lines.append("Send the call again with these fixes.")
        return "\n".join(lines)

    def _fix_lines(self) -> list[str]:
        lines = []
        for repair in self.profile_repairs:
            lines.append(f"  * {repair.location}: {repair.rule.guidance}")
        for note in self.notes:
            lines.append(f"  * {note.location}: {note.rule.guidance}")
        return lines

    def record(
        self,
        *,
        harness: str,
        model: str = "",
        session: str = "",
        call_id: str = "",
        denied_repairs: bool = False,
    ) -> TelemetryRecord:
        """The telemetry record of this decision. ``denied_repairs`` says the harness
        could not rewrite, so a REWRITE was denied with guidance (outcome ``guided``)."""
        if self.skipped:
            outcome = Outcome.SKIPPED
        elif self.decision is Decision.REJECT:
            outcome = Outcome.REJECTED
        elif self.decision is Decision.REWRITE:
            outcome = Outcome.GUIDED if denied_repairs else Outcome.REPAIRED
        else:
            outcome = Outcome.CLEAN
        return TelemetryRecord(
            harness=harness,
            tool=self.tool,
            outcome=outcome,
            model=model,
            rules=self.rules,
            repairs=self.repair_count,
            errors=len(self.errors),
            reason=self.skipped or ("invalid" if self.errors else ""),
            session=session,
            call_id=call_id,
            arguments=self.original,
            repaired_arguments=self.arguments if self.repair_count else None,
        )


def _plain_texts(history: Iterable[str | Mapping[str, Any]]) -> Iterable[str]:
    """The strings of ``history`` and the string ``content`` of its messages."""
    for item in history:
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping) and isinstance(item.get("content"), str):
            yield item["content"]


def skipped_verdict(tool: str, arguments: Any, why: str) -> CallVerdict:
    """A PASS verdict for a call that could not be inspected."""
    return CallVerdict(
        tool=tool, decision=Decision.PASS, arguments=arguments, original=arguments, skipped=why
    )


def inspect_call(
    tool: str,
    arguments: Any,
    *,
    schema: Any = None,
    aliases: Mapping[str, Sequence[str] | str] | None = None,
    profiles: Iterable[Profile] = (),
) -> CallVerdict:
    """Decide about one call (see the module docstring). ``arguments`` is never mutated;
    arguments that are not a JSON object, or not JSON data, give a skipped PASS."""
    if not isinstance(arguments, dict):
        return skipped_verdict(tool, arguments, "arguments are not an object")
    value: Any = arguments
    profile_repairs: tuple[ProfileRepair, ...] = ()
    enabled = tuple(profiles)
    if enabled:
        from ..schema.profiles import apply_profiles  # profiles are off by default

        value, profile_repairs = apply_profiles(arguments, enabled, schema)
    if not profile_repairs and surely_clean(value, schema):
        # Most calls: valid and link-free, decided without loading jsonschema.
        return CallVerdict(
            tool=tool,
            decision=Decision.PASS,
            arguments=arguments,
            original=arguments,
            schema_known=schema is not None,
        )
    from ..schema.rules import repair_arguments  # jsonschema: only when needed

    try:
        result = repair_arguments(value, schema, tool_name=tool, aliases=aliases)
    except (TypeError, RecursionError):
        return skipped_verdict(tool, arguments, "arguments are not JSON data")
    if result.errors:
        decision = Decision.REJECT
    elif result.notes or profile_repairs:
        decision = Decision.REWRITE
    else:
        decision = Decision.PASS
    return CallVerdict(
        tool=tool,
        decision=decision,
        arguments=result.value if decision is not Decision.PASS else arguments,
        original=arguments,
        notes=result.notes,
        profile_repairs=profile_repairs,
        errors=result.errors,
        schema_known=schema is not None,
        schema_feedback=result.feedback(tool),
    )


def load_schemas(path: str | os.PathLike[str]) -> dict[str, Mapping[str, Any]]:
    """Tool schemas from a JSON file: an object mapping tool names to parameter schemas;
    a tool list in OpenAI, Responses, Anthropic or MCP format; or an object whose
    ``"tools"`` is such a list (a saved model request body, an MCP ``tools/list``
    result, the output of ``streamrepair schemas``). Raises ``ValueError`` when the file
    is not one of those (``OSError`` when it cannot be read)."""
    with open(path, "rb") as handle:
        data = handle.read(MAX_SCHEMA_FILE_BYTES + 1)
    if len(data) > MAX_SCHEMA_FILE_BYTES:
        raise ValueError(f"{os.fspath(path)} is larger than {MAX_SCHEMA_FILE_BYTES} bytes")
    try:
        parsed = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{os.fspath(path)} is not JSON: {exc}") from None
    if isinstance(parsed, dict) and isinstance(parsed.get("tools"), list):
        parsed = parsed["tools"]
    if isinstance(parsed, list):
        try:
            return tool_schemas(parsed)
        except ValueError as exc:
            raise ValueError(f"{os.fspath(path)}: {exc}") from None
    if isinstance(parsed, dict) and all(isinstance(v, (dict, bool)) for v in parsed.values()):
        return {str(k): v for k, v in parsed.items() if isinstance(v, dict)}
    raise ValueError(
        f"{os.fspath(path)} must hold a tool list, an object with a tools list, "
        "or an object of tool name -> schema"
    )


def load_schema_files(spec: str) -> dict[str, Mapping[str, Any]]:
    """The schemas of every file in ``spec``, a list of paths joined by ``os.pathsep``
    (``a.json:b.json``), merged: a tool in a later file replaces the same tool in an
    earlier one. Raises like :func:`load_schemas` for the first file that fails."""
    merged: dict[str, Mapping[str, Any]] = {}
    for path in spec.split(os.pathsep):
        if path.strip():
            merged.update(load_schemas(path.strip()))
    return merged


def resolve_model(
    payload_model: Any = None,
    explicit: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> str:
    """The model name for telemetry and profiles: ``explicit`` (a command-line option),
    else a model the harness put in its payload, else ``$STREAMREPAIR_MODEL``, else
    ``$ANTHROPIC_MODEL`` (set when Claude Code talks to another provider), else ``""``."""
    if explicit:
        return explicit
    if isinstance(payload_model, str) and payload_model:
        return payload_model
    if isinstance(payload_model, Mapping):
        for key in ("id", "modelID", "model", "name"):
            value = payload_model.get(key)
            if isinstance(value, str) and value:
                return value
    env = os.environ if environ is None else environ
    for name in _MODEL_ENVS:
        value = env.get(name, "").strip()
        if value:
            return value
    return ""
