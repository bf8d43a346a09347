"""``compbench.decide.gate`` — Retention gates for CI: thresholds on a run's confidence bounds, exit 0 (pass) or 1
(fail).

A ``--min`` threshold holds when the metric's *lower* 95% bound reaches it (a ``--max`` when the
upper bound stays under it), so a gate does not flap with the noise of a point estimate. A
``--max-drop`` against a baseline run holds when the lower bound of the paired difference
(this run − baseline) is above −drop. Thresholds come from flags, else from ``[tool.compbench.gate]``
in ``pyproject.toml`` or ``[gate]`` in ``compbench.toml`` (flags win, key by key).

What is gated: the run's strategies over every transcript, or those ``--source`` / ``--where`` select
(:mod:`compbench.data.select`). Left out unless named: ``none`` (the reference), ``recorded`` (each tool as it
ran: the baseline a user compares with, not a strategy to ship) and the settings sweep's rows (each replayed on
its own tool's logs only, so its figures rest on another denominator); the gate says so in one line.

Evidence: a figure resting on fewer than ``--min-transcripts`` (default 5) transcripts — the units its
interval resamples, a sub-agent with its parent's session, the ``n`` of compare's ``(n=3, few)`` — FAILS a
threshold it meets, saying "few", unless ``--allow-few``, which passes it marked "few". On one or two
transcripts a 95% bound is the point estimate itself, so a pass there would be the noise the bounds exist to
keep out; a CI gate that goes green on no evidence is worse than one that asks for more. A threshold missed
is a FAIL whatever the count; a count of calls over the window (``--fail-on-overflow``) is a fact, not an
estimate, and is never "few".
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
from compbench.sdk.kinds import RECORDED, REFERENCE, SWEEP, SWEPT

MIN_TRANSCRIPTS = 5  # as compare's "few" (compbench.decide.stats.MIN_UNITS): the default --min-transcripts


@dataclass(frozen=True)
class Check:
    strategy: str
    kind: str  # min | max | max-drop | overflow
    metric: str
    threshold: float
    value: float
    bound: float
    held: bool  # the threshold's own outcome; True also when the figure has no value (see ``missing``)
    missing: str = ""  # why the figure has no value (a strategy that never acted has no recall); "" when it has
    n: int = 0  # the transcripts (sessions) the figure rests on; 0 for a count of calls, which is never "few"
    minimum: int = 0  # --min-transcripts the figure is held to (0: none)
    allow_few: bool = False  # --allow-few: a figure on too few transcripts passes, marked "few"

    @property
    def few(self) -> bool:
        """The figure rests on fewer transcripts than the minimum (never said of a figure without a value)."""
        return not self.missing and self.minimum > 0 and self.n < self.minimum

    @property
    def passed(self) -> bool:
        """Its threshold held, on enough transcripts or with ``--allow-few``; a figure without a value fails
        nothing."""
        return self.held and (not self.few or self.allow_few)

    @property
    def status(self) -> str:
        return "SKIP" if self.missing else "PASS" if self.passed else "FAIL"

    def few_text(self) -> str:
        """What "few" means for this check, in words ("" when it is not few)."""
        if not self.few:
            return ""
        on = f"n={self.n:,} transcript{'s' * (self.n != 1)}, under --min-transcripts {self.minimum}"
        if not self.held:
            return f" (few: {on})"
        if self.allow_few:
            return f" (few: {on}; passed by --allow-few)"
        return f"; but few: {on}, so not passed (--allow-few passes it, marked few)"

    def line(self) -> str:
        """One line, in the units of ``compare``'s tables (percentages, percentage points for a drop), with
        enough digits that the figure printed is on the side of the threshold that decided, saying which way
        it went: a FAIL line never reads as if its condition held; "few" where the figure rests on too few
        transcripts."""
        return self._line() + self.few_text()

    def _line(self) -> str:
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
            if self.held:
                return f"{self.status} {self.strategy}: no call over the window"
            return (f"{self.status} {self.strategy}: {calls:,} call{'s' * (calls != 1)} over the window on "
                    f"{transcripts:,} transcript{'s' * (transcripts != 1)} (a real API refuses them; "
                    "--fail-on-overflow allows none)")
        if self.kind == "max-drop":
            scale, unit = (100, " pp") if percent else (1, "")
            digits = 2 if percent else 4
            bound = f"{signed(self.bound * scale, digits)}{unit}"
            limit = f"-{self.threshold * scale:g}{unit}"
            held = f"stays at or above {limit}" if self.held else f"falls below {limit}: more than the allowed drop"
            return (f"{head} change vs baseline {signed(self.value * scale, digits)}{unit}; its lower 95% bound "
                    f"{bound} {held}")
        side = "lower" if self.kind == "min" else "upper"
        thr = f"{self.threshold * 100:g}%" if percent else f"{self.threshold:g}"
        if self.held:
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


# the keys of the gate table: a misspelt one is an error, never ignored (flags of the same name win over them)
KEYS = ("min", "max", "max-drop", "baseline", "strategies", "fail-on-overflow", "min-transcripts", "allow-few",
        "source", "where")


def config_file(start: Path) -> dict[str, Any]:
    """The gate table of the configuration (:mod:`compbench.config`): ``[gate]`` in ``compbench.toml`` or
    ``[tool.compbench.gate]`` in ``pyproject.toml``, the nearest at or above ``start``; its keys written with
    ``-`` (``_`` is read as ``-``), each one of :data:`KEYS`."""
    import difflib

    from compbench.config import find

    found = find(start)
    table = {str(k).replace("_", "-"): v for k, v in found.section("gate").items()}
    for key in table:
        if key not in KEYS:
            hint = difflib.get_close_matches(key, KEYS, n=1)
            raise UsageError(f"{found.source}: [gate] has no key {key!r}" + (f"; did you mean {hint[0]!r}?" if hint
                             else "") + f" (keys: {', '.join(KEYS)})")
    return table


def config_value(conf: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
    """A scalar of the gate table (``fail-on-overflow``, ``allow-few``: true or false; ``min-transcripts``: a
    whole number >= 1; ``where``: text), checked, else ``default``."""
    if key not in conf:
        return default
    value = conf[key]
    if kind is bool and not isinstance(value, bool):
        raise UsageError(f"gate config: '{key}' must be true or false, got {value!r}")
    if kind is int and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise UsageError(f"gate config: '{key}' must be a whole number of transcripts, at least 1, got {value!r}")
    if kind is str and not isinstance(value, str):
        raise UsageError(f"gate config: '{key}' must be text (a filter, as --where takes), got {value!r}")
    return value


def config_names(conf: Mapping[str, Any], key: str) -> tuple[str, ...]:
    """``strategies`` or ``source`` of the gate table: a name or a list of names."""
    value = conf.get(key, ())
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list | tuple) or not all(isinstance(x, str) for x in value):
        raise UsageError(f"gate config: '{key}' must be a name or a list of names, got {value!r}")
    return tuple(value)


def merge_thresholds(flags: Mapping[str, float], conf: Any, key: str) -> dict[str, float]:
    """The thresholds of one kind (``min``, ``max``, ``max-drop``): the file's, with the flags' over them."""
    table = conf.get(key, {}) if isinstance(conf, dict) else {}
    if not isinstance(table, dict):
        raise UsageError(f"gate config: '{key}' must be a table of METRIC = number")
    from compbench.decide.objective import threshold

    merged = {metric(k).name: threshold(metric(k).name, str(v), f"gate config '{key}.{k}'") for k, v in table.items()}
    merged.update(flags)
    return merged


def sweep_labels(df: Any) -> list[str]:
    """The settings sweep's configurations (results ``settings == "sweep"``): each replayed on its own tool's
    logs only (:func:`compbench.run.spec.with_settings`)."""
    return [str(s) for s in dict.fromkeys(df.loc[df[SWEPT] == SWEEP, "strategy"])]


def gated(df: Any, strategies: tuple[str, ...] = ()) -> list[str]:
    """The labels a gate checks: those named (a label, or a name: every configuration of it but its settings
    sweep's, which are named by label), else every strategy but the reference ``none`` (it never acts: its
    thresholds would test the dataset), ``recorded`` (each tool as it ran: the baseline, nothing to ship) and
    the settings sweep (figures over one tool's logs, beside the others' over every transcript)."""
    labels = [str(s) for s in dict.fromkeys(df["strategy"])]
    sweep = set(sweep_labels(df))
    if strategies:
        return [s for s in labels if s in strategies or (s.split(":")[0] in strategies and s not in sweep)]
    return [s for s in labels if s not in (REFERENCE, RECORDED) and s not in sweep]


def notes(df: Any, chosen: list[str], strategies: tuple[str, ...], fail_on_overflow: bool) -> list[str]:
    """What a gate says besides its checks: each gated strategy with calls over the window (the thresholds may
    pass on calls a real API would refuse), and, in one line, the rows it leaves out unless named."""
    out = []
    if not fail_on_overflow:
        for s in chosen:
            calls, transcripts = overflows(df, s)
            if calls:
                out.append(f"warning: {s} has {calls:,} call{'s' * (calls != 1)} over the window on {transcripts:,} "
                           f"transcript{'s' * (transcripts != 1)}: a real API refuses them, and its figures count "
                           "them as answered (--fail-on-overflow fails the gate on them)")
    left = left_out(df, chosen, strategies)
    if left:
        out.append(left)
    return out


def left_out(df: Any, chosen: list[str], strategies: tuple[str, ...]) -> str:
    """One line naming what the gate leaves out and why ("" when nothing is): ``none``, ``recorded`` and the
    settings sweep by default; with ``--strategy NAME``, the sweep's configurations of that name."""
    labels = [str(s) for s in dict.fromkeys(df["strategy"])]
    sweep = [s for s in sweep_labels(df) if s not in chosen and (not strategies or s.split(":")[0] in strategies)]
    parts = []
    if not strategies:
        if REFERENCE in labels and REFERENCE not in chosen:
            parts.append("none (the reference every saving is measured against)")
        if RECORDED in labels and RECORDED not in chosen:
            parts.append(f"{RECORDED} (each tool as it ran: the baseline you compare with, not a strategy)")
    if sweep:
        shown = ", ".join(sweep[:4]) + (f" and {len(sweep) - 4} more" if len(sweep) > 4 else "")
        parts.append(f"{len(sweep)} settings-sweep configuration{'s' * (len(sweep) != 1)} ({shown}: each replayed "
                     "on its own tool's logs only)")
    if not parts:
        return ""
    what = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    how = "--strategy (a label for a sweep's)" if sweep else "--strategy"
    return f"note: not gated: {what}; name one with {how} to gate it"


