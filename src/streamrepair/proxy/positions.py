"""Where the blocks or items of a response go when some of them are withheld: the
renumbering Anthropic Messages (``index``) and Responses (``output_index``) share."""

from __future__ import annotations

__all__ = ["Renumbering"]


class Renumbering:
    """The client's positions of the blocks (Anthropic ``index``) or items (Responses
    ``output_index``) of a response whose tool calls are withheld: a position must be the
    block's or item's place in what the client finally holds, so each one sent takes the
    next free position, and the calls, sent at the end, take theirs then.

    The upstream's position of a withheld call is :meth:`hold`-ed: its events are not
    sent. Everything else gets a client position when it starts (:meth:`start`), or at
    its first event when its start never came (:meth:`place`); what the proxy writes
    itself (a text block, the streamed call, the calls at the end) takes :meth:`take`.
    """

    __slots__ = ("_held", "_index", "next")

    def __init__(self) -> None:
        self._held: set[int] = set()  # upstream positions of withheld calls
        self._index: dict[int, int] = {}  # upstream position -> client position
        #: The next free client position.
        self.next = 0

    def hold(self, upstream: int) -> None:
        """The call at ``upstream`` is withheld: none of its events is sent."""
        self._held.add(upstream)

    def held(self, upstream: int) -> bool:
        """Whether ``upstream`` is a withheld call's position."""
        return upstream in self._held

    def start(self, upstream: int) -> None:
        """Something the client gets starts at ``upstream``: its position is the next."""
        self._held.discard(upstream)
        self._index[upstream] = self.take()

    def place(self, upstream: int) -> int | None:
        """The client position of an event at ``upstream`` (the next free one when none
        started there); None for a withheld call's."""
        if upstream in self._held:
            return None
        mapped = self._index.get(upstream)
        if mapped is None:
            mapped = self._index[upstream] = self.take()
        return mapped

    def take(self) -> int:
        """The next free position, for something the proxy writes itself."""
        taken = self.next
        self.next += 1
        return taken
