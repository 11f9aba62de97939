"""Counts in what the package prints and reports: ``plural(1, "delta")`` is ``"1 delta"``,
``plural(2, "delta")`` is ``"2 deltas"``, so no message says "1 deltas"."""

from __future__ import annotations

__all__ = ["plural"]


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``"<count> <noun>"``, with the noun in the plural (``nouns``, by default ``noun``
    and an "s") unless ``count`` is 1."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"
