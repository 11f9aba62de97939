"""How a call's argument text goes out: held until judged, or streamed as it becomes final.

Theory of operation
-------------------
Each tool call of a relayed stream has an :class:`ArgumentEmitter`: the relay gives it
every piece the model streamed (:meth:`ArgumentEmitter.feed`) and, once the call is
judged ready, the verdict (:meth:`ArgumentEmitter.finish`); everything the two return,
joined, is the JSON sent for the call, and nothing returned is ever taken back.
:class:`HeldArguments` returns nothing before the verdict and then the whole text
(:func:`argument_text`); it is right for every protocol.

:class:`ProgressiveArguments` is the emitter of a call whose arguments the relay streams
before the call is judged (``--stream-arguments``, on the protocols where a half-sent
call can be left unrunnable: ``docs/proxy.md``). It reads the assembler's per-delta
changes (:class:`~streamrepair.ToolCallDelta` ``changes``) and returns, from each
:meth:`~ProgressiveArguments.feed`, the canonical JSON text (compact, non-ASCII kept:
what :func:`~.wire.compact_json` writes) of the part of the value that can no longer
change; :meth:`~ProgressiveArguments.finish` returns the rest once the call is ready.

What can no longer change, before the call is judged: the top-level members of the
argument object, in the order the model wrote them, as long as each is a string the
tool's schema declares as a plain string (``"type": "string"``, no combinator, a
``properties`` entry of a root schema without combinators). Such a value passes the
schema check untouched (validate first, repair only what fails; a string is valid
there), so its decoded text is final as it arrives (the assembler never takes an
``Appended`` text back). One rule runs before validation: markdown autolinks are
unwrapped in path-like fields; a member the check would unwrap in (found by asking the
check itself, once per field) is sent whole when its string is closed, as the check
leaves it. The first member that is anything else (a number, an object, a string of
another field, a key written twice, a new top-level value) ends the streaming: it and
everything after it are sent by :meth:`~ProgressiveArguments.finish`.

Invariants of :class:`ProgressiveArguments`:

* **Never a byte taken back.** Everything returned is a prefix of the text
  :meth:`~ProgressiveArguments.finish` completes, which parses to the finished value. A
  key the model wrote twice after its first value was sent is written once more with
  its final value (JSON's last value wins, as in the model's own text, which a held call
  sends as written). ``finish`` returns None when the finished value does not continue
  what was sent otherwise (the call must then be withheld: the relay turns it into a
  rejection), which the rules above make a can't-happen.
* **Never runnable early.** What has been sent is never valid JSON on its own: the
  closing ``}`` is only ever sent by ``finish``, and the prefix always ends inside a
  string (a closed string's quote goes out with the next member), so a client's partial
  parser that drops unfinished strings never sees a member complete.
* **Nothing sent, nothing changed.** A call none of whose members could be streamed is
  sent as :class:`HeldArguments` sends it (the model's text when it is valid).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, Protocol

from ..events import ToolCallDelta, ToolCallReady
from ..syntax.changes import Appended, Assigned, Closed, KeyRead, Opened, ValueKind

__all__ = [
    "FIELDS_CACHE_SIZE",
    "ArgumentEmitter",
    "HeldArguments",
    "ProgressiveArguments",
    "argument_text",
    "streamable_fields",
]


def argument_text(ready: ToolCallReady) -> str:
    """The argument text to send for a ready call.

    Valid JSON is never "repaired": a call the assembler and the schema left untouched
    goes out exactly as the model wrote it. Otherwise the canonical compact JSON of its
    finished, repaired value. A custom (free-text) tool's input is sent as it is.
    """
    if ready.kind != "function":
        return ready.arguments if isinstance(ready.arguments, str) else ready.raw
    if not ready.repairs and not ready.schema_repairs and ready.raw.strip():
        try:
            if json.loads(ready.raw) == ready.arguments:  # not one of several values
                return ready.raw
        except (ValueError, RecursionError):
            pass
    return json.dumps(ready.arguments, ensure_ascii=False, separators=(",", ":"))


class ArgumentEmitter(Protocol):
    """How one call's argument text goes out. The relay calls :meth:`feed` with each
    piece the model streamed and :meth:`finish` once the call is judged ready; all the
    text they return, joined, must be the JSON that is sent for the call (and nothing
    returned may ever need to be taken back). :class:`HeldArguments` returns nothing
    before the verdict; :class:`ProgressiveArguments` returns what is final as it
    comes."""

    @property
    def sent(self) -> str:
        """The argument text sent so far (what :meth:`feed` returned; a held emitter
        records its whole text in :meth:`finish`)."""
        ...

    def feed(self, delta: ToolCallDelta) -> str:
        """Text that is final already and may be sent now ("" to wait)."""
        ...

    def finish(self, ready: ToolCallReady) -> str | None:
        """The rest of the text, now that the call is ready; None when the finished
        value does not continue what was sent (the call is then withheld)."""
        ...


class HeldArguments:
    """Hold every call back until it is judged, then send its whole argument text
    (:func:`argument_text`). Correct for every protocol."""

    __slots__ = ("sent",)

    def __init__(self) -> None:
        self.sent = ""

    def feed(self, delta: ToolCallDelta) -> str:
        return ""

    def finish(self, ready: ToolCallReady) -> str:
        text = argument_text(ready)
        rest = text[len(self.sent) :] if text.startswith(self.sent) else text
        self.sent = text
        return rest


#: Root-schema keywords that can make a member's fate depend on others: no streaming.
_ROOT_BLOCKERS: Final = frozenset(
    {
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "$ref",
        "$dynamicRef",
        "dependentSchemas",
        "patternProperties",
        "unevaluatedProperties",
        "propertyNames",
    }
)
#: Property keywords beyond which a string's treatment is not plain.
_FIELD_BLOCKERS: Final = frozenset(
    {"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "$ref", "$dynamicRef"}
)
#: What the schema check unwraps in a path-like field (the probe of ``_path_like``).
_AUTOLINK_PROBE: Final = "[probe.md](http://probe.md)"


def _escape(text: str) -> str:
    """``text`` as the inside of a JSON string (what ``compact_json`` writes)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _key(key: str) -> str:
    return json.dumps(key, ensure_ascii=False)


