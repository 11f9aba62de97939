"""Provider chunk formats -> one normalized vocabulary of wire deltas.

Theory of operation
-------------------
:class:`ChunkNormalizer` is a push core with no I/O: ``normalize(chunk)`` takes one parsed
chunk (a dict from an SSE ``data:`` line, a JSON line or an AWS event-stream frame, or an
official SDK chunk object) and returns the :class:`~streamrepair.providers.wire.WireDelta`
objects it carries, in order (the vocabulary lives in ``wire.py``). It knows nothing about
tool-call identity or finishing: that is the tracker's job (``stream/tracker.py``). The
state kept is small and bounded: the detected :class:`Provider`; for the Responses API the
map from ``item_id`` to ``call_id`` (deltas carry the first, the conversation needs the
second); for Anthropic and Bedrock which content indexes are blocks the provider runs
itself (their input deltas are not a call's); for Gemini the count of calls and the one
call whose arguments arrive by JSON path (bounded by ``DEFAULT_MAX_SIZE`` characters);
which choices were seen.

The provider is named explicitly or detected from the first chunk that says which it is
(an ``{"error": ...}`` chunk says nothing and is reported as an error whatever the
provider). A named provider is checked against the first chunks that say which they are:
a chunk of another format raises :class:`UnsupportedChunkError` instead of being read as
nothing. Unknown fields and event types are ignored; nothing passed in is modified.

What is the client's and what is not: only the client's own calls become
:class:`WireToolCall` (Chat ``tool_calls``, Anthropic ``tool_use``, Responses
``function_call``/``custom_tool_call`` and the items the client runs, Gemini
``functionCall``, Bedrock ``toolUse``). What the provider runs itself (Anthropic
``server_tool_use``, ``mcp_tool_use`` and their results, Responses hosted items, Bedrock
server tools) is a :class:`WireBlock` or :class:`WireItem`, kept as received and never a
call.

Formats and quirks handled here (sources in
``../shared/reference/wire-formats-and-malformations.md`` and
``../scratch/providers/NOTES.md``):

* OpenAI Chat Completions and compatibles (DeepSeek, xAI, Groq, Mistral, Qwen, GLM, vLLM,
  Ollama ``/v1``, Gemini's OpenAI endpoint...): ``reasoning_content`` (and OpenRouter's
  ``reasoning``), ``refusal``, usage on a ``choices: []`` chunk or on the finish chunk,
  ``obfuscation`` padding, Azure's empty first chunk, ``n > 1`` (only the chosen choice
  is followed: the choice index is not the tool index), ``"id": ""``/``"name": ""`` read
  as absent, ``index`` inside ``function`` (Ollama), ``arguments`` sent as an object
  (Ollama native, MiniMax, TGI) serialized to JSON text, the legacy ``function_call``;
  the openai SDK's ``ChatCompletionStream`` events (``{"type": "chunk", "chunk": ...}``
  is the chunk; its other events are derived from chunks and ignored).
* Anthropic Messages: ``message_start`` (with content and a stop reason already filled
  in, as programmatic tool calling sends), ``content_block_start`` (text, thinking,
  redacted_thinking, tool_use with its ``caller``; every other block type kept as
  received), ``text_delta``, ``citations_delta``, ``thinking_delta``,
  ``signature_delta``, ``input_json_delta`` (a call's, or a server block's),
  ``compaction_delta``, ``content_block_stop``, ``message_delta`` (stop reason,
  ``container``, usage), ``message_stop``, ``ping``, ``error``.
* OpenAI Responses: ``output_item.added``/``.done``, ``function_call_arguments.delta``/
  ``.done`` (which closes the call), custom tool input, the items the client runs
  (``apply_patch_call`` with its diff deltas, ``shell_call`` with a local environment,
  ``local_shell_call``, ``tool_search_call`` with client execution, ``computer_call``;
  ``mcp_approval_request`` as a call that is not handed out), output text, refusal and
  reasoning text, ``response.created``/``.completed``/``.incomplete``/``.failed``,
  ``error`` (both shapes).
* Ollama native ``/api/chat`` (one JSON object per line, ``done``/``done_reason``).
* Cohere v2 chat (``tool-plan-delta`` read as reasoning, ``tool-call-*``, ``message-end``).
* Gemini native ``streamGenerateContent`` (SSE or JSON lines): text and ``thought``
  parts, ``thoughtSignature``, whole ``functionCall`` parts (each its own call, complete
  when it arrives), Vertex ``partialArgs`` (values addressed by JSON path, joined into the
  arguments object and handed over when ``{"functionCall": {}}`` closes the call),
  ``finishReason``, ``promptFeedback.blockReason``, ``usageMetadata``, other parts
  (``executableCode``...) kept as received.
* AWS Bedrock ``ConverseStream`` events (``{"contentBlockDelta": {...}}``, as botocore
  yields them and as ``stream/eventstream.py`` decodes the binary framing): text,
  reasoning text, signature and redacted content, ``toolUse`` input pieces, server tool
  blocks kept, ``messageStop``, ``metadata`` (usage; the last event, read as the end),
  exception events; ``InvokeModelWithResponseStream`` ``chunk`` events are unwrapped to
  the provider's own chunk inside.
"""

