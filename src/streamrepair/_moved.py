"""The old module paths of 0.1, kept as thin aliases for one release.

Each alias module re-exports what the old module exported and warns once, with a
:class:`DeprecationWarning` naming the new home, when it is imported.
"""

from __future__ import annotations

import warnings

__all__ = [
    "REMOVED_IN",
    "warn_moved",
]

#: The release in which the aliases are removed.
REMOVED_IN = "0.3"


def warn_moved(old: str, new: str) -> None:
    """Warn that module ``old`` moved to ``new``."""
    warnings.warn(
        f"{old} moved to {new}; the old path is an alias that goes away in {REMOVED_IN}",
        DeprecationWarning,
        stacklevel=3,
    )
