"""``compbench.memo`` — A memo bounded by the characters it holds (and, optionally, its entries).

Decoding a call's arguments, normalizing a part's text, tokenizing a prompt: each is asked again for the
same text at every compaction of every strategy. A dict by value remembers the answer; this bounds it, so a
long run's memory stays flat: past either bound the memo starts over (the next answers are computed again,
never wrong). The bound is read when an entry is added, so a test may lower it on the instance."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Memo(Generic[K, V]):
    """``get(key, make)``: ``make()``'s answer for ``key``, computed once while it stays remembered.

    ``size(key, value)`` is what an entry counts against ``chars`` (by default the key's length, for a key
    that is a text); ``entries`` bounds the count of entries too (None: no bound)."""

    def __init__(self, chars: int, entries: int | None = None,
                 size: Callable[[K, V], int] | None = None) -> None:
        self.chars = chars
        self.entries = entries
        self._size: Callable[[K, V], int] = size or _key_length
        self._held: dict[K, V] = {}
        self._chars = 0
        # the memo's lookup itself (dict.get, None on a miss): a hot path's fast check, then add on a miss
        self.find: Callable[[K], V | None] = self._held.get

    def get(self, key: K, make: Callable[[], V]) -> V:
        found = self._held.get(key, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[return-value]
        return self.add(key, make())

    def add(self, key: K, value: V) -> V:
        """Remember ``value`` for ``key`` (starting over first when it would pass a bound); returns it."""
        n = self._size(key, value)
        if self._chars + n > self.chars or (self.entries is not None and len(self._held) >= self.entries):
            self.clear()
        self._held[key] = value
        self._chars += n
        return value

    def clear(self) -> None:
        self._held.clear()
        self._chars = 0

    def __len__(self) -> int:
        return len(self._held)

    def __iter__(self) -> Iterator[K]:
        return iter(self._held)

    def __getitem__(self, key: K) -> V:
        return self._held[key]


_MISSING = object()


def _key_length(key: Any, _: object) -> int:
    """The default size of an entry: its key's length (a module-level function, so a memo pickles)."""
    return len(key)
