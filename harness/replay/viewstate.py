"""``compbench.replay.viewstate`` — The loop's mutable state of one replay, and how an action changes it.

:class:`ViewState` holds the view (the entries the next call sends), its token sum and the prompt-cache
bookkeeping; :func:`apply_compact` and :func:`apply_prune` apply a strategy's actions to it and return the
events the trace records. :mod:`compbench.replay.trajectories` drives them step by step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from compbench.data.transcript import Message, Text, ToolCall
from compbench.measure.cache import NO_CACHE_MODEL, CacheModel
from compbench.measure.tokens import TokenCounter
from compbench.sdk.context import ReplayContext, RoundCache
from compbench.sdk.events import NOOP, CompactionEvent, Phase, PruneEvent
from compbench.sdk.session import (
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

_CLEAN = 1 << 62  # "no position changed since the previous call"


class Observer(Protocol):
    """Follows the view incrementally (fact presence): told of every change, never asked anything."""

    def added(self, e: Entry) -> None: ...

    def removed(self, e: Entry) -> None: ...

    def part_hidden(self, e: Entry, part: int) -> None: ...

    def step(self, step: int, message_index: int) -> None: ...

    def action(self, seq: int, done: bool, entries: Sequence[Entry], act: Action) -> None: ...

    def fork(self) -> Observer:
        """An independent copy, following a trajectory forked from here (see compbench.replay.branch)."""
        ...


@dataclass(frozen=True, slots=True)
class ReplayConfig:
    """``recorded_usage``: while the view is still the recorded context (nothing compacted or pruned
    yet, and before the tool's own first compaction), strategies are shown the usage the real API recorded
    for the step instead of the computed one: the real tool decided on those figures, and a fidelity check
    compares trigger logic rather than tokenizer error. ``manual_at``: before message
``manual_at`` joins, the strategy's ``manual`` compaction runs (if it has one), as a user's /compact."""

    limits: ModelLimits
    system_tokens: int = 0
    recorded_usage: bool = False
    manual_at: int | None = None  # the message index where the user asks for a compaction (/compact)
    cache: CacheModel = NO_CACHE_MODEL  # the provider's prompt cache (expiry, minimum prefix)


class PrefixSums:
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

    def truncate(self, n: int) -> None:
        """Keep the first ``n`` values: the nodes up to ``n`` cover none after it."""
        del self.tree[n + 1:]

    def copy(self) -> PrefixSums:
        c = PrefixSums()
        c.tree = list(self.tree)
        return c

    def prefix(self, n: int) -> int:
        total, i = 0, n
        while i > 0:
            total += self.tree[i]
            i -= i & -i
        return total


class ViewState:
    """The loop's mutable state: the view, its token sum, and the cache bookkeeping."""

    def __init__(self, config: ReplayConfig, counter: TokenCounter, observer: Observer | None = None,
                 context: ReplayContext | None = None, rounds: RoundCache | None = None) -> None:
        self.observer = observer
        self.config = config
        self.counter = counter
        self.entries: list[Entry] = []
        self.context = 0  # sum of entry tokens
        self.view = SessionView(self.entries, config.limits, counter, config.system_tokens, context, rounds)
        self.prev_len = 0  # entries sent in the previous call (-1: no call yet)
        self.prev_input = -1
        self.prev_time: float | None = None  # the recorded time of the previous call
        self.now: float | None = None  # the recorded time of the message being replayed
        self.dirty = _CLEAN  # lowest position changed since the previous call
        self.epochs: list[tuple[str, ...]] = [()]
        self.epoch_starts: list[int] = [0]
        self.sums = PrefixSums()
        self.positions: dict[str, int] = {}  # message id -> view position
        self.touched = _CLEAN  # lowest position an action changed since the view's last revision

    def fork(self, observer: Observer | None, rounds: RoundCache) -> ViewState:
        """A copy of this state for a forked trajectory: its own entries, sums and view (a new
        :class:`SessionView`: a strategy that cached work against the old one starts over), ``observer``."""
        c = ViewState.__new__(ViewState)
        c.observer, c.config, c.counter = observer, self.config, self.counter
        c.entries = list(self.entries)
        c.context = self.context
        c.view = self.view.fork(c.entries, rounds)
        c.prev_len, c.prev_input, c.prev_time, c.now, c.dirty = (self.prev_len, self.prev_input, self.prev_time,
                                                                  self.now, self.dirty)
        c.epochs, c.epoch_starts = list(self.epochs), list(self.epoch_starts)
        c.sums = self.sums.copy()
        c.positions = dict(self.positions)
        c.touched = self.touched
        return c

    def revise(self) -> None:
        """An applied action's changes are a new revision of the view (:meth:`SessionView.unchanged_below`)."""
        self.view.changed(self.touched)
        self.touched = _CLEAN

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
        self.counter.remember(msg)
        counts = self.counter.parts(msg)
        return Entry(msg, self.counter.message(msg, counts), counts, slot.origin)

    def replace_view(self, new: list[Entry]) -> None:
        """The view becomes ``new``. Only what lies between the common prefix and the common suffix of the
        two views changed (when each holds an entry, and a message id, once): the observers are told of that
        part, and the token sum, the prefix sums and the positions are updated from the first changed position
        on, so a small compaction of a long view (Goose summarizes one tool pair at a time) does not cost the
        whole view."""
        old = self.entries
        if len(self.positions) != len(old) or len(set(map(id, new))) != len(new):
            self._replace_whole(new)  # a message id twice in the view, or an entry kept twice: as wholes
            return
        shortest = min(len(old), len(new))
        first_diff = 0
        while first_diff < shortest and old[first_diff] is new[first_diff]:
            first_diff += 1
        tail = 0
        while tail < shortest - first_diff and old[-1 - tail] is new[-1 - tail]:
            tail += 1
        self.dirty = min(self.dirty, first_diff)
        self.touched = min(self.touched, first_diff)
        gone, came = old[first_diff:len(old) - tail], new[first_diff:len(new) - tail]
        self._tell(gone, came)
        positions = self.positions
        for e in old[first_diff:]:
            del positions[e.id]
        old[:] = new
        self.context += sum(e.tokens for e in came) - sum(e.tokens for e in gone)
        self.sums.truncate(first_diff)
        for k in range(first_diff, len(new)):
            e = new[k]
            self.sums.append(e.tokens)
            positions[e.id] = k

    def _tell(self, gone: Sequence[Entry], came: Sequence[Entry]) -> None:
        """The observers hear of each entry of ``gone`` that is not in ``came`` as removed, then of each of
        ``came`` not in ``gone`` as added (an entry in both stayed)."""
        if not self.observer:
            return
        kept = {id(e) for e in came}
        before = {id(e) for e in gone}
        for e in gone:
            if id(e) not in kept:
                self.observer.removed(e)
        for e in came:
            if id(e) not in before:
                self.observer.added(e)

    def _replace_whole(self, new: list[Entry]) -> None:
        old = self.entries
        first_diff = 0
        while first_diff < min(len(old), len(new)) and old[first_diff] is new[first_diff]:
            first_diff += 1
        self.dirty = min(self.dirty, first_diff)
        self.touched = min(self.touched, first_diff)
        self._tell(old, new)
        old[:] = new
        self.context = sum(e.tokens for e in new)
        self.sums.reset([e.tokens for e in new])
        self.positions = {e.id: k for k, e in enumerate(new)}

    def call(self) -> tuple[int, int, int]:
        """A model call on the current view: its input tokens, the cached prefix it reads and what it
        writes to the cache. The prefix is the longest unchanged since the previous call, unless the
        provider's cache went cold (a recorded gap longer than its lifetime) or it is shorter than the
        provider caches (see compbench.measure.cache)."""
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
        cached = cache.readable(cached)
        written = total - cached if total >= cache.min_prefix else 0
        self.prev_input = total
        self.prev_len = len(self.entries)
        self.dirty = _CLEAN
        if self.now is not None:
            self.prev_time = self.now
        return total, cached, written

    def warm(self) -> bool:
        """The previous call's cache entry is still alive now (unknown times: assumed alive)."""
        return self.config.cache.alive(self.prev_time, self.now)

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
        return self.config.cache.readable(self.config.system_tokens + self.sums.prefix(n))



def apply_prune(s: ViewState, a: Prune, seq: int, step: int, phase: Phase) -> PruneEvent:
    positions = s.positions
    hidden = 0
    marked: list[tuple[str, int]] = []
    for msg_id, part, placeholder in a.targets:
        k = positions[msg_id]
        e = s.entries[k]
        if part in e.pruned and (not a.replace or e.pruned[part] == placeholder):
            continue
        pruned = {**e.pruned, part: placeholder}
        target = e.message.parts[part]
        placeholder_tokens = s.counter.count_text(target.name + placeholder if isinstance(target, ToolCall)
                                                  else placeholder)
        new_counts = tuple(placeholder_tokens if j == part else c for j, c in enumerate(e.part_tokens))
        # a message's readable thinking stays in context until its own part is pruned (clear_thinking)
        new_tokens = (s.counter.message_overhead + sum(new_counts)
                      + s.counter.reasoning_context(e.message, pruned))
        hidden += e.tokens - new_tokens
        s.context += new_tokens - e.tokens
        s.entries[k] = replace(e, pruned=pruned, tokens=new_tokens, part_tokens=new_counts)
        s.sums.add(k, new_tokens - e.tokens)
        if s.observer:
            s.observer.part_hidden(s.entries[k], part)
        s.dirty = min(s.dirty, k)
        s.touched = min(s.touched, k)
        marked.append((msg_id, part))
    return PruneEvent(seq, step, phase, a.reason, tuple(marked), hidden)


def apply_compact(s: ViewState, a: Compact, summarizer: Summarizer, seq: int, step: int,
                   phase: Phase, check: Callable[[Compact, str], str | None] | None = None) -> CompactionEvent:
    before = s.input_tokens()
    by_id = {e.id: e for e in s.entries}
    kept_ids = tuple(slot.id for slot in a.new_view if isinstance(slot, Keep))
    kept = set(kept_ids)
    replaced = [e for e in s.entries if e.id not in kept]
    # nothing to replace: no request is sent, nothing changes, nothing is charged; unless the summary is one a
    # log recorded (the recorded row), which the tool made even where its log no longer holds what it replaced
    # (Roo Code's and Kilo Code's older condense deleted the middle of the history it summarized)
    known = a.request is not None and a.request.answer is not None
    if not replaced and not a.prune and not known:
        return CompactionEvent(seq=seq, step=step, phase=phase, reason=a.reason, ok=False, tokens_before=before,
                               tokens_after=before, replaced_ids=(), kept_ids=kept_ids, replaced_tokens=0,
                               summary="", summary_tokens=0, summarizer_input=0, summarizer_output=0,
                               error=NOOP, attempts=0, summary_budget=_budget(a), meta=a.meta)
    result = SummaryResult(a.summary_text, 0, 0, attempts=0)
    shared = written = 0
    if a.request is not None:
        asked = SummaryResult(a.request.answer) if a.request.answer is not None else summarizer.summarize(a.request)
        result = _with_usage(asked, a.request, s.counter)
        shared = min(s.shared_prefix(a.request), result.input_tokens or 0)
        if a.request.cache_write:
            written = s.config.cache.written((result.input_tokens or 0) - shared)
    for f in a.followups:
        if result.error is not None:
            break
        sent = result.input_tokens or 0
        result = _followup(summarizer, f, result, s.counter)
        if f.request.cache_write:
            written += s.config.cache.written((result.input_tokens or 0) - sent)
    ok = result.error is None
    error = result.error
    if ok and check is not None and a.request is not None:
        error = check(a, a.summary_of(result.text))
        ok = error is None
    summary = a.summary_of(result.text) if ok else ""
    applied = ok or (a.on_failure == "apply" and result.error is not None)
    if applied:
        new: list[Entry] = []
        for k, slot in enumerate(a.new_view):
            new.append(by_id[slot.id] if isinstance(slot, Keep) else s.insert_entry(slot, summary, seq, k))
        s.replace_view(new)
        if a.prune:
            apply_prune(s, Prune(a.prune), seq, step, phase)
    return CompactionEvent(
        seq=seq, step=step, phase=phase, reason=a.reason, ok=ok, tokens_before=before,
        tokens_after=s.input_tokens(), replaced_ids=tuple(e.id for e in replaced), kept_ids=kept_ids,
        replaced_tokens=sum(e.tokens for e in replaced), summary=summary,
        summary_tokens=s.counter.count_text(summary) if summary else 0,
        summarizer_input=result.input_tokens or 0, summarizer_output=result.output_tokens or 0,
        error=error, attempts=result.attempts, latency_ms=result.latency_ms,
        summary_budget=_budget(a), meta=a.meta, summarizer_cached=shared, applied=applied,
        summarizer_written=written,
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
