"""The table of text tool-call formats: for each :class:`TextCallFormat`, the start markers
that open its markup and the region each opens, whether models draft it while thinking,
and how a reply that is the bare markup begins. The extractor builds what it scans for
from this table and nothing else.

Adding a format: its member (and label, and vLLM's name as an alias) and its start
markers in ``_formats.py``, one module with its :class:`~._region.Region` subclass, and
one row here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from ._command import CommandRegion
from ._contract import Channel, Stage
from ._deepseek import DeepSeekRegion
from ._dsml import DsmlRegion, DsmlV4Region
from ._formats import (
    COMMAND_ACTION,
    DEEPSEEK_CALL,
    DEEPSEEK_CALLS,
    DSML_CALLS,
    DSML_V4_CALLS,
    FUNCTION,
    FUNCTIONGEMMA_CALL,
    GEMMA4_CALL,
    GRANITE_CALL,
    HARMONY_CHANNEL,
    HARMONY_START,
    HUNYUAN_CALLS,
    KIMI_CALL,
    KIMI_SECTION,
    KIMI_SECTION_SINGULAR,
    LFM2_CALLS,
    MINIMAX_M2_CALLS,
    MINIMAX_M3_CALLS,
    MISTRAL_CALLS,
    OLMO3_CALLS,
    PHI4_CALLS,
    PYTHON_START,
    PYTHON_TAG,
    SEED_CALLS,
    SEED_THINK_CLOSE,
    SEED_THINK_OPEN,
    THINK_CLOSE,
    THINK_OPEN,
    TOOL_CALL,
    XLAM_FENCE,
    XTML_CLOSE,
    XTML_OPEN,
    TextCallFormat,
)
from ._gemma import FunctionGemmaRegion, GemmaRegion
from ._granite import GraniteRegion
from ._harmony import HarmonyRegion
from ._hunyuan import HunyuanRegion
from ._kimi import KimiRegion
from ._kimi_k3 import XtmlRegion
from ._lfm2 import Lfm2Region
from ._llama import LlamaRegion, PythonicRegion
from ._minimax import MinimaxM2Region, MinimaxM3Region
from ._mistral import MistralRegion
from ._olmo3 import Olmo3Region
from ._phi4 import Phi4MiniRegion
from ._qwen3_coder import FunctionRegion
from ._region import Region
from ._seed_oss import SeedToolCallTag
from ._toolcall import ToolCallTag
from ._xlam import XlamRegion

__all__: list[str] = []


@dataclass(frozen=True, slots=True, kw_only=True)
class FormatReader:
    """How one format's markup is found and read."""

    #: Each start marker -> the region it opens. A marker several formats share opens
    #: the same region in each of their rows, a region that decides by what follows.
    opens: Mapping[str, type[Region]]
    #: Models also write it while thinking, as drafts: not read in reasoning or in a
    #: ``<think>`` block of the content (QwenLM/Qwen3#1459).
    drafted: bool = False
    #: Drafted formats: the markers of the thinking block in the content whose drafts are
    #: not read (Seed-OSS writes ``<seed:think>``).
    think: tuple[str, str] = (THINK_OPEN, THINK_CLOSE)
    #: The first character of a reply that is the bare markup, with no marker, and the
    #: region that reads it: only at the start of the content, in the format named, or
    #: in ``auto`` when tools are given (a call then only to one of them).
    bare: tuple[str, type[Region]] | None = None
    #: Read only when the format is named, never in ``auto``: its markers are ordinary
    #: text elsewhere (Phi-4-mini's ``functools``), or it is an older format whose
    #: markup another format shares (Granite 3.x and xLAM lists in ``<tool_call>``).
    named_only: bool = False


