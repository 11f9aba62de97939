"""Which build of streamrepair runs: the mypyc-compiled modules or the pure-Python ones.

The same ``.py`` files are the package either way. Where a C compiler was present at
install time, ``setup.py`` compiles the modules in :data:`COMPILED_MODULES` with mypyc and
puts each extension module beside its source (docs/build.md). Python's import system
prefers an extension module to a source file of the same name, so the compiled ones run
unless :func:`select`, called first thing by the package's ``__init__``, decides they must
not. It decides once per process, on the first import of ``streamrepair``:

* ``STREAMREPAIR_PURE=1`` (any value but empty or ``0``) in the environment: pure;
* no compiled module installed (built without a C compiler, or with the switch): pure;
* a compiled module whose source changed since it was built (an editable install after
  an edit; ``_build.json`` keeps each source's hash from the build), or a compiled set
  with a module missing: pure, because a compiled module runs its source as it was then,
  and the compiled modules reach into each other's classes directly (one of them run
  from source among compiled ones would fail on first use);
* otherwise the compiled modules.

To run pure, a finder placed first on ``sys.meta_path`` loads every module of the list
from its ``.py`` file. Nothing else in the package knows which build runs;
:func:`build_info` says which one does, and why.
"""

from __future__ import annotations

# Only os and sys at import time: this runs on every start of every process that imports
# the package (a harness hook starts once per tool call).
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, NamedTuple, TypeVar

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec
    from types import ModuleType

    # mypyc reads the decorator by this name when it compiles a module; nothing needs
    # mypy_extensions at run time (the package does not depend on it).
    from mypy_extensions import mypyc_attr as mypyc_attr
else:
    _Class = TypeVar("_Class")

    def mypyc_attr(*attrs: object, **kwattrs: object) -> Callable[[_Class], _Class]:
        """How the compiled build treats a class (``native_class=False``,
        ``allow_interpreted_subclasses=True``); at run time, as mypy_extensions' own,
        nothing."""
        return lambda cls: cls


__all__ = [
    "COMPILED_MODULES",
    "PURE_VARIABLE",
    "STAMP_FILE",
    "BuildInfo",
    "build_info",
    "mypyc_attr",
    "pure_copy",
    "select",
    "source_digest",
]

#: The modules the build compiles with mypyc, relative to the package. ``setup.py`` reads
#: this tuple (it must stay a literal); adding a module is one line here.
COMPILED_MODULES: Final = (
    "syntax._lexical",
    "syntax._records",
    "syntax._recorder",
    "syntax._repeats",
    "syntax.changes",
    "syntax.assembler",
    "syntax.oneshot",
    "syntax.ijson_adapter",
)
#: The environment variable that forces the pure-Python package, read by ``setup.py``
#: (build nothing) and on the first import of ``streamrepair`` (load the sources).
PURE_VARIABLE: Final = "STREAMREPAIR_PURE"
#: What the build wrote beside the package: ``{"build": "compiled" | "pure", "reason":
#: ..., "mypyc": version, "sources": {module: sha256 of its source}}``.
STAMP_FILE: Final = "_build.json"


class BuildInfo(NamedTuple):
    """Which build runs in this process, as :func:`build_info` found it.

    ``compiled`` is true when every module of :data:`COMPILED_MODULES` runs compiled;
    ``modules`` names the compiled modules running (empty when pure); ``reason`` says
    why the pure modules run, or which mypyc built the compiled ones.
    """

    compiled: bool
    modules: tuple[str, ...]
    reason: str

    def __str__(self) -> str:
        if self.compiled:
            return f"compiled ({self.reason}, {len(self.modules)} modules)"
        return f"pure Python ({self.reason})"


# The decision select() made, by package name (a test may load a second copy of the
# package from its sources under another name; each copy decides for itself).
_REASONS: dict[str, str] = {}


def pure_requested() -> bool:
    """Whether the environment asks for the pure-Python package."""
    return os.environ.get(PURE_VARIABLE, "") not in ("", "0")


def source_digest(path: str) -> str:
    """The sha256 of a source file, as the build recorded it."""
    import hashlib

    with open(path, "rb") as file:
        return hashlib.sha256(file.read()).hexdigest()


def _source(root: str, module: str) -> str:
    return os.path.join(root, *module.split(".")) + ".py"


def _extension_suffixes() -> list[str]:
    from importlib.machinery import EXTENSION_SUFFIXES

    return EXTENSION_SUFFIXES


def _extension_exists(root: str, module: str) -> bool:
    base = os.path.join(root, *module.split("."))
    return any(os.path.exists(base + suffix) for suffix in _extension_suffixes())


