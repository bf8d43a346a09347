"""``compbench.validation.reacquisition`` — Predicted re-acquisition held against what recorded agents re-acquired
after their tools' own compactions, item by item.

At each real compaction, the prediction is made from the real post-compaction view with the rules a replay
uses (:mod:`compbench.measure.reacquire_rules`): every item (a file, a search, an inspection) delivered
before the compaction that the view no longer holds verbatim is either used in the window after it (up to the
next compaction, within ``horizon`` steps) — then its class is its use (an edit anywhere in the window makes it
an edit) and it costs its class's share of what the agent had of it, unless the tool re-attached it or the
summary holds its lines (never enough for an edit under Claude Code's read-before-edit guard) — or, a file of
the segment the compaction replaced with no use in the window, it costs the orientation share.

What the agent *did*: the tokens of every tool output in the window that re-delivered content it had before
the compaction (each output weighted by the share of its lines that were known before and not already
re-delivered since), whatever made the agent fetch them. Reads are never uses, so the prediction does not
see the re-reads it is checked against.

What the compaction *caused*: agents re-read content with or without a compaction. The **natural** re-reads
are what agents re-read of content from before a point where nothing was compacted, over the same number of
steps after it: measured at :func:`natural_points` (every :data:`NATURAL_STRIDE` steps of a segment, once
:data:`NATURAL_WINDOW` steps of work lie behind, as behind a compaction) and fitted per bin of steps on the fit
sessions (:func:`natural_curve`; it falls from about 60 tokens a step in the first 10 steps to 12–14 after 50:
what an agent re-reads anyway is mostly what it read last). The **excess** is what was observed beyond them.

Why not the session's own rate before the compaction (its re-reads of content it held in the
:data:`NATURAL_WINDOW` steps before, per step; kept as ``natural_rate``): held against what agents did at the
points where nothing was compacted (``reacquire_fit``'s last lines), it predicted 1.3 to 2.2 times what they
re-read there of content from before the point, on each split (the curve: 0.76 to 1.08; a window's re-reads are
mostly of what was read a few steps before, not of content already old), so it counted a good part of what
compactions caused as natural; and it is hardly a property of the session: its two half-windows agree at
-0.14 to 0.48 (:func:`natural_reliability`), and shrinking it toward the pooled rate predicted the points no
better than the pooled rate alone. Every figure comes with its 95% interval over resampled sessions
(:func:`intervals`).

Like with like: the raw observation is held against the prediction of every re-read (the class shares as
fitted, on all re-reads after a compaction: ``reacq_predicted_all``), the excess against what the compaction
caused (``reacq_predicted``).

The split: a session is *fit* or *held out* by a hash of its id (:func:`split`), so a rate fitted on the fit
part (:mod:`compbench.validation.reacquire_fit`) is judged on the other; both are reported.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any, Literal, cast

from compbench.data.transcript import Transcript
from compbench.measure.reacquire import COVER
from compbench.measure.reacquire_rules import (
    ALL,
    HELD_WHY,
    WHY,
    Klass,
    Rates,
    Rules,
    Served,
    fit_sessions,
    orientation_class,
    pays,
    rates,
    served,
    use_class,
)
from compbench.measure.workset import How, WorkingSet, content_lines

HORIZON = 10**9  # steps after the compaction within which a use counts: none fitted better (README "Loss")
NATURAL_WINDOW = 50  # steps before a compaction that give its natural rate
MIN_HALF = 10  # steps of each half of a natural window whose two halves are compared (its reliability)
NATURAL_STRIDE = 25  # steps between the points without a compaction that the natural curve is measured at
NATURAL_EDGES = (0, 5, 10, 20, 30, 50, 75, 100, 150)  # steps after a point: the natural curve's bins
MIN_POINTS = 5  # points that reach a bin's end for its rate to be measured (else the bin before's continues)
BOOTSTRAP = 1000  # resamples of sessions behind each interval


def split(transcript_id: str) -> Literal["fit", "held-out"]:
    """Half the sessions fit, half are held out, by a stable hash of the session id."""
    return "fit" if hashlib.sha1(transcript_id.encode()).digest()[0] % 2 == 0 else "held-out"


def shipped_split(transcript_id: str) -> Literal["fit", "held-out"]:
    """``fit`` for a session the shipped rates were fitted on, else ``held-out``: a user's own logs are all out
    of sample (``compbench fidelity`` on them validates the rates on every compaction they hold)."""
    return "fit" if transcript_id in fit_sessions() else "held-out"


@dataclass(frozen=True)
class Item:
    """One item at a real compaction: ``klass`` why it is predicted (a use's class, or orientation; ``""`` for an
    item only observed), ``held`` what in the post-compaction view holds it (``""``: nothing) and ``spared``
    whether that spares the read, ``size`` the tokens the rule sizes it by (what the agent had of it),
    ``latest`` its latest delivery's tokens, ``predicted`` and ``observed`` tokens."""

    key: str
    klass: str
    held: str
    spared: bool
    size: int
    latest: int
    predicted: int
    observed: int

    @property
    def why(self) -> str:
        if not self.klass:
            return "re-read, no later use, from before the segment"
        held = HELD_WHY.get(self.held, "")
        if self.spared:
            return f"{WHY[self.klass]}; spared: {held}"
        if held:
            return f"{WHY[self.klass]}; {held}, but the read-before-edit guard needs a read"
        return WHY[self.klass]


