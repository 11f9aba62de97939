"""The two builds (docs/build.md): which one runs and why, the switch that forces the pure
one, the fallback of an installation that cannot run its compiled modules, the fallback
of a build without a C compiler, and public classes that stay subclassable."""

from __future__ import annotations

import importlib.machinery
import json
import os
import runpy
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import streamrepair
from streamrepair import _build
from streamrepair._build import COMPILED_MODULES, STAMP_FILE, build_info, pure_copy

ROOT = Path(__file__).resolve().parent.parent
PURE = pure_copy()


def _python(code: str, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k != _build.PURE_VARIABLE}
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_build_info_says_what_is_loaded() -> None:
    info = build_info()
    loaded = {
        m: streamrepair.__name__ + "." + m in sys.modules
        and _build._is_extension(sys.modules[f"streamrepair.{m}"])
        for m in COMPILED_MODULES
    }
    assert info.compiled == all(loaded.values())
    assert set(info.modules) == {m for m, compiled in loaded.items() if compiled}
    assert info.modules in ((), COMPILED_MODULES)  # never a mix
    assert str(info).startswith("compiled (mypyc " if info.compiled else "pure Python (")


def test_ci_runs_the_compiled_build_where_it_expects_one() -> None:
    # .ci/run sets STREAMREPAIR_EXPECT_COMPILED=1 where a C compiler is present, and the
    # pure run (STREAMREPAIR_PURE=1) unsets it: a build that fell back fails here.
    if os.environ.get("STREAMREPAIR_EXPECT_COMPILED") != "1":
        pytest.skip("STREAMREPAIR_EXPECT_COMPILED is not set (CI sets it with a C compiler)")
    assert build_info().compiled, build_info()


def test_the_switch_forces_the_pure_modules_at_import_time(monkeypatch: pytest.MonkeyPatch) -> None:
    code = (
        "import streamrepair, streamrepair.syntax.assembler as a; "
        "print(streamrepair.build_info().compiled, a.__file__.endswith('.py'))"
    )
    assert _python(code, STREAMREPAIR_PURE="1") == "False True"
    # without the switch: the compiled modules run if the installation has them, current
    monkeypatch.delenv(_build.PURE_VARIABLE, raising=False)
    runnable = _build._why_pure(str(Path(streamrepair.__file__).parent)) is None
    assert _python(code, STREAMREPAIR_PURE="0") == f"{runnable} {not runnable}"
    assert _python(code) == f"{runnable} {not runnable}"


def test_version_says_which_build_runs() -> None:
    code = "from streamrepair.cli import main; main(['--version'])"
    pure = _python(code, STREAMREPAIR_PURE="1")
    assert pure == f"streamrepair {streamrepair.__version__}, pure Python (STREAMREPAIR_PURE=1)"
    info = _python("import streamrepair; print(streamrepair.build_info())")
    assert _python(code) == f"streamrepair {streamrepair.__version__}, {info}"
    assert info.startswith(("compiled (mypyc ", "pure Python ("))


def _installation(
    tmp_path: Path, stamp: dict[str, object] | None, *, compiled: tuple[str, ...]
) -> Path:
    """A package directory holding the listed sources, a fake extension module for each
    of ``compiled``, and ``stamp`` as its _build.json."""
    source_root = Path(streamrepair.__file__).parent
    for module in COMPILED_MODULES:
        relative = Path(*module.split("."))
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(
            source_root / relative.with_suffix(".py"), tmp_path / relative.with_suffix(".py")
        )
        if module in compiled:
            suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
            (tmp_path / f"{relative}{suffix}").write_bytes(b"")
    if stamp is not None:
        (tmp_path / STAMP_FILE).write_text(json.dumps(stamp))
    return tmp_path


def _stamp(root: Path) -> dict[str, object]:
    return {
        "build": "compiled",
        "mypyc": "2.3.1",
        "sources": {
            m: _build.source_digest(str(root / Path(*m.split(".")).with_suffix(".py")))
            for m in COMPILED_MODULES
        },
    }


