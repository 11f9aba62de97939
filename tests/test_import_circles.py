"""No import circle anywhere in ``src/``: the import graph of the package, read from the
source (AST), has no cycle, and a failure names every circle it found.

What counts as an import:

* module-level and function-level imports alike: an import inside a function still ties
  the two modules together, it only postpones the failure a circle causes (a half-built
  module met at call time instead of at import time);
* relative imports resolved against the importing module; ``from P import n`` is an edge
  to ``P.n`` when ``n`` is a module of ``P`` (``from . import relay``), else to ``P``;
* not the imports under ``if TYPE_CHECKING:``. They never run, so they cannot meet a
  half-built module, and they are how a module names another's types for the checker
  without depending on it at run time. Every package ``__init__`` keeps its exports
  there (see ``_lazy.py``); counting them would make every module that imports its own
  package part of a circle through the package's export list, which says nothing about
  how the code depends on itself. A contract two modules share at run time belongs in a
  ``typing.Protocol`` in a leaf module (STYLE.md), which this test does see.

One test per top-level package (``core`` for the modules at the root), so that a circle
reads as the package it is in; a circle through two packages fails both.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "streamrepair"
NAME = PACKAGE.name


def _module_name(path: Path) -> str:
    parts = [NAME, *path.relative_to(PACKAGE).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    return {
        _module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts
    }


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:  # the else branch runs
                skipped.update(id(n) for n in ast.walk(child))
    return skipped


def _edges(module: str, path: Path, modules: set[str]) -> set[str]:
    """The modules of the package that ``module`` (the file at ``path``) imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skipped = _type_checking_nodes(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                found.add(submodule if submodule in modules else target)
    return {m for m in found if m in modules and m != module}


def import_graph(sources: dict[str, Path] | None = None) -> dict[str, set[str]]:
    """Each module of the package -> the modules of the package it imports."""
    sources = _sources() if sources is None else sources
    modules = set(sources)
    return {module: _edges(module, path, modules) for module, path in sources.items()}


def circles(graph: dict[str, set[str]]) -> list[tuple[list[str], list[str]]]:
    """Every import circle: one per strongly connected component of more than one module
    (Tarjan's algorithm, iterative), as (the shortest circle from the component's first
    module by name, written ``[a, b, a]``; every module of the component, sorted)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(component)
    return sorted((_shortest_circle(graph, c), sorted(c)) for c in components)


def _shortest_circle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    start = min(component)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & component):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"no circle in the component {sorted(component)}")


def _top_package(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 2 or (PACKAGE / parts[-1]).is_dir():
        return parts[1]
    return "core"


def _describe(found: Iterable[tuple[list[str], list[str]]]) -> str:
    lines = []
    for circle, members in found:
        line = " -> ".join(circle)
        if len(members) > len(circle) - 1:
            line += f"\n    (one knot of {len(members)} modules: {', '.join(members)})"
        lines.append(line)
    return "\n".join(lines)


GRAPH = import_graph()
ALL_CIRCLES = circles(GRAPH)
TOP_PACKAGES = sorted({_top_package(m) for m in GRAPH})
# No circle is known: a package listed here is expected to have one (strict=True makes
# the test fail as soon as it has none left).
KNOWN_CIRCLES: set[str] = set()


def test_the_graph_reads_the_package() -> None:
    assert len(GRAPH) > 50
    assert "streamrepair.stream.tracker" in GRAPH["streamrepair.stream.pipeline"]
    # a function-level import counts: cli/__init__ imports .hook inside main()
    assert "streamrepair.cli.hook" in GRAPH["streamrepair.cli"]
    # a TYPE_CHECKING import does not: the root's export block (the build switch runs first)
    assert GRAPH["streamrepair"] == {"streamrepair._lazy", "streamrepair._build"}
    assert {"cli", "core", "syntax", "providers", "proxy"} <= set(TOP_PACKAGES)


@pytest.mark.parametrize(
    "package",
    [
        pytest.param(
            p,
            marks=pytest.mark.xfail(
                strict=True, reason="issue 20: a known circle, removed on another branch"
            ),
        )
        if p in KNOWN_CIRCLES
        else p
        for p in TOP_PACKAGES
    ],
)
def test_no_import_circle(package: str) -> None:
    found = [c for c in ALL_CIRCLES if any(_top_package(m) == package for m in c[1])]
    assert not found, f"import circles through {package}:\n{_describe(found)}"


def _write(root: Path, files: dict[str, str]) -> dict[str, Path]:
    sources = {}
    for name, text in files.items():
        path = root / (name.replace(".", "/") + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        sources[name.removesuffix(".__init__")] = path
    return sources


def test_the_checker_finds_every_kind_of_circle(tmp_path: Path) -> None:
    sources = _write(
        tmp_path,
        {
            "pkg.__init__": "",
            "pkg.a": "from . import b\n",  # `from . import module`
            "pkg.b": "def f():\n    from .c import x\n",  # function-level, relative
            "pkg.c": "import pkg.a\n",  # absolute
            "pkg.sub.__init__": "",
            "pkg.sub.d": "from ..sub.e import y\n",
            "pkg.sub.e": "from pkg.sub import d\n",
            "pkg.f": (  # type-only: not a circle
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .g import G\n"
            ),
            "pkg.g": "from .f import F\n",
            "pkg.h": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\nelse:\n"
            "    from .i import x\n",
            "pkg.i": "from .h import y\n",  # an else branch of TYPE_CHECKING runs
        },
    )
    graph = import_graph(sources)
    assert graph["pkg.f"] == set()
    assert [circle for circle, _ in circles(graph)] == [
        ["pkg.a", "pkg.b", "pkg.c", "pkg.a"],
        ["pkg.h", "pkg.i", "pkg.h"],
        ["pkg.sub.d", "pkg.sub.e", "pkg.sub.d"],
    ]
    # a knot larger than its shortest circle names every module in it
    graph["pkg.c"].add("pkg.f")
    graph["pkg.f"].add("pkg.a")
    assert _describe(circles(graph)).splitlines()[:2] == [
        "pkg.a -> pkg.b -> pkg.c -> pkg.a",
        "    (one knot of 4 modules: pkg.a, pkg.b, pkg.c, pkg.f)",
    ]