from __future__ import annotations

import base64
import binascii
import enum
import json
import re
from collections.abc import Mapping
from typing import Any, TypeGuard

from ..errors import UnsupportedChunkError
from ..syntax.assembler import DEFAULT_MAX_SIZE
from .wire import (
    WireBlock,
    WireBlockInput,
    WireBlockUpdate,
    WireCitation,
    WireDelta,
    WireEnd,
    WireError,
    WireItem,
    WireMessageStart,
    WireReasoning,
    WireRedactedThinking,
    WireRefusal,
    WireResponse,
    WireSignature,
    WireStop,
    WireText,
    WireToolArguments,
    WireToolCall,
    WireToolEnd,
    WireToolValue,
    WireUsage,
)

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


# -- helpers ---------------------------------------------------------------------------

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
    if _is_map(obj):
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


def _is_map(value: object) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, with the common case (a dict) first: the ABC check
    costs five times more and runs several times per chunk."""
    return type(value) is dict or (value is not None and isinstance(value, Mapping))


def _str(value: object) -> str | None:
    """A non-empty string, else None (``"id": ""`` and ``"name": ""`` mean absent)."""
    return value if type(value) is str and value else None


def _int(value: object) -> int | None:
    return value if type(value) is int else None  # not bool: type(True) is bool


def _map(value: object) -> Mapping[str, Any]:
    if type(value) is dict:
        return value
    return value if isinstance(value, Mapping) else {}


def _arguments(value: object) -> tuple[str | None, bool]:
    if value is None:
        return None, False
    if type(value) is str:
        return value, False
    if isinstance(value, Mapping | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")), True
    return json.dumps(value), True


def _error(payload: Mapping[str, Any]) -> WireError:
    """Read both error shapes: ``{"error": {...}}`` and ``{"type": "error", "code":..}``
    (Gemini's ``status`` is read as the error type)."""
    err = payload.get("error")
    body: Mapping[str, Any] = err if isinstance(err, Mapping) else payload
    message = body.get("message")
    if not isinstance(message, str) or not message:
        message = err if isinstance(err, str) and err else "an error occurred during streaming"
    code = body.get("code")
    error_type = body.get("type")
    if not isinstance(error_type, str) or error_type == "error":
        status = body.get("status")
        error_type = status if isinstance(status, str) and status else None
    return WireError(
        message=message,
        code=str(code) if code is not None else None,
        error_type=error_type,
        raw=payload,
    )


def _fields(source: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """``{ours: source[theirs]}`` for each field the source has (and is not null)."""
    return {
        ours: source[theirs] for theirs, ours in names.items() if source.get(theirs) is not None
    }


_ANTHROPIC_TYPES = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
    }
)


_COHERE_TYPES = frozenset(
    {
        "message-start",
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
        "message-end",
    }
)

_BEDROCK_EVENTS = frozenset(
    {
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    }
)

#: Anthropic blocks whose ``input`` arrives as ``input_json_delta`` but that Anthropic
#: runs itself (the SDK's own ``TRACKS_TOOL_INPUT``, less the client's ``tool_use``).
_ANTHROPIC_SERVER_INPUT = frozenset({"server_tool_use", "mcp_tool_use"})

#: Responses items the client runs whose input is an object: item type -> (kind, field).
_RESPONSES_CLIENT_ITEMS: dict[str, tuple[str, str | None]] = {
    "apply_patch_call": ("apply_patch", "operation"),
    "shell_call": ("shell", "action"),
    "local_shell_call": ("local_shell", "action"),
    "tool_search_call": ("tool_search", "arguments"),
    "computer_call": ("computer", None),
}


def responses_client_item(itype: object, item: Mapping[str, Any]) -> tuple[str, str | None] | None:
    """(kind, input field) when the Responses item ``item`` (of type ``itype``) is one
    the client runs (an ``apply_patch_call``, a ``shell_call`` outside a container, ...),
    None for anything else (function and custom tool calls included)."""
    if not isinstance(itype, str):
        return None
    spec = _RESPONSES_CLIENT_ITEMS.get(itype)
    if spec is None:
        return None
    if itype == "shell_call":  # hosted in a container unless its environment is local
        environment = _map(item.get("environment")).get("type")
        if isinstance(environment, str) and environment.startswith("container"):
            return None
    if itype == "tool_search_call" and item.get("execution") != "client":
        return None
    return spec


def _client_input(item: Mapping[str, Any], field: str | None) -> Any:
    if field is not None:
        return item.get(field)
    return {k: item[k] for k in ("action", "actions", "pending_safety_checks") if k in item}


def detect_provider(chunk: Mapping[str, Any]) -> Provider | None:
    """The provider a chunk belongs to, or None when the chunk does not say."""
    kind = chunk.get("type")
    if isinstance(kind, str):
        if kind.startswith("response."):
            return Provider.RESPONSES
        if kind in _ANTHROPIC_TYPES:
            return Provider.ANTHROPIC
        if kind in _COHERE_TYPES:
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
            if key in _BEDROCK_EVENTS or (type(key) is str and key.endswith("Exception")):
                return Provider.BEDROCK
    return None


