"""Where the end-to-end tests find the real harnesses, and how CI installs them.

The tests run the harnesses the way their users get them, at pinned versions (their
stream formats, error texts and plugin seams are version-specific):

* Claude Code: the native binary from npm ``@anthropic-ai/claude-code-linux-x64``;
* Codex: the native binary ``vendor/x86_64-unknown-linux-musl/bin/codex`` out of the npm
  tarball ``@openai/codex@<version>-linux-x64`` (``npm pack``: the platform build is a
  version of ``@openai/codex`` itself, and ``npm install`` of the plain package would
  fetch all platforms);
* OpenCode: npm ``opencode-ai`` with its ``opencode-linux-x64`` binary, plus
  ``@opencode-ai/plugin`` (the published plugin types) and ``typescript`` for ``tsc``;
* Hermes Agent: PyPI ``hermes-agent`` in its own virtual environment (it pins its own
  dependencies, needs Python 3.11-3.13 and installs top-level modules such as ``agent``
  and ``tools``, so it never goes into the project's test environment).

Everything is installed into a cache directory outside the repository
(``$STREAMREPAIR_E2E_CACHE``, default ``$XDG_CACHE_HOME/streamrepair-e2e`` or
``~/.cache/streamrepair-e2e``), one sub-directory per tool and version. The tests look
there (or at ``$CLAUDE_BINARY``, ``$CODEX_BINARY``, ``$OPENCODE_BINARY``,
``$HERMES_PYTHON``; ``none`` turns a tool off) and skip with the reason when a tool is
missing.

``python tests/e2e/e2e_tools.py install [claude-code] [codex] [opencode] [hermes]`` installs
(``.ci/run`` calls it; each tool that cannot be installed is reported and skipped);
``python tests/e2e/e2e_tools.py status [TOOL...]`` says what the tests will find (exit
status 1 when one of them is missing).
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

#: Pinned versions, each the one its measurements in docs/integrations were made with.
CLAUDE_CODE_VERSION: Final = "2.1.332"
CODEX_VERSION: Final = "0.171.0"
OPENCODE_VERSION: Final = "1.18.33"
HERMES_AGENT_VERSION: Final = "0.19.0"
#: TypeScript and @types/node for ``tsc --noEmit`` over the OpenCode plugin.
TYPESCRIPT_VERSION: Final = "5.8.2"
TYPES_NODE_VERSION: Final = "20.19.43"

CACHE_ENV: Final = "STREAMREPAIR_E2E_CACHE"
CLAUDE_ENV: Final = "CLAUDE_BINARY"
CODEX_ENV: Final = "CODEX_BINARY"
OPENCODE_ENV: Final = "OPENCODE_BINARY"
HERMES_ENV: Final = "HERMES_PYTHON"
_NPM_TIMEOUT: Final = 600.0
_PIP_TIMEOUT: Final = 900.0


def cache_dir() -> Path:
    """The directory the tools are installed into."""
    explicit = os.environ.get(CACHE_ENV, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "streamrepair-e2e"


def _disabled(env: str) -> bool:
    return os.environ.get(env, "").strip().lower() == "none"


def _run_version(argv: Sequence[str], word: int = 0) -> str:
    """Word ``word`` of what ``argv`` prints (``""`` when it does not run)."""
    try:
        with tempfile.TemporaryDirectory(prefix="e2e-version-") as home:
            done = subprocess.run(
                list(argv),
                capture_output=True,
                text=True,
                timeout=60,
                env={**os.environ, "HOME": home, "DISABLE_AUTOUPDATER": "1"},
                check=False,
            )
    except (OSError, subprocess.SubprocessError):
        return ""
    words = done.stdout.split()
    return words[word] if done.returncode == 0 and len(words) > word else ""


# --------------------------------------------------------------------------- Claude Code

CLAUDE_PACKAGE: Final = "@anthropic-ai/claude-code-linux-x64"


def claude_dir() -> Path:
    return cache_dir() / f"claude-code-{CLAUDE_CODE_VERSION}"


def _claude_candidate() -> Path | None:
    explicit = os.environ.get(CLAUDE_ENV, "").strip()
    if explicit:
        return Path(explicit)
    return claude_dir() / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"


@functools.cache
def claude_skip_reason() -> str | None:
    """Why the Claude Code tests cannot run here (``None`` when they can)."""
    if _disabled(CLAUDE_ENV):
        return f"${CLAUDE_ENV}=none"
    if not (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")):
        return f"the pinned Claude Code package is linux-x64 only, not {sys.platform}"
    path = _claude_candidate()
    if path is None or not path.is_file():
        return (
            f"Claude Code {CLAUDE_CODE_VERSION} is not installed at {path}: run "
            f"`python tests/e2e/e2e_tools.py install claude-code` (npm) or set ${CLAUDE_ENV}"
        )
    version = _run_version([str(path), "--version"])
    if version != CLAUDE_CODE_VERSION:
        return (
            f"{path} is Claude Code {version or '(does not run)'}; these tests are pinned "
            f"to {CLAUDE_CODE_VERSION}"
        )
    return None


def find_claude() -> Path | None:
    """The pinned Claude Code binary, or ``None`` (see :func:`claude_skip_reason`)."""
    return None if claude_skip_reason() else _claude_candidate()


# --------------------------------------------------------------------------- Codex

CODEX_PACKAGE: Final = "@openai/codex"
#: Where the native binary sits inside the ``-linux-x64`` tarball.
CODEX_MEMBER: Final = "package/vendor/x86_64-unknown-linux-musl/bin/codex"


def codex_dir() -> Path:
    return cache_dir() / f"codex-{CODEX_VERSION}"


def _codex_candidate() -> Path | None:
    explicit = os.environ.get(CODEX_ENV, "").strip()
    if explicit:
        return Path(explicit)
    return codex_dir() / "codex"


@functools.cache
def codex_skip_reason() -> str | None:
    """Why the Codex tests cannot run here (``None`` when they can)."""
    if _disabled(CODEX_ENV):
        return f"${CODEX_ENV}=none"
    if not (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")):
        return f"the pinned Codex package is linux-x64 only here, not {sys.platform}"
    path = _codex_candidate()
    if path is None or not path.is_file():
        return (
            f"Codex {CODEX_VERSION} is not installed at {path}: run "
            f"`python tests/e2e/e2e_tools.py install codex` (npm) or set ${CODEX_ENV}"
        )
    # `codex --version` prints "codex-cli 0.171.0"
    version = _run_version([str(path), "--version"], word=1)
    if version != CODEX_VERSION:
        return (
            f"{path} is Codex {version or '(does not run)'}; these tests are pinned "
            f"to {CODEX_VERSION}"
        )
    return None


def find_codex() -> Path | None:
    """The pinned Codex binary, or ``None`` (see :func:`codex_skip_reason`)."""
    return None if codex_skip_reason() else _codex_candidate()


# --------------------------------------------------------------------------- OpenCode


def opencode_dir() -> Path:
    return cache_dir() / f"opencode-{OPENCODE_VERSION}"


def _opencode_candidate() -> Path | None:
    explicit = os.environ.get(OPENCODE_ENV, "").strip()
    if explicit:
        return Path(explicit)
    return opencode_dir() / "node_modules" / "opencode-linux-x64" / "bin" / "opencode"


@functools.cache
def opencode_skip_reason() -> str | None:
    """Why the OpenCode tests cannot run here (``None`` when they can)."""
    if _disabled(OPENCODE_ENV):
        return f"${OPENCODE_ENV}=none"
    if not (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")):
        return f"the pinned OpenCode package is linux-x64 only here, not {sys.platform}"
    path = _opencode_candidate()
    if path is None or not path.is_file():
        return (
            f"OpenCode {OPENCODE_VERSION} is not installed at {path}: run "
            f"`python tests/e2e/e2e_tools.py install opencode` (npm) or set ${OPENCODE_ENV}"
        )
    version = _run_version([str(path), "--version"])
    if version != OPENCODE_VERSION:
        return (
            f"{path} is OpenCode {version or '(does not run)'}; these tests are pinned "
            f"to {OPENCODE_VERSION}"
        )
    return None


def find_opencode() -> Path | None:
    """The pinned OpenCode binary, or ``None`` (see :func:`opencode_skip_reason`)."""
    return None if opencode_skip_reason() else _opencode_candidate()


def opencode_node_modules() -> Path:
    """The ``node_modules`` holding ``@opencode-ai/plugin`` and ``typescript``."""
    return opencode_dir() / "node_modules"


def tsc_skip_reason() -> str | None:
    """Why ``tsc`` over the plugin cannot run here (``None`` when it can)."""
    if shutil.which("node") is None:
        return "node is not installed"
    modules = opencode_node_modules()
    for needed in ("typescript/bin/tsc", "@opencode-ai/plugin/package.json", "@types/node"):
        if not (modules / needed).exists():
            return (
                f"{modules / needed} is missing: run "
                "`python tests/e2e/e2e_tools.py install opencode` (npm)"
            )
    return None


# --------------------------------------------------------------------------- Hermes


def hermes_dir() -> Path:
    return cache_dir() / f"hermes-agent-{HERMES_AGENT_VERSION}"


def _hermes_candidate() -> Path:
    explicit = os.environ.get(HERMES_ENV, "").strip()
    if explicit:
        return Path(explicit)
    return hermes_dir() / "bin" / "python"


def _hermes_version(python: Path) -> str:
    probe = (
        "import importlib.metadata as m, importlib.util as u, jsonschema, anyio;"
        "assert u.find_spec('run_agent') and u.find_spec('hermes_cli');"
        "print(m.version('hermes-agent'))"
    )
    return _run_version([str(python), "-c", probe])


@functools.cache
def hermes_skip_reason() -> str | None:
    """Why the Hermes tests cannot run here (``None`` when they can)."""
    if _disabled(HERMES_ENV):
        return f"${HERMES_ENV}=none"
    python = _hermes_candidate()
    if not python.exists():
        return (
            f"hermes-agent {HERMES_AGENT_VERSION} is not installed at {python.parent.parent}: "
            "run `python tests/e2e/e2e_tools.py install hermes` (pip, Python 3.11-3.13) "
            f"or set ${HERMES_ENV} to a Python that has hermes-agent, jsonschema and anyio"
        )
    version = _hermes_version(python)
    if version != HERMES_AGENT_VERSION:
        return (
            f"{python} has hermes-agent {version or '(missing, or jsonschema/anyio missing)'}; "
            f"these tests are pinned to {HERMES_AGENT_VERSION}"
        )
    return None


def find_hermes_python() -> Path | None:
    """A Python with the pinned hermes-agent, or ``None`` (see :func:`hermes_skip_reason`)."""
    return None if hermes_skip_reason() else _hermes_candidate()


# --------------------------------------------------------------------------- installing


def _npm_install(dest: Path, packages: Sequence[str]) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH")
    dest.mkdir(parents=True, exist_ok=True)
    quiet = ["--no-save", "--no-audit", "--no-fund", "--loglevel=error"]
    subprocess.run(
        [npm, "install", *quiet, "--prefix", str(dest), *packages],
        check=True,
        timeout=_NPM_TIMEOUT,
        stdout=subprocess.DEVNULL,
    )


def install_claude_code() -> None:
    _npm_install(claude_dir(), [f"{CLAUDE_PACKAGE}@{CLAUDE_CODE_VERSION}"])


def install_codex() -> None:
    """``npm pack`` the linux-x64 build and keep only its native binary (the tarball
    is 170 MB, mostly a voice runtime the CLI does not need)."""
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH")
    target = codex_dir()
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="codex-pack-", dir=target) as scratch:
        subprocess.run(
            [npm, "pack", "--silent", f"{CODEX_PACKAGE}@{CODEX_VERSION}-linux-x64"],
            cwd=scratch,
            check=True,
            timeout=_NPM_TIMEOUT,
            stdout=subprocess.DEVNULL,
        )
        tarballs = list(Path(scratch).glob("*.tgz"))
        if len(tarballs) != 1:
            raise RuntimeError(f"npm pack left {len(tarballs)} tarballs, expected one")
        with tarfile.open(tarballs[0]) as archive:
            member = archive.extractfile(CODEX_MEMBER)
            if member is None:
                raise RuntimeError(f"{tarballs[0].name} has no {CODEX_MEMBER}")
            partial = target / "codex.partial"
            with member, partial.open("wb") as out:
                shutil.copyfileobj(member, out)
        partial.chmod(0o755)
        partial.replace(target / "codex")


def install_opencode() -> None:
    _npm_install(
        opencode_dir(),
        [
            f"opencode-linux-x64@{OPENCODE_VERSION}",
            f"@opencode-ai/plugin@{OPENCODE_VERSION}",
            f"typescript@{TYPESCRIPT_VERSION}",
            f"@types/node@{TYPES_NODE_VERSION}",
        ],
    )


def _hermes_base_python() -> str:
    """A Python 3.11-3.13 to build the Hermes venv with."""
    for name in ("python3.13", "python3.12", "python3.11", "python3", sys.executable):
        found = shutil.which(name) if os.sep not in name else name
        if not found:
            continue
        check = subprocess.run(
            [
                found,
                "-c",
                "import sys; raise SystemExit(not (3, 11) <= sys.version_info < (3, 14))",
            ],
            check=False,
        )
        if check.returncode == 0:
            return found
    raise RuntimeError("hermes-agent needs Python 3.11-3.13; none is on PATH")


def install_hermes() -> None:
    target = hermes_dir()
    if not (target / "bin" / "python").exists():
        subprocess.run([_hermes_base_python(), "-m", "venv", str(target)], check=True)
    pip = [str(target / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run(
        [*pip, f"hermes-agent=={HERMES_AGENT_VERSION}", "jsonschema>=4.18", "anyio>=4.0"],
        check=True,
        timeout=_PIP_TIMEOUT,
    )


_INSTALLERS: Final = {
    "claude-code": (install_claude_code, claude_skip_reason),
    "codex": (install_codex, codex_skip_reason),
    "opencode": (install_opencode, opencode_skip_reason),
    "hermes": (install_hermes, hermes_skip_reason),
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="e2e_tools", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["install", "status"])
    parser.add_argument("tools", nargs="*", metavar="TOOL", help=", ".join(_INSTALLERS))
    args = parser.parse_args(argv)
    unknown = set(args.tools) - set(_INSTALLERS)
    if unknown:
        parser.error(
            f"unknown tool(s) {', '.join(sorted(unknown))}: choose from {', '.join(_INSTALLERS)}"
        )
    names = args.tools or list(_INSTALLERS)
    missing = False
    for name in names:
        install, reason = _INSTALLERS[name]
        if args.command == "install" and reason() is not None:
            started = time.monotonic()
            try:
                install()
            except (OSError, RuntimeError, subprocess.SubprocessError, tarfile.TarError) as exc:
                print(f"e2e: {name}: not installed ({exc}); its tests will be skipped")
                continue
            finally:
                reason.cache_clear()
            print(f"e2e: {name}: installed in {time.monotonic() - started:.1f} s")
        why = reason()
        print(f"e2e: {name}: {'ready' if why is None else 'skipped: ' + why}")
        missing = missing or why is not None
    print(f"e2e: cache {cache_dir()}")
    # install reports and goes on (the tests skip); status says whether all are ready
    return 1 if missing and args.command == "status" else 0


if __name__ == "__main__":
    sys.exit(main())
