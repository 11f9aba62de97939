"""The public API: what docs/api.md lists is what `streamrepair` exports, every module's
``__all__`` is complete and resolves, layer packages export their modules, and each
package's exports are written once, in its ``TYPE_CHECKING`` block."""

from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import streamrepair
import streamrepair.errors
import streamrepair.events
from streamrepair._lazy import read_exports

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "streamrepair"
LAYER_PACKAGES = ("syntax", "schema", "providers", "stream", "turn", "telemetry", "proxy")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _public_modules() -> list[Path]:
    """Modules with a public ``__all__``: not private (``_x.py``), not ``__main__``."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts or path.name == "__main__.py":
            continue
        if path.name != "__init__.py" and path.stem.startswith("_"):
            continue
        out.append(path)
    return out


def _declared(path: Path) -> tuple[list[str] | None, set[str]]:
    """(``__all__`` as written, the public names defined at the top level)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    listed: list[str] | None = None
    defined: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    if target.id == "__all__" and isinstance(node.value, ast.List):
                        listed = [ast.literal_eval(e) for e in node.value.elts]
                    defined.add(target.id)
    return listed, {n for n in defined if not n.startswith("_")}


EXPORTING_PACKAGES = sorted(
    _module_name(path)
    for path in PACKAGE.rglob("__init__.py")
    if "attach(__name__, __file__)" in path.read_text(encoding="utf-8")
)


