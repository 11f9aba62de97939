"""The incremental argument state machine: :class:`ArgumentAssembler` and :func:`repair`.

Theory of operation
-------------------
All state-machine logic lives in this module. The assembler is a push parser: ``feed()``
takes the next delta of argument text and advances one character-level state machine
(``_VALUE``, ``_KEY``, ``_COLON``, ``_AFTER``, ``_STRING``, ...) over it. Runs of plain
string characters, whitespace and token characters are consumed with compiled regular
expressions, and runs of escapes with json's C string decoder, so the per-character work is
done in C; structural characters are handled one at a time, except where a compiled lane
reads a whole piece the delta holds: an object member (its key, colon and value, as far as
they are in the delta), an array item, a number cut by the delta's end. Before the machine
runs, ``feed()`` takes the commonest deltas itself (string text up to its closing quote,
digits that continue a number, one space): the fewer steps per token, the faster.

The compiled build (docs/build.md) reads the same stretches with character loops
(``_lexical.py``: ``plain_end``, ``member_spans``, ``item_spans``, ``scalar_end`` ...)
where the pure build calls the patterns: compiled, a loop over a few characters costs far
less than a call into the regular expression engine, interpreted the opposite holds.
``COMPILED`` says which runs; each loop reads exactly what its pattern reads, so both
builds take the same steps (tests/test_lexical_loops.py runs the machine both ways).

What is kept between calls (and nothing else):

* the container stack (the live ``dict``/``list`` objects being built, each already
  inserted in its parent) and, for each frame, the key it sits under;
* the pending key of the innermost object, and how many commas are held back since the
  last value (a run of commas is only judged when the next significant character arrives:
  a closer makes them trailing and droppable, a value after two or more is an error);
* inside a string: its quote character, the decoded pieces so far (one per delta, joined
  64 at a time in tiers, so a long string costs its text and not an object per delta), an
  escape in progress (``\\`` seen, or ``\\u`` and up to three hex digits), a high
  surrogate (escaped or raw)
  waiting for its low half, for single-quoted strings a quote that may or may not end the
  string, and flags for the ambiguous-escapes rule (an invalid escape seen, a control
  escape seen, and under a path-like key the preview held at the first control escape);
* for a key its object already has (``{"x": 1, "x": 1}``), its second value is read
  against the first, never stored (``_repeats.py``): the first value, the first value's
  part under each open container of the second, and how much of an open string matched
  (the change recorder is not called meanwhile: the second value is never reported);
  where a key still being read began, when a line break came since (its error points
  there);
* a number, literal, bare word or unquoted key in progress (at most ``MAX_SCALAR_CHARS``
  characters, except a number inside a container: past the bound it is kept in pieces with
  a short signature of its place in the number grammar, so it is never re-read), or a
  backslash between tokens that may stand for whitespace;
* the values whole so far, reduced as each completes (an identical repeat collapses into
  the one before it, empty ``{}`` placeholders before an object are dropped), the value
  being read, one repair record per kind for each, and counters for the offset, line and
  column;
* with ``changes=True``, the change recorder (``_recorder.py``): the path of each open
  container, and the changes not yet taken. The machine calls it at a few points, each
  before it changes the live value (a container opened or closed, a string value opened,
  a value complete in ``_emit``, the end of a delta); see ``changes.py`` for what the
  changes promise.

Invariants:

* No character is read twice. Decoded string content is never re-decoded; closing a
  string joins its pieces once (and the ambiguous-escapes rule rewrites it at most once).
  The only re-reads are bounded: a token (at most ``MAX_SCALAR_CHARS``) is checked once per
  ``feed`` call, the decision of a held comma run needs only its count, a lane or fast path
  that declines leaves the characters it looked at to the machine (each at most once more),
  and a repeated key's string is compared with its first value piece by piece.
* Every decision is made at a character and never depends on where a delta ends, so any
  split of the same text reaches the same state after every shared prefix (chunking
  invariance), the same preview and the same result.
* ``status`` is exact: ``COMPLETE`` means ``finish()`` now returns one value with
  ``structure_synthesized=False``; ``CONCATENATED`` that it raises
  ``ConcatenatedValuesError`` while ``finish_values()`` returns unsynthesized values;
  ``INCOMPLETE`` that it would synthesize or raise and some continuation can still be
  valid; ``UNREPAIRABLE`` comes at the first character after which no continuation can
  (bounds count when a character passes them; a number longer than ``MAX_SCALAR_CHARS``
  is judged against a float's range when it ends; a repeated key's second value is
  compared as docs/design.md states, and its error points at the second key). Once
  ``UNREPAIRABLE`` it stays so, and after ``finish()`` raises the status is
  ``UNREPAIRABLE`` with that error.
* Nothing here recurses on the input's nesting, so no input can raise ``RecursionError``.
"""

from __future__ import annotations

import json
from typing import Any, Final

from .._build import mypyc_attr
from ..errors import (
    ClosedError,
    ConcatenatedValuesError,
    TooDeepError,
    TooLargeError,
    UnrepairableError,
)
from ..events import DeferredPreview
from ..results import Repaired, RepairKind, Status
from ._lexical import (
    ARRAY_LANE,
    COMPILED,
    CONTROL_ESCAPES,
    CONTROL_NAMES,
    CONTROL_U,
    DQ_RUN,
    ESCAPES,
    FENCE_INFO,
    GROWS_BY_DIGITS,
    HEX,
    INNER_VIABLE,
    KEY_MEMBER,
    KEY_RUN,
    KEY_START,
    LITERAL_CONTROLS,
    MAX_INTEGER_DIGITS,
    NUMBER,
    NUMBER_LANE,
    NUMBER_PREFIX_LONGEST,
    NUMBER_START,
    OBJECT_LANE,
    PY_LITERALS,
    RAW_SURROGATE,
    SQ_RUN,
    TOKEN_RUN,
    TOKEN_START,
    TOP_VIABLE,
    UNICODE_RUN,
    UUID_VIABLE,
    WHOLE_SCALAR,
    WHOLE_STRING,
    WS,
    classify,
    digits_end,
    grows_by_digits,
    item_spans,
    item_value,
    lane_value,
    long_integer,
    member_spans,
    number_end,
    number_prefix_end,
    number_signature,
    overflows,
    path_like,
    plain_end,
    scalar,
    scalar_end,
    scalar_value,
    scanstring,
    token_end,
    ws_end,
)
from ._recorder import ChangeRecorder, LazyPreview
from ._records import (
    COMPACT_PIECES,
    ValueRecord,
    add_value,
    compact_pieces,
    count_with,
    same_json,
)
from ._repeats import Repeat, text_continues, token_continues
from .changes import Change

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_SIZE",
    "MAX_INTEGER_DIGITS",
    "MAX_SCALAR_CHARS",
    "ArgumentAssembler",
]

#: Default bound on the characters an assembler will take (16 MiB); past it the assembler
#: turns UNREPAIRABLE with a :class:`~streamrepair.TooLargeError`.
DEFAULT_MAX_SIZE: Final = 16 * 1024 * 1024
#: Default bound on container nesting. Deeper values could not even be serialized back by
#: ``json.dumps``, which recurses; no tool argument comes near it.
DEFAULT_MAX_DEPTH: Final = 512
#: Longest number, literal or bare word accepted (Python's own int limit is 4,300 digits).
MAX_SCALAR_CHARS: Final = 5000
#: Longest info string after an opening code fence (```` ```json ````).
_MAX_FENCE_INFO: Final = 32

# -- states ------------------------------------------------------------------------------
_VALUE: Final = 0  # a value is expected (top level, after ':', in an array)
_KEY: Final = 1  # a key or '}' is expected
_COLON: Final = 2  # ':' is expected after a key
_AFTER: Final = 3  # ',' or a closer is expected after a value in a container
_STRING: Final = 4  # inside a string
_ESCAPE: Final = 5  # after a backslash inside a string
_UNICODE: Final = 6  # inside \uXXXX
_QUOTE_END: Final = 7  # single-quoted string: a quote seen, its role not yet known
_TOKEN: Final = 8  # inside a number, literal or bare word
_END: Final = 9  # a top-level value is complete
_FENCE_OPEN: Final = 10  # reading an opening code fence and its info string
_FENCE_CLOSE: Final = 11  # reading a closing code fence
_TAIL: Final = 12  # after the closing fence: only whitespace may follow
_ERROR: Final = 13
_BACKSLASH: Final = 14  # a backslash between tokens, outside any string (\n read as whitespace)
_BARE_KEY: Final = 15  # inside an unquoted identifier key
_PROSE: Final = 16  # text after the complete top-level value, dropped

_IN_STRING: Final = frozenset({_STRING, _ESCAPE, _UNICODE, _QUOTE_END})
# States in which the innermost object's key has been read and its value shows nothing yet.
_KEY_ONLY: Final = frozenset({_COLON, _VALUE, _TOKEN, _BACKSLASH})


