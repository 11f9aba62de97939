"""The incremental argument state machine: :class:`ArgumentAssembler` and :func:`repair`.

Theory of operation
-------------------
All state-machine logic lives in this module. The assembler is a push parser: ``feed()``
takes the next delta of argument text and advances one character-level state machine
(``_VALUE``, ``_KEY``, ``_COLON``, ``_AFTER``, ``_STRING``, ...) over it. Runs of plain
string characters, whitespace and token characters are consumed with compiled regular
expressions, so the per-character work is done in C; structural characters are handled one
at a time.

What is kept between calls (and nothing else):

* the container stack (the live ``dict``/``list`` objects being built, each already
  inserted in its parent) and, for each frame, the key it sits under;
* the pending key of the innermost object, and how many commas are held back since the
  last value (a run of commas is only judged when the next significant character arrives:
  a closer makes them trailing and droppable, a value after two or more is an error);
* inside a string: its quote character, the decoded pieces so far, an escape in progress
  (``\\`` seen, or ``\\u`` and up to three hex digits), a high surrogate waiting for its
  low half, and for single-quoted strings a quote that may or may not end the string;
* a number, literal or bare word in progress (at most ``MAX_SCALAR_CHARS`` characters);
* the completed top-level values, the repairs recorded for each, and counters for the
  offset, line and column.

Invariants:

* No character is read twice. Decoded string content is never re-decoded; closing a
  string joins its pieces once. The only re-reads are bounded: a token (at most
  ``MAX_SCALAR_CHARS``) is checked once per ``feed`` call, and the decision of a held
  comma run needs only its count.
* Every decision is made at a character and never depends on where a delta ends, so any
  split of the same text reaches the same state after every shared prefix (chunking
  invariance), the same preview and the same result.
* The verdict only moves forward: once ``UNREPAIRABLE`` it stays so, with the error at
  the first impossible character. ``COMPLETE`` means ``finish()`` would invent nothing now.
* Nothing here recurses on the input's nesting, so no input can raise ``RecursionError``.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import (
    ClosedError,
    ConcatenatedValuesError,
    TooDeepError,
    TooLargeError,
    UnrepairableError,
)
from ..results import Repaired, RepairKind, Status
from ._lexical import (
    ARRAY_LANE,
    ARRAY_TAIL,
    CONTROL_NAMES,
    DQ_RUN,
    ESCAPES,
    FENCE_INFO,
    HEX,
    INNER_VIABLE,
    KEPT_CONTROLS,
    NUMBER_LANE,
    OBJECT_LANE,
    PY_LITERALS,
    RAW_SURROGATE,
    SQ_RUN,
    TOKEN_RUN,
    TOKEN_START,
    TOP_VIABLE,
    WHOLE_SCALAR,
    WHOLE_STRING,
    WS,
    classify,
    lane_value,
    scalar,
    scanstring,
)
from ._records import RepairRecord, ValueRecord, reduce_values

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_SIZE",
    "MAX_SCALAR_CHARS",
    "MAX_TOKEN_CHARS",
    "ArgumentAssembler",
]

#: Default bound on the characters an assembler will take (16 MiB); past it the assembler
#: turns UNREPAIRABLE with a :class:`~streamrepair.TooLargeError`.
DEFAULT_MAX_SIZE = 16 * 1024 * 1024
#: Default bound on container nesting. Deeper values could not even be serialized back by
#: ``json.dumps``, which recurses; no tool argument comes near it.
DEFAULT_MAX_DEPTH = 512
#: Longest number, literal or bare word accepted (Python's own int limit is 4,300 digits).
MAX_SCALAR_CHARS = 5000
#: The older name of :data:`MAX_SCALAR_CHARS` ("token" as in a lexer's, not an LLM's).
MAX_TOKEN_CHARS = MAX_SCALAR_CHARS
#: Longest info string after an opening code fence (```` ```json ````).
_MAX_FENCE_INFO = 32

# -- states ------------------------------------------------------------------------------
_VALUE = 0  # a value is expected (top level, after ':', in an array)
_KEY = 1  # a key or '}' is expected
_COLON = 2  # ':' is expected after a key
_AFTER = 3  # ',' or a closer is expected after a value in a container
_STRING = 4  # inside a string
_ESCAPE = 5  # after a backslash inside a string
_UNICODE = 6  # inside \uXXXX
_QUOTE_END = 7  # single-quoted string: a quote seen, its role not yet known
_TOKEN = 8  # inside a number, literal or bare word
_END = 9  # a top-level value is complete
_FENCE_OPEN = 10  # reading an opening code fence and its info string
_FENCE_CLOSE = 11  # reading a closing code fence
_TAIL = 12  # after the closing fence: only whitespace may follow
_ERROR = 13

_IN_STRING = frozenset({_STRING, _ESCAPE, _UNICODE, _QUOTE_END})
_SKIPS_WS = frozenset({_VALUE, _KEY, _COLON, _AFTER, _END, _TAIL})


class ArgumentAssembler:
    """Assemble one tool call's argument text from its streamed deltas.

    Feed each delta with :meth:`feed`; at any moment :attr:`status` says whether the text
    so far is a complete value, cut off, or unrepairable, and :meth:`preview` gives a
    best-effort value for live display. When the stream for this call has ended, call
    :meth:`finish` for the value and the repairs made.

    Repairs that keep the model's structure (trailing commas, raw control characters,
    invalid escapes, single quotes, Python literals, bare words, a code fence, double
    encoding) are applied as the text arrives. Structure the model did not write (closing
    a cut-off string or container, dropping a dangling key, dropping excess closers) is
    only ever added by :meth:`finish`, and the result then says
    ``structure_synthesized=True``: such a value must not be dispatched.

    ``max_size`` bounds the characters taken (past it: UNREPAIRABLE, ``TooLargeError``);
    ``max_depth`` bounds container nesting (past it: UNREPAIRABLE, ``TooDeepError``).
    """

    __slots__ = (
        "_comma_offset",
        "_commas",
        "_ctx_line",
        "_ctx_line_start",
        "_current",
        "_error",
        "_fed",
        "_fence",
        "_fence_info",
        "_fence_offset",
        "_fresh",
        "_held",
        "_hex",
        "_high_offset",
        "_is_key",
        "_key",
        "_keys",
        "_max_depth",
        "_max_size",
        "_pending_high",
        "_quote",
        "_quote_offset",
        "_result",
        "_run_match",
        "_slot",
        "_stack",
        "_state",
        "_str_offset",
        "_str_parts",
        "_str_recs",
        "_token",
        "_token_offset",
        "_values",
    )

    def __init__(
        self, *, max_size: int = DEFAULT_MAX_SIZE, max_depth: int = DEFAULT_MAX_DEPTH
    ) -> None:
        if max_size < 0 or max_depth < 1:
            raise ValueError("max_size must be >= 0 and max_depth >= 1")
        self._max_size = max_size
        self._max_depth = max_depth
        self._state = _VALUE
        self._error: UnrepairableError | None = None
        self._result: tuple[Repaired, ...] | UnrepairableError | None = None
        self._fed = 0  # characters consumed before the current delta
        self._ctx_line = 1  # line number at the start of the current delta
        self._ctx_line_start = 0  # offset where that line starts
        # containers
        self._stack: list[Any] = []
        self._keys: list[str | None] = []  # key of each frame in its parent
        self._key: str | None = None  # pending key of the innermost object
        self._fresh = False  # innermost container has no member yet
        self._commas = 0  # commas held since the last value
        self._comma_offset = 0  # offset of the first of them
        # strings
        self._quote = '"'
        self._is_key = False
        self._str_parts: list[str] = []
        self._str_offset = 0
        self._str_recs: dict[RepairKind, RepairRecord] | None = None
        self._run_match = DQ_RUN.match  # plain-run matcher of the open string's quote
        self._hex = ""
        self._pending_high: int | None = None
        self._high_offset = 0
        self._quote_offset = 0
        self._held = ""  # whitespace after a single quote whose role is unknown
        self._slot = False  # a preview put the open string's text in its container
        # tokens
        self._token = ""
        self._token_offset = 0
        # code fence: 0 none, >0 backticks of the opening fence
        self._fence = 0
        self._fence_info = 0
        self._fence_offset = 0  # where the opening fence began
        # top-level values
        self._values: list[ValueRecord] = []
        self._current: ValueRecord | None = None

    # -- public ----------------------------------------------------------------------------

    @property
    def status(self) -> Status:
        """Where the text stands now (O(1)); see :class:`~streamrepair.Status`."""
        state = self._state
        if state == _ERROR:
            return Status.UNREPAIRABLE
        current = self._current
        if current is None or current.synthesized:
            return Status.INCOMPLETE
        if state in (_END, _TAIL) or (state == _FENCE_CLOSE and self._stack == []):
            return Status.COMPLETE
        if not self._stack:
            # An unterminated top-level token or single-quoted string is ended by the end
            # of input without inventing anything.
            if state == _TOKEN and classify(self._token, in_container=False) is not None:
                return Status.COMPLETE
            if state == _QUOTE_END:
                return Status.COMPLETE
        return Status.INCOMPLETE

    @property
    def error(self) -> UnrepairableError | None:
        """The error that made the assembler UNREPAIRABLE, or None."""
        return self._error

    @property
    def chars_fed(self) -> int:
        """How many characters have been fed so far."""
        return self._fed

    @property
    def value_count(self) -> int:
        """How many top-level values have started (more than one: ``{..}{..}``)."""
        return len(self._values)

    def feed(self, text: str) -> Status:
        """Take the next delta of argument text and return the new :attr:`status`.

        Bad text never raises here: the status turns UNREPAIRABLE and :attr:`error` says
        where. Feeding an UNREPAIRABLE assembler raises that error again; feeding one that
        has been finished raises :class:`~streamrepair.ClosedError`.
        """
        # Fast path for the most common delta: text inside an open string (the body of a
        # long write), plain or with simple escapes. It reads exactly what _run's string
        # state would, and gives up on anything else (a closing quote, a control character,
        # a \u escape, an invalid escape). Such text holds no raw newline, and the status
        # inside a string is always INCOMPLETE.
        state = self._state
        if (state in (_STRING, _ESCAPE)) and self._pending_high is None:
            n = len(text) if type(text) is str else 0
            if n and n <= self._max_size - self._fed:
                if state == _STRING and "\\" not in text:
                    m = self._run_match(text)
                    if m is not None and m.end() == n:
                        self._str_parts.append(text)
                        self._fed += n
                        return Status.INCOMPLETE
                elif self._quote == '"' and "\\u" not in text:
                    # Plain runs and simple escapes, decoded by json's own C decoder. It
                    # stops at an unescaped quote and raises on a control character, an
                    # invalid escape or a backslash cut by the delta: all of those, and
                    # raw surrogates (which it would keep), go to the machine instead.
                    head = ""
                    body = text
                    if state == _ESCAPE:
                        head = ESCAPES.get(text[0], "")
                        body = text[1:]
                    if head or state == _STRING:
                        # A backslash cut by the end of the delta is left open, as the
                        # character path would leave it (an odd run of trailing ones).
                        cut = 0
                        if body[-1:] == "\\":
                            cut = (len(body) - len(body.rstrip("\\"))) & 1
                            if cut:
                                body = body[:-1]
                        try:
                            decoded, end = scanstring(body + '"', 0)
                        except ValueError:
                            end = -1
                        if end == len(body) + 1 and (
                            body.isascii() or RAW_SURROGATE.search(body) is None
                        ):
                            self._str_parts.append(head + decoded)
                            self._state = _ESCAPE if cut else _STRING
                            self._fed += n
                            return Status.INCOMPLETE
        if self._result is not None:
            raise ClosedError("feed() after finish(): this assembler is finished")
        if self._error is not None:
            raise self._error
        if not isinstance(text, str):
            raise TypeError(f"feed() takes str, not {type(text).__name__}")
        n = len(text)
        room = self._max_size - self._fed
        if n > room:
            self._run(text, room)
            if self._error is None:
                offset = self._max_size
                line, column = self._position(text, room)
                self._fail_with(
                    TooLargeError(
                        f"argument text exceeds max_size={self._max_size} characters",
                        limit=self._max_size,
                        offset=offset,
                        line=line,
                        column=column,
                    )
                )
            self._advance(text, n)
            return Status.UNREPAIRABLE
        if n:
            self._run(text, n)
            if "\n" in text:
                self._advance(text, n)
            else:
                self._fed += n
        if self._stack and self._state != _ERROR:
            return Status.INCOMPLETE  # inside a container: what status would say, sooner
        return self.status

    def preview(self, *, live: bool = False) -> Any:
        """The value as far as it has arrived, for live display.

        ``None`` before any value has started. Successive previews are monotonic: a path's
        type never changes, a path never disappears, strings only grow, numbers and
        literals appear only once complete, a key appears only with a value of its final
        type, and half escapes are never shown. A top-level scalar or string shows only
        once whole (a top-level string may be a double-encoded object). After
        :meth:`finish`, it is the finished value.

        By default the result is a fresh snapshot that later deltas never change: the
        containers still open are copied (shallow copies, in C), containers already
        closed are shared with later snapshots and the final value, so treat it as
        read-only. Cost: the number of members of the open containers, plus the length
        of an open string; never the bytes of completed members, and nothing is
        re-parsed.

        ``live=True`` returns the live value instead, updated in place by later deltas
        (as jsonriver does): O(1) plus the open string's text, even for an open array of
        thousands of members. It is read-only too; use ``copy.deepcopy`` to keep one.
        """
        result = self._result
        if isinstance(result, tuple):
            return result[-1].value if result else None
        stack = self._stack
        state = self._state
        if not stack:
            # An open top-level string may turn out to be a double-encoded object, and a
            # top-level token is not complete until it ends: show the last whole value.
            for value in reversed(self._values):
                if value is not self._current or state in (_END, _FENCE_CLOSE, _TAIL):
                    return value.value
            return None
        open_string = state in _IN_STRING and not self._is_key
        if live:
            if open_string:
                # Show the open string's text in its slot; _emit replaces it there.
                self._put_open_string(stack[-1], self._slot)
                self._slot = True
            return stack[0]
        top = snapshot = stack[0].copy()
        for i in range(1, len(stack)):
            child = stack[i].copy()
            key = self._keys[i]
            if key is None:
                top[-1] = child
            else:
                top[key] = child
            top = child
        if open_string:
            self._put_open_string(top, self._slot)
        return snapshot

    def _put_open_string(self, container: Any, replace: bool) -> None:
        text = self._string_so_far()
        if isinstance(container, dict):
            container[self._key] = text
        elif replace:
            container[-1] = text
        else:
            container.append(text)

    def finish(self) -> Repaired:
        """End the argument and return the value with every repair made.

        Structure still open is synthesized (an open string closed, a dangling key or half
        literal dropped, containers closed) and the result says
        ``structure_synthesized=True``. Raises :class:`~streamrepair.UnrepairableError` if
        the text is unrepairable or empty, and :class:`~streamrepair.ConcatenatedValuesError`
        if it holds several distinct top-level values. Calling it again returns the same
        result; feeding afterwards raises.
        """
        values = self.finish_values()
        if len(values) == 1:
            return values[0]
        line, column = self._position("", 0)
        raise ConcatenatedValuesError(values, offset=self._fed, line=line, column=column)

    def finish_values(self) -> tuple[Repaired, ...]:
        """Like :meth:`finish`, but return every top-level value of concatenated text
        (``{..}{..}``) separately instead of raising. Identical repeats are collapsed and an
        empty ``{}`` placeholder before a real object is dropped; both are recorded as
        repairs on the value kept."""
        if self._result is None:
            try:
                self._result = self._close()
            except UnrepairableError as exc:
                self._result = exc
        if isinstance(self._result, UnrepairableError):
            raise self._result
        return self._result

    # -- the machine -----------------------------------------------------------------------

    def _run(self, text: str, n: int) -> None:
        pos = 0
        while pos < n:
            state = self._state
            if state == _STRING:
                # An inner loop: stay in the string while its plain runs and simple
                # escapes last, which is most of a long argument.
                run = self._run_match
                parts = self._str_parts
                while True:
                    if self._pending_high is not None and text[pos] != "\\":
                        self._flush_high()
                    m = run(text, pos, n)
                    if m is not None:
                        parts.append(m.group())
                        pos = m.end()
                        if pos >= n:
                            return
                    c = text[pos]
                    if c == "\\":
                        if pos + 1 < n and self._pending_high is None:
                            decoded = ESCAPES.get(text[pos + 1])
                            if decoded is not None:
                                parts.append(decoded)
                                pos += 2
                                if pos >= n:
                                    return
                                continue
                        self._state = _ESCAPE
                        pos += 1
                    elif c == self._quote:
                        pos += 1
                        if c == '"':
                            self._close_string()
                        else:
                            self._state = _QUOTE_END
                            self._held = ""
                            self._quote_offset = pos - 1 + self._fed
                    elif c < " ":
                        self._control(c, pos + self._fed)
                        pos += 1
                        if pos >= n:
                            return
                        continue
                    else:  # a raw surrogate code point
                        self._lone_surrogate(pos + self._fed)
                        pos += 1
                        if pos >= n:
                            return
                        continue
                    break
                continue

            c = text[pos]
            if c in " \t\n\r" and state in _SKIPS_WS:
                pos = WS.match(text, pos, n).end()  # type: ignore[union-attr]
                if pos >= n:
                    return
                c = text[pos]

            if state == _AFTER:
                if c == ",":
                    top = self._stack[-1]
                    if isinstance(top, list):
                        m = ARRAY_LANE.match(text, pos, n)
                        while m is not None:
                            token = m.group(1)
                            top.append(token[1:-1] if token[0] == '"' else scalar(token))
                            pos = m.end()
                            m = ARRAY_LANE.match(text, pos, n)
                        # The delta ends in a comma and (the start of) the next number:
                        # go straight to where the character path would be.
                        m = ARRAY_TAIL.fullmatch(text, pos, n)
                        if m is not None and len(m.group(1)) <= 100:
                            self._fresh = False
                            if m.group(1):
                                self._commas = 0
                                self._token = m.group(1)
                                self._token_offset = m.start(1) + self._fed
                                self._state = _TOKEN
                            else:
                                self._commas = 1
                                self._comma_offset = pos + self._fed
                                self._state = _VALUE
                            return
                        if text[pos] != ",":
                            continue
                    else:
                        m = OBJECT_LANE.match(text, pos, n)
                        if m is not None:
                            while m is not None:
                                top[m.group(1)] = lane_value(m.group(2))
                                pos = m.end()
                                m = OBJECT_LANE.match(text, pos, n)
                            continue
                    self._commas = 1
                    self._comma_offset = pos + self._fed
                    self._state = _KEY if isinstance(self._stack[-1], dict) else _VALUE
                    pos += 1
                elif c == "}" or c == "]":
                    if (c == "}") != isinstance(self._stack[-1], dict):
                        return self._fail(text, pos, "mismatched closer", self._after_expected())
                    pos += 1
                    self._close_container()
                else:
                    return self._fail(text, pos, "unexpected character", self._after_expected())

            elif state == _TOKEN:
                m = TOKEN_RUN.match(text, pos, n)
                if m is not None and m.end() < n and self._stack:
                    # A number cut by the last delta ends here: read it directly.
                    token = self._token + m.group()
                    if NUMBER_LANE.fullmatch(token) is not None:
                        self._token = ""
                        pos = m.end()
                        self._emit(scalar(token))
                        continue
                if m is not None:
                    start_len = len(self._token)
                    self._token += m.group()
                    # Both checks look at the whole token, so the first failing character
                    # is found whatever the chunking; the earlier failure is reported.
                    bad = len(self._token)
                    if not self._viable(self._token):
                        bad = self._first_unviable(start_len)
                    if bad > MAX_SCALAR_CHARS:
                        return self._fail(
                            text,
                            pos + MAX_SCALAR_CHARS - start_len,
                            f"number or word longer than {MAX_SCALAR_CHARS} characters",
                        )
                    if bad < len(self._token):
                        return self._fail(
                            text, pos + bad - start_len, "not a JSON value", self._token_expected()
                        )
                    pos = m.end()
                    if pos >= n:
                        return
                if not self._end_token(text, pos):
                    return

            elif state == _VALUE:
                stack = self._stack
                if not stack:
                    if c == "`" and not self._values and not self._fence:
                        self._state = _FENCE_OPEN
                        self._fence = 1
                        self._fence_offset = pos + self._fed
                        pos += 1
                        continue
                    if c in "{[\"'" or c in TOKEN_START:
                        self._start_value(pos + self._fed)
                    else:
                        return self._fail(text, pos, "unexpected character", "a JSON value")
                elif isinstance(stack[-1], list):
                    if c == "]":
                        if not self._fresh and self._commas:
                            self._drop_commas()
                        elif not self._fresh:
                            return self._fail(text, pos, "unexpected ']'", "a value")
                        pos += 1
                        self._close_container()
                        continue
                    if c == ",":
                        if self._fresh:
                            return self._fail(text, pos, "comma before any value", "a value or ']'")
                        self._commas += 1
                        pos += 1
                        continue
                    if self._commas > 1:
                        return self._fail(
                            text, pos, "doubled comma between values", "one ',' between values"
                        )
                elif c in ",}]":
                    return self._fail(text, pos, "missing value after ':'", "a value")
                if c == "{" or c == "[":
                    pos += 1
                    self._open_container(c, text, pos - 1)
                elif c == '"' or c == "'":
                    if c == '"' and stack:
                        m = WHOLE_STRING.match(text, pos, n)
                        if m is not None:
                            pos = m.end()
                            self._emit(m.group(1))
                            continue
                    self._open_string(c, False, pos)
                    pos += 1
                elif c in TOKEN_START:
                    m = WHOLE_SCALAR.match(text, pos, n)
                    if m is not None:
                        pos = m.end()
                        self._emit(scalar(m.group(1)))
                        continue
                    self._state = _TOKEN
                    self._commas = 0
                    self._token = ""
                    self._token_offset = pos + self._fed
                elif stack:
                    return self._fail(text, pos, "unexpected character", "a value")
                else:
                    return self._fail(text, pos, "unexpected character", "a JSON value")

            elif state == _KEY:
                if c == '"' or c == "'":
                    if self._commas > 1:
                        return self._fail(
                            text, pos, "doubled comma between members", "one ',' between members"
                        )
                    if c == '"':
                        m = WHOLE_STRING.match(text, pos, n)
                        if m is not None:
                            pos = m.end()
                            self._key = m.group(1)
                            self._commas = 0
                            self._state = _COLON
                            continue
                    self._open_string(c, True, pos)
                    pos += 1
                elif c == "}":
                    if self._commas:
                        self._drop_commas()
                    pos += 1
                    self._close_container()
                elif c == "," and not self._fresh:
                    self._commas += 1
                    pos += 1
                else:
                    expected = "a quoted key or '}'"
                    return self._fail(text, pos, "unexpected character", expected)

            elif state == _COLON:
                if c == ":":
                    self._state = _VALUE
                    pos += 1
                else:
                    return self._fail(text, pos, "missing ':' after key", "':'")

            elif state == _ESCAPE:
                self._escape(c, pos + self._fed)
                pos += 1

            elif state == _UNICODE:
                if c in HEX:
                    self._hex += c
                    pos += 1
                    if len(self._hex) == 4:
                        self._unicode_done(pos + self._fed)
                else:
                    self._bad_unicode(pos + self._fed)

            elif state == _QUOTE_END:
                if c in " \t\n\r":
                    if len(self._held) >= MAX_SCALAR_CHARS:
                        return self._fail(text, pos, "too much whitespace after a quote")
                    self._held += c
                    pos += 1
                elif c in (":" if self._is_key else ",}]`"):
                    self._close_string()
                else:
                    self._quote_was_content()

            elif state == _END:
                if c == ",":
                    if not self._commas:
                        self._comma_offset = pos + self._fed
                    self._commas += 1
                    pos += 1
                elif c == "}" or c == "]":
                    assert self._current is not None
                    self._current.note(
                        RepairKind.EXCESS_CLOSER,
                        pos + self._fed,
                        f"dropped {c!r} after the complete value",
                    )
                    pos += 1
                elif c == "`" and self._fence:
                    self._state = _FENCE_CLOSE
                    self._fence_info = 1
                    pos += 1
                elif c in "{[\"'" or c in TOKEN_START:
                    if self._fence:
                        return self._fail(text, pos, "second value inside a code fence", "'```'")
                    if self._commas:
                        return self._fail(
                            text, pos, "comma between top-level values", "one JSON value"
                        )
                    self._state = _VALUE
                else:
                    return self._fail(text, pos, "unexpected text after the value", "end of input")

            elif state == _FENCE_OPEN:
                if c == "`" and self._fence_info == 0:
                    self._fence += 1
                    pos += 1
                    continue
                if self._fence < 3:
                    return self._fail(text, pos, "stray backtick", "a JSON value")
                m = FENCE_INFO.match(text, pos, n)
                if m is not None:
                    self._fence_info += m.end() - pos
                    if self._fence_info > _MAX_FENCE_INFO:
                        return self._fail(text, pos, "code fence info string too long")
                    pos = m.end()
                    continue
                self._state = _VALUE
                self._fence_info = 0

            elif state == _FENCE_CLOSE:
                if c == "`":
                    self._fence_info += 1
                    pos += 1
                elif self._fence_info < 3:
                    return self._fail(text, pos, "stray backtick", "'```' or end of input")
                else:
                    self._state = _TAIL

            elif state == _TAIL:
                return self._fail(text, pos, "text after the closing code fence", "end of input")

            else:  # _ERROR: unreachable, feed() refuses first
                return

    # -- helpers used by the machine ----------------------------------------------------------

    def _start_value(self, offset: int) -> None:
        """A top-level value begins at ``offset`` (the first, or a concatenated one)."""
        value = ValueRecord(offset)
        if self._fence and not self._values:
            value.note(RepairKind.CODE_FENCE, self._fence_offset, "stripped a markdown code fence")
        self._values.append(value)
        self._current = value
        self._commas = 0

    def _open_container(self, c: str, text: str, pos: int) -> None:
        stack = self._stack
        if len(stack) >= self._max_depth:
            line, column = self._position(text, pos)
            self._fail_with(
                TooDeepError(
                    f"containers nested deeper than max_depth={self._max_depth}",
                    limit=self._max_depth,
                    offset=pos + self._fed,
                    line=line,
                    column=column,
                )
            )
            return
        child: Any = {} if c == "{" else []
        if stack:
            parent = stack[-1]
            if isinstance(parent, dict):
                parent[self._key] = child
                self._keys.append(self._key)
                self._key = None
            else:
                parent.append(child)
                self._keys.append(None)
        else:
            self._keys.append(None)
        stack.append(child)
        self._state = _KEY if c == "{" else _VALUE
        self._fresh = True
        self._commas = 0

    def _close_container(self) -> None:
        stack = self._stack
        done = stack.pop()
        self._keys.pop()
        self._fresh = False
        self._commas = 0
        if stack:
            self._state = _AFTER
        else:
            assert self._current is not None
            self._current.value = done
            self._state = _END

    def _emit(self, value: Any) -> None:
        """A scalar value is complete: put it where it belongs."""
        stack = self._stack
        self._fresh = False
        self._commas = 0
        if not stack:
            assert self._current is not None
            self._current.value = value
            self._state = _END
            return
        top = stack[-1]
        if isinstance(top, dict):
            top[self._key] = value
            self._key = None
        elif self._slot:
            top[-1] = value  # the open string a preview showed
        else:
            top.append(value)
        self._slot = False
        self._state = _AFTER

    def _drop_commas(self) -> None:
        assert self._current is not None
        count = self._commas
        self._current.note(
            RepairKind.TRAILING_COMMA,
            self._comma_offset,
            "dropped a trailing comma" if count == 1 else f"dropped {count} trailing commas",
        )
        self._commas = 0

    def _open_string(self, quote: str, is_key: bool, pos: int) -> None:
        self._quote = quote
        self._run_match = DQ_RUN.match if quote == '"' else SQ_RUN.match
        self._is_key = is_key
        self._str_parts = []
        self._str_recs = None
        self._str_offset = pos + self._fed
        self._state = _STRING
        self._commas = 0  # the held comma, if any, was a separator
        if quote == "'":
            assert self._current is not None
            self._current.note_once(
                RepairKind.SINGLE_QUOTES, pos + self._fed, "read a single-quoted string"
            )

    def _string_so_far(self) -> str:
        parts = self._str_parts
        if len(parts) > 1:
            joined = "".join(parts)
            parts.clear()
            parts.append(joined)
        return parts[0] if parts else ""

    def _close_string(self) -> None:
        if self._pending_high is not None:
            self._flush_high()
        text = self._string_so_far()
        self._str_parts = []
        if self._is_key:
            self._key = text
            self._state = _COLON
            return
        if not self._stack:
            text = self._maybe_unwrap(text)
        self._emit(text)

    def _maybe_unwrap(self, text: str) -> Any:
        """A whole argument that is a JSON string holding a JSON object is unwrapped."""
        if text.lstrip()[:1] not in ("{", '"'):
            return text
        inner = ArgumentAssembler(max_size=len(text), max_depth=self._max_depth)
        inner.feed(text)
        if inner.status is not Status.COMPLETE:
            return text
        try:
            result = inner.finish()
        except UnrepairableError:
            return text
        if not isinstance(result.value, dict):
            return text
        current = self._current
        assert current is not None
        current.note(
            RepairKind.DOUBLE_ENCODED,
            self._str_offset,
            "unwrapped a JSON object sent as a JSON string",
        )
        for rec in result.repairs:
            current.note(
                rec.kind, self._str_offset, f"inside the double-encoded string: {rec.description}"
            ).count = rec.count
        return result.value

    def _str_note(self, kind: RepairKind, offset: int, description: str) -> None:
        """Record a repair at absolute ``offset`` inside the current string; one record
        per kind per string, counting further occurrences."""
        recs = self._str_recs
        if recs is None:
            recs = self._str_recs = {}
        rec = recs.get(kind)
        if rec is None:
            assert self._current is not None
            recs[kind] = self._current.note(kind, offset, description)
        else:
            rec.count += 1

    def _lone_surrogate(self, offset: int) -> None:
        self._str_note(RepairKind.LONE_SURROGATE, offset, "lone surrogate replaced by U+FFFD")
        self._str_parts.append("\ufffd")

    def _control(self, c: str, offset: int) -> None:
        if c in KEPT_CONTROLS:
            self._str_note(
                RepairKind.RAW_CONTROL_CHARACTER,
                offset,
                f"kept a raw {CONTROL_NAMES[c]} inside a string as content",
            )
            self._str_parts.append(c)
        else:
            self._str_note(
                RepairKind.CONTROL_CHARACTER_DROPPED,
                offset,
                f"dropped raw control character U+{ord(c):04X} inside a string",
            )

    def _escape(self, c: str, offset: int) -> None:
        """The character after a backslash, at absolute ``offset``."""
        if c == "u":
            self._state = _UNICODE
            self._hex = ""
            return
        if self._pending_high is not None:
            self._flush_high()
        decoded = ESCAPES.get(c)
        if decoded is None and c == "'" and self._quote == "'":
            decoded = "'"
        self._state = _STRING
        if decoded is not None:
            self._str_parts.append(decoded)
            return
        # An invalid escape such as \U in C:\Users: keep the backslash as written and let
        # the character be read again as ordinary string content.
        self._str_note(
            RepairKind.INVALID_ESCAPE,
            offset - 1,
            f"kept the backslash of an invalid escape (first: \\{c})",
        )
        self._str_parts.append("\\")
        if c < " ":
            self._control(c, offset)
        elif "\ud800" <= c <= "\udfff":
            self._lone_surrogate(offset)
        else:
            self._str_parts.append(c)

    def _unicode_done(self, end: int) -> None:
        """Four hex digits read; ``end`` is the absolute offset just after them."""
        code = int(self._hex, 16)
        self._state = _STRING
        pending = self._pending_high
        if 0xD800 <= code < 0xDC00:
            if pending is not None:
                self._flush_high()
            self._pending_high = code
            self._high_offset = end - 6
        elif 0xDC00 <= code < 0xE000:
            if pending is not None:
                self._pending_high = None
                self._str_parts.append(chr(0x10000 + ((pending - 0xD800) << 10) + (code - 0xDC00)))
            else:
                self._lone_surrogate(end - 6)
        else:
            if pending is not None:
                self._flush_high()
            self._str_parts.append(chr(code))

    def _bad_unicode(self, offset: int) -> None:
        """``\\u`` without four hex digits: keep what was written; the character at
        ``offset`` is then read again as string content."""
        if self._pending_high is not None:
            self._flush_high()
        self._str_note(
            RepairKind.INVALID_ESCAPE,
            offset - 2 - len(self._hex),
            "kept the backslash of an incomplete \\u escape",
        )
        self._str_parts.append("\\u" + self._hex)
        self._state = _STRING

    def _flush_high(self) -> None:
        """A high surrogate escape was not followed by its low half."""
        self._pending_high = None
        self._lone_surrogate(self._high_offset)

    def _quote_was_content(self) -> None:
        """The quote in a single-quoted string did not end it (``'it's'``)."""
        held = self._held
        self._str_parts.append("'")
        self._state = _STRING
        self._held = ""
        for i, ch in enumerate(held):
            if ch == " ":
                self._str_parts.append(ch)
            else:
                self._control(ch, self._quote_offset + 1 + i)

    def _viable(self, token: str) -> bool:
        pattern = INNER_VIABLE if self._stack else TOP_VIABLE
        return pattern.fullmatch(token) is not None

    def _first_unviable(self, start: int) -> int:
        token = self._token
        for end in range(start + 1, len(token) + 1):
            if not self._viable(token[:end]):
                return end - 1
        return len(token)  # pragma: no cover - only called when the whole token fails

    def _token_expected(self) -> str:
        if self._stack:
            return "a number, true, false, null or a quoted string"
        return "a JSON value"

    def _end_token(self, text: str, pos: int) -> bool:
        """The token ended before ``text[pos]``; returns False when the machine failed."""
        token = self._token
        found = classify(token, in_container=bool(self._stack))
        if found is None:
            # The token was viable up to here; the character that ended it is the first
            # one that makes it impossible (``tru}``, ``n,``).
            reason = f"not a JSON value: {token[:40]!r}"
            self._fail(text, pos, reason, self._token_expected())
            return False
        self._token = ""
        self._note_token(token, found[1])
        self._emit(found[0])
        return True

    def _note_token(self, token: str, kind: RepairKind | None) -> None:
        current = self._current
        assert current is not None
        if kind is RepairKind.PYTHON_LITERAL:
            current.note_once(
                kind,
                self._token_offset,
                f"read Python literal {token} as {json.dumps(PY_LITERALS[token])}",
            )
        elif kind is RepairKind.BARE_WORD:
            current.note(
                kind, self._token_offset, f"read the unquoted word {token[:40]!r} as a string"
            )

    def _after_expected(self) -> str:
        return "',' or '}'" if isinstance(self._stack[-1], dict) else "',' or ']'"

    # -- positions and errors ---------------------------------------------------------------

    def _advance(self, text: str, n: int) -> None:
        newlines = text.count("\n", 0, n)
        if newlines:
            self._ctx_line += newlines
            self._ctx_line_start = self._fed + text.rfind("\n", 0, n) + 1
        self._fed += n

    def _position(self, text: str, pos: int) -> tuple[int, int]:
        """1-based line and column of ``text[pos]`` in the current delta."""
        newlines = text.count("\n", 0, pos)
        if newlines:
            return self._ctx_line + newlines, pos - text.rfind("\n", 0, pos)
        return self._ctx_line, self._fed + pos - self._ctx_line_start + 1

    def _fail(self, text: str, pos: int, reason: str, expected: str = "") -> None:
        line, column = self._position(text, pos)
        self._fail_with(
            UnrepairableError(
                reason, offset=self._fed + pos, line=line, column=column, expected=expected
            )
        )

    def _fail_with(self, error: UnrepairableError) -> None:
        self._error = error
        self._state = _ERROR

    # -- finishing ------------------------------------------------------------------------

    def _close(self) -> tuple[Repaired, ...]:
        """End of input: synthesize what is open and freeze every value."""
        if self._error is not None:
            raise self._error
        end = self._fed
        state = self._state
        line, column = self._position("", 0)
        if not self._values or (state == _VALUE and not self._stack and self._current is None):
            raise UnrepairableError(
                "empty argument: no JSON value arrived",
                offset=end,
                line=line,
                column=column,
                expected="a JSON value",
            )
        current = self._current
        assert current is not None
        stack = self._stack
        if state == _QUOTE_END:
            self._close_string()
        elif state in _IN_STRING:
            if self._is_key:
                current.note(RepairKind.DANGLING_DROPPED, end, "dropped a key cut off at the end")
                self._state = _AFTER
            else:
                self._pending_high = None
                current.note(RepairKind.UNCLOSED_STRING, end, "closed a string cut off at the end")
                text = self._string_so_far()
                self._str_parts = []
                self._emit(text)
        elif state == _TOKEN:
            if stack:
                current.note(
                    RepairKind.DANGLING_DROPPED,
                    end,
                    f"dropped {self._token[:40]!r} cut off at the end"
                    + (" and its key" if isinstance(stack[-1], dict) else ""),
                )
                self._key = None
            else:
                found = classify(self._token, in_container=False)
                if found is None:
                    raise UnrepairableError(
                        f"not a JSON value: {self._token[:40]!r}",
                        offset=self._token_offset,
                        line=line,
                        column=column,
                        expected="a JSON value",
                    )
                self._note_token(self._token, found[1])
                self._emit(found[0])
        elif state == _FENCE_OPEN:
            raise UnrepairableError(
                "empty argument: only a code fence arrived",
                offset=end,
                line=line,
                column=column,
                expected="a JSON value",
            )
        if self._state in (_COLON, _VALUE) and stack and isinstance(stack[-1], dict):
            if self._key is not None or self._state == _COLON:
                current.note(RepairKind.DANGLING_DROPPED, end, "dropped a key left without a value")
            self._key = None
        if self._commas:
            self._drop_commas()
        if stack:
            closers = "".join("}" if isinstance(frame, dict) else "]" for frame in reversed(stack))
            current.note(RepairKind.MISSING_CLOSERS, end, f"appended missing {closers!r}")
            current.value = stack[0]
            stack.clear()
            self._keys.clear()
        self._state = _END
        return reduce_values(self._values)
