"""``compbench.decide.gate`` — Retention gates for CI: thresholds on a run's confidence bounds, exit 0 (pass) or 1
(fail).

A ``--min`` threshold holds when the metric's *lower* 95% bound reaches it (a ``--max`` when the
upper bound stays under it), so a gate does not flap with the noise of a point estimate. A
``--max-drop`` against a baseline run holds when the lower bound of the paired difference
(this run − baseline) is above −drop. Thresholds come from flags, else from ``[tool.compbench.decide.gate]``
in ``pyproject.toml`` or ``[gate]`` in ``compbench.toml`` (flags win, key by key).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compbench.decide.compare import counterpart, estimate, load_results, metric, paired
from compbench.errors import UsageError


@dataclass(frozen=True)
class Check:
    strategy: str
    kind: str  # min | max | max-drop
    metric: str
    threshold: float
    value: float
    bound: float
    passed: bool

    def line(self) -> str:
        """One line, in the units of ``compare``'s tables: percentages (and percentage points for a drop),
        with enough digits that the figure printed is on the side of the threshold that decided."""
        from compbench.decide.compare import REGISTRY, signed
        from compbench.decide.tune import decisive

        status = "PASS" if self.passed else "FAIL"
        m = REGISTRY.get(self.metric) if self.metric in REGISTRY else None
        percent = m is not None and m.percent
        if self.kind == "max-drop":
            scale, unit = (100, " pp") if percent else (1, "")
            digits = 2 if percent else 4
            return (f"{status} {self.strategy}: {self.metric} change vs baseline {signed(self.value * scale, digits)}"
                    f"{unit} (lower bound {signed(self.bound * scale, digits)}{unit}) must stay above "
                    f"-{self.threshold * scale:g}{unit}")
        side = "lower" if self.kind == "min" else "upper"
        op = ">=" if self.kind == "min" else "<="
        thr = f"{self.threshold:.4g}".rstrip("0").rstrip(".") if not percent else f"{self.threshold * 100:g}%"
        return (f"{status} {self.strategy}: {self.metric} = {decisive(self.value, self.threshold, percent)} "
                f"({side} 95% bound {decisive(self.bound, self.threshold, percent)}) {op} {thr}")


def parse_thresholds(items: tuple[str, ...] | list[str], flag: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq:
            raise UsageError(f"{flag} expects METRIC=VALUE, got {item!r}")
        name = metric(key.strip()).name  # an alias (recall) is stored under the one vocabulary (needed_recall)
        try:
            out[name] = float(value)
        except ValueError:
            raise UsageError(f"{flag} {item!r}: {value!r} is not a number") from None
    return out


def config_file(start: Path) -> dict[str, Any]:
    """The gate table of the configuration (:mod:`compbench.config`): ``[gate]`` in ``compbench.toml`` or
    ``[tool.compbench.decide.gate]`` in ``pyproject.toml``, the nearest at or above ``start``."""
    from compbench.config import find

    return find(start).section("gate")


def merge_thresholds(flags: Mapping[str, float], conf: Any, key: str) -> dict[str, float]:
    """The thresholds of one kind (``min``, ``max``, ``max-drop``): the file's, with the flags' over them."""
    table = conf.get(key, {}) if isinstance(conf, dict) else {}
    if not isinstance(table, dict):
        raise UsageError(f"gate config: '{key}' must be a table of METRIC = number")
    merged = {metric(k).name: float(v) for k, v in table.items()}
    merged.update(flags)
    return merged


def run_gate(run: str | Path, mins: Mapping[str, float], maxs: Mapping[str, float],
             baseline: str | Path | None = None, drops: Mapping[str, float] | None = None,
             strategies: tuple[str, ...] = (), resamples: int = 10_000) -> list[Check]:
    df = load_results(run)
    labels = [str(s) for s in dict.fromkeys(df["strategy"])]
    chosen = [s for s in labels if s in strategies or s.split(":")[0] in strategies] if strategies else [
        s for s in labels if s != "none"]
    if not chosen:
        raise UsageError(f"no strategy of {run} matches {', '.join(strategies) or 'a non-reference strategy'} "
                         f"(run has: {', '.join(labels)})")
    if not (mins or maxs or drops):
        raise UsageError("no thresholds: give --min/--max/--max-drop or a [tool.compbench.decide.gate] table")
    base = load_results(baseline) if baseline is not None else None
    if drops and base is None:
        raise UsageError("--max-drop needs --baseline RUN")
    checks: list[Check] = []
    for s in chosen:
        sub = df[df["strategy"] == s]
        for name, thr in mins.items():
            e = estimate(sub, metric(name), resamples)
            checks.append(Check(s, "min", name, thr, e.value, e.lo, not math.isnan(e.lo) and e.lo >= thr))
        for name, thr in maxs.items():
            e = estimate(sub, metric(name), resamples)
            checks.append(Check(s, "max", name, thr, e.value, e.hi, not math.isnan(e.hi) and e.hi <= thr))
        for name, drop in (drops or {}).items():
            assert base is not None
            other = counterpart(base, s)
            if other.empty:
                raise UsageError(f"baseline {baseline} has no strategy {s!r}")
            m = metric(name)
            e = paired(sub, other, m, resamples)
            worse_bound = e.lo if m.higher_is_better else -e.hi
            value = e.value if m.higher_is_better else -e.value
            checks.append(Check(s, "max-drop", name, drop, value, worse_bound,
                                not math.isnan(worse_bound) and worse_bound >= -drop))
    return checks