def _not_a_value(token: str) -> str:
    """Why a whole token is refused."""
    if long_integer(token):
        return f"integer longer than {MAX_INTEGER_DIGITS} digits: {token[:40]!r}"
    if NUMBER.fullmatch(token) is not None:
        return f"number out of range: {token[:40]!r}"
    return f"not a JSON value: {token[:40]!r}"


_SKIPS_WS: Final = frozenset({_VALUE, _KEY, _COLON, _AFTER, _END, _TAIL})
_OPEN_STRING: Final = (_STRING, _ESCAPE, _UNICODE)  # where the fast path may go on in a string
_HEX_DIGITS: Final = "0123456789abcdefABCDEF"
_OPENING: Final = ("{", "[", " {", " [")  # after a comma: no lane reads a container
# Where a delta that ends leaves work for _delta_ended (and wherever a key is pending).
_SETTLED: Final = _IN_STRING | {_BARE_KEY}
_INCOMPLETE: Final = Status.INCOMPLETE
# A member a repeated key's value has and its first value lacks: equal to nothing.
_ABSENT: Final = object()

# What an open string has shown so far (its flags), for the ambiguous-escapes rule.
_INVALID: Final = 1  # an invalid escape: an evident raw backslash
_CONTROL_ESCAPE: Final = 2  # a \b \f \n \r \t escape, decoded to a control character
_OTHER_CONTROL: Final = 4  # a control character from elsewhere (raw, or a \u escape)


