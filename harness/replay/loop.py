"""``compbench.replay.loop`` — The replay loop: one recorded transcript, one strategy, one simulated model.

Every recorded assistant message is one simulated model call (a *step*). Before it, the strategy's
``before_step`` may act (pre-turn triggers: the Go agent, seed 004); the call's usage is what a real
API would report for the current view; after it, ``after_step`` sees that usage (post-step triggers:
OpenCode, pi, Codex). Recorded non-assistant messages join the view as they come. After a compaction
the replay continues with the *recorded* next messages: it assumes the agent would have acted the same.

Messages an importer marked ``meta["compaction"]`` (the recorded tool's own summary, marker and
auto-continue messages) are skipped: under replay, compaction is the strategy's job.

Cost: counts come from a per-transcript token index computed once; context size is a running sum and
the cached prefix is tracked by the lowest view position changed since the previous call, so a step is
O(1) unless a strategy acts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

from compbench.data.transcript import Message, Reasoning, Transcript, Usage
from compbench.measure.cache import message_time
from compbench.measure.tokens import TokenCounter, TranscriptTokens
from compbench.replay.context import ReplayContext, RoundCache
from compbench.replay.events import CompactionEvent, Event, Phase, PruneEvent
from compbench.replay.session import Action, Compact, Entry, Prune, SessionView
from compbench.replay.viewstate import NOOP, Observer, ReplayConfig, ViewState, apply_compact, apply_prune
from compbench.sdk import (
    CompactionCheck,
    CompactionFollowup,
    ManualCompaction,
    Strategy,
    optional,
    stages_of,
)
from compbench.summarizers import Summarizer

# The strategy protocols live in compbench.sdk, the events in compbench.replay.events, the view's state and how
# actions change it in compbench.replay.viewstate; these names stay importable from here.
__all__ = ["NOOP", "CompactionCheck", "CompactionEvent", "CompactionFollowup", "ManualCompaction", "Observer",
           "Phase", "PruneEvent", "ReplayConfig", "StepRecord", "Strategy", "Trace", "recorded_entries", "replay",
           "stages_of"]


class StepRecord(NamedTuple):
    """One simulated model call. A NamedTuple: one is built per step per replay, and a frozen dataclass's
    ``__init__`` (a guarded ``object.__setattr__`` per field) made that a visible share of a tuning sweep."""

    step: int
    message_id: str
    message_index: int
    input: int
    output: int
    cache_read: int
    cache_write: int
    visible: int
    epoch: int
    overflow: bool


@dataclass(frozen=True, slots=True)
class Trace:
    """Everything a replay did. ``epochs[k]`` lists the view's ids when epoch k began (after an event);
    a step's visible ids are its epoch's ids plus the recorded messages appended since."""

    transcript_id: str
    strategy: str
    steps: tuple[StepRecord, ...]
    compactions: tuple[CompactionEvent, ...]
    prunes: tuple[PruneEvent, ...]
    epochs: tuple[tuple[str, ...], ...]
    epoch_starts: tuple[int, ...]
    final_view: tuple[str, ...]


def _output_tokens(counter: TokenCounter, m: Message, counts: Sequence[int]) -> int:
    """Tokens the model generated: visible parts plus readable reasoning (encrypted blobs excluded)."""
    extra = sum(counter.count_text(p.text) for p in m.parts if isinstance(p, Reasoning) and not p.encrypted)
    return sum(counts) + extra


def recorded_entries(transcript: Transcript, tokens: TranscriptTokens) -> tuple[Entry, ...]:
    """The view entries of the recorded messages. Entries are immutable (a prune replaces one), so the
    replays of every strategy over one transcript can share them."""
    return tuple(Entry(m, tokens.message_tokens[i], tokens.part_tokens[i], "recorded", i)
                 for i, m in enumerate(transcript.messages))


def _follow(live: list[int], shadows: Sequence[Strategy], diverged: set[int],
            call: Callable[[Strategy], Sequence[Action]], actions: Sequence[Action]) -> None:
    """Ask every shadow still in step the leader's question; one that answers differently has left
    the leader's trajectory from here on."""
    expected = list(actions)
    for k in list(live):
        if list(call(shadows[k])) != expected:
            live.remove(k)
            diverged.add(k)


