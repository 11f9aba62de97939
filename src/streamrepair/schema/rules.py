"""Schema-aware repair of finished tool-call arguments.

Theory of operation
-------------------
The input is an already-parsed argument value (normally the dict an
:class:`~streamrepair.ArgumentAssembler` finished). Syntax is settled; what is left
are type mistakes open models make again and again (``null`` for optional fields,
arrays sent as JSON strings, ``{}`` for ``[]``, numbers as strings, markdown links in
file paths). The repair works on a private copy and is **validate, then repair**:

1. Unwrap markdown autolinks in path-like fields (the only rule validation cannot
   see, because such a path is a valid string).
2. Validate the copy with ``jsonschema``. Valid: stop. Nothing else is ever touched,
   so ``{"content": "[1, 2]"}`` with ``content: string`` stays a string.
3. Walk the errors by path. At each error apply the first rule that fits (see
   :class:`SchemaRule`); errors inside ``anyOf``/``oneOf`` are followed into the one
   alternative whose shape the value already has.
4. Re-validate. A dropped key whose absence creates a new error at its object
   (it was ``required``, or ``dependentRequired``...) is put back and never dropped
   again, so the validator reports the real problem. Repeat from 1 until valid or no
   rule fits, at most :data:`MAX_REPAIR_PASSES` times.

Invariants: the caller's objects are never mutated and the result shares nothing
mutable with them; every change is recorded as a :class:`RepairNote`; a second run on
the result changes nothing and records nothing (no rule fires on a valid value, and an
invalid end state is one where no rule fits). The caller's schema is read through a
cleaned copy: parts ``jsonschema``'s own metaschema rejects, references that do not
resolve, and reference cycles are skipped (listed in :attr:`ArgumentRepair.schema_skipped`),
never raised.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ._access import SchemaAccess
from ._values import (
    NO,
    JsonPath,
    container_shaped,
    copy_json,
    delete_key,
    get_at,
    issue_fields,
    parse_container,
    parse_scalar,
    replace_at,
    restore_keys,
    summary,
    unwrap_autolinks,
)
from .report import ArgumentRepair, RepairNote, SchemaIssue, SchemaRule

__all__ = [
    "MAX_REPAIR_PASSES",
    "MAX_VALIDATION_DEPTH",
    "repair_arguments",
]

#: Validate-repair rounds before giving up. Each round fixes every error it can at
#: once, so real arguments need one or two; nested repairs (a parsed string holding a
#: null) need one more per level.
MAX_REPAIR_PASSES: Final = 32
#: Deepest value validated against a schema. ``jsonschema`` recurses a few Python
#: frames per level; deeper arguments get an error record instead of a crash.
MAX_VALIDATION_DEPTH: Final = 100


def repair_arguments(
    args: Any,
    schema: Any = None,
    *,
    tool_name: str | None = None,
    aliases: Mapping[str, Sequence[str] | str] | None = None,
) -> ArgumentRepair:
    """Repair the type mistakes in a parsed argument value against its JSON Schema.

    ``args`` is JSON data (dicts with string keys, lists, str, int, float, bool,
    None; tuples are read as lists). ``schema`` is the tool's parameter schema (the
    ``parameters`` / ``input_schema`` object, not the whole tool definition; a dict or a
    boolean; ``$schema`` picks the draft, default Draft 2020-12); with ``None``
    only markdown autolinks in path-like fields are unwrapped, since nothing says a
    null is optional or a string should be an array. Malformed schemas never raise;
    what cannot be read is skipped. ``aliases`` maps an expected key to keys the model
    may use instead (``{"path": ["file_path", "filePath"]}``); one is renamed only where
    validation fails for want of the expected key.

    Returns an :class:`ArgumentRepair`; the caller's ``args`` and ``schema`` are not
    mutated. Raises ``TypeError`` only when ``args`` or ``aliases`` is not data of the
    documented types.
    """
    alias_table = _alias_table(aliases)
    value, depth = copy_json(args)
    access = SchemaAccess(schema)
    if access.validating and depth > MAX_VALIDATION_DEPTH:
        issue = SchemaIssue(
            path=(),
            keyword="depth",
            message=(
                f"The arguments are nested {depth} levels deep; at most "
                f"{MAX_VALIDATION_DEPTH} can be checked against the schema."
            ),
            received=f"{depth} levels",
            expected=f"at most {MAX_VALIDATION_DEPTH} levels",
        )
        return ArgumentRepair(
            value=value,
            errors=(issue,),
            schema_skipped=access.skipped_notes(),
            tool_name=tool_name,
        )
    engine = _Engine(value, access, alias_table)
    engine.run()
    return ArgumentRepair(
        value=engine.value,
        notes=tuple(engine.notes()),
        errors=tuple(engine.final_issues),
        schema_skipped=access.skipped_notes(),
        tool_name=tool_name,
    )


def _alias_table(aliases: Mapping[str, Sequence[str] | str] | None) -> dict[str, tuple[str, ...]]:
    if aliases is None:
        return {}
    if not isinstance(aliases, Mapping):
        raise TypeError("aliases must be a mapping of expected key -> alternative keys")
    table: dict[str, tuple[str, ...]] = {}
    for key, alternatives in aliases.items():
        alts = (alternatives,) if isinstance(alternatives, str) else tuple(alternatives)
        if not isinstance(key, str) or not all(isinstance(a, str) for a in alts):
            raise TypeError("aliases keys and alternatives must be strings")
        table[key] = tuple(a for a in alts if a != key)
    return table


# --------------------------------------------------------------------------- engine


@dataclass(slots=True)
class _Site:
    """A place the validator flagged, with the JSON types the schema accepts there
    when the error says so (``type`` errors, and unions of ``anyOf``/``oneOf``)."""

    path: JsonPath
    error: Any
    expected: frozenset[str] | None


@dataclass(slots=True)
class _Fix:
    rule: SchemaRule
    path: JsonPath
    kind: str  # "replace" | "delete" | "rename"
    new: Any = None
    new_key: str = ""


@dataclass(slots=True)
class _Drop:
    """A key dropped in the last pass, kept so it can be put back."""

    parent: JsonPath
    key: str
    old: Any
    order: tuple[str, ...]
    before: frozenset[tuple[Any, ...]]
    note: int


@dataclass(slots=True)
class _Wrap:
    """A string wrapped as ``[string]`` in the last pass, kept so it can be put back
    when the item it became fits no better (its own schema wants another type)."""

    path: JsonPath
    old: str
    note: int


_REQUIRED_FAMILY: Final = frozenset({"required", "dependentRequired", "dependencies"})
_OBJECT_KEYWORDS: Final = frozenset(
    {"required", "additionalProperties", "unevaluatedProperties", "dependentRequired"}
)


def _walk_errors(errors: Sequence[Any]) -> Iterator[Any]:
    stack = list(reversed(errors))
    while stack:
        error = stack.pop()
        yield error
        stack.extend(reversed(error.context or ()))


def _signatures(errors: Sequence[Any], paths: set[JsonPath]) -> dict[JsonPath, frozenset[Any]]:
    """For each of ``paths``, what fails exactly there (keyword, schema location, and for
    the required family the message, which names the missing key)."""
    found: dict[JsonPath, set[tuple[Any, ...]]] = {path: set() for path in paths}
    for error in _walk_errors(errors):
        path = tuple(error.absolute_path)
        if path in found:
            message = error.message if error.validator in _REQUIRED_FAMILY else ""
            found[path].add((error.validator, tuple(map(str, error.absolute_schema_path)), message))
    return {path: frozenset(sigs) for path, sigs in found.items()}


def _names_key(signature: tuple[Any, ...], key: str) -> bool:
    validator, _, message = signature
    if validator == "required":
        return bool(message == f"{key!r} is a required property")
    if validator in ("dependentRequired", "dependencies"):
        return str(message).startswith(f"{key!r} is a dependency of ")
    return False


class _Engine:
    def __init__(self, value: Any, access: SchemaAccess, aliases: dict[str, tuple[str, ...]]):
        self.value = value
        self.access = access
        self.aliases = aliases
        self._notes: list[RepairNote | None] = []
        self._forbidden: set[tuple[JsonPath, SchemaRule]] = set()
        self.final_issues: list[SchemaIssue] = []

    def notes(self) -> list[RepairNote]:
        return [note for note in self._notes if note is not None]

    def _note(self, rule: SchemaRule, path: JsonPath, before: str, after: str) -> int:
        self._notes.append(RepairNote(rule=rule, path=path, before=before, after=after))
        return len(self._notes) - 1

    def run(self) -> None:
        passes = 0
        drops: list[_Drop] = []
        wraps: list[_Wrap] = []
        errors: list[Any] = []
        while True:
            self._unwrap_autolinks()
            errors = self.access.errors(self.value)
            if drops or wraps:
                reverted = self._put_back(drops, errors) | self._unwrap_useless(wraps, errors)
                drops, wraps = [], []
                if reverted:
                    continue
            if not errors or passes >= MAX_REPAIR_PASSES:
                break
            fixes = self._choose(errors)
            if not fixes:
                break
            drops, wraps = self._apply(fixes, errors)
            passes += 1
        self.final_issues = [SchemaIssue(**issue_fields(error)) for error in errors]

    # -- autolinks ------------------------------------------------------------------

    def _unwrap_autolinks(self) -> None:
        for path, text in self.access.path_like_strings(self.value):
            fixed = unwrap_autolinks(text)
            if fixed != text:
                self.value = replace_at(self.value, path, fixed)
                self._note(SchemaRule.UNWRAP_AUTOLINK, path, summary(text), summary(fixed))

    # -- choosing ---------------------------------------------------------------------

    def _choose(self, errors: Sequence[Any]) -> list[_Fix]:
        fixes: list[_Fix] = []
        touched: set[JsonPath] = set()
        touched_prefixes: set[JsonPath] = set()
        for error in errors:
            for site in self._sites(error):
                fix = self._fix_for(site)
                if fix is None:
                    continue
                paths = [fix.path]
                if fix.kind == "rename":
                    paths.append((*fix.path[:-1], fix.new_key))
                if any(
                    p in touched_prefixes or any(p[:i] in touched for i in range(len(p) + 1))
                    for p in paths
                ):
                    continue
                fixes.append(fix)
                for p in paths:
                    touched.add(p)
                    touched_prefixes.update(p[:i] for i in range(len(p) + 1))
        return fixes

    def _sites(self, error: Any) -> list[_Site]:
        path = tuple(error.absolute_path)
        if error.validator == "type":
            return [_Site(path, error, _type_set(error.validator_value))]
        if error.validator not in ("anyOf", "oneOf") or not error.context:
            return [_Site(path, error, None)]
        branches: dict[Any, list[Any]] = {}
        for sub in error.context:
            branch = sub.relative_schema_path[0] if sub.relative_schema_path else None
            branches.setdefault(branch, []).append(sub)
        union: set[str] = set()
        compatible: list[list[_Site]] = []
        for branch_errors in branches.values():  # jsonschema reports branches in order
            sites = [site for sub in branch_errors for site in self._sites(sub)]
            here = [s for s in sites if s.path == path and s.expected is not None]
            if here:
                for site in here:
                    union |= site.expected or frozenset()
            else:
                compatible.append(sites)
        for sites in compatible:
            if all(self._fix_for(site) is not None for site in sites):
                return sites
        if compatible:  # the value has some alternative's shape: do not change its type
            return compatible[0]
        return [_Site(path, error, frozenset(union) if union else None)]

    def _fix_for(self, site: _Site) -> _Fix | None:
        found, value = get_at(self.value, site.path)
        if not found or value is not site.error.instance:
            return None
        path = site.path
        in_object = bool(path) and isinstance(get_at(self.value, path[:-1])[1], dict)
        expected = site.expected
        if value is None:
            if in_object and (path, SchemaRule.DROP_NULL) not in self._forbidden:
                return _Fix(SchemaRule.DROP_NULL, path, "delete")
            return None
        if isinstance(value, str) and expected:
            parsed = parse_container(value, expected, MAX_VALIDATION_DEPTH - len(path))
            if parsed is not NO:
                return _Fix(SchemaRule.PARSE_JSON_STRING, path, "replace", parsed)
            if value == "null" and "null" not in expected:
                if in_object and (path, SchemaRule.DROP_NULL_STRING) not in self._forbidden:
                    return _Fix(SchemaRule.DROP_NULL_STRING, path, "delete")
                return None
            scalar = parse_scalar(value, expected)
            if scalar is not NO:
                return _Fix(SchemaRule.PARSE_SCALAR_STRING, path, "replace", scalar)
            if (
                "array" in expected
                and value.strip()
                and not container_shaped(value)
                and (path, SchemaRule.WRAP_BARE_STRING) not in self._forbidden
            ):
                return _Fix(SchemaRule.WRAP_BARE_STRING, path, "replace", [value])
            return None
        if value == {} and expected and "array" in expected and "object" not in expected:
            return _Fix(SchemaRule.EMPTY_OBJECT_TO_ARRAY, path, "replace", [])
        if isinstance(value, dict) and site.error.validator in _OBJECT_KEYWORDS:
            fix = self._alias_fix(site, value) if self.aliases else None
            return fix if fix is not None else self._spelling_fix(site, value)
        return None

    def _alias_fix(self, site: _Site, obj: dict[str, Any]) -> _Fix | None:
        error = site.error
        declared = error.schema.get("properties") if isinstance(error.schema, dict) else None
        declared = declared if isinstance(declared, dict) else {}
        for key, alternatives in self.aliases.items():
            if key in obj:
                continue
            if error.validator in _REQUIRED_FAMILY and not _names_key(
                (error.validator, (), error.message), key
            ):
                continue
            for alt in alternatives:
                if (
                    alt not in obj
                    or ((*site.path, alt), SchemaRule.RENAME_ALIAS) in self._forbidden
                ):
                    continue
                if error.validator in _REQUIRED_FAMILY or alt not in declared:
                    return _Fix(SchemaRule.RENAME_ALIAS, (*site.path, alt), "rename", new_key=key)
        return None

    def _spelling_fix(self, site: _Site, obj: dict[str, Any]) -> _Fix | None:
        """Rename a key the object's schema does not list to the one missing property
        it spells once letter case, ``_`` and ``-`` are ignored (``filePath`` ->
        ``file_path``). Only where the object fails for it (a ``required`` error naming
        that property, or the key refused as an extra), only when the match is unique
        both ways (one such key, one such property among all the declared ones), and
        never for a key that ``patternProperties`` admits."""
        error = site.error
        schema = error.schema if isinstance(error.schema, dict) else {}
        declared = schema.get("properties")
        if not isinstance(declared, dict) or not declared:
            return None
        patterns = schema.get("patternProperties")
        extras = [k for k in obj if k not in declared and not _pattern_admits(patterns, k)]
        if not extras:
            return None
        spelled: dict[str, list[str]] = {}
        for name in declared:
            if isinstance(name, str):
                spelled.setdefault(_spelling(name), []).append(name)
        extra_spellings = [_spelling(k) for k in extras]
        for key, spelling in zip(extras, extra_spellings, strict=True):
            targets = spelled.get(spelling, [])
            if len(targets) != 1 or extra_spellings.count(spelling) != 1:
                continue
            target = targets[0]
            if target in obj or ((*site.path, key), SchemaRule.RENAME_SPELLING) in self._forbidden:
                continue
            if error.validator in _REQUIRED_FAMILY and not _names_key(
                (error.validator, (), error.message), target
            ):
                continue
            return _Fix(SchemaRule.RENAME_SPELLING, (*site.path, key), "rename", new_key=target)
        return None

    # -- applying ---------------------------------------------------------------------

    def _apply(self, fixes: list[_Fix], errors: Sequence[Any]) -> tuple[list[_Drop], list[_Wrap]]:
        drops: list[_Drop] = []
        wraps: list[_Wrap] = []
        parents = {fix.path[:-1] for fix in fixes if fix.kind == "delete"}
        before = _signatures(errors, parents) if parents else {}
        for fix in fixes:
            _, old = get_at(self.value, fix.path)
            if fix.kind == "replace":
                self.value = replace_at(self.value, fix.path, fix.new)
                note = self._note(fix.rule, fix.path, summary(old), summary(fix.new))
                if fix.rule is SchemaRule.WRAP_BARE_STRING:
                    wraps.append(_Wrap(fix.path, old, note))
            elif fix.kind == "rename":
                parent_path, old_key = fix.path[:-1], str(fix.path[-1])
                _, parent = get_at(self.value, parent_path)
                renamed = {(fix.new_key if k == old_key else k): v for k, v in parent.items()}
                parent.clear()
                parent.update(renamed)
                self._forbidden.add((fix.path, fix.rule))
                self._note(fix.rule, fix.path, json.dumps(old_key), json.dumps(fix.new_key))
            else:
                parent_path, key = fix.path[:-1], str(fix.path[-1])
                _, parent = get_at(self.value, parent_path)
                order = tuple(parent)
                delete_key(parent, key)
                note = self._note(fix.rule, fix.path, summary(old), "(removed)")
                drops.append(_Drop(parent_path, key, old, order, before[parent_path], note))
        return drops, wraps

    def _put_back(self, drops: list[_Drop], errors: Sequence[Any]) -> bool:
        """Undo drops that made their object fail in a new way (the key was required,
        or the object now fails another object-level check); never try them again."""
        by_parent: dict[JsonPath, list[_Drop]] = {}
        for drop in drops:
            by_parent.setdefault(drop.parent, []).append(drop)
        undone: list[_Drop] = []
        after = _signatures(errors, set(by_parent))
        for parent_path, group in by_parent.items():
            new = after[parent_path] - group[0].before
            if not new:
                continue
            named = [d for d in group if any(_names_key(sig, d.key) for sig in new)]
            unexplained = any(not any(_names_key(sig, d.key) for d in group) for sig in new)
            undone.extend(group if unexplained else named)
        for drop in undone:
            _, parent = get_at(self.value, drop.parent)
            restore_keys(parent, drop.order, {drop.key: drop.old})
            self._notes[drop.note] = None
            rule = self._drop_rule(drop)
            self._forbidden.add(((*drop.parent, drop.key), rule))
        return bool(undone)

    def _unwrap_useless(self, wraps: list[_Wrap], errors: Sequence[Any]) -> bool:
        """Undo wraps whose new item has a type no rule can fix, or one only another
        wrap would fix (``items: {"$ref": "#"}`` would nest forever); never retry them.
        An item of the right type that fails something else (``enum``, ``pattern``) stays
        wrapped, so the feedback names the real problem."""
        if not wraps:
            return False
        items = {(*wrap.path, 0): wrap for wrap in wraps}
        useless: dict[JsonPath, _Wrap] = {}
        for error in errors:
            for site in self._sites(error):
                owner = next(
                    (
                        items[site.path[:i]]
                        for i in range(len(site.path) + 1)
                        if site.path[:i] in items
                    ),
                    None,
                )
                if owner is None or owner.path in useless:
                    continue
                fix = self._fix_for(site)
                wrong_type = fix is None and site.expected is not None
                if wrong_type or (fix is not None and fix.rule is SchemaRule.WRAP_BARE_STRING):
                    useless[owner.path] = owner
        for wrap in useless.values():
            self.value = replace_at(self.value, wrap.path, wrap.old)
            self._notes[wrap.note] = None
            self._forbidden.add((wrap.path, SchemaRule.WRAP_BARE_STRING))
        return bool(useless)

    def _drop_rule(self, drop: _Drop) -> SchemaRule:
        return SchemaRule.DROP_NULL if drop.old is None else SchemaRule.DROP_NULL_STRING


def _spelling(key: str) -> str:
    """A key with letter case, ``_`` and ``-`` taken out: ``filePath``, ``file_path``,
    ``FILE-PATH`` all read ``filepath``."""
    return key.casefold().replace("_", "").replace("-", "")


def _pattern_admits(patterns: object, key: str) -> bool:
    """Whether one of ``patternProperties``' patterns matches ``key`` (a pattern Python
    cannot compile counts as a match: the key may be admitted, so it is not renamed)."""
    if not isinstance(patterns, dict):
        return False
    for pattern in patterns:
        try:
            if re.search(str(pattern), key):
                return True
        except re.error:
            return True
    return False


def _type_set(value: Any) -> frozenset[str]:
    if isinstance(value, str):
        return frozenset({value})
    if isinstance(value, list):
        return frozenset(v for v in value if isinstance(v, str))
    return frozenset()
