"""``compbench.replay.members`` — Who a replay asks, and when: the strategies that share one trajectory, each stage's
wake condition, and the test the loop makes before every question.

A trajectory (:class:`compbench.replay.branch.Branch`) is followed by one or more *members*: the first leads
(its answers are applied), the others follow while they answer every question exactly as it does. A stage
that has just answered nothing and has a ``wake`` (:class:`compbench.sdk.protocols.Wakeful`) sleeps until its
:class:`~compbench.sdk.session.Wake` holds: while it sleeps its answer is taken to be nothing, without
asking. Any action applied to the view wakes every stage (a wake condition speaks of a view that only grows).
:class:`Alarm` keeps the earliest threshold of every sleeping stage of a trajectory, so a question where
nobody wakes costs a few comparisons, however many members follow. A ``grown`` condition becomes, when the
stage falls asleep, the number of recorded messages the trajectory must have read: one search in the
prefix sums of the weight over the transcript (:class:`Weights`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from typing import Any

from compbench.data.transcript import Message
from compbench.sdk.protocols import Strategy, stages_of, wake_of
from compbench.sdk.session import SessionView, Wake

FAR = 1 << 62  # a threshold nothing reaches
# off: every stage is asked every question (what the wake conditions are tested against); the same switch for a
# block of code, and for strategy authors: compbench.sdk.asking_every_question()
WAKE = True


class Weights:
    """Per weight function, its prefix sums over one transcript's messages (a message the replay skips,
    the recorded tool's own compaction, weighs nothing): computed on first use, shared by its trajectories."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self.messages = messages
        self._sums: dict[Callable[[Message], int], list[int]] = {}

    def target(self, weight: Callable[[Message], int], start: int, amount: int) -> int:
        """The number of messages read once those from ``start`` on weigh ``amount``."""
        sums = self._sums.get(weight)
        if sums is None:
            sums = [0]
            for m in self.messages:
                sums.append(sums[-1] + (0 if m.meta.get("compaction") else weight(m)))
            self._sums[weight] = sums
        k = bisect.bisect_left(sums, sums[start] + amount, lo=start)
        return k if k < len(sums) else FAR


class Member:
    """One configuration's strategy in a trajectory: its stages, each one's wake (None: awake, asked at the
    next question), the trajectory's user messages when it fell asleep and the messages it must have read
    to wake (``grown``).

    ``key`` says whose it is (the caller's index; the reference's is -1); ``create`` builds a fresh
    instance when the member must be replayed again from the start."""

    __slots__ = ("at", "create", "key", "sleep", "stages", "strategy", "until_first", "users_at", "wakes")

    def __init__(self, key: int, strategy: Strategy, create: Callable[[], Strategy] | None = None) -> None:
        self.key = key
        self.strategy = strategy
        self.create = create
        self.stages: Sequence[Strategy] = stages_of(strategy)
        self.until_first = bool(getattr(strategy, "until_first", False))
        self.wakes: list[Callable[[SessionView], Wake] | None] = [
            wake_of(x) if WAKE else None for x in self.stages]
        self.sleep: list[Wake | None] = [None] * len(self.stages)
        self.users_at = [0] * len(self.stages)
        self.at = [FAR] * len(self.stages)

    @property
    def shape(self) -> tuple[int, bool]:
        """What two members must share to be compared stage by stage."""
        return len(self.stages), self.until_first

    def awake(self) -> None:
        """Every stage is asked at the next question (the view changed, or a /compact was asked)."""
        if any(x is not None for x in self.sleep):
            self.sleep = [None] * len(self.stages)

    def fresh(self) -> Member:
        """The same configuration, a new instance, nothing asked yet."""
        if self.create is None:
            raise RuntimeError(f"member {self.key} cannot be replayed again: no factory")
        return Member(self.key, self.create(), self.create)


class Question:
    """What the loop knows at a question, for the wake conditions: ``at`` is how many recorded messages the
    trajectory has read."""

    __slots__ = ("at", "entries", "step", "tokens", "usage", "users")

    def __init__(self, view: SessionView, users: int, at: int) -> None:
        self.tokens = view.context_tokens
        u = view.last_usage
        self.usage = u.input + u.output if u is not None else -1
        self.entries = len(view.entries)
        self.step = view.step
        self.users = users
        self.at = at


def fires(w: Wake, q: Question, users_at: int, at: int) -> bool:
    return ((w.tokens is not None and q.tokens >= w.tokens) or (w.usage is not None and q.usage >= w.usage)
            or (w.user and q.users > users_at) or (w.entries is not None and q.entries >= w.entries)
            or (w.step is not None and q.step >= w.step) or q.at >= at)


class Alarm:
    """The earliest wake of a trajectory's sleeping stages: ``quiet(q)`` is True when no stage is awake and
    none wakes at ``q``, the common case, answered without looking at the members."""

    __slots__ = ("at", "awake", "dirty", "entries", "step", "tokens", "usage", "users_at")

    def __init__(self) -> None:
        self.dirty = True
        self.awake = True
        self.tokens = self.usage = self.entries = self.step = self.users_at = self.at = FAR

    def quiet(self, q: Question, members: Sequence[Member]) -> bool:
        if self.dirty:
            self._rebuild(members)
        return not self.awake and q.tokens < self.tokens and q.usage < self.usage and q.entries < self.entries \
            and q.step < self.step and q.users <= self.users_at and q.at < self.at

    def _rebuild(self, members: Sequence[Member]) -> None:
        self.dirty = False
        self.awake = False
        tokens = usage = entries = step = users_at = at = FAR
        for m in members:
            for w, u, a in zip(m.sleep, m.users_at, m.at, strict=True):
                if w is None:
                    self.awake = True
                    return
                if w.tokens is not None:
                    tokens = min(tokens, w.tokens)
                if w.usage is not None:
                    usage = min(usage, w.usage)
                if w.entries is not None:
                    entries = min(entries, w.entries)
                if w.step is not None:
                    step = min(step, w.step)
                if w.user:
                    users_at = min(users_at, u)
                at = min(at, a)
        self.tokens, self.usage, self.entries, self.step, self.users_at, self.at = (tokens, usage, entries, step,
                                                                                  users_at, at)


def ask(member: Member, k: int, hook: Callable[[Strategy], Sequence[Any]], view: SessionView, q: Question,
        weights: Weights) -> tuple[list[Any], bool]:
    """Stage ``k`` of ``member``'s answer to the question (nothing, unasked, while it sleeps), and whether it
    was asked. A stage that answers nothing and has a wake falls asleep."""
    w = member.sleep[k]
    if w is not None:
        if not fires(w, q, member.users_at[k], member.at[k]):
            return [], False
        member.sleep[k] = None
    actions = list(hook(member.stages[k]))
    if not actions:
        wake = member.wakes[k]
        if wake is not None:
            w = member.sleep[k] = wake(view)
            member.users_at[k] = q.users
            member.at[k] = weights.target(w.grown[0], q.at, w.grown[1]) if w.grown is not None else FAR
    return actions, True
