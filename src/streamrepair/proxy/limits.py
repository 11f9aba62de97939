"""The proxy's service limits: what it refuses with a ``503`` and ``Retry-After`` rather
than fail, hang or run out of memory or descriptors (issue 22).

Theory of operation
-------------------
Each :class:`Limit` is a named count of something in use and its capacity; ``take``
raises :class:`~streamrepair.errors.ServiceLimitError` (and counts the refusal) instead of
going past it, ``give`` returns what was taken. No I/O, no awaiting: a request is refused
at once, never queued (a queue would turn into the 504 after 10 s that issue 22 saw when
the upstream pool was full). The app takes and gives (``service.py``, ``upstream.py``);
the ``503`` is written once, in ``service.py``.

The limits (:data:`LIMIT_NAMES`):

* ``upstream_connections``: requests waiting on or reading from the upstream at once:
  the upstream connection pool (``--pool-size``, :data:`DEFAULT_POOL_SIZE`). The pool
  itself never waits for a free connection: a request that would wait is refused.
* ``request_bytes_in_flight``: request body bytes being read or worked on at once
  (``--max-bytes-in-flight``, :data:`DEFAULT_MAX_BYTES_IN_FLIGHT`): eight 31 MiB bodies
  at once took the proxy to 880 MB.
* ``open_files``: descriptors. Every client connection holds one and every upstream
  connection another; the soft open-file limit, less :data:`RESERVED_FILES` for
  everything else, is split (:func:`split_files`): at most half for the upstream pool,
  the rest for client connections. The server's protocol admits the first connections
  up to that share (:data:`CLIENT_CONNECTIONS`; under another server, the requests in
  flight are counted instead); a request on a connection past it is refused, and its
  connection closed to give its descriptor back, while the admitted ones are served.
  :func:`raise_open_file_limit` raises the soft limit to the hard one at start.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from ..errors import ServiceLimitError

__all__ = [
    "ADMITTED",
    "CLIENT_CONNECTIONS",
    "DEFAULT_MAX_BYTES_IN_FLIGHT",
    "DEFAULT_POOL_SIZE",
    "LIMIT_NAMES",
    "RESERVED_FILES",
    "RETRY_AFTER",
    "ConnectionCount",
    "Limit",
    "Limits",
    "OpenFileLimit",
    "is_out_of_files",
    "raise_open_file_limit",
    "split_files",
]

#: Upstream connections at once (requests waiting on or reading from the upstream).
DEFAULT_POOL_SIZE: Final = 512
#: Request body bytes read or worked on at once: four bodies of the largest size
#: accepted (32 MiB each), about 0.5 GB once parsed.
DEFAULT_MAX_BYTES_IN_FLIGHT: Final = 128 * 2**20
#: Descriptors kept for what is not a request's two sockets: the listening socket, the
#: event loop's own, the store, the telemetry log, logging, the odd import.
RESERVED_FILES: Final = 64
#: Seconds a refused client is told to wait (``Retry-After``).
RETRY_AFTER: Final = 1
#: The names of the limits, as the 503's body, the access log and ``/metrics`` give them.
LIMIT_NAMES: Final = ("upstream_connections", "request_bytes_in_flight", "open_files")
#: A soft limit to try when the hard one is unlimited (macOS: ``OPEN_MAX`` is 10,240).
_UNLIMITED_TRIES: Final = (1 << 20, 65536, 10240)


class Limit:
    """One named limit: how much is in use, out of ``capacity``, and how often a
    request was refused for it."""

    __slots__ = ("capacity", "hint", "in_use", "name", "refused")

    def __init__(self, name: str, capacity: int, hint: str) -> None:
        if capacity < 1:
            raise ValueError(f"{name} must be at least 1, not {capacity}")
        self.name = name
        self.capacity = capacity
        self.hint = hint  # what sets it, for the refusal's message
        self.in_use = 0
        self.refused = 0

    def take(self, amount: int = 1) -> None:
        """Take ``amount``, or raise :meth:`refusal` (nothing taken) when that would
        pass the capacity."""
        if self.in_use + amount > self.capacity:
            raise self.refusal()
        self.in_use += amount

    def refusal(self) -> ServiceLimitError:
        """The error that refuses a request for this limit (counted in :attr:`refused`):
        also for a limit the operating system enforced first (``EMFILE``)."""
        self.refused += 1
        return ServiceLimitError(
            f"the proxy is at its {self.name} limit ({self.capacity}; {self.hint}): "
            f"retry in {RETRY_AFTER} s",
            limit=self.name,
            capacity=self.capacity,
            retry_after=RETRY_AFTER,
        )

    def give(self, amount: int = 1) -> None:
        """Give back what :meth:`take` took."""
        self.in_use = max(0, self.in_use - amount)


@dataclass(frozen=True, slots=True)
class OpenFileLimit:
    """The process's open-file limit as :func:`raise_open_file_limit` left it."""

    before: int  # the soft limit found at start
    soft: int  # the soft limit now
    hard: int  # the hard limit (-1: unlimited)

    def describe(self) -> str:
        """One line for the log."""
        hard = "unlimited" if self.hard < 0 else str(self.hard)
        if self.soft > self.before:
            return f"open-file limit raised from {self.before} to {self.soft} (hard limit {hard})"
        if self.soft == self.hard:
            return f"open-file limit {self.soft} (the hard limit)"
        return f"open-file limit {self.soft} (hard limit {hard}; could not be raised)"


