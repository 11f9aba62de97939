"""Where the proxy keeps what later requests of a conversation need.

A :class:`~.relay.CallMemo` per call the proxy sent: the reasoning of the turn
(DeepSeek's ``reasoning_content``, Anthropic thinking blocks with their signatures) and
the repair notes for the tool result that will answer it. Keys are derived from the
request's credential and the call id (:func:`memo_key`), so one client never reads
another's memos on a shared proxy, and no key or reasoning text is ever logged.

* :class:`MemoryStore`: the default, one process. Bounded (entries and characters,
  least recently used evicted first) and expiring (``ttl`` seconds).
* :class:`RedisStore`: for several processes or machines behind a load balancer, so
  that any replica can serve any request of a conversation (``--store redis://...``;
  the ``redis`` package's asyncio client; every value has the same ``ttl``).

Both are async and never raise for an unavailable backend: a lookup that fails finds
nothing (the request goes upstream as the client sent it, with only the fixes that need
no memory) and says so (:class:`StoreLookup`), and the failure is counted
(:meth:`StateStore.stats`, shown at ``/metrics``).

A Redis that hangs must not hang the proxy (issue 22: a frozen Redis added 4 s to every
request, a 2 s lookup and a 2 s write, both awaited before the calls went out). So every
Redis call has one short deadline, ``timeout`` (:data:`DEFAULT_STORE_TIMEOUT`, covering the
connection, the command and the reply; the client's own retries are off), and a
:class:`CircuitBreaker` stops calling a Redis that failed
:data:`DEFAULT_BREAKER_THRESHOLD` times in a row: while it is open, lookups and writes
are skipped at once (counted as ``skipped``); after ``cooldown`` seconds one ``PING``
runs in the background (never on a request's path) and closes the breaker when Redis
answers. Which fixes a skipped lookup cost a request, :func:`unavailable_fixes` says.
"""

from __future__ import annotations

import asyncio
import collections
import enum
import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, TypeVar

from .fixes import fix_request, referenced_calls
from .memo import CallMemo
from .relay import ApiProtocol

__all__ = [
    "DEFAULT_BREAKER_COOLDOWN",
    "DEFAULT_BREAKER_THRESHOLD",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_ENTRIES",
    "DEFAULT_STORE_TIMEOUT",
    "DEFAULT_TTL",
    "MEMO_FIXES",
    "UNAVAILABLE_FIXES_HEADER",
    "BreakerState",
    "CircuitBreaker",
    "MemoryStore",
    "RedisStore",
    "StateStore",
    "StoreLookup",
    "StoreStats",
    "StoreStatus",
    "memo_key",
    "open_store",
    "unavailable_fixes",
]

#: Seconds a memo is kept after it was written (one working day of a conversation).
DEFAULT_TTL: Final = 24 * 3600.0
#: Most memos the in-memory store keeps.
DEFAULT_MAX_ENTRIES: Final = 100_000
#: Most characters of memo JSON the in-memory store keeps (about 64 MiB of text).
DEFAULT_MAX_CHARS: Final = 64 * 2**20
#: Seconds one Redis call may take, connection included, before it counts as a timeout.
#: Redis answers in well under a millisecond on a LAN; a quarter second is generous and
#: still bounds what a hung Redis costs a request before the breaker opens.
DEFAULT_STORE_TIMEOUT: Final = 0.25
#: Failed or timed-out Redis calls in a row that open the breaker.
DEFAULT_BREAKER_THRESHOLD: Final = 3
#: Seconds the breaker stays open before a background ``PING`` probes Redis again.
DEFAULT_BREAKER_COOLDOWN: Final = 5.0
#: The fixes that need a memo: what a request can lose when the store is unavailable.
MEMO_FIXES: Final = ("reasoning_restored", "thinking_restored", "repair_notes")
#: The response header that names the fixes a request did not get because the store was
#: unavailable (:func:`unavailable_fixes`).
UNAVAILABLE_FIXES_HEADER: Final = "x-streamrepair-fixes-unavailable"
_PREFIX: Final = "streamrepair:memo:"
_T = TypeVar("_T")