def overflows(df: Any, label: str) -> tuple[int, int]:
    """Calls over the window of ``label`` in all, and the transcripts that have any."""
    g = df[df["strategy"] == label]
    return int(g["overflows"].sum()), int((g["overflows"] > 0).sum())


def run_gate(run: str | Path, mins: Mapping[str, float], maxs: Mapping[str, float],
             baseline: str | Path | None = None, drops: Mapping[str, float] | None = None,
             strategies: tuple[str, ...] = (), resamples: int = 10_000, fail_on_overflow: bool = False,
             said: list[str] | None = None, *, select: Any = None, min_transcripts: int = MIN_TRANSCRIPTS,
             allow_few: bool = False) -> list[Check]:
    """The checks of every gated strategy (:func:`gated`) over the transcripts ``select`` picks (a
    :class:`compbench.data.select.Selection`; None: all); with ``fail_on_overflow`` also that it made no call
    over the window. A figure on fewer than ``min_transcripts`` fails unless ``allow_few`` (the module's
    docstring says why). ``said`` receives the selection, the warnings and notes (:func:`notes`)."""
    if min_transcripts < 1:
        raise UsageError(f"--min-transcripts must be at least 1, got {min_transcripts}")
    df = load_results(run)
    if select:
        from compbench.data.select import select_results

        whole = df["transcript_id"].nunique()
        missed: list[str] = []
        df = select_results(df, select, str(run), said=missed.append)
        if said is not None:
            said.append(f"transcripts: {df['transcript_id'].nunique():,} of {whole:,} in {run}, those where "
                        f"{select.text()}")
            said += [f"note: {line}" for line in missed]
    labels = [str(s) for s in dict.fromkeys(df["strategy"])]
    chosen = gated(df, strategies)
    if not chosen:
        raise UsageError(f"no strategy of {run} matches {', '.join(strategies) or 'a strategy to gate'} "
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
                checks.append(Check(s, kind, name, thr, e.value, bound, held, n=e.units, minimum=min_transcripts,
                                allow_few=allow_few))
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
            held = not math.isnan(worse_bound) and worse_bound >= -drop
            checks.append(Check(s, "max-drop", name, drop, value, worse_bound, held, n=e.units,
                                minimum=min_transcripts, allow_few=allow_few))
    return checks


def _missing(rows: Any, name: str) -> str:
    """Why a strategy's figure has no value, in words."""
    n = len(rows)
    acted = int((rows["first_action_step"] >= 0).sum()) if "first_action_step" in rows else n
    if not acted:
        return f"it never acted on any of its {n:,} transcripts, so nothing it did can be scored"
    return f"no transcript gives it one (it acted on {acted:,} of {n:,}; none had a {metric(name).title} to measure)"