def raise_open_file_limit() -> OpenFileLimit:
    """Raise the soft ``RLIMIT_NOFILE`` to the hard one (a shell's soft limit is often
    256 on macOS or 1,024 on Linux; each stream needs two descriptors). Where there is
    no such limit (Windows), an unlimited one is reported."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return OpenFileLimit(before=-1, soft=-1, hard=-1)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    unlimited = hard == resource.RLIM_INFINITY
    tries = _UNLIMITED_TRIES if unlimited else (hard,)
    now = soft
    for target in tries:
        if target <= soft:
            break
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            continue
        now = target
        break
    return OpenFileLimit(before=soft, soft=now, hard=-1 if unlimited else hard)


def split_files(soft_limit: int, pool_size: int) -> tuple[int, int]:
    """(upstream connections, client connections) a soft open-file limit leaves room
    for: :data:`RESERVED_FILES` kept, at most half of the rest for the pool (and no more
    than ``pool_size``), the rest for clients; each at least 1. A negative limit is
    unlimited."""
    if soft_limit < 0:
        return pool_size, 1 << 30
    budget = max(2, soft_limit - RESERVED_FILES)
    pool = max(1, min(pool_size, budget // 2))
    return pool, max(1, budget - pool)


class ConnectionCount:
    """Client connections this process holds open, and how many of them were admitted
    (at most ``capacity``, the client share of the descriptors): counted by ``serve``'s
    protocol (``server.py``), which puts whether a connection was admitted in its
    requests' scope (:data:`ADMITTED`)."""

    __slots__ = ("admitted", "capacity", "open")

    def __init__(self) -> None:
        self.open = 0
        self.admitted = 0
        self.capacity = 1 << 30

    def admit(self) -> bool:
        """A connection opened: whether it is within the share."""
        self.open += 1
        if self.admitted < self.capacity:
            self.admitted += 1
            return True
        return False

    def release(self, admitted: bool) -> None:
        """A connection closed."""
        self.open -= 1
        if admitted:
            self.admitted -= 1


#: This process's client connections (one process, one server).
CLIENT_CONNECTIONS: Final = ConnectionCount()
#: The key, in a request scope's ``extensions``, that says whether its connection was
#: admitted (absent: the server does not count connections).
ADMITTED: Final = "streamrepair.admitted"


def is_out_of_files(exc: BaseException) -> bool:
    """Whether ``exc`` (or the OS error it wraps) says the process or the system ran out
    of descriptors."""
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in (errno.EMFILE, errno.ENFILE):
            return True
        nested = getattr(error, "os_error", None)  # aiohttp's ClientConnectorError
        error = nested if isinstance(nested, BaseException) else error.__cause__
    return False


class Limits:
    """The proxy's limits (module docstring), one :class:`Limit` each."""

    def __init__(
        self,
        *,
        upstream_connections: int = DEFAULT_POOL_SIZE,
        request_bytes_in_flight: int = DEFAULT_MAX_BYTES_IN_FLIGHT,
        open_files: int = 1 << 30,
    ) -> None:
        self.upstream_connections = Limit(
            "upstream_connections", upstream_connections, "--pool-size"
        )
        self.request_bytes_in_flight = Limit(
            "request_bytes_in_flight", request_bytes_in_flight, "--max-bytes-in-flight"
        )
        self.open_files = Limit(
            "open_files", open_files, "client connections under the open-file limit"
        )

    def __iter__(self) -> Iterator[Limit]:
        return iter((self.upstream_connections, self.request_bytes_in_flight, self.open_files))
