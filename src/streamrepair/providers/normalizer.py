"""Provider chunk formats -> one normalized vocabulary of wire deltas.

Theory of operation
-------------------
:class:`ChunkNormalizer` is a push core with no I/O: ``normalize(chunk)`` takes one parsed
chunk (a dict from an SSE ``data:`` line, a JSON line or an AWS event-stream frame, or an
official SDK chunk object) and returns the :class:`~streamrepair.providers.wire.WireDelta`
objects it carries, in order (the vocabulary lives in ``wire.py``). It knows nothing about
tool-call identity or finishing: that is the tracker's job (``stream/tracker.py``).

The provider is named explicitly or detected from the first chunk that says which it is
(an ``{"error": ...}`` chunk says nothing and is reported as an error whatever the
provider). A named provider is checked against the first chunks that say which they are:
a chunk of another format raises :class:`UnsupportedChunkError` instead of being read as
nothing. Unknown fields and event types are ignored; nothing passed in is modified.

Once the provider is known, the table ``_READERS`` gives the reader of its format, one module
each, and every chunk goes to it. A reader keeps only the small, bounded state its
provider needs (``_reader.py`` has the base and the field readers they share):

* ``_chat.py``: OpenAI Chat Completions and every compatible server (which choice is
  followed when ``n > 1``, and which were skipped);
* ``_anthropic.py``: Anthropic Messages (which content indexes are blocks Anthropic runs
  itself: their input deltas are not a call's);
* ``_responses.py``: the OpenAI Responses API (the map from ``item_id`` to ``call_id``:
  deltas carry the first, the conversation needs the second);
* ``_ollama.py``: Ollama's native ``/api/chat``;
* ``_cohere.py``: Cohere v2 chat;
* ``_gemini.py``: Gemini's native ``streamGenerateContent`` (the count of calls, and the
  one call whose arguments arrive by JSON path, bounded by ``DEFAULT_MAX_SIZE``
  characters);
* ``_bedrock.py``: AWS Bedrock ``ConverseStream`` (which blocks are server tools);
  ``InvokeModelWithResponseStream`` ``chunk`` events are unwrapped here to the
  provider's own chunk inside.

What is the client's and what is not: only the client's own calls become
:class:`WireToolCall` (Chat ``tool_calls``, Anthropic ``tool_use``, Responses
``function_call``/``custom_tool_call`` and the items the client runs, Gemini
``functionCall``, Bedrock ``toolUse``). What the provider runs itself (Anthropic
``server_tool_use``, ``mcp_tool_use`` and their results, Responses hosted items, Bedrock
server tools) is a :class:`WireBlock` or :class:`WireItem`, kept as received and never a
call.

The formats and quirks each reader handles are listed in its module (sources in
``../shared/reference/wire-formats-and-malformations.md`` and
``../scratch/providers/NOTES.md``); the openai SDK's ``ChatCompletionStream`` events
(``{"type": "chunk", "chunk": ...}`` is the chunk; its other events are derived from
chunks and ignored) are read here.
"""

from __future__ import annotations

import base64
import binascii
import enum
import json
from collections.abc import Mapping
from typing import Any, Final

from ..errors import UnsupportedChunkError
from . import _anthropic, _bedrock, _cohere
from ._anthropic import AnthropicReader
from ._bedrock import BedrockReader
from ._chat import ChatReader
from ._cohere import CohereReader
from ._gemini import GeminiReader
from ._ollama import OllamaReader
from ._reader import Reader, error_delta, is_map
from ._responses import ResponsesReader, responses_client_item
from .wire import WireDelta

__all__ = [
    "ChunkNormalizer",
    "Provider",
    "as_chunk",
    "detect_provider",
    "responses_client_item",
]


class Provider(enum.Enum):
    """The wire format of a stream."""

    #: OpenAI Chat Completions and every OpenAI-compatible server.
    OPENAI = "openai"
    #: Anthropic Messages.
    ANTHROPIC = "anthropic"
    #: OpenAI Responses API.
    RESPONSES = "responses"
    #: Ollama's native ``/api/chat`` stream.
    OLLAMA = "ollama"
    #: Cohere v2 chat stream (``tool-call-start``/``-delta``/``-end``, ``message-end``).
    COHERE = "cohere"
    #: Gemini's native ``streamGenerateContent`` (``candidates[].content.parts``).
    GEMINI = "gemini"
    #: AWS Bedrock ``ConverseStream`` events.
    BEDROCK = "bedrock"


