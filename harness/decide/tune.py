"""``compbench.decide.tune`` — Parameter sweeps: grid or seeded random configurations, their Pareto frontier, and an
objective.

All configurations replay inside one run, transcript by transcript, so each transcript is tokenized
once and every configuration reuses its cached counts (see :mod:`compbench.run.engine`).
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from compbench.decide.objective import OPS as OPS
from compbench.decide.objective import Objective as Objective
from compbench.decide.objective import decisive as decisive
from compbench.decide.objective import meets, ranked
from compbench.decide.objective import parse_objective as parse_objective  # re-exported: tune's objectives
from compbench.decide.objective import satisfies as satisfies
from compbench.decide.ranking import Standing
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


def choose(agg: Mapping[str, Mapping[str, Estimate]], obj: Objective,
           standing: Mapping[str, Standing] | None = None) -> str | None:
    """The configuration that best meets ``obj`` by the ranking rule (:func:`compbench.decide.objective.ranked`):
    the first in the one order that meets it."""
    return next((s for s in ranked(agg, standing or {}, obj) if meets(agg[s], obj)), None)


def changed(spec: str, default: str) -> dict[str, str]:
    """The parameters ``spec`` sets beside ``default`` (what a tune changed), as written in its label."""
    def items(label: str) -> dict[str, str]:
        return dict(x.partition("=")[::2] for x in label.partition(":")[2].split(",") if "=" in x)

    base = items(default)
    return {k: v for k, v in items(spec).items() if base.get(k) != v and k != "preset"}


def tool_lines(spec: str, default: str) -> tuple[str, list[tuple[str, str, str]], list[str]]:
    """What a user of the strategy's tool writes to get ``spec`` from ``default``: the tool's name, each changed
    parameter that is one of its settings as (its name, where it goes, the exact line:
    :meth:`compbench.sdk.tools.Setting.paste`), and the changed parameters the tool has no setting for (only
    compbench's configuration reaches them). No tool: ``("", [], [])``."""
    from compbench.strategies import resolve

    c = resolve(spec)
    tool = c.info.tool
    if tool is None:
        return "", [], []
    lines: list[tuple[str, str, str]] = []
    others: list[str] = []
    for key, raw in changed(spec, default).items():
        setting = tool.setting(key)
        if setting is None:
            others.append(key)
            continue
        lines.append((setting.name, setting.where, setting.paste(getattr(c.params, key, raw))))
    return tool.name, lines, others


def toml_snippet(spec: str) -> str:
    """The ``[tool.compbench.strategy.NAME]`` block that makes ``--strategy NAME`` mean ``spec``
    (:func:`compbench.config.strategy_block`: the configuration loader reads it back)."""
    from compbench.config import strategy_block

    return strategy_block(spec)
