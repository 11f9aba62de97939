"""The import rules that keep the layers apart, checked on the source (AST) and at run time.

A module imports only from its own layer or a lower one; the lower layers never import
anyio or jsonschema; nothing inside the package imports the package root. docs/design.md
draws the same layers.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "streamrepair"

#: The layers, lowest first. A module's layer is its subpackage; root modules are core.
LAYERS: tuple[str, ...] = (
    "core",
    "syntax",
    "schema",
    "providers",
    "stream",
    "turn",
    "telemetry",
    "integrations",
    "proxy",
    "cli",
)
#: Self-contained packages that import nothing else of streamrepair.
STANDALONE = frozenset({"compat"})
#: Third-party imports allowed only in the modules named (module path under the package).
RESTRICTED: dict[str, frozenset[str]] = {
    "jsonschema": frozenset({"schema.rules", "schema._access"}),
    "referencing": frozenset({"schema.rules", "schema._access"}),
    "anyio": frozenset({"stream.drivers", "turn.abort", "proxy", "cli", "integrations"}),
}


@dataclass(frozen=True)
class Import:
    module: str  # importing module, dotted under the package ("stream.tracker")
    target: str  # absolute dotted name imported ("streamrepair.syntax.assembler", "anyio")
    names: tuple[str, ...]
    line: int
    top_level: bool


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _layer(module: str) -> str:
    head = module.split(".")[0] if module else ""
    if head in LAYERS or head in STANDALONE:
        return head
    return "core"


def _imports(path: Path, module: str | None = None) -> list[Import]:
    """The imports of the file at ``path`` (outside ``if TYPE_CHECKING:``), read as the
    package module ``module`` (by default, the module the path is)."""
    if module is None:
        module = _module_name(path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    type_checking: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_checking.update(id(n) for n in ast.walk(node))
    found: list[Import] = []
    for node in ast.walk(tree):
        if id(node) in type_checking:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(module, alias.name, (), node.lineno, id(node) in top))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ["streamrepair", *module.split(".")] if module else ["streamrepair"]
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names = tuple(a.name for a in node.names)
            found.append(Import(module, target, names, node.lineno, id(node) in top))
    return found


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _internal_target(imp: Import) -> str | None:
    """The imported module under the package, dotted (``""`` for the root), or None."""
    if imp.target == "streamrepair":
        # `from streamrepair import x` / `from .. import x`: x may be a submodule.
        if imp.names and all(
            (PACKAGE / n).is_dir() or (PACKAGE / f"{n}.py").exists() for n in imp.names
        ):
            return imp.names[0]
        return ""
    if imp.target.startswith("streamrepair."):
        return imp.target[len("streamrepair.") :]
    return None


ALL_IMPORTS = [imp for path in _sources() for imp in _imports(path)]


def test_the_sources_were_found() -> None:
    modules = {imp.module for imp in ALL_IMPORTS}
    assert {"syntax.assembler", "stream.tracker", "turn.conversation", "schema.rules"} <= modules


def test_each_module_imports_only_its_own_layer_or_lower() -> None:
    wrong = []
    for imp in ALL_IMPORTS:
        target = _internal_target(imp)
        if target is None or target == "":
            continue
        mine, theirs = _layer(imp.module), _layer(target)
        if mine in STANDALONE or theirs in STANDALONE:
            if mine != theirs:
                wrong.append(f"{imp.module}:{imp.line} imports {target} (standalone package)")
            continue
        if LAYERS.index(theirs) > LAYERS.index(mine):
            wrong.append(f"{imp.module}:{imp.line} ({mine}) imports {target} ({theirs})")
    assert not wrong, "imports that go up a layer:\n" + "\n".join(wrong)


def test_nothing_imports_the_package_root() -> None:
    wrong = []
    for imp in ALL_IMPORTS:
        target = _internal_target(imp)
        if target is None:
            continue
        if target == "" and imp.module:  # the root's own lazy table is the exception
            wrong.append(f"{imp.module}:{imp.line} imports the package root")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("library", sorted(RESTRICTED))
def test_heavy_dependencies_stay_where_they_belong(library: str) -> None:
    allowed = RESTRICTED[library]
    wrong = []
    for imp in ALL_IMPORTS:
        if imp.target.split(".")[0] != library:
            continue
        if not any(imp.module == a or imp.module.startswith(a + ".") for a in allowed):
            wrong.append(f"{imp.module}:{imp.line} imports {library}")
    assert not wrong, f"{library} is imported outside {sorted(allowed)}:\n" + "\n".join(wrong)


def test_the_checker_finds_a_violation(tmp_path: Path) -> None:
    # The rules above must be able to fail: a syntax module importing the stream layer,
    # and a core module importing anyio, are both caught.
    bad = tmp_path / "bad.py"
    bad.write_text("import anyio\nfrom ..stream.tracker import ToolCallTracker\n")
    imports = _imports(bad, "syntax.bad")
    assert any(_internal_target(i) == "stream.tracker" for i in imports)
    assert LAYERS.index(_layer("stream.tracker")) > LAYERS.index(_layer("syntax.bad"))
    assert any(i.target == "anyio" and i.module == "syntax.bad" for i in imports)


def _modules_loaded_by(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return set(done.stdout.split())


def test_a_stream_without_tools_loads_neither_jsonschema_nor_anyio() -> None:
    fixture = ROOT / "fixtures" / "sse" / "repairs-needed.sse"
    loaded = _modules_loaded_by(
        "from streamrepair.stream import ToolCallStream\n"
        "core = ToolCallStream()\n"
        f"events = core.feed(open({str(fixture)!r}, 'rb').read()) + core.finish()\n"
        "assert any(type(e).__name__ == 'ToolCallReady' for e in events)\n"
    )
    assert "streamrepair.stream.pipeline" in loaded
    assert "jsonschema" not in loaded
    assert "anyio" not in loaded


def test_the_core_and_the_syntax_layer_load_no_dependency() -> None:
    loaded = _modules_loaded_by("import streamrepair\nstreamrepair.repair('{\"a\": 1,}')\n")
    assert "streamrepair.syntax.assembler" in loaded
    assert not {"jsonschema", "anyio", "streamrepair.stream", "streamrepair.schema"} & loaded