#: The reader of each provider's format: one module each (adding a provider is its
#: ``Provider`` member, a reader module, a row here and its case in :func:`detect_provider`).
_READERS: Final[dict[Provider, type[Reader]]] = {
    Provider.OPENAI: ChatReader,
    Provider.ANTHROPIC: AnthropicReader,
    Provider.RESPONSES: ResponsesReader,
    Provider.OLLAMA: OllamaReader,
    Provider.COHERE: CohereReader,
    Provider.GEMINI: GeminiReader,
    Provider.BEDROCK: BedrockReader,
}


# -- chunks as mappings ------------------------------------------------------------------

#: Fields of SDK helper events that repeat everything accumulated so far (the openai and
#: anthropic stream managers add a ``snapshot`` to each event); converting them on every
#: event would cost time growing with the stream, and they say nothing new.
_SNAPSHOT_FIELDS = frozenset({"snapshot"})

#: The events the stream managers derive from the raw ones (openai ``ChatCompletionStream``,
#: anthropic ``MessageStream``): they carry nothing the raw events did not, and several
#: carry everything accumulated so far (``arguments``, ``parsed``), so they are not
#: converted at all.
_HELPER_EVENTS = frozenset(
    {
        "content.delta",
        "content.done",
        "refusal.delta",
        "refusal.done",
        "tool_calls.function.arguments.delta",
        "tool_calls.function.arguments.done",
        "logprobs.content.delta",
        "logprobs.content.done",
        "logprobs.refusal.delta",
        "logprobs.refusal.done",
        "text",
        "citation",
        "thinking",
        "signature",
        "input_json",
        "compaction",
    }
)


def as_chunk(obj: object) -> Mapping[str, Any]:
    """A chunk as a mapping: dicts pass through, SDK objects (pydantic models of the
    ``openai``, ``anthropic`` and ``google-genai`` packages) are converted with their own
    ``model_dump()`` (or ``to_dict()``), so no SDK is imported here.

    The conversion keeps the wire names (``by_alias``), leaves out unset fields and the
    stream managers' ``snapshot``, and never warns: chunks of a shape the SDK's types do
    not expect (object ``arguments``, new block types) are converted as they are, without
    pydantic's serializer warnings. The openai ``ChatCompletionStream`` event
    ``{"type": "chunk", "chunk": ...}`` gives its chunk; the events the stream managers
    derive from the raw ones (``content.delta``, ``input_json``...) give only their type.
    """
    if is_map(obj):
        return obj
    kind = getattr(obj, "type", None)
    if kind == "chunk":
        inner = getattr(obj, "chunk", None)
        if inner is not None and inner is not obj:
            return as_chunk(inner)
    elif type(kind) is str and kind in _HELPER_EVENTS:
        return {"type": kind}
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        try:
            result = dump(
                mode="json",
                exclude_unset=True,
                by_alias=True,
                warnings=False,
                exclude=_SNAPSHOT_FIELDS,
            )
        except TypeError:  # a model_dump without these options (pydantic v1 shims)
            result = None
        if isinstance(result, Mapping):
            return result
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        try:
            result = to_dict(mode="json", exclude_unset=True, warnings=False)
        except TypeError:
            result = to_dict()
        if isinstance(result, Mapping):
            return result
    raise UnsupportedChunkError(f"cannot read a chunk of type {type(obj).__name__}")


def detect_provider(chunk: Mapping[str, Any]) -> Provider | None:
    """The provider a chunk belongs to, or None when the chunk does not say."""
    kind = chunk.get("type")
    if isinstance(kind, str):
        if kind.startswith("response."):
            return Provider.RESPONSES
        if kind in _anthropic.EVENT_TYPES:
            return Provider.ANTHROPIC
        if kind in _cohere.EVENT_TYPES:
            return Provider.COHERE
    if "choices" in chunk or chunk.get("object") == "chat.completion.chunk":
        return Provider.OPENAI
    if isinstance(chunk.get("message"), Mapping) and "done" in chunk:
        return Provider.OLLAMA
    if "candidates" in chunk or "promptFeedback" in chunk:
        return Provider.GEMINI
    if "usageMetadata" in chunk and "modelVersion" in chunk:
        return Provider.GEMINI
    if len(chunk) <= 2:  # botocore's parsed events have one key
        for key in chunk:
            if key in _bedrock.EVENTS or (type(key) is str and key.endswith("Exception")):
                return Provider.BEDROCK
    return None