@dataclass(frozen=True)
class RealReacquisition:
    """One real compaction: predicted and observed re-acquisition (tokens, keys), the session's natural re-reads
    over the window and the excess beyond them, and per used key whether the summary named it (its path) and
    whether the agent re-acquired it."""

    tool: str
    transcript: str
    n: int
    trigger: str
    split: str
    reacq_predicted: int
    reacq_observed: int
    keys_predicted: int
    keys_observed: int
    named_reacquired: int
    named_not: int
    unnamed_reacquired: int
    unnamed_not: int
    restored: int
    reacq_natural: int = 0
    natural_rate: float = 0.0  # tokens re-read per step before the compaction, of content the session held
    steps_after: int = 0
    reacq_orientation: int = 0  # the part of reacq_predicted that is orientation
    items: tuple[Item, ...] = ()
    reacq_predicted_all: int = 0  # every re-read the rules predict, natural ones included: the raw observation's model
    natural_halves: tuple[float, float] | None = None  # the natural rate in each half of its window (≥ 2 × MIN_HALF)

    @property
    def reacq_excess(self) -> int:
        return self.reacq_observed - self.reacq_natural


def _restored(t: Transcript, lo: int, start: int, ws: WorkingSet) -> list[str]:
    """The keys the tool re-attached with their content after the compaction at ``lo``: recorded ones when the
    log has them (Claude Code from 2.1.119), else the tool's rule (Claude Code's five most recent files) over
    the messages since its previous compaction, less the files the agent had more of than the rule attaches
    (Claude Code reads a file from disk again: one whose slices add up past the per-file budget is named only)."""
    from compbench.data.calls import path_key

    rc = next(c for c in t.compactions if c.index == lo)
    recorded = rc.meta.get("restored")
    if isinstance(recorded, list):
        return [path_key(str(p)) for p in recorded]
    if t.source != "claude-code":
        return []
    from compbench.strategies.claude_code_restore import RESTORE_TOKENS_PER_FILE, restored_files

    keys = [path_key(p) for p, text in restored_files(t.messages[start:lo]) if "Result of calling" in text]
    return [k for k in keys if ws.had(k, lo) <= RESTORE_TOKENS_PER_FILE]


def _steps(t: Transcript) -> list[int]:
    """The model calls before each message (and after the last)."""
    out: list[int] = []
    s = 0
    for m in t.messages:
        out.append(s)
        s += m.role == "assistant" and not m.meta.get("compaction")
    out.append(s)
    return out


def observed_by_key(ws: WorkingSet, lo: int, hi: int) -> dict[str, float]:
    """The tokens of outputs in [``lo``, ``hi``) that re-delivered content known before ``lo``, per key (each line
    counted once)."""
    known: dict[str, set[int]] = {}
    for d in ws.deliveries:
        if d.message < lo:
            known.setdefault(d.key, set()).update(d.lines)
    out: dict[str, float] = {}
    again: dict[str, set[int]] = {}
    for d in ws.deliveries:
        if not lo <= d.message < hi or d.key not in known:
            continue
        fresh = (d.lines & known[d.key]) - again.get(d.key, set())
        if fresh:
            out[d.key] = out.get(d.key, 0.0) + d.tokens * len(fresh) / len(d.lines)
        again.setdefault(d.key, set()).update(d.lines)
    return out