def _read_stamp(root: str) -> dict[str, object]:
    import json

    try:
        with open(os.path.join(root, STAMP_FILE), encoding="utf-8") as file:
            stamp = json.load(file)
    except (OSError, ValueError):
        return {}
    return stamp if isinstance(stamp, dict) else {}


def _why_pure(root: str) -> str | None:
    """Why this installation must run pure, or None when its compiled modules may run."""
    if pure_requested():
        return f"{PURE_VARIABLE}=1"
    stamp = _read_stamp(root)
    present = [m for m in COMPILED_MODULES if _extension_exists(root, m)]
    if not present:
        if stamp.get("build") == "pure":
            return f"built without compiling: {stamp.get('reason')}"
        return "no compiled modules installed"
    missing = [m for m in COMPILED_MODULES if m not in present]
    if missing:
        return f"compiled build incomplete, missing {', '.join(missing)}"
    sources = stamp.get("sources")
    if not isinstance(sources, dict):
        return f"compiled build without its {STAMP_FILE}"
    changed = [
        m
        for m in COMPILED_MODULES
        if not os.path.exists(_source(root, m)) or sources.get(m) != source_digest(_source(root, m))
    ]
    if changed:
        return (
            f"source changed since the compiled build ({', '.join(changed)}); "
            "run pip install -e . again to rebuild"
        )
    return None


class _SourceFinder:
    """A meta path finder: loads the listed modules of one package from their ``.py``
    files."""

    def __init__(self, package: str, root: str) -> None:
        self._sources = {f"{package}.{m}": _source(root, m) for m in COMPILED_MODULES}

    def find_spec(
        self,
        fullname: str,
        path: object = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        source = self._sources.get(fullname)
        if source is None:
            return None
        from importlib.util import spec_from_file_location

        return spec_from_file_location(fullname, source)


def select(package: str, root: str) -> None:
    """Decide, once, whether the package ``package`` (its directory ``root``) runs its
    compiled modules or their sources; see the module docstring."""
    if package in _REASONS:
        return
    reason = _why_pure(root)
    if reason is None:
        stamp = _read_stamp(root)
        _REASONS[package] = f"mypyc {stamp.get('mypyc', '?')}"
        return
    _REASONS[package] = reason
    if any(_extension_exists(root, m) for m in COMPILED_MODULES):
        sys.meta_path.insert(0, _SourceFinder(package, root))


def build_info() -> BuildInfo:
    """Which build of streamrepair runs in this process: the compiled modules or the
    pure-Python ones, and why (imports the modules that can be compiled)."""
    from importlib import import_module

    package = __name__.rpartition(".")[0]
    running = tuple(m for m in COMPILED_MODULES if _is_extension(import_module(f"{package}.{m}")))
    compiled = len(running) == len(COMPILED_MODULES)
    reason = _REASONS.get(package, "the package was not imported through its __init__")
    if not compiled and reason.startswith("mypyc"):
        reason = "compiled modules not loaded"
    return BuildInfo(compiled=compiled, modules=running, reason=reason)


def _is_extension(module: ModuleType) -> bool:
    origin = getattr(module, "__file__", None) or ""
    return origin.endswith(tuple(_extension_suffixes()))


class _CopyFinder:
    """A meta path finder: loads ``alias`` and its submodules from the package's ``.py``
    files."""

    def __init__(self, alias: str, root: str) -> None:
        self._alias = alias
        self._root = root

    def find_spec(
        self,
        fullname: str,
        path: object = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        if fullname != self._alias and not fullname.startswith(self._alias + "."):
            return None
        from importlib.util import spec_from_file_location

        base = os.path.join(self._root, *fullname.split(".")[1:])
        init = os.path.join(base, "__init__.py")
        if os.path.exists(init):
            return spec_from_file_location(fullname, init, submodule_search_locations=[base])
        if os.path.exists(base + ".py"):
            return spec_from_file_location(fullname, base + ".py")
        return None


def pure_copy(alias: str = "streamrepair_pure") -> ModuleType:
    """A second, independent copy of the package named ``alias``, every module run from
    its ``.py`` file, whichever build the package itself runs: for the tests and
    benchmarks that compare the two builds in one process. Its classes are its own
    (``alias.errors.UnrepairableError`` is not ``streamrepair.UnrepairableError``)."""
    from importlib import import_module

    if alias not in sys.modules:
        root = os.path.dirname(os.path.abspath(__file__))
        sys.meta_path.insert(0, _CopyFinder(alias, root))
        import_module(f"{alias}._build")._REASONS[alias] = "a copy run from the sources"
    return import_module(alias)
