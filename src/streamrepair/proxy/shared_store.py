"""The memo store shared by several processes on one machine: one SQLite file.

With ``--workers N`` the requests of one conversation land on any worker, and the
reasoning a request-side fix puts back (DeepSeek's ``reasoning_content``, Anthropic
thinking) must be found by whichever worker serves the next turn: a store per process
would find it one time in N. :class:`SqliteStore` is the memory store's bounds and
expiry in a file every worker opens (``--store memory`` with several workers puts it in
a private directory in memory, ``/dev/shm`` where there is one, removed at exit;
``--store sqlite:PATH`` names one, which also serves several ``serve`` processes on one
machine). Redis is for several machines (``store.py``).

Why SQLite and not the supervisor holding the memory store for the workers over a
socket: no process of our own to keep alive and no protocol of our own, a worker that
dies leaves nothing half-written (transactions), and a lookup or a write is a few tens
of microseconds on a file in memory (``benchmarks/bench_proxy_store.py`` measures it
against the memory store and Redis), well under a round trip to another process. The
calls are made on the event loop: a write holds the file's lock for microseconds, and a
lock that cannot be had within ``timeout`` fails the call (counted, never raised), as a
Redis that does not answer does.

The file runs in WAL mode (readers never wait for the writer) without ``fsync``: the
memos are a cache whose loss costs a fix, not data; a crash of the machine may lose the
last writes. Bounds and expiry are the memory store's: at most ``max_entries`` memos and
``max_chars`` characters of memo JSON (kept up to date by triggers in the file itself, so
every process sees the same totals), each memo kept ``ttl`` seconds from its write (wall
clock: the processes share it), the least recently used evicted first (a read marks a
memo used when its mark is older than :data:`TOUCH_SECONDS`, so that reads seldom
write).
"""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Final

from .memo import CallMemo
from .store import (
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_ENTRIES,
    DEFAULT_STORE_TIMEOUT,
    DEFAULT_TTL,
    StoreLookup,
    StoreStats,
    StoreStatus,
    _decode,
    _encode,
)

__all__ = ["TOUCH_SECONDS", "SqliteStore", "create_file"]

