"""The replay loop: one recorded transcript, one strategy, one simulated model.

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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Literal, NamedTuple, Protocol, cast

from compbench.cache import NO_CACHE_MODEL, CacheModel, message_time
from compbench.session import (
    PREVIOUS_ANSWER,
    Action,
    Compact,
    Entry,
    Followup,
    Insert,
    Keep,
    ModelLimits,
    Prune,
    SessionView,
    SummaryRequest,
)
from compbench.summarizers import Summarizer, SummaryResult
from compbench.tokens import TokenCounter, TranscriptTokens
from compbench.transcript import Message, Reasoning, Text, ToolCall, Transcript, Usage

Phase = Literal["before", "after", "manual"]
NOOP = "no-op: the compaction would replace nothing"  # the error of a compaction that was not applied
_CLEAN = 1 << 62  # "no position changed since the previous call"


class Strategy(Protocol):
    """A compaction strategy; one instance per replay, so it may keep small private state."""

    name: str

    def before_step(self, s: SessionView) -> Sequence[Action]: ...

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]: ...


def stages_of(strategy: Strategy) -> Sequence[Strategy]:
    """A composed strategy (``stages``: mask → prune → summarize) is asked stage by stage, each on the
    view the previous stage's actions left; any other strategy is its own single stage."""
    stages: Sequence[Strategy] | None = getattr(strategy, "stages", None)
    return stages if stages else (strategy,)


class ManualCompaction(Protocol):
    """A strategy whose tool has a user-issued compaction (``/compact``): what it does when asked now.

    Optional: the loop looks for ``manual`` only when :class:`ReplayConfig` asks for a manual compaction
    (fidelity compares it with a recorded ``/compact``)."""

    def manual(self, s: SessionView) -> Compact | None: ...


class CompactionCheck(Protocol):
    """A strategy whose tool looks at the summary before using it (Gemini CLI rejects a compression that
    would grow the context): ``accept`` returns None to apply the compaction, or the reason it is
    rejected (the view stays as it was; the event records the reason as its error).

    Optional, like :class:`ManualCompaction`: the loop calls it, when the strategy has it, once a
    compaction's summary requests succeeded. It may update the strategy's own state (a flag that stops
    later attempts), and must depend only on its arguments and that state."""

    def accept(self, a: Compact, summary: str) -> str | None: ...


class CompactionFollowup(Protocol):
    """A strategy whose next move depends on what a compaction produced (aider summarizes again, one level
    deeper, when the summary and the kept tail still exceed its budget): asked right after each of its
    compactions is applied, before anything else happens; what it returns is applied next.

    Optional: the loop looks for ``after_compaction`` on the strategy."""

    def after_compaction(self, s: SessionView, event: CompactionEvent) -> Sequence[Action]: ...


class Observer(Protocol):
    """Follows the view incrementally (fact presence): told of every change, never asked anything."""

    def added(self, e: Entry) -> None: ...

    def removed(self, e: Entry) -> None: ...

    def part_hidden(self, e: Entry, part: int) -> None: ...

    def step(self, step: int, message_index: int) -> None: ...

    def action(self, seq: int, done: bool, entries: Sequence[Entry], act: Action) -> None: ...


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
class CompactionEvent:
    """One compaction: what triggered it, what it replaced and kept, the summary and its cost."""

    seq: int
    step: int
    phase: Phase
    reason: str
    ok: bool
    tokens_before: int
    tokens_after: int
    replaced_ids: tuple[str, ...]
    kept_ids: tuple[str, ...]
    replaced_tokens: int
    summary: str
    summary_tokens: int
    summarizer_input: int
    summarizer_output: int
    error: str | None = None
    attempts: int = 0
    latency_ms: float = 0.0
    summary_budget: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    summarizer_cached: int = 0  # of summarizer_input, read from the session's prompt cache


@dataclass(frozen=True, slots=True)
class PruneEvent:
    seq: int
    step: int
    phase: Phase
    reason: str
    parts: tuple[tuple[str, int], ...]
    tokens_hidden: int


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


