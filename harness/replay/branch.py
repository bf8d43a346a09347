"""``compbench.replay.branch`` — One trajectory of a transcript's replay, followed by every configuration that acts as
its leader does, and forked where one acts otherwise.

A run replays each transcript under many configurations, and until a strategy first acts its view is the
``none`` reference's. The replay therefore starts as one trajectory, the reference, followed by every
configuration: each is asked every question the reference is asked, on the same view. Where one answers
something else (it acts), the trajectory *forks*: a copy of the state at that question, with the answer
applied, continues for that configuration (and for any other that answered the same), from the question
on; the rest go on as before. So the common part is replayed once, and a configuration costs what follows
its first action. A tuning grid's configurations keep following one another after their first action, as
long as they act alike (only with a pure summarizer, which gives the same request the same summary).

A member that disagrees in a way that cannot be forked at a question — its summary check or its follow-up
after a compaction differs from the leader's, or it has another number of stages than the trajectory it
follows after acting — is replayed again from the start, from a fresh instance (:meth:`Member.fresh`).

Questions are skipped for stages asleep until their wake condition (:mod:`compbench.replay.members`).
:func:`compbench.replay.trajectories.replay_together` drives the trajectories;
:func:`compbench.replay.trajectories.replay` is the single-strategy case.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from compbench.data.transcript import Message, Reasoning, Transcript, Usage
from compbench.measure.tokens import TokenCounter
from compbench.replay.members import Alarm, Member, Question, Weights, ask
from compbench.replay.viewstate import Observer, ReplayConfig, ViewState, apply_compact, apply_prune
from compbench.sdk.context import ReplayContext, RoundCache
from compbench.sdk.events import NOOP, CompactionEvent, Event, Phase, PruneEvent
from compbench.sdk.protocols import Strategy, optional
from compbench.sdk.session import Action, Compact, Entry, Prune, SessionView
from compbench.sdk.trace import StepRecord
from compbench.summarizers import Summarizer


@dataclass(frozen=True, slots=True)
class Resume:
    """Where a forked trajectory picks up: stage ``stage`` of the ``phase`` question at message ``index``
    answered ``actions`` (applied first, then the rest of that question and of the step)."""

    index: int
    phase: Phase
    stage: int
    actions: tuple[Action, ...]


class Shared:
    """What every trajectory of one transcript shares, computed once: the recorded entries, each assistant
    message's output tokens and each message's recorded time."""

    __slots__ = ("config", "context", "counter", "entries", "messages", "outputs", "recorded_until", "summarizer",
                 "times", "transcript", "weights")

    def __init__(self, transcript: Transcript, entries: Sequence[Entry], config: ReplayConfig,
                 counter: TokenCounter, summarizer: Summarizer, context: ReplayContext) -> None:
        from compbench.measure.cache import message_time

        self.transcript = transcript
        self.messages = transcript.messages
        self.entries = entries
        self.config = config
        self.counter = counter
        self.summarizer = summarizer
        self.context = context
        self.outputs = [_output_tokens(counter, m, e.part_tokens) if m.role == "assistant" else 0
                        for m, e in zip(self.messages, entries, strict=True)]
        self.times = [message_time(m.meta) for m in self.messages] if config.cache.ttl_s is not None else None
        self.weights = Weights(self.messages)
        # the recorded usage describes the context every replay starts from only up to the tool's first own
        # compaction: after it the log's prompts are of the tool's compacted context, not of any replay's
        self.recorded_until = min((c.index for c in transcript.compactions), default=len(self.messages))


def _output_tokens(counter: TokenCounter, m: Message, counts: Sequence[int]) -> int:
    """Tokens the model generated: visible parts plus readable reasoning (encrypted blobs excluded)."""
    extra = sum(counter.count_text(p.text) for p in m.parts if isinstance(p, Reasoning) and not p.encrypted)
    return sum(counts) + extra


class Branch:
    """One trajectory: the view's state, what the replay recorded so far, the members that follow it."""

    def __init__(self, shared: Shared, members: list[Member], observer: Observer | None,
                 reference: bool, pure: bool) -> None:
        self.t = shared
        self.members = members
        self.observer = observer
        self.reference = reference  # the leader never acts: followers of any shape, compared with nothing
        self.pure = pure
        self.rounds = RoundCache()
        self.s = ViewState(shared.config, shared.counter, observer, shared.context, self.rounds)
        self.view = self.s.view
        self.view.meta = shared.transcript.meta  # what the recording says (the model a strategy's rules may use)
        self.steps: list[StepRecord] = []
        self.compactions: list[CompactionEvent] = []
        self.prunes: list[PruneEvent] = []
        self.seq = 0
        self.step = 0
        self.users = 0  # recorded user messages that joined the view (wake "user")
        self.at = 0  # recorded messages read so far (wake "grown")
        self.own: list[Event | None] = [None] * len(members[0].stages)  # each stage's last event
        self.manual_at = shared.config.manual_at  # None once asked (or never asked)
        self.alarm = Alarm()
        self.forks: list[tuple[Branch, Resume]] = []  # trajectories that left this one, to run next
        self.restarts: list[Member] = []  # members to replay again from the start
        self.usage: Usage | None = None  # the current step's usage, for the after question

    # --- the transcript, message by message ------------------------------------------------------------
    def run(self, resume: Resume | None = None) -> None:
        n = len(self.t.messages)
        start = self._resume(resume) if resume is not None else 0
        for i in range(start, n):
            self._message(i)
        if self.manual_at is not None:  # asked after the last recorded message
            self._manual(n)

    def _message(self, i: int) -> None:
        if self.t.times is not None:
            self.s.now = self.t.times[i]
        if self.manual_at is not None and i >= self.manual_at:
            self._manual(i)
        self._rest(i)

    def _rest(self, i: int) -> None:
        """Message ``i`` once any /compact before it was asked."""
        if self.t.messages[i].meta.get("compaction"):
            self.at = i + 1
            return  # the recorded tool's own compaction artifacts: the strategy compacts by itself
        entry = self.t.entries[i]
        s, view = self.s, self.view
        if entry.role != "assistant":
            s.append(entry)
            self.at = i + 1
            if entry.role == "user":
                self.users += 1
            view.context_tokens = s.input_tokens()
            return
        view.step = self.step
        view.context_tokens = s.input_tokens()
        self.rounds.clear()
        self._round("before", i)
        self._call(i)
        self._round("after", i)
        self.step += 1

    def _call(self, i: int) -> None:
        s, view, entry = self.s, self.view, self.t.entries[i]
        if self.observer:
            self.observer.step(self.step, i)
        inp, cached, written = s.call()
        out = self.t.outputs[i]
        steps = self.steps
        steps.append(StepRecord(self.step, entry.id, i, inp, out, cached, written, len(s.entries),
                                len(s.epochs) - 1, inp > self.t.config.limits.input_limit))
        s.append(entry)
        self.at = i + 1
        m = self.t.messages[i]
        if (self.t.config.recorded_usage and m.usage is not None and not self.compactions and not self.prunes
                and i < self.t.recorded_until):
            usage = m.usage
        else:
            usage = Usage(input=inp, output=out, cache_read=cached, cache_write=written)
        self.usage = view.last_usage = usage
        view.context_tokens = s.input_tokens()
        self.rounds.clear()

    def _manual(self, i: int) -> None:
        """The user's /compact before message ``i`` joins (or after the last one)."""
        self.manual_at = None
        self.view.step = self.step
        self.view.context_tokens = self.s.input_tokens()
        self.rounds.clear()
        self._round("manual", i)

    def _resume(self, r: Resume) -> int:
        """Finish the question a fork left and the rest of its step; the next message to replay."""
        self._round(r.phase, r.index, r.stage, r.actions)
        if r.phase == "manual":
            if r.index < len(self.t.messages):
                self._rest(r.index)
        elif r.phase == "before":
            self._call(r.index)
            self._round("after", r.index)
            self.step += 1
        else:
            self.step += 1
        return r.index + 1

    # --- questions ---------------------------------------------------------------------------------------
    def _hook(self, phase: Phase) -> Callable[[Strategy], Sequence[Action]]:
        view = self.view
        if phase == "before":
            return lambda x: x.before_step(view)
        if phase == "after":
            assert self.usage is not None  # set by the step's call
            return partial(_after, view=view, usage=self.usage)
        return partial(_manual_actions, view=view)

    def _round(self, phase: Phase, i: int, start: int = 0, first: tuple[Action, ...] | None = None) -> None:
        """One question: each stage of the leader in turn, its actions applied before the next stage is
        asked (a composition that ends a round at its first acting stage stops there). Followers are asked
        too; one that answers otherwise leaves (a fork)."""
        next_index = i + 1 if phase == "after" else i
        hook = self._hook(phase)
        manual = phase == "manual"
        q = Question(self.view, self.users, self.at)
        if first is None and not manual and self.alarm.quiet(q, self.members):
            return  # nobody awake, nobody wakes: every answer is nothing
        leader = self.members[0]
        for k in range(start, len(leader.stages)):
            self.view.last_event = self.own[k]
            if first is not None and k == start:
                actions = list(first)
            elif manual:
                actions = list(hook(leader.stages[k]))
            else:
                actions, asked = ask(leader, k, hook, self.view, q, self.t.weights)
                self.alarm.dirty |= asked
            if len(self.members) > 1 and not (first is not None and k == start):
                self._follow(phase, i, k, hook, actions, q)
            self._apply(actions, phase, next_index, k)
            if actions:
                self.rounds.clear()  # computed on the view before these actions
                q = Question(self.view, self.users, self.at)
                # a composition that ends a round at its first condensing stage stops there: a prune, like a
                # masking condenser's new view, goes on to the next stage
                if leader.until_first and any(isinstance(a, Compact) for a in actions):
                    break
        if manual:
            for m in self.members:
                m.awake()
            self.alarm.dirty = True

    def _follow(self, phase: Phase, i: int, k: int, hook: Callable[[Strategy], Sequence[Action]],
                actions: list[Action], q: Question) -> None:
        """Ask the followers the leader's question (stage ``k``); those that answer otherwise fork."""
        manual = phase == "manual"
        left: list[tuple[Member, int, list[Action]]] = []
        view = self.view
        for m in self.members[1:]:
            if self.reference:  # every stage of a follower of the reference must answer nothing
                if k:
                    continue
                for j in range(len(m.stages)):
                    view.last_event = None
                    if manual:
                        b = list(hook(m.stages[j]))
                    else:
                        b, asked = ask(m, j, hook, view, q, self.t.weights)
                        self.alarm.dirty |= asked
                    if b:
                        left.append((m, j, b))
                        break
                view.last_event = self.own[k]
                continue
            if manual:
                b = list(hook(m.stages[k]))
            else:
                b, asked = ask(m, k, hook, view, q, self.t.weights)
                self.alarm.dirty |= asked
            if b != actions:
                left.append((m, k, b))
        if left:
            self._fork(phase, i, left)

    def _fork(self, phase: Phase, i: int, left: list[tuple[Member, int, list[Action]]]) -> None:
        """Trajectories for the members that answered otherwise, from the state at this question: members
        that gave the same answer at the same stage (and have the same shape) share one when the summarizer
        is pure."""
        gone = {id(m) for m, _, _ in left}
        self.members = [m for m in self.members if id(m) not in gone]
        self.alarm.dirty = True
        groups: list[tuple[list[Member], int, list[Action]]] = []
        for m, j, b in left:
            if self.pure:
                same = next((g for g in groups if g[1] == j and g[2] == b and g[0][0].shape == m.shape), None)
                if same is not None:
                    same[0].append(m)
                    continue
            groups.append(([m], j, b))
        for members, j, b in groups:
            own: list[Event | None] = [None] * len(members[0].stages) if self.reference else list(self.own)
            self.forks.append((self.fork(members, own), Resume(i, phase, j, tuple(b))))

    def fork(self, members: list[Member], own: list[Event | None]) -> Branch:
        """A copy of this trajectory's state now, followed by ``members``."""
        b = Branch.__new__(Branch)
        b.t, b.members, b.reference, b.pure = self.t, members, False, self.pure
        b.observer = self.observer.fork() if self.observer is not None else None
        b.rounds = RoundCache()
        b.s = self.s.fork(b.observer, b.rounds)
        b.view = b.s.view
        b.steps, b.compactions, b.prunes = list(self.steps), list(self.compactions), list(self.prunes)
        b.seq, b.step, b.users, b.at, b.own, b.manual_at = self.seq, self.step, self.users, self.at, own, self.manual_at
        b.alarm, b.forks, b.restarts, b.usage = Alarm(), [], [], self.usage
        return b

    # --- answers -----------------------------------------------------------------------------------------
    def _apply(self, actions: Sequence[Action], phase: Phase, next_index: int, stage: int) -> None:
        leader = self.members[0]
        s, view = self.s, self.view
        acting = leader.stages[stage]
        followup = optional(acting, "after_compaction")  # the stage that acted (CompactionFollowup)
        queue = list(actions)
        while queue:
            a = queue.pop(0)
            self.seq += 1
            seq = self.seq
            if self.observer:
                self.observer.action(seq, False, s.entries, a)
            ev: Event
            if isinstance(a, Prune):
                ev = apply_prune(s, a, seq, self.step, phase)
                self.prunes.append(ev)
            else:
                ev = apply_compact(s, a, self.t.summarizer, seq, self.step, phase, partial(self._check, stage))
                self.compactions.append(ev)
                if ev.ok:
                    view.compactions += 1
                elif a.fallback is not None and ev.error != NOOP:  # the tool's own failure path, applied next
                    queue.insert(0, a.fallback)
            if ev.applied:
                s.revise()
                for m in self.members:  # a wake condition speaks of a view that only grows
                    m.awake()
                self.alarm.dirty = True
            self.own[stage] = view.last_event = ev
            view.context_tokens = s.input_tokens()
            if isinstance(a, Compact):
                s.new_epoch(next_index)  # a prune hides parts but changes no message's visibility
            if self.observer:
                self.observer.action(seq, True, s.entries, a)
            if isinstance(ev, CompactionEvent) and followup is not None:
                more = list(followup(view, ev))
                for m in self.members[1:]:
                    if list(_after_compaction(m.stages[stage], view, ev)) != more:
                        self._restart(m)
                queue[0:0] = more

    def _check(self, stage: int, a: Compact, summary: str) -> str | None:
        """The verdict of the stage that asked for a summarized compaction; a follower answering otherwise
        is replayed again from the start."""
        verdict = _accept(self.members[0].stages[stage], a, summary)
        for m in self.members[1:]:
            if _accept(m.stages[stage], a, summary) != verdict:
                self._restart(m)
        return verdict

    def _restart(self, m: Member) -> None:
        if m in self.members:
            self.members.remove(m)
            self.restarts.append(m)
            self.alarm.dirty = True


def _after(strategy: Strategy, view: SessionView, usage: Usage) -> Sequence[Action]:
    return strategy.after_step(view, usage)


def _accept(strategy: Strategy, a: Compact, summary: str) -> str | None:
    """The strategy's :class:`~compbench.sdk.protocols.CompactionCheck` verdict (None: accepted, or no such check)."""
    accept = optional(strategy, "accept")
    verdict: str | None = accept(a, summary) if accept is not None else None
    return verdict


def _after_compaction(strategy: Strategy, view: SessionView, event: CompactionEvent) -> Sequence[Action]:
    """The strategy's :class:`~compbench.sdk.protocols.CompactionFollowup` (nothing, if it has none)."""
    followup = optional(strategy, "after_compaction")
    more: Sequence[Action] = followup(view, event) if followup is not None else ()
    return more


def _manual_actions(strategy: Strategy, view: SessionView) -> list[Action]:
    """The strategy's /compact (:class:`~compbench.sdk.protocols.ManualCompaction`), if it has one."""
    manual = optional(strategy, "manual")
    asked: Compact | None = manual(view) if manual is not None else None
    return [asked] if asked is not None else []
