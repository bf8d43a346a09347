"""``compbench.decide.compare`` — Aggregate a run's results per strategy with 95% CIs, and compare runs or strategies
(paired).

Every headline metric is a ratio of sums over transcripts (or a per-transcript mean), bootstrapped over
transcripts by :mod:`compbench.decide.stats`. Used by ``compare``, ``gate``, ``tune`` and the HTML report.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from compbench.decide.bootstrap import changed
from compbench.decide.metrics import METRICS, Metric, available, cluster_labels, column
from compbench.decide.stats import Estimate, mean_ci, paired_diff_ci, ratio_ci
from compbench.errors import UsageError


def load_results(run: str | Path) -> Any:
    """The ``results`` table of a finished run (:class:`compbench.store.reader.Run`)."""
    from compbench.store.reader import Run

    return Run.open(run).results()










def estimate(df: Any, m: Metric, resamples: int = 10_000, seed: int = 0, by: str = "session") -> Estimate:
    """The metric over the rows of ``df`` (one strategy's transcripts) with its 95% CI, resampling
    clusters (``by``); ``n`` counts the transcripts that contribute (a non-zero denominator, or a value
    to average) and ``clusters`` the clusters they fall in."""
    import numpy as np

    num = column(df, m.num)
    labels = cluster_labels(df, by)
    if m.den is None:
        contributing = ~np.isnan(num)
        est = mean_ci(num, resamples=resamples, seed=seed, clusters=labels)
    else:
        den = column(df, m.den)
        contributing = den != 0
        if m.acted_only and "first_action_step" in df.columns:
            contributing = contributing & changed(df, num, den)
        est = ratio_ci(num, den, resamples=resamples, seed=seed, complement=m.complement, clusters=labels)
    return replace(est, n=int(contributing.sum()), clusters=len(set(labels[contributing])))




def aggregate(df: Any, metrics: Sequence[Metric] = METRICS, resamples: int = 10_000,
              seed: int = 0, by: str = "session") -> dict[str, dict[str, Estimate]]:
    """strategy label -> metric name -> estimate, strategies in run order (every figure on shared
    resamples: see :mod:`compbench.decide.bootstrap`)."""
    from compbench.decide.bootstrap import batch

    return batch(df, available(df, metrics), resamples, seed, by).estimates




RANGE = ("recall_verbatim", "needed_recall", "recall_copy")  # the summary carries nothing .. point .. a copy


@dataclass(frozen=True)
class Ordering:
    """Two strategies adjacent in recall order: does the better one stay better whatever the summary
    carries (at the range's both ends and at the point), or does the order depend on the summarizer?"""

    above: str
    below: str
    robust: bool


def orderings(agg: dict[str, dict[str, Estimate]]) -> list[Ordering]:
    """Adjacent pairs of the strategies with a recall, best first. Recall is linear in what the summaries
    carry, so an order that holds at both ends of the range holds everywhere between."""
    have = [s for s, e in agg.items() if all(k in e and not math.isnan(e[k].value) for k in RANGE)]
    ranked = sorted(have, key=lambda s: (-agg[s]["needed_recall"].value, s))
    out = []
    for a, b in itertools.pairwise(ranked):
        robust = all(agg[a][k].value > agg[b][k].value for k in RANGE)
        out.append(Ordering(a, b, robust))
    return out


def paired(df_a: Any, df_b: Any, m: Metric, resamples: int = 10_000, seed: int = 0, by: str = "session") -> Estimate:
    """Metric(a) − metric(b) over the transcripts both have, resampled together (by cluster)."""
    a = df_a.set_index("transcript_id")
    b = df_b.set_index("transcript_id")
    common = [t for t in a.index if t in b.index]
    if not common:
        raise UsageError("the two sides share no transcript; a paired comparison needs the same dataset")
    a, b = a.loc[common].reset_index(), b.loc[common].reset_index()
    labels = cluster_labels(a, by)
    if m.den is None:
        na, nb = column(a, m.num), column(b, m.num)
        keep = ~(_isnan(na) | _isnan(nb))
        if not keep.any():
            return Estimate(math.nan, math.nan, math.nan, 0)
        ones = [1.0] * int(keep.sum())
        est = paired_diff_ci(na[keep], ones, nb[keep], ones, resamples=resamples, seed=seed, clusters=labels[keep])
        return replace(est, n=int(keep.sum()), clusters=len(set(labels[keep])))
    est = paired_diff_ci(column(a, m.num), column(a, m.den), column(b, m.num), column(b, m.den),
                         resamples=resamples, seed=seed, clusters=labels)
    contributing = (column(a, m.den) != 0) | (column(b, m.den) != 0)
    if m.acted_only and "first_action_step" in a.columns:
        acted = (changed(a, column(a, m.num), column(a, m.den)) | changed(b, column(b, m.num), column(b, m.den)))
        contributing = contributing & acted
    est = replace(est, n=int(contributing.sum()), clusters=len(set(labels[contributing])))
    if m.complement:  # (1 - x) - (1 - y) = y - x
        return replace(est, value=-est.value, lo=-est.hi, hi=-est.lo)
    return est


def counterpart(df: Any, label: str) -> Any:
    """The rows of ``label`` in another run: the same label, else the only label of the same strategy
    name (a tuned configuration compared with the baseline's), else empty."""
    same = df[df["strategy"] == label]
    if not same.empty:
        return same
    name = label.split(":")[0]
    labels = [s for s in dict.fromkeys(df["strategy"]) if str(s).split(":")[0] == name]
    return df[df["strategy"] == labels[0]] if len(labels) == 1 else same


def _isnan(x: Any) -> Any:
    import numpy as np

    return np.isnan(x)


def fmt_value(v: float, m: Metric) -> str:
    """One figure of ``m`` as every table prints it: a percentage to 0.1, dollars to 0.001, counts to 0.01."""
    if math.isnan(v):
        return "–"
    if m.percent:
        return f"{v:.1%}"
    return f"{v:,.3f}" if m.name == "cost" else f"{v:,.2f}"


def _few(e: Estimate) -> str:
    """`` (n=3, few)`` under 5 contributing units."""
    return f" (n={e.units}, few)" if e.few else ""


NO_FIGURE = "– (n=0)"  # a figure no transcript contributes to (a saving of a strategy that never acted nor spent)


def fmt(e: Estimate, m: Metric, ci: bool = True) -> str:
    """A figure with its 95% interval and, under 5 contributing units, its ``n``; none at all where no
    transcript contributes (an interval over no transcript means nothing)."""
    if math.isnan(e.value):
        return "–"
    if e.units == 0:
        return NO_FIGURE
    few = _few(e)
    if not ci or math.isnan(e.lo):
        return fmt_value(e.value, m) + few
    return f"{fmt_value(e.value, m)} [{fmt_value(e.lo, m)}, {fmt_value(e.hi, m)}]{few}"


def signed(v: float, decimals: int) -> str:
    """``+1.2`` / ``-1.2`` / ``0.0``: never ``-0.0`` (a difference that rounds to nothing has no sign)."""
    text = f"{v:+.{decimals}f}"
    return text[1:] if float(text) == 0 else text


def fmt_diff(d: Estimate, m: Metric) -> str:
    """A difference in the units of the single-run tables: percentage points for a percentage (``+1.2 pp
    [-0.3, +2.5]``), dollars or counts otherwise."""
    if math.isnan(d.value):
        return "–"
    if d.units == 0:
        return NO_FIGURE
    decimals = 1 if m.percent else 3 if m.name == "cost" else 2
    scale = 100 if m.percent else 1
    unit = " pp" if m.percent else ""
    few = _few(d)
    if math.isnan(d.lo):
        return f"{signed(d.value * scale, decimals)}{unit}{few}"
    return (f"{signed(d.value * scale, decimals)}{unit} [{signed(d.lo * scale, decimals)}, "
            f"{signed(d.hi * scale, decimals)}]{few}")
