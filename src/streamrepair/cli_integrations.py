"""Moved to :mod:`streamrepair.cli.integrations` (``serve``, ``install``, ``stats``) and
:mod:`streamrepair.cli.hook` (``hook``); an alias of the 0.1 path, removed in 0.3."""

from typing import Any

from ._moved import warn_moved

warn_moved(__name__, "streamrepair.cli.integrations")

from .cli import hook as _hook  # noqa: E402
from .cli import integrations as _integrations  # noqa: E402
from .cli.hook import (  # noqa: E402
    DEADLINE_ENV,
    HOOK_DEADLINE_SECONDS,
)

__all__ = [
    "DEADLINE_ENV",
    "HOOK_DEADLINE_SECONDS",
    "register",
]


def register(subparsers: Any) -> None:
    """Add the ``hook``, ``serve``, ``install`` and ``stats`` subcommands, as the 0.1
    module did (``hook`` now registers from :mod:`streamrepair.cli.hook`)."""
    _hook.register(subparsers)
    _integrations.register(subparsers)