def natural_rereads(ws: WorkingSet, start: int, a: int, lo: int) -> float:
    """The tokens of outputs in [``a``, ``lo``) that re-delivered content the session had received since ``start``
    (content it still held: no compaction between), each line counted once."""
    seen: dict[str, set[int]] = {}
    counted: dict[str, set[int]] = {}
    total = 0.0
    for d in ws.deliveries:
        if d.message < start:
            continue
        if d.message >= lo:
            break
        lines = d.lines
        if d.message >= a and lines:
            fresh = (lines & seen.get(d.key, set())) - counted.get(d.key, set())
            if fresh:
                total += d.tokens * len(fresh) / len(lines)
                counted.setdefault(d.key, set()).update(fresh)
        seen.setdefault(d.key, set()).update(lines)
    return total


def _window(step_at: Sequence[int], start: int, lo: int, window: int) -> int:
    """The first message of the ``window`` steps before message ``lo``, not before ``start``."""
    return next(i for i in range(start, lo + 1) if step_at[i] >= max(step_at[start], step_at[lo] - window))


def _rate(ws: WorkingSet, step_at: Sequence[int], start: int, a: int, lo: int) -> float:
    """The session's own re-reads per step in [``a``, ``lo``) of content it held since ``start`` (0 over no
    step)."""
    steps = step_at[lo] - step_at[a]
    return natural_rereads(ws, start, a, lo) / steps if steps else 0.0


@dataclass(frozen=True)
class Point:
    """A point of a session where nothing was compacted, :data:`NATURAL_WINDOW` steps or more into its segment:
    what the agent re-read of content from before it, cumulated at each of :data:`NATURAL_EDGES` it reaches."""

    transcript: str
    cumulated: tuple[float, ...]
    rate_before: float = 0.0  # the session's own rate in the NATURAL_WINDOW steps before it, as at a compaction


def natural_points(t: Transcript, ws: WorkingSet, stride: int = NATURAL_STRIDE) -> list[Point]:
    """Every ``stride`` steps of each segment (between the session's start, its compactions and its end) from
    :data:`NATURAL_WINDOW` steps in, while a step is left: a point that, like a compaction, comes after a long
    stretch of work, but where the agent kept everything. What it re-read there of what it had is natural."""
    step_at = _steps(t)
    bounds = [0, *(c.index for c in t.compactions), len(t.messages)]
    out = []
    for s0, s1 in pairwise(bounds):
        at = s0
        step = step_at[s0] + NATURAL_WINDOW
        while step < step_at[s1]:
            while step_at[at] < step:
                at += 1
            cumulated = [0.0]
            end = at
            for edge in NATURAL_EDGES[1:]:
                if step_at[at] + edge > step_at[s1]:
                    break
                while step_at[end] < step_at[at] + edge:
                    end += 1
                cumulated.append(sum(observed_by_key(ws, at, end).values()))
            a = _window(step_at, s0, at, NATURAL_WINDOW)
            out.append(Point(t.id, tuple(cumulated), _rate(ws, step_at, s0, a, at)))
            step += stride
    return out


def natural_curve(points: Iterable[Point]) -> tuple[tuple[int, float], ...]:
    """Per bin of :data:`NATURAL_EDGES`, the tokens a step agents re-read of content from before a point, over
    the points that reach the bin's end; up to the first bin fewer than :data:`MIN_POINTS` reach (the last
    measured bin's rate runs on)."""
    points = list(points)
    out: list[tuple[int, float]] = []
    for k, (a, b) in enumerate(pairwise(NATURAL_EDGES)):
        reach = [p.cumulated for p in points if len(p.cumulated) > k + 1]
        if len(reach) < MIN_POINTS:
            break
        out.append((a, round(sum(c[k + 1] - c[k] for c in reach) / len(reach) / (b - a), 1)))
    return tuple(out)