def _unwrap(chunk: Mapping[str, Any]) -> Mapping[str, Any]:
    """The chunk inside a wrapper: the openai ``ChatCompletionStream`` event
    ``{"type": "chunk", "chunk": {...}}``, Bedrock ``InvokeModelWithResponseStream``'s
    ``{"chunk": {"bytes": ...}}`` (base64 text from the raw frames, bytes from botocore)."""
    inner = chunk["chunk"]
    if not _is_map(inner):
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
    if not _is_map(decoded):
        raise UnsupportedChunkError("a Bedrock chunk's bytes are not a JSON object")
    return decoded


_PATH_STEP = re.compile(
    r"\.([^.\[\]]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\[\"((?:[^\"\\]|\\.)*)\"\]"
)


def _json_path(path: object) -> list[str | int] | None:
    """The steps of a normalized JSON path (RFC 9535: ``$.a.b[0]``, ``$['a']``), or None
    when it is not one."""
    if not isinstance(path, str) or not path.startswith("$"):
        return None
    steps: list[str | int] = []
    pos = 1
    while pos < len(path):
        match = _PATH_STEP.match(path, pos)
        if match is None:
            return None
        name, number, single, double = match.groups()
        if number is not None:
            steps.append(int(number))
        else:
            quoted = single if single is not None else double
            steps.append(name if quoted is None else re.sub(r"\\(.)", r"\1", quoted))
        pos = match.end()
    return steps


class _PartialArgs:
    """The arguments object of one Gemini call whose values arrive by JSON path."""

    __slots__ = ("call_id", "index", "open_string", "size", "value")

    def __init__(self, index: int, call_id: str | None) -> None:
        self.index = index
        self.call_id = call_id
        self.value: dict[str, Any] = {}
        self.open_string: tuple[str | int, ...] | None = None  # path of a string still growing
        self.size = 0

    def apply(self, arg: Mapping[str, Any]) -> str | None:
        """Set one ``PartialArg``; a reason when it cannot be read."""
        steps = _json_path(arg.get("jsonPath"))
        if not steps:
            return f"cannot read jsonPath {arg.get('jsonPath')!r}"
        if "stringValue" in arg:
            value: Any = arg["stringValue"]
            if not isinstance(value, str):
                return "stringValue is not a string"
        elif "numberValue" in arg:
            value = arg["numberValue"]
        elif "boolValue" in arg:
            value = arg["boolValue"]
        elif "nullValue" in arg:
            value = None
        else:
            return f"no value for jsonPath {arg.get('jsonPath')!r}"
        self.size += len(value) if isinstance(value, str) else 8
        if self.size > DEFAULT_MAX_SIZE:
            return f"the arguments exceed {DEFAULT_MAX_SIZE} characters"
        key = tuple(steps)
        container: Any = self.value
        for step, following in zip(steps, [*steps[1:], None], strict=True):
            fresh: Any = [] if isinstance(following, int) else {}
            if isinstance(step, int):
                if not isinstance(container, list) or step > len(container):
                    return f"jsonPath {arg.get('jsonPath')!r} skips array elements"
                if following is None:
                    if step == len(container):
                        container.append(None)
                    container[step] = self._value(container[step], key, value)
                    break
                if step == len(container):
                    container.append(fresh)
            else:
                if not isinstance(container, dict):
                    return f"jsonPath {arg.get('jsonPath')!r} names a key inside an array"
                if following is None:
                    container[step] = self._value(container.get(step), key, value)
                    break
                container.setdefault(step, fresh)
            container = container[step]
            if not isinstance(container, dict | list):
                return f"jsonPath {arg.get('jsonPath')!r} goes inside a scalar"
        self.open_string = key if isinstance(value, str) and arg.get("willContinue") else None
        return None

    def _value(self, current: Any, key: tuple[str | int, ...], value: Any) -> Any:
        if isinstance(value, str) and isinstance(current, str) and self.open_string == key:
            return current + value  # the next piece of a string that said willContinue
        return value


