"""``compbench.validation.recall_evidence`` — Does what a summary dropped of the needs predict what agents did
after it? The test the verdict's recall bar must pass to rest on something real agents showed.

At each real compaction with a readable summary, the needs after it (up to the next compaction) of facts known
before it, and the share of them the tool's post-compaction view lacked (:func:`compbench.measure.retention.
lacked_after`: one minus the needed-fact recall the tool's own compaction had), set beside what the recorded
agent did after it:

* **re-reads** the compaction caused: observed re-acquisition in excess of the natural re-reads
  (:mod:`compbench.validation.reacquisition`);
* **orientation reads**: re-reads of content it had with no later use;
* **a user repeating**: lacked facts that a user message after the compaction states again;
* **errors**: failed tool calls in the :data:`WINDOW` calls after it, beyond the session's rate in the
  :data:`WINDOW` calls before;
* **re-derivation**: state probes (a tool call that reads and edits nothing: a test run, ``git status``) in the
  :data:`WINDOW` calls after it, beyond the session's rate before.

Spearman's rank correlation over the compactions, each behaviour against the share lacked and the count lacked.
Compactions whose summary is encrypted (Codex's remote compaction) are left out: every need would look lacked.
Run it on logs with compactions::

    python -m compbench.validation.recall_evidence ../shared/transcripts ../shared/real-compactions
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from compbench.data.calls import touches
from compbench.data.transcript import ToolCall, ToolResult, Transcript
from compbench.validation.reacquisition import RealReacquisition, _steps, spearman

WINDOW = 20  # calls after (and before) a compaction where its errors and probes are counted
BEHAVIOURS = ("excess re-reads", "orientation reads", "user repeats", "excess errors", "excess probes")


@dataclass(frozen=True)
class AtCompaction:
    transcript: str
    n: int
    split: str
    needs: int
    lacked: int
    behaviour: tuple[float, ...]  # in the order of BEHAVIOURS

    @property
    def lacked_share(self) -> float:
        return self.lacked / self.needs if self.needs else math.nan


def _rate(t: Transcript, a: int, b: int, steps: Sequence[int]) -> tuple[int, int, int]:
    """Failed tool calls and state probes in messages [``a``, ``b``), and the calls there."""
    errors = sum(1 for m in t.messages[a:b] for p in m.parts if isinstance(p, ToolResult) and p.is_error)
    probes = sum(1 for m in t.messages[a:b] if m.role == "assistant"
                 for p in m.parts if isinstance(p, ToolCall) and not touches(p))
    return errors, probes, steps[b] - steps[a]


def at_compactions(t: Transcript, reacq: Sequence[RealReacquisition]) -> list[AtCompaction]:
    from compbench.measure.facts.presence import FactIndex
    from compbench.measure.facts.sources import facts_for
    from compbench.measure.retention import lacked_after

    index = FactIndex.build(t, facts_for(t))
    first = {f.id: f.first_index for f in index.facts}
    lacked: dict[int, set[str]] = {}
    for n, _, fid, _ in lacked_after(t, index):
        lacked.setdefault(n, set()).add(fid)
    bounds = [c.index for c in t.compactions] + [len(t.messages)]
    steps = _steps(t)
    out = []
    for n, rc in enumerate(t.compactions):
        if rc.meta.get("encrypted") or not rc.summary:
            continue
        lo, hi = rc.index, bounds[n + 1]
        start = bounds[n - 1] if n else 0
        needs = {f for i in range(lo, hi) for f in index.needs.get(i, ()) if 0 <= first.get(f, -1) < lo}
        gone = lacked.get(n, set())
        repeated = sum(len(set().union(*index.part_facts[i]) & gone) for i in range(lo + 1, hi)
                       if t.messages[i].role == "user" and not t.messages[i].meta.get("compaction")
                       and index.part_facts[i])
        after = next((i for i in range(lo, hi + 1) if steps[i] - steps[lo] >= WINDOW), hi)
        before = next(i for i in range(start, lo + 1) if steps[i] >= max(steps[start], steps[lo] - WINDOW))
        e1, p1, s1 = _rate(t, lo, after, steps)
        e0, p0, s0 = _rate(t, before, lo, steps)
        r = reacq[n]
        orientation = sum(x.observed for x in r.items if not x.klass or x.klass.startswith("orientation"))
        out.append(AtCompaction(t.id, n + 1, r.split, len(needs), len(gone & needs), (
            r.reacq_excess, orientation, repeated, e1 - (e0 / s0 * s1 if s0 else 0.0),
            p1 - (p0 / s0 * s1 if s0 else 0.0))))
    return out


def correlations(rows: Iterable[AtCompaction]) -> dict[str, tuple[float, float, int]]:
    """Per behaviour: Spearman against the share of needs lacked and against their count, over the compactions
    with at least one need."""
    rows = [r for r in rows if r.needs]
    return {b: (spearman([r.lacked_share for r in rows], [r.behaviour[k] for r in rows]),
                spearman([r.lacked for r in rows], [r.behaviour[k] for r in rows]), len(rows))
            for k, b in enumerate(BEHAVIOURS)}


def main(argv: Sequence[str]) -> int:
    from compbench.validation.reacquire_fit import load

    if not argv:
        print("usage: python -m compbench.validation.recall_evidence PATH...", file=sys.stderr)
        return 2
    from compbench.validation.reacquisition import at_compactions as reacquisition

    rows = [r for x in load(argv) for r in at_compactions(x.transcript, reacquisition(x.transcript, x.part_tokens))]
    found = correlations(rows)
    n = next(iter(found.values()))[2] if found else 0
    print(f"what the summary dropped of the needs against what the agent did after it, {n} real compactions "
          f"with needs (Spearman):")
    print(f"{'behaviour':20} {'share lacked':>13} {'count lacked':>13}")
    for b, (share, count, _) in found.items():
        print(f"{b:20} {share:13.2f} {count:13.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