#: A read marks a memo used again only when its mark is older than this (seconds).
TOUCH_SECONDS: Final = 60.0
#: Keys looked up per statement (SQLite's default bound on parameters is 999).
_KEYS_PER_QUERY: Final = 500
#: Memos evicted per statement while the file is over a bound.
_EVICT_BATCH: Final = 64

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS memo (
    key TEXT PRIMARY KEY, expires REAL NOT NULL, used REAL NOT NULL, text TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memo_used ON memo(used);
CREATE INDEX IF NOT EXISTS memo_expires ON memo(expires);
CREATE TABLE IF NOT EXISTS total (
    id INTEGER PRIMARY KEY CHECK (id = 0), entries INTEGER NOT NULL, chars INTEGER NOT NULL
);
INSERT OR IGNORE INTO total VALUES (0, 0, 0);
CREATE TRIGGER IF NOT EXISTS memo_added AFTER INSERT ON memo BEGIN
    UPDATE total SET entries = entries + 1, chars = chars + length(NEW.text) WHERE id = 0;
END;
CREATE TRIGGER IF NOT EXISTS memo_removed AFTER DELETE ON memo BEGIN
    UPDATE total SET entries = entries - 1, chars = chars - length(OLD.text) WHERE id = 0;
END;
CREATE TRIGGER IF NOT EXISTS memo_replaced AFTER UPDATE OF text ON memo BEGIN
    UPDATE total SET chars = chars - length(OLD.text) + length(NEW.text) WHERE id = 0;
END;
"""
_UPSERT: Final = (
    "INSERT INTO memo (key, expires, used, text) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (key) DO UPDATE SET expires = excluded.expires, used = excluded.used, "
    "text = excluded.text"
)


def _open(path: Path, timeout: float) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=timeout, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    return db


def create_file(path: str | Path) -> None:
    """Create the file and its tables (WAL mode), so that processes that open it at the
    same moment do not race to set it up."""
    db = _open(Path(path), 5.0)
    try:
        db.executescript(_SCHEMA)
    finally:
        db.close()


class SqliteStore:
    """Memos in the SQLite file at ``path`` (module docstring), shared by every process
    that opens it. ``timeout``: seconds to wait for the file's lock; ``clock`` (wall
    clock seconds) is for tests."""

    def __init__(
        self,
        path: str | Path,
        *,
        ttl: float = DEFAULT_TTL,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_chars: int = DEFAULT_MAX_CHARS,
        timeout: float = DEFAULT_STORE_TIMEOUT,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if ttl <= 0 or max_entries < 1 or max_chars < 1 or timeout <= 0:
            raise ValueError("ttl, max_entries, max_chars and timeout must be positive")
        self.path = Path(path)
        self.ttl = ttl
        self.max_entries = max_entries
        self.max_chars = max_chars
        self.errors = 0
        self._clock = clock
        self._counts: Counter[tuple[str, str]] = Counter()
        self._db = _open(self.path, timeout)
        self._db.executescript(_SCHEMA)

    # -- the StateStore protocol -----------------------------------------------------------

    async def lookup(self, keys: Iterable[str]) -> StoreLookup:
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return StoreLookup({})
        try:
            found, stale = self._read(wanted)
            if stale:
                self._touch(stale)
        except sqlite3.Error as exc:
            return StoreLookup({}, self._failed("get", exc))
        return StoreLookup(found)

    async def get(self, keys: Iterable[str]) -> dict[str, CallMemo]:
        return (await self.lookup(keys)).found

    async def put(self, memos: Mapping[str, CallMemo]) -> StoreStatus:
        if not memos:
            return StoreStatus.OK
        now = self._clock()
        rows = []
        status = StoreStatus.OK
        for key, memo in memos.items():
            text = _encode(memo)
            if len(text) > self.max_chars:  # larger than the whole store: not kept
                self.errors += 1
                self._counts[("put", "error")] += 1
                status = StoreStatus.ERROR
                continue
            rows.append((key, now + self.ttl, now, text))
        try:
            with self._transaction():
                self._db.executemany(_UPSERT, rows)
                self._db.execute("DELETE FROM memo WHERE expires <= ?", (now,))
                self._evict()
        except sqlite3.Error as exc:
            return self._failed("put", exc)
        return status

    async def ping(self) -> bool:
        try:
            self._db.execute("SELECT 1").fetchone()
        except sqlite3.Error as exc:
            self._failed("ping", exc)
            return False
        return True

    def stats(self) -> StoreStats:
        return StoreStats(counts=dict(self._counts))

    async def close(self) -> None:
        self._db.close()

    # -- what the file holds -----------------------------------------------------------------

    def __len__(self) -> int:
        entries: int = self._db.execute("SELECT entries FROM total").fetchone()[0]
        return entries

    @property
    def chars(self) -> int:
        """Characters of memo JSON held now (by every process)."""
        chars: int = self._db.execute("SELECT chars FROM total").fetchone()[0]
        return chars

    # -- helpers -------------------------------------------------------------------------------

    def _read(self, keys: list[str]) -> tuple[dict[str, CallMemo], list[str]]:
        now = self._clock()
        found: dict[str, CallMemo] = {}
        stale: list[str] = []
        for start in range(0, len(keys), _KEYS_PER_QUERY):
            part = keys[start : start + _KEYS_PER_QUERY]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(
                f"SELECT key, expires, used, text FROM memo WHERE key IN ({marks})", part
            ).fetchall()
            for key, expires, used, text in rows:
                if expires <= now:
                    continue
                memo = _decode(text)
                if memo is not None:
                    found[key] = memo
                    if now - used > TOUCH_SECONDS:
                        stale.append(key)
        return {key: found[key] for key in keys if key in found}, stale

    def _touch(self, keys: list[str]) -> None:
        now = self._clock()
        with self._transaction():
            self._db.executemany("UPDATE memo SET used = ? WHERE key = ?", [(now, k) for k in keys])

    def _evict(self) -> None:
        """The least recently used memos out, while the file is over a bound."""
        while True:
            entries, chars = self._db.execute("SELECT entries, chars FROM total").fetchone()
            if entries <= self.max_entries and chars <= self.max_chars:
                return
            over = max(1, min(entries - self.max_entries, _EVICT_BATCH))
            self._db.execute(
                "DELETE FROM memo WHERE key IN (SELECT key FROM memo ORDER BY used LIMIT ?)",
                (over,),
            )

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def _failed(self, operation: str, exc: sqlite3.Error) -> StoreStatus:
        locked = isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
        status = StoreStatus.TIMEOUT if locked else StoreStatus.ERROR
        self.errors += 1
        self._counts[(operation, status.value)] += 1
        return status


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on an error): the file's write lock
    is taken at the start, so a busy file fails at once rather than half-way."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is None:
            self._db.execute("COMMIT")
        else:
            self._db.execute("ROLLBACK")
