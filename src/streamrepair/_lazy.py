"""Lazy package exports (PEP 562): a package names what it exports and where each name
lives, and a name's module is imported on first use. A short-lived process (a harness
hook runs once per tool call) then pays only for the layers it touches."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["attach"]


def attach(
    package: str, exports: Mapping[str, str], names: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``exports`` maps each exported
    name to the module that defines it (relative to ``package``, or absolute when it
    starts with ``streamrepair.``); ``names`` is the package's ``__all__``."""
    listed = sorted(names)

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        where = module if module.startswith("streamrepair.") else f".{module}"
        value = getattr(importlib.import_module(where, package), name)
        namespace = importlib.import_module(package).__dict__
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        namespace = importlib.import_module(package).__dict__
        return sorted({*listed, *(n for n in namespace if n.startswith("__"))})

    return __getattr__, __dir__
