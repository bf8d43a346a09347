"""``compbench.decide.tune`` — Parameter sweeps: grid or seeded random configurations, their Pareto frontier, and an
objective.

All configurations replay inside one run, transcript by transcript, so each transcript is tokenized
once and every configuration reuses its cached counts (see :mod:`compbench.replay.runs`).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import re
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compbench.decide.compare import metric
from compbench.decide.ranking import Standing, order
from compbench.decide.ranking import pareto as pareto  # re-exported: tune's frontier
from compbench.decide.stats import Estimate
from compbench.errors import UsageError
from compbench.sdk.registry import label, parse_value
from compbench.strategies import get


def _field(strategy: str, key: str) -> tuple[str, str, Any]:
    """(owning strategy, parameter, type) of a swept key. A pipeline's stage parameter is ``STAGE.PARAM``
    and belongs to that stage's strategy."""
    owner, name = strategy, key
    if strategy == "pipeline" and "." in key:
        owner, _, name = key.partition(".")
    info = get(owner)
    fields = {f.name for f in dataclasses.fields(info.params)}
    if name not in fields:
        raise UsageError(f"strategy {owner!r} has no parameter {name!r} (known: {', '.join(sorted(fields))})")
    return owner, name, typing.get_type_hints(info.params)[name]


def _values(strategy: str, key: str, raw: str) -> list[str]:
    """The values of one swept parameter, each checked against its type."""
    owner, name, hint = _field(strategy, key)
    vals = [v.strip() for v in raw.split(",") if v.strip()]
    if not vals:
        raise UsageError(f"--grid {key}= needs at least one value")
    for v in vals:
        parse_value(owner, name, v, hint)
    return vals


def grid_specs(strategy: str, grids: Sequence[str], fixed: str = "") -> list[str]:
    """Every combination of ``--grid k=v1,v2`` values as a strategy spec string."""
    axes: dict[str, list[str]] = {}
    for g in grids:
        key, eq, raw = g.partition("=")
        if not eq:
            raise UsageError(f"--grid expects NAME=V1,V2,..., got {g!r}")
        if key.strip() in axes:  # the last would silently win: say so instead
            raise UsageError(f"--grid {key.strip()} is given twice; give all its values once: "
                             f"--grid {key.strip()}=V1,V2,...")
        axes[key.strip()] = _values(strategy, key.strip(), raw)
    preset, base = _fixed(fixed)
    combos = itertools.product(*axes.values()) if axes else [()]
    return [label(strategy, preset, {**base, **dict(zip(axes, c, strict=True))}) for c in combos]


def _fixed(fixed: str) -> tuple[str, dict[str, str]]:
    """The preset and fixed overrides every swept configuration shares (``--set k=v,...``)."""
    items = dict(item.strip().split("=", 1) for item in fixed.split(",") if "=" in item)
    return items.pop("preset", ""), items


def random_specs(strategy: str, n: int, ranges: Sequence[str], seed: int, fixed: str = "") -> list[str]:
    """``n`` configurations drawn uniformly from ``--range k=lo:hi`` (ints stay ints), seeded."""
    rng = random.Random(seed)
    bounds: dict[str, tuple[float, float, bool]] = {}
    for r in ranges:
        key, eq, raw = r.partition("=")
        lo, colon, hi = raw.partition(":")
        if not eq or not colon:
            raise UsageError(f"--range expects NAME=LO:HI, got {r!r}")
        _values(strategy, key, lo)
        is_int = _field(strategy, key)[2] is int
        bounds[key] = (float(lo), float(hi), is_int)
    if not bounds:
        raise UsageError("--random needs at least one --range NAME=LO:HI")
    preset, base = _fixed(fixed)
    out = []
    for _ in range(n):
        vals = {k: str(rng.randint(int(lo), int(hi))) if is_int else f"{rng.uniform(lo, hi):.4g}"
                for k, (lo, hi, is_int) in bounds.items()}
        out.append(label(strategy, preset, {**base, **vals}))
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class Objective:
    maximize: bool
    metric: str
    constraints: tuple[tuple[str, str, float], ...]


def parse_objective(text: str) -> Objective:
    """``max net_savings s.t. recall >= 0.9 and cost <= 0.5`` (``min`` also accepted)."""
    m = re.fullmatch(r"\s*(max|min)\s+(\w+)\s*(?:(?:s\.t\.|subject to|where)\s+(.+))?", text)
    if not m:
        raise UsageError(f"objective {text!r}: expected 'max|min METRIC [s.t. METRIC >= V [and ...]]'")
    cons = []
    for part in filter(None, re.split(r"\s+and\s+|,", m.group(3) or "")):
        c = re.fullmatch(r"\s*(\w+)\s*(>=|<=|>|<)\s*([-+0-9.eE]+)\s*", part)
        if not c:
            raise UsageError(f"objective constraint {part!r}: expected METRIC >= V or METRIC <= V")
        cons.append((metric(c.group(1)).name, c.group(2), float(c.group(3))))
    return Objective(m.group(1) == "max", metric(m.group(2)).name, tuple(cons))


OPS = {">=": float.__ge__, "<=": float.__le__, ">": float.__gt__, "<": float.__lt__}


def satisfies(ms: Mapping[str, Estimate], obj: Objective) -> bool:
    return all(not math.isnan(ms[k].value) and OPS[op](ms[k].value, v) for k, op, v in obj.constraints)


def choose(agg: Mapping[str, Mapping[str, Estimate]], obj: Objective,
           standing: Mapping[str, Standing] | None = None) -> str | None:
    """The configuration that best meets ``obj`` by the ranking rule (:mod:`compbench.decide.ranking`): a sound
    one before a degenerate one before one with calls over the window, then the objective's metric."""
    ok = [s for s, ms in agg.items() if satisfies(ms, obj) and not math.isnan(ms[obj.metric].value)]
    if not ok:
        return None
    return order(ok, standing or {}, lambda s: agg[s][obj.metric].value, obj.maximize)[0]


def decisive(value: float, threshold: float, percent: bool) -> str:
    """``value`` with enough digits that the printed figure falls on the same side of ``threshold`` as the
    value itself: 0.8998 against 0.9 prints 89.98%, never 90.0% beside a constraint it fails."""
    for digits in range(1, 8):
        text = f"{value:.{digits}%}" if percent else f"{value:,.{digits + 2}f}"
        shown = float(text.rstrip("%").replace(",", "")) / (100 if percent else 1)
        if (shown < threshold) == (value < threshold) and (shown > threshold) == (value > threshold):
            return text
    return f"{value!r}"


def toml_snippet(spec: str) -> str:
    """The ``[tool.compbench.strategy.NAME]`` block that makes ``--strategy NAME`` mean ``spec``
    (:func:`compbench.config.strategy_block`: the configuration loader reads it back)."""
    from compbench.config import strategy_block

    return strategy_block(spec)
