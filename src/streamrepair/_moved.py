"""The old module paths of 0.1, kept as thin aliases for one release.

Each alias module re-exports what the old module exported and warns once, with a
:class:`DeprecationWarning` naming the new home, when it is imported.
"""

from __future__ import annotations

import warnings
from typing import Final

__all__ = [
    "MOVED",
    "REMOVED_IN",
    "warn_moved",
]

#: The release in which the aliases are removed.
REMOVED_IN = "0.3"
#: Each 0.1 module path kept as an alias (``streamrepair.<key>``) -> its new home.
MOVED: Final = {
    "assembler": "streamrepair.syntax.assembler",
    "oneshot": "streamrepair.syntax.oneshot",
    "schema_rules": "streamrepair.schema.rules",
    "notes": "streamrepair.schema.notes",
    "profiles": "streamrepair.schema.profiles",
    "tools": "streamrepair.schema.tools",
    "wire": "streamrepair.providers.wire",
    "messages": "streamrepair.providers.messages",
    "sse": "streamrepair.stream.sse",
    "tracker": "streamrepair.stream.tracker",
    "conversation": "streamrepair.turn.conversation",
    "history": "streamrepair.turn.history",
    "abort": "streamrepair.turn.abort",
    "cli_repair": "streamrepair.cli.repair",
    "cli_replay": "streamrepair.cli.replay",
    "cli_integrations": "streamrepair.cli.integrations",
}


def warn_moved(old: str, new: str) -> None:
    """Warn that module ``old`` moved to ``new``."""
    warnings.warn(
        f"{old} moved to {new}; the old path is an alias that goes away in {REMOVED_IN}",
        DeprecationWarning,
        stacklevel=3,
    )