def memo_key(credential: str, call_id: str) -> str:
    """The store key of a call's memo: a hash of the client's credential (its API key
    or bearer token, "" without one) and the call id."""
    digest = hashlib.sha256(f"{credential}\x00{call_id}".encode()).hexdigest()
    return _PREFIX + digest[:40]


class StoreStatus(enum.Enum):
    """How a store call went."""

    #: The backend answered.
    OK = "ok"
    #: The backend failed (refused the connection, answered with an error).
    ERROR = "error"
    #: The backend did not answer within the store's ``timeout``.
    TIMEOUT = "timeout"
    #: Not tried: the breaker is open (the backend failed just before).
    SKIPPED = "skipped"


@dataclass(frozen=True, slots=True)
class StoreLookup:
    """What a lookup found (key -> memo; missing keys left out) and how it went. When
    :attr:`available` is False the memos may exist but could not be read: the request
    goes on without the fixes they would have made (:func:`unavailable_fixes`)."""

    found: dict[str, CallMemo]
    status: StoreStatus = StoreStatus.OK

    @property
    def available(self) -> bool:
        """True when the backend answered (an empty :attr:`found` then means none)."""
        return self.status is StoreStatus.OK


class BreakerState(enum.Enum):
    """The state of a :class:`CircuitBreaker`."""

    #: Calls go to the backend; failures in a row are counted.
    CLOSED = "closed"
    #: The backend failed ``threshold`` times in a row: calls are skipped until the
    #: cool-down has passed.
    OPEN = "open"
    #: One probe is running; calls are still skipped until it answers.
    HALF_OPEN = "half_open"


