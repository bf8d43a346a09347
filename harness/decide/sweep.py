"""``compbench.decide.sweep`` — Where a run's settings sweep must go on: a setting whose best value tried is at the edge
of the values tried, and the tool accepts values beyond it.

A best value at the edge of a grid says only that the best lies there *or beyond*: advising it would be advising a
bound. So a run widens the sweep (:func:`compbench.run.write.write_run`'s ``widen``): after its replays it asks
:func:`next_configurations` which values to add, replays them on their tool's logs only, and asks again, until
every best value is between values tried, at the tool's own limit (``Setting.accepted``), or a few rounds have
passed. Each step continues the grid's own spacing beyond its edge, within what the tool accepts; where the next
step would reach a bound the tool gives no meaning as a threshold (0, or the value that leaves it unset), the steps
halve their way towards it.
"""

from __future__ import annotations

import math
from typing import Any

from compbench.sdk.registry import get, own_strategy, resolve

ROUNDS = 3  # widening rounds a run makes at most


def _step(values: list[float], edge: float, low: bool) -> float:
    """The grid's spacing next to ``edge`` (the gap to its neighbour), at least 1% of the edge's size."""
    others = sorted(v for v in values if v != edge)
    if not others:
        return abs(edge) / 2 or 1.0
    gap = abs(edge - (others[0] if low else others[-1]))
    return max(gap, abs(edge) * 0.01, 1e-9)


def beyond(setting: Any, best: float, values: list[float], steps: int = 2) -> list[float]:
    """The next values past ``best`` at the edge of ``values`` (``steps`` of the grid's spacing), within what the
    tool accepts; none when ``best`` is not at an edge or already at the tool's limit. Two at a time: a round
    costs a replay of the reference on every log of the tool, whatever it adds."""
    lo, hi = min(values), max(values)
    if len(set(values)) < 2 or lo < best < hi:
        return []
    low = best <= lo
    step = _step(values, best, low)
    limit = setting.limits()
    unset = setting.accepts.unset if setting.accepts is not None else None
    # the bound a step may not pass: the tool's limit (and 0 for a positive setting), usable unless it is the
    # value that leaves the setting unset (Codex's 0): then the steps halve their way towards it instead
    bound = (limit[0] if low else limit[1]) if limit is not None else (-math.inf if low else math.inf)
    if low and best > 0:
        bound = max(bound, 0.0)
    usable = not (unset is not None and math.isclose(bound, unset)) and not (low and bound == 0 < best)
    out: list[float] = []
    prev = best
    for _ in range(steps):
        nxt = prev - step if low else prev + step
        past = nxt < bound or (math.isclose(nxt, bound) and not usable) if low else \
            nxt > bound or (math.isclose(nxt, bound) and not usable)
        if past:
            nxt = bound if usable else (prev + bound) / 2
        if math.isclose(nxt, prev) or any(math.isclose(nxt, x) for x in (*out, *values)):
            break
        out.append(nxt)
        prev = nxt
    return out


def _as_param(raw: Any, value: float) -> Any:
    """``value`` in the parameter's own type (an int parameter stays an int)."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        return round(value)
    return round(value, 4)


def next_configurations(results: Any) -> list[str]:
    """The configurations to add to a run whose results are ``results``: for each tool's logs and each swept
    setting of its own strategy whose best value tried is at the edge, the value past it (``NAME:param=value``,
    as labels)."""
    from compbench.decide.advice import numeric
    from compbench.decide.flags import flag_details
    from compbench.decide.ranking import standings
    from compbench.sdk.tools import plain

    out: list[str] = []
    from compbench.decide.toolverdict import tried
    from compbench.errors import UsageError

    for source, rows in results.groupby("source", sort=True):
        own = own_strategy(str(source))
        if own is None or not (rows["strategy"] == own).any():
            continue
        tool = get(own).tool
        if tool is None:
            continue
        standing = standings(rows, flag_details(rows))
        for setting in tool.settings:
            if not setting.sweep:
                continue
            t = tried(rows, own, setting, standing)
            if t.best is None or t.best == own:  # the tool's default is best: nothing to advise, nothing to widen
                continue
            nums = [x for x in (numeric(v) for v in t.values.values()) if x is not None]
            best = numeric(t.values[t.best])
            if best is None or len(nums) < 2:
                continue
            for nxt in beyond(setting, best, nums):
                try:  # an int parameter's value rounded past its own bound (SWE-agent's n halved to 0)
                    label = resolve(f"{own}:{setting.param}={plain(_as_param(setting.sweep[0], nxt))}").label
                except UsageError:
                    continue
                if label not in t.labels and label not in out:
                    out.append(label)
    return out
