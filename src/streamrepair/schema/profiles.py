"""Per-model repair profiles: extra rules for one model family's known quirk.

The schema rules (:mod:`streamrepair.schema.rules`) fix mistakes any model makes and that
a schema proves wrong. Some mistakes are specific to one model family and invisible to a
schema: xAI Grok sends shell commands HTML-escaped (``cd x &amp;&amp; make``), which is
a valid string that the shell then fails to parse. A *profile* is a named set of such
extra rules, switched on by model name.

Profiles are **off by default**: :func:`select_profiles` returns nothing unless asked
for ``"auto"`` (match by model name) or for profiles by name. Each profile lists the
public reports it is based on in :attr:`Profile.evidence`; a quirk without evidence does
not get a profile. A profile rule rewrites content (that is what makes it
model-specific), so every change is recorded as a :class:`ProfileRepair` and only the
fields the rule names are touched.
"""

from __future__ import annotations

import enum
import fnmatch
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "COMMAND_FIELDS",
    "MAX_PROFILE_TEXT_CHARS",
    "PROFILES",
    "Profile",
    "ProfileRepair",
    "ProfileRule",
    "apply_profiles",
    "profile_names",
    "select_profiles",
]

#: Top-level argument names treated as shell commands by command rules.
COMMAND_FIELDS: Final = frozenset({"command", "cmd", "script"})
#: Longest command string a profile rule looks at.
MAX_PROFILE_TEXT_CHARS: Final = 1024 * 1024

# The entities Grok was seen to produce, and only those: a numeric entity for anything
# else (``&#36;``) would be a guess about what the model meant.
_ENTITY_RE: Final = re.compile(r"&(amp|lt|gt|quot|apos|#39|#x27|#X27);")
_ENTITIES: Final[Mapping[str, str]] = {
    "amp": "&",
    "lt": "<",
    "gt": ">",
    "quot": '"',
    "apos": "'",
    "#39": "'",
    "#x27": "'",
    "#X27": "'",
}


class ProfileRule(enum.Enum):
    """An extra rule a profile can switch on."""

    #: HTML entities (``&amp;`` ``&lt;`` ``&gt;`` ``&quot;`` ``&#39;`` ``&apos;``) in a
    #: top-level shell-command string decoded once (``&amp;lt;`` becomes ``&lt;``).
    HTML_ENTITIES_IN_COMMANDS = "html_entities_in_commands"

    @property
    def guidance(self) -> str:
        """One sentence telling the model what to send instead."""
        return _GUIDANCE[self]


_GUIDANCE: Final[Mapping[ProfileRule, str]] = {
    ProfileRule.HTML_ENTITIES_IN_COMMANDS: (
        "write shell commands as plain text: && and quotes, not &amp;&amp; or &quot;"
    ),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """A named set of extra rules for the models whose lower-cased name matches one of
    ``models`` (shell-style patterns, ``*grok*``), with the public reports that
    motivated it."""

    name: str
    models: tuple[str, ...]
    rules: tuple[ProfileRule, ...]
    description: str
    evidence: tuple[str, ...]

    def matches(self, model: str) -> bool:
        """Whether this profile applies to ``model`` (case-insensitive)."""
        lowered = model.lower()
        return any(fnmatch.fnmatchcase(lowered, pattern) for pattern in self.models)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileRepair:
    """One change made by a profile rule: which profile and rule, the top-level
    ``field``, and short summaries of the value before and after."""

    profile: str
    rule: ProfileRule
    field: str
    before: str
    after: str

    @property
    def location(self) -> str:
        """The field as JSONPath (``$.command``)."""
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.field):
            return f"$.{self.field}"
        return f"$[{json.dumps(self.field, ensure_ascii=False)}]"


