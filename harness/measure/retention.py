"""``compbench.measure.retention`` — Retention metrics of one replay: needed-fact recall, retention at compaction,
summary guards.

Inputs are the trace, the transcript's :class:`~compbench.measure.facts.presence.FactIndex` and the
:class:`~compbench.measure.facts.presence.PresenceTracker` that followed the replay. Outputs are the retention
columns of the ``results`` row, per-compaction figures, and per-fact rows for the ``facts`` table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compbench.data.facts import KINDS, Fact, normalize
from compbench.data.transcript import Transcript
from compbench.measure.facts.derive import PATH_SHAPE
from compbench.measure.facts.presence import EventOutcome, FactIndex, NeedHit, PresenceTracker
from compbench.sdk.events import CompactionEvent
from compbench.sdk.kinds import RECORDED_META
from compbench.sdk.trace import Trace

NAN = math.nan
SOON = 10  # calls after a compaction: a need this soon is one its summary had to serve
# Path- or identifier-shaped strings a summary states; a fabricated one appears nowhere in its input.
IDENT_SHAPE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+){1,}\b|\b[a-z]+(?:[A-Z][a-z0-9]+){1,}\b")


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else NAN


@dataclass(frozen=True)
class CompactionFacts:
    """One compaction's fact outcome: ``retention`` = kept of what was present before; ``verbatim`` the
    part kept word for word (the strategy), ``carried`` the part only its summary holds (the summarizer)."""

    seq: int
    retention: float
    lost: tuple[str, ...]
    artifact_f1: float
    fabricated: tuple[str, ...]
    candidates: int
    guard_larger: bool
    guard_dropped_constraint: bool
    verbatim: float = NAN
    carried: float = NAN


def shapes(summary: str) -> list[str]:
    """Path- and identifier-shaped strings stated in a summary (deduplicated, in order). A line repeated
    (a summary's stand-in lines, a list carried twice) states nothing new: each line is scanned once."""
    if "\n" in summary:
        summary = "\n".join(dict.fromkeys(summary.splitlines()))
    seen: dict[str, None] = {}
    spans: list[tuple[int, int]] = []
    for m in PATH_SHAPE.finditer(summary):
        spans.append(m.span())
        if len(s := m.group(0).strip(".-/")) >= 4:
            seen.setdefault(s, None)
    for m in IDENT_SHAPE.finditer(summary):
        inside = any(a <= m.start() < b for a, b in spans)  # part of a path already counted
        if not inside and len(s := m.group(0)) >= 4:
            seen.setdefault(s, None)
    return list(seen)


def compaction_facts(ev: CompactionEvent, before: frozenset[str], after: frozenset[str],
                     saw: Callable[[Iterable[str]], frozenset[str]],
                     facts: Mapping[str, Fact], index: FactIndex, message_index: int,
                     after_verbatim: frozenset[str] | None = None) -> CompactionFacts:
    """``saw``: which of the given normalized texts the summarizer could have seen
    (:meth:`~compbench.measure.facts.presence.EventOutcome.saw`)."""
    lost = tuple(sorted(before - after))
    retention = (len(before) - len(lost)) / len(before) if before else NAN
    kept_verbatim = len(before & after_verbatim) if after_verbatim is not None else None
    verbatim = kept_verbatim / len(before) if before and kept_verbatim is not None else NAN
    mentioned = {f for f in index.matcher.facts_in(ev.summary) if facts[f].kind == "artifact"}
    truth = {f.id for f in facts.values()
             if f.kind == "artifact" and f.meta.get("modified") and 0 <= f.first_index <= message_index}
    hit = len(mentioned & truth)
    f1 = NAN if not truth and not mentioned else (2 * hit / (len(mentioned) + len(truth)))
    cands = shapes(ev.summary) if ev.summary else []
    normed = [normalize(s) for s in cands]
    seen = saw(set(normed)) if cands else frozenset()
    # a path the summarizer could not have seen
    fabricated = tuple(s for s, n in zip(cands, normed, strict=True) if n not in seen)
    dropped = any(facts[f].kind == "decision" for f in lost)
    return CompactionFacts(ev.seq, retention, lost, f1, fabricated, len(cands),
                           ev.ok and ev.summary_tokens > ev.replaced_tokens > 0, dropped,
                           verbatim, retention - verbatim)


def _ratio(num: int, den: int) -> float:
    return num / den if den else NAN


def _event_share(events: Sequence[EventOutcome], kind: str) -> float:
    """Mean over events of one kind of the share of facts present before that are still present after."""
    return _mean([x for e in events if e.kind == kind and not math.isnan(x := e.kept_share)])


class Shared:
    """What the evaluations of one transcript's trajectories share: the needs its recorded agent re-acquired
    (:func:`reacquired_in_record`, the transcript's alone), and each compaction's outcome, by the event and its
    outcome (a trajectory forked after a compaction carries the same event, evaluated once)."""

    def __init__(self) -> None:
        self.marked: frozenset[tuple[int, str]] | None = None
        self.events: dict[tuple[int, int], tuple[object, object, CompactionFacts]] = {}


def evaluate(t: Transcript, trace: Trace, index: FactIndex, tracker: PresenceTracker,
             part_tokens: Sequence[Sequence[int]], system_tokens: int = 0, shared: Shared | None = None
             ) -> tuple[dict[str, Any], list[CompactionFacts], list[dict[str, Any]]]:
    """Results columns, per-compaction fact outcomes, and per-fact rows of one replay.

    Needs are scored from the strategy's first action (``scored``); each is met verbatim, carried by a
    summary only, or missed; the copy upper bound also counts needs an extractive copy of the summarized
    span would have carried. ``needed_recall_lo`` (the summary carries nothing) and ``needed_recall_hi``
    (it carries what a copy carries) bound what any summarizer could do on this trajectory. ``shared``: what
    the evaluations of the transcript's other trajectories found (their caller's, one per transcript).
    """
    shared = shared or Shared()
    facts = {f.id: f for f in index.facts}
    by_seq = {e.seq: e for e in tracker.events}
    step_msg = {s.step: s.message_index for s in trace.steps}
    per_event = []
    for ev in trace.compactions:
        oc = by_seq.get(ev.seq)
        if oc is None or not ev.ok:
            continue
        key = (id(ev), id(oc))
        hit = shared.events.get(key)
        if hit is None or hit[0] is not ev or hit[1] is not oc:  # held with the objects: ids are not reused
            # an event shared by two trajectories sits in their common prefix: the same step, the same message
            hit = shared.events[key] = (ev, oc, compaction_facts(
                ev, oc.before, oc.after, oc.saw, facts, index, step_msg.get(ev.step, len(t.messages)),
                oc.after_verbatim))
        per_event.append(hit[2])
    scored = [h for h in tracker.need_hits if h.scored]
    events = tracker.events
    row: dict[str, Any] = {
        "oracle_present": oracle_present(trace, scored, facts, system_tokens),
        "facts": len(facts),
        "facts_received": sum(1 for f in facts.values() if f.received),
        "facts_boilerplate": sum(1 for f in facts.values() if f.boilerplate),
        "facts_agent": sum(1 for f in facts.values() if f.provenance == "agent"),
        "facts_conventional": sum(1 for f in facts.values() if f.meta.get("conventional")),
        "needs_all": len(tracker.need_hits),
        "needs": len(scored),
        "needs_present": sum(1 for h in scored if h.present),
        "needs_verbatim": sum(1 for h in scored if h.verbatim),
        "needs_carried": sum(1 for h in scored if h.carried and not h.verbatim),
        "needs_upper": sum(1 for h in scored if h.verbatim or h.copied or h.carried),
        "needed_recall": _mean([1.0 if h.present else 0.0 for h in scored]),
        "needed_recall_lo": _mean([1.0 if h.verbatim else 0.0 for h in scored]),
        "needed_recall_hi": _mean([1.0 if h.verbatim or h.copied or h.carried else 0.0 for h in scored]),
        "first_action_step": _first_action(trace),
        "retention_at_compaction": _mean([c.retention for c in per_event if not math.isnan(c.retention)]),
        "retention_at_prune": _event_share(events, "prune"),
        "retention_after": _mean([r[0] for r in tracker.step_ratios]),
        "retention_after_lo": _mean([r[1] for r in tracker.step_ratios]),
        "retention_after_hi": _mean([r[2] for r in tracker.step_ratios]),
        "artifact_f1": _mean([c.artifact_f1 for c in per_event if not math.isnan(c.artifact_f1)]),
        "fabrication_rate": (sum(len(c.fabricated) for c in per_event) / total
                             if (total := sum(c.candidates for c in per_event)) else NAN),
        "guard_summary_larger": sum(c.guard_larger for c in per_event),
        "guard_dropped_constraint": sum(c.guard_dropped_constraint for c in per_event),
        "guard_fabricated": sum(bool(c.fabricated) for c in per_event),
    }
    soon = [h for h in scored if 0 <= h.since <= SOON]
    later = [h for h in scored if not 0 <= h.since <= SOON]
    row["needs_soon"], row["needs_later"] = len(soon), len(later)
    row["needs_present_soon"] = sum(1 for h in soon if h.present)
    row["needs_present_later"] = sum(1 for h in later if h.present)
    if shared.marked is None:
        shared.marked = reacquired_in_record(t, index)
    marked = shared.marked
    row["needs_reacquired_real"] = sum(1 for h in scored if (step_msg.get(h.step, -1), h.fact) in marked)
    for kind in KINDS:
        hits = [h for h in scored if facts[h.fact].kind == kind]
        row[f"needs_{kind}"] = len(hits)
        row[f"needed_recall_{kind}"] = _mean([1.0 if h.present else 0.0 for h in hits])
    lost_at: dict[str, int] = {}
    for c in per_event:
        for f in c.lost:
            lost_at.setdefault(f, c.seq)
    need_count: dict[str, list[bool]] = {}
    for h in scored:
        need_count.setdefault(h.fact, []).append(h.present)
    fact_rows = [{"fact_id": f.id, "kind": f.kind, "text": f.text, "source": f.source,
                  "provenance": f.provenance, "boilerplate": f.boilerplate,
                  "first_index": f.first_index, "modified": bool(f.meta.get("modified", False)),
                  "needs": len(need_count.get(f.id, [])), "needs_present": sum(need_count.get(f.id, [])),
                  "lost_at_seq": lost_at.get(f.id, -1)} for f in index.facts]
    return row, per_event, fact_rows


def reacquired_in_record(t: Transcript, index: FactIndex) -> frozenset[tuple[int, str]]:
    """Needs ``(message, fact)`` the recorded agent met only by re-acquiring after its tool's own compaction:
    the fact was known before the compaction, the tool's post-compaction view (its summary, what it kept)
    lacked it, and a tool output after the compaction brought it back before the need. Any strategy that
    scores such a need as missed agrees with what the real agent had to do."""
    return frozenset((i, f) for _, i, f, back in lacked_after(t, index) if back)


def lacked_after(t: Transcript, index: FactIndex) -> Iterator[tuple[int, int, str, bool]]:
    """Each need after a compaction ``t`` records (up to its next one) whose fact was known before it and that
    the tool's post-compaction view lacked (not in its summary, not in a message it kept), in order: the
    compaction's position in ``t.compactions``, the needing message, the fact, and whether a tool output since
    the compaction had brought the fact back."""
    first = {f.id: f.first_index for f in index.facts}
    bounds = [c.index for c in t.compactions] + [len(t.messages)]
    for n, rc in enumerate(t.compactions):
        lo, hi = rc.index, bounds[n + 1]
        kept = set(rc.kept_ids)
        held = set(index.matcher.facts_in(rc.summary)) if rc.summary else set()
        for i, m in enumerate(t.messages[:lo]):
            if m.id in kept:
                held.update(*index.part_facts[i])
        back: set[str] = set()  # facts tool outputs brought back since the compaction
        for i in range(lo, hi):
            for f in index.needs.get(i, ()):
                if 0 <= first.get(f, -1) < lo and f not in held:
                    yield n, i, f, f in back
            for p, ids in zip(t.messages[i].parts, index.part_facts[i], strict=True):
                if p.type == "tool_result":
                    back |= ids


ORACLE_CHARS_PER_TOKEN = 4  # the cost of a needed fact written out, for the hindsight oracle


def oracle_present(trace: Trace, hits: Sequence[NeedHit], facts: Mapping[str, Fact], system_tokens: int) -> int:
    """Needs a hindsight oracle meets at this strategy's own cost: at every scored step, a prompt of the
    strategy's size holding exactly the facts the recorded agent is about to need, written out (cheapest
    first) — or the strategy's own prompt, should that meet more. Not a strategy anyone can run (it
    knows the future), but no strategy meets more needs at that cost: recall's distance to it is a
    strategy's headroom."""
    by_step: dict[int, list[NeedHit]] = {}
    for h in hits:
        by_step.setdefault(h.step, []).append(h)
    met = 0
    for k, here in by_step.items():
        room = trace.steps[k].input - system_tokens
        written = 0
        for cost in sorted(len(facts[h.fact].text) // ORACLE_CHARS_PER_TOKEN + 1 for h in here):
            if cost > room:
                break
            room -= cost
            written += 1
        met += max(written, sum(1 for h in here if h.present))
    return met


def _first_action(trace: Trace) -> int:
    """The step of the first compaction that replaced something or prune that hid something (-1: none); a
    recorded compaction acts even where the log no longer holds what it replaced (its summary joins the view)."""
    steps = [c.step for c in trace.compactions if c.ok and (c.replaced_ids or RECORDED_META in c.meta)]
    steps += [p.step for p in trace.prunes if p.parts]
    return min(steps, default=-1)