def _path_like(key: str, field: Mapping[str, Any]) -> bool:
    """Whether the schema check unwraps markdown autolinks in field ``key``: asked of the
    check itself, on a one-field schema."""
    from ..schema.rules import repair_arguments  # jsonschema: only with streaming on

    schema = {"type": "object", "properties": {key: dict(field)}}
    result = repair_arguments({key: _AUTOLINK_PROBE}, schema)
    value = result.value.get(key) if isinstance(result.value, dict) else None
    return value != _AUTOLINK_PROBE


def streamable_fields(schema: Any) -> dict[str, tuple[bool, Mapping[str, Any]]]:
    """The top-level fields of a tool's argument ``schema`` whose string values pass the
    schema check as they are: ``{key: (path_like, field schema)}``; ``{}`` when the schema
    is not a plain object schema. A path-like field (one the check unwraps markdown
    autolinks in) is streamed only once its string is closed. Remembered per schema (a
    harness sends the same tools with every request; at most :data:`FIELDS_CACHE_SIZE`)."""
    try:
        key = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return _streamable_fields(schema)
    found = _FIELDS_CACHE.get(key)
    if found is None:
        found = _streamable_fields(schema)
        if len(_FIELDS_CACHE) >= FIELDS_CACHE_SIZE:
            _FIELDS_CACHE.pop(next(iter(_FIELDS_CACHE)))
        _FIELDS_CACHE[key] = found
    return found


#: Schemas whose streamable fields are remembered (oldest first out).
FIELDS_CACHE_SIZE: Final = 256
_FIELDS_CACHE: dict[str, dict[str, tuple[bool, Mapping[str, Any]]]] = {}


def _streamable_fields(schema: Any) -> dict[str, tuple[bool, Mapping[str, Any]]]:
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        return {}
    if _ROOT_BLOCKERS & schema.keys():
        return {}
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    out: dict[str, tuple[bool, Mapping[str, Any]]] = {}
    for key, field in properties.items():
        if (
            isinstance(key, str)
            and isinstance(field, Mapping)
            and field.get("type") == "string"
            and not (_FIELD_BLOCKERS & field.keys())
        ):
            out[key] = (_path_like(key, field), field)
    return out


