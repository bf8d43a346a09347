"""The bootstrap against hand-computed cases, and the cost model against a hand-computed cache scenario."""

from __future__ import annotations

import math

import numpy as np
import pytest

from compbench.decide.stats import mean_ci, paired_diff_ci, ratio_ci
from compbench.measure.models import Prices
from compbench.measure.replay_metrics import cost, totals
from compbench.sdk.trace import Trace


def test_bootstrap_hand_computed_three_values() -> None:
    # Resampling 3 transcripts: the mean is 1.0 or 3.0 each with probability 1/27 = 3.7% > 2.5%, so the
    # 95% percentile interval is exactly [1, 3] and the point estimate is 2.
    e = mean_ci([1.0, 2.0, 3.0])
    assert (e.value, e.lo, e.hi, e.n) == (2.0, 1.0, 3.0, 3)


def test_bootstrap_two_values_distribution() -> None:
    # n = 2: resampled means are 0, .5, 1 with probabilities 1/4, 1/2, 1/4; the 20% quantile is 0, the 80% is 1
    e = mean_ci([0.0, 1.0], level=0.6)
    assert (e.lo, e.hi) == (0.0, 1.0)
    e = mean_ci([0.0, 1.0], level=0.2)  # 40% and 60% quantiles both fall on 0.5
    assert (e.lo, e.hi) == (0.5, 0.5)


def test_ratio_of_sums_and_complement() -> None:
    e = ratio_ci([10, 30], [100, 100], complement=True)
    assert e.value == pytest.approx(0.8)
    assert e.lo == pytest.approx(0.7) and e.hi == pytest.approx(0.9)  # all-first / all-second resamples


def test_paired_difference_cancels_shared_difficulty() -> None:
    # B is A plus 0.1 on every transcript: every paired resample differs by exactly 0.1
    a = np.array([0.2, 0.9, 0.5, 0.7, 0.4])
    e = paired_diff_ci(a + 0.1, np.ones(5), a, np.ones(5))
    assert e.value == pytest.approx(0.1) and e.lo == pytest.approx(0.1) and e.hi == pytest.approx(0.1)
    assert e.significant
    assert not paired_diff_ci(a, np.ones(5), a, np.ones(5)).significant
    # the same zero-width difference on 4 transcripts rests on too few to be called significant
    few = paired_diff_ci(a[:4] + 0.1, np.ones(4), a[:4], np.ones(4))
    assert few.lo == pytest.approx(0.1) and few.few and not few.significant


def test_cluster_bootstrap_resamples_whole_sessions() -> None:
    # session A = two transcripts (1/10, 3/10) -> sums 4/20; session B = one transcript 10/20.
    # Resampling sessions gives AA = 8/40, AB = 14/40 or BB = 20/40 (each end with probability 1/4):
    # the 95% interval is [0.2, 0.5]. Resampling transcripts can draw the first one alone: 1/10.
    num, den = [1, 3, 10], [10, 10, 20]
    e = ratio_ci(num, den, clusters=["A", "A", "B"])
    assert e.value == pytest.approx(14 / 40) and (e.lo, e.hi) == (pytest.approx(0.2), pytest.approx(0.5))
    assert e.n == 2  # the units resampled: two sessions
    assert ratio_ci(num, den).lo == pytest.approx(0.1)
    # paired: B − A per session, resampled together
    d = paired_diff_ci([2, 4, 12], den, num, den, clusters=["A", "A", "B"])
    assert d.value == pytest.approx(4 / 40) and d.lo == pytest.approx(2 / 20) and d.hi == pytest.approx(2 / 20)


def test_seeded_and_nan_safe() -> None:
    assert mean_ci([0.3, 0.1, 0.9, 0.4], seed=7) == mean_ci([0.3, 0.1, 0.9, 0.4], seed=7)
    assert math.isnan(ratio_ci([], []).value)


def test_cost_hand_computed_cache_scenario() -> None:
    from compbench.sdk.trace import StepRecord

    # two calls: 1,000 tokens written to the cache, then 1,000 read + 500 new written; 100 + 50 output
    steps = (StepRecord(0, "a1", 1, 1000, 100, 0, 1000, 2, 0, False),
             StepRecord(1, "a2", 3, 1500, 50, 1000, 500, 4, 0, False))
    t = totals(Trace("t", "s", steps, (), (), ((),), (0,), ()))
    p = Prices(input=3e-6, output=15e-6, cache_read=0.3e-6, cache_write=3.75e-6)
    # writes 1,500 x 3.75e-6 + reads 1,000 x 0.3e-6 + output 150 x 15e-6 + summarizer 2,000 in / 300 out
    expected = 1500 * 3.75e-6 + 1000 * 0.3e-6 + 150 * 15e-6 + 2000 * 3e-6 + 300 * 15e-6
    assert cost(t, 2000, 300, p) == pytest.approx(expected)
    assert expected == pytest.approx(0.018675)


def test_retention_is_compared_where_every_strategy_acted() -> None:
    import pandas as pd

    from compbench.decide.compare import aggregate
    from compbench.decide.metrics import BY_NAME

    def rows(values: dict[str, dict[str, float]]) -> pd.DataFrame:
        return pd.DataFrame([{"strategy": s, "transcript_id": t, "session": t, "retention_after": v}
                             for s, per in values.items() for t, v in per.items()])

    m = BY_NAME["retention"]
    nan = float("nan")
    # A acted on t1 and t2, B on t2 and t3: both are compared on t2 alone
    agg = aggregate(rows({"A": {"t1": 0.2, "t2": 0.6, "t3": nan}, "B": {"t1": nan, "t2": 0.4, "t3": 0.9}}), [m], 200)
    assert (agg["A"]["retention"].value, agg["A"]["retention"].n) == (pytest.approx(0.6), 1)
    assert (agg["B"]["retention"].value, agg["B"]["retention"].n) == (pytest.approx(0.4), 1)
    # no transcript where both acted: each on its own, with its n
    agg = aggregate(rows({"A": {"t1": 0.2, "t2": nan}, "B": {"t1": nan, "t2": 0.9}}), [m], 200)
    assert agg["A"]["retention"].value == pytest.approx(0.2) and agg["B"]["retention"].value == pytest.approx(0.9)
