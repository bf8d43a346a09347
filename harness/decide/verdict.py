"""``compbench.decide.verdict`` — The verdict of a run in words: which strategy wins for which objective, the frontier,
and the caveats that apply. Pure over a run's results and their bootstrap (:mod:`compbench.decide.bootstrap`); the
report shows it first and ``compare`` prints it under its tables."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compbench.decide.bootstrap import Batch
from compbench.decide.compare import fmt_diff
from compbench.decide.headline import DEFAULT_OBJECTIVES, HEADLINE, RECALL, Spread
from compbench.decide.metrics import metric
from compbench.decide.objective import (
    Objective,
    bar_unmeasurable,
    bars,
    decisive,
    edge,
    meets,
    parse_objective,
    ranked,
    rule,
    unmeasured,
    words,
)
from compbench.decide.ranking import Standing, frontier
from compbench.decide.stats import Estimate
from compbench.sdk.kinds import REFERENCE

__all__ = ["DEFAULT_OBJECTIVES", "OVERHEAD_CAVEAT", "Choice", "Verdict", "choose", "lines", "verdict", "words"]

# how the caveat on flagged hidden overheads begins (the report lists those transcripts under it, grouped by flag)
OVERHEAD_CAVEAT = "The hidden overhead (system prompt, what the log omits) is flagged on"


@dataclass(frozen=True)
class Choice:
    """The best strategy for one objective (None: no strategy meets it), and how it was decided."""

    objective: str  # in words
    spec: str  # as typed (tune --objective accepts it)
    best: str | None
    figures: str
    margin: str  # against the runner-up, paired
    note: str
    edge: str = ""  # the pick's interval crosses a bar: it may miss it on other transcripts
    above: str = ""  # why the strategies ranked above the pick (the leaderboard's first rows) are not it


@dataclass(frozen=True)
class Verdict:
    choices: list[Choice]
    frontier: list[tuple[str, float, float]]  # label, headline savings, recall
    rule: str
    below: dict[str, list[str]]  # tier name -> labels ranked below the sound ones
    caveats: list[str] = field(default_factory=list)
    order: list[str] = field(default_factory=list)  # every label by the rule of the first objective
    groups: list[str] = field(default_factory=list)  # the verdict per agent, one sentence each
    pooled: str = ""  # a few transcripts hold most of the headline's weight: said once, in words


def _pct(e: Estimate) -> str:
    return "–" if math.isnan(e.value) else f"{e.value:.1%}"


def spread_text(sp: Spread | None) -> str:
    """``per-transcript median 0.0%`` (where the pooled figure and the typical transcript part ways)."""
    if sp is None or math.isnan(sp.median):
        return ""
    return f"per-transcript median {sp.median:.1%}"


def _figures(agg: Mapping[str, Estimate], obj: Objective, sp: Spread | None = None) -> str:
    keys = dict.fromkeys([obj.metric, *(k for k, _, _ in obj.constraints), HEADLINE, RECALL])
    parts = []
    for k in keys:
        e, m = agg[k], metric(k)
        if math.isnan(e.value) or e.units == 0:  # no transcript contributes: no figure
            continue
        thr = next((v for c, _, v in obj.constraints if c == k), None)
        text = decisive(e.value, thr, m.percent) if thr is not None else (
            f"{e.value:.1%}" if m.percent else f"{e.value:,.3f}" if k == "cost" else f"{e.value:.2f}")
        ci = "" if math.isnan(e.lo) else (f" [{e.lo:.1%}, {e.hi:.1%}]" if m.percent else f" [{e.lo:,.3f}, {e.hi:,.3f}]")
        few = f" (n={e.units}, few)" if e.few else ""
        median = spread_text(sp) if k == HEADLINE else ""
        parts.append(f"{m.title} {text}{ci}{few}" + (f" ({median})" if median else ""))
    return "; ".join(parts)


def _better(a: float, b: float, maximize: bool) -> bool:
    return a > b if maximize else a < b


def choose(b: Batch, standing: Mapping[str, Standing], spec: str,
           spreads: Mapping[str, Spread] | None = None) -> Choice:
    """The first strategy in the one order (:func:`compbench.decide.objective.ranked`) that meets ``spec``:
    the leaderboard's first row, or the rows above it said in words."""
    obj = parse_objective(spec)
    agg = b.estimates
    everyone = ranked(agg, standing, obj)
    meeting = [s for s in everyone if meets(agg[s], obj)]
    text = words(obj)
    open_bar = ""
    if not meeting and bar_unmeasurable(agg, everyone, obj):
        # no transcript can measure the bar (no fact received was used again: short logs): the metric decides
        meeting = [s for s in everyone if unmeasured(agg[s], obj) and standing[s].acted]
        open_bar = f"{bars(obj)} is not measurable on these transcripts (no fact received was used again)"
    if not meeting:
        return Choice(text, spec, None, "", "", "no strategy meets it")
    best = meeting[0]
    st = standing[best]
    figures = _figures(agg[best], obj, (spreads or {}).get(best))
    if not st.sound:  # the rule still decides: fewest calls over the window first, then the objective
        what = (f"{st.refused:,} of its {st.calls:,} calls over the window (a real API refuses them)" if st.refused
                else "it compacts on most calls")
        note = f"no sound strategy meets it; the best by the ranking rule still has {what}"
    else:
        better = [s for s in meeting if not standing[s].sound
                  and _better(agg[s][obj.metric].value, agg[best][obj.metric].value, obj.maximize)]
        note = (f"{', '.join(better[:3])}{' and others' if len(better) > 3 else ''} would score better but "
                + ("have" if len(better) > 1 else "has") + " calls over the window or compacts on most calls"
                ) if better else ""
    margin = ""
    runner = next((s for s in meeting[1:] if standing[s].sound == st.sound), None)
    if runner is not None:
        d = b.diff(best, runner, obj.metric)
        if d is not None and not math.isnan(d.value):
            verdict = "ahead of" if d.significant else "statistically tied with"
            margin = f"{verdict} {runner} ({fmt_diff(d, metric(obj.metric))}, paired)"
    above = everyone[:everyone.index(best)]
    why = ""
    if above:
        shown = ", ".join(above[:3]) + (f" and {len(above) - 3} more" if len(above) > 3 else "")
        why = f"ranked above it: {shown} ({'misses' if len(above) == 1 else 'miss'} {_bars_or_metric(obj)})"
    note = "; ".join(x for x in (open_bar, note) if x)
    return Choice(text, spec, best, figures, margin, note, edge(agg[best], obj), why)