class ProgressiveArguments:
    """Stream one call's arguments as canonical JSON of what is final (module
    docstring). ``fields`` is what :func:`streamable_fields` gives for the call's tool."""

    __slots__ = ("_buffer", "_current", "_fields", "_members", "_pieces", "_repeated", "_stopped")

    def __init__(self, fields: Mapping[str, tuple[bool, Mapping[str, Any]]]) -> None:
        self._fields = fields
        self._pieces: list[str] = []  # the text sent
        # (key, pieces of its decoded value sent, closed) of each member sent
        self._members: list[tuple[str, list[str], list[bool]]] = []
        self._current: str | None = None  # the member whose string is being read
        self._buffer: list[str] | None = None  # a path-like member's text until closed
        self._repeated: str | None = None  # a key sent, then written again by the model
        self._stopped = not fields

    @property
    def sent(self) -> str:
        """Everything returned so far."""
        return "".join(self._pieces)

    @property
    def streaming(self) -> bool:
        """Whether anything has been returned (the call is then on the wire)."""
        return bool(self._pieces)

    def feed(self, delta: ToolCallDelta) -> str:
        if self._stopped:
            return ""
        out: list[str] = []
        for change in delta.changes:
            if not self._change(change, out):
                self._stopped = True
                break
        text = "".join(out)
        if text:
            self._pieces.append(text)
        return text

    def finish(self, ready: ToolCallReady) -> str | None:
        """The rest of the text; None when the finished value does not continue what
        was sent (nothing sent: the whole text, as :class:`HeldArguments`)."""
        if not self._members:
            return argument_text(ready)
        value = ready.arguments
        if ready.kind != "function" or not isinstance(value, dict):
            return None
        rest: list[str] = []
        done: set[str] = set()  # members sent whose final value is what was sent
        last = len(self._members) - 1
        for k, (key, pieces, closed) in enumerate(self._members):
            final = value.get(key)
            sent = "".join(pieces)
            if final == sent:
                done.add(key)
            elif k == last and not closed[0] and isinstance(final, str) and final.startswith(sent):
                rest.append(_escape(final[len(sent) :]))
                done.add(key)
            elif key != self._repeated:
                return None  # a sent value changed: never expected, never papered over
        rest.append('"')
        # The members not sent; and a key the model wrote twice, once more with its final
        # value (JSON's last one wins, as it does in the model's own text).
        for name, final in value.items():
            if name not in done:
                rest.append(f",{_key(name)}:{json.dumps(final, ensure_ascii=False)}")
        rest.append("}")
        return "".join(rest)

    # -- internals -----------------------------------------------------------------------

    def _change(self, change: Any, out: list[str]) -> bool:
        """Apply one change; False ends the streaming."""
        kind = type(change)
        if kind is KeyRead:
            return True
        path = change.path
        if not path:
            if kind is Opened:
                return bool(change.kind is ValueKind.OBJECT and not self._members)
            return kind is Closed  # the closing brace waits for finish(); Reset, Assigned stop
        if len(path) != 1:
            return False
        key = path[0]
        if kind is Appended:
            if key != self._current:
                return False
            self._append(change.text, out)
            return True
        if kind is Closed:
            return key == self._current and self._close(out)
        if not isinstance(key, str) or key not in self._fields or self._current is not None:
            return False
        if any(member[0] == key for member in self._members):
            self._repeated = key  # written twice: the later value replaces the earlier one
            return False
        if kind is Opened:
            if change.kind is not ValueKind.STRING:
                return False
            self._open(key, out)
            return True
        if kind is Assigned and isinstance(change.value, str):
            self._open(key, out)
            self._append(change.value, out)
            return self._close(out)
        return False

    def _head(self, key: str) -> str:
        # The previous member's closing quote went out with nothing: it goes now.
        return ('",' if self._members else "{") + _key(key) + ':"'

    def _open(self, key: str, out: list[str]) -> None:
        self._current = key
        if self._fields[key][0]:
            self._buffer = []  # path-like: sent whole when closed
        else:
            out.append(self._head(key))
            self._members.append((key, [], [False]))

    def _append(self, text: str, out: list[str]) -> None:
        if self._buffer is not None:
            self._buffer.append(text)
        elif text:
            out.append(_escape(text))
            self._members[-1][1].append(text)

    def _close(self, out: list[str]) -> bool:
        """The member's string closed; False when a path-like one is not a plain string
        once checked (the streaming ends before it)."""
        key = self._current
        assert key is not None
        self._current = None
        if self._buffer is None:
            self._members[-1][2][0] = True
            return True
        text = "".join(self._buffer)
        self._buffer = None
        final = self._checked(key, text)
        if final is None:
            return False
        out.append(self._head(key) + _escape(final))
        self._members.append((key, [final], [True]))
        return True

    def _checked(self, key: str, text: str) -> str | None:
        """A path-like member's value as the schema check leaves it (None: not a
        plain string any more)."""
        from ..schema.rules import repair_arguments

        schema = {"type": "object", "properties": {key: dict(self._fields[key][1])}}
        result = repair_arguments({key: text}, schema)
        value = result.value.get(key) if isinstance(result.value, dict) else None
        return value if isinstance(value, str) and not result.errors else None
