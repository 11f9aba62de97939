"""docs/design.md keeps up with the code: its module map lists every module of the
package, and its state table lists every state of the assembler."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "streamrepair"
DESIGN = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return DESIGN.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _holds_code(path: Path) -> bool:
    """A package ``__init__`` that defines functions or classes (not only re-exports)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(n, ast.FunctionDef | ast.ClassDef) for n in tree.body)


def _modules() -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        if path.name == "__init__.py" and not _holds_code(path):
            continue
        found.add(path.relative_to(PACKAGE).as_posix())
    return found


def test_the_module_map_lists_every_module() -> None:
    mapped = set(re.findall(r"^\| `([\w/]+\.py)` \|", _section("Module map"), flags=re.M))
    modules = _modules()
    assert modules - mapped == set(), "modules missing from the map in docs/design.md"
    assert mapped - modules == set(), "the map in docs/design.md names modules that do not exist"


def _states() -> list[str]:
    source = (PACKAGE / "syntax" / "assembler.py").read_text(encoding="utf-8")
    numbered = re.findall(r"^_([A-Z_]+)(?:: Final)? = (\d+)\b", source, flags=re.M)
    start = [name for name, _ in numbered].index("VALUE")
    states = []
    for expected, (name, number) in enumerate(numbered[start:]):
        if int(number) != expected:
            break
        states.append(name)
    return states


def test_the_state_table_lists_every_state() -> None:
    states = _states()
    assert states[0] == "VALUE"
    assert "ERROR" in states
    table = re.findall(r"^\| `([A-Z_]+)` \|", _section("The state machine"), flags=re.M)
    assert table == states
