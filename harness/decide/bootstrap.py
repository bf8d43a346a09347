"""``compbench.decide.bootstrap`` — Every strategy's every metric bootstrapped on one set of resamples.

:func:`compbench.decide.compare.estimate` resamples one figure at a time: 10,000 resamples of 2,000 transcripts
is 20 million draws for each of 11 metrics × 9 strategies (minutes), and 10,000 transcripts would hold
800 MB of indices per figure. Here the figures that rest on the same units (the same clusters in the same
order: every strategy of a run replays the same transcripts) share their resamples: the indices are drawn
once, a chunk at a time, and every column is summed by one matrix product. The estimates equal
:func:`~compbench.decide.compare.estimate`'s (the same seeded draws; sums differ in the last bit at most), and a
paired difference between two strategies is the difference of their columns' samples, as
:func:`compbench.decide.stats.paired_diff_ci` computes it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from compbench.decide.stats import RESAMPLES, SEED, Estimate, by_cluster, interval, ratio_samples


@dataclass
class _Column:
    label: str
    metric: str
    num: np.ndarray  # per unit (cluster sums)
    den: np.ndarray
    complement: bool
    rows: bytes  # the transcripts (in order) and their clusters: two columns pair only on the same rows
    labels: np.ndarray  # per transcript: its cluster
    counted: np.ndarray  # per transcript: a non-zero denominator (or a value to average)
    acted: np.ndarray  # per transcript: the strategy acted (all True unless the metric counts only those)
    whole: bool  # every transcript kept (a mean drops those without a value)
    samples: np.ndarray | None = None

    def units(self, mask: np.ndarray) -> tuple[int, int]:
        return int(mask.sum()), len(set(self.labels[mask]))


@dataclass
class Batch:
    """Estimates per strategy label and metric name, and the samples they came from."""

    estimates: dict[str, dict[str, Estimate]] = field(default_factory=dict)
    columns: dict[tuple[str, str], _Column] = field(default_factory=dict)

    def diff(self, a: str, b: str, metric: str) -> Estimate | None:
        """``metric(a) − metric(b)``, paired on the shared resamples, or None when the two figures do not
        rest on the same units (then :func:`compbench.decide.compare.paired` aligns the transcripts itself)."""
        ca, cb = self.columns.get((a, metric)), self.columns.get((b, metric))
        if (ca is None or cb is None or ca.rows != cb.rows or ca.samples is None or cb.samples is None
                or not (ca.whole and cb.whole) or len(ca.labels) != len(cb.labels)):
            return None
        value = self.estimates[a][metric].value - self.estimates[b][metric].value
        n, clusters = ca.units((ca.counted | cb.counted) & (ca.acted | cb.acted))
        return replace(interval(ca.samples - cb.samples, value, len(ca.num)), n=n, clusters=clusters)


def changed(rows: Any, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Per transcript, whether a saving against the reference rests on it: the strategy acted there, or spent
    differently from the reference without acting (a summary paid for and never used). A strategy that did
    neither saved nothing there and is credited nothing: its figure rests on no transcript (``n=0``)."""
    out: np.ndarray = np.asarray(rows["first_action_step"].to_numpy() >= 0) | (num != den)
    return out


def _rows_key(ids: np.ndarray, labels: np.ndarray) -> bytes:
    return "\x00".join(f"{t}\x01{c}" for t, c in zip(ids, labels, strict=True)).encode()


def batch(df: Any, metrics: Sequence[Any], resamples: int = RESAMPLES, seed: int = SEED,
          by: str = "session") -> Batch:
    """Estimates of ``metrics`` for every strategy of ``df`` (a run's results), strategies in run order."""
    from compbench.decide.metrics import available, cluster_labels, column, common_transcripts

    metrics = available(df, metrics)  # a built-in metric a run has no column for (written before it) is left out
    out = Batch()
    commons = {m.name: common_transcripts(df, m) for m in metrics if m.common}
    first_action = "first_action_step" in df.columns
    # each column read once for the whole frame, then taken per strategy by position (the same values as reading it
    # on each strategy's rows: every one is a row's own)
    all_labels, all_ids = cluster_labels(df, by), df["transcript_id"].astype(str).to_numpy()
    exprs: dict[str, np.ndarray] = {}

    def col(expr: str) -> np.ndarray:
        if expr not in exprs:
            exprs[expr] = column(df, expr)
        return exprs[expr]

    acting = df["first_action_step"].to_numpy() >= 0 if first_action else None
    positions = df.groupby("strategy", sort=False).indices
    for label in dict.fromkeys(df["strategy"]):  # in run order
        rows = positions[label]
        for m in metrics:
            # no transcript where every strategy has it (many strategies acting on few transcripts each):
            # each strategy's own, its n saying on how many
            at = rows[np.isin(all_ids[rows], list(commons[m.name]))] if m.common and commons[m.name] else rows
            labels, ids = all_labels[at], all_ids[at]
            num = col(m.num)[at]
            acted = np.ones(len(at), bool)
            if m.den is None:
                keep = ~np.isnan(num)
                num, den, labels, acted = num[keep], np.ones(int(keep.sum())), labels[keep], acted[keep]
                counted = np.ones(len(num), bool)
            else:
                keep = acted
                den = col(m.den)[at]
                counted = den != 0
                if m.acted_only and acting is not None:
                    acted = np.asarray(acting[at]) | (num != den)  # as :func:`changed` says it of these rows
            n_arr, d_arr = by_cluster(labels, num, den)
            out.columns[(str(label), m.name)] = _Column(str(label), m.name, n_arr, d_arr, m.complement,
                                                        _rows_key(ids[keep], labels), labels, counted, acted,
                                                        bool(keep.all()))
    groups: dict[int, list[_Column]] = {}  # the draws depend only on the number of units (and the seed)
    for c in out.columns.values():
        groups.setdefault(len(c.num), []).append(c)
    for cols in groups.values():
        if not len(cols[0].num):
            continue
        samples = ratio_samples(np.stack([c.num for c in cols], axis=1), np.stack([c.den for c in cols], axis=1),
                                resamples, seed)
        for k, c in enumerate(cols):
            c.samples = 1 - samples[:, k] if c.complement else samples[:, k]
    for c in out.columns.values():
        d = float(c.den.sum())
        value = float(c.num.sum()) / d if d else math.nan
        if c.complement:
            value = 1 - value
        est = interval(c.samples, value, len(c.num)) if c.samples is not None else Estimate(
            math.nan, math.nan, math.nan, 0)
        n, clusters = c.units(c.counted & c.acted)
        out.estimates.setdefault(c.label, {})[c.metric] = replace(est, n=n, clusters=clusters)
    return out
