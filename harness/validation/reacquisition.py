"""``compbench.validation.reacquisition`` — Predicted re-acquisition held against what recorded agents re-acquired
after their tools' own compactions.

At each real compaction, the prediction is made from the real post-compaction view, as the replay makes it
for a strategy (:mod:`compbench.measure.reacquire`): the content delivered before the compaction that the
recorded agent uses in the window after it (up to its next compaction, within ``horizon`` steps), and that the
view no longer holds: not in a message the tool kept, not among the files the tool re-attached (Claude
Code), not carried by the summary (at least half of its lines; never enough for an edit under Claude Code's
read-before-edit guard). Its size is the latest delivery's tokens.

What the agent *did*: the tokens of every tool output in the window that re-delivered content it had before
the compaction (each output weighted by the share of its lines that were known before and not already
re-delivered since), whatever made the agent fetch them. Reads are never uses, so the prediction does not
see the re-reads it is checked against.

The split: a session is *fit* or *held out* by a hash of its id (:func:`split`), so a threshold chosen on
the fit part is judged on the other; both are reported.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from compbench.data.transcript import Transcript
from compbench.measure.reacquire import COVER
from compbench.measure.workset import WorkingSet, content_lines

HORIZON = 10**9  # steps after the compaction within which a use counts: none fitted better (README "Loss")


def split(transcript_id: str) -> Literal["fit", "held-out"]:
    """Half the sessions fit, half are held out, by a stable hash of the session id."""
    return "fit" if hashlib.sha1(transcript_id.encode()).digest()[0] % 2 == 0 else "held-out"


@dataclass(frozen=True)
class RealReacquisition:
    """One real compaction: predicted and observed re-acquisition (tokens, keys), and per used key whether
    the summary named it (its path) and whether the agent re-acquired it."""

    tool: str
    transcript: str
    n: int
    trigger: str
    split: str
    reacq_predicted: int
    reacq_observed: int
    keys_predicted: int
    keys_observed: int
    named_reacquired: int
    named_not: int
    unnamed_reacquired: int
    unnamed_not: int
    restored: int


def _restored(t: Transcript, lo: int, start: int) -> list[str]:
    """The keys the tool re-attached after the compaction at ``lo``: recorded ones when the log has them
    (Claude Code from 2.1.119), else the tool's rule (Claude Code's five most recent files) over the
    messages since its previous compaction."""
    from compbench.data.calls import path_key

    rc = next(c for c in t.compactions if c.index == lo)
    recorded = rc.meta.get("restored")
    if isinstance(recorded, list):
        return [path_key(str(p)) for p in recorded]
    if t.source != "claude-code":
        return []
    from compbench.strategies.claude_code import restored_files

    return [path_key(p) for p, text in restored_files(t.messages[start:lo]) if "Result of calling" in text]


def at_compactions(t: Transcript, part_tokens: Sequence[Sequence[int]], horizon: int = HORIZON,
                   ws: WorkingSet | None = None) -> list[RealReacquisition]:
    """Predicted and observed re-acquisition at each compaction ``t`` records."""
    if not t.compactions:
        return []
    ws = ws or WorkingSet.build(t, part_tokens)
    bounds = [c.index for c in t.compactions] + [len(t.messages)]
    step_at: list[int] = []
    s = 0
    for m in t.messages:
        step_at.append(s)
        s += m.role == "assistant" and not m.meta.get("compaction")
    step_at.append(s)
    out = []
    for n, rc in enumerate(t.compactions):
        lo, hi = rc.index, bounds[n + 1]
        start = bounds[n - 1] if n else 0
        known: dict[str, set[int]] = {}
        for d in ws.deliveries:
            if d.message < lo:
                known.setdefault(d.key, set()).update(d.lines)
        kept = set(rc.kept_ids)
        held = {d.key for d in ws.deliveries if d.message < lo and t.messages[d.message].id in kept}
        restored = set(_restored(t, lo, start))
        summary_lines = content_lines(rc.summary) if rc.summary else frozenset()
        summary_text = rc.summary.lower()
        guard = t.source == "claude-code"
        predicted: dict[str, int] = {}
        used: set[str] = set()
        for i in range(lo, hi):
            if step_at[i] - step_at[lo] >= horizon:
                break
            for use in ws.uses.get(i, ()):
                last = ws.before(use.key, lo)
                if last is None:
                    continue
                used.add(use.key)
                if use.key in predicted or use.key in held or use.key in restored:
                    continue
                carried = len(last.lines & summary_lines) >= COVER * len(last.lines)
                if carried and not (guard and use.how == "edit"):
                    continue
                predicted[use.key] = last.tokens
        observed: dict[str, float] = {}
        again: dict[str, set[int]] = {}
        for d in ws.deliveries:
            if not lo <= d.message < hi or d.key not in known:
                continue
            fresh = (d.lines & known[d.key]) - again.get(d.key, set())
            if fresh:
                observed[d.key] = observed.get(d.key, 0.0) + d.tokens * len(fresh) / len(d.lines)
            again.setdefault(d.key, set()).update(d.lines)
        named = {k for k in used if k.startswith("file:") and k[5:] in summary_text}
        out.append(RealReacquisition(
            t.source, t.id, n + 1, rc.trigger, split(t.id), sum(predicted.values()), round(sum(observed.values())),
            len(predicted), len(observed),
            named_reacquired=len(named & observed.keys()), named_not=len(named - observed.keys()),
            unnamed_reacquired=len((used - named) & observed.keys()), unnamed_not=len(used - named - observed.keys()),
            restored=len(restored)))
    return out


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rank correlation (average ranks for ties); NaN with fewer than three points or no spread."""
    if len(xs) < 3:
        return math.nan

    def ranks(v: Sequence[float]) -> list[float]:
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r

    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx and syy else math.nan


def summarize(rows: Iterable[RealReacquisition]) -> dict[str, Any]:
    """Per split and overall: compactions, Spearman over compactions, pooled predicted / observed, and the
    named/not named × re-acquired table."""
    rows = list(rows)
    out: dict[str, Any] = {}
    for name, part in (("fit", [r for r in rows if r.split == "fit"]),
                       ("held-out", [r for r in rows if r.split == "held-out"]), ("all", rows)):
        p = [r.reacq_predicted for r in part]
        o = [r.reacq_observed for r in part]
        out[name] = {
            "compactions": len(part), "sessions": len({r.transcript for r in part}),
            "spearman": spearman(p, o), "predicted": sum(p), "observed": sum(o),
            "pooled_ratio": sum(p) / sum(o) if sum(o) else math.nan,
            "named": [sum(r.named_reacquired for r in part), sum(r.named_not for r in part)],
            "not_named": [sum(r.unnamed_reacquired for r in part), sum(r.unnamed_not for r in part)],
        }
    return out
