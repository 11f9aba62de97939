"""Tool calls written as text: :class:`TextCallExtractor`, the optional stage that finds
them in content and reasoning and turns them into the wire deltas of a structured call,
and :class:`TextCallFormat`, the markup it reads (``docs/text-tool-calls.md``).

The package, from the leaves up (nothing imports upward, so there is no import circle):

* ``_formats.py``: :class:`TextCallFormat`, and the start markers of each format;
* ``_contract.py``: the protocols the extractor and the format readers use each other
  through (``Stage``, ``Channel``, ``Call``, ``Markup``);
* ``_scan.py``, ``_values.py``: marker sets and value extents; parameter types and value
  conversions;
* ``_region.py``: ``Region``, what every format reader shares; ``_wrapper.py`` (calls as
  JSON objects), ``_rawtext.py`` (raw-text parameter values) and ``_invoke.py``
  (``<invoke name=...><parameter name=...>`` blocks) for the families;
* one module per format: ``_hermes.py``, ``_qwen3_coder.py``, ``_glm.py``, ``_toolcall.py``
  (``<tool_call>``, which those three share), ``_deepseek.py``, ``_dsml.py`` (V3.2 and
  V4), ``_kimi.py``, ``_kimi_k3.py``, ``_mistral.py``, ``_llama.py`` (Llama 3 JSON and
  pythonic lists), ``_harmony.py``, ``_minimax.py`` (M2 and M3), ``_seed_oss.py``,
  ``_gemma.py`` (Gemma 4 and FunctionGemma), ``_olmo3.py``, ``_lfm2.py`` (pythonic calls
  in tags), ``_calllist.py`` (JSON arrays of calls) with ``_command.py``, ``_hunyuan.py``,
  ``_granite.py``, ``_phi4.py``, ``_xlam.py``;
* ``_readers.py``: the table, format -> its start markers and the region each opens;
* ``_extractor.py``: :class:`TextCallExtractor` (its theory of operation).

Adding a format: its member (with vLLM's parser name as an alias) and its start markers
in ``_formats.py``, a module with its ``Region`` subclass, one row in ``_readers.py``
(``named_only`` keeps it out of ``auto``).

No I/O. The names are imported on first use.
"""

from __future__ import annotations

import typing as _typing

from ..._lazy import attach

if _typing.TYPE_CHECKING:
    from ._extractor import TextCallExtractor as TextCallExtractor
    from ._formats import TextCallFormat as TextCallFormat
    from ._scan import MAX_HEADER_CHARS as MAX_HEADER_CHARS

__all__, __getattr__, __dir__ = attach(__name__, __file__)
