"""``compbench.sdk.context`` — The replay context: every cache the replays of one transcript share, owned by the run,
with its lifetime.

A run replays each transcript many times (every strategy, a tuning grid's configurations, a diverged
shadow replayed again). Work that depends only on the transcript — a message's estimate under some tool's
counting rule, the facts an extractive copy finds in a message, the transcript's fact index — is done once
and shared through the :class:`ReplayContext` the run passes to the loop and to the summarizer. The run
opens it on a transcript (:meth:`ReplayContext.begin`) and closes it when the transcript is done
(:meth:`ReplayContext.end`): nothing outlives its transcript, nothing is module-level, and a context is
used by one transcript at a time (each worker thread or process has its own).

Strategies reach it through :meth:`compbench.sdk.session.SessionView.memo`; summarizers are built with it.
A context nobody opened (a replay in a test) is a private one: it caches for as long as it lives.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from compbench.data.transcript import Transcript

K = TypeVar("K")
V = TypeVar("V")

MEMO_LIMIT = 200_000  # entries a memo holds before it starts again (a context used without end())


class IdentityMemo(Generic[K, V]):
    """Values computed once per object, keyed by the object's identity.

    Recorded messages and parts are frozen and shared by every replay of a transcript, but hashing one by
    value costs as much as the work it would save. Keyed by ``id()``, holding the object itself so its id
    cannot be reused while the value is cached."""

    __slots__ = ("_d",)

    def __init__(self) -> None:
        self._d: dict[int, tuple[K, V]] = {}

    def get(self, obj: K) -> V | None:
        hit = self._d.get(id(obj))
        return hit[1] if hit is not None and hit[0] is obj else None

    def put(self, obj: K, value: V) -> V:
        if len(self._d) >= MEMO_LIMIT:
            self._d.clear()
        self._d[id(obj)] = (obj, value)
        return value

    def get_or(self, obj: K, compute: Callable[[K], V]) -> V:
        hit = self._d.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        return self.put(obj, compute(obj))

    def clear(self) -> None:
        self._d.clear()

    def __len__(self) -> int:
        return len(self._d)


class ReplayContext:
    """What the replays of the current transcript share: named memos and caches, the transcript and its
    fact index. Emptied by :meth:`end`."""

    def __init__(self) -> None:
        self.transcript: Transcript | None = None
        # the run's whole-transcript fact index (a compbench.measure.facts.presence.FactIndex), for the
        # summarizers that read facts; the SDK stands below the measures, so it only carries it
        self.facts: Any = None
        self._memos: dict[str, IdentityMemo[Any, Any]] = {}
        self._caches: dict[str, dict[Any, Any]] = {}
        self._derived: dict[str, Any] = {}

    def begin(self, transcript: Transcript, facts: Any = None) -> None:
        """The replays of ``transcript`` start (its whole-transcript fact index, when the run built one)."""
        self.end()
        self.transcript, self.facts = transcript, facts

    def end(self) -> None:
        """The transcript is done: forget everything derived from it."""
        self.transcript, self.facts = None, None
        for m in self._memos.values():
            m.clear()
        for c in self._caches.values():
            c.clear()
        self._derived.clear()

    def size(self) -> int:
        """How many values are cached now (0 after :meth:`end`)."""
        return (sum(map(len, self._memos.values())) + sum(map(len, self._caches.values())) + len(self._derived)
                + (self.transcript is not None))

    def memo(self, name: str) -> IdentityMemo[Any, Any]:
        """A per-object memo shared by this transcript's replays; ``name`` says whose (``"round-chained.estimate"``)."""
        m = self._memos.get(name)
        if m is None:
            m = self._memos[name] = IdentityMemo()
        return m

    def cache(self, name: str) -> dict[Any, Any]:
        """A plain dict shared by this transcript's replays, for keys that are not one object."""
        c = self._caches.get(name)
        if c is None:
            c = self._caches[name] = {}
        return c

    def derived(self, name: str, compute: Callable[[], V]) -> V:
        """A value computed once per transcript (``compute`` runs on the first call after :meth:`begin`)."""
        if name not in self._derived:
            self._derived[name] = compute()
        value: V = self._derived[name]
        return value


class RoundCache:
    """Values computed on the view as it is when the loop asks a question, shared by everyone asked that
    question (a tuning grid's configurations shadowing the leader ask it on the same view). The loop empties
    it before every question, so what is in it was computed on the current view."""

    __slots__ = ("_d",)

    def __init__(self) -> None:
        self._d: dict[Hashable, Any] = {}

    def get(self, key: Hashable, compute: Callable[[], V]) -> V:
        if key in self._d:
            hit: V = self._d[key]
            return hit
        value = self._d[key] = compute()
        return value

    def clear(self) -> None:
        if self._d:
            self._d.clear()