def _type_checking_block(path: Path) -> dict[str, str]:
    """The package's ``TYPE_CHECKING`` block as :mod:`ast` reads it (name -> module as
    written); every statement in it must be ``from M import N as N``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    blocks = [
        n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)
    ]
    assert len(blocks) == 1, f"{path}: one TYPE_CHECKING block"
    exports: dict[str, str] = {}
    for node in blocks[0].body:
        assert isinstance(node, ast.ImportFrom), f"{path}: {ast.unparse(node)}"
        for alias in node.names:
            assert alias.asname == alias.name, f"{path}: {ast.unparse(node)} is not `N as N`"
            exports[alias.name] = "." * node.level + (node.module or "")
    return exports


def test_every_package_that_re_exports_uses_the_one_block() -> None:
    # cli/__init__ exports what it defines itself; compat imports nothing else of the
    # package (tests/test_layers.py), not even _lazy, and exports three names eagerly.
    packages = {_module_name(p) for p in PACKAGE.rglob("__init__.py")}
    assert set(EXPORTING_PACKAGES) == packages - {"streamrepair.cli", "streamrepair.compat"}


@pytest.mark.parametrize("package", EXPORTING_PACKAGES)
def test_a_package_exports_exactly_its_type_checking_block(package: str) -> None:
    path = PACKAGE.parent / package.replace(".", "/") / "__init__.py"
    block = _type_checking_block(path)
    assert read_exports(path.read_text(encoding="utf-8"), package) == block
    module = importlib.import_module(package)
    assert module.__all__ == sorted(block)
    for name, where in block.items():
        assert getattr(module, name) is getattr(importlib.import_module(where, package), name)
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match=rf"{package}.*not_a_name"):
        _ = module.not_a_name


def test_read_exports_reads_every_way_the_formatter_writes_a_block() -> None:
    source = (
        '"""Doc."""\n'
        "import typing as _typing\n"
        "if _typing.TYPE_CHECKING:\n"
        "    from .a import B as B  # a comment\n"
        "\n"
        "    from ..errors import (\n"
        "        E as E,\n"
        "        F as F,  # why F\n"
        "    )\n"
        "    from streamrepair.x import (G as G, H as H)\n"
        "__all__, __getattr__, __dir__ = attach(__name__, __file__)\n"
        "if TYPE_CHECKING:\n"
        "    from .later import Z as Z\n"
    )
    assert read_exports(source, "p") == {
        "B": ".a",
        "E": "..errors",
        "F": "..errors",
        "G": "streamrepair.x",
        "H": "streamrepair.x",
    }


@pytest.mark.parametrize(
    ("block", "line"),
    [
        ("    from .a import B\n", 3),  # no `as`: mypy --strict would not see it exported
        ("    from .a import B as C\n", 3),
        ("    from .a import (\n        B as B,\n        C,\n    )\n", 5),
        ("    import a as a\n", 3),
        ("    from .a impart B as B\n", 3),
        ("    X = 1\n", 3),
        ("    pass\n", 3),
    ],
)
def test_read_exports_refuses_a_block_that_says_something_else(block: str, line: int) -> None:
    source = "import typing as _typing\nif _typing.TYPE_CHECKING:\n" + block
    with pytest.raises(ImportError, match=rf"^pkg, line {line}: "):
        read_exports(source, "pkg")


def test_read_exports_refuses_a_package_without_a_block() -> None:
    with pytest.raises(ImportError, match=r"^pkg: no .*TYPE_CHECKING"):
        read_exports('"""Doc."""\nfrom .a import B as B\n', "pkg")
    with pytest.raises(ImportError, match=r"^pkg: the TYPE_CHECKING block exports nothing"):
        read_exports("if TYPE_CHECKING:\n\nx = 1\n", "pkg")


def test_mypy_strict_sees_every_export_from_a_users_code(tmp_path: Path) -> None:
    # A user's `from streamrepair import X` under --strict (no implicit re-export) needs
    # the block's `X as X`: a computed __all__ is invisible to a type checker.
    lines = []
    for package in EXPORTING_PACKAGES:
        names = importlib.import_module(package).__all__
        lines.append(f"from {package} import {', '.join(names)}")
    lines.append("reveal_type(ArgumentAssembler)")
    user = tmp_path / "user.py"
    user.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(user)],
        cwd=ROOT,
        env={**os.environ, "MYPYPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
    )
    assert "streamrepair.syntax.assembler.ArgumentAssembler" in done.stdout, done.stdout
    assert "error" not in done.stdout, done.stdout


def _documented_root_names() -> set[str]:
    """The names docs/api.md lists: the first column of its tables, the names in the
    bold-led paragraphs of its tier 2 section, and ``__version__``."""
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    names = set(re.findall(r"^\| `([A-Za-z_][A-Za-z0-9_]*)` \|", page, flags=re.M))
    tier2 = page.split("## Tier 2")[1].split("\n## ")[0]
    for paragraph in tier2.split("\n\n"):
        if paragraph.startswith("**"):
            names |= set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", paragraph))
    if "`__version__`" in page:
        names.add("__version__")
    return names


@pytest.mark.parametrize("path", _public_modules(), ids=_module_name)
def test_every_public_name_of_a_module_is_in_its_all(path: Path) -> None:
    listed, defined = _declared(path)
    if path.name == "__init__.py":
        package = importlib.import_module(_module_name(path))
        assert listed is not None or not defined or hasattr(package, "__all__"), (
            f"{path} defines names but has no __all__"
        )
        for name in getattr(package, "__all__", ()):
            assert hasattr(package, name), (
                f"{_module_name(path)}.__all__ names {name!r}, not defined"
            )
        return
    assert listed is not None, f"{_module_name(path)} has no __all__"
    missing = defined - set(listed)
    assert not missing, f"{_module_name(path)} defines public names missing from __all__: {missing}"
    module = importlib.import_module(_module_name(path))
    for name in listed:
        assert hasattr(module, name), f"{_module_name(path)}.__all__ names {name!r}, not defined"


@pytest.mark.parametrize("package", LAYER_PACKAGES)
def test_a_layer_package_exports_its_modules(package: str) -> None:
    pkg = importlib.import_module(f"streamrepair.{package}")
    expected: set[str] = set()
    # its modules, and its subpackages (providers/textcalls/) by their __init__
    here = PACKAGE / package
    sources = [p for p in here.glob("*.py") if not p.stem.startswith("_")]
    sources += [p for p in here.glob("*/__init__.py") if not p.parent.name.startswith("_")]
    for path in sorted(sources):
        stem = path.parent.name if path.name == "__init__.py" else path.stem
        if path.name == "__init__.py":  # a subpackage: its export block
            listed = sorted(_type_checking_block(path))
        else:
            listed, _ = _declared(path)
        assert listed is not None
        expected |= set(listed)
        module = importlib.import_module(f"streamrepair.{package}.{stem}")
        for name in listed:
            assert getattr(pkg, name) is getattr(module, name), f"{package}.{name}"
    assert expected <= set(pkg.__all__)
    extra = set(pkg.__all__) - expected
    assert all(hasattr(streamrepair.errors, name) for name in extra), extra


def test_the_root_exports_exactly_what_docs_api_lists() -> None:
    documented = _documented_root_names()
    exported = set(streamrepair.__all__)
    assert documented - exported == set(), "documented but not exported"
    assert exported - documented == set(), "exported but not documented in docs/api.md"


def test_root_names_are_the_objects_of_their_modules() -> None:
    table = read_exports((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    assert set(table) == set(streamrepair.__all__)
    for name, module in table.items():
        assert getattr(streamrepair, name) is getattr(
            importlib.import_module(module, "streamrepair"), name
        )
    assert sorted(dir(streamrepair)) == sorted(dir(streamrepair))  # __dir__ does not fail
    with pytest.raises(AttributeError):
        _ = streamrepair.not_a_name  # type: ignore[attr-defined]


def test_every_event_class_is_exported() -> None:
    # ToolCallStarted once went missing from events.__all__: check by subclassing, not by
    # the list itself.
    events = {
        name
        for name, value in vars(streamrepair.events).items()
        if isinstance(value, type) and issubclass(value, streamrepair.events.StreamEvent)
    }
    assert "ToolCallStarted" in events
    assert events <= set(streamrepair.events.__all__)
    assert events <= set(streamrepair.__all__)


def test_every_exception_lives_in_errors_and_is_exported() -> None:
    defined_elsewhere = []
    for path in _public_modules():
        if path.name == "errors.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                bases = {ast.unparse(b) for b in node.bases}
                if any(b.endswith(("Error", "Exception")) for b in bases):
                    defined_elsewhere.append(f"{_module_name(path)}.{node.name}")
    assert not defined_elsewhere, defined_elsewhere
    errors = {
        name
        for name, value in vars(streamrepair.errors).items()
        if isinstance(value, type) and issubclass(value, Exception)
    }
    for name in errors:
        assert issubclass(getattr(streamrepair.errors, name), streamrepair.StreamRepairError)
    assert errors <= set(streamrepair.__all__)