@dataclass(frozen=True, slots=True)
class ReplayConfig:
    """``recorded_usage``: while the view is still the recorded context (nothing compacted or pruned
    yet), strategies are shown the usage the real API recorded for the step instead of the computed one,
    so a fidelity check compares trigger logic rather than tokenizer error. ``manual_at``: before message
``manual_at`` joins, the strategy's ``manual`` compaction runs (if it has one), as a user's /compact."""

    limits: ModelLimits
    system_tokens: int = 0
    recorded_usage: bool = False
    manual_at: int | None = None  # the message index where the user asks for a compaction (/compact)
    cache: CacheModel = NO_CACHE_MODEL  # the provider's prompt cache (expiry, minimum prefix)


class _PrefixSums:
    """A Fenwick tree over the view's entry tokens: append, update one entry and sum a prefix in
    O(log n), so the cached prefix after a prune is not recomputed by summing the whole view."""

    def __init__(self) -> None:
        self.tree: list[int] = [0]

    def reset(self, values: Sequence[int]) -> None:
        self.tree = [0]
        for v in values:
            self.append(v)

    def append(self, value: int) -> None:
        i = len(self.tree)
        self.tree.append(0)
        # the new node covers (i - lowbit(i), i]: its value plus the nodes it absorbs
        total, j, low = value, i - 1, i - (i & -i)
        while j > low:
            total += self.tree[j]
            j -= j & -j
        self.tree[i] = total

    def add(self, pos: int, delta: int) -> None:
        i = pos + 1
        while i < len(self.tree):
            self.tree[i] += delta
            i += i & -i

    def prefix(self, n: int) -> int:
        total, i = 0, n
        while i > 0:
            total += self.tree[i]
            i -= i & -i
        return total


