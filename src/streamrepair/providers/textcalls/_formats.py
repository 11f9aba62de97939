"""The text tool-call formats by name (:class:`TextCallFormat`) and the markers that begin
their markup. A leaf: it imports nothing of the package, so the extractor, the contract
and every format reader can use the enum and the markers without importing one another.

Which region each start marker opens, and the other facts about reading a format, are in
the table of ``_readers.py``.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = [
    "COMMAND_ACTION",
    "DEEPSEEK_CALL",
    "DEEPSEEK_CALLS",
    "DSML_CALLS",
    "DSML_V4_CALLS",
    "FUNCTION",
    "FUNCTIONGEMMA_CALL",
    "GEMMA4_CALL",
    "GRANITE_CALL",
    "HARMONY_CHANNEL",
    "HARMONY_START",
    "HUNYUAN_CALLS",
    "KIMI_CALL",
    "KIMI_SECTION",
    "KIMI_SECTION_SINGULAR",
    "LFM2_CALLS",
    "MINIMAX_M2_CALLS",
    "MINIMAX_M3_CALLS",
    "MISTRAL_CALLS",
    "OLMO3_CALLS",
    "PHI4_CALLS",
    "PYTHON_START",
    "PYTHON_TAG",
    "SEED_CALLS",
    "SEED_THINK_CLOSE",
    "SEED_THINK_OPEN",
    "THINK_CLOSE",
    "THINK_OPEN",
    "TOOL_CALL",
    "XLAM_FENCE",
    "XTML_CLOSE",
    "XTML_OPEN",
    "TextCallFormat",
]


class TextCallFormat(enum.Enum):
    """The markup a model writes its tool calls in (``text_tool_calls=``)."""

    #: Find the format from the first confirmed call (every marker-led format).
    AUTO = "auto"
    #: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``: Hermes 2 Pro/3,
    #: Qwen2.5, Qwen3, QwQ.
    HERMES = "hermes"
    #: ``<tool_call><function=name><parameter=k>v</parameter></function></tool_call>``:
    #: Qwen3-Coder, Qwen3.5+ (and Llama 3.1's ``<function=name>{...}</function>``).
    QWEN3_CODER = "qwen3_coder"
    #: ``<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``:
    #: GLM-4.5, 4.6, 4.7.
    GLM = "glm"
    #: ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>...<｜tool▁sep｜>...``: DeepSeek V3, R1
    #: (``function<｜tool▁sep｜>name`` and a fenced JSON) and V3.1 (``name<｜tool▁sep｜>{...}``).
    DEEPSEEK = "deepseek"
    #: ``<｜DSML｜function_calls><｜DSML｜invoke name=...>``: DeepSeek V3.2.
    DSML = "dsml"
    #: ``<|tool_calls_section_begin|><|tool_call_begin|>functions.name:0...``: Kimi K2.
    KIMI_K2 = "kimi_k2"
    #: ``[TOOL_CALLS] [{...}]`` (before v11) or ``[TOOL_CALLS]name[ARGS]{...}``: Mistral,
    #: Magistral, Devstral.
    MISTRAL = "mistral"
    #: A reply that is ``{"name": ..., "parameters": {...}}`` (calls joined by ``;``), or
    #: ``<|python_tag|>`` before one: Llama 3.1/3.2/3.3.
    LLAMA3_JSON = "llama3_json"
    #: A reply that is ``[f(a=1), g(b="x")]``, or ``<|python_start|>`` before one: Llama 4.
    PYTHONIC = "pythonic"
    #: ``<|channel|>commentary to=functions.name <|constrain|>json<|message|>{...}<|call|>``:
    #: gpt-oss (its analysis channel becomes reasoning).
    HARMONY = "harmony"
    #: ``<|tool_call>call:name{key:<|"|>text<|"|>,n:42}<tool_call|>``: Gemma 4.
    GEMMA4 = "gemma4"
    #: ``<start_function_call>call:name{key:<escape>text<escape>}<end_function_call>``:
    #: FunctionGemma.
    FUNCTIONGEMMA = "functiongemma"
    #: ``<function_calls>f(a="x")\ng(b=1)</function_calls>``: OLMo 3 (a Python call a line).
    OLMO3 = "olmo3"
    #: ``<|tool_call_start|>[f(a="x"), g()]<|tool_call_end|>``: LFM2, LFM2.5.
    LFM2 = "lfm2"
    #: ``<|START_ACTION|>[{"tool_call_id": ..., "tool_name": ..., "parameters": {...}}]
    #: <|END_ACTION|>``: Cohere Command A, Command R7B.
    COMMAND = "command"
    #: ``<tool_calls>[{"name": ..., "arguments": {...}}]</tool_calls>``: Hunyuan-A13B.
    HUNYUAN_A13B = "hunyuan_a13b"
    #: ``<|tool_call|>[{...}]`` or ``<tool_call>[{...}]``: Granite 3.x (named only, never
    #: in ``auto``).
    GRANITE = "granite"
    #: ``functools[{"name": ..., "arguments": {...}}]``: Phi-4-mini (named only).
    PHI4_MINI = "phi4_mini"
    #: A reply that is ``[{"name": ..., "arguments": {...}}]``, fenced as ```` ```json ````
    #: or inside ``<tool_call>``: xLAM-2 (named only).
    XLAM = "xlam"
    #: ``<｜DSML｜tool_calls><｜DSML｜invoke name=...>``: DeepSeek V4.
    DSML_V4 = "dsml_v4"
    #: ``<|open|>tools<|sep|><|open|>call tool="name"<|sep|>...``: Kimi K3 (XTML).
    KIMI_K3 = "kimi_k3"
    #: ``<minimax:tool_call><invoke name="name"><parameter name="k">v</parameter>``:
    #: MiniMax M2, M2.1.
    MINIMAX_M2 = "minimax_m2"
    #: ``]<]minimax[>[<tool_call>]<]minimax[>[<invoke name="name">]<]minimax[>[<k>v...``:
    #: MiniMax M3.
    MINIMAX_M3 = "minimax_m3"
    #: ``<seed:tool_call><function=name><parameter=k>v</parameter>...``: Seed-OSS.
    SEED_OSS = "seed_oss"

    @classmethod
    def parse(cls, name: TextCallFormat | str) -> TextCallFormat:
        """The format called ``name``: a value above, or one of vLLM's
        ``--tool-call-parser`` names for it (``qwen3_xml``, ``glm45``, ``glm47``,
        ``deepseek_v3``, ``deepseek_v31``, ``deepseek_v32``, ``deepseek_v4``,
        ``llama4_pythonic``, ``openai``...). Case, ``-`` and ``.`` are ignored. Raises
        ``ValueError``."""
        if isinstance(name, TextCallFormat):
            return name
        if not isinstance(name, str):
            raise TypeError(f"a text tool-call format is a str, not {type(name).__name__}")
        key = name.strip().lower().replace("-", "_").replace(".", "")
        found = _ALIASES.get(key)
        if found is None:
            try:
                return cls(key)
            except ValueError:
                names = ", ".join(sorted({f.value for f in cls} | set(_ALIASES)))
                raise ValueError(
                    f"unknown text tool-call format {name!r}; known: {names}"
                ) from None
        return found

    @property
    def label(self) -> str:
        """How the markup is named in notes."""
        return _LABELS[self]


#: Other names of the formats: vLLM's ``--tool-call-parser`` names and model names.
_ALIASES: Final[dict[str, TextCallFormat]] = {
    "qwen": TextCallFormat.HERMES,
    "qwen25": TextCallFormat.HERMES,
    "qwen3": TextCallFormat.HERMES,
    "qwq": TextCallFormat.HERMES,
    "qwen3_xml": TextCallFormat.QWEN3_CODER,
    "qwen3coder": TextCallFormat.QWEN3_CODER,
    "glm45": TextCallFormat.GLM,
    "glm46": TextCallFormat.GLM,
    "glm47": TextCallFormat.GLM,
    "glm4_moe": TextCallFormat.GLM,
    "deepseek_v3": TextCallFormat.DEEPSEEK,
    "deepseek_v31": TextCallFormat.DEEPSEEK,
    "deepseek_r1": TextCallFormat.DEEPSEEK,
    "deepseek_v32": TextCallFormat.DSML,
    "kimi": TextCallFormat.KIMI_K2,
    "llama": TextCallFormat.LLAMA3_JSON,
    "llama3": TextCallFormat.LLAMA3_JSON,
    "llama4_pythonic": TextCallFormat.PYTHONIC,
    "gpt_oss": TextCallFormat.HARMONY,
    "openai": TextCallFormat.HARMONY,
    "granite4": TextCallFormat.HERMES,
    "step3p5": TextCallFormat.QWEN3_CODER,
    "qwen35": TextCallFormat.QWEN3_CODER,
    "nemotron": TextCallFormat.QWEN3_CODER,
    "nemotron_3_nano": TextCallFormat.QWEN3_CODER,
    "lfm25": TextCallFormat.LFM2,
    "cohere": TextCallFormat.COMMAND,
    "cohere_command": TextCallFormat.COMMAND,
    "phi4_mini_json": TextCallFormat.PHI4_MINI,
    "deepseek_v4": TextCallFormat.DSML_V4,
}

_LABELS: Final[dict[TextCallFormat, str]] = {
    TextCallFormat.AUTO: "tool-call",
    TextCallFormat.HERMES: "Hermes <tool_call> JSON",
    TextCallFormat.QWEN3_CODER: "Qwen3-Coder <function=...> XML",
    TextCallFormat.GLM: "GLM <arg_key>/<arg_value>",
    TextCallFormat.DEEPSEEK: "DeepSeek tool-call token",
    TextCallFormat.DSML: "DeepSeek V3.2 DSML",
    TextCallFormat.KIMI_K2: "Kimi K2 tool-call section",
    TextCallFormat.MISTRAL: "Mistral [TOOL_CALLS]",
    TextCallFormat.LLAMA3_JSON: "Llama 3 JSON",
    TextCallFormat.PYTHONIC: "pythonic call list",
    TextCallFormat.HARMONY: "Harmony commentary",
    TextCallFormat.GEMMA4: "Gemma 4 <|tool_call>",
    TextCallFormat.FUNCTIONGEMMA: "FunctionGemma <start_function_call>",
    TextCallFormat.OLMO3: "OLMo 3 <function_calls>",
    TextCallFormat.LFM2: "LFM2 <|tool_call_start|>",
    TextCallFormat.COMMAND: "Command <|START_ACTION|>",
    TextCallFormat.HUNYUAN_A13B: "Hunyuan <tool_calls>",
    TextCallFormat.GRANITE: "Granite tool-call list",
    TextCallFormat.PHI4_MINI: "Phi-4-mini functools",
    TextCallFormat.XLAM: "xLAM call list",
    TextCallFormat.DSML_V4: "DeepSeek V4 DSML",
    TextCallFormat.KIMI_K3: "Kimi K3 XTML",
    TextCallFormat.MINIMAX_M2: "MiniMax M2 <invoke>",
    TextCallFormat.MINIMAX_M3: "MiniMax M3 <invoke>",
    TextCallFormat.SEED_OSS: "Seed-OSS <seed:tool_call>",
}


# -- start markers: what opens a format's markup in text ------------------------------------
# No marker may be a prefix of another marker scanned for at the same time
# (``MarkerSet`` refuses such a set).

#: Hermes, Qwen3-Coder and GLM: what follows the tag says which.
TOOL_CALL: Final = "<tool_call>"
#: Qwen3-Coder without its wrapper, and Llama 3.1's ``<function=name>{...}</function>``.
FUNCTION: Final = "<function="
#: DeepSeek V3 / R1 / V3.1: the section, or a call whose section token was dropped.
DEEPSEEK_CALLS: Final = "<｜tool▁calls▁begin｜>"
DEEPSEEK_CALL: Final = "<｜tool▁call▁begin｜>"
#: DeepSeek V3.2.
DSML_CALLS: Final = "<｜DSML｜function_calls>"
#: Kimi K2: the section (two spellings in the wild), or a call without one.
KIMI_SECTION: Final = "<|tool_calls_section_begin|>"
KIMI_SECTION_SINGULAR: Final = "<|tool_call_section_begin|>"
KIMI_CALL: Final = "<|tool_call_begin|>"
#: Mistral, Magistral, Devstral.
MISTRAL_CALLS: Final = "[TOOL_CALLS]"
#: Llama 3.x: a JSON call or a built-in call follows.
PYTHON_TAG: Final = "<|python_tag|>"
#: Llama 4: a pythonic call list follows.
PYTHON_START: Final = "<|python_start|>"
#: gpt-oss Harmony: a message's header (``<|start|>`` names its author first).
HARMONY_CHANNEL: Final = "<|channel|>"
HARMONY_START: Final = "<|start|>"

#: Gemma 4 and FunctionGemma.
GEMMA4_CALL: Final = "<|tool_call>"
FUNCTIONGEMMA_CALL: Final = "<start_function_call>"
#: OLMo 3: Python calls, one a line.
OLMO3_CALLS: Final = "<function_calls>"
#: LFM2, LFM2.5: a pythonic call list.
LFM2_CALLS: Final = "<|tool_call_start|>"
#: Cohere Command A / R7B: a JSON array of actions.
COMMAND_ACTION: Final = "<|START_ACTION|>"
#: Hunyuan-A13B: a JSON array of calls.
HUNYUAN_CALLS: Final = "<tool_calls>"
#: Granite 3.0's token before its JSON array (3.1+ write ``<tool_call>``).
GRANITE_CALL: Final = "<|tool_call|>"
#: Phi-4-mini: a vocabulary token right before its JSON array (an English word: named only).
PHI4_CALLS: Final = "functools"
#: xLAM: a JSON array of calls in a markdown fence.
XLAM_FENCE: Final = "```json"

#: A thinking block in the content: the drafted formats are not read inside it.
THINK_OPEN: Final = "<think>"
THINK_CLOSE: Final = "</think>"

#: DeepSeek V4.
DSML_V4_CALLS: Final = "<｜DSML｜tool_calls>"
#: Kimi K3 (XTML): every tag opens or closes so; the tag's name follows.
XTML_OPEN: Final = "<|open|>"
XTML_CLOSE: Final = "<|close|>"
#: MiniMax M2, M3.
MINIMAX_M2_CALLS: Final = "<minimax:tool_call>"
MINIMAX_M3_CALLS: Final = "]<]minimax[>[<tool_call>"
#: Seed-OSS, and its thinking block (the calls drafted in it are not read).
SEED_CALLS: Final = "<seed:tool_call>"
SEED_THINK_OPEN: Final = "<seed:think>"
SEED_THINK_CLOSE: Final = "</seed:think>"
