"""``compbench.decide.objective`` — Objectives (``max net_savings s.t. needed_recall >= 0.9``), their thresholds, and
the one order every table and the verdict follow for them.

An objective's bars take part in the ranking rule (:func:`ranked`): within each tier of
:mod:`compbench.decide.ranking`, the strategies that meet them come first. The verdict names the first strategy
in that order that meets the objective, so the leaderboard's first row is the verdict's pick, or the rows above
it say why not (calls over the window, a bar missed). A pick whose interval crosses a bar is on its edge, and
:func:`edge` says so in words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from compbench.decide.metrics import metric
from compbench.decide.ranking import BAR_RULE, RULE, Standing, order
from compbench.decide.stats import Estimate
from compbench.errors import UsageError


@dataclass(frozen=True)
class Objective:
    maximize: bool
    metric: str
    constraints: tuple[tuple[str, str, float], ...]


def threshold(name: str, raw: str, where: str) -> float:
    """A threshold of metric ``name`` as a fraction: ``0.9`` or ``90%`` for a percentage; a bare value above 1
    for a share that cannot exceed 100% (``needed_recall=90``: 9000%) is refused, never silently taken."""
    m = metric(name)
    text = raw.strip()
    percent_sign = text.endswith("%")
    try:
        value = float(text.rstrip("%").replace("_", ""))
    except ValueError:
        raise UsageError(f"{where}: {raw!r} is not a number") from None
    if percent_sign:
        if not m.percent:
            raise UsageError(f"{where}: {m.name} is not a percentage; give a plain number")
        return value / 100
    if m.share and value > 1:
        raise UsageError(f"{where}: {m.name} is a percentage and thresholds are fractions: write "
                         f"{value / 100:g} or {value:g}% ({value:g} would mean {value:.0%})")
    return value


def parse_objective(text: str) -> Objective:
    """``max net_savings s.t. recall >= 0.9 and cost <= 0.5`` (``min`` also accepted; ``90%`` as ``0.9``)."""
    m = re.fullmatch(r"\s*(max|min)\s+(\w+)\s*(?:(?:s\.t\.|subject to|where)\s+(.+))?", text)
    if not m:
        raise UsageError(f"objective {text!r}: expected 'max|min METRIC [s.t. METRIC >= V [and ...]]'")
    cons = []
    for part in filter(None, re.split(r"\s+and\s+|,", m.group(3) or "")):
        c = re.fullmatch(r"\s*(\w+)\s*(>=|<=|>|<)\s*([-+0-9.eE_]+%?)\s*", part)
        if not c:
            raise UsageError(f"objective constraint {part!r}: expected METRIC >= V or METRIC <= V")
        name = metric(c.group(1)).name
        cons.append((name, c.group(2), threshold(name, c.group(3), f"objective {text!r}")))
    return Objective(m.group(1) == "max", metric(m.group(2)).name, tuple(cons))


OPS = {">=": float.__ge__, "<=": float.__le__, ">": float.__gt__, "<": float.__lt__}
SIGNS = {">=": "≥", "<=": "≤", ">": ">", "<": "<"}


def satisfies(ms: Mapping[str, Estimate], obj: Objective) -> bool:
    return all(not math.isnan(ms[k].value) and OPS[op](ms[k].value, v) for k, op, v in obj.constraints)


def meets(ms: Mapping[str, Estimate], obj: Objective) -> bool:
    """Meets the bars and has the objective's figure (a strategy that never acted has no recall to maximize)."""
    return satisfies(ms, obj) and not math.isnan(ms[obj.metric].value)


def unmeasured(ms: Mapping[str, Estimate], obj: Objective) -> bool:
    """Has the objective's figure but a bar's figure is not defined on these transcripts (needed-fact recall
    where no fact received was used again): neither meeting nor missing the bar."""
    return not math.isnan(ms[obj.metric].value) and any(math.isnan(ms[k].value) for k, _, _ in obj.constraints)


def below_bar(ms: Mapping[str, Estimate], obj: Objective) -> bool:
    """Misses a bar it has a figure for (the leaderboard's *below bar*): neither meeting the bars nor
    :func:`unmeasured`."""
    return not meets(ms, obj) and not unmeasured(ms, obj)


def bar_unmeasurable(agg: Mapping[str, Mapping[str, Estimate]], labels: Sequence[str], obj: Objective) -> bool:
    """No strategy of ``labels`` has a figure for any of ``obj``'s bars on these transcripts (no fact received
    was used again in them): the bars can neither be met nor missed there, and the metric alone decides."""
    return bool(obj.constraints) and all(math.isnan(agg[s][k].value) for s in labels for k, _, _ in obj.constraints)


def ranked(agg: Mapping[str, Mapping[str, Estimate]], standing: Mapping[str, Standing], obj: Objective,
           labels: Sequence[str] | None = None) -> list[str]:
    """Every label (or ``labels``) in the one order: tier, those meeting ``obj``'s bars first, its metric."""
    return order(list(agg) if labels is None else labels, standing, lambda s: agg[s][obj.metric].value,
                 obj.maximize, lambda s: meets(agg[s], obj))


def bars(obj: Objective) -> str:
    """The objective's bars in words: ``needed-fact recall ≥ 90%``."""
    out = []
    for k, op, v in obj.constraints:
        m = metric(k)
        out.append(f"{m.title} {SIGNS[op]} {v:.0%}" if m.percent else f"{m.title} {SIGNS[op]} {v:g}")
    return " and ".join(out)


def words(obj: Objective) -> str:
    """``max net_savings s.t. needed_recall >= 0.9`` as "highest net savings with needed-fact recall ≥ 90%"."""
    head = ("highest " if obj.maximize else "lowest ") + metric(obj.metric).title
    return head + (" with " + bars(obj) if obj.constraints else "")


def rule(obj: Objective) -> str:
    """The ranking rule for ``obj``, in words (every table that follows it prints this)."""
    title = metric(obj.metric).title
    return BAR_RULE.format(bar=bars(obj), metric=title) if obj.constraints else RULE.format(metric=title)


def edge(ms: Mapping[str, Estimate], obj: Objective) -> str:
    """Where a strategy's 95% interval crosses one of ``obj``'s bars, in words ('' when none does): a pick on
    the edge of a bar may not meet it on other transcripts."""
    out = []
    for k, op, v in obj.constraints:
        e, m = ms[k], metric(k)
        crosses = e.lo < v <= e.hi if op in (">=", ">") else e.lo <= v < e.hi
        if math.isnan(e.lo) or math.isnan(e.hi) or not crosses:
            continue
        lo, hi = (f"{e.lo:.1%}", f"{e.hi:.1%}") if m.percent else (f"{e.lo:,.3f}", f"{e.hi:,.3f}")
        bar = f"{v:.0%}" if m.percent else f"{v:g}"
        out.append(f"its {m.title} interval [{lo}, {hi}] straddles the {bar} bar")
    if not out:
        return ""
    return "on the edge: " + "; ".join(out) + " (it may miss the bar on other transcripts)"


def decisive(value: float, threshold: float, percent: bool) -> str:
    """``value`` with enough digits that the printed figure falls on the same side of ``threshold`` as the
    value itself: 0.8998 against 0.9 prints 89.98%, never 90.0% beside a constraint it fails."""
    for digits in range(1, 8):
        text = f"{value:.{digits}%}" if percent else f"{value:,.{digits + 2}f}"
        shown = float(text.rstrip("%").replace(",", "")) / (100 if percent else 1)
        if (shown < threshold) == (value < threshold) and (shown > threshold) == (value > threshold):
            return text
    return f"{value!r}"