def test_an_installation_runs_compiled_only_when_whole_and_current(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(_build.PURE_VARIABLE, raising=False)
    root = _installation(tmp_path, None, compiled=COMPILED_MODULES)
    (root / STAMP_FILE).write_text(json.dumps(_stamp(root)))
    assert _build._why_pure(str(root)) is None

    monkeypatch.setenv(_build.PURE_VARIABLE, "1")
    assert _build._why_pure(str(root)) == "STREAMREPAIR_PURE=1"
    monkeypatch.delenv(_build.PURE_VARIABLE)

    # a source edited after the build (an editable install): its compiled module is stale
    assembler = root / "syntax" / "assembler.py"
    assembler.write_text(assembler.read_text() + "\n# edited\n")
    reason = _build._why_pure(str(root))
    assert reason is not None
    assert reason.startswith("source changed since the compiled build (syntax.assembler)")

    # one module missing: the compiled ones reach into each other's classes
    partial = _installation(tmp_path / "partial", None, compiled=COMPILED_MODULES[1:])
    (partial / STAMP_FILE).write_text(json.dumps(_stamp(partial)))
    assert (
        _build._why_pure(str(partial))
        == f"compiled build incomplete, missing {COMPILED_MODULES[0]}"
    )

    unstamped = _installation(tmp_path / "unstamped", None, compiled=COMPILED_MODULES)
    assert _build._why_pure(str(unstamped)) == f"compiled build without its {STAMP_FILE}"


def test_a_pure_installation_says_why_it_was_built_pure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(_build.PURE_VARIABLE, raising=False)
    stamp = {"build": "pure", "reason": "no working C compiler (CompileError: ...)"}
    root = _installation(tmp_path, stamp, compiled=())
    assert (
        _build._why_pure(str(root))
        == "built without compiling: no working C compiler (CompileError: ...)"
    )
    assert _build._why_pure(str(_installation(tmp_path / "bare", None, compiled=()))) == (
        "no compiled modules installed"
    )


def test_setup_finds_no_compiler_when_there_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "/bin/false")
    namespace = runpy.run_path(str(ROOT / "setup.py"), run_name="setup_under_test")
    problem = namespace["_compiler_problem"]()
    assert problem is not None
    assert problem.startswith("no working C compiler")
    assert namespace["MODULES"] == COMPILED_MODULES


@pytest.mark.exhaustive
def test_a_wheel_built_without_a_compiler_is_the_pure_package(tmp_path: Path) -> None:
    if os.environ.get("STREAMREPAIR_EXHAUSTIVE") != "1":
        pytest.skip("opt-in locally (about a minute, a wheel build): STREAMREPAIR_EXHAUSTIVE=1")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        env={**os.environ, "CC": "/bin/false"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("streamrepair-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        stamp = json.loads(archive.read(f"streamrepair/{STAMP_FILE}"))
    assert not [n for n in names if n.endswith((".so", ".pyd"))]
    assert "streamrepair/syntax/assembler.py" in names
    assert stamp["build"] == "pure"
    assert stamp["reason"].startswith("no working C compiler")


@pytest.mark.parametrize("package", [streamrepair, PURE], ids=["installed", "pure"])
def test_the_public_classes_stay_subclassable(package: object) -> None:
    class CountingAssembler(package.ArgumentAssembler):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__(changes=True)
            self.deltas = 0

        def feed(self, text: str) -> object:
            self.deltas += 1
            return super().feed(text)

    class Builder(package.ValueBuilder):  # type: ignore[name-defined,misc]
        pass

    class Adapter(package.IjsonAdapter):  # type: ignore[name-defined,misc]
        pass

    assembler = CountingAssembler()
    for delta in ('{"a": [1, ', '"x"]}'):
        assembler.feed(delta)
    changes = assembler.take_changes()
    builder = Builder()
    builder.apply_all(changes)
    assert assembler.deltas == 2
    assert assembler.finish().value == builder.value == {"a": [1, "x"]}
    assert [event for _, event, _ in Adapter().feed(changes)] == [
        "start_map",
        "map_key",
        "start_array",
        "number",
        "string",
        "end_array",
        "end_map",
    ]
