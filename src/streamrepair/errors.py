"""Every exception streamrepair raises on purpose, in one tree.

::

    StreamRepairError
    ├── UnrepairableError (ValueError)        argument text no repair can fix
    │   ├── TooLargeError                     a size bound was hit
    │   ├── TooDeepError                      a depth bound was hit
    │   └── ConcatenatedValuesError           {..}{..}: several distinct values
    ├── SSEError                              bytes that are not a usable event stream
    │   ├── SSELimitError                     a line or event passed its bound
    │   └── SSEDecodeError                    a line that is not UTF-8
    ├── EventStreamError (ValueError)         bytes that are not a usable AWS event stream
    ├── ChangeOrderError (ValueError)         preview changes out of order, or of two values
    ├── UnsupportedChunkError (ValueError)    a chunk no provider format describes
    ├── ClosedError (RuntimeError)            a push core fed after finish()/abort()
    ├── HistoryError (ValueError)             input that cannot become a valid history
    ├── UnansweredCallsError (RuntimeError)   sending while calls have no answer
    ├── AbortFenceError (RuntimeError)        a handler on a phase that is not active
    ├── InstallError (ValueError)             a settings file that cannot be updated safely
    ├── UpstreamError (ConnectionError)       the proxy could not talk to its upstream
    │   ├── UpstreamTimeout                   no answer in time
    │   ├── UpstreamUnreachable               no answer at all
    │   └── UpstreamBroken                    the answer's body stopped mid-way
    └── ServiceLimitError                     the proxy is at one of its service limits

Parsing errors carry where they happened (``offset``, ``line``, ``column``), why
(``reason``) and what would have been accepted there (``expected``), so a harness can tell
the model exactly what to fix. Every error pickles and copies with its attributes, so it
can cross a process boundary (worker pools, telemetry queues).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .results import Repaired

__all__ = [
    "AbortFenceError",
    "ChangeOrderError",
    "ClosedError",
    "ConcatenatedValuesError",
    "EventStreamError",
    "HistoryError",
    "InstallError",
    "SSEDecodeError",
    "SSEError",
    "SSELimitError",
    "ServiceLimitError",
    "StreamRepairError",
    "TooDeepError",
    "TooLargeError",
    "UnansweredCallsError",
    "UnrepairableError",
    "UnsupportedChunkError",
    "UpstreamBroken",
    "UpstreamError",
    "UpstreamTimeout",
    "UpstreamUnreachable",
]


class StreamRepairError(Exception):
    """Base class of every exception streamrepair raises on purpose."""

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only constructors cannot be rebuilt from ``args``: restore the instance
        # from its attributes instead (pickle, copy and deepcopy all go through here).
        return (_rebuild, (type(self), self.args, self.__dict__))


def _rebuild(cls: type[StreamRepairError], args: tuple[Any, ...], state: dict[str, Any]) -> Any:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class UnrepairableError(StreamRepairError, ValueError):
    """The argument text cannot be turned into a value without guessing.

    Attributes:
        reason: a short human sentence saying what is wrong.
        offset: 0-based character offset of the first impossible character
            (or of the end of input when the problem is that nothing arrived).
        line, column: 1-based position of that character.
        expected: what would have been accepted there, e.g. ``"',' or '}'"``;
            empty when nothing could have been.
    """

    def __init__(
        self,
        reason: str,
        *,
        offset: int,
        line: int,
        column: int,
        expected: str = "",
    ) -> None:
        self.reason = reason
        self.offset = offset
        self.line = line
        self.column = column
        self.expected = expected
        message = f"{reason} at line {line} column {column} (offset {offset})"
        if expected:
            message += f"; expected {expected}"
        super().__init__(message)


class TooLargeError(UnrepairableError):
    """The text passed a size bound (``max_size`` of an assembler, or the repair bound
    of :func:`streamrepair.repair`). ``limit`` holds the bound that was hit."""

    def __init__(self, reason: str, *, limit: int, offset: int, line: int, column: int) -> None:
        self.limit = limit
        super().__init__(reason, offset=offset, line=line, column=column)


class TooDeepError(UnrepairableError):
    """Containers nested deeper than ``max_depth``. ``limit`` holds that bound."""

    def __init__(self, reason: str, *, limit: int, offset: int, line: int, column: int) -> None:
        self.limit = limit
        super().__init__(reason, offset=offset, line=line, column=column)


class ConcatenatedValuesError(UnrepairableError):
    """The text holds several distinct top-level values (``{..}{..}``).

    Providers that merge parallel tool calls produce this. It is never merged into one
    object; ``values`` holds each value (as :class:`~streamrepair.Repaired`) so a caller,
    like the stream layer, can turn them into separate calls.
    """

    def __init__(
        self, values: tuple[Repaired, ...], *, offset: int, line: int, column: int
    ) -> None:
        self.values = values
        self.count = len(values)
        super().__init__(
            f"{self.count} distinct top-level values were concatenated",
            offset=offset,
            line=line,
            column=column,
            expected="one JSON object",
        )


class SSEError(StreamRepairError):
    """The byte stream is not a usable ``text/event-stream``.

    ``offset`` is the 0-based byte offset in the stream where the problem was found and
    ``line`` the 1-based line number there.
    """

    def __init__(self, reason: str, *, offset: int, line: int) -> None:
        self.reason = reason
        self.offset = offset
        self.line = line
        super().__init__(f"{reason} (line {line}, byte offset {offset})")


class SSELimitError(SSEError):
    """A line or an event's data passed its bound; ``limit`` holds that bound."""

    def __init__(self, reason: str, *, limit: int, offset: int, line: int) -> None:
        self.limit = limit
        super().__init__(reason, offset=offset, line=line)


