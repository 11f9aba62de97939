"""Build streamrepair: the pure-Python package, and where a C compiler works, the same
``.py`` files of its hot modules compiled with mypyc beside them (docs/build.md).

Everything else about the package is in pyproject.toml. This file only decides, when the
extensions are built, between the two builds:

* ``STREAMREPAIR_PURE=1`` in the environment: the pure package, nothing compiled;
* no working C compiler, no Python headers, or mypyc failing: the pure package, with the
  reason printed (``pip install -v`` shows it) and written to ``_build.json``, where
  ``streamrepair.build_info()`` and ``streamrepair --version`` read it;
* otherwise every module listed in ``streamrepair/_build.py`` compiled.

The build never fails for want of a compiler. An editable install builds in place:
extension modules land beside their sources (and any earlier ones are removed first, so
a pure rebuild leaves none behind).
"""

from __future__ import annotations

import ast
import glob
import hashlib
import importlib.util
import json
import os
import sys
import sysconfig
import tempfile
import traceback
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
PACKAGE = ROOT / "src" / "streamrepair"
# mypyc puts the code of every compiled module in one shared library, a top-level module
# named after the group: streamrepair__mypyc.<abi>.so beside the package.
GROUP = "streamrepair"


def _build_constants() -> dict[str, object]:
    """COMPILED_MODULES, PURE_VARIABLE and STAMP_FILE as _build.py writes them (read
    without importing the package, which is not installed yet)."""
    tree = ast.parse((PACKAGE / "_build.py").read_text(encoding="utf-8"))
    wanted = {"COMPILED_MODULES", "PURE_VARIABLE", "STAMP_FILE"}
    found: dict[str, object] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id in wanted
            and node.value is not None
        ):
            found[node.target.id] = ast.literal_eval(node.value)
    return found


CONSTANTS = _build_constants()
MODULES: tuple[str, ...] = CONSTANTS["COMPILED_MODULES"]  # type: ignore[assignment]
PURE_VARIABLE: str = CONSTANTS["PURE_VARIABLE"]  # type: ignore[assignment]
STAMP_FILE: str = CONSTANTS["STAMP_FILE"]  # type: ignore[assignment]


# What mypyc made of the modules, once per process.
_MYPYCIFIED: list[Extension] = []
# Commands that only write metadata or a source archive: nothing to compile.
METADATA_COMMANDS = {"egg_info", "dist_info", "sdist"}


def _say(message: str) -> None:
    print(f"streamrepair build: {message}", file=sys.stderr, flush=True)