class CircuitBreaker:
    """Sans-IO circuit breaker: the caller asks :meth:`allow` before a call and reports
    :meth:`succeeded` or :meth:`failed` after it.

    ``threshold`` failures in a row open it; while open, :meth:`allow` is False. Once
    ``cooldown`` seconds have passed, :meth:`probe_due` is True exactly once (the state is
    then half-open) and the caller runs one probe and reports its outcome: a success
    closes the breaker, a failure opens it for another ``cooldown``. ``clock`` is for
    tests."""

    def __init__(
        self,
        *,
        threshold: int = DEFAULT_BREAKER_THRESHOLD,
        cooldown: float = DEFAULT_BREAKER_COOLDOWN,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if threshold < 1 or cooldown < 0:
            raise ValueError("threshold must be at least 1 and cooldown not negative")
        self.threshold = threshold
        self.cooldown = cooldown
        #: How often the breaker opened (a probe that failed does not count again).
        self.opened = 0
        self._clock = clock
        self._state = BreakerState.CLOSED
        self._failures = 0
        self._opened_at = 0.0

    @property
    def state(self) -> BreakerState:
        """The state now."""
        return self._state

    def allow(self) -> bool:
        """True when a call may go to the backend (the breaker is closed)."""
        return self._state is BreakerState.CLOSED

    def probe_due(self) -> bool:
        """True once per cool-down while open: the caller must then run one probe and
        report its outcome (the breaker is half-open until it does)."""
        if self._state is BreakerState.OPEN and self._clock() - self._opened_at >= self.cooldown:
            self._state = BreakerState.HALF_OPEN
            return True
        return False

    def succeeded(self) -> None:
        """A call (or the probe) succeeded: closed, the failure count reset."""
        self._state = BreakerState.CLOSED
        self._failures = 0

    def failed(self) -> None:
        """A call (or the probe) failed or timed out."""
        if self._state is BreakerState.CLOSED:
            self._failures += 1
            if self._failures < self.threshold:
                return
            self.opened += 1
        elif self._state is BreakerState.OPEN:
            return  # a call that started before the breaker opened: nothing new
        self._state = BreakerState.OPEN
        self._opened_at = self._clock()


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreStats:
    """A store's counters for ``/metrics``: ``counts`` maps (operation, status) to how
    many calls ended so, for every status but OK (operations ``get``, ``put``, ``ping``;
    statuses ``error``, ``timeout``, ``skipped``); ``breaker`` is the breaker's state
    (None for a store without one) and ``breaker_opened`` how often it opened."""

    counts: Mapping[tuple[str, str], int] = field(default_factory=dict)
    breaker: BreakerState | None = None
    breaker_opened: int = 0


class StateStore(Protocol):
    """What the proxy asks of a store."""

    errors: int

    async def lookup(self, keys: Iterable[str]) -> StoreLookup:
        """The memos found under ``keys``, and whether the backend could be read."""
        ...

    async def get(self, keys: Iterable[str]) -> dict[str, CallMemo]:
        """The memos found under ``keys`` (key -> memo); missing ones are left out
        (``lookup(keys).found``)."""
        ...

    async def put(self, memos: Mapping[str, CallMemo]) -> StoreStatus:
        """Store memos (key -> memo), each for the store's ``ttl``; how it went."""
        ...

    async def ping(self) -> bool:
        """True when the backend answers (for ``/healthz``)."""
        ...

    def stats(self) -> StoreStats:
        """The store's failure counters and breaker state."""
        ...

    async def close(self) -> None:
        """Release the backend's connections."""
        ...


def unavailable_fixes(protocol: ApiProtocol, body: Mapping[str, Any]) -> tuple[str, ...]:
    """The fixes of :data:`MEMO_FIXES` this request would have got had its memos been
    found: the names to put in :data:`UNAVAILABLE_FIXES_HEADER` when a lookup was not
    :attr:`~StoreLookup.available`. Worked out by running :func:`~.fixes.fix_request`
    with a stand-in memo for every call the history mentions, so it is exactly the
    places a memo would have changed (reasoning missing on a turn that called tools,
    thinking missing on an Anthropic tool-use turn, tool results without notes yet);
    whether the proxy really held memos for those calls cannot be known without the
    store. Nothing passed is changed; empty when the history mentions no call."""
    ids = referenced_calls(protocol, body)
    if not ids:
        return ()
    stand_in = {call_id: _stand_in(call_id) for call_id in ids}
    try:
        counts = fix_request(protocol, body, stand_in).counts
    except Exception:  # never fail a request over a header
        return ()
    return tuple(name for name in MEMO_FIXES if counts.get(name))


def _stand_in(call_id: str) -> CallMemo:
    return CallMemo(
        call_id=call_id,
        tool="",
        notes=({"syntax": "trailing_comma", "offset": 0, "description": ""},),
        reasoning="",
        thinking=({"type": "thinking", "thinking": "", "signature": ""},),
    )


def _encode(memo: CallMemo) -> str:
    return json.dumps(
        {"call_id": memo.call_id, **memo.to_dict()}, ensure_ascii=False, separators=(",", ":")
    )


def _decode(text: str | bytes) -> CallMemo | None:
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("call_id"), str):
            return None
        return CallMemo.from_dict(data["call_id"], data)
    except (ValueError, RecursionError):
        return None