class SSEDecodeError(SSEError):
    """A line is not valid UTF-8."""


class EventStreamError(StreamRepairError, ValueError):
    """Bytes that are not a well-formed AWS event stream
    (``application/vnd.amazon.eventstream``, Bedrock's framing): a checksum that does not
    match, a length out of bounds, a header that cannot be read, a message cut by the end.

    ``offset`` is the 0-based byte offset in the stream of the message where the problem
    was found; ``limit`` is set when a bound was passed.
    """

    def __init__(self, reason: str, *, offset: int, limit: int | None = None) -> None:
        self.reason = reason
        self.offset = offset
        self.limit = limit
        super().__init__(
            f"AWS event stream (application/vnd.amazon.eventstream): {reason} "
            f"(message at byte offset {offset})"
        )


class ChangeOrderError(StreamRepairError, ValueError):
    """Preview changes that one value's changes could not be, given to a
    :class:`~streamrepair.syntax.ValueBuilder` or an :class:`~streamrepair.syntax.IjsonAdapter`:
    skipped, out of order, or the changes of two calls mixed in one consumer (keep one per
    ``call_id``). Nothing of the offending change was applied.

    ``change`` is the offending change, ``reason`` what was wrong with it, ``index`` its
    position among the changes of that call (``feed``/``apply_all``) and ``events`` the
    ijson events the changes before it completed (an adapter's; empty for a builder).
    """

    def __init__(
        self,
        reason: str,
        *,
        change: object,
        index: int = 0,
        events: tuple[tuple[Any, ...], ...] = (),
    ) -> None:
        self.reason = reason
        self.change = change
        self.index = index
        self.events = events
        super().__init__(f"{reason}: change {index}, {change!r}")


class UnsupportedChunkError(StreamRepairError, ValueError):
    """A chunk is not a mapping, or not of any provider format the stream layer reads."""


class ClosedError(StreamRepairError, RuntimeError):
    """A push core (an assembler, an SSE or JSON-lines decoder, a tracker, a stream) was
    fed or finished after its caller had already called ``finish()`` or ``abort()``.

    Input that arrives after the *data* itself ended the stream (bytes after ``[DONE]``)
    is not an error: it is ignored and counted. Only a second use after the caller
    closed the core raises this.
    """


class HistoryError(StreamRepairError, ValueError):
    """The input cannot become a valid history: another provider's format, a stream
    that is not over, an unknown call id, a call answered twice."""


class UnansweredCallsError(StreamRepairError, RuntimeError):
    """Calls of the last assistant message have no answer yet; sending now would be
    rejected. ``call_ids`` lists them in call order."""

    def __init__(self, call_ids: tuple[str, ...]) -> None:
        self.call_ids = call_ids
        super().__init__(
            "these calls have no answer yet: "
            + ", ".join(call_ids)
            + " (answer() each, or cancel_pending())"
        )


class AbortFenceError(StreamRepairError, RuntimeError):
    """A handler was registered on a phase that is not active, or with no phase active."""


class InstallError(StreamRepairError, ValueError):
    """A file cannot be updated safely (it is not what it should be); nothing was written."""


class UpstreamError(StreamRepairError, ConnectionError):
    """The proxy could not talk to its upstream. ``kind`` names the underlying failure
    (the HTTP client's exception class name: never a URL, a header or a body)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class UpstreamTimeout(UpstreamError):
    """Connecting, or waiting for the answer's head, took longer than allowed."""


class UpstreamUnreachable(UpstreamError):
    """No answer: the connection was refused or reset, or the answer was not HTTP."""


class UpstreamBroken(UpstreamError):
    """The answer's body stopped mid-way: the connection broke, or no byte came within
    the read timeout."""


class ServiceLimitError(StreamRepairError):
    """The proxy refused a request because one of its named service limits is reached
    (``limit``: ``upstream_connections``, ``request_bytes_in_flight``, ``requests`` or
    ``open_files``; ``capacity``: its size). The proxy answers it with a 503 and
    ``Retry-After: retry_after`` (seconds), before any byte went upstream."""

    def __init__(self, message: str, *, limit: str, capacity: int, retry_after: int = 1) -> None:
        super().__init__(message)
        self.limit = limit
        self.capacity = capacity
        self.retry_after = retry_after
