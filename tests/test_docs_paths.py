"""Every file the README and docs/ name by path exists: a module moved or renamed
without its docs fails here."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "streamrepair"
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
# Paths start at the repository root, or inside the package (docs name `stream/sse.py`).
ROOT_DIRS = ("src/", "tests/", "benchmarks/", "examples/", "fixtures/", "docs/")
PACKAGE_DIRS = tuple(f"{p.name}/" for p in PACKAGE.iterdir() if p.is_dir() and p.name[0] != "_")
_PATH = re.compile(r"`([\w./{},-]+(?:\.(?:py|md|js|sse|jsonl|json|toml|ndjson|txt)|/))`")


def _expand(path: str) -> list[str]:
    """``a/{b,c}.py`` -> ``a/b.py``, ``a/c.py``."""
    parts = re.split(r"\{([^}]*)\}", path)
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    return ["".join(combo) for combo in itertools.product(*choices)]


def _named_paths() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in _PATH.finditer(text):
            for path in _expand(match.group(1)):
                if path.startswith(ROOT_DIRS) or path.startswith(PACKAGE_DIRS):
                    found.append((page.relative_to(ROOT).as_posix(), path))
    return found


NAMED = _named_paths()


def test_the_docs_name_files_by_path() -> None:
    assert len(NAMED) > 50


@pytest.mark.parametrize(("page", "path"), NAMED, ids=[f"{p}:{q}" for p, q in NAMED])
def test_a_path_named_in_the_docs_exists(page: str, path: str) -> None:
    where = ROOT / path if path.startswith(ROOT_DIRS) else PACKAGE / path
    assert where.exists(), f"{page} names {path}, which does not exist"
