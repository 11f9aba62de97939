"""The syntax layer: argument text in, a value and its verdict out.

* :mod:`.assembler`: :class:`ArgumentAssembler`, the incremental push parser (one state
  machine, one file; its theory of operation opens the module);
* :mod:`.oneshot`: :func:`repair`, the one-shot form over the same machine;
* ``_lexical`` and ``_records`` (private): the compiled lexical tables and the repair
  records the machine keeps while it reads.

No I/O, no anyio, no jsonschema. The names are imported on first use.
"""

from __future__ import annotations

import typing as _typing

from .._lazy import attach

if _typing.TYPE_CHECKING:
    from .assembler import (
        DEFAULT_MAX_DEPTH,
        DEFAULT_MAX_SIZE,
        MAX_SCALAR_CHARS,
        MAX_TOKEN_CHARS,
        ArgumentAssembler,
    )
    from .oneshot import (
        REPAIR_MAX_SIZE,
        repair,
    )

_EXPORTS: dict[str, str] = {
    "ArgumentAssembler": "assembler",
    "DEFAULT_MAX_DEPTH": "assembler",
    "DEFAULT_MAX_SIZE": "assembler",
    "MAX_SCALAR_CHARS": "assembler",
    "MAX_TOKEN_CHARS": "assembler",
    "REPAIR_MAX_SIZE": "oneshot",
    "repair": "oneshot",
}

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_SIZE",
    "MAX_SCALAR_CHARS",
    "MAX_TOKEN_CHARS",
    "REPAIR_MAX_SIZE",
    "ArgumentAssembler",
    "repair",
]

__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__)