def at_compactions(t: Transcript, part_tokens: Sequence[Sequence[int]], horizon: int = HORIZON,
                   ws: WorkingSet | None = None, rules: Rules = ALL, rates_: Rates | None = None,
                   natural_window: int = NATURAL_WINDOW,
                   split_of: Callable[[str], Literal["fit", "held-out"]] = split) -> list[RealReacquisition]:
    """Predicted and observed re-acquisition at each compaction ``t`` records, item by item; the session's own
    rate over at most ``natural_window`` steps before each; each labelled by ``split_of`` its session (the fit's
    hash split, or :func:`shipped_split` where the shipped rates are validated)."""
    if not t.compactions:
        return []
    r = rates_ or rates()
    ws = ws or WorkingSet.build(t, part_tokens)
    bounds = [c.index for c in t.compactions] + [len(t.messages)]
    step_at = _steps(t)
    guard = t.source == "claude-code"
    out = []
    for n, rc in enumerate(t.compactions):
        lo, hi = rc.index, bounds[n + 1]
        start = bounds[n - 1] if n else 0
        kept = set(rc.kept_ids)
        restored = set(_restored(t, lo, start, ws))
        summary_lines = content_lines(rc.summary) if rc.summary else frozenset()
        summary_text = rc.summary.lower()
        first: dict[str, How] = {}
        edited: set[str] = set()
        for i in range(lo, hi):
            if step_at[i] - step_at[lo] >= horizon:
                break
            for use in ws.uses.get(i, ()):
                first.setdefault(use.key, use.how)
                if use.how == "edit":
                    edited.add(use.key)
        observed = observed_by_key(ws, lo, hi)
        items: list[Item] = []
        used: set[str] = set()
        for key in ws.latest:
            d = ws.before(key, lo)
            if d is None:
                continue
            size = ws.had(key, lo) if rules.had else d.tokens
            klass: Klass | None = None
            by: Served = ""
            spared = False
            if key in first:
                used.add(key)
                how: How = "edit" if key in edited else first[key]
                klass = use_class(how, d.kind, changed=rules.changed and how == "edit" and ws.changed(key, lo))
                by = served(kept=t.messages[d.message].id in kept, attached=key in restored,
                            summarized=len(d.lines & summary_lines) >= COVER * len(d.lines))
                spared = not pays(how, by, guard, rules)
            elif d.kind == "file" and d.message >= start and t.messages[d.message].id not in kept:
                klass = orientation_class(step_at[lo] - step_at[d.message], r)
            seen = round(observed.get(key, 0.0))
            if klass or seen:
                items.append(Item(key, klass or "", by, spared, size, d.tokens, 0, seen))
        named = {k for k in used if k.startswith("file:") and k[5:] in summary_text}
        reacquired = {k for k, v in observed.items() if v > 0}
        after = step_at[hi] - step_at[lo]
        a = _window(step_at, start, lo, natural_window)
        before = step_at[lo] - step_at[a]
        halves = None
        if before >= 2 * MIN_HALF:
            m = _window(step_at, a, lo, before // 2)
            halves = (_rate(ws, step_at, start, a, m), _rate(ws, step_at, start, m, lo))
        out.append(reprice(RealReacquisition(
            t.source, t.id, n + 1, rc.trigger, split_of(t.id), 0, round(sum(observed.values())), 0, len(reacquired),
            named_reacquired=len(named & reacquired), named_not=len(named - reacquired),
            unnamed_reacquired=len((used - named) & reacquired), unnamed_not=len(used - named - reacquired),
            restored=len(restored), natural_rate=_rate(ws, step_at, start, a, lo), steps_after=after,
            items=tuple(items), natural_halves=halves), r, rules))
    return out


def reprice(r: RealReacquisition, rates_: Rates, rules: Rules = ALL) -> RealReacquisition:
    """``r`` predicted at ``rates_`` from its items: each paying item (a class, not spared) its class's share
    of what the agent had (caused, and of every re-read), the totals their sums, the natural re-reads the curve
    over its window. An item's class, size and what spared it are the rules', not the rates' (as long as
    ``recent_steps`` is the same), so a refit needs no new pass over the transcript."""
    items = sorted((replace(x, predicted=rates_.expected(cast("Klass", x.klass), x.size, rules)
                            if x.klass and not x.spared else 0) for x in r.items),
                   key=lambda x: (-max(x.predicted, x.observed), x.key))
    paying = [x for x in items if x.klass and not x.spared]
    return replace(r, reacq_predicted=sum(x.predicted for x in items),
                   keys_predicted=sum(1 for x in items if x.predicted),
                   reacq_predicted_all=sum(rates_.expected(cast("Klass", x.klass), x.size, rules, caused=False)
                                           for x in paying),
                   reacq_orientation=sum(x.predicted for x in items if x.klass.startswith("orientation")),
                   reacq_natural=round(rates_.natural_after(r.steps_after)), items=tuple(items))


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rank correlation (average ranks for ties); NaN with fewer than three points or no spread."""
    if len(xs) < 3:
        return math.nan

    def ranks(v: Sequence[float]) -> list[float]:
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r

    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx and syy else math.nan


def _ratio(p: float, o: float) -> float:
    return p / o if o > 0 else math.nan


def _figures(part: Sequence[RealReacquisition]) -> dict[str, float]:
    """The agreement figures of one set of compactions: the prediction of every re-read against the raw
    observation, the caused prediction against the excess, predicted + natural against the observation."""
    p = [r.reacq_predicted for r in part]
    o = [r.reacq_observed for r in part]
    x = [r.reacq_excess for r in part]
    pn = [r.reacq_predicted + r.reacq_natural for r in part]
    return {"spearman": spearman(p, o), "pooled_ratio": _ratio(sum(p), sum(o)),
            "pooled_ratio_all": _ratio(sum(r.reacq_predicted_all for r in part), sum(o)),
            "spearman_excess": spearman(p, x), "pooled_ratio_excess": _ratio(sum(p), sum(x)),
            "spearman_with_natural": spearman(pn, o), "pooled_ratio_with_natural": _ratio(sum(pn), sum(o))}


def intervals(part: Sequence[RealReacquisition], resamples: int = BOOTSTRAP) -> dict[str, tuple[float, float]]:
    """95% intervals of each of :func:`_figures`, resampling sessions (a session's compactions share its agent and
    its task, so they are not independent draws); deterministic (a fixed seed). Empty with fewer than three
    sessions."""
    import random

    by: dict[str, list[RealReacquisition]] = {}
    for r in part:
        by.setdefault(r.transcript, []).append(r)
    if len(by) < 3:
        return {}
    keys = sorted(by)
    rng = random.Random(0)
    draws: dict[str, list[float]] = {}
    for _ in range(resamples):
        sample = [r for k in rng.choices(keys, k=len(keys)) for r in by[k]]
        for name, v in _figures(sample).items():
            if not math.isnan(v):
                draws.setdefault(name, []).append(v)
    out = {}
    for name, vs in draws.items():
        vs.sort()
        out[name] = (vs[int(0.025 * (len(vs) - 1))], vs[int(0.975 * (len(vs) - 1))])
    return out


def interval_text(x: dict[str, Any], name: str) -> str:
    """`` [lo, hi]``: the 95% interval of figure ``name`` in a summary ``x``, or nothing where none was measured."""
    lo_hi = x.get("ci", {}).get(name)
    return f" [{lo_hi[0]:.2f}, {lo_hi[1]:.2f}]" if lo_hi else ""


def natural_reliability(part: Iterable[RealReacquisition]) -> tuple[float, int]:
    """How far a session's natural rate before a compaction is a property of the session and not of its
    moment: the Spearman correlation of the rate in the two halves of its window, over the compactions with a
    window of at least two :data:`MIN_HALF` halves, stepped up to the whole window (Spearman–Brown); and how
    many compactions it rests on. An excess over a rate of reliability ``r`` carries that estimate's noise: a
    prediction cannot rank the excess much better than the natural rate's own reliability lets it."""
    halves = [r.natural_halves for r in part if r.natural_halves is not None]
    rho = spearman([h[0] for h in halves], [h[1] for h in halves])
    return (2 * rho / (1 + rho) if not math.isnan(rho) and rho > -1 else math.nan), len(halves)


def summarize(rows: Iterable[RealReacquisition], resamples: int = BOOTSTRAP) -> dict[str, Any]:
    """Per split and overall: compactions, the prediction of every re-read against the observation (pooled
    ratio, Spearman over compactions), what the compaction caused against the excess over the natural re-reads,
    and caused plus natural against the observation, each with its 95% interval over sessions (``resamples`` 0:
    none); the reliability of each session's own rate; the orientation part; the named/not named × re-acquired
    table."""
    rows = list(rows)
    out: dict[str, Any] = {}
    for name, part in (("fit", [r for r in rows if r.split == "fit"]),
                       ("held-out", [r for r in rows if r.split == "held-out"]), ("all", rows)):
        reliability, halves = natural_reliability(part)
        out[name] = {
            "compactions": len(part), "sessions": len({r.transcript for r in part}),
            "predicted": sum(r.reacq_predicted for r in part), "observed": sum(r.reacq_observed for r in part),
            "predicted_all": sum(r.reacq_predicted_all for r in part),
            "natural": sum(r.reacq_natural for r in part), "excess": sum(r.reacq_excess for r in part),
            "orientation": sum(r.reacq_orientation for r in part), **_figures(part),
            "ci": intervals(part, resamples) if resamples else {},
            "natural_reliability": reliability, "natural_reliability_n": halves,
            "named": [sum(r.named_reacquired for r in part), sum(r.named_not for r in part)],
            "not_named": [sum(r.unnamed_reacquired for r in part), sum(r.unnamed_not for r in part)],
        }
    return out
