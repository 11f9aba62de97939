"""Where a telemetry log's rotated files and lock file are (shared by the writer,
:mod:`.log`, and the reader, :mod:`.stats`; the scheme is explained in :mod:`.log`)."""

from __future__ import annotations

from pathlib import Path


def rotated_paths(path: Path) -> list[Path]:
    """The rotated files of the log at ``path`` that exist, oldest first
    (``<log>.3``, ``<log>.2``, ``<log>.1``)."""
    prefix = path.name + "."
    found: list[tuple[int, Path]] = []
    try:
        entries = list(path.parent.iterdir())
    except OSError:
        return []
    for entry in entries:
        suffix = entry.name[len(prefix) :]
        if entry.name.startswith(prefix) and suffix.isdigit() and suffix[0] != "0":
            found.append((int(suffix), entry))
    return [entry for _, entry in sorted(found, reverse=True)]


def lock_path(path: Path) -> Path:
    """The lock file that rotation and readers of the log at ``path`` share."""
    return path.with_name(path.name + ".lock")


def lock(fd: int, *, exclusive: bool) -> None:
    """``flock`` ``fd`` (blocking); nothing where there is no ``fcntl`` (Windows: a
    rotation there is not guarded against a second process)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return
    fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