class MemoryStore:
    """An in-process store: at most ``max_entries`` memos and ``max_chars`` characters
    of their JSON, each kept ``ttl`` seconds; the least recently used go first.
    ``clock`` is for tests."""

    def __init__(
        self,
        *,
        ttl: float = DEFAULT_TTL,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_chars: int = DEFAULT_MAX_CHARS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if ttl <= 0 or max_entries < 1 or max_chars < 1:
            raise ValueError("ttl, max_entries and max_chars must be positive")
        self.ttl = ttl
        self.max_entries = max_entries
        self.max_chars = max_chars
        self.errors = 0
        self._clock = clock
        self._data: collections.OrderedDict[str, tuple[float, str]] = collections.OrderedDict()
        self._chars = 0

    def __len__(self) -> int:
        return len(self._data)

    @property
    def chars(self) -> int:
        """Characters of memo JSON held now."""
        return self._chars

    async def lookup(self, keys: Iterable[str]) -> StoreLookup:
        return StoreLookup(await self.get(keys))

    async def get(self, keys: Iterable[str]) -> dict[str, CallMemo]:
        now = self._clock()
        out: dict[str, CallMemo] = {}
        for key in keys:
            entry = self._data.get(key)
            if entry is None:
                continue
            expires, text = entry
            if expires <= now:
                self._drop(key)
                continue
            self._data.move_to_end(key)
            memo = _decode(text)
            if memo is not None:
                out[key] = memo
        return out

    async def put(self, memos: Mapping[str, CallMemo]) -> StoreStatus:
        expires = self._clock() + self.ttl
        status = StoreStatus.OK
        for key, memo in memos.items():
            text = _encode(memo)
            if len(text) > self.max_chars:
                self.errors += 1  # larger than the whole store: not kept
                status = StoreStatus.ERROR
                continue
            self._drop(key)
            self._data[key] = (expires, text)
            self._chars += len(text)
        self._evict()
        return status

    async def ping(self) -> bool:
        return True

    def stats(self) -> StoreStats:
        return StoreStats(counts={("put", "error"): self.errors} if self.errors else {})

    async def close(self) -> None:
        self._data.clear()
        self._chars = 0

    def _drop(self, key: str) -> None:
        entry = self._data.pop(key, None)
        if entry is not None:
            self._chars -= len(entry[1])

    def _evict(self) -> None:
        now = self._clock()
        data = self._data
        while data and (
            len(data) > self.max_entries
            or self._chars > self.max_chars
            or next(iter(data.values()))[0] <= now
        ):
            key = next(iter(data))
            self._drop(key)


class RedisStore:
    """Memos in Redis (``redis://``, ``rediss://`` or ``unix://`` URL), each with the
    same ``ttl``. Needs the ``redis`` package (the ``serve`` extra).

    Every call has one deadline, ``timeout`` seconds (connection, command and reply;
    the client's own retries are off, so a timeout is never paid twice), and goes through
    a :class:`CircuitBreaker` (``breaker_threshold`` failures in a row open it;
    ``breaker_cooldown`` seconds later a background ``PING`` probes). While the breaker
    is open nothing waits on Redis: lookups find nothing (:attr:`StoreLookup.status`
    ``SKIPPED``), writes are dropped, ``ping`` is False. :attr:`errors` counts the calls
    that failed or timed out; :meth:`stats` has every count by operation."""

    def __init__(
        self,
        url: str,
        *,
        ttl: float = DEFAULT_TTL,
        timeout: float = DEFAULT_STORE_TIMEOUT,
        breaker_threshold: int = DEFAULT_BREAKER_THRESHOLD,
        breaker_cooldown: float = DEFAULT_BREAKER_COOLDOWN,
    ) -> None:
        import redis.asyncio as aioredis  # optional dependency
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.ttl = ttl
        self.timeout = timeout
        self.errors = 0
        self.url = url
        self.breaker = CircuitBreaker(threshold=breaker_threshold, cooldown=breaker_cooldown)
        self._counts: collections.Counter[tuple[str, str]] = collections.Counter()
        self._probe: asyncio.Task[None] | None = None
        self._client: Any = aioredis.Redis.from_url(
            url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 0),  # redis-py retries 3 times by default
        )

    async def lookup(self, keys: Iterable[str]) -> StoreLookup:
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return StoreLookup({})
        status, values = await self._call("get", lambda: self._client.mget(wanted))
        if values is None:
            return StoreLookup({}, status)
        out: dict[str, CallMemo] = {}
        for key, value in zip(wanted, values, strict=True):
            if value is not None:
                memo = _decode(value)
                if memo is not None:
                    out[key] = memo
        return StoreLookup(out, status)

    async def get(self, keys: Iterable[str]) -> dict[str, CallMemo]:
        return (await self.lookup(keys)).found

    async def put(self, memos: Mapping[str, CallMemo]) -> StoreStatus:
        if not memos:
            return StoreStatus.OK
        milliseconds = max(1, int(self.ttl * 1000))

        async def write() -> None:
            async with self._client.pipeline(transaction=False) as pipe:
                for key, memo in memos.items():
                    pipe.set(key, _encode(memo), px=milliseconds)
                await pipe.execute()

        status, _ = await self._call("put", write)
        return status

    async def ping(self) -> bool:
        status, answer = await self._call("ping", lambda: self._client.ping())
        return status is StoreStatus.OK and bool(answer)

    def stats(self) -> StoreStats:
        return StoreStats(
            counts=dict(self._counts),
            breaker=self.breaker.state,
            breaker_opened=self.breaker.opened,
        )

    async def close(self) -> None:
        probe, self._probe = self._probe, None
        if probe is not None:
            probe.cancel()
            await asyncio.gather(probe, return_exceptions=True)
        await self._client.aclose()

    async def _call(
        self, operation: str, call: Callable[[], Awaitable[_T]]
    ) -> tuple[StoreStatus, _T | None]:
        """Run one Redis call under the deadline and the breaker; count what went wrong."""
        if not self.breaker.allow():
            self._counts[(operation, StoreStatus.SKIPPED.value)] += 1
            if self.breaker.probe_due():
                self._probe = asyncio.get_running_loop().create_task(self._run_probe())
            return StoreStatus.SKIPPED, None
        try:
            result = await asyncio.wait_for(call(), self.timeout)
        except Exception as exc:  # down, refused or hung: find nothing, count it
            return self._failed(operation, _status_of(exc), exc), None
        self.breaker.succeeded()
        return StoreStatus.OK, result

    def _failed(self, operation: str, status: StoreStatus, exc: BaseException) -> StoreStatus:
        del exc  # never logged: a Redis error can quote the URL with its password
        self.errors += 1
        self._counts[(operation, status.value)] += 1
        self.breaker.failed()
        return status

    async def _run_probe(self) -> None:
        """One background ``PING`` with the same deadline: closes or re-opens the
        breaker. Never awaited by a request."""
        try:
            answer = await asyncio.wait_for(self._client.ping(), self.timeout)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._failed("probe", _status_of(exc), exc)
            return
        if answer:
            self.breaker.succeeded()
        else:
            self.breaker.failed()


