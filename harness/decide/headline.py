"""``compbench.decide.headline`` — The headline figure, named once, and what a pooled figure hides.

Every ranking, verdict, breakdown and median leads with one savings figure, :data:`HEADLINE`, and holds it
against one recall bar: ``compare``'s default order, the verdict's first objective, the report's leaderboard
and frontier, ``tune``'s default objective and ``compare --by`` all read them from here, so a new headline
(a savings figure net of what the agent must re-acquire, say) is one line, not a search through commands.

Headline figures are ratios of sums (:mod:`compbench.decide.stats`): a long transcript weighs as much as its
tokens, so a pooled saving can rest on three transcripts while the typical one saves nothing. :func:`spread`
gives the per-transcript median beside it and says when a few transcripts hold most of its weight.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from compbench.sdk.kinds import SWEEP, SWEPT

# the savings figure everything leads with (a metric of compbench.decide.compare): net savings once the content
# the strategy's view lost is re-acquired (issue 24; net_savings stays a column and a metric)
HEADLINE = "effective_savings"
RECALL = "needed_recall"  # the loss figure it is held against
RECALL_BAR = 0.9  # the recall the default objectives require
SAVINGS_BAR = 0.25  # the saving the recall objective requires

DEFAULT_OBJECTIVES = (f"max {HEADLINE} s.t. {RECALL} >= {RECALL_BAR:g}",
                      f"max {RECALL} s.t. {HEADLINE} >= {SAVINGS_BAR:g}",
                      f"min cost s.t. {RECALL} >= {RECALL_BAR:g}")
PRIMARY = DEFAULT_OBJECTIVES[0]  # the objective every default ranking follows (the leaderboard's order)

TOP = 3  # "a few transcripts": the largest this many
DOMINANT_SHARE = 0.4  # they dominate when they hold at least this share of the weight...
FAIR_MULTIPLE = 2.0  # ...and at least this many times their fair share (TOP / n)


def pooled(df: Any, m: Any) -> float:
    """The metric ``m`` over the rows ``df`` as every table pools it (a ratio of sums; a mean), no interval."""
    import numpy as np

    from compbench.decide.metrics import column

    num = column(df, m.num)
    if m.den is None:
        kept = num[~np.isnan(num)]
        return float(kept.mean()) if len(kept) else math.nan
    den = float(column(df, m.den).sum())
    if not den:
        return math.nan
    v = float(num.sum()) / den
    return 1 - v if m.complement else v


def per_transcript(df: Any, m: Any) -> Any:
    """The metric ``m`` (:class:`compbench.decide.compare.Metric`) of each row of ``df`` on its own: num / den
    (1 − that for a complement), NaN where the denominator is 0; a per-transcript mean metric is its value."""
    import numpy as np

    from compbench.decide.metrics import column

    num = column(df, m.num)
    if m.den is None:
        return num
    den = column(df, m.den)
    with np.errstate(invalid="ignore", divide="ignore"):
        v = np.where(den != 0, num / np.where(den != 0, den, 1), np.nan)
    return 1 - v if m.complement else v


@dataclass(frozen=True)
class Spread:
    """A pooled figure's per-transcript median, and the share of its weight the :data:`TOP` largest
    transcripts hold (its denominator: none's input tokens for a saving, the needs for recall)."""

    median: float  # over the transcripts where the figure is defined (NaN: none is)
    n: int  # those transcripts
    top_share: float  # the TOP largest transcripts' share of the weight (NaN for a mean metric)
    weight: str  # what the weight is, in words

    @property
    def dominated(self) -> bool:
        """A few transcripts hold most of the weight: the pooled figure is mostly theirs."""
        if math.isnan(self.top_share) or self.n <= TOP:
            return False
        return self.top_share >= max(DOMINANT_SHARE, FAIR_MULTIPLE * TOP / self.n)

    def note(self) -> str:
        """``the 3 largest of 61 transcripts hold 47% of none's input tokens`` when they dominate, else ''."""
        if not self.dominated:
            return ""
        return f"the {TOP} largest of {self.n:,} transcripts hold {self.top_share:.0%} of {self.weight}"


WEIGHTS = {"reference_input_tokens": "none's input tokens", "needs": "the needs",
           "reference_cost_usd": "none's cost", "reference_cost_usd_nocache": "none's cost without a cache"}


def spread(df: Any, m: Any) -> Spread:
    """The spread of ``m`` over one strategy's rows ``df``."""
    import numpy as np

    from compbench.decide.metrics import column

    values = per_transcript(df, m)
    defined = ~np.isnan(values)
    median = float(np.median(values[defined])) if defined.any() else math.nan
    share = math.nan
    if m.den is not None and defined.any():
        weight = column(df, m.den)[defined]
        total = float(weight.sum())
        share = float(np.sort(weight)[::-1][:TOP].sum()) / total if total else math.nan
    return Spread(median, int(defined.sum()), share, WEIGHTS.get(m.den or "", m.den or ""))


def spreads(results: Any, m: Any) -> dict[str, Spread]:
    """Per strategy label (run order), the spread of ``m``."""
    return {str(label): spread(g, m) for label, g in results.groupby("strategy", sort=False)}


def everywhere(results: Any) -> tuple[Any, list[str]]:
    """The rows of the configurations that ran on every transcript of ``results`` (a pooled table compares
    like with like), and the labels of the others: a settings sweep's configurations, each replayed on its own
    tool's logs only, ranked in that tool's verdict (``compare --by source``), never pooled with the rest."""
    n = results["transcript_id"].nunique()
    counts = results.groupby("strategy", sort=False)["transcript_id"].nunique()
    swept = set(results.loc[results[SWEPT] == SWEEP, "strategy"])
    others = [str(s) for s, k in counts.items() if k < n or s in swept]
    return (results[~results["strategy"].isin(others)] if others else results), others