class _Session:
    """The loop's mutable state: the view, its token sum, and the cache bookkeeping."""

    def __init__(self, config: ReplayConfig, counter: TokenCounter, observer: Observer | None = None) -> None:
        self.observer = observer
        self.config = config
        self.counter = counter
        self.entries: list[Entry] = []
        self.context = 0  # sum of entry tokens
        self.view = SessionView(self.entries, config.limits, counter, config.system_tokens)
        self.prev_len = 0  # entries sent in the previous call (-1: no call yet)
        self.prev_input = -1
        self.prev_time: float | None = None  # the recorded time of the previous call
        self.now: float | None = None  # the recorded time of the message being replayed
        self.dirty = _CLEAN  # lowest position changed since the previous call
        self.epochs: list[tuple[str, ...]] = [()]
        self.epoch_starts: list[int] = [0]
        self.sums = _PrefixSums()
        self.positions: dict[str, int] = {}  # message id -> view position

    # view changes
    def append(self, e: Entry) -> None:
        self.positions[e.id] = len(self.entries)
        self.entries.append(e)
        self.sums.append(e.tokens)
        self.context += e.tokens
        if self.observer:
            self.observer.added(e)

    def input_tokens(self) -> int:
        return self.context + self.config.system_tokens

    def new_epoch(self, next_index: int) -> None:
        self.epochs.append(tuple(e.id for e in self.entries))
        self.epoch_starts.append(next_index)

    def insert_entry(self, slot: Insert, summary: str, seq: int, k: int) -> Entry:
        text = slot.text(summary)
        msg = Message(f"compbench:{seq}:{k}:{slot.origin}", slot.role, (Text(text),),
                      meta={"origin": slot.origin, **slot.meta})
        counts = self.counter.parts(msg)
        return Entry(msg, self.counter.message(msg, counts), counts, slot.origin)

    def replace_view(self, new: list[Entry]) -> None:
        old = self.entries
        first_diff = 0
        while first_diff < min(len(old), len(new)) and old[first_diff] is new[first_diff]:
            first_diff += 1
        self.dirty = min(self.dirty, first_diff)
        if self.observer:
            kept = {id(e) for e in new}
            before = {id(e) for e in old}
            for e in old:
                if id(e) not in kept:
                    self.observer.removed(e)
            for e in new:
                if id(e) not in before:
                    self.observer.added(e)
        old[:] = new
        self.context = sum(e.tokens for e in new)
        self.sums.reset([e.tokens for e in new])
        self.positions = {e.id: k for k, e in enumerate(new)}

    def call(self) -> tuple[int, int, int]:
        """A model call on the current view: its input tokens, the cached prefix it reads and what it
        writes to the cache. The prefix is the longest unchanged since the previous call, unless the
        provider's cache went cold (a recorded gap longer than its lifetime) or it is shorter than the
        provider caches (see compbench.cache)."""
        total = self.input_tokens()
        if self.prev_input < 0:
            cached = 0
        elif self.dirty >= self.prev_len:
            cached = self.prev_input
        else:
            cached = self.config.system_tokens + self.sums.prefix(self.dirty)
        if not self.warm():
            cached = 0
        cache = self.config.cache
        if cached < cache.min_prefix:
            cached = 0
        written = total - cached if total >= cache.min_prefix else 0
        self.prev_input = total
        self.prev_len = len(self.entries)
        self.dirty = _CLEAN
        if self.now is not None:
            self.prev_time = self.now
        return total, cached, written

    def warm(self) -> bool:
        """The previous call's cache entry is still alive now (unknown times: assumed alive)."""
        ttl = self.config.cache.ttl_s
        return ttl is None or self.now is None or self.prev_time is None or self.now - self.prev_time <= ttl

    def shared_prefix(self, req: SummaryRequest) -> int:
        """Tokens of a summary request the session's cache serves: a request under the session's own
        system prompt (``system`` empty) whose prompt starts with the view as the previous call sent it
        reads that prefix; one with its own system prompt reads nothing."""
        if req.system or self.prev_input < 0 or not self.warm():
            return 0
        limit = min(self.prev_len, self.dirty, len(self.entries))
        n = 0
        for m, e in zip(req.prompt, self.entries[:limit], strict=False):
            if m.id != e.id:
                break
            n += 1
        cached = self.config.system_tokens + self.sums.prefix(n)
        return cached if cached >= self.config.cache.min_prefix else 0


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
           diverged: set[int] | None = None) -> Trace:
    """Replay ``transcript`` under ``strategy``; pure given a deterministic summarizer.

    ``entries`` (from :func:`recorded_entries` with the same ``index``) saves rebuilding them per strategy.

    ``shadows`` (a tuning grid's other configurations of the same strategy) are asked every question
    the leader is asked, on the same view; while each answers exactly as the leader does, its own replay
    would be this one, action for action, so the trace is its trace too. The index of a shadow that
    answers differently goes into ``diverged``: its replay must be run by itself. Only sound with a
    pure summarizer (the same request always gets the same summary).
    """
    live = list(range(len(shadows)))
    if diverged is None:
        diverged = set()
    tokens = index or counter.index(transcript)
    recorded = entries if entries is not None else recorded_entries(transcript, tokens)
    s = _Session(config, counter, observer)
    view = s.view
    steps: list[StepRecord] = []
    compactions: list[CompactionEvent] = []
    prunes: list[PruneEvent] = []
    seq = 0

    stages = stages_of(strategy)
    shadow_stages = [stages_of(x) for x in shadows]

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
        followup = getattr(stages[stage], "after_compaction", None)  # the stage that acted (CompactionFollowup)
        queue = list(actions)
        while queue:
            a = queue.pop(0)
            seq += 1
            if observer:
                observer.action(seq, False, s.entries, a)
            if isinstance(a, Prune):
                prunes.append(_apply_prune(s, a, seq, step, phase))
            else:
                ev = _apply_compact(s, a, summarizer, seq, step, phase, partial(check, stage))
                compactions.append(ev)
                if ev.ok:
                    view.compactions += 1
                elif a.fallback is not None and ev.error != NOOP:  # the tool's own failure path, applied next
                    queue.insert(0, a.fallback)
            view.context_tokens = s.input_tokens()
            if isinstance(a, Compact):
                s.new_epoch(next_index)  # a prune hides parts but changes no message's visibility
            if observer:
                observer.action(seq, True, s.entries, a)
            if isinstance(a, Compact) and followup is not None:
                more = list(followup(view, compactions[-1]))
                if live:
                    _follow(live, [x[stage] for x in shadow_stages], diverged,
                            partial(_after_compaction, view=view, event=compactions[-1]), more)
                queue[0:0] = more

    step = 0
    manual_at = config.manual_at  # None once asked (or never asked)

    until_first = bool(getattr(strategy, "until_first", False))

    def ask(hook: Callable[[Strategy], Sequence[Action]], phase: Phase, next_index: int) -> None:
        """One hook round: each stage in turn, its actions applied before the next stage is asked (a
        composition that ends a round at its first acting stage stops there)."""
        for k, stage in enumerate(stages):
            actions = hook(stage)
            if live:
                _follow(live, [x[k] for x in shadow_stages], diverged, hook, actions)
            apply(actions, step, phase, next_index, k)
            if actions and view.shared:
                view.shared.clear()  # computed on the view before these actions
            if actions and until_first:
                break

    def ask_manual(next_index: int) -> None:
        """The user's /compact before message ``next_index`` joins (or after the last one)."""
        view.step = step
        view.context_tokens = s.input_tokens()
        view.shared.clear()
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
        if view.shared:
            view.shared.clear()
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
        if view.shared:
            view.shared.clear()
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
    accept = getattr(strategy, "accept", None)
    return accept(a, summary) if accept is not None else None