class ChunkNormalizer:
    """Turn each chunk of one stream into :class:`WireDelta` objects (module docstring).

    ``provider`` names the format (else it is detected from the first chunk that says);
    ``choice`` is the Chat Completions choice (Gemini candidate) to follow when ``n > 1``.
    """

    __slots__ = (
        "_call_ids",
        "_checked",
        "_chosen_seen",
        "_described",
        "_gemini_calls",
        "_gemini_open",
        "_other_choices",
        "_server_blocks",
        "choice",
        "ignored_choices",
        "provider",
    )

    def __init__(self, provider: Provider | str | None = None, *, choice: int = 0) -> None:
        self.provider: Provider | None = Provider(provider) if provider is not None else None
        if type(choice) is not int or choice < 0:
            raise ValueError(f"choice must be an int >= 0, not {choice!r}")
        self.choice = choice
        self.ignored_choices = 0  # chunks of other choices (n > 1) that were skipped
        self._checked = self.provider is None  # a named provider is checked once
        self._chosen_seen = False
        self._other_choices: set[int] = set()
        self._described = False  # WireResponse sent (Chat, Gemini: from the first chunk)
        self._call_ids: dict[str, str] = {}
        self._server_blocks: dict[int, bool] = {}  # index -> True: provider's input block
        self._gemini_calls = 0
        self._gemini_open: _PartialArgs | None = None

    def missing_choice(self) -> str | None:
        """Why the stream said nothing, when chunks of other choices arrived and none of
        the chosen one (``choice`` out of range); else None."""
        if self._chosen_seen or not self._other_choices:
            return None
        seen = ", ".join(str(c) for c in sorted(self._other_choices)[:8])
        return (
            f"no chunk of choice {self.choice} arrived; the stream has choice(s) {seen} "
            f"({self.ignored_choices} chunk(s) skipped)"
        )

    def normalize(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        """The wire deltas of one chunk. Raises :class:`UnsupportedChunkError` when the
        first chunks fit no known format, or fit another format than the one named."""
        if not _is_map(chunk):
            raise UnsupportedChunkError(f"a chunk must be a mapping, not {type(chunk).__name__}")
        if "chunk" in chunk:
            chunk = _unwrap(chunk)
        if self.provider is None:
            self.provider = detect_provider(chunk)
            if self.provider is None:
                if "error" in chunk or chunk.get("type") == "error":
                    return [_error(chunk)]
                keys = ", ".join(sorted(str(k) for k in chunk)[:8])
                raise UnsupportedChunkError(f"unrecognized chunk format (keys: {keys})")
        elif not self._checked:
            found = detect_provider(chunk)
            if found is self.provider:
                self._checked = True
            elif found is not None:
                raise UnsupportedChunkError(
                    f"the stream was named {self.provider.value}, but this chunk is in "
                    f"{found.value}'s format: the provider named does not match the stream"
                )
        provider = self.provider
        if provider is Provider.OPENAI:
            return self._openai(chunk)
        if provider is Provider.ANTHROPIC:
            return self._anthropic(chunk)
        if provider is Provider.RESPONSES:
            return self._responses(chunk)
        if provider is Provider.COHERE:
            return self._cohere(chunk)
        if provider is Provider.GEMINI:
            return self._gemini(chunk)
        if provider is Provider.BEDROCK:
            return self._bedrock(chunk)
        return self._ollama(chunk)

    def _chosen(self, index: int) -> bool:
        if index == self.choice:
            self._chosen_seen = True
            return True
        self.ignored_choices += 1
        if len(self._other_choices) < 64:
            self._other_choices.add(index)
        return False

    # -- OpenAI Chat Completions ----------------------------------------------------------

    def _openai(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        out: list[WireDelta] = []
        choices = chunk.get("choices")
        if chunk.get("error") and not choices:
            return [_error(chunk)]
        if not self._described and _str(chunk.get("id")) is not None:
            self._described = True
            out.append(WireResponse(fields=_fields(chunk, {"id": "id", "model": "model"})))
        if type(choices) is list:
            for choice in choices:
                if not _is_map(choice) or not self._chosen(_int(choice.get("index")) or 0):
                    continue
                self._openai_delta(_map(choice.get("delta")), out)
                reason = choice.get("finish_reason")
                if type(reason) is str and reason:
                    out.append(WireStop(reason=reason))
        usage = chunk.get("usage")
        if _is_map(usage) and usage:
            out.append(WireUsage(usage=usage))
        return out

    def _openai_delta(self, delta: Mapping[str, Any], out: list[WireDelta]) -> None:
        reasoning = delta.get("reasoning_content")
        if type(reasoning) is not str:
            reasoning = delta.get("reasoning")  # OpenRouter's spelling
        if type(reasoning) is str:
            out.append(WireReasoning(text=reasoning))
        content = delta.get("content")
        if type(content) is str and content:
            out.append(WireText(text=content))
        refusal = delta.get("refusal")
        if type(refusal) is str and refusal:
            out.append(WireRefusal(text=refusal))
        calls = delta.get("tool_calls")
        if type(calls) is list:
            for entry in calls:
                if _is_map(entry):
                    out.append(self._openai_call(entry))
        legacy = delta.get("function_call")
        if _is_map(legacy):
            arguments, from_object = _arguments(legacy.get("arguments"))
            out.append(
                WireToolCall(
                    index=0,
                    name=_str(legacy.get("name")),
                    arguments=arguments,
                    from_object=from_object,
                )
            )

    @staticmethod
    def _openai_call(entry: Mapping[str, Any]) -> WireToolCall:
        function = _map(entry.get("function"))
        index = _int(entry.get("index"))
        if index is None:
            index = _int(function.get("index"))  # Ollama puts it inside "function"
        arguments, from_object = _arguments(function.get("arguments"))
        return WireToolCall(
            id=_str(entry.get("id")),
            index=index,
            name=_str(function.get("name")),
            arguments=arguments,
            from_object=from_object,
        )

    # -- Anthropic Messages ---------------------------------------------------------------

    def _anthropic(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        kind = chunk.get("type")
        index = _int(chunk.get("index"))
        if kind == "content_block_delta":
            return self._anthropic_delta(_map(chunk.get("delta")), index)
        if kind == "content_block_start":
            return self._anthropic_block(_map(chunk.get("content_block")), index)
        if kind == "content_block_stop":
            return [WireToolEnd(id=None, index=index)]
        if kind == "message_start":
            return self._anthropic_start(_map(chunk.get("message")))
        if kind == "message_delta":
            out: list[WireDelta] = []
            delta = _map(chunk.get("delta"))
            reason = delta.get("stop_reason")
            if isinstance(reason, str) and reason:
                out.append(WireStop(reason=reason))
            container = delta.get("container")
            if _is_map(container):
                out.append(WireResponse(fields={"container": container}))
            usage = chunk.get("usage")
            if _is_map(usage):
                out.append(WireUsage(usage=usage, merge=True))
            return out
        if kind == "message_stop":
            return [WireEnd()]
        if kind == "error" or (chunk.get("error") and kind is None):
            return [_error(chunk)]
        return []  # ping, the SDK's helper events and anything unknown

    def _anthropic_delta(self, delta: Mapping[str, Any], index: int | None) -> list[WireDelta]:
        dtype = delta.get("type")
        if dtype == "input_json_delta":
            partial = delta.get("partial_json")
            if not isinstance(partial, str):
                return []
            server = self._server_blocks.get(index) if index is not None else None
            if server is None:  # a tool_use block, or a block whose start never came
                return [WireToolCall(index=index, arguments=partial, expects_end=True)]
            return [WireBlockInput(text=partial, block=index)] if server else []
        if dtype == "text_delta":
            text = delta.get("text")
            if isinstance(text, str) and text:
                return [WireText(text=text, block=index)]
        elif dtype == "thinking_delta":
            thinking = delta.get("thinking")
            if isinstance(thinking, str):
                return [WireReasoning(text=thinking, block=index)]
        elif dtype == "signature_delta":
            signature = delta.get("signature")
            if isinstance(signature, str):
                return [WireSignature(signature=signature, block=index)]
        elif dtype == "citations_delta":
            citation = delta.get("citation")
            if _is_map(citation):
                return [WireCitation(citation=citation, block=index)]
        elif dtype == "compaction_delta":  # replaces the block's fields (the SDK does)
            fields = {k: delta[k] for k in ("content", "encrypted_content") if k in delta}
            return [WireBlockUpdate(fields=fields, block=index)] if fields else []
        return []

    def _anthropic_start(self, message: Mapping[str, Any]) -> list[WireDelta]:
        self._server_blocks.clear()
        out: list[WireDelta] = [WireMessageStart(message_id=_str(message.get("id")))]
        fields = _fields(message, {"id": "id", "model": "model", "container": "container"})
        if fields:
            out.append(WireResponse(fields=fields))
        usage = message.get("usage")
        if _is_map(usage):
            out.append(WireUsage(usage=usage))
        # Programmatic tool calling can send the whole message here, with no block events.
        content = message.get("content")
        if type(content) is list:
            for position, block in enumerate(content):
                if _is_map(block):
                    out.extend(self._anthropic_block(block, position))
                    out.append(WireToolEnd(id=None, index=position))
        reason = message.get("stop_reason")
        if isinstance(reason, str) and reason:
            out.append(WireStop(reason=reason))
        return out

    def _anthropic_block(self, block: Mapping[str, Any], index: int | None) -> list[WireDelta]:
        btype = block.get("type")
        if btype == "tool_use":
            # "input" is a {} placeholder that the input_json_delta pieces replace; with
            # programmatic tool calling (or a proxy) the whole input comes here instead.
            # An object is the normal shape of this field: no note about it.
            initial = block.get("input")
            arguments = _arguments(initial)[0] if _is_map(initial) and initial else None
            return [
                WireToolCall(
                    id=_str(block.get("id")),
                    index=index,
                    name=_str(block.get("name")),
                    arguments=arguments,
                    expects_end=True,
                    echo=block,
                )
            ]
        if index is not None:
            self._server_blocks[index] = btype in _ANTHROPIC_SERVER_INPUT
        if btype == "text":
            text = block.get("text")
            out: list[WireDelta] = []
            if isinstance(text, str) and text:
                out.append(WireText(text=text, block=index))
            citations = block.get("citations")
            if type(citations) is list:
                out.extend(WireCitation(citation=c, block=index) for c in citations if _is_map(c))
            return out
        if btype == "thinking":
            thinking = block.get("thinking")
            out = [WireReasoning(text=thinking if isinstance(thinking, str) else "", block=index)]
            signature = block.get("signature")
            if isinstance(signature, str) and signature:
                out.append(WireSignature(signature=signature, block=index))
            return out
        if btype == "redacted_thinking":
            data = block.get("data")
            return [WireRedactedThinking(data=data if isinstance(data, str) else "", block=index)]
        # Server tools and their results, MCP blocks, compaction, fallback, container
        # uploads, block types not known yet: Anthropic's, never the client's calls.
        return [WireBlock(content=block, block=index)]

    # -- OpenAI Responses -----------------------------------------------------------------

    def _responses(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        kind = chunk.get("type")
        index = _int(chunk.get("output_index"))
        if kind in (
            "response.function_call_arguments.delta",
            "response.custom_tool_call_input.delta",
            "response.apply_patch_call_operation_diff.delta",
        ):
            delta = chunk.get("delta")
            call_id = self._call_ids.get(str(chunk.get("item_id")))
            if not isinstance(delta, str):
                return []
            if kind == "response.apply_patch_call_operation_diff.delta":
                if call_id is None:
                    return []
                call_kind = "apply_patch"
            elif kind == "response.custom_tool_call_input.delta":
                call_kind = "custom"
            else:
                call_kind = "function"
            return [
                WireToolCall(
                    id=call_id, index=index, arguments=delta, kind=call_kind, expects_end=True
                )
            ]
        if kind == "response.output_text.delta":
            delta = chunk.get("delta")
            return [WireText(text=delta, block=index)] if isinstance(delta, str) and delta else []
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            delta = chunk.get("delta")
            return [WireReasoning(text=delta, block=index)] if isinstance(delta, str) else []
        if kind == "response.refusal.delta":
            delta = chunk.get("delta")
            return [WireRefusal(text=delta)] if isinstance(delta, str) and delta else []
        if kind == "response.output_item.added":
            return self._responses_item(_map(chunk.get("item")), index, added=True)
        if kind in (
            "response.function_call_arguments.done",
            "response.custom_tool_call_input.done",
        ):
            # The final text, and the end of the call: a server that never sends
            # output_item.done has still finished it.
            final = chunk.get("arguments" if kind.endswith("arguments.done") else "input")
            call_id = self._call_ids.get(str(chunk.get("item_id")))
            out: list[WireDelta] = []
            if isinstance(final, str):
                out.append(WireToolArguments(id=call_id, index=index, arguments=final))
            out.append(WireToolEnd(id=call_id, index=index))
            return out
        if kind == "response.output_item.done":
            return self._responses_item(_map(chunk.get("item")), index, added=False)
        if kind in ("response.created", "response.in_progress"):
            response = _map(chunk.get("response"))
            fields = _fields(response, {"id": "id", "model": "model"})
            return [WireResponse(fields=fields)] if fields else []
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            return self._responses_end(kind, _map(chunk.get("response")))
        if kind == "error":
            return [_error(chunk)]
        return []

    def _responses_item(
        self, item: Mapping[str, Any], index: int | None, *, added: bool
    ) -> list[WireDelta]:
        itype = item.get("type")
        call_id = _str(item.get("call_id")) or _str(item.get("id"))
        item_id = _str(item.get("id"))
        if itype in ("function_call", "custom_tool_call"):
            if item_id is not None and call_id is not None:
                self._call_ids[item_id] = call_id
            custom = itype == "custom_tool_call"
            text = item.get("input" if custom else "arguments")
            kind = "custom" if custom else "function"
            start = WireToolCall(
                id=call_id,
                index=index,
                name=_str(item.get("name")),
                arguments=text if added and isinstance(text, str) and text else None,
                kind=kind,
                expects_end=True,
                echo=item,
            )
            if added:
                return [start]
            out: list[WireDelta] = [start]
            # Gateways may send an empty item here while ".done" had the arguments
            # (jjang-ai/vmlx#192): only a non-empty text is authoritative.
            if isinstance(text, str) and text:
                out.append(WireToolArguments(id=call_id, index=index, arguments=text))
            out.append(WireToolEnd(id=call_id, index=index))
            return out
        client = responses_client_item(itype, item)
        if client is not None or itype == "mcp_approval_request":
            if item_id is not None and call_id is not None:
                self._call_ids[item_id] = call_id
            if client is None:
                name = _str(item.get("name")) or "mcp_approval_request"
                kind = "mcp_approval_request"
                value: Any = item.get("arguments")
                unsupported = (
                    f"Not run: an MCP approval request (server "
                    f"{item.get('server_label')!r}, tool {name!r}) asks for an approval, "
                    "not a result: answer it with an mcp_approval_response item."
                )
            else:
                kind, field = client
                name = kind
                value = _client_input(item, field)
                unsupported = None
            out = [
                WireToolCall(
                    id=call_id,
                    index=index,
                    name=name,
                    kind=kind,
                    expects_end=True,
                    echo=item,
                    unsupported=unsupported,
                )
            ]
            if not added:
                out.append(WireToolValue(id=call_id, index=index, value=value))
                out.append(WireToolEnd(id=call_id, index=index))
            return out
        if not added:  # messages, reasoning, and what the provider ran itself
            return [WireItem(item=item, block=index)]
        return []

    @staticmethod
    def _responses_end(kind: str, response: Mapping[str, Any]) -> list[WireDelta]:
        out: list[WireDelta] = []
        if kind == "response.failed":
            error = response.get("error")
            out.append(_error({"error": error} if isinstance(error, Mapping) else response))
            return out
        fields = _fields(response, {"id": "id", "model": "model"})
        if fields:
            out.append(WireResponse(fields=fields))
        usage = response.get("usage")
        if _is_map(usage):
            out.append(WireUsage(usage=usage))
        if kind == "response.completed":
            out.append(WireStop(reason="completed"))
        else:
            reason = _map(response.get("incomplete_details")).get("reason")
            out.append(WireStop(reason=f"incomplete:{reason if isinstance(reason, str) else ''}"))
        out.append(WireEnd())
        return out

    # -- Cohere v2 -------------------------------------------------------------------------

    @staticmethod
    def _cohere(chunk: Mapping[str, Any]) -> list[WireDelta]:
        kind = chunk.get("type")
        index = _int(chunk.get("index"))
        delta = _map(chunk.get("delta"))
        message = _map(delta.get("message"))
        if kind in ("tool-call-start", "tool-call-delta"):
            call = _map(message.get("tool_calls"))
            function = _map(call.get("function"))
            arguments, from_object = _arguments(function.get("arguments"))
            return [
                WireToolCall(
                    id=_str(call.get("id")),
                    index=index,
                    name=_str(function.get("name")),
                    arguments=arguments,
                    expects_end=True,
                    from_object=from_object,
                )
            ]
        if kind == "tool-call-end":
            return [WireToolEnd(id=None, index=index)]
        if kind == "content-delta":
            text = _map(message.get("content")).get("text")
            return [WireText(text=text, block=index)] if isinstance(text, str) and text else []
        if kind == "tool-plan-delta":
            plan = message.get("tool_plan")
            return [WireReasoning(text=plan)] if isinstance(plan, str) else []
        if kind == "message-start":
            return [WireMessageStart(message_id=_str(chunk.get("id")))]
        if kind == "message-end":
            out: list[WireDelta] = []
            reason = delta.get("finish_reason")
            if isinstance(reason, str) and reason:
                out.append(WireStop(reason=reason))
            usage = delta.get("usage")
            if _is_map(usage):
                out.append(WireUsage(usage=usage))
            out.append(WireEnd())
            return out
        if kind == "error" or chunk.get("error"):
            return [_error(chunk)]
        return []

    # -- Ollama native -------------------------------------------------------------------

    def _ollama(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        if chunk.get("error") and "message" not in chunk:
            return [_error(chunk)]
        out: list[WireDelta] = []
        message = _map(chunk.get("message"))
        thinking = message.get("thinking")
        if isinstance(thinking, str) and thinking:
            out.append(WireReasoning(text=thinking))
        content = message.get("content")
        if isinstance(content, str) and content:
            out.append(WireText(text=content))
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            for entry in calls:
                if _is_map(entry):
                    out.append(self._openai_call(entry))
        if chunk.get("done") is True:
            reason = chunk.get("done_reason")
            out.append(WireStop(reason=reason if isinstance(reason, str) and reason else "stop"))
            usage = {
                key: chunk[key]
                for key in ("prompt_eval_count", "eval_count", "total_duration")
                if key in chunk
            }
            if usage:
                out.append(WireUsage(usage=usage))
            out.append(WireEnd())
        return out

    # -- Gemini native ---------------------------------------------------------------------

    def _gemini(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        if chunk.get("error") and "candidates" not in chunk:
            return [_error(chunk)]
        out: list[WireDelta] = []
        if not self._described:
            fields = _fields(chunk, {"responseId": "id", "modelVersion": "model"})
            if fields:
                self._described = True
                out.append(WireResponse(fields=fields))
        candidates = chunk.get("candidates")
        if type(candidates) is list:
            for candidate in candidates:
                if not _is_map(candidate) or not self._chosen(_int(candidate.get("index")) or 0):
                    continue
                parts = _map(candidate.get("content")).get("parts")
                if type(parts) is list:
                    for part in parts:
                        if _is_map(part):
                            self._gemini_part(part, chunk, out)
                reason = candidate.get("finishReason")
                if isinstance(reason, str) and reason:
                    out.append(WireStop(reason=reason))
        blocked = _map(chunk.get("promptFeedback")).get("blockReason")
        if isinstance(blocked, str) and blocked:
            out.append(WireStop(reason=blocked))
        usage = chunk.get("usageMetadata")
        if _is_map(usage) and usage:
            out.append(WireUsage(usage=usage))  # cumulative: each replaces the last
        return out

    def _gemini_part(
        self, part: Mapping[str, Any], chunk: Mapping[str, Any], out: list[WireDelta]
    ) -> None:
        call = part.get("functionCall")
        if _is_map(call):
            self._gemini_call(part, call, chunk, out)
            return
        text = part.get("text")
        signature = part.get("thoughtSignature")
        thought = part.get("thought") is True
        if isinstance(text, str) and (text or thought or not signature):
            if thought:
                out.append(WireReasoning(text=text))
            elif text:
                out.append(WireText(text=text))
            if isinstance(signature, str) and signature:  # on the part that carried it
                kind = "thinking" if thought else "text"
                out.append(WireSignature(signature=signature, kind=kind))
            return
        # An empty text part that only carries a signature, executableCode, inlineData,
        # toolCall...: kept as its own part, as received.
        out.append(WireBlock(content=part))

    def _gemini_call(
        self,
        part: Mapping[str, Any],
        call: Mapping[str, Any],
        chunk: Mapping[str, Any],
        out: list[WireDelta],
    ) -> None:
        name = _str(call.get("name"))
        partial = call.get("partialArgs")
        more = call.get("willContinue") is True
        if name is not None:
            self._gemini_close(out)
            index = self._gemini_calls
            self._gemini_calls += 1
            call_id = _str(call.get("id"))
            if not more and type(partial) is not list:  # a whole call: complete as it is
                arguments = _arguments(call.get("args"))[0]
                out.append(
                    WireToolCall(
                        id=call_id,
                        index=index,
                        name=name,
                        arguments=arguments,
                        expects_end=True,
                        echo=part,
                    )
                )
                out.append(WireToolEnd(id=call_id, index=index))
                return
            # Vertex streamFunctionCallArguments: the values follow by JSON path.
            out.append(
                WireToolCall(id=call_id, index=index, name=name, expects_end=True, echo=part)
            )
            self._gemini_open = _PartialArgs(index, call_id)
        open_call = self._gemini_open
        if open_call is None:
            return  # a continuation with no call open: nothing to add to
        if type(partial) is list:
            for arg in partial:
                problem = open_call.apply(_map(arg))
                if problem is not None:
                    self._gemini_open = None
                    out.append(
                        WireError(
                            message=f"functionCall.partialArgs: {problem}",
                            code="too_large" if "exceed" in problem else "bad_chunk",
                            raw=chunk,
                        )
                    )
                    return
        if not more:  # {"functionCall": {}} (or a last piece) ends the call
            self._gemini_close(out)

    def _gemini_close(self, out: list[WireDelta]) -> None:
        open_call, self._gemini_open = self._gemini_open, None
        if open_call is None:
            return
        arguments = json.dumps(open_call.value, ensure_ascii=False, separators=(",", ":"))
        out.append(WireToolCall(id=open_call.call_id, index=open_call.index, arguments=arguments))
        out.append(WireToolEnd(id=open_call.call_id, index=open_call.index))

    # -- AWS Bedrock ConverseStream ------------------------------------------------------

    def _bedrock(self, chunk: Mapping[str, Any]) -> list[WireDelta]:
        out: list[WireDelta] = []
        for key, value in chunk.items():
            body = _map(value)
            index = _int(body.get("contentBlockIndex"))
            if key == "contentBlockDelta":
                self._bedrock_delta(_map(body.get("delta")), index, out)
            elif key == "contentBlockStart":
                self._bedrock_start(_map(body.get("start")), index, out)
            elif key == "contentBlockStop":
                out.append(WireToolEnd(id=None, index=index))
            elif key == "messageStart":
                self._server_blocks.clear()
            elif key == "messageStop":
                reason = body.get("stopReason")
                if isinstance(reason, str) and reason:
                    out.append(WireStop(reason=reason))
            elif key == "metadata":  # after messageStop: the last event of the stream
                usage = body.get("usage")
                if _is_map(usage):
                    out.append(WireUsage(usage=usage))
                out.append(WireEnd())
            elif isinstance(key, str) and key.endswith("Exception"):
                message = body.get("message") or body.get("Message")
                out.append(
                    WireError(
                        message=message if isinstance(message, str) and message else key,
                        code=key,
                        raw=chunk,
                    )
                )
            elif key == "error":
                out.append(_error(chunk))
        return out

    def _bedrock_start(
        self, start: Mapping[str, Any], index: int | None, out: list[WireDelta]
    ) -> None:
        use = start.get("toolUse")
        if _is_map(use) and use.get("type") != "server_tool_use":
            out.append(
                WireToolCall(
                    id=_str(use.get("toolUseId")),
                    index=index,
                    name=_str(use.get("name")),
                    expects_end=True,
                    echo={"toolUse": use},
                )
            )
            return
        for name, content in start.items():  # a server tool, its result, an image...
            if index is not None:
                self._server_blocks[index] = name == "toolUse"
            out.append(WireBlock(content={name: content}, block=index))

    def _bedrock_delta(
        self, delta: Mapping[str, Any], index: int | None, out: list[WireDelta]
    ) -> None:
        text = delta.get("text")
        if isinstance(text, str) and text:
            out.append(WireText(text=text, block=index))
        use = delta.get("toolUse")
        if _is_map(use) and isinstance(use.get("input"), str):
            piece = use["input"]
            server = self._server_blocks.get(index) if index is not None else None
            if server is None:
                out.append(WireToolCall(index=index, arguments=piece, expects_end=True))
            elif server:
                out.append(WireBlockInput(text=piece, block=index, path=("toolUse", "input")))
        reasoning = delta.get("reasoningContent")
        if _is_map(reasoning):
            thought = reasoning.get("text")
            if isinstance(thought, str):
                out.append(WireReasoning(text=thought, block=index))
            signature = reasoning.get("signature")
            if isinstance(signature, str) and signature:
                out.append(WireSignature(signature=signature, block=index))
            redacted = reasoning.get("redactedContent")
            if isinstance(redacted, bytes | bytearray):  # botocore decodes the blob
                redacted = base64.b64encode(redacted).decode("ascii")
            if isinstance(redacted, str):
                out.append(WireRedactedThinking(data=redacted, block=index))
        result = delta.get("toolResult")
        if type(result) is list:
            update = {"content": result}
            out.append(
                WireBlockUpdate(fields=update, block=index, extend=True, path=("toolResult",))
            )