# Subclassable in the compiled build too (docs/build.md).
@mypyc_attr(allow_interpreted_subclasses=True)
class ArgumentAssembler:
    """Assemble one tool call's argument text from its streamed deltas.

    Feed each delta with :meth:`feed`; at any moment :attr:`status` says whether the text
    so far is a complete value, cut off, or unrepairable, and :meth:`preview` gives a
    best-effort value for live display. When the stream for this call has ended, call
    :meth:`finish` for the value and the repairs made.

    Repairs that keep the model's structure (trailing commas, raw control characters,
    invalid escapes, single quotes, literals, bare words and unquoted keys, a code fence,
    double encoding, excess closers and prose after the value) are applied as the text
    arrives (docs/repairs.md lists them). Structure the model did not finish (closing a
    cut-off string or container, dropping a dangling key or half token) is only ever added
    by :meth:`finish`, and the result then says ``structure_synthesized=True``: such a
    value must not be dispatched.

    ``max_size`` bounds the characters taken (past it: UNREPAIRABLE, ``TooLargeError``);
    ``max_depth`` bounds container nesting (past it: UNREPAIRABLE, ``TooDeepError``).
    """

    __slots__ = (
        "_bs_offset",
        "_changes",
        "_comma_offset",
        "_commas",
        "_ctx_line",
        "_ctx_line_start",
        "_current",
        "_delta",
        "_error",
        "_fed",
        "_fence",
        "_fence_info",
        "_fence_offset",
        "_fresh",
        "_held",
        "_hex",
        "_high_offset",
        "_hold",
        "_is_key",
        "_key",
        "_key_position",
        "_keys",
        "_long",
        "_match",
        "_max_depth",
        "_max_size",
        "_pathlike",
        "_pending_high",
        "_quote",
        "_quote_offset",
        "_rec",
        "_result",
        "_run_match",
        "_slot",
        "_stack",
        "_started",
        "_state",
        "_str_flags",
        "_str_merged",
        "_str_offset",
        "_str_parts",
        "_str_start",
        "_str_tiers",
        "_token",
        "_token_offset",
        "_unsettled",
        "_values",
        "_whole",
        "_ws_return",
    )

    def __init__(
        self,
        *,
        max_size: int = DEFAULT_MAX_SIZE,
        max_depth: int = DEFAULT_MAX_DEPTH,
        changes: bool = False,
    ) -> None:
        if max_size < 0 or max_depth < 1:
            raise ValueError("max_size must be >= 0 and max_depth >= 1")
        self._max_size = max_size
        self._max_depth = max_depth
        self._state = _VALUE
        self._error: UnrepairableError | None = None
        self._result: tuple[Repaired, ...] | UnrepairableError | None = None
        self._fed = 0  # characters consumed before the current delta
        self._delta = ""  # the current delta (for the position of an error found late)
        self._ctx_line = 1  # line number at the start of the current delta
        self._ctx_line_start = 0  # offset where that line starts
        # containers
        self._stack: list[Any] = []
        self._keys: list[str | None] = []  # key of each frame in its parent
        self._key: str | None = None  # pending key of the innermost object
        self._fresh = False  # innermost container has no member yet
        # a value read under a key its object already has: compared with the first, never
        # stored (_repeats.py); and where the key being read began (its line and column)
        self._match: Repeat | None = None
        self._key_position: tuple[int, int, int] | None = None  # (offset, line, column)
        self._commas = 0  # commas held since the last value
        self._comma_offset = 0  # offset of the first of them
        # strings
        self._quote = '"'
        self._is_key = False
        self._str_parts: list[str] = []
        self._str_offset = 0
        self._str_flags = 0  # what the open string has shown (_INVALID, ...)
        self._pathlike: bool | None = None  # under a path-like key (None: not asked yet)
        self._unsettled = 0  # strings that kept JSON's reading of ambiguous escapes
        self._hold: str | None = None  # its preview, held at its first control escape
        self._str_start = 0  # first piece of the open string added by the current delta
        self._str_merged = 0  # pieces that compaction has already joined (see _compact)
        self._str_tiers: list[int] = []  # how many joined pieces of each size tier
        self._run_match = DQ_RUN.match  # plain-run matcher of the open string's quote
        self._hex = ""
        self._pending_high: int | None = None
        self._high_offset = 0
        self._quote_offset = 0
        self._held = ""  # whitespace after a single quote whose role is unknown
        self._slot = False  # a preview put the open string's text in its container
        # tokens (and unquoted keys)
        self._token = ""
        self._token_offset = 0
        self._long: list[str] | None = None  # a number past MAX_SCALAR_CHARS, in pieces
        # a backslash outside any string: the state to return to, and where it was
        self._ws_return = _VALUE
        self._bs_offset = 0
        # code fence: 0 none, >0 backticks of the opening fence
        self._fence = 0
        self._fence_info = 0
        self._fence_offset = 0  # where the opening fence began
        # top-level values: those whole so far, reduced (duplicates collapsed, empty {}
        # placeholders dropped), and the one being read (or the record it became)
        self._values: list[ValueRecord] = []
        self._current: ValueRecord | None = None
        self._whole = False  # the current value is whole and in _values
        self._started = 0  # top-level values started
        # preview changes (changes.py), recorded only when asked for
        # the change recorder, and where the machine's hooks report (the recorder, or None
        # while a repeated key's value is read: that value is never reported)
        self._changes: ChangeRecorder | None = ChangeRecorder() if changes else None
        self._rec = self._changes

    # -- public ----------------------------------------------------------------------------

    @property
    def status(self) -> Status:
        """Where the text stands now; see :class:`~streamrepair.Status`, whose meanings
        the assembler keeps exact: ``COMPLETE`` means :meth:`finish` now returns a value
        with ``structure_synthesized=False``. O(1), except for a top-level token (at most
        ``MAX_SCALAR_CHARS``) or a top-level single-quoted string after another value."""
        state = self._state
        if state == _ERROR:
            return Status.UNREPAIRABLE
        result = self._result
        if isinstance(result, tuple):
            if any(value.structure_synthesized for value in result):
                return Status.INCOMPLETE
            return Status.COMPLETE if len(result) == 1 else Status.CONCATENATED
        if self._current is None or self._stack:
            return Status.INCOMPLETE
        if self._whole:
            # The value is whole; what follows it may still be open.
            if state == _BACKSLASH or (state == _FENCE_CLOSE and self._fence_info < self._fence):
                return Status.INCOMPLETE
            count = len(self._values)
        elif state == _TOKEN:
            # An unterminated top-level token is ended by the end of input.
            found = classify(self._token, in_container=False)
            if found is None:
                return Status.INCOMPLETE
            count = count_with(self._values, found[0])
        elif state == _QUOTE_END:
            # So is a single-quoted string whose last quote may have been its end.
            count = 1
            if self._values:
                count = count_with(self._values, self._unwrapped(self._string_so_far())[0])
        else:
            return Status.INCOMPLETE
        return Status.COMPLETE if count == 1 else Status.CONCATENATED

    @property
    def error(self) -> UnrepairableError | None:
        """The error that made the assembler UNREPAIRABLE, or None."""
        return self._error

    @property
    def chars_fed(self) -> int:
        """How many characters have been fed so far."""
        return self._fed

    @property
    def unsettled_escapes(self) -> int:
        """How many strings so far kept JSON's reading of ``\\b \\f \\n \\r \\t`` although
        an invalid escape in the same string shows the model wrote raw backslashes (each
        is an ``ambiguous_escapes`` repair whose reading the path rule did not settle:
        ``"x = 1\\nC:\\Users"`` outside a path-like key). Nonzero means the value's
        text may not say what the model meant; a harness that will not write such content
        refuses the call (``ToolCallStream(refuse_ambiguous_escapes=True)``)."""
        return self._unsettled

    @property
    def value_count(self) -> int:
        """How many top-level values have started (more than one: ``{..}{..}``)."""
        return self._started

    def feed(self, text: str) -> Status:
        """Take the next delta of argument text and return the new :attr:`status`.

        Bad text never raises here: the status turns UNREPAIRABLE and :attr:`error` says
        where. Feeding an UNREPAIRABLE assembler raises that error again; feeding one that
        has been finished raises :class:`~streamrepair.ClosedError`.
        """
        # Fast paths for the commonest deltas, each reading exactly what the machine would
        # and leaving anything else to it. The body of a string (a long write): plain text
        # and simple escapes, up to a closing quote, a control character, a \u escape or
        # an invalid escape (the machine reads on from there); such text holds no raw
        # newline, and inside a string the status is INCOMPLETE. Digits that continue a
        # number. One space between tokens. (A repeated key's value is compared with its
        # first one by the machine.)
        state = self._state
        start = 0  # how much of the delta a fast path read
        piece = ""  # and what it decoded
        if type(text) is str and self._match is None:
            n = len(text)
            if 0 < n <= self._max_size - self._fed:
                if state in _OPEN_STRING:
                    if self._pending_high is None:
                        if state == _STRING and "\\" not in text:
                            if n == 1:  # one plain character: no regex for that
                                if (
                                    text != self._quote
                                    and text >= " "
                                    and not ("\ud800" <= text <= "\udfff")
                                ):
                                    start = 1
                                    piece = text
                            elif COMPILED:
                                start = plain_end(text, 0, n, ord(self._quote))
                                if start:
                                    piece = text if start == n else text[:start]
                            else:
                                m = self._run_match(text)
                                if m is not None:
                                    start = m.end()
                                    piece = text if start == n else text[:start]
                        elif self._quote == '"':
                            read = self._simple_escapes(text, state)
                            if read is not None:
                                piece, start = read
                        if start == n:
                            parts = self._str_parts
                            parts.append(piece)
                            self._fed += n
                            rec = self._rec
                            if rec is not None:
                                if self._hold is None:
                                    rec.grew(piece)
                                else:
                                    self._shown(piece)
                            if len(parts) > self._str_merged + 63:
                                self._compact()
                            return _INCOMPLETE
                elif state == _TOKEN:
                    token = self._token
                    if (
                        (
                            digits_end(text, 0, n, n) == n
                            and self._long is None
                            and bool(self._stack)
                            and len(token) + n <= MAX_SCALAR_CHARS
                            and grows_by_digits(token)
                        )
                        if COMPILED  # (the same, read by character)
                        else (
                            text.isdigit()
                            and text.isascii()
                            and self._long is None
                            and self._stack
                            and len(token) + n <= MAX_SCALAR_CHARS
                            and GROWS_BY_DIGITS.fullmatch(token) is not None
                        )
                    ):
                        self._token = token + text
                        self._fed += n
                        return _INCOMPLETE
                elif n == 1 and state in _SKIPS_WS and text in " \t\r" and self._result is None:
                    self._fed += 1
                    return _INCOMPLETE if self._stack else self.status
        if self._result is not None:
            raise ClosedError("feed() after finish(): this assembler is finished")
        if state == _ERROR:
            assert self._error is not None
            raise self._error
        if not isinstance(text, str):
            raise TypeError(f"feed() takes str, not {type(text).__name__}")
        n = len(text)
        if n > self._max_size - self._fed:
            return self._too_large(text, n)
        parts = self._str_parts
        self._str_start = len(parts)
        if start:
            parts.append(piece)
        if n:
            self._delta = text
            self._run(text, n, start)
            state = self._state
            if state in _SETTLED or self._match is not None:
                self._delta_ended(text)
            elif self._key is not None and self._rec is not None and state in _KEY_ONLY:
                self._rec.key(self._key)  # the delta ended after a key, before its value
            if "\n" in text:
                self._advance(text, n)
            else:
                self._fed += n
            if self._stack and self._state != _ERROR:
                return _INCOMPLETE  # inside a container: what status would say, sooner
        return self.status

    def _too_large(self, text: str, n: int) -> Status:
        """The delta goes past ``max_size``: what fits is read, then UNREPAIRABLE."""
        room = self._max_size - self._fed
        self._str_start = len(self._str_parts)
        self._delta = text
        self._run(text, room)
        # Asked of the state, not of self._error: a type checker keeps self._error
        # narrowed to None (the raise above) across these calls, which may set it, and
        # the compiled build trusts that narrowing (docs/build.md).
        if self._state != _ERROR:
            self._delta_ended(text)
        if self._state != _ERROR:
            line, column = self._position(text, room)
            self._fail_with(
                TooLargeError(
                    f"argument text exceeds max_size={self._max_size} characters",
                    limit=self._max_size,
                    offset=self._max_size,
                    line=line,
                    column=column,
                )
            )
        self._advance(text, n)
        return Status.UNREPAIRABLE

    def _simple_escapes(self, text: str, state: int) -> tuple[str, int] | None:
        """The beginning of a delta of a double-quoted string (from ``state``: _STRING, or
        inside an escape: _ESCAPE or _UNICODE) made of plain runs and escapes, decoded by
        json's own C decoder (a run of \\uXXXX in one step), up to the closing quote or the
        end: ``(decoded, characters read)``. None when it holds anything else before (a
        control character, an invalid escape, a surrogate half left alone or a raw one,
        which json would keep, a \\u escape of a control character): the machine reads all
        of it then. An escape cut by the end of the delta (a backslash, or \\u and up to
        three hex digits) is left open, as the machine would leave it."""
        head = ""  # the escape the delta began inside, decoded
        skip = 0  # and the characters it took
        if state == _ESCAPE and text[0] != "u":
            head = ESCAPES.get(text[0], "")
            if not head:
                return None
            skip = 1
        elif state != _STRING:  # inside \u: after the backslash, or some hex digits read
            first = 1 if state == _ESCAPE else 0  # the u
            hex_read = "" if first else self._hex
            skip = first + 4 - len(hex_read)
            digits = hex_read + text[first:skip]
            if len(digits) < 4 or digits.strip(_HEX_DIGITS):
                return None
            code = int(digits, 16)
            if code < 0x20 or 0xD800 <= code < 0xE000:
                return None  # a control character or a surrogate half: the machine's
            head = chr(code)
        if COMPILED and "\\u" not in text:
            return self._escapes(text, skip, head)
        body = text[skip:] if skip else text
        escaped = "\\u" in body
        if escaped and CONTROL_U.search(body) is not None:
            return None  # the machine tells a \u control character from a \n
        whole = len(body)
        cut = _STRING  # the state the delta leaves: an escape it cuts is left open
        cut_hex = ""
        if body[-1:] == "\\":
            if (whole - len(body.rstrip("\\"))) & 1:  # an odd run: the last one is open
                cut = _ESCAPE
                body = body[:-1]
        elif escaped:  # \u and up to three hex digits at the end
            open_at = body.rfind("\\u", max(whole - 5, 0))
            if (
                open_at >= 0
                and not body[open_at + 2 :].strip(_HEX_DIGITS)
                and not (open_at - len(body[:open_at].rstrip("\\"))) & 1
            ):
                cut = _UNICODE
                cut_hex = body[open_at + 2 :]
                body = body[:open_at]
        try:
            decoded, end = scanstring(body + '"', 0)
        except ValueError:  # a control character, an invalid escape
            return None
        end -= 1  # where the closing quote is (the one added: all of the body)
        if end < len(body):
            body = body[:end]  # the string closes in this delta: the machine does that
            whole = end
            cut = _STRING
        if not (body.isascii() or RAW_SURROGATE.search(body) is None):
            return None
        if escaped and RAW_SURROGATE.search(decoded) is not None:
            return None  # a half without its partner (perhaps in the next delta)
        piece = head + decoded
        if not self._str_flags & _CONTROL_ESCAPE:
            # Nothing raw reaches here: a control character in the piece was written as
            # an escape (\\n).
            found = CONTROL_ESCAPES.search(piece)
            if found is not None:
                self._control_escape(piece[: found.start()])
        self._state = cut
        if cut == _UNICODE:
            self._hex = cut_hex
        return piece, skip + whole

    def _escapes(self, text: str, pos: int, head: str) -> tuple[str, int] | None:
        """What :meth:`_simple_escapes` reads from ``pos`` on (after ``head``, the escape the
        delta began inside, decoded), read by character, for text with no ``\\u`` escape
        (the compiled build: json's C decoder costs more to call than a loop over a
        delta's characters)."""
        n = len(text)
        pieces = [head]
        cut = _STRING
        while True:
            end = plain_end(text, pos, n, 34)
            if end > pos:
                pieces.append(text[pos:end])
                pos = end
            if pos >= n or text[pos] == '"':
                break  # the end of the delta, or the closing quote: the machine's
            if text[pos] != "\\":
                return None  # a control character or a surrogate: the machine's
            if pos + 1 == n:  # an escape cut by the end of the delta: left open
                cut = _ESCAPE
                pos = n
                break
            escape = ord(text[pos + 1])  # (ESCAPES, without a dict to look each up in)
            if escape == 110:  # \n
                pieces.append("\n")
            elif escape == 34:  # \"
                pieces.append('"')
            elif escape == 92:  # \\
                pieces.append("\\")
            elif escape == 116:  # \t
                pieces.append("\t")
            elif escape == 47:  # \/
                pieces.append("/")
            elif escape == 114:  # \r
                pieces.append("\r")
            elif escape == 98:  # \b
                pieces.append("\b")
            elif escape == 102:  # \f
                pieces.append("\f")
            else:
                return None  # an invalid escape, or \u: the machine's
            pos += 2
        piece = "".join(pieces)
        if not self._str_flags & _CONTROL_ESCAPE:
            # Nothing raw reaches here: a control character in the piece was an escape.
            size = len(piece)
            i = 0
            while i < size and ord(piece[i]) >= 32:
                i += 1
            if i < size:
                self._control_escape(piece[:i])
        self._state = cut
        return piece, pos

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
            return self._values[-1].value if self._values else None
        open_string = state in _IN_STRING and not self._is_key
        if self._match is not None:
            # A value read under a repeated key is never shown: the first one stays.
            stack = stack[: self._match.depth]
            open_string = False
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
        text = self._hold if self._hold is not None else self._string_so_far()
        if isinstance(container, dict):
            container[self._key] = text
        elif replace:
            container[-1] = text
        else:
            container.append(text)

    def take_changes(self) -> tuple[Change, ...]:
        """The changes to the value since the last call, oldest first (see
        :mod:`streamrepair.syntax.changes`): applied in order to an empty value they give
        what :meth:`preview` gives now. Cost: O(1) per change, nothing is re-read.

        Needs ``ArgumentAssembler(changes=True)`` (``ValueError`` otherwise).
        """
        rec = self._changes
        if rec is None:
            raise ValueError("take_changes() needs ArgumentAssembler(changes=True)")
        out = rec.out
        if not out:
            return ()
        rec.out = []
        return tuple(out)

    def lazy_preview(self) -> DeferredPreview:
        """What :meth:`preview` returns now, computed only when its ``resolve()`` is
        called, whatever the assembler has read in between (so an event can carry a
        snapshot that costs nothing until someone reads it).

        Taking one costs O(depth of the open containers) with ``changes=True``; without
        it, the snapshot is taken now. Resolving costs what :meth:`preview` would have.
        """
        rec = self._changes
        stack = self._stack
        if rec is None or not stack or self._result is not None:
            return LazyPreview(None, self.preview())
        if len(stack) == 1:
            frames: tuple[tuple[Any, int, Any], ...] = ((stack[0], len(stack[0]), None),)
        else:
            if self._match is not None:  # a repeated key's value is not shown
                stack = stack[: self._match.depth]
            frames = tuple(zip(stack, map(len, stack), self._keys, strict=False))
        string = None
        if self._state in _IN_STRING and not self._is_key and self._match is None:
            top, count, key = frames[-1]
            if self._slot:  # a live preview put the open string in its slot
                count -= 1
                frames = (*frames[:-1], (top, count, key))
            slot = self._key if isinstance(top, dict) else count
            string = (slot, rec.sent, rec.strings)
        return LazyPreview(self, (frames, string))

    def _open_text(self, serial: int) -> str | None:
        """What a preview shows of the string value being read, if it is string
        ``serial`` (the recorder's count); None once that string has ended."""
        rec = self._changes
        if rec is not None and rec.str_path is not None and rec.strings == serial:
            return self._hold if self._hold is not None else self._string_so_far()
        return None

    def _shown(self, piece: str) -> None:
        """``piece`` joined the open string: tell the recorder what a preview now shows
        of it (all of it, unless the preview is held; then up to the held text)."""
        rec = self._rec
        assert rec is not None
        hold = self._hold
        if hold is None:
            rec.grew(piece)
        elif len(hold) > rec.sent:
            rec.grew(hold[rec.sent :])

    def _delta_ended(self, text: str) -> None:
        """The delta ``text`` has been read: settle an open string, remember where an open
        key began (it may turn out to be a repeated key, and the error points at it), and
        tell the recorder of a key whose value has not begun."""
        state = self._state
        if state in _IN_STRING:
            if self._is_key:
                self._key_open(text, self._str_offset)
            self._settle_string()
        elif state == _BARE_KEY:
            self._key_open(text, self._token_offset)
        elif self._key is not None and self._rec is not None and state in _KEY_ONLY:
            self._rec.key(self._key)  # the delta ended after a key, before its value
        match = self._match
        if match is not None and match.position is None and self._state != _ERROR:
            match.position = self._position(text, match.offset - self._fed)

    def _key_open(self, text: str, offset: int) -> None:
        """The delta ``text`` ended inside a key that began at ``offset``. Where it began is
        known without this delta while no line break came since (see _key_begins); past
        one, its line and column are kept."""
        saved = self._key_position
        if "\n" in text and (saved is None or saved[0] != offset):
            line, column = self._key_begins(text, offset)
            self._key_position = (offset, line, column)

    def _key_begins(self, text: str, offset: int) -> tuple[int, int]:
        """Line and column of a key still being read (or just read) that began at
        ``offset``: in the current delta ``text``, or earlier with no line break since
        (else _key_open kept them)."""
        if offset >= self._fed:
            return self._position(text, offset - self._fed)
        saved = self._key_position
        if saved is not None and saved[0] == offset:
            return saved[1], saved[2]
        return self._ctx_line, offset - self._ctx_line_start + 1

    def _settle_string(self) -> None:
        """A delta ended inside a string: its pieces become one (the recorder gets it as
        the string's new text, or it is compared with a repeated key's first value) and the
        pieces are compacted when they are many."""
        parts = self._str_parts
        start = self._str_start
        if len(parts) - start > 1:
            parts[start:] = ["".join(parts[start:])]
        if not self._is_key:
            piece = parts[start] if len(parts) > start else ""
            if self._match is not None:
                self._compare_open_string(piece)
            elif self._rec is not None and len(parts) > start:
                self._shown(piece)
        if len(parts) - self._str_merged >= COMPACT_PIECES:
            self._compact()

    def _compact(self) -> None:
        if not self._str_merged:
            self._str_tiers.clear()
        self._str_merged = compact_pieces(self._str_parts, self._str_tiers, self._str_merged)

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
        if self._error is None:
            line, column = self._position("", 0)
            self._fail_with(
                ConcatenatedValuesError(values, offset=self._fed, line=line, column=column)
            )
        assert self._error is not None
        raise self._error

    def finish_values(self) -> tuple[Repaired, ...]:
        """Like :meth:`finish`, but return every top-level value of concatenated text
        (``{..}{..}``) separately instead of raising. Identical repeats are collapsed and
        empty ``{}`` placeholders before a real object are dropped; both are recorded as
        repairs on the value kept, which also keeps the dropped values' own repairs.

        After :meth:`finish` raised ``ConcatenatedValuesError``, this still returns the
        values (the status is then ``UNREPAIRABLE``, as after any raise of ``finish``)."""
        if self._result is None:
            try:
                self._result = self._close()
            except UnrepairableError as exc:
                self._result = exc
                if self._error is None:
                    self._fail_with(exc)
        if isinstance(self._result, UnrepairableError):
            raise self._result
        return self._result

    # -- the machine -----------------------------------------------------------------------

    def _run(self, text: str, n: int, pos: int = 0) -> None:
        while pos < n:
            state = self._state
            if state == _STRING:
                # An inner loop: stay in the string while its plain runs and simple
                # escapes last, which is most of a long argument.
                run = self._run_match
                parts = self._str_parts
                while True:
                    if self._pending_high is not None:
                        c = text[pos]
                        if "\udc00" <= c <= "\udfff":
                            # the low half of a pair whose high half came raw before it
                            self._raw_surrogate(c, pos + self._fed)
                            pos += 1
                            if pos >= n:
                                return
                            continue
                        if c != "\\":
                            self._flush_high()
                    if COMPILED:
                        end = plain_end(text, pos, n, ord(self._quote))
                        if end > pos:
                            parts.append(text[pos:end])
                            pos = end
                            if pos >= n:
                                return
                    else:
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
                                if decoded < " " and not self._str_flags & _CONTROL_ESCAPE:
                                    self._control_escape("")
                                parts.append(decoded)
                                pos += 2
                                if pos >= n:
                                    return
                                continue
                            m = UNICODE_RUN.match(text, pos, n)
                            if m is not None:
                                # \uXXXX escapes, all of a run in one step (pairs joined);
                                # a surrogate half left alone is the machine's to pair
                                decoded = scanstring(m.group() + '"', 0)[0]
                                if RAW_SURROGATE.search(decoded) is None:
                                    if CONTROL_U.search(m.group()) is not None:
                                        self._str_flags |= _OTHER_CONTROL
                                    parts.append(decoded)
                                    pos = m.end()
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
                        self._raw_surrogate(c, pos + self._fed)
                        pos += 1
                        if pos >= n:
                            return
                        continue
                    break
                continue

            c = text[pos]
            if c in " \t\n\r" and state in _SKIPS_WS:
                pos += 1  # one space (after ':' or ','), mostly: no regex for that
                if pos < n and text[pos] in " \t\n\r":
                    pos = (
                        ws_end(text, pos, n) if COMPILED else WS.match(text, pos, n).end()  # type: ignore[union-attr]
                    )
                if pos >= n:
                    return
                c = text[pos]

            if state == _AFTER:
                if c == ",":
                    top = self._stack[-1]
                    if self._match is not None:
                        pass  # a repeated key's value: member by member, compared
                    elif COMPILED:  # the lanes below, read by character
                        if isinstance(top, list):
                            pos = self._items(top, text, pos, n)
                            if pos < 0:
                                return
                        else:
                            at = pos
                            pos = self._members(top, text, pos, n)
                            if pos != at:
                                continue  # the machine goes on where the lane stopped
                        if text[pos] != ",":
                            continue
                    elif isinstance(top, list) and not text.startswith(_OPENING, pos + 1):
                        m = ARRAY_LANE.match(text, pos, n)
                        rec = self._rec
                        while m is not None:
                            value = m.group(1)
                            if value is None:
                                found = m.group(2)
                                if found is None:
                                    # The delta ends in a comma and (the start of) the next
                                    # number: go straight to where the machine would be.
                                    if not self._array_tail(m.group(3), m.start(3), pos):
                                        break
                                    return
                                value = scalar(found)
                            if rec is not None:
                                rec.assigned(top, None, value)
                            top.append(value)
                            pos = m.end()
                            m = ARRAY_LANE.match(text, pos, n)
                        if text[pos] != ",":
                            continue
                    else:
                        m = OBJECT_LANE.match(text, pos, n)
                        if m is not None:
                            rec = self._rec
                            while m is not None:
                                key = m.group(1)
                                if key in top:
                                    break  # a repeated key: the machine compares its value
                                pos = m.end()
                                found = m.group(3)
                                if found is None:  # the member goes on past the delta
                                    self._member_begun(key, m.group(2))
                                    break
                                value = lane_value(found)
                                if rec is not None:
                                    rec.assigned(top, key, value)
                                top[key] = value
                                m = OBJECT_LANE.match(text, pos, n)
                            if m is None or self._state != _AFTER:
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
                elif c == "\\":
                    pos = self._backslash(pos)
                else:
                    return self._fail(text, pos, "unexpected character", self._after_expected())

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
                    if c == '"' and stack:  # a whole plain string: in one step
                        if COMPILED:
                            end = plain_end(text, pos + 1, n, 34)
                            if end < n and text[end] == '"':
                                start = pos + 1
                                pos = end + 1
                                self._emit(text[start:end])
                                continue
                        else:
                            m = WHOLE_STRING.match(text, pos, n)
                            if m is not None:
                                pos = m.end()
                                self._emit(m.group(1))
                                continue
                    self._open_string(c, False, pos)
                    pos += 1
                elif c in TOKEN_START:  # a whole number or literal: in one step
                    if COMPILED:
                        end = scalar_end(text, pos, n)
                        if 0 <= end < n and ord(text[end]) in (32, 9, 10, 13, 44, 93, 125):
                            start = pos
                            pos = end
                            self._emit(scalar_value(text[start:end]))
                            continue
                    else:
                        m = WHOLE_SCALAR.match(text, pos, n)
                        if m is not None:
                            pos = m.end()
                            self._emit(scalar(m.group(1)))
                            continue
                    self._state = _TOKEN
                    self._commas = 0
                    self._token = ""
                    self._token_offset = pos + self._fed
                elif c == "\\":
                    pos = self._backslash(pos)
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
                    if COMPILED and c == '"':
                        end = self._member(text, pos, n)
                        if end >= 0:
                            pos = end
                            continue
                        if self._state == _ERROR:
                            return
                    elif c == '"':
                        m = KEY_MEMBER.match(text, pos, n)
                        if m is not None:
                            key = m.group(1)
                            top = self._stack[-1]
                            if key in top or self._match is not None:
                                if not self._key_again(key, pos + self._fed):
                                    return
                                pos = m.end(1) + 1  # its value is compared on the way
                                self._member_begun(key, None)
                                continue
                            pos = m.end()
                            found = m.group(3)
                            if found is None:  # the member goes on past the delta
                                self._member_begun(key, m.group(2))
                                continue
                            # The whole member is in the delta: in one step.
                            value = lane_value(found)
                            if self._rec is not None:
                                self._rec.assigned(top, key, value)
                            top[key] = value
                            self._fresh = False
                            self._commas = 0
                            self._state = _AFTER
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
                elif KEY_START.match(c):
                    if self._commas > 1:
                        return self._fail(
                            text, pos, "doubled comma between members", "one ',' between members"
                        )
                    # An unquoted identifier key ({path: "a.txt"}): read to its end.
                    self._state = _BARE_KEY
                    self._commas = 0
                    self._token = ""
                    self._token_offset = pos + self._fed
                elif c == "\\":
                    pos = self._backslash(pos)
                else:
                    expected = "a key or '}'"
                    return self._fail(text, pos, "unexpected character", expected)

            elif state == _COLON:
                if c == ":":
                    self._state = _VALUE
                    pos += 1
                elif c == "\\":
                    pos = self._backslash(pos)
                else:
                    return self._fail(text, pos, "missing ':' after key", "':'")

            elif state == _TOKEN:
                if COMPILED:  # as below, read by character
                    end = token_end(text, pos, n)
                    if pos < end < n and self._stack and self._long is None:
                        token = self._token + text[pos:end]
                        if number_end(token, 0, len(token), True) == len(token):
                            self._token = ""
                            pos = end
                            self._emit(scalar_value(token))
                            continue
                    if end > pos:
                        if not self._grow_token(text, pos, end):
                            return
                        pos = end
                        if pos >= n:
                            return
                else:
                    m = TOKEN_RUN.match(text, pos, n)
                    if m is not None and m.end() < n and self._stack and self._long is None:
                        # A number cut by the last delta ends here: read it directly.
                        token = self._token + m.group()
                        if NUMBER_LANE.fullmatch(token) is not None:
                            self._token = ""
                            pos = m.end()
                            self._emit(scalar(token))
                            continue
                    if m is not None:
                        if not self._grow_token(text, pos, m.end()):
                            return
                        pos = m.end()
                        if pos >= n:
                            return
                if not self._end_token(text, pos):
                    return

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
                elif c in "{[\"'" or c in NUMBER_START:
                    if self._fence:
                        return self._fail(text, pos, "second value inside a code fence", "'```'")
                    if self._commas:
                        return self._fail(
                            text, pos, "comma between top-level values", "one JSON value"
                        )
                    self._state = _VALUE
                elif c.isalpha():
                    pos = self._prose(pos)
                elif c == "\\":
                    pos = self._backslash(pos)
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
                    before = self._fence_info
                    self._fence_info += m.end() - pos
                    if self._fence_info > _MAX_FENCE_INFO:
                        # at the first character past the bound, whatever the chunking
                        bad = pos + _MAX_FENCE_INFO - before
                        return self._fail(text, bad, "code fence info string too long")
                    pos = m.end()
                    continue
                self._state = _VALUE
                self._fence_info = 0

            elif state == _FENCE_CLOSE:
                if c == "`":
                    self._fence_info += 1
                    pos += 1
                elif self._fence_info < self._fence:
                    # A closing fence is at least as long as the opening one (CommonMark).
                    expected = "'" + "`" * self._fence + "' or end of input"
                    return self._fail(text, pos, "stray backtick", expected)
                else:
                    self._state = _TAIL

            elif state == _TAIL:
                if c.isalpha():
                    pos = self._prose(pos)
                elif c == "\\":
                    pos = self._backslash(pos)
                else:
                    return self._fail(
                        text, pos, "text after the closing code fence", "end of input"
                    )

            elif state == _PROSE:
                # Prose after the value is dropped to the end; an object inside it might be
                # another call, so that is refused rather than dropped.
                brace = text.find("{", pos, n)
                if brace >= 0:
                    return self._fail(
                        text, brace, "a JSON object inside the text after the value", "end of input"
                    )
                return

            elif state == _BACKSLASH:
                # \n, \r or \t written between tokens (Qwen3.5-Flash's {\n"a": 1}).
                if c not in "nrt":
                    return self._fail(
                        text, pos, "a backslash outside a string", "'n', 'r' or 't' after it"
                    )
                assert self._current is not None
                self._current.note(
                    RepairKind.ESCAPED_WHITESPACE,
                    self._bs_offset,
                    f"read \\{c} between tokens as whitespace",
                )
                self._state = self._ws_return
                pos += 1

            elif state == _BARE_KEY:
                m = KEY_RUN.match(text, pos, n)
                if m is not None:
                    if len(self._token) + m.end() - pos > MAX_SCALAR_CHARS:
                        bad = pos + MAX_SCALAR_CHARS - len(self._token)
                        return self._fail(
                            text, bad, f"key longer than {MAX_SCALAR_CHARS} characters"
                        )
                    self._token += m.group()
                    pos = m.end()
                    if pos >= n:
                        return
                key = self._token
                self._token = ""
                assert self._current is not None
                self._current.note(
                    RepairKind.UNQUOTED_KEY,
                    self._token_offset,
                    f"read the unquoted key {key[:40]!r} as a string",
                )
                repeated = key in self._stack[-1] or self._match is not None
                if repeated and not self._key_again(key, self._token_offset):
                    return
                self._key = key
                self._state = _COLON

            else:  # _ERROR: unreachable, feed() refuses first
                return

    # -- the compiled build's lanes (character loops) ---------------------------------------

    def _items(self, top: list[Any], text: str, pos: int, n: int) -> int:
        """``ARRAY_LANE``'s loop, read by character: the items after the comma at ``pos``
        that the delta holds whole, each in one step. Returns where the machine goes on
        (a comma, or what follows the last item read), or -1 when the delta ended in the
        beginning of a number, where the machine's state is then set."""
        rec = self._rec
        while True:
            start, end = item_spans(text, pos, n)
            if start < 0:
                return pos
            if end < 0:
                # The delta ends in a comma and (the start of) the next number: go
                # straight to where the machine would be.
                return -1 if self._array_tail(text[start:n], start, pos) else pos
            value = item_value(text, start, end)
            if rec is not None:
                rec.assigned(top, None, value)
            top.append(value)
            pos = end

    def _members(self, top: dict[str, Any], text: str, pos: int, n: int) -> int:
        """``OBJECT_LANE``'s loop, read by character: the members after the comma at
        ``pos``, each as far as the delta holds it, in one step. Returns where the machine
        goes on: ``pos`` itself when no member was read (the comma is the machine's)."""
        rec = self._rec
        while text[pos] == ",":
            start = ws_end(text, pos + 1, n)
            if start >= n or text[start] != '"':
                break
            key_end, value_start, value_end = member_spans(text, start, n)
            if key_end < 0:
                break
            key = text[start + 1 : key_end]
            if key in top:
                break  # a repeated key: the machine compares its value
            if value_end < 0:  # the member goes on past the delta
                self._member_begun(key, value_start >= 0)
                return value_start if value_start >= 0 else key_end + 1
            value = item_value(text, value_start, value_end)
            if rec is not None:
                rec.assigned(top, key, value)
            top[key] = value
            pos = value_end
        return pos

    def _member(self, text: str, pos: int, n: int) -> int:
        """``KEY_MEMBER``'s step, read by character: the member whose key opens at
        ``pos``, as far as the delta holds it. Returns where the machine goes on, or -1
        when no member is there (or the machine failed on a repeated key)."""
        key_end, value_start, value_end = member_spans(text, pos, n)
        if key_end < 0:
            return -1
        key = text[pos + 1 : key_end]
        top: dict[str, Any] = self._stack[-1]
        if key in top or self._match is not None:
            if not self._key_again(key, pos + self._fed):
                return -1
            self._member_begun(key, False)
            return key_end + 1  # its value is compared on the way
        if value_end < 0:  # the member goes on past the delta
            self._member_begun(key, value_start >= 0)
            return value_start if value_start >= 0 else key_end + 1
        # The whole member is in the delta: in one step.
        value = item_value(text, value_start, value_end)
        if self._rec is not None:
            self._rec.assigned(top, key, value)
        top[key] = value
        self._fresh = False
        self._commas = 0
        self._state = _AFTER
        return value_end

    # -- helpers used by the machine ----------------------------------------------------------

    def _array_tail(self, number: str, start: int, comma: int) -> bool:
        """The delta ends after the comma at ``comma`` in an array and ``number``, the
        beginning of a number (or nothing), at ``start``: the machine's state there. False
        for a number too long to take this way."""
        if len(number) > 100:
            return False
        self._fresh = False
        if number:
            self._commas = 0
            self._token = number
            self._token_offset = start + self._fed
            self._state = _TOKEN
        else:
            self._commas = 1
            self._comma_offset = comma + self._fed
            self._state = _VALUE
        return True

    def _member_begun(self, key: str, colon: bool | str | None) -> None:
        """A member's key was read (and its colon, when ``colon``); its value comes next."""
        self._key = key
        self._commas = 0  # the comma before the key, if any, was a separator
        self._state = _VALUE if colon else _COLON

    def _start_value(self, offset: int) -> None:
        """A top-level value begins at ``offset`` (the first, or a concatenated one)."""
        value = ValueRecord(offset)
        if self._fence and not self._started:
            value.note(RepairKind.CODE_FENCE, self._fence_offset, "stripped a markdown code fence")
        self._started += 1
        self._current = value
        self._whole = False
        self._commas = 0

    def _value_done(self) -> None:
        """The current top-level value is whole: reduce it into the values so far."""
        current = self._current
        assert current is not None
        self._current = add_value(self._values, current)
        self._whole = True

    def _backslash(self, pos: int) -> int:
        """A backslash between tokens: it may start ``\\n`` read as whitespace."""
        self._ws_return = self._state
        self._state = _BACKSLASH
        self._bs_offset = pos + self._fed
        return pos + 1

    def _prose(self, pos: int) -> int:
        """Text after the complete top-level value begins at ``pos``: it is dropped."""
        assert self._current is not None
        self._current.note(
            RepairKind.TRAILING_TEXT, pos + self._fed, "dropped text after the complete value"
        )
        self._state = _PROSE
        return pos

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
        match = self._match
        if match is not None:
            target = self._target()
            if type(target) is not type(child):
                return self._repeat_failed()
            match.targets.append(target)
        if self._rec is not None:
            self._rec.opened(stack[-1] if stack else None, self._key, child)
        if stack:
            parent = stack[-1]
            if isinstance(parent, dict):
                if match is None or len(stack) > match.depth:
                    parent[self._key] = child  # (a repeated key's value stays outside)
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
        if self._rec is not None:
            self._rec.closed()
        stack = self._stack
        done = stack.pop()
        self._keys.pop()
        self._fresh = False
        self._commas = 0
        match = self._match
        if match is not None and len(stack) >= match.depth:
            # A container of a repeated key's value: every member was compared as it was
            # read, so the same count means the same value.
            if len(done) != len(match.targets.pop()):
                return self._repeat_failed()
            if len(stack) == match.depth:
                self._repeat_done()
        if stack:
            self._state = _AFTER
        else:
            assert self._current is not None
            self._current.value = done
            self._state = _END
            self._value_done()

    def _emit(self, value: Any) -> None:
        """A scalar value is complete: put it where it belongs."""
        stack = self._stack
        self._fresh = False
        self._commas = 0
        rec = self._rec
        if not stack:
            if rec is not None:
                rec.assigned(None, None, value)
            assert self._current is not None
            self._current.value = value
            self._state = _END
            self._value_done()
            return
        match = self._match
        if match is not None:
            if not same_json(self._target(), value):
                return self._repeat_failed()
            if len(stack) == match.depth:  # the repeated key's value: equal, dropped
                self._key = None
                self._state = _AFTER
                return self._repeat_done()
        top = stack[-1]
        if rec is not None:
            rec.assigned(top, self._key, value)
        if isinstance(top, dict):
            top[self._key] = value
            self._key = None
        elif self._slot:
            top[-1] = value  # the open string a preview showed
        else:
            items: list[Any] = top  # (a list: typed, the compiled build appends directly)
            items.append(value)
        self._slot = False
        self._state = _AFTER

    # -- repeated keys (_repeats.py) ------------------------------------------------------

    def _key_again(self, key: str, offset: int) -> bool:
        """A key was read (beginning at absolute ``offset``) that its object already has,
        or any key inside a repeated key's value. Returns False when the machine failed."""
        match = self._match
        if match is None:
            # Read the new value against the first one, which is whole: an earlier member.
            position = self._key_begins("", offset) if offset < self._fed else None
            top = self._stack[-1]
            self._match = Repeat(key, top[key], len(self._stack), offset, position)
            self._rec = None  # the repeated value is never reported
            return True
        if key not in match.targets[-1]:
            self._repeat_failed()  # a member the first value does not have
            return False
        if key in self._stack[-1]:  # written twice in there as well: compared all the same
            self._note_repeat(key, offset)
        return True

    def _target(self) -> Any:
        """What the value beginning now must end equal to: the first value of the repeated
        key, or the member of it at the same place."""
        match = self._match
        assert match is not None
        stack = self._stack
        if len(stack) == match.depth:
            return match.first
        top = stack[-1]
        outer = match.targets[-1]
        if type(top) is dict:
            return outer[self._key]  # checked when the key was read
        return outer[len(top)] if len(top) < len(outer) else _ABSENT

    def _compare_open_string(self, piece: str) -> None:
        """The delta ended inside a string under a repeated key: ``piece`` is its new
        decoded text. Fails when no continuation can end it equal to the first value."""
        match = self._match
        assert match is not None
        literal = None
        if match.literal_at >= 0 and not self._str_flags & _OTHER_CONTROL:
            literal = piece.translate(LITERAL_CONTROLS)  # the ambiguous-escapes reading
        match.grew(piece, literal)
        state = self._state
        hex_digits = self._hex if state == _UNICODE else None
        held = "'" + self._held if state == _QUOTE_END else None
        for at in (match.at, match.literal_at):
            if at >= 0 and text_continues(
                match.text,
                at,
                high=self._pending_high,
                escape=state == _ESCAPE,
                hex_digits=hex_digits,
                held=held,
            ):
                return
        self._repeat_failed()

    def _repeat_done(self) -> None:
        """The repeated key's value ended equal to the first: dropped, and recorded."""
        match = self._match
        assert match is not None
        self._match = None
        self._rec = self._changes
        self._note_repeat(match.key, match.offset)

    def _note_repeat(self, key: str, offset: int) -> None:
        assert self._current is not None
        self._current.note(
            RepairKind.DUPLICATE_KEY,
            offset,
            f"kept one of the equal values of the key {key[:40]!r}, written twice",
        )

    def _repeat_failed(self) -> None:
        """The repeated key's value can no longer end equal to the first: refused, at the
        second key (what the model must fix), whichever character decided it."""
        match = self._match
        assert match is not None
        position = match.position
        if position is None:  # the key is in the current delta
            position = self._position(self._delta, match.offset - self._fed)
        line, column = position
        self._fail_with(
            UnrepairableError(
                f"key {match.key[:40]!r} written twice with different values",
                offset=match.offset,
                line=line,
                column=column,
                expected="each key written once",
            )
        )

    def _drop_repeat(self, end: int) -> None:
        """The text ended inside a repeated key's value: the value is dropped (the first
        one stays) and the member recorded as cut off."""
        match = self._match
        assert match is not None
        self._match = None
        self._rec = self._changes
        del self._stack[match.depth :]
        del self._keys[match.depth :]
        self._state = _AFTER
        self._key = None
        self._is_key = False
        self._token = ""
        self._long = None
        self._str_parts = []
        self._pending_high = None
        self._hold = None
        self._commas = 0
        assert self._current is not None
        self._current.note(
            RepairKind.DANGLING_DROPPED,
            end,
            f"dropped the repeated key {match.key[:40]!r} and its value, cut off at the end",
        )

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
        if not COMPILED:  # (the compiled build reads the runs by character)
            self._run_match = DQ_RUN.match if quote == '"' else SQ_RUN.match
        self._is_key = is_key
        self._str_parts = []
        self._str_start = 0
        self._str_merged = 0
        self._str_flags = 0
        self._hold = None
        self._pathlike = None
        if self._rec is not None and not is_key and self._stack:
            self._rec.string_opened(self._stack[-1], self._key)
        self._str_offset = pos + self._fed
        self._state = _STRING
        self._commas = 0  # the held comma, if any, was a separator
        if quote == "'":
            assert self._current is not None
            self._current.note(
                RepairKind.SINGLE_QUOTES, pos + self._fed, "read a single-quoted string"
            )
        match = self._match
        if match is not None and not is_key:
            target = self._target()
            if type(target) is not str:
                return self._repeat_failed()
            match.open_text(target, literal=self._under_path_key())

    def _string_so_far(self) -> str:
        parts = self._str_parts
        if len(parts) > 1:
            joined = "".join(parts)
            parts.clear()
            parts.append(joined)
            self._str_merged = 1  # compaction leaves the joined text alone
        return parts[0] if parts else ""

    def _close_string(self) -> None:
        if self._pending_high is not None:
            self._flush_high()
        text = self._string_value()
        if self._is_key:
            repeated = text in self._stack[-1] or self._match is not None
            if repeated and not self._key_again(text, self._str_offset):
                return
            self._key = text
            self._state = _COLON
            return
        if not self._stack:
            value, result, unsettled = self._unwrapped(text)
            if result is not None:
                self._note_unwrapped(result)
                self._unsettled += unsettled
            self._emit(value)
            return
        self._emit(text)

    def _string_value(self) -> str:
        """The closed string's text, read under the ambiguous-escapes rule: in a string
        that shows a raw backslash (an invalid escape), ``\\b \\f \\n \\r \\t`` may
        have been raw backslashes too (``C:\\Users\\new``). Under a path-like key they
        are read back literally; elsewhere JSON's reading stays. Either way the choice is
        recorded, never silent (docs/repairs.md). The decision looks only at flags kept
        while reading, and rewrites the string at most once."""
        text = self._string_so_far()
        self._str_parts = []
        self._hold = None
        flags = self._str_flags
        if flags & _INVALID and flags & _CONTROL_ESCAPE:
            assert self._current is not None
            if not flags & _OTHER_CONTROL and self._under_path_key():
                text = text.translate(LITERAL_CONTROLS)
                description = (
                    "read \\b \\f \\n \\r \\t literally in a path that shows raw backslashes"
                )
            else:
                description = (
                    "kept JSON's reading of \\b \\f \\n \\r \\t in a string that also shows "
                    "raw backslashes; they may have been meant literally"
                )
                self._unsettled += 1
            self._current.note(RepairKind.AMBIGUOUS_ESCAPES, self._str_offset, description)
        return text

    def _unwrapped(self, text: str) -> tuple[Any, Repaired | None, int]:
        """A whole argument that is a JSON string holding a JSON object is unwrapped: the
        object, the inner result and the inner text's :attr:`unsettled_escapes`, or
        ``(text, None, 0)``."""
        if text.lstrip()[:1] not in ("{", '"'):
            return text, None, 0
        inner = ArgumentAssembler(max_size=len(text), max_depth=self._max_depth)
        inner.feed(text)
        if inner.status is not Status.COMPLETE:
            return text, None, 0
        result = inner.finish()
        if not isinstance(result.value, dict):
            return text, None, 0
        return result.value, result, inner._unsettled

    def _note_unwrapped(self, result: Repaired) -> None:
        current = self._current
        assert current is not None
        current.note(
            RepairKind.DOUBLE_ENCODED,
            self._str_offset,
            "unwrapped a JSON object sent as a JSON string",
        )
        for rec in result.repairs:
            current.note(
                rec.kind,
                self._str_offset,
                f"inside the double-encoded string: {rec.description}",
                rec.count,
            )

    def _str_note(self, kind: RepairKind, offset: int, description: str) -> None:
        """Record a repair at absolute ``offset`` inside the current string (one record
        per kind per value, counting further occurrences)."""
        assert self._current is not None
        self._current.note(kind, offset, description)

    def _lone_surrogate(self, offset: int) -> None:
        self._str_note(RepairKind.LONE_SURROGATE, offset, "lone surrogate replaced by U+FFFD")
        self._str_parts.append("\ufffd")

    def _raw_surrogate(self, c: str, offset: int) -> None:
        """A raw surrogate code point (as a provider's per-chunk JSON decoding leaves the
        halves of an emoji): a high half waits for its low half, within a delta or across
        deltas; only a truly lone half becomes U+FFFD."""
        if c <= "\udbff":
            if self._pending_high is not None:
                self._flush_high()
            self._pending_high = ord(c)
            self._high_offset = offset
        elif self._pending_high is not None:
            high = self._pending_high
            self._pending_high = None
            self._str_parts.append(chr(0x10000 + ((high - 0xD800) << 10) + (ord(c) - 0xDC00)))
        else:
            self._lone_surrogate(offset)

    def _control_escape(self, before: str) -> None:
        """The open string's first escape that decodes to a control character (``\\n``);
        ``before`` is decoded text not yet in its pieces. Under a path-like key, previews
        hold the string where it was, since its reading is decided when it closes."""
        self._str_flags |= _CONTROL_ESCAPE
        if self._under_path_key():
            # (joined aside: the pieces of the current delta stay as they are)
            self._hold = "".join(self._str_parts) + before

    def _under_path_key(self) -> bool:
        """Whether the open string is a value under a path-like key (``path``,
        ``file_path``, each element of ``paths``); asked only when it matters."""
        if self._pathlike is None:
            self._pathlike = False
            if not self._is_key and self._stack:
                top = self._stack[-1]
                key = self._key if isinstance(top, dict) else self._keys[-1]
                self._pathlike = path_like(key)
        return self._pathlike

    def _control(self, c: str, offset: int) -> None:
        """A raw control character inside a string: kept as the character it is (an ANSI
        colour code's ESC, a form feed), and recorded."""
        self._str_flags |= _OTHER_CONTROL
        name = CONTROL_NAMES.get(c)
        self._str_note(
            RepairKind.RAW_CONTROL_CHARACTER,
            offset,
            f"kept a raw {name} inside a string as content"
            if name
            else f"kept raw control character U+{ord(c):04X} inside a string as content",
        )
        self._str_parts.append(c)

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
            if decoded < " " and not self._str_flags & _CONTROL_ESCAPE:
                self._control_escape("")
            self._str_parts.append(decoded)
            return
        # An invalid escape such as \U in C:\Users: keep the backslash as written and let
        # the character be read again as ordinary string content.
        self._str_flags |= _INVALID
        self._str_note(
            RepairKind.INVALID_ESCAPE,
            offset - 1,
            f"kept the backslash of an invalid escape (first: \\{c})",
        )
        self._str_parts.append("\\")
        if c < " ":
            self._control(c, offset)
        elif "\ud800" <= c <= "\udfff":
            self._raw_surrogate(c, offset)
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
            if code < 0x20:
                self._str_flags |= _OTHER_CONTROL
            self._str_parts.append(chr(code))

    def _bad_unicode(self, offset: int) -> None:
        """``\\u`` without four hex digits: keep what was written; the character at
        ``offset`` is then read again as string content."""
        if self._pending_high is not None:
            self._flush_high()
        self._str_flags |= _INVALID
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
        if self._pending_high is not None:
            self._flush_high()  # a high surrogate before the quote was left alone
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
        """Whether some continuation of ``token`` is a value here (so every prefix of a
        viable token is viable): a number that has overflowed a float past recall is not,
        unless, in a container, it may still be an unquoted UUID (``123e4567-...``)."""
        if not (COMPILED and number_prefix_end(token, 0, len(token)) == len(token)):
            # (the beginning of a number is viable in both patterns)
            pattern = INNER_VIABLE if self._stack else TOP_VIABLE
            if pattern.fullmatch(token) is None:
                return False
        if ("e" in token or "E" in token) and overflows(token):
            return bool(self._stack) and UUID_VIABLE.fullmatch(token) is not None
        return True

    def _first_unviable(self, token: str, start: int) -> int:
        """Where ``token``, viable up to ``start``, stops being viable (a binary search:
        viability is kept by prefixes)."""
        low, high = start, len(token)  # token[:low] viable, token[:high] not
        while high - low > 1:
            mid = (low + high) // 2
            if self._viable(token[:mid]):
                low = mid
            else:
                high = mid
        return low

    def _grow_token(self, text: str, pos: int, end: int) -> bool:
        """``text[pos:end]``, token characters, continue the token; returns False when
        the machine failed. Only what arrived is checked again with the token (at most
        ``MAX_SCALAR_CHARS`` of it), so the failing character is found whatever the
        chunking. A number inside a container may be longer: past the bound it is kept
        in pieces and each piece is checked against the number's signature only."""
        piece = text[pos:end]
        if self._long is not None:
            grown = self._token + piece
            good = NUMBER_PREFIX_LONGEST.match(grown).end()  # type: ignore[union-attr]
            if good < len(grown):
                bad = pos + good - len(self._token)
                self._fail(text, bad, "not a JSON value", self._token_expected())
                return False
            self._long.append(piece)
            self._token = number_signature(grown)
            return True
        start = len(self._token)
        token = self._token + piece
        bad = len(token)
        if bad > MAX_SCALAR_CHARS + 1 and not self._stack:
            bad = MAX_SCALAR_CHARS + 1  # nothing past the bound is read at the top level
        if not self._viable(token[:bad]):
            bad = self._first_unviable(token, start)
        if self._match is not None and not token_continues(token[:bad], self._target()):
            # under a repeated key: it can no longer read as the first value, before it
            # stops being a value at all
            self._repeat_failed()
            return False
        if bad > MAX_SCALAR_CHARS:
            if self._stack and token[:1] in NUMBER_START:
                # Not a word but a number, which in a container may be as long as Python
                # reads one (as json.loads does); kept in pieces from here on.
                good = NUMBER_PREFIX_LONGEST.match(token).end()  # type: ignore[union-attr]
                if good < len(token):
                    self._fail(text, pos + good - start, "not a JSON value", self._token_expected())
                    return False
                self._long = [token]
                self._token = number_signature(token)
                return True
            self._fail(
                text,
                pos + MAX_SCALAR_CHARS - start,
                f"number or word longer than {MAX_SCALAR_CHARS} characters",
            )
            return False
        if bad < len(token):
            reason = "number out of range" if overflows(token[: bad + 1]) else "not a JSON value"
            self._fail(text, pos + bad - start, reason, self._token_expected())
            return False
        self._token = token
        return True

    def _token_expected(self) -> str:
        if self._stack:
            return "a number, true, false, null or a quoted string"
        return "a JSON value"

    def _token_text(self) -> str:
        """The token read so far (a long number's pieces joined, once)."""
        if self._long is None:
            return self._token
        token = "".join(self._long)
        self._long = None
        self._token = token
        return token

    def _end_token(self, text: str, pos: int) -> bool:
        """The token ended before ``text[pos]``; returns False when the machine failed."""
        token = self._token_text()
        found = classify(token, in_container=bool(self._stack))
        if found is None:
            # The token was viable up to here; the character that ended it is the first
            # one that makes it impossible (``tru}``, ``n,``, a number past a float's range
            # that an exponent could still have brought back: ``1000...0.5]``).
            self._fail(text, pos, _not_a_value(token), self._token_expected())
            return False
        self._token = ""
        if found[1] is not None:
            self._note_token(token, found)
        self._emit(found[0])
        return True

    def _note_token(self, token: str, found: tuple[Any, RepairKind | None]) -> None:
        current = self._current
        assert current is not None
        value, kind = found
        if kind is RepairKind.PYTHON_LITERAL:
            current.note(
                kind,
                self._token_offset,
                f"read Python literal {token} as {json.dumps(PY_LITERALS[token])}",
            )
        elif kind is RepairKind.LITERAL_CASE:
            current.note(kind, self._token_offset, f"read {token} as {json.dumps(value)}")
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
        current = self._current
        if current is None:
            what = "only a code fence" if self._fence else "no JSON value"
            raise UnrepairableError(
                f"empty argument: {what} arrived",
                offset=end,
                line=line,
                column=column,
                expected="a JSON value",
            )
        stack = self._stack
        if self._match is not None:
            self._drop_repeat(end)
            state = self._state
        if state == _BACKSLASH:
            current.note(
                RepairKind.DANGLING_DROPPED,
                self._bs_offset,
                "dropped a backslash cut off at the end",
            )
            state = self._state = self._ws_return
        if state == _FENCE_CLOSE and self._fence_info < self._fence:
            raise UnrepairableError(
                "stray backtick: the closing code fence is shorter than the opening one",
                offset=end,
                line=line,
                column=column,
                expected="'" + "`" * self._fence + "'",
            )
        rec = self._rec
        if rec is not None and state in _IN_STRING and (stack or state != _QUOTE_END):
            # Closing a string the model left open is not reported (see changes.py).
            self._rec = None
            rec.str_path = None
        if state == _QUOTE_END:
            self._close_string()
        elif state in _IN_STRING:
            if self._is_key:
                current.note(RepairKind.DANGLING_DROPPED, end, "dropped a key cut off at the end")
                self._state = _AFTER
            else:
                self._pending_high = None
                current.note(RepairKind.UNCLOSED_STRING, end, "closed a string cut off at the end")
                self._emit(self._string_value())
        elif state == _TOKEN:
            token = self._token_text()
            self._token = ""
            if stack:
                current.note(
                    RepairKind.DANGLING_DROPPED,
                    end,
                    f"dropped {token[:40]!r} cut off at the end"
                    + (" and its key" if isinstance(stack[-1], dict) else ""),
                )
                self._key = None
            else:
                found = classify(token, in_container=False)
                if found is None:
                    # the end of input is the first place where it cannot be a value
                    raise UnrepairableError(
                        _not_a_value(token),
                        offset=end,
                        line=line,
                        column=column,
                        expected="a JSON value",
                    )
                self._note_token(token, found)
                self._emit(found[0])
        elif state == _BARE_KEY:
            current.note(RepairKind.DANGLING_DROPPED, end, "dropped a key cut off at the end")
            self._token = ""
            self._state = _AFTER
        if self._match is not None:  # a single-quoted key just closed, and it repeats
            self._match = None
        self._rec = rec
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
        if not self._whole:
            self._value_done()
        self._state = _END
        return tuple(value.freeze() for value in self._values)