def _after_compaction(strategy: Strategy, view: SessionView, event: CompactionEvent) -> Sequence[Action]:
    return cast(CompactionFollowup, strategy).after_compaction(view, event)


def _manual_actions(strategy: Strategy, view: SessionView) -> list[Action]:
    """The strategy's /compact (:class:`ManualCompaction`), if it has one."""
    manual = getattr(strategy, "manual", None)
    asked = manual(view) if manual is not None else None
    return [asked] if asked is not None else []


def _apply_prune(s: _Session, a: Prune, seq: int, step: int, phase: Phase) -> PruneEvent:
    positions = s.positions
    hidden = 0
    marked: list[tuple[str, int]] = []
    for msg_id, part, placeholder in a.targets:
        k = positions[msg_id]
        e = s.entries[k]
        if part in e.pruned:
            continue
        pruned = {**e.pruned, part: placeholder}
        target = e.message.parts[part]
        placeholder_tokens = s.counter.count_text(target.name + placeholder if isinstance(target, ToolCall)
                                                  else placeholder)
        new_counts = tuple(placeholder_tokens if j == part else c for j, c in enumerate(e.part_tokens))
        new_tokens = s.counter.message_overhead + sum(new_counts)
        hidden += e.tokens - new_tokens
        s.context += new_tokens - e.tokens
        s.entries[k] = replace(e, pruned=pruned, tokens=new_tokens, part_tokens=new_counts)
        s.sums.add(k, new_tokens - e.tokens)
        if s.observer:
            s.observer.part_hidden(s.entries[k], part)
        s.dirty = min(s.dirty, k)
        marked.append((msg_id, part))
    return PruneEvent(seq, step, phase, a.reason, tuple(marked), hidden)


