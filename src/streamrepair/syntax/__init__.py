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
    from .assembler import DEFAULT_MAX_DEPTH as DEFAULT_MAX_DEPTH
    from .assembler import DEFAULT_MAX_SIZE as DEFAULT_MAX_SIZE
    from .assembler import MAX_INTEGER_DIGITS as MAX_INTEGER_DIGITS
    from .assembler import MAX_SCALAR_CHARS as MAX_SCALAR_CHARS
    from .assembler import ArgumentAssembler as ArgumentAssembler
    from .changes import Appended as Appended
    from .changes import Assigned as Assigned
    from .changes import Change as Change
    from .changes import Closed as Closed
    from .changes import KeyRead as KeyRead
    from .changes import Opened as Opened
    from .changes import Path as Path
    from .changes import Reset as Reset
    from .changes import ValueBuilder as ValueBuilder
    from .changes import ValueKind as ValueKind
    from .changes import apply_changes as apply_changes
    from .changes import change_from_dict as change_from_dict
    from .changes import normalize as normalize
    from .ijson_adapter import IjsonAdapter as IjsonAdapter
    from .ijson_adapter import ijson_events as ijson_events
    from .oneshot import REPAIR_MAX_SIZE as REPAIR_MAX_SIZE
    from .oneshot import repair as repair

__all__, __getattr__, __dir__ = attach(__name__, __file__)
