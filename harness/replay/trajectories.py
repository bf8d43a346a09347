"""``compbench.replay.trajectories`` — A transcript's trajectories: replayed under one strategy (:func:`replay`) or
under a run's configurations together (:func:`replay_together`), stepped by :class:`compbench.replay.branch.Branch`
(the loop itself): one recorded transcript, each strategy, one simulated model.

Every recorded assistant message is one simulated model call (a *step*). Before it, the strategy's
``before_step`` may act (pre-turn triggers: the Go agent, seed 004); the call's usage is what a real
API would report for the current view; after it, ``after_step`` sees that usage (post-step triggers:
OpenCode, pi, Codex). Recorded non-assistant messages join the view as they come. After a compaction
the replay continues with the *recorded* next messages: it assumes the agent would have acted the same.

Messages an importer marked ``meta["compaction"]`` (the recorded tool's own summary, marker and
auto-continue messages) are skipped: under replay, compaction is the strategy's job.

Cost: counts come from a per-transcript token index computed once; context size is a running sum and
the cached prefix is tracked by the lowest view position changed since the previous call, so a step is
O(1) unless a strategy acts. A run's configurations are replayed together (:func:`replay_together`): one
trajectory while they act alike, forked where one acts otherwise (:mod:`compbench.replay.branch`), each
strategy asked only when its wake condition says it may act (:mod:`compbench.replay.members`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from compbench.data.transcript import Transcript
from compbench.measure.tokens import TokenCounter, TranscriptTokens
from compbench.replay.branch import Branch, Resume, Shared
from compbench.replay.members import Member
from compbench.replay.viewstate import Observer, ReplayConfig
from compbench.sdk import (
    Strategy,
)
from compbench.sdk.context import ReplayContext
from compbench.sdk.session import Entry
from compbench.sdk.trace import Trace
from compbench.summarizers import Summarizer


def recorded_entries(transcript: Transcript, tokens: TranscriptTokens) -> tuple[Entry, ...]:
    """The view entries of the recorded messages. Entries are immutable (a prune replaces one), so the
    replays of every strategy over one transcript can share them."""
    return tuple(Entry(m, tokens.message_tokens[i], tokens.part_tokens[i], "recorded", i)
                 for i, m in enumerate(transcript.messages))


def replay(transcript: Transcript, strategy: Strategy, summarizer: Summarizer, config: ReplayConfig,
           counter: TokenCounter, index: TranscriptTokens | None = None, observer: Observer | None = None,
           entries: Sequence[Entry] | None = None, context: ReplayContext | None = None) -> Trace:
    """Replay ``transcript`` under ``strategy``; pure given a deterministic summarizer.

    ``entries`` (from :func:`recorded_entries` with the same ``index``) saves rebuilding them per strategy;
    ``context`` (the run's, open on this transcript) shares the strategies' per-message work with the
    transcript's other replays (without one the replay has its own)."""
    shared = _shared(transcript, summarizer, config, counter, index, entries, context)
    branch = Branch(shared, [Member(0, strategy)], observer, reference=False, pure=True)
    branch.run()
    return _trace(branch)


def replay_together(transcript: Transcript, leader: Member, followers: Sequence[Member], summarizer: Summarizer,
                    config: ReplayConfig, counter: TokenCounter, index: TranscriptTokens | None = None,
                    observer: Callable[[], Observer] | None = None, entries: Sequence[Entry] | None = None,
                    context: ReplayContext | None = None, *, reference: bool = False, pure: bool = True
                    ) -> dict[int, tuple[Trace, Observer | None]]:
    """Replay ``transcript`` under ``leader`` and every follower at once: each member's trace (and the
    observer that followed it), by member key. Members that acted alike to the end share one trace.

    The followers follow the leader while they answer every question as it does; one that acts otherwise
    forks a trajectory of its own at that question (:mod:`compbench.replay.branch`). ``reference``: the
    leader never acts (``none``), so followers of any composition follow it while they answer nothing.
    ``pure``: the summarizer gives a request the same summary every time, so members that acted alike may
    go on sharing a trajectory (otherwise each member that acts gets its own). ``observer`` builds the
    observer of a trajectory started from the beginning; a fork's is the ``fork()`` of its parent's."""
    shared = _shared(transcript, summarizer, config, counter, index, entries, context)
    root = Branch(shared, [leader, *followers], observer() if observer else None, reference, pure)
    out: dict[int, tuple[Trace, Observer | None]] = {}
    pending: list[tuple[Branch, Resume | None]] = [(root, None)]
    while pending:
        branch, resume = pending.pop()
        branch.run(resume)
        trace = _trace(branch)
        for m in branch.members:
            out[m.key] = (trace, branch.observer)
        later: list[tuple[Branch, Resume | None]] = list(branch.forks)
        groups: dict[tuple[int, bool], list[Member]] = {}
        for m in branch.restarts:  # replayed again from the start, together while they act alike
            groups.setdefault(m.shape, []).append(m.fresh())
        for group in groups.values():
            later.append((Branch(shared, group, observer() if observer else None, False, pure), None))
        later.sort(key=lambda f: min(m.key for m in f[0].members), reverse=True)  # lowest key next
        pending.extend(later)
    return out


def _shared(transcript: Transcript, summarizer: Summarizer, config: ReplayConfig, counter: TokenCounter,
            index: TranscriptTokens | None, entries: Sequence[Entry] | None, context: ReplayContext | None) -> Shared:
    tokens = index or counter.index(transcript)
    recorded = entries if entries is not None else recorded_entries(transcript, tokens)
    return Shared(transcript, recorded, config, counter, summarizer,
                  context if context is not None else ReplayContext())


def _trace(b: Branch) -> Trace:
    return Trace(b.t.transcript.id, b.members[0].strategy.name, tuple(b.steps), tuple(b.compactions),
                 tuple(b.prunes), tuple(b.s.epochs), tuple(b.s.epoch_starts), tuple(e.id for e in b.s.entries))
