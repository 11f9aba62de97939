"""Helpers for :mod:`streamrepair.schema.rules`: the caller's schema made safe to use,
and finding the path-like strings whose markdown autolinks may be unwrapped.

Nothing here is public API. :class:`SchemaAccess` never raises for a malformed schema:
it validates a cleaned copy from which every part ``jsonschema``'s own metaschema
rejects has been removed, drops references that do not resolve (or that loop), and
gives up on the schema (recording why) only when ``jsonschema`` still cannot use it.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from jsonschema import FormatChecker  # type: ignore[import-untyped,unused-ignore]
from jsonschema.validators import (  # type: ignore[import-untyped,unused-ignore]
    Draft3Validator,
    Draft4Validator,
    Draft6Validator,
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
    validator_for,
)
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012, specification_with

from ._values import MAX_COPY_DEPTH, JsonPath, get_at, pointer, summary

#: Most cleaned schemas remembered (keyed by their JSON text).
SCHEMA_CACHE_SIZE: Final = 128
#: Most parts of one schema removed or rewritten before giving up on it.
MAX_SCHEMA_FIXES: Final = 256
#: Most subschemas considered at one place when looking for a path-like ``format``.
_MAX_SCHEMA_FANOUT: Final = 64
_REF_KEYWORDS: Final = ("$ref", "$dynamicRef", "$recursiveRef")
# Lists whose entries are alternatives (a broken entry is removed); in prefixItems
# and old-style tuple items an entry stands for a position (it becomes ``true``).
_POSITIONAL: Final = frozenset({"prefixItems", "items"})

_DEFAULT: Final[Any] = Draft202012Validator
_DIALECTS: Final[dict[str, Any]] = {
    str(cls.META_SCHEMA.get("$id") or cls.META_SCHEMA.get("id")).rstrip("#"): cls
    for cls in (
        Draft3Validator,
        Draft4Validator,
        Draft6Validator,
        Draft7Validator,
        Draft201909Validator,
        Draft202012Validator,
    )
}
# The metaschema's "regex" format is the only one checked, so cleaning never depends
# on which optional format libraries happen to be installed.
_REGEX_ONLY: Final = FormatChecker(formats=("regex",))


class _Unreadable(Exception):
    pass


# --------------------------------------------------------------------------- copies


def _copy_schema(value: Any) -> tuple[Any, bool]:
    """A copy of a schema's dicts and lists (anything else is kept as is: it is only
    read), and whether it is pure JSON data (string keys, JSON scalars). Raises
    :class:`_Unreadable` for a cycle or absurd depth."""
    if not isinstance(value, (Mapping, list)):
        return value, False
    root: Any = {} if isinstance(value, Mapping) else []
    pure = True
    stack: list[tuple[Any, Any, int]] = [(value, root, 1)]
    while stack:
        source, target, depth = stack.pop()
        if depth > MAX_COPY_DEPTH:
            raise _Unreadable(f"the schema nests deeper than {MAX_COPY_DEPTH} levels")
        is_map = isinstance(source, Mapping)
        pure = pure and isinstance(source, (dict, list))
        items = source.items() if is_map else enumerate(source)
        for key, item in items:
            pure = pure and (not is_map or isinstance(key, str))
            child = item
            if isinstance(item, (Mapping, list)):
                child = {} if isinstance(item, Mapping) else []
                stack.append((item, child, depth + 1))
            else:
                pure = pure and (item is None or isinstance(item, (str, int, float, bool)))
            if isinstance(target, dict):
                target[key] = child
            else:
                target.append(child)
    return root, pure


def _cache_key(root: Any) -> str | None:
    try:
        return json.dumps(root)
    except ValueError:  # an integer beyond the int-to-string limit
        return None


# --------------------------------------------------------------------------- path-like

_WORD: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
#: Field-name (or ``format``) words that say "this is a file-system path". Matched
#: against the LAST word, so ``file_content`` or ``profile`` are not path-like.
PATH_WORDS: Final = frozenset(
    {
        "path", "paths", "pathname", "pathnames", "filepath", "filepaths",
        "file", "files", "filename", "filenames", "dir", "dirs", "dirname", "dirpath",
        "directory", "directories", "folder", "folders", "cwd", "workdir",
    }
)  # fmt: skip
_NAME_OWNERS: Final = frozenset({"file", "dir", "directory", "folder", "path"})


def is_path_like(name: str) -> bool:
    """Whether a property name (or ``format`` value) names a file-system path:
    ``path``, ``filePath``, ``file_path``, ``paths``, ``files``, ``cwd``, ``target_dir``,
    ``fileName``; not ``content``, ``file_content``, ``profile``, ``url``."""
    words = [word.lower() for word in _WORD.findall(name)]
    if not words:
        return False
    if words[-1] in PATH_WORDS:
        return True
    return len(words) > 1 and words[-1] in ("name", "names") and words[-2] in _NAME_OWNERS


# --------------------------------------------------------------------------- schema


def _dialect(root: dict[Any, Any], skipped: list[str]) -> Any:
    """The validator class ``$schema`` names (through ``validator_for``), or 2020-12."""
    declared = root.get("$schema")
    if declared is None:
        return _DEFAULT
    if isinstance(declared, str) and declared.strip().rstrip("#") in _DIALECTS:
        cls = _DIALECTS[declared.strip().rstrip("#")]
        canonical = cls.META_SCHEMA.get("$id") or cls.META_SCHEMA.get("id")
        return validator_for({"$schema": canonical}, default=_DEFAULT)
    skipped.append(
        f"#/$schema: unknown dialect {summary(declared, 60)}; validated as Draft 2020-12"
    )
    return _DEFAULT


def _remove(root: Any, path: JsonPath, why: str, skipped: list[str]) -> None:
    found, parent = get_at(root, path[:-1])
    if not found:
        return
    last = path[-1]
    if isinstance(parent, dict) and last in parent:
        removed = parent.pop(last)
    elif isinstance(parent, list) and isinstance(last, int) and last < len(parent):
        removed = parent[last]
        if len(path) > 1 and path[-2] in _POSITIONAL:
            parent[last] = True
        else:
            del parent[last]
    else:
        return
    skipped.append(f"{pointer(path)}: {summary(removed, 40)} {why}; ignored")


def _give_up_note(exc: BaseException) -> str:
    return (
        f"#: the schema could not be used ({type(exc).__name__}: "
        f"{summary(str(exc), 60)}); nothing was validated"
    )


def _prepare(root: dict[Any, Any]) -> tuple[Any, Any, tuple[str, ...]]:
    """``(validator class, cleaned root or None, skipped notes)``: every part the
    metaschema rejects removed, deepest first; ``None`` when nothing is usable."""
    skipped: list[str] = []
    cls = _dialect(root, skipped)
    meta = cls(cls.META_SCHEMA, format_checker=_REGEX_ONLY)
    for _ in range(MAX_SCHEMA_FIXES):
        try:
            problems = {tuple(error.absolute_path) for error in meta.iter_errors(root)}
        except Exception as exc:  # a schema jsonschema cannot even check
            return cls, None, (*skipped, _give_up_note(exc))
        if not problems:
            _false_subschemas_to_not(root)
            return cls, root, tuple(skipped)
        if () in problems:
            skipped.append("#: the schema is not valid as a whole; nothing was validated")
            return cls, None, tuple(skipped)
        for path in sorted(problems, key=_sort_key, reverse=True):
            _remove(root, path, "is not valid there", skipped)
    skipped.append("#: too many invalid parts; nothing was validated")
    return cls, None, tuple(skipped)


@functools.lru_cache(maxsize=SCHEMA_CACHE_SIZE)
def _prepared(text: str) -> SchemaAccess:
    """The access of a pure-JSON schema given as its JSON text: cleaned (:func:`_prepare`)
    and its validator built once, then shared by every :class:`SchemaAccess` of the same
    schema, which reads it and copies it before it changes it (``_drop_refs``)."""
    access = SchemaAccess(None)
    access._cls, access._root, skipped = _prepare(json.loads(text))
    access._skipped.extend(skipped)
    access._build()
    return access


class SchemaAccess:
    """The caller's schema, cleaned so that ``jsonschema`` can use it.

    ``validating`` is false without a (usable) schema. :meth:`errors` validates;
    :meth:`skipped_notes` lists what was ignored and why. Remote references are never
    fetched (an empty ``referencing`` registry), and formats are not asserted. A
    pure-JSON schema is cleaned and its validator built once (the last
    :data:`SCHEMA_CACHE_SIZE` schemas, keyed by their JSON text), since a harness passes
    the same tool schema on every call: judging a call then costs the call, not its
    schema. The cleaned schema and validator are shared, read only; the one change an
    access makes to its schema (dropping references that do not resolve, when a value
    reaches them) is made to a copy of its own.
    """

    def __init__(self, schema: Any) -> None:
        self._skipped: list[str] = []
        self._root: Any = None
        self._cls: Any = _DEFAULT
        self._validator: Any = None
        self._shared = False  # _root and _validator are _prepared's: copy before changing
        if schema is None:
            return
        if isinstance(schema, bool):
            self._root = schema
        elif isinstance(schema, Mapping):
            try:
                root, pure = _copy_schema(schema)
            except _Unreadable as exc:
                self._skipped.append(f"{exc}; nothing was validated")
                return
            key = _cache_key(root) if pure else None
            if key is not None:
                shared = _prepared(key)
                self._cls, self._root = shared._cls, shared._root
                self._validator = shared._validator
                self._skipped.extend(shared._skipped)
                self._shared = True
                return
            self._cls, self._root, skipped = _prepare(root)
            self._skipped.extend(skipped)
        else:
            self._skipped.append(
                f"the schema is a {type(schema).__name__}, not an object or a boolean; "
                "nothing was validated"
            )
            return
        self._build()

    @property
    def validating(self) -> bool:
        return self._validator is not None

    def skipped_notes(self) -> tuple[str, ...]:
        return tuple(self._skipped)

    def _build(self) -> None:
        if self._root is None:
            self._validator = None
            return
        try:
            self._validator = self._cls(self._root, registry=Registry())
        except Exception as exc:
            self._give_up(exc)

    def _give_up(self, exc: BaseException) -> None:
        self._skipped.append(_give_up_note(exc))
        self._root = None
        self._validator = None

    def errors(self, value: Any) -> list[Any]:
        """Every ``jsonschema`` error for ``value`` (empty when not validating)."""
        for _ in range(MAX_SCHEMA_FIXES):
            if self._validator is None:
                return []
            try:
                return list(self._validator.iter_errors(value))
            except Unresolvable:
                self._drop_refs(only_broken=True)
            except RecursionError:  # a reference cycle such as {"$ref": "#"}
                self._drop_refs(only_broken=False)
            except Exception as exc:
                self._give_up(exc)
        return []

    def _drop_refs(self, *, only_broken: bool) -> None:
        if self._shared:  # the cached schema stays as it is for every other access
            self._root = copy.deepcopy(self._root)
            self._shared = False
        places = list(_refs(self._root))
        if only_broken:
            broken = [p for p in places if not self._resolves(p[1])]
            places = broken or places
        if not places:
            self._give_up(RecursionError("schema recursion"))
            return
        why = "does not resolve" if only_broken else "may loop"
        for path, _ in sorted(places, key=lambda p: _sort_key(p[0]), reverse=True):
            _remove(self._root, path, why, self._skipped)
        self._build()

    def _resolves(self, ref: str) -> bool:
        try:
            dialect = self._cls.META_SCHEMA.get("$id") or self._cls.META_SCHEMA.get("id")
            spec = specification_with(dialect, default=DRAFT202012)
            resource = Resource.from_contents(self._root, default_specification=spec)
            Registry().resolver_with_root(resource).lookup(ref)
        except Exception:
            return False
        return True

    # -- path-like strings ---------------------------------------------------------

    def path_like_strings(self, value: Any) -> list[tuple[JsonPath, str]]:
        """Every string in ``value`` whose nearest property name is path-like, or whose
        schema ``format`` is (``path``, ``file-path``, ``directory``...)."""
        found: list[tuple[JsonPath, str]] = []
        root_schemas = [self._root] if isinstance(self._root, dict) else []
        stack: list[tuple[Any, JsonPath, str, list[Any]]] = [(value, (), "", root_schemas)]
        while stack:
            node, path, name, schemas = stack.pop()
            if isinstance(node, str):
                if (name and is_path_like(name)) or self._format_says_path(schemas):
                    found.append((path, node))
            elif isinstance(node, dict):
                for key, item in node.items():
                    stack.append((item, (*path, key), key, self._children(schemas, key)))
            elif isinstance(node, list):
                for index, item in enumerate(node):
                    stack.append((item, (*path, index), name, self._children(schemas, index)))
        found.sort(key=lambda entry: _sort_key(entry[0]))
        return found

    def _format_says_path(self, schemas: list[Any]) -> bool:
        return any(
            isinstance(s.get("format"), str) and is_path_like(s["format"])
            for s in self._expand(schemas)
        )

    def _expand(self, schemas: list[Any]) -> list[dict[Any, Any]]:
        out: list[dict[Any, Any]] = []
        seen: set[int] = set()
        stack = list(schemas)
        while stack and len(out) < _MAX_SCHEMA_FANOUT:
            schema = stack.pop()
            if not isinstance(schema, dict) or id(schema) in seen:
                continue
            seen.add(id(schema))
            out.append(schema)
            for keyword in ("allOf", "anyOf", "oneOf"):
                if isinstance(schema.get(keyword), list):
                    stack.extend(schema[keyword])
            stack.extend(schema.get(k) for k in ("then", "else"))
            ref = schema.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                steps = [s.replace("~1", "/").replace("~0", "~") for s in ref[2:].split("/")]
                target: Any = self._root
                for step in steps:
                    target = target.get(step) if isinstance(target, dict) else None
                stack.append(target)
        return out

    def _children(self, schemas: list[Any], key: str | int) -> list[Any]:
        if not schemas:
            return []
        out: list[Any] = []
        for schema in self._expand(schemas):
            if isinstance(key, str):
                props = schema.get("properties")
                if isinstance(props, dict) and key in props:
                    out.append(props[key])
                    continue
                additional = schema.get("additionalProperties")
                if isinstance(additional, dict):
                    out.append(additional)
            else:
                prefix = schema.get("prefixItems")
                items = schema.get("items")
                if isinstance(prefix, list) and key < len(prefix):
                    out.append(prefix[key])
                elif isinstance(items, list):
                    out.append(items[key] if key < len(items) else schema.get("additionalItems"))
                elif isinstance(items, dict):
                    out.append(items)
        return out


# Keywords whose values are data, not schemas: never rewritten.
_DATA_KEYWORDS: Final = frozenset({"const", "enum", "default", "examples"})


_SCHEMA_MAPS: Final = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
)
_SCHEMA_LISTS: Final = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_SINGLES: Final = ("not", "if", "then", "else", "contains", "propertyNames")


def _false_subschemas_to_not(root: Any) -> None:
    """Rewrite ``false`` subschemas as the equivalent ``{"not": {}}``: ``jsonschema``
    reports errors from a false subschema without their path (or branch), which would
    hide where the offending value is. ``additionalProperties``/``items``/... ``false``
    keep their own messages and are left alone."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            for keyword in _SCHEMA_MAPS:
                members = node.get(keyword)
                if isinstance(members, dict):
                    for key, sub in members.items():
                        if sub is False:
                            members[key] = {"not": {}}
            for keyword in _SCHEMA_LISTS:
                members = node.get(keyword)
                if isinstance(members, list):
                    members[:] = [{"not": {}} if sub is False else sub for sub in members]
            for keyword in _SCHEMA_SINGLES:
                if node.get(keyword) is False:
                    node[keyword] = {"not": {}}
            stack.extend(v for k, v in node.items() if k not in _DATA_KEYWORDS)


def _refs(root: Any) -> Iterator[tuple[JsonPath, str]]:
    stack: list[tuple[Any, JsonPath]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            for key, item in node.items():
                if key in _REF_KEYWORDS and isinstance(item, str):
                    yield (*path, key), item
                else:
                    stack.append((item, (*path, key)))
        elif isinstance(node, list):
            stack.extend((item, (*path, i)) for i, item in enumerate(node))


def _sort_key(path: JsonPath) -> tuple[tuple[int, Any], ...]:
    return tuple((0, s) if isinstance(s, int) else (1, str(s)) for s in path)