class BuildExt(build_ext):
    """Compile with mypyc when possible; otherwise leave the pure package, and say why.

    The choice is made when the command is finalized (before setuptools asks it which
    files it makes), and undone in ``run`` if compiling fails."""

    def finalize_options(self) -> None:
        self.mypyc_version = ""
        if set(self.distribution.commands) <= METADATA_COMMANDS:
            # Writing metadata (pip asks for it before building) finalizes this command
            # to list the extensions' sources: no need to run mypyc for that.
            self.reason: str | None = "metadata only"
        else:
            self.reason = self._why_not_compile()
        if self.reason is None:
            try:
                self.distribution.ext_modules = self._mypycify()
            except (Exception, SystemExit) as exc:  # mypyc exits on a type error
                traceback.print_exc()
                self.reason = f"mypyc failed ({type(exc).__name__}: {exc})"
        super().finalize_options()
        if self.reason is not None:
            self.extensions = []

    def run(self) -> None:
        package_dir = self._package_dir()
        if self.inplace:
            _remove_extensions(package_dir)
        if self.reason is None:
            try:
                super().run()
            except (Exception, SystemExit) as exc:  # the C compiler failed
                traceback.print_exc()
                self.reason = f"compiling failed ({type(exc).__name__}: {exc})"
                self._remove_outputs()
        if self.reason is not None:
            _say(f"building the pure-Python package: {self.reason}")
            self.extensions = []
            stamp: dict[str, object] = {"build": "pure", "reason": self.reason}
        else:
            _say(f"compiled {len(MODULES)} modules with mypyc {self.mypyc_version}")
            stamp = {
                "build": "compiled",
                "reason": "",
                "mypyc": self.mypyc_version,
                "sources": {
                    m: hashlib.sha256(_source(m).read_bytes()).hexdigest() for m in MODULES
                },
            }
        package_dir.mkdir(parents=True, exist_ok=True)
        (package_dir / STAMP_FILE).write_text(json.dumps(stamp, indent=1) + "\n")

    def _package_dir(self) -> Path:
        """Where the built package is: the sources for an in-place (editable) build."""
        return PACKAGE if self.inplace else Path(self.build_lib) / "streamrepair"

    def _why_not_compile(self) -> str | None:
        if os.environ.get(PURE_VARIABLE, "") not in ("", "0"):
            return f"{PURE_VARIABLE}=1"
        if sys.implementation.name != "cpython":
            return f"mypyc compiles for CPython only, not {sys.implementation.name}"
        if importlib.util.find_spec("mypyc") is None:
            return "mypyc is not installed"
        return _compiler_problem()

    def _mypycify(self) -> list[Extension]:
        from mypy.version import __version__ as version
        from mypyc.build import mypycify

        self.mypyc_version = version
        if _MYPYCIFIED:  # an editable build finalizes this command twice in one process
            return _MYPYCIFIED
        # mypyc names each module after its path (src/ has no __init__.py, so
        # src/streamrepair/syntax/assembler.py is streamrepair.syntax.assembler) and
        # writes the C sources to build/ under the current directory, the project's.
        os.chdir(ROOT)
        # mypy follows the compiled modules' imports through the whole package, whose
        # dependencies (anyio, jsonschema...) are not installed yet when pip builds in a
        # fresh environment: the compiled modules use none of them, so their absence, and
        # any complaint about a module that is not compiled, must not stop the build
        # (mypy --strict on src/ is the tests' job).
        options = ["--ignore-missing-imports", "--follow-imports=silent"]
        _MYPYCIFIED.extend(
            mypycify(
                [*options, *(str(_source(m).relative_to(ROOT)) for m in MODULES)],
                opt_level="3",
                group_name=GROUP,
            )
        )
        return _MYPYCIFIED

    def _remove_outputs(self) -> None:
        for path in self.get_outputs():
            if os.path.exists(path):
                os.remove(path)
        if self.inplace:
            _remove_extensions(PACKAGE)


def _source(module: str) -> Path:
    return PACKAGE.joinpath(*module.split(".")).with_suffix(".py")


def _remove_extensions(package_dir: Path) -> None:
    """Delete every extension module an earlier build left in the sources."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    stale = glob.glob(str(package_dir / "**" / f"*{suffix}"), recursive=True)
    stale += glob.glob(str(package_dir.parent / f"{GROUP}__mypyc*{suffix}"))
    for path in stale:
        os.remove(path)
    (package_dir / STAMP_FILE).unlink(missing_ok=True)


def _compiler_problem() -> str | None:
    """Why no extension can be compiled here (no C compiler, no Python.h), or None."""
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler

    compiler = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "probe.c"
        source.write_text("#include <Python.h>\nint probe(void) { return 0; }\n")
        try:
            compiler.compile(
                [str(source)],
                output_dir=tmp,
                include_dirs=[sysconfig.get_paths()["include"]],
            )
        except Exception as exc:  # CompileError, or the compiler missing altogether
            return f"no working C compiler ({type(exc).__name__}: {exc})"
    return None


if __name__ == "__main__":  # as setuptools runs it (tests import the helpers above)
    # One placeholder extension makes setuptools run build_ext, which decides what to
    # build (the real list comes from mypycify, once, when the build runs).
    setup(
        ext_modules=[Extension(f"{GROUP}__mypyc", sources=[])],
        cmdclass={"build_ext": BuildExt},
    )