def _unwrap(chunk: Mapping[str, Any]) -> Mapping[str, Any]:
    """The chunk inside a wrapper: the openai ``ChatCompletionStream`` event
    ``{"type": "chunk", "chunk": {...}}``, Bedrock ``InvokeModelWithResponseStream``'s
    ``{"chunk": {"bytes": ...}}`` (base64 text from the raw frames, bytes from botocore)."""
    inner = chunk["chunk"]
    if not is_map(inner):
        return chunk
    if chunk.get("type") == "chunk":
        return inner
    data = inner.get("bytes")
    if data is None or len(chunk) != 1:
        return chunk
    try:
        if isinstance(data, str):
            data = base64.b64decode(data, validate=True)
        decoded = json.loads(data)
    except (ValueError, TypeError, binascii.Error) as exc:
        raise UnsupportedChunkError(
            f"a Bedrock chunk's bytes are not a JSON chunk: {exc}"
        ) from None
    if not is_map(decoded):
        raise UnsupportedChunkError("a Bedrock chunk's bytes are not a JSON object")
    return decoded


# -- the normalizer ----------------------------------------------------------------------


class ChunkNormalizer:
    """Turn each chunk of one stream into :class:`WireDelta` objects (module docstring).

    ``provider`` names the format (else it is detected from the first chunk that says);
    ``choice`` is the Chat Completions choice (Gemini candidate) to follow when ``n > 1``.
    """

    __slots__ = ("_choice", "_named", "_reader", "provider")

    def __init__(self, provider: Provider | str | None = None, *, choice: int = 0) -> None:
        self.provider: Provider | None = Provider(provider) if provider is not None else None
        if type(choice) is not int or choice < 0:
            raise ValueError(f"choice must be an int >= 0, not {choice!r}")
        self._choice = choice
        self._named = self.provider  # checked against the first chunk that says which
        self._reader: Reader | None = (
            _READERS[self.provider](choice) if self.provider is not None else None
        )

    @property
    def choice(self) -> int:
        """The choice (candidate) followed when the stream has several."""
        return self._choice

    @property
    def ignored_choices(self) -> int:
        """Chunks of other choices (n > 1) that were skipped."""
        reader = self._reader
        return reader.ignored_choices if reader is not None else 0

    def missing_choice(self) -> str | None:
        """Why the stream said nothing, when chunks of other choices arrived and none of
        the chosen one (``choice`` out of range); else None."""
        reader = self._reader
        return reader.missing_choice() if reader is not None else None

    def normalize(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        """The wire deltas of one chunk. Raises :class:`UnsupportedChunkError` when the
        first chunks fit no known format, or fit another format than the one named."""
        if not is_map(chunk):
            raise UnsupportedChunkError(f"a chunk must be a mapping, not {type(chunk).__name__}")
        if "chunk" in chunk:
            chunk = _unwrap(chunk)
        reader = self._reader
        if reader is None:
            provider = detect_provider(chunk)
            if provider is None:
                if "error" in chunk or chunk.get("type") == "error":
                    return [error_delta(chunk)]
                keys = ", ".join(sorted(str(k) for k in chunk)[:8])
                raise UnsupportedChunkError(f"unrecognized chunk format (keys: {keys})")
            self.provider = provider
            reader = self._reader = _READERS[provider](self._choice)
        elif self._named is not None:
            self._check(chunk, self._named)
        return reader.read(chunk)

    def text_of(self, chunk: Mapping[str, Any]) -> tuple[str | None, str | None, int | None] | None:
        """``(reasoning, text, block)`` when :meth:`normalize` would give only a
        :class:`~.wire.WireReasoning` of ``reasoning`` (when not None) then a
        :class:`~.wire.WireText` of ``text`` (when not None), of ``block``, for ``chunk``:
        the most common chunk, told without building its deltas (the reader's
        ``text_of``). None for any other chunk, and while the format is still being
        checked; nothing is changed then, and :meth:`normalize` reads the chunk."""
        reader = self._reader
        if reader is None or self._named is not None or "chunk" in chunk:
            return None
        return reader.text_of(chunk)

    def arguments_of(self, chunk: Mapping[str, Any]) -> tuple[int, str, bool] | None:
        """``(index, text, expects_end)`` when :meth:`normalize` would give only a
        :class:`~.wire.WireToolCall` of ``text`` for the call at ``index`` (no id, no name,
        nothing else but ``expects_end``) for ``chunk``: a piece of arguments, told
        without building its delta (the reader's ``arguments_of``). None for any other
        chunk, and while the format is still being checked; nothing is changed then."""
        reader = self._reader
        if reader is None or self._named is not None or "chunk" in chunk:
            return None
        return reader.arguments_of(chunk)

    def _check(self, chunk: Mapping[str, Any], named: Provider) -> None:
        """A named provider against a chunk: once one says it is in the named format,
        no more checks; a chunk of another format raises."""
        found = detect_provider(chunk)
        if found is named:
            self._named = None
        elif found is not None:
            raise UnsupportedChunkError(
                f"the stream was named {named.value}, but this chunk is in "
                f"{found.value}'s format: the provider named does not match the stream"
            )
