"""The public API: what docs/api.md lists is what `streamrepair` exports, every module's
``__all__`` is complete and resolves, layer packages export their modules, and the 0.1
names and module paths still work."""

from __future__ import annotations

import ast
import importlib
import re
import warnings
from pathlib import Path

import pytest

import streamrepair
import streamrepair.errors
import streamrepair.events
from streamrepair._moved import MOVED

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "streamrepair"
ALIASES = tuple(MOVED)
LAYER_PACKAGES = ("syntax", "schema", "providers", "stream", "turn", "telemetry", "proxy")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _public_modules() -> list[Path]:
    """Modules with a public ``__all__``: not private (``_x.py``), not an alias, not
    ``__main__``."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts or path.name == "__main__.py":
            continue
        if path.parent == PACKAGE and path.stem in ALIASES:
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
        assert listed is not None or not defined, f"{path} defines names but has no __all__"
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
    for path in sorted((PACKAGE / package).glob("*.py")):
        if path.stem.startswith("_"):
            continue
        listed, _ = _declared(path)
        assert listed is not None
        expected |= set(listed)
        module = importlib.import_module(f"streamrepair.{package}.{path.stem}")
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
    table = vars(streamrepair)["_EXPORTS"]
    assert set(table) == set(streamrepair.__all__) - {"__version__"}
    for name, module in table.items():
        assert getattr(streamrepair, name) is getattr(
            importlib.import_module(f"streamrepair.{module}"), name
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


@pytest.mark.parametrize("old", ALIASES)
def test_the_old_module_paths_warn_and_give_the_same_objects(old: str) -> None:
    name = f"streamrepair.{old}"
    importlib.import_module("sys").modules.pop(name, None)
    with pytest.warns(DeprecationWarning, match=rf"{name} moved to streamrepair\."):
        module = importlib.import_module(name)
    assert module.__all__
    for attr in module.__all__:
        value = getattr(module, attr)
        home = getattr(value, "__module__", None)
        if home and home.startswith("streamrepair.") and home != name:
            assert getattr(importlib.import_module(home), attr, value) is value


def test_the_old_names_are_the_new_objects() -> None:
    pairs = {
        "MAX_TOKEN_CHARS": "MAX_SCALAR_CHARS",
        "CallPhase": "CallProgress",
        "CallStatus": "RunState",
        "Phase": "FencePhase",
        "PhaseState": "FencePhaseState",
        "AssemblerFinishedError": "ClosedError",
        "StreamClosedError": "ClosedError",
    }
    for old, new in pairs.items():
        if old == "MAX_TOKEN_CHARS":  # a number: the compiled build boxes each int itself
            assert getattr(streamrepair, old) == getattr(streamrepair, new)
            continue
        assert getattr(streamrepair, old) is getattr(streamrepair, new)


def test_the_layer_packages_keep_the_old_module_names() -> None:
    # streamrepair.stream / .providers / .telemetry were modules in 0.1.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from streamrepair.providers import UnsupportedChunkError, as_chunk
        from streamrepair.stream import StreamClosedError, load_recording
        from streamrepair.telemetry import LogReader, StatsBuilder, TelemetryLog
    assert issubclass(UnsupportedChunkError, streamrepair.StreamRepairError)
    assert StreamClosedError is streamrepair.ClosedError
    assert callable(as_chunk)
    assert callable(load_recording)
    assert {LogReader.__name__, StatsBuilder.__name__, TelemetryLog.__name__}


def test_the_table_of_moved_modules_matches_the_alias_files() -> None:
    aliases = {p.stem for p in PACKAGE.glob("[!_]*.py") if "warn_moved(" in p.read_text()}
    assert aliases == set(MOVED)
    for old, new in MOVED.items():
        assert f'warn_moved(__name__, "{new}")' in (PACKAGE / f"{old}.py").read_text()


def test_the_old_cli_integrations_register_adds_the_four_commands_it_did() -> None:
    import argparse

    sys_modules = importlib.import_module("sys").modules
    sys_modules.pop("streamrepair.cli_integrations", None)
    with pytest.warns(DeprecationWarning, match="streamrepair.cli.integrations"):
        old = importlib.import_module("streamrepair.cli_integrations")
    parser = argparse.ArgumentParser()
    old.register(parser.add_subparsers(dest="command"))
    for argv in (["hook", "claude-code"], ["serve", "opencode"], ["stats"]):
        assert parser.parse_args(argv).command == argv[0]
    assert parser.parse_args(["install", "opencode"]).handler is not None
