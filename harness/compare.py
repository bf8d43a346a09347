"""Aggregate a run's results per strategy with 95% CIs, and compare runs or strategies (paired).

Every headline metric is a ratio of sums over transcripts (or a per-transcript mean), bootstrapped over
transcripts by :mod:`compbench.stats`. Used by ``compare``, ``gate``, ``tune`` and the HTML report.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from compbench.errors import UsageError
from compbench.registry import Registry
from compbench.savings import NET_SPENT
from compbench.stats import Estimate, mean_ci, paired_diff_ci, ratio_ci


@dataclass(frozen=True)
class Metric:
    """A headline metric: Σ num / Σ den over transcripts (1 − that when ``complement``), or a mean.

    ``common``: a per-transcript mean compared only on the transcripts where every strategy that has the
    figure anywhere has it (retention exists only where a strategy acted: averaging each strategy over its
    own subset would compare different transcripts)."""

    name: str
    title: str
    num: str
    den: str | None = None
    complement: bool = False
    higher_is_better: bool = True
    percent: bool = True
    common: bool = False
    # a saving against the reference comes only from the transcripts where the strategy acted: those are
    # the ones it rests on (three acting transcripts make a figure of three, whatever the dataset's size)
    acted_only: bool = False


def _sum(*cols: str) -> str:
    return "+".join(cols)


METRICS: tuple[Metric, ...] = (
    Metric("net_savings", "net savings", _sum(*NET_SPENT), "reference_input_tokens", complement=True,
           acted_only=True),  # compbench.savings.net_saved
    Metric("needed_recall", "needed-fact recall", "needs_present", "needs"),
    Metric("recall_verbatim", "recall kept verbatim (summary carries nothing)", "needs_verbatim", "needs"),
    Metric("recall_copy", "recall if summaries also copied (optimistic)", "needs_upper", "needs"),
    Metric("oracle_recall", "hindsight oracle's recall at the same cost (a bound, not a strategy)",
           "oracle_present", "needs"),
    Metric("retention", "retention after acting", "retention_after", common=True),
    Metric("savings", "token savings", "input_tokens", "reference_input_tokens", complement=True, acted_only=True),
    Metric("cost_savings", "cost savings", "cost_usd", "reference_cost_usd", complement=True, acted_only=True),
    Metric("cost_savings_nocache", "cost savings without a cache", "cost_usd_nocache", "reference_cost_usd_nocache",
           complement=True, acted_only=True),
    Metric("cost", "cost $ / transcript", "cost_usd", higher_is_better=False, percent=False),
    Metric("compactions", "compactions / transcript", "compactions", higher_is_better=False, percent=False),
    Metric("overflows", "overflows / transcript", "overflows", higher_is_better=False, percent=False),
)
BY_NAME = {m.name: m for m in METRICS}


def _metric(name: str, obj: object) -> Metric | None:
    return obj if isinstance(obj, Metric) else None


# every metric by name: the built-ins, then plug-ins' (a Metric object named by a ``compbench.metrics``
# entry point, or a module that registers some), usable wherever a metric is named (compare, gate, tune)
REGISTRY: Registry[Metric] = Registry("metric", "compbench.metrics", adopt=_metric)
for _m in METRICS:
    REGISTRY.register(_m.name, _m, "compbench")


def metric(name: str) -> Metric:
    return REGISTRY.get(name)


def load_results(run: str | Path) -> Any:
    """The ``results`` table of a finished run (:class:`compbench.runread.Run`)."""
    from compbench.runread import Run

    return Run.open(run).results()


def _column(df: Any, expr: str) -> Any:
    cols = expr.split("+")
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise UsageError(f"results lack column(s) {', '.join(missing)}; rerun with this compbench version")
    out = df[cols[0]].astype(float)
    for c in cols[1:]:
        out = out + df[c].astype(float)
    return out.to_numpy()


CLUSTERS = ("session", "project", "transcript")  # the resampling unit of the bootstrap


def cluster_labels(df: Any, by: str = "session") -> Any:
    """Per row, the unit it is resampled with: its session (a sub-agent with its parent), its project
    where the log records one (else its session), or the transcript itself. Runs written before these
    columns existed fall back to the transcript."""
    if by == "transcript" or "session" not in df.columns:
        return df["transcript_id"].astype(str).to_numpy()
    session = df["session"].astype(str)
    if by == "project":
        project = df["project"].astype(str)
        return project.where(project != "", "session:" + session).to_numpy()
    return session.to_numpy()


def estimate(df: Any, m: Metric, resamples: int = 10_000, seed: int = 0, by: str = "session") -> Estimate:
    """The metric over the rows of ``df`` (one strategy's transcripts) with its 95% CI, resampling
    clusters (``by``); ``n`` counts the transcripts that contribute (a non-zero denominator, or a value
    to average) and ``clusters`` the clusters they fall in."""
    import numpy as np

    num = _column(df, m.num)
    labels = cluster_labels(df, by)
    if m.den is None:
        contributing = ~np.isnan(num)
        est = mean_ci(num, resamples=resamples, seed=seed, clusters=labels)
    else:
        den = _column(df, m.den)
        contributing = den != 0
        if m.acted_only and "first_action_step" in df.columns:
            contributing = contributing & (df["first_action_step"].to_numpy() >= 0)
        est = ratio_ci(num, den, resamples=resamples, seed=seed, complement=m.complement, clusters=labels)
    return replace(est, n=int(contributing.sum()), clusters=len(set(labels[contributing])))


def common_transcripts(df: Any, m: Metric) -> set[str]:
    """Transcripts where every strategy that has ``m`` anywhere has it (see :attr:`Metric.common`)."""
    import numpy as np

    values = df.assign(_v=_column(df, m.num))
    having = values[~np.isnan(values["_v"])]
    strategies = set(having["strategy"])
    if not strategies:
        return set()
    per = having.groupby("transcript_id")["strategy"].nunique()
    return {str(t) for t, k in per.items() if k == len(strategies)}


def aggregate(df: Any, metrics: Sequence[Metric] = METRICS, resamples: int = 10_000,
              seed: int = 0, by: str = "session") -> dict[str, dict[str, Estimate]]:
    """strategy label -> metric name -> estimate, strategies in run order."""
    out: dict[str, dict[str, Estimate]] = {}
    commons = {m.name: common_transcripts(df, m) for m in metrics if m.common}
    for label in dict.fromkeys(df["strategy"]):
        sub = df[df["strategy"] == label]
        out[str(label)] = {m.name: estimate(sub[sub["transcript_id"].isin(commons[m.name])] if m.common else sub,
                                            m, resamples, seed, by) for m in metrics}
    return out


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
        na, nb = _column(a, m.num), _column(b, m.num)
        keep = ~(_isnan(na) | _isnan(nb))
        if not keep.any():
            return Estimate(math.nan, math.nan, math.nan, 0)
        ones = [1.0] * int(keep.sum())
        est = paired_diff_ci(na[keep], ones, nb[keep], ones, resamples=resamples, seed=seed, clusters=labels[keep])
        return replace(est, n=int(keep.sum()), clusters=len(set(labels[keep])))
    est = paired_diff_ci(_column(a, m.num), _column(a, m.den), _column(b, m.num), _column(b, m.den),
                         resamples=resamples, seed=seed, clusters=labels)
    contributing = (_column(a, m.den) != 0) | (_column(b, m.den) != 0)
    if m.acted_only and "first_action_step" in a.columns:
        acted = (a["first_action_step"].to_numpy() >= 0) | (b["first_action_step"].to_numpy() >= 0)
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


def fmt(e: Estimate, m: Metric, ci: bool = True) -> str:
    if math.isnan(e.value):
        return "–"
    few = f" (n={e.units}, few)" if e.few else ""
    def f(v: float) -> str:
        if m.percent:
            return f"{v:.1%}"
        return f"{v:,.3f}" if m.name == "cost" else f"{v:.2f}"

    if not ci or math.isnan(e.lo):
        return f(e.value) + few
    return f"{f(e.value)} [{f(e.lo)}, {f(e.hi)}]{few}"
