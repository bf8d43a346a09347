"""``compbench.decide.ranking`` — The one rule every ranking, chart and verdict follows: overflows count against a
strategy.

A call whose prompt exceeds the window is one a real API refuses, so a strategy with such calls must never
look better than one without, whatever its savings or recall (``none``, a threshold beyond the window and
a strategy that acts too late all score perfect recall on calls that would never have been answered).
Strategies fall into three tiers, ranked in this order:

0. *sound*: no call over the window, compacting on fewer than half of its calls;
1. *degenerate*: no call over the window, but compacting on most calls (reserves at or above the window);
2. *refused calls*: at least one call over the window (fewer first).

Within a tier, the strategies that meet the objective's bars (by default needed-fact recall ≥ 90%,
:mod:`compbench.decide.headline`) come before those that miss them; then the objective's metric decides (a
figure that is undefined, such as the recall of a strategy that never acted, comes last), then the label.
``compare``, ``tune``, the run summary, the report's leaderboard and the verdict all sort with :func:`order`
(the verdict names the first strategy in that order that meets the objective, so the leaderboard's first row
is its pick, or says why not), and the Pareto frontier is drawn among sound strategies only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

TIERS = ("sound", "degenerate", "refused calls")
RULE = ("strategies with no call over the window come first (a real API refuses such calls), then those "
        "that compact on most calls (degenerate), then those with calls over the window, fewest first; "
        "within each group, by {metric}")
BAR_RULE = ("strategies with no call over the window come first (a real API refuses such calls), then those "
            "that compact on most calls (degenerate), then those with calls over the window, fewest first; "
            "within each group, those with {bar} before those without, then by {metric}")


@dataclass(frozen=True)
class Standing:
    """Where a strategy stands before any metric: its tier and what put it there."""

    label: str
    tier: int
    refused: int  # calls over the window, all transcripts
    calls: int
    acted: int  # transcripts it acted on
    transcripts: int

    @property
    def tier_name(self) -> str:
        return TIERS[self.tier]

    @property
    def sound(self) -> bool:
        return self.tier == 0


def standings(results: Any, flags: Mapping[str, Sequence[Any]] | None = None) -> dict[str, Standing]:
    """Per strategy label (run order), its tier from the run's results (``flags``: from
    :func:`compbench.decide.summary.flag_details`, computed here when not given)."""
    from compbench.decide.flags import flag_details

    flags = flag_details(results) if flags is None else flags
    out: dict[str, Standing] = {}
    for label, g in results.groupby("strategy", sort=False):
        refused = int(g["overflows"].sum())
        degenerate = any(f.kind == "degenerate" for f in flags.get(str(label), ()))
        tier = 2 if refused else 1 if degenerate else 0
        acted = int((g["first_action_step"] >= 0).sum()) if "first_action_step" in g else 0
        out[str(label)] = Standing(str(label), tier, refused, int(g["steps"].sum()), acted, len(g))
    return out


def order(labels: Iterable[str], standing: Mapping[str, Standing], key: Callable[[str], float],
          higher_is_better: bool = True, meets: Callable[[str], bool] | None = None) -> list[str]:
    """``labels`` ranked by the rule: tier, then (in the refused tier) fewer refused calls, then those that
    ``meets`` an objective's bars before those that miss them, then ``key`` (NaN last), then the label."""

    def rank(label: str) -> tuple[int, int, int, int, float, str]:
        s = standing.get(label)
        tier, refused = (s.tier, s.refused) if s is not None else (0, 0)
        v = key(label)
        missing = math.isnan(v)
        score = 0.0 if missing else (-v if higher_is_better else v)
        misses = 0 if meets is None or meets(label) else 1
        return tier, refused if tier == 2 else 0, misses, int(missing), score, label

    return sorted(labels, key=rank)


def frontier(points: Mapping[str, tuple[float, float]], standing: Mapping[str, Standing]) -> list[str]:
    """The Pareto frontier of (x, y), both maximized, among sound strategies only: one that a real API
    would have refused, or that compacts on every call, is no trade-off anyone can choose."""
    return pareto({k: v for k, v in points.items() if k in standing and standing[k].sound})


def pareto(points: Mapping[str, tuple[float, float]]) -> list[str]:
    """Labels not dominated in (x, y), both maximized; sorted by x descending."""
    pts = {k: v for k, v in points.items() if not any(math.isnan(c) for c in v)}
    front = [k for k, (x, y) in pts.items()
             if not any((x2 >= x and y2 >= y) and (x2 > x or y2 > y) for x2, y2 in pts.values())]
    return sorted(front, key=lambda k: (-pts[k][0], -pts[k][1], k))
