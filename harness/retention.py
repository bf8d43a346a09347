"""Retention metrics of one replay: needed-fact recall, retention at compaction, summary guards.

Inputs are the trace, the transcript's :class:`~compbench.facts.presence.FactIndex` and the
:class:`~compbench.facts.presence.PresenceTracker` that followed the replay. Outputs are the retention
columns of the ``results`` row, per-compaction figures, and per-fact rows for the ``facts`` table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compbench.facts import KINDS, Fact, normalize
from compbench.facts.presence import FactIndex, PresenceTracker
from compbench.loop import CompactionEvent, Trace
from compbench.transcript import Transcript

NAN = math.nan
# Path- or identifier-shaped strings a summary states; a fabricated one appears nowhere in its input.
PATH_SHAPE = re.compile(r"(?<![\w@])(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.(?:py|ts|tsx|js|jsx|go|rs|java|rb|md|json|"
                        r"ya?ml|toml|c|h|cpp|hpp|sh|sql|html|css|txt|cfg|ini|lock)\b")
IDENT_SHAPE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+){1,}\b|\b[a-z]+(?:[A-Z][a-z0-9]+){1,}\b")


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else NAN


@dataclass(frozen=True)
class CompactionFacts:
    seq: int
    retention: float
    lost: tuple[str, ...]
    artifact_f1: float
    fabricated: tuple[str, ...]
    candidates: int
    guard_larger: bool
    guard_dropped_constraint: bool


def shapes(summary: str) -> list[str]:
    """Path- and identifier-shaped strings stated in a summary (deduplicated, in order)."""
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


def compaction_facts(ev: CompactionEvent, before: frozenset[str], after: frozenset[str], replaced_text: str,
                     facts: Mapping[str, Fact], index: FactIndex, message_index: int) -> CompactionFacts:
    lost = tuple(sorted(before - after))
    retention = (len(before) - len(lost)) / len(before) if before else NAN
    mentioned = {f for f in index.matcher.facts_in(ev.summary) if facts[f].kind == "artifact"}
    truth = {f.id for f in facts.values()
             if f.kind == "artifact" and f.meta.get("modified") and 0 <= f.first_index <= message_index}
    hit = len(mentioned & truth)
    f1 = NAN if not truth and not mentioned else (2 * hit / (len(mentioned) + len(truth)))
    norm_input = normalize(replaced_text)
    cands = shapes(ev.summary) if ev.summary else []
    fabricated = tuple(s for s in cands if normalize(s) not in norm_input)
    dropped = any(facts[f].kind == "decision" for f in lost)
    return CompactionFacts(ev.seq, retention, lost, f1, fabricated, len(cands),
                           ev.ok and ev.summary_tokens > ev.replaced_tokens > 0, dropped)


def evaluate(t: Transcript, trace: Trace, index: FactIndex, tracker: PresenceTracker,
             part_tokens: Sequence[Sequence[int]]) -> tuple[dict[str, Any], list[CompactionFacts],
                                                            list[dict[str, Any]]]:
    """Results columns, per-compaction fact outcomes, and per-fact rows of one replay."""
    facts = {f.id: f for f in index.facts}
    by_seq = {e.seq: e for e in tracker.events}
    step_msg = {s.step: s.message_index for s in trace.steps}
    per_event = []
    for ev in trace.compactions:
        oc = by_seq.get(ev.seq)
        if oc is None or not ev.ok:
            continue
        per_event.append(compaction_facts(ev, oc.before, oc.after, oc.replaced_text, facts, index,
                                          step_msg.get(ev.step, len(t.messages))))
    needs = tracker.need_hits
    missing = {f for _, f, ok in needs if not ok}
    row: dict[str, Any] = {
        "facts": len(facts),
        "needs": len(needs),
        "needs_present": sum(1 for *_, ok in needs if ok),
        "needed_recall": _mean([1.0 if ok else 0.0 for *_, ok in needs]),
        "refetch_debt_tokens": sum(sum(part_tokens[facts[f].first_index]) for f in missing
                                   if facts[f].first_index >= 0),
        "retention_at_compaction": _mean([c.retention for c in per_event if not math.isnan(c.retention)]),
        "mean_retention_after": _mean(tracker.step_ratios),
        "artifact_f1": _mean([c.artifact_f1 for c in per_event if not math.isnan(c.artifact_f1)]),
        "fabrication_rate": (sum(len(c.fabricated) for c in per_event) / total
                             if (total := sum(c.candidates for c in per_event)) else NAN),
        "guard_summary_larger": sum(c.guard_larger for c in per_event),
        "guard_dropped_constraint": sum(c.guard_dropped_constraint for c in per_event),
        "guard_fabricated": sum(bool(c.fabricated) for c in per_event),
    }
    for kind in KINDS:
        hits = [ok for _, f, ok in needs if facts[f].kind == kind]
        row[f"needed_recall_{kind}"] = _mean([1.0 if ok else 0.0 for ok in hits])
    lost_at: dict[str, int] = {}
    for c in per_event:
        for f in c.lost:
            lost_at.setdefault(f, c.seq)
    need_count: dict[str, list[bool]] = {}
    for _, f, ok in needs:
        need_count.setdefault(f, []).append(ok)
    fact_rows = [{"fact_id": f.id, "kind": f.kind, "text": f.text, "source": f.source,
                  "first_index": f.first_index, "modified": bool(f.meta.get("modified", False)),
                  "needs": len(need_count.get(f.id, [])), "needs_present": sum(need_count.get(f.id, [])),
                  "lost_at_seq": lost_at.get(f.id, -1)} for f in index.facts]
    return row, per_event, fact_rows