READERS: Final[dict[TextCallFormat, FormatReader]] = {
    TextCallFormat.HERMES: FormatReader(opens={TOOL_CALL: ToolCallTag}, drafted=True),
    TextCallFormat.QWEN3_CODER: FormatReader(
        opens={TOOL_CALL: ToolCallTag, FUNCTION: FunctionRegion}, drafted=True
    ),
    TextCallFormat.GLM: FormatReader(opens={TOOL_CALL: ToolCallTag}, drafted=True),
    TextCallFormat.DEEPSEEK: FormatReader(
        opens={DEEPSEEK_CALLS: DeepSeekRegion, DEEPSEEK_CALL: DeepSeekRegion}
    ),
    TextCallFormat.DSML: FormatReader(opens={DSML_CALLS: DsmlRegion}),
    TextCallFormat.KIMI_K2: FormatReader(
        opens={KIMI_SECTION: KimiRegion, KIMI_SECTION_SINGULAR: KimiRegion, KIMI_CALL: KimiRegion}
    ),
    TextCallFormat.MISTRAL: FormatReader(opens={MISTRAL_CALLS: MistralRegion}),
    TextCallFormat.LLAMA3_JSON: FormatReader(
        opens={PYTHON_TAG: LlamaRegion, FUNCTION: FunctionRegion},
        drafted=True,
        bare=("{", LlamaRegion),
    ),
    TextCallFormat.PYTHONIC: FormatReader(
        opens={PYTHON_START: PythonicRegion}, drafted=True, bare=("[", PythonicRegion)
    ),
    TextCallFormat.HARMONY: FormatReader(
        opens={HARMONY_CHANNEL: HarmonyRegion, HARMONY_START: HarmonyRegion}
    ),
    TextCallFormat.GEMMA4: FormatReader(opens={GEMMA4_CALL: GemmaRegion}),
    TextCallFormat.FUNCTIONGEMMA: FormatReader(opens={FUNCTIONGEMMA_CALL: FunctionGemmaRegion}),
    TextCallFormat.OLMO3: FormatReader(opens={OLMO3_CALLS: Olmo3Region}, drafted=True),
    TextCallFormat.LFM2: FormatReader(opens={LFM2_CALLS: Lfm2Region}, drafted=True),
    TextCallFormat.COMMAND: FormatReader(opens={COMMAND_ACTION: CommandRegion}),
    TextCallFormat.HUNYUAN_A13B: FormatReader(opens={HUNYUAN_CALLS: HunyuanRegion}, drafted=True),
    TextCallFormat.GRANITE: FormatReader(
        opens={GRANITE_CALL: GraniteRegion, TOOL_CALL: ToolCallTag}, drafted=True, named_only=True
    ),
    TextCallFormat.PHI4_MINI: FormatReader(opens={PHI4_CALLS: Phi4MiniRegion}, named_only=True),
    TextCallFormat.XLAM: FormatReader(
        opens={XLAM_FENCE: XlamRegion, TOOL_CALL: ToolCallTag, MISTRAL_CALLS: MistralRegion},
        drafted=True,
        bare=("[", XlamRegion),
        named_only=True,
    ),
    TextCallFormat.DSML_V4: FormatReader(opens={DSML_V4_CALLS: DsmlV4Region}),
    TextCallFormat.KIMI_K3: FormatReader(opens={XTML_OPEN: XtmlRegion, XTML_CLOSE: XtmlRegion}),
    TextCallFormat.MINIMAX_M2: FormatReader(opens={MINIMAX_M2_CALLS: MinimaxM2Region}),
    TextCallFormat.MINIMAX_M3: FormatReader(opens={MINIMAX_M3_CALLS: MinimaxM3Region}),
    TextCallFormat.SEED_OSS: FormatReader(
        opens={SEED_CALLS: SeedToolCallTag},
        drafted=True,
        think=(SEED_THINK_OPEN, SEED_THINK_CLOSE),
    ),
}


def _regions_by_marker() -> dict[str, type[Region]]:
    """Each start marker -> its region, checking that the table is whole and agrees."""
    missing = set(TextCallFormat) - {TextCallFormat.AUTO} - set(READERS)
    if missing:
        raise RuntimeError(f"text tool-call formats without a reader: {sorted(missing, key=str)}")
    found: dict[str, type[Region]] = {}
    for fmt, reader in READERS.items():
        for marker, region in reader.opens.items():
            if found.setdefault(marker, region) is not region:
                raise RuntimeError(f"{marker!r} opens two regions ({fmt.value}'s row)")
    return found


#: The start markers of each format (what opens a call region in text).
START_MARKERS: Final[dict[TextCallFormat, tuple[str, ...]]] = {
    fmt: tuple(reader.opens) for fmt, reader in READERS.items()
}
#: The formats ``auto`` looks for (every format not marked ``named_only``).
AUTO: Final = frozenset(fmt for fmt, reader in READERS.items() if not reader.named_only)
#: Formats models also write while thinking, as drafts: not read in reasoning or <think>.
DRAFTED: Final = frozenset(fmt for fmt, reader in READERS.items() if reader.drafted)
#: Each drafted format's opening think marker; each opening marker's closing one; both.
THINK_OPENS: Final = {fmt: reader.think[0] for fmt, reader in READERS.items() if reader.drafted}
THINK_PAIRS: Final = dict(reader.think for reader in READERS.values() if reader.drafted)
THINK_MARKERS: Final = frozenset(THINK_PAIRS) | frozenset(THINK_PAIRS.values())
#: Formats whose reply may be the bare markup with no marker: the character it begins with.
BARE: Final[dict[TextCallFormat, str]] = {
    fmt: reader.bare[0] for fmt, reader in READERS.items() if reader.bare is not None
}
#: The first character of a bare reply -> its format (what ``auto`` tries, with tools):
#: the formats ``auto`` reads only (xLAM's bare ``[`` is named only; pythonic's is auto's).
BARE_BY_CHAR: Final[dict[str, TextCallFormat]] = {
    char: fmt for fmt, char in BARE.items() if fmt in AUTO
}
if len(BARE_BY_CHAR) != len([fmt for fmt in BARE if fmt in AUTO]):
    raise RuntimeError("two formats read in auto begin a bare reply with one character")
_OPENS: Final = _regions_by_marker()


def region_for(stage: Stage, ch: Channel, marker: str, opener: str) -> Region:
    """The region a start marker opens."""
    return _OPENS[marker](stage, ch, opener, marker)


def bare_region(stage: Stage, ch: Channel, fmt: TextCallFormat, opener: str) -> Region:
    """The region of a bare reply in ``fmt`` (``{`` for Llama JSON, ``[`` for pythonic)."""
    bare = READERS[fmt].bare
    assert bare is not None
    return bare[1](stage, ch, opener, "")