def _status_of(exc: BaseException) -> StoreStatus:
    """TIMEOUT for the timeouts of asyncio and of the redis package, else ERROR."""
    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return StoreStatus.TIMEOUT
    try:
        from redis.exceptions import TimeoutError as RedisTimeout
    except ImportError:  # pragma: no cover - RedisStore needs the package
        return StoreStatus.ERROR
    return StoreStatus.TIMEOUT if isinstance(exc, RedisTimeout) else StoreStatus.ERROR


def open_store(
    spec: str | None,
    *,
    ttl: float = DEFAULT_TTL,
    timeout: float = DEFAULT_STORE_TIMEOUT,
    breaker_threshold: int = DEFAULT_BREAKER_THRESHOLD,
    breaker_cooldown: float = DEFAULT_BREAKER_COOLDOWN,
) -> MemoryStore | RedisStore:
    """The store a ``--store`` value names: ``memory`` (or None) or a Redis URL (with
    the deadline and breaker settings; the memory store has neither)."""
    if spec is None or spec == "memory":
        return MemoryStore(ttl=ttl)
    if spec.startswith(("redis://", "rediss://", "unix://")):
        return RedisStore(
            spec,
            ttl=ttl,
            timeout=timeout,
            breaker_threshold=breaker_threshold,
            breaker_cooldown=breaker_cooldown,
        )
    raise ValueError(f"--store must be 'memory' or a redis:// URL, not {spec!r}")
