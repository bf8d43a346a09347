"""``compbench.decide.verdict`` — The verdict of a run in words: which strategy wins for which objective, the frontier,
and the caveats that apply. Pure over a run's results and their bootstrap (:mod:`compbench.decide.bootstrap`); the
report shows it first and ``compare`` prints it under its tables."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compbench.decide.bootstrap import Batch
from compbench.decide.compare import fmt_diff, metric
from compbench.decide.ranking import RULE, Standing, frontier, order
from compbench.decide.stats import Estimate
from compbench.decide.tune import Objective, decisive, parse_objective, satisfies

DEFAULT_OBJECTIVES = ("max net_savings s.t. needed_recall >= 0.9",
                      "max needed_recall s.t. net_savings >= 0.25",
                      "min cost s.t. needed_recall >= 0.9")
OPS = {">=": "≥", "<=": "≤", ">": ">", "<": "<"}


@dataclass(frozen=True)
class Choice:
    """The best strategy for one objective (None: no strategy meets it), and how it was decided."""

    objective: str  # in words
    spec: str  # as typed (tune --objective accepts it)
    best: str | None
    figures: str
    margin: str  # against the runner-up, paired
    note: str


@dataclass(frozen=True)
class Verdict:
    choices: list[Choice]
    frontier: list[tuple[str, float, float]]  # label, net savings, recall
    rule: str
    below: dict[str, list[str]]  # tier name -> labels ranked below the sound ones
    caveats: list[str] = field(default_factory=list)


def _pct(e: Estimate) -> str:
    return "–" if math.isnan(e.value) else f"{e.value:.1%}"


def words(obj: Objective) -> str:
    """``max net_savings s.t. needed_recall >= 0.9`` as "highest net savings with needed-fact recall ≥ 90%"."""
    m = metric(obj.metric)
    head = "highest " if obj.maximize else "lowest "
    cons = [f"{metric(k).title} {OPS[op]} {v:.0%}" if metric(k).percent else f"{metric(k).title} {OPS[op]} {v:g}"
            for k, op, v in obj.constraints]
    return head + m.title + (" with " + " and ".join(cons) if cons else "")


def _figures(agg: Mapping[str, Estimate], obj: Objective) -> str:
    keys = dict.fromkeys([obj.metric, *(k for k, _, _ in obj.constraints), "net_savings", "needed_recall"])
    parts = []
    for k in keys:
        e, m = agg[k], metric(k)
        if math.isnan(e.value):
            continue
        thr = next((v for c, _, v in obj.constraints if c == k), None)
        text = decisive(e.value, thr, m.percent) if thr is not None else (
            f"{e.value:.1%}" if m.percent else f"{e.value:,.3f}" if k == "cost" else f"{e.value:.2f}")
        ci = "" if math.isnan(e.lo) else (f" [{e.lo:.1%}, {e.hi:.1%}]" if m.percent else f" [{e.lo:,.3f}, {e.hi:,.3f}]")
        few = f" (n={e.units}, few)" if e.few else ""
        parts.append(f"{m.title} {text}{ci}{few}")
    return "; ".join(parts)


def choose(b: Batch, standing: Mapping[str, Standing], spec: str) -> Choice:
    obj = parse_objective(spec)
    agg = b.estimates
    meets = [s for s, ms in agg.items() if satisfies(ms, obj) and not math.isnan(ms[obj.metric].value)]
    ranked = order(meets, standing, lambda s: agg[s][obj.metric].value, obj.maximize)
    sound = [s for s in ranked if standing[s].sound]
    text = words(obj)
    if not sound:
        if not ranked:
            return Choice(text, spec, None, "", "", "no strategy meets it")
        best = ranked[0]  # the rule still decides: fewest calls over the window first, then the objective
        st = standing[best]
        what = (f"{st.refused:,} of its {st.calls:,} calls over the window (a real API refuses them)" if st.refused
                else "it compacts on most calls")
        return Choice(text, spec, best, _figures(agg[best], obj), "",
                      f"no sound strategy meets it; the best by the ranking rule still has {what}")
    best = sound[0]
    margin = ""
    if len(sound) > 1:
        d = b.diff(best, sound[1], obj.metric)
        if d is not None and not math.isnan(d.value):
            verdict = "ahead of" if d.significant else "statistically tied with"
            margin = f"{verdict} {sound[1]} ({fmt_diff(d, metric(obj.metric))}, paired)"
    note = ""
    others = [s for s in ranked if not standing[s].sound and ranked.index(s) < ranked.index(best)]
    if others:
        note = (f"{', '.join(others[:3])} would score better but "
                + ("have" if len(others) > 1 else "has") + " calls over the window or compacts on most calls")
    return Choice(text, spec, best, _figures(agg[best], obj), margin, note)


def verdict(results: Any, b: Batch, standing: Mapping[str, Standing], flags: Mapping[str, Sequence[str]],
            summarizer: str, objectives: Sequence[str] = DEFAULT_OBJECTIVES,
            cache: Mapping[str, tuple[int, float, float]] | None = None, price_model: str = "",
            cache_ttl: str = "5m") -> Verdict:
    """The run's verdict; ``summarizer`` in words (:func:`compbench.decide.summary.describe_summarizer`),
    ``cache`` as :func:`compbench.decide.summary.cache_check` gives it."""
    agg = b.estimates
    points = {s: (agg[s]["net_savings"].value, agg[s]["needed_recall"].value) for s in agg}
    front = [(s, *points[s]) for s in frontier(points, standing)]
    below: dict[str, list[str]] = {}
    for s in order(list(agg), standing, lambda s: agg[s]["net_savings"].value):
        if not standing[s].sound:
            below.setdefault(standing[s].tier_name, []).append(s)
    caveats = [f"Summaries by {summarizer}. Recall depends on it: each strategy's recall is a range, from "
               "summaries that carry nothing to summaries that copy their span (the table below)."]
    few = sorted({s for s, ms in agg.items() for k in ("net_savings", "needed_recall")
                  if not math.isnan(ms[k].value) and ms[k].few and ms[k].units > 0})
    if few:
        caveats.append(f"Figures resting on fewer than 5 transcripts or sessions (marked few): {', '.join(few)}.")
    n_flagged = len([s for s in flags if s != "none"])
    if n_flagged:
        caveats.append(f"{n_flagged} of {len(agg)} configurations carry flags (never acted, threshold beyond the "
                       "window, degenerate compacting, identical configurations...): see the leaderboard.")
    if "none" in flags:
        caveats.append(f"The reference none: {flags['none'][0]}.")
    from compbench.decide.summary import overhead_flags, price_models

    priced = (f"{price_model}'s prices" if price_model else
              f"each transcript at its recorded model's prices: {price_models(results) or 'see price_model'}")
    ttl = "each transcript's recorded time to live" if cache_ttl == "auto" else f"{cache_ttl} time to live"
    costs = (f"Costs assume a simulated prompt cache ({priced}; {ttl}) that a compaction breaks; cost savings "
             "without a cache give the range's other end.")
    if cache:
        costs += (" Cache hit rate of none, simulated under the recording provider's cache vs recorded, on the "
                  "same calls: ") + "; ".join(
            f"{src} {sim:.0%} vs {rec:.0%}" for src, (_, rec, sim) in cache.items()) + "."
    caveats.append(costs)
    poor = overhead_flags(results)
    if poor:
        caveats.append(f"The hidden overhead (system prompt, what the log omits) is flagged on {len(poor)} "
                       f"transcript{'s' * (len(poor) != 1)}, whose savings rest on it: " + "; ".join(poor) + ".")
    caveats.append("The replay assumes the agent would have acted the same after a compaction; recall is the "
                   "presence of a fact's anchors in the prompt, an upper bound on what a model retains.")
    return Verdict([choose(b, standing, o) for o in objectives], front, RULE.format(metric="net savings"), below,
                   caveats)


def lines(v: Verdict) -> list[str]:
    """The verdict as plain text lines (``compare``)."""
    out = []
    for c in v.choices:
        if c.best is None:
            out.append(f"best for {c.objective}: none ({c.note})")
        else:
            out.append(f"best for {c.objective}: {c.best} ({c.figures})" + (f"; {c.margin}" if c.margin else "")
                       + (f"; {c.note}" if c.note else ""))
    if v.frontier:
        out.append("frontier (sound strategies, net savings vs recall): " + " · ".join(
            f"{s} ({x:.1%}, {'–' if math.isnan(y) else f'{y:.1%}'})" for s, x, y in v.frontier))
    for tier, labels in v.below.items():
        out.append(f"ranked below every sound strategy ({tier}): {', '.join(labels)}")
    return out
