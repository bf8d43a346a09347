"""``compbench.decide.gate`` — Retention gates for CI: thresholds on a run's confidence bounds, exit 0 (pass) or 1
(fail).

A ``--min`` threshold holds when the metric's *lower* 95% bound reaches it (a ``--max`` when the
upper bound stays under it), so a gate does not flap with the noise of a point estimate. A
``--max-drop`` against a baseline run holds when the lower bound of the paired difference
(this run − baseline) is above −drop. Thresholds come from flags, else from ``[tool.compbench.gate]``
in ``pyproject.toml`` or ``[gate]`` in ``compbench.toml`` (flags win, key by key).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compbench.decide.compare import counterpart, estimate, load_results, paired
from compbench.decide.metrics import metric
from compbench.errors import UsageError


@dataclass(frozen=True)
class Check:
    strategy: str
    kind: str  # min | max | max-drop
    metric: str
    threshold: float
    value: float
    bound: float
    passed: bool  # True also when the figure has no value (see ``missing``): nothing failed
    missing: str = ""  # why the figure has no value (a strategy that never acted has no recall); "" when it has

    @property
    def status(self) -> str:
        return "SKIP" if self.missing else "PASS" if self.passed else "FAIL"

    def line(self) -> str:
        """One line, in the units of ``compare``'s tables (percentages, percentage points for a drop), with
        enough digits that the figure printed is on the side of the threshold that decided, saying which way
        it went: a FAIL line never reads as if its condition held."""
        from compbench.decide.compare import signed
        from compbench.decide.metrics import REGISTRY
        from compbench.decide.tune import decisive

        m = REGISTRY.get(self.metric) if self.metric in REGISTRY else None
        percent = m is not None and m.percent
        head = f"{self.status} {self.strategy}: {self.metric}"
        if self.missing:
            return f"{head} has no value: {self.missing} (not a failure)"
        if self.kind == "overflow":  # calls over the window: a count, no interval (a real API refuses each one)
            calls, transcripts = int(self.value), int(self.bound)
            if self.passed:
                return f"{self.status} {self.strategy}: no call over the window"
            return (f"{self.status} {self.strategy}: {calls:,} call{'s' * (calls != 1)} over the window on "
                    f"{transcripts:,} transcript{'s' * (transcripts != 1)} (a real API refuses them; "
                    "--fail-on-overflow allows none)")
        if self.kind == "max-drop":
            scale, unit = (100, " pp") if percent else (1, "")
            digits = 2 if percent else 4
            bound = f"{signed(self.bound * scale, digits)}{unit}"
            limit = f"-{self.threshold * scale:g}{unit}"
            held = f"stays at or above {limit}" if self.passed else f"falls below {limit}: more than the allowed drop"
            return (f"{head} change vs baseline {signed(self.value * scale, digits)}{unit}; its lower 95% bound "
                    f"{bound} {held}")
        side = "lower" if self.kind == "min" else "upper"
        thr = f"{self.threshold * 100:g}%" if percent else f"{self.threshold:g}"
        if self.passed:
            held = f"≥ the minimum {thr}" if self.kind == "min" else f"≤ the maximum {thr}"
        else:
            held = f"is below the minimum {thr}" if self.kind == "min" else f"is above the maximum {thr}"
        return (f"{head} = {decisive(self.value, self.threshold, percent)}, {side} 95% bound "
                f"{decisive(self.bound, self.threshold, percent)} {held}")


def parse_thresholds(items: tuple[str, ...] | list[str], flag: str) -> dict[str, float]:
    """``METRIC=V`` items as fractions: ``needed_recall=0.9`` or ``needed_recall=90%`` (a bare ``90`` for a
    percentage is refused: it would mean 9000%)."""
    from compbench.decide.objective import threshold

    out: dict[str, float] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq:
            raise UsageError(f"{flag} expects METRIC=VALUE, got {item!r}")
        name = metric(key.strip()).name  # an alias (recall) is stored under the one vocabulary (needed_recall)
        out[name] = threshold(name, value, f"{flag} {item!r}")
    return out


def config_file(start: Path) -> dict[str, Any]:
    """The gate table of the configuration (:mod:`compbench.config`): ``[gate]`` in ``compbench.toml`` or
    ``[tool.compbench.gate]`` in ``pyproject.toml``, the nearest at or above ``start``."""
    from compbench.config import find

    return find(start).section("gate")


def merge_thresholds(flags: Mapping[str, float], conf: Any, key: str) -> dict[str, float]:
    """The thresholds of one kind (``min``, ``max``, ``max-drop``): the file's, with the flags' over them."""
    table = conf.get(key, {}) if isinstance(conf, dict) else {}
    if not isinstance(table, dict):
        raise UsageError(f"gate config: '{key}' must be a table of METRIC = number")
    from compbench.decide.objective import threshold

    merged = {metric(k).name: threshold(metric(k).name, str(v), f"gate config '{key}.{k}'") for k, v in table.items()}
    merged.update(flags)
    return merged


def gated(df: Any, strategies: tuple[str, ...] = ()) -> list[str]:
    """The labels a gate checks: those named (a name or a label), else every strategy but the reference
    ``none`` (it never acts: its thresholds would test the dataset, not a strategy)."""
    labels = [str(s) for s in dict.fromkeys(df["strategy"])]
    return [s for s in labels if s in strategies or s.split(":")[0] in strategies] if strategies else [
        s for s in labels if s != "none"]


def notes(df: Any, chosen: list[str], strategies: tuple[str, ...], fail_on_overflow: bool) -> list[str]:
    """What a gate says besides its checks: each gated strategy with calls over the window (the thresholds may
    pass on calls a real API would refuse), and that ``none`` is left out when it is."""
    out = []
    if not fail_on_overflow:
        for s in chosen:
            calls, transcripts = overflows(df, s)
            if calls:
                out.append(f"warning: {s} has {calls:,} call{'s' * (calls != 1)} over the window on {transcripts:,} "
                           f"transcript{'s' * (transcripts != 1)}: a real API refuses them, and its figures count "
                           "them as answered (--fail-on-overflow fails the gate on them)")
    labels = set(str(x) for x in df["strategy"])
    if "none" in labels and "none" not in chosen and not strategies:
        out.append("note: none, the reference every saving is measured against, is not gated (name it with "
                   "--strategy none to gate it)")
    return out


def overflows(df: Any, label: str) -> tuple[int, int]:
    """Calls over the window of ``label`` in all, and the transcripts that have any."""
    g = df[df["strategy"] == label]
    return int(g["overflows"].sum()), int((g["overflows"] > 0).sum())


def run_gate(run: str | Path, mins: Mapping[str, float], maxs: Mapping[str, float],
             baseline: str | Path | None = None, drops: Mapping[str, float] | None = None,
             strategies: tuple[str, ...] = (), resamples: int = 10_000, fail_on_overflow: bool = False,
             said: list[str] | None = None) -> list[Check]:
    """The checks of every gated strategy (:func:`gated`); with ``fail_on_overflow`` also that it made no call
    over the window. ``said`` receives the warnings and notes (:func:`notes`)."""
    df = load_results(run)
    labels = [str(s) for s in dict.fromkeys(df["strategy"])]
    chosen = gated(df, strategies)
    if not chosen:
        raise UsageError(f"no strategy of {run} matches {', '.join(strategies) or 'a non-reference strategy'} "
                         f"(run has: {', '.join(labels)})")
    if not (mins or maxs or drops or fail_on_overflow):
        raise UsageError("no thresholds: give --min/--max/--max-drop, --fail-on-overflow or a "
                         "[tool.compbench.gate] table")
    if said is not None:
        said += notes(df, chosen, strategies, fail_on_overflow)
    base = load_results(baseline) if baseline is not None else None
    if drops and base is None:
        raise UsageError("--max-drop needs --baseline RUN")
    checks: list[Check] = []
    for s in chosen:
        sub = df[df["strategy"] == s]
        if fail_on_overflow:
            calls, transcripts = overflows(df, s)
            checks.append(Check(s, "overflow", "overflows", 0, calls, transcripts, calls == 0))
        for kind, table in (("min", mins), ("max", maxs)):
            for name, thr in table.items():
                e = estimate(sub, metric(name), resamples)
                bound = e.lo if kind == "min" else e.hi
                if math.isnan(e.value):
                    checks.append(Check(s, kind, name, thr, e.value, bound, True, _missing(sub, name)))
                    continue
                held = not math.isnan(bound) and (bound >= thr if kind == "min" else bound <= thr)
                checks.append(Check(s, kind, name, thr, e.value, bound, held))
        for name, drop in (drops or {}).items():
            assert base is not None
            other = counterpart(base, s)
            if other.empty:
                raise UsageError(f"baseline {baseline} has no strategy {s!r}")
            m = metric(name)
            e = paired(sub, other, m, resamples)
            if math.isnan(e.value):
                checks.append(Check(s, "max-drop", name, drop, e.value, e.lo, True,
                                    _missing(sub, name) + " (or in the baseline)"))
                continue
            worse_bound = e.lo if m.higher_is_better else -e.hi
            value = e.value if m.higher_is_better else -e.value
            checks.append(Check(s, "max-drop", name, drop, value, worse_bound,
                                not math.isnan(worse_bound) and worse_bound >= -drop))
    return checks


def _missing(rows: Any, name: str) -> str:
    """Why a strategy's figure has no value, in words."""
    n = len(rows)
    acted = int((rows["first_action_step"] >= 0).sum()) if "first_action_step" in rows else n
    if not acted:
        return f"it never acted on any of its {n:,} transcripts, so nothing it did can be scored"
    return f"no transcript gives it one (it acted on {acted:,} of {n:,}; none had a {metric(name).title} to measure)"