def replay(transcript: Transcript, strategy: Strategy, summarizer: Summarizer, config: ReplayConfig,
           counter: TokenCounter, index: TranscriptTokens | None = None, observer: Observer | None = None,
           entries: Sequence[Entry] | None = None, shadows: Sequence[Strategy] = (),
           diverged: set[int] | None = None, context: ReplayContext | None = None) -> Trace:
    """Replay ``transcript`` under ``strategy``; pure given a deterministic summarizer.

    ``entries`` (from :func:`recorded_entries` with the same ``index``) saves rebuilding them per strategy;
    ``context`` (the run's, open on this transcript) shares the strategies' per-message work with the
    transcript's other replays (without one the replay has its own).

    ``shadows`` (a tuning grid's other configurations of the same strategy) are asked every question
    the leader is asked, on the same view; while each answers exactly as the leader does, its own replay
    would be this one, action for action, so the trace is its trace too. The index of a shadow that
    answers differently (or is composed of another number of stages) goes into ``diverged``: its replay
    must be run by itself. Only sound with a pure summarizer (the same request always gets the same summary).
    """
    if diverged is None:
        diverged = set()
    tokens = index or counter.index(transcript)
    recorded = entries if entries is not None else recorded_entries(transcript, tokens)
    rounds = RoundCache()
    s = ViewState(config, counter, observer, context, rounds)
    view = s.view
    view.meta = transcript.meta  # what the recording says (the model a strategy's rules may depend on)
    steps: list[StepRecord] = []
    compactions: list[CompactionEvent] = []
    prunes: list[PruneEvent] = []
    seq = 0

    stages = stages_of(strategy)
    shadow_stages = [stages_of(x) for x in shadows]
    live = [k for k, x in enumerate(shadow_stages) if len(x) == len(stages)]
    diverged.update(k for k, x in enumerate(shadow_stages) if len(x) != len(stages))
    own: list[Event | None] = [None] * len(stages)  # each stage's last event (what its view.last_event shows)

    def check(stage: int, a: Compact, summary: str) -> str | None:
        """The verdict of the stage that asked for a summarized compaction; a shadow answering otherwise
        diverges."""
        verdict = _accept(stages[stage], a, summary)
        for k in list(live):
            if _accept(shadow_stages[k][stage], a, summary) != verdict:
                live.remove(k)
                diverged.add(k)
        return verdict

    def apply(actions: Sequence[Action], step: int, phase: Phase, next_index: int, stage: int = 0) -> None:
        nonlocal seq
        followup = optional(stages[stage], "after_compaction")  # the stage that acted (CompactionFollowup)
        queue = list(actions)
        while queue:
            a = queue.pop(0)
            seq += 1
            if observer:
                observer.action(seq, False, s.entries, a)
            ev: Event
            if isinstance(a, Prune):
                ev = apply_prune(s, a, seq, step, phase)
                prunes.append(ev)
            else:
                ev = apply_compact(s, a, summarizer, seq, step, phase, partial(check, stage))
                compactions.append(ev)
                if ev.ok:
                    view.compactions += 1
                elif a.fallback is not None and ev.error != NOOP:  # the tool's own failure path, applied next
                    queue.insert(0, a.fallback)
            if ev.applied:
                view.revision += 1
            own[stage] = view.last_event = ev
            view.context_tokens = s.input_tokens()
            if isinstance(a, Compact):
                s.new_epoch(next_index)  # a prune hides parts but changes no message's visibility
            if observer:
                observer.action(seq, True, s.entries, a)
            if isinstance(ev, CompactionEvent) and followup is not None:
                more = list(followup(view, ev))
                if live:
                    _follow(live, [x[stage] for x in shadow_stages], diverged,
                            partial(_after_compaction, view=view, event=ev), more)
                queue[0:0] = more

    step = 0
    manual_at = config.manual_at  # None once asked (or never asked)

    until_first = bool(getattr(strategy, "until_first", False))

    def ask(hook: Callable[[Strategy], Sequence[Action]], phase: Phase, next_index: int) -> None:
        """One hook round: each stage in turn, its actions applied before the next stage is asked (a
        composition that ends a round at its first condensing stage stops there: a prune, like a masking
        condenser's new view, goes on to the next stage)."""
        for k, stage in enumerate(stages):
            view.last_event = own[k]
            actions = hook(stage)
            if live:
                _follow(live, [x[k] for x in shadow_stages], diverged, hook, actions)
            apply(actions, step, phase, next_index, k)
            if actions:
                rounds.clear()  # computed on the view before these actions
            if until_first and any(isinstance(a, Compact) for a in actions):
                break

    def ask_manual(next_index: int) -> None:
        """The user's /compact before message ``next_index`` joins (or after the last one)."""
        view.step = step
        view.context_tokens = s.input_tokens()
        rounds.clear()
        ask(partial(_manual_actions, view=view), "manual", next_index)

    timed = config.cache.ttl_s is not None
    for i, m in enumerate(transcript.messages):
        if timed:
            s.now = message_time(m.meta)
        if manual_at is not None and i >= manual_at:
            ask_manual(i)
            manual_at = None
        if m.meta.get("compaction"):
            continue  # the recorded tool's own compaction artifacts: the strategy compacts by itself
        entry = recorded[i]
        counts = entry.part_tokens
        if m.role != "assistant":
            s.append(entry)
            view.context_tokens = s.input_tokens()
            continue
        view.step = step
        view.context_tokens = s.input_tokens()
        rounds.clear()
        ask(lambda x: x.before_step(view), "before", i)
        if observer:
            observer.step(step, i)
        inp, cached, written = s.call()
        out = _output_tokens(counter, m, counts)
        usage = Usage(input=inp, output=out, cache_read=cached, cache_write=written)
        steps.append(StepRecord(step, m.id, i, inp, out, cached, written, len(s.entries),
                                len(s.epochs) - 1, inp > config.limits.input_limit))
        s.append(entry)
        if config.recorded_usage and m.usage is not None and not compactions and not prunes:
            usage = m.usage
        view.last_usage = usage
        view.context_tokens = s.input_tokens()
        rounds.clear()
        ask(partial(_after, view=view, usage=usage), "after", i + 1)
        step += 1
    if manual_at is not None:  # asked after the last recorded message
        ask_manual(len(transcript.messages))
    return Trace(transcript.id, strategy.name, tuple(steps), tuple(compactions), tuple(prunes),
                 tuple(s.epochs), tuple(s.epoch_starts), tuple(e.id for e in s.entries))


def _after(strategy: Strategy, view: SessionView, usage: Usage) -> Sequence[Action]:
    return strategy.after_step(view, usage)


def _accept(strategy: Strategy, a: Compact, summary: str) -> str | None:
    """The strategy's :class:`CompactionCheck` verdict (None: accepted, or no such check)."""
    accept = optional(strategy, "accept")
    verdict: str | None = accept(a, summary) if accept is not None else None
    return verdict


def _after_compaction(strategy: Strategy, view: SessionView, event: CompactionEvent) -> Sequence[Action]:
    """The strategy's :class:`CompactionFollowup` (nothing, if it has none)."""
    followup = optional(strategy, "after_compaction")
    more: Sequence[Action] = followup(view, event) if followup is not None else ()
    return more


def _manual_actions(strategy: Strategy, view: SessionView) -> list[Action]:
    """The strategy's /compact (:class:`ManualCompaction`), if it has one."""
    manual = optional(strategy, "manual")
    asked: Compact | None = manual(view) if manual is not None else None
    return [asked] if asked is not None else []