def _bars_or_metric(obj: Objective) -> str:
    return bars(obj) if obj.constraints else f"a {metric(obj.metric).title}"


def verdict(results: Any, b: Batch, standing: Mapping[str, Standing], flags: Mapping[str, Sequence[str]],
            summarizer: str, objectives: Sequence[str] = DEFAULT_OBJECTIVES,
            cache: Mapping[str, tuple[int, float, float]] | None = None, price_model: str = "",
            cache_ttl: str = "5m", spreads: Mapping[str, Spread] | None = None,
            groups: Sequence[str] = ()) -> Verdict:
    """The run's verdict; ``summarizer`` in words (:func:`compbench.decide.summary.describe_summarizer`),
    ``cache`` as :func:`compbench.decide.summary.cache_check` gives it, ``spreads`` the headline's per strategy
    (:func:`compbench.decide.headline.spreads`), ``groups`` the verdict per agent
    (:func:`compbench.decide.breakdown.sentence`)."""
    agg = b.estimates
    first = parse_objective(objectives[0]) if objectives else parse_objective(DEFAULT_OBJECTIVES[0])
    everyone = ranked(agg, standing, first)
    points = {s: (agg[s][HEADLINE].value, agg[s][RECALL].value) for s in agg}
    front = [(s, *points[s]) for s in frontier(points, standing)]
    below: dict[str, list[str]] = {}
    for s in everyone:
        if not standing[s].sound:
            below.setdefault(standing[s].tier_name, []).append(s)
    caveats = [f"Summaries by {summarizer}. Recall depends on it: each strategy's recall is a range, from "
               "summaries that carry nothing to summaries that copy their span (the table below)."]
    few = sorted({s for s, ms in agg.items() for k in (HEADLINE, RECALL)
                  if not math.isnan(ms[k].value) and ms[k].few and ms[k].units > 0})
    if few:
        caveats.append(f"Figures resting on fewer than 5 transcripts or sessions (marked few): {', '.join(few)}.")
    heavy = next((sp for sp in (spreads or {}).values() if sp.dominated), None)
    pooled = ""
    if heavy is not None:
        pooled = (f"pooled figures are ratios of sums: {heavy.note()}, so each pooled {metric(HEADLINE).title} is "
                  "mostly theirs; the per-transcript median is beside it")
        caveats.append(pooled[0].upper() + pooled[1:] + ".")
    n_flagged = len([s for s in flags if s != REFERENCE])
    if n_flagged:
        caveats.append(f"{n_flagged} of {len(agg)} configurations carry flags (never acted, threshold beyond the "
                       "window, degenerate compacting, identical configurations...): see the leaderboard.")
    if REFERENCE in flags:
        caveats.append(f"The reference {REFERENCE}: {flags[REFERENCE][0]}.")
    from compbench.decide.flags import inferred_window_caveat, overhead_groups, price_models

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
    flagged_by = overhead_groups(results)
    if flagged_by:
        n = len({tid for _, items in flagged_by for tid, _ in items})
        caveats.append(f"{OVERHEAD_CAVEAT} {n} "
                       f"transcript{'s' * (n != 1)}, whose savings rest on it: " + "; ".join(
                           f"{what} ({len(items)})" for what, items in flagged_by) + " (see results: overhead_flag).")
    wide = inferred_window_caveat(results)
    if wide:
        caveats.append(wide[0].upper() + wide[1:] + ".")
    caveats.append("The replay assumes the agent would have acted the same after a compaction; recall is the "
                   "presence of a fact's anchors in the prompt, an upper bound on what a model retains.")
    caveats.append("Needed-fact recall is a heuristic: on real compactions it did not predict what agents re-read "
                   "after them (README, recall_evidence), so its bar here orders strategies to build; each tool's "
                   "advice ranks its settings by effective savings, which carries the re-acquisition validated "
                   "against real compactions, with recall beside it.")
    return Verdict([choose(b, standing, o, spreads) for o in objectives], front, rule(first), below, caveats,
                   everyone, list(groups), pooled)


def lines(v: Verdict) -> list[str]:
    """The verdict as plain text lines (``compare``)."""
    out = []
    for c in v.choices:
        if c.best is None:
            out.append(f"best for {c.objective}: none ({c.note})")
        else:
            out.append(f"best for {c.objective}: {c.best} ({c.figures})"
                       + "".join(f"; {x}" for x in (c.edge, c.margin, c.note, c.above) if x))
    if v.pooled:
        out.append("note: " + v.pooled)
    out += v.groups
    if v.frontier:
        out.append(f"frontier (sound strategies, {metric(HEADLINE).title} vs recall): " + " · ".join(
            f"{s} ({x:.1%}, {'–' if math.isnan(y) else f'{y:.1%}'})" for s, x, y in v.frontier))
    for tier, labels in v.below.items():
        out.append(f"ranked below every sound strategy ({tier}): {', '.join(labels)}")
    return out
