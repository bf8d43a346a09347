"""``compbench.decide.stats`` — Paired bootstrap confidence intervals over transcripts, or over clusters of them.

Headline metrics are ratios of sums over transcripts (savings = 1 − Σ input / Σ input of ``none``,
needed-fact recall = Σ needs present / Σ needs), so a long transcript weighs as much as its tokens do.
The bootstrap resamples *transcripts* with replacement (10,000 times, seeded) and recomputes the
ratio; comparing two strategies uses the same resampled transcripts for both (paired), so the shared
per-transcript difficulty cancels out. A difference is significant when its 95% interval excludes 0.

Transcripts are not always independent: a sub-agent's transcript and its parent's are one session, and
sessions of one project share its code. With ``clusters`` (one label per transcript) the bootstrap
resamples whole clusters — the sums of their transcripts — so such a group moves together, and ``n``
counts clusters: the number of independent units the interval rests on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

RESAMPLES = 10_000
MIN_UNITS = 5  # a figure resting on fewer contributing transcripts (or clusters) is flagged, never precise
SEED = 0
_CHUNK = 1_000


@dataclass(frozen=True, slots=True)
class Estimate:
    """A figure with its 95% interval; ``n`` contributing transcripts, ``clusters`` the independent units
    the interval resampled (sessions or projects; 0 when transcripts were resampled one by one)."""

    value: float
    lo: float
    hi: float
    n: int
    clusters: int = 0

    @property
    def units(self) -> int:
        """The independent units the interval rests on: clusters when resampled by cluster."""
        return self.clusters or self.n

    @property
    def few(self) -> bool:
        """Too few units for the interval to mean much (see :data:`MIN_UNITS`)."""
        return self.units < MIN_UNITS

    @property
    def significant(self) -> bool:
        """The interval excludes zero (meaningful for differences), on enough independent units: a
        difference resting on fewer than MIN_UNITS (a zero-width interval over one transcript) is not."""
        return not self.few and (self.lo > 0 or self.hi < 0)


def _index_chunks(n: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """The resampled indices, :data:`_CHUNK` resamples at a time: the same stream as one
    ``integers(0, n, size=(resamples, n))`` call (numpy draws row after row), without holding all of it
    (10,000 resamples of 10,000 transcripts would be 800 MB)."""
    rng = np.random.default_rng(seed)
    for s in range(0, resamples, _CHUNK):
        yield rng.integers(0, n, size=(min(_CHUNK, resamples - s), n))


def _ratio(num: np.ndarray, den: np.ndarray) -> float:
    d = float(den.sum())
    return float(num.sum()) / d if d else float("nan")


def _divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1), np.nan)


def _counts(part: np.ndarray, n: int) -> np.ndarray:
    """How often each unit is drawn in each resample of ``part``: a sum over a resample is then a dot
    product, so many columns are summed at once by one matrix product instead of a gather per column."""
    rows = part.shape[0]
    flat = (part + (np.arange(rows) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(float)


def ratio_samples(nums: np.ndarray, dens: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """Bootstrap samples of Σ num / Σ den for every column of ``nums`` / ``dens`` (units × columns), all on
    the same resampled units: (resamples × columns). Paired differences are differences of columns."""
    n = nums.shape[0]
    out = np.empty((resamples, nums.shape[1]))
    s = 0
    for part in _index_chunks(n, resamples, seed):
        c = _counts(part, n)
        out[s:s + len(part)] = _divide(c @ nums, c @ dens)
        s += len(part)
    return out


def _ratios(num: np.ndarray, den: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    return ratio_samples(num[:, None], den[:, None], resamples, seed)[:, 0]


def interval(samples: np.ndarray, value: float, n: int, level: float = 0.95) -> Estimate:
    """The percentile interval of bootstrap ``samples`` around ``value`` (NaN samples dropped)."""
    samples = samples[~np.isnan(samples)]
    if not len(samples):
        return Estimate(value, float("nan"), float("nan"), n)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(samples, [alpha, 1 - alpha], method="inverted_cdf")
    return Estimate(value, float(lo), float(hi), n)


def by_cluster(clusters: np.ndarray | list[str] | None, *columns: np.ndarray | list[float]) -> list[np.ndarray]:
    """Each column summed per cluster (clusters in order of first appearance); unchanged without clusters.
    Ratios of sums are the same over cluster sums, so only the resampling unit changes."""
    arrays = [np.asarray(c, float) for c in columns]
    if clusters is None:
        return arrays
    labels = list(clusters)
    order = {c: k for k, c in enumerate(dict.fromkeys(labels))}
    idx = np.array([order[c] for c in labels], dtype=int)
    return [np.bincount(idx, weights=a, minlength=len(order)) for a in arrays]


def ratio_ci(num: np.ndarray | list[float], den: np.ndarray | list[float], *, resamples: int = RESAMPLES,
             seed: int = SEED, level: float = 0.95, complement: bool = False,
             clusters: np.ndarray | list[str] | None = None) -> Estimate:
    """Σ num / Σ den (or 1 − that, with ``complement``) with a percentile bootstrap interval, resampling
    transcripts or, given ``clusters``, whole clusters."""
    n_arr, d_arr = by_cluster(clusters, num, den)
    n = len(n_arr)
    if n == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    value = _ratio(n_arr, d_arr)
    samples = _ratios(n_arr, d_arr, resamples, seed)
    if complement:
        value, samples = 1 - value, 1 - samples
        est = interval(samples, value, n, level)
        return est
    return interval(samples, value, n, level)


def mean_ci(values: np.ndarray | list[float], *, resamples: int = RESAMPLES, seed: int = SEED,
            level: float = 0.95, clusters: np.ndarray | list[str] | None = None) -> Estimate:
    """The mean of per-transcript values (NaNs dropped) with a bootstrap interval."""
    v = np.asarray(values, float)
    keep = ~np.isnan(v)
    labels = None if clusters is None else np.asarray(list(clusters), dtype=object)[keep]
    return ratio_ci(v[keep], np.ones(int(keep.sum())), resamples=resamples, seed=seed, level=level,
                    clusters=labels)


def paired_diff_ci(num_a: np.ndarray | list[float], den_a: np.ndarray | list[float],
                   num_b: np.ndarray | list[float], den_b: np.ndarray | list[float], *,
                   resamples: int = RESAMPLES, seed: int = SEED, level: float = 0.95,
                   clusters: np.ndarray | list[str] | None = None) -> Estimate:
    """(Σ num_a / Σ den_a) − (Σ num_b / Σ den_b), both on the same resampled transcripts (or clusters)."""
    if any(len(x) != len(num_a) for x in (den_a, num_b, den_b)) or len(num_a) == 0:
        raise ValueError("paired arrays must be non-empty and of equal length")
    arrays = by_cluster(clusters, num_a, den_a, num_b, den_b)
    n = len(arrays[0])
    value = _ratio(arrays[0], arrays[1]) - _ratio(arrays[2], arrays[3])
    both = ratio_samples(np.stack(arrays[0::2], axis=1), np.stack(arrays[1::2], axis=1), resamples, seed)
    samples = both[:, 0] - both[:, 1]
    return interval(samples, value, n, level)
