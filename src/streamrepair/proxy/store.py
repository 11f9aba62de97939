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
no memory) and the failure is counted in :attr:`StateStore.errors`.
"""

from __future__ import annotations

import collections
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Protocol

from .memo import CallMemo

__all__ = [
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_ENTRIES",
    "DEFAULT_TTL",
    "MemoryStore",
    "RedisStore",
    "StateStore",
    "memo_key",
    "open_store",
]

#: Seconds a memo is kept after it was written (one working day of a conversation).
DEFAULT_TTL: Final = 24 * 3600.0
#: Most memos the in-memory store keeps.
DEFAULT_MAX_ENTRIES: Final = 100_000
#: Most characters of memo JSON the in-memory store keeps (about 64 MiB of text).
DEFAULT_MAX_CHARS: Final = 64 * 2**20
_PREFIX: Final = "streamrepair:memo:"


def memo_key(credential: str, call_id: str) -> str:
    """The store key of a call's memo: a hash of the client's credential (its API key
    or bearer token, "" without one) and the call id."""
    digest = hashlib.sha256(f"{credential}\x00{call_id}".encode()).hexdigest()
    return _PREFIX + digest[:40]


class StateStore(Protocol):
    """What the proxy asks of a store."""

    errors: int

    async def get(self, keys: Iterable[str]) -> dict[str, CallMemo]:
        """The memos found under ``keys`` (key -> memo); missing ones are left out."""
        ...

    async def put(self, memos: Mapping[str, CallMemo]) -> None:
        """Store memos (key -> memo), each for the store's ``ttl``."""
        ...

    async def ping(self) -> bool:
        """True when the backend answers (for ``/healthz``)."""
        ...

    async def close(self) -> None:
        """Release the backend's connections."""
        ...


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

    async def put(self, memos: Mapping[str, CallMemo]) -> None:
        expires = self._clock() + self.ttl
        for key, memo in memos.items():
            text = _encode(memo)
            if len(text) > self.max_chars:
                self.errors += 1  # larger than the whole store: not kept
                continue
            self._drop(key)
            self._data[key] = (expires, text)
            self._chars += len(text)
        self._evict()

    async def ping(self) -> bool:
        return True

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
    same ``ttl``. Needs the ``redis`` package (the ``serve`` extra)."""

    def __init__(self, url: str, *, ttl: float = DEFAULT_TTL, timeout: float = 2.0) -> None:
        import redis.asyncio as aioredis  # optional dependency

        self.ttl = ttl
        self.errors = 0
        self.url = url
        self._client: Any = aioredis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )

    async def get(self, keys: Iterable[str]) -> dict[str, CallMemo]:
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        try:
            values = await self._client.mget(wanted)
        except Exception:  # the backend is down: find nothing, count it
            self.errors += 1
            return {}
        out: dict[str, CallMemo] = {}
        for key, value in zip(wanted, values, strict=True):
            if value is not None:
                memo = _decode(value)
                if memo is not None:
                    out[key] = memo
        return out

    async def put(self, memos: Mapping[str, CallMemo]) -> None:
        if not memos:
            return
        milliseconds = max(1, int(self.ttl * 1000))
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for key, memo in memos.items():
                    pipe.set(key, _encode(memo), px=milliseconds)
                await pipe.execute()
        except Exception:
            self.errors += 1

    async def ping(self) -> bool:
        try:
            return bool(await self._client.ping())
        except Exception:
            self.errors += 1
            return False

    async def close(self) -> None:
        await self._client.aclose()


def open_store(spec: str | None, *, ttl: float = DEFAULT_TTL) -> MemoryStore | RedisStore:
    """The store a ``--store`` value names: ``memory`` (or None) or a Redis URL."""
    if spec is None or spec == "memory":
        return MemoryStore(ttl=ttl)
    if spec.startswith(("redis://", "rediss://", "unix://")):
        return RedisStore(spec, ttl=ttl)
    raise ValueError(f"--store must be 'memory' or a redis:// URL, not {spec!r}")