#: Every profile, by name.
PROFILES: Final[Mapping[str, Profile]] = {
    "grok": Profile(
        name="grok",
        models=("*grok*", "xai/*", "x-ai/*"),
        rules=(ProfileRule.HTML_ENTITIES_IN_COMMANDS,),
        description=(
            "xAI Grok HTML-escapes shell commands in tool-call arguments "
            "(`cd x &amp;&amp; make`, `&quot;`), so every command with && or quotes "
            "fails to parse."
        ),
        evidence=(
            "https://github.com/openclaw/openclaw/issues/35173 (grok-4-1-fast, exec tool)",
            "https://github.com/langchain-ai/deepagents/issues/2954 (grok-4.1-fast via OpenRouter)",
            "https://github.com/tetsuo-ai/AgenC/pull/1280 (Grok emits &amp;&amp; for &&)",
        ),
    ),
}


def profile_names() -> tuple[str, ...]:
    """The names :func:`select_profiles` accepts, sorted."""
    return tuple(sorted(PROFILES))


def select_profiles(spec: str | None, model: str | None) -> tuple[Profile, ...]:
    """The profiles to apply for ``model``.

    ``spec`` is ``None``, ``""`` or ``"off"`` (the default: none), ``"auto"`` (every
    profile whose model patterns match ``model``), or a comma-separated list of names
    (applied whatever the model; ``"auto,grok"`` combines both). Raises ``ValueError``
    for an unknown name.
    """
    if spec is None:
        return ()
    chosen: dict[str, Profile] = {}
    for part in (p.strip() for p in spec.split(",")):
        if not part or part == "off":
            continue
        if part == "auto":
            for profile in PROFILES.values():
                if model and profile.matches(model):
                    chosen[profile.name] = profile
        elif part in PROFILES:
            chosen[part] = PROFILES[part]
        else:
            known = ", ".join(profile_names())
            raise ValueError(f"unknown profile {part!r}; known: auto, off, {known}")
    return tuple(chosen.values())


def _decode_entities(text: str) -> str:
    return _ENTITY_RE.sub(lambda m: _ENTITIES[m.group(1)], text)


_COMMAND_TRANSFORMS: Final[Mapping[ProfileRule, Callable[[str], str]]] = {
    ProfileRule.HTML_ENTITIES_IN_COMMANDS: _decode_entities,
}


def _summary(text: str) -> str:
    shown = json.dumps(text, ensure_ascii=False)
    return shown if len(shown) <= 80 else f'{shown[:76]}..."'


def _string_field_ok(schema: Any, field: str) -> bool:
    """Without a schema any command field counts; with one, the field's declared type
    must admit a string (or be undeclared)."""
    if not isinstance(schema, Mapping):
        return True
    properties = schema.get("properties")
    prop = properties.get(field) if isinstance(properties, Mapping) else None
    if not isinstance(prop, Mapping) or "type" not in prop:
        return True
    declared = prop["type"]
    return declared == "string" or (isinstance(declared, list) and "string" in declared)


def apply_profiles(
    arguments: Any, profiles: Iterable[Profile], schema: Any = None
) -> tuple[Any, tuple[ProfileRepair, ...]]:
    """``arguments`` with the rules of ``profiles`` applied, and what changed.

    Only top-level fields are touched. The caller's object is never mutated: when a rule
    fires the result is a new dict (nested values shared, since none is changed);
    otherwise ``arguments`` itself is returned with no repairs. Non-dict arguments are
    returned unchanged.
    """
    if not isinstance(arguments, dict):
        return arguments, ()
    value: dict[str, Any] | None = None
    repairs: list[ProfileRepair] = []
    for profile in profiles:
        for rule in profile.rules:
            transform = _COMMAND_TRANSFORMS[rule]
            current = value if value is not None else arguments
            for field, text in list(current.items()):
                if (
                    field not in COMMAND_FIELDS
                    or not isinstance(text, str)
                    or len(text) > MAX_PROFILE_TEXT_CHARS
                    or not _string_field_ok(schema, field)
                ):
                    continue
                decoded = transform(text)
                if decoded == text:
                    continue
                if value is None:
                    value = dict(arguments)
                value[field] = decoded
                repairs.append(
                    ProfileRepair(
                        profile=profile.name,
                        rule=rule,
                        field=field,
                        before=_summary(text),
                        after=_summary(decoded),
                    )
                )
    return (value if value is not None else arguments), tuple(repairs)
