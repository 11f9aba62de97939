"""The syntax layer: argument text in, a value and its verdict out.

* :mod:`.assembler`: :class:`ArgumentAssembler`, the incremental push parser (one state
  machine, one file; its theory of operation opens the module);
* :mod:`.oneshot`: :func:`repair`, the one-shot form over the same machine;
* :mod:`.changes`: the preview changes the assembler records with ``changes=True``
  (what each delta changed in the value) and :class:`ValueBuilder`, which applies them;
* :mod:`.ijson_adapter`: the same progress as ijson events, for ijson's ``items`` and
  ``kvitems`` on a call still streaming;
* ``_lexical``, ``_records`` and ``_recorder`` (private): the compiled lexical tables,
  the repair records the machine keeps while it reads, and the change recorder with the
  lazy previews built on it.

No I/O, no anyio, no jsonschema. The names are imported on first use.
"""

from __future__ import annotations

import typing as _typing

from .._lazy import attach

if _typing.TYPE_CHECKING:
    from .assembler import (
        DEFAULT_MAX_DEPTH,
        DEFAULT_MAX_SIZE,
        MAX_INTEGER_DIGITS,
        MAX_SCALAR_CHARS,
        MAX_TOKEN_CHARS,
        ArgumentAssembler,
    )
    from .changes import (
        Appended,
        Assigned,
        Change,
        Closed,
        KeyRead,
        Opened,
        Path,
        Reset,
        ValueBuilder,
        ValueKind,
        apply_changes,
        change_from_dict,
        normalize,
    )
    from .ijson_adapter import IjsonAdapter, ijson_events
    from .oneshot import (
        REPAIR_MAX_SIZE,
        repair,
    )

_EXPORTS: dict[str, str] = {
    "Appended": "changes",
    "ArgumentAssembler": "assembler",
    "Assigned": "changes",
    "Change": "changes",
    "Closed": "changes",
    "IjsonAdapter": "ijson_adapter",
    "KeyRead": "changes",
    "Opened": "changes",
    "Path": "changes",
    "Reset": "changes",
    "ValueBuilder": "changes",
    "ValueKind": "changes",
    "apply_changes": "changes",
    "change_from_dict": "changes",
    "ijson_events": "ijson_adapter",
    "normalize": "changes",
    "DEFAULT_MAX_DEPTH": "assembler",
    "DEFAULT_MAX_SIZE": "assembler",
    "MAX_INTEGER_DIGITS": "assembler",
    "MAX_SCALAR_CHARS": "assembler",
    "MAX_TOKEN_CHARS": "assembler",
    "REPAIR_MAX_SIZE": "oneshot",
    "repair": "oneshot",
}

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_SIZE",
    "MAX_INTEGER_DIGITS",
    "MAX_SCALAR_CHARS",
    "MAX_TOKEN_CHARS",
    "REPAIR_MAX_SIZE",
    "Appended",
    "ArgumentAssembler",
    "Assigned",
    "Change",
    "Closed",
    "IjsonAdapter",
    "KeyRead",
    "Opened",
    "Path",
    "Reset",
    "ValueBuilder",
    "ValueKind",
    "apply_changes",
    "change_from_dict",
    "ijson_events",
    "normalize",
    "repair",
]

__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__)
