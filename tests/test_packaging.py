"""pyproject.toml builds without a warning: the license is an SPDX expression (PEP 639),
which setuptools reads from 77 on; the TOML table form made every build warn that it
stops being supported on 2027-02-18."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.requirements import Requirement

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_license_is_an_spdx_expression() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "Apache-2.0"
    # setuptools refuses a license classifier beside a license expression
    assert not [c for c in project.get("classifiers", []) if c.startswith("License ::")]


def test_the_build_requires_a_setuptools_that_reads_it() -> None:
    requires = [Requirement(r) for r in PYPROJECT["build-system"]["requires"]]
    setuptools = next(r for r in requires if r.name == "setuptools")
    assert not setuptools.specifier.contains("76.1.0")
    assert setuptools.specifier.contains("77.0.0")