def _apply_compact(s: _Session, a: Compact, summarizer: Summarizer, seq: int, step: int,
                   phase: Phase, check: Callable[[Compact, str], str | None] | None = None) -> CompactionEvent:
    before = s.input_tokens()
    by_id = {e.id: e for e in s.entries}
    kept_ids = tuple(slot.id for slot in a.new_view if isinstance(slot, Keep))
    kept = set(kept_ids)
    replaced = [e for e in s.entries if e.id not in kept]
    if not replaced:  # nothing to replace: no request is sent, nothing changes, nothing is charged
        return CompactionEvent(seq=seq, step=step, phase=phase, reason=a.reason, ok=False, tokens_before=before,
                               tokens_after=before, replaced_ids=(), kept_ids=kept_ids, replaced_tokens=0,
                               summary="", summary_tokens=0, summarizer_input=0, summarizer_output=0,
                               error=NOOP, attempts=0, summary_budget=_budget(a), meta=a.meta)
    result = SummaryResult(a.summary_text, 0, 0, attempts=0)
    shared = 0
    if a.request is not None:
        result = _with_usage(summarizer.summarize(a.request), a.request, s.counter)
        shared = min(s.shared_prefix(a.request), result.input_tokens or 0)
    for f in a.followups:
        if result.error is not None:
            break
        result = _followup(summarizer, f, result, s.counter)
    ok = result.error is None
    error = result.error
    if ok and check is not None and a.request is not None:
        error = check(a, result.text)
        ok = error is None
    summary = result.text if ok else ""
    if ok or (a.on_failure == "apply" and result.error is not None):
        new: list[Entry] = []
        for k, slot in enumerate(a.new_view):
            new.append(by_id[slot.id] if isinstance(slot, Keep) else s.insert_entry(slot, summary, seq, k))
        s.replace_view(new)
        if a.prune:
            _apply_prune(s, Prune(a.prune), seq, step, phase)
    return CompactionEvent(
        seq=seq, step=step, phase=phase, reason=a.reason, ok=ok, tokens_before=before,
        tokens_after=s.input_tokens(), replaced_ids=tuple(e.id for e in replaced), kept_ids=kept_ids,
        replaced_tokens=sum(e.tokens for e in replaced), summary=summary,
        summary_tokens=s.counter.count_text(summary) if summary else 0,
        summarizer_input=result.input_tokens or 0, summarizer_output=result.output_tokens or 0,
        error=error, attempts=result.attempts, latency_ms=result.latency_ms,
        summary_budget=_budget(a), meta=a.meta, summarizer_cached=shared,
    )


def _followup(summarizer: Summarizer, f: Followup, so_far: SummaryResult, counter: TokenCounter) -> SummaryResult:
    """Ask a follow-up request and fold its answer into the summary so far (joined, or replacing it)."""
    request = f.request
    if any(m.meta.get(PREVIOUS_ANSWER) for m in request.prompt):
        request = replace(request, prompt=tuple(
            replace(m, parts=(Text(so_far.text),)) if m.meta.get(PREVIOUS_ANSWER) else m for m in request.prompt))
    more = _with_usage(summarizer.summarize(request), request, counter)
    if f.replaces:
        text = more.text if more.text.strip() else so_far.text
        latency = so_far.latency_ms + more.latency_ms  # sent after the answer it checks
    else:
        text = so_far.text + f.joiner + more.text
        latency = max(so_far.latency_ms, more.latency_ms)  # sent together
    return SummaryResult(text, (so_far.input_tokens or 0) + (more.input_tokens or 0),
                         (so_far.output_tokens or 0) + (more.output_tokens or 0), more.error,
                         so_far.attempts + more.attempts, latency)


def _budget(a: Compact) -> int | None:
    """The most tokens the summary requests may produce together (None: one of them is unbounded)."""
    requests = ([a.request] if a.request else []) + [f.request for f in a.followups]
    budgets = [r.max_output_tokens for r in requests]
    if not requests or None in budgets:
        return None
    return sum(b for b in budgets if b is not None)


def _with_usage(r: SummaryResult, req: SummaryRequest, counter: TokenCounter) -> SummaryResult:
    """Fill in token counts a backend did not report, counting the request as a real API would."""
    inp = r.input_tokens
    if inp is None:
        inp = counter.count_text(req.system) + counter.message_overhead * bool(req.system) + sum(
            counter.message(m) for m in req.prompt)
    out = r.output_tokens
    if out is None:
        out = counter.count_text(r.text)
    return replace(r, input_tokens=inp, output_tokens=out)
