"""Lazy package exports (PEP 562), written once per package.

A package names what it exports in one place, its ``TYPE_CHECKING`` block::

    if _typing.TYPE_CHECKING:
        from .errors import ClosedError as ClosedError
        from .syntax.assembler import ArgumentAssembler as ArgumentAssembler

    __all__, __getattr__, __dir__ = attach(__name__, __file__)

and :func:`attach` builds ``__all__`` and the lazy name -> module map from that block
when the package is imported; a name's module is imported on first use. A short-lived
process (a harness hook runs once per tool call) then pays only for the layers it
touches.

Why this shape:

* Type checkers read the block as ordinary imports, so ``mypy --strict`` and IDEs see
  every name with its type. ``Name as Name`` is the PEP 484 form of an explicit
  re-export: a computed ``__all__`` is invisible to them, and without the alias
  ``--no-implicit-reexport`` (part of ``--strict``) would refuse ``from streamrepair
  import ArgumentAssembler`` in a user's code. anyio's ``__init__`` uses the same form.
* At run time the block is read from the package's own source with a small hand parser
  (:func:`read_exports`), not with :mod:`ast`. ``ast.parse`` would do, but costs 4 to 7
  times as much (0.9 ms against 0.2 ms for the four packages a hook process imports), and
  a process that loads nothing else that needs it would also pay for ``import ast``
  (about 1.6 ms); the hook's budget is 50 ms of start-up in all
  (benchmarks/bench_hook.py). The parser accepts only what the block may hold
  (``from M import N as N``, parenthesized or not, with comments and blank lines) and
  refuses anything else with an ``ImportError`` that names the package and the line, so
  the block cannot say one thing to the type checker and another to the interpreter;
  tests/test_public_api.py compares its reading with :mod:`ast`'s for every package.
  Nothing is cached on disk; the source ships in the wheel beside the bytecode.
* One statement per name (``from .errors import A as A`` then ``... import B as B``) is
  how ruff's import sorting writes aliased imports; the parser reads the parenthesized
  form too.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["attach", "read_exports"]


def read_exports(source: str, package: str = "<package>") -> dict[str, str]:
    """The exports of a package whose ``__init__`` source is ``source``: each name in its
    ``TYPE_CHECKING`` block -> the module it is imported from, as written (``.errors``,
    ``..errors``), in the block's order. Raises ``ImportError`` naming ``package`` when
    there is no such block or it holds anything but ``from M import N as N``."""
    lines = [line.rstrip() for line in source.splitlines()]
    start = next(
        (
            i
            for i, line in enumerate(lines)
            if line.startswith("if ") and line.endswith("TYPE_CHECKING:")
        ),
        None,
    )
    if start is None:
        raise ImportError(f"{package}: no `if _typing.TYPE_CHECKING:` block of exports")
    exports: dict[str, str] = {}
    module = ""
    for number, line in enumerate(lines[start + 1 :], start + 2):
        if line and not line[0].isspace():
            break
        words = line.partition("#")[0].replace("(", " ").replace(")", " ").replace(",", " ").split()
        if words[:1] == ["from"]:
            if len(words) < 3 or words[2] != "import":
                raise ImportError(f"{package}, line {number}: expected `from M import N as N`")
            module, words = words[1], words[3:]
        while words:
            name, words = words[:3], words[3:]
            if not module or len(name) < 3 or name[1] != "as" or name[0] != name[2]:
                raise ImportError(
                    f"{package}, line {number}: an export is written `Name as Name` after "
                    f"`from M import` (explicit for type checkers), got {line.strip()!r}"
                )
            exports[name[0]] = module
    if not exports:
        raise ImportError(f"{package}: the TYPE_CHECKING block exports nothing")
    return exports


def attach(
    package: str, init_file: str
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` for ``package``, whose ``__init__`` is
    ``init_file``, from the exports :func:`read_exports` reads in its source. Call it at the
    end of the ``__init__``: the package module must already be in :data:`sys.modules`."""
    with open(init_file, encoding="utf-8") as file:
        exports = read_exports(file.read(), package)
    namespace = sys.modules[package].__dict__
    listed = sorted(exports)

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*listed, *(n for n in namespace if n.startswith("__"))})

    return listed, __getattr__, __dir__
