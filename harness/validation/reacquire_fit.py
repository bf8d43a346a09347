"""``compbench.validation.reacquire_fit`` — The re-acquisition rates fitted on real compactions, and what each rule
does to the prediction on the compactions they were not fitted on.

Run it on logs with compactions (it rewrites ``compbench/measure/reacquire_rates.json``; ``--check`` only
compares; ``--held-out PATH`` adds logs to validate on that nothing is fitted on)::

    python -m compbench.validation.reacquire_fit ../shared/transcripts ../shared/real-compactions

The fit uses the sessions :func:`compbench.validation.reacquisition.split` calls *fit* only: the natural
re-reads' curve (:func:`compbench.validation.reacquisition.natural_curve`, at the points of those sessions where
nothing was compacted); per class (:data:`compbench.measure.reacquire_rules.CLASSES`), the tokens the recorded
agents re-read of the items of that class that the view did not spare, over what they had of them; and the
share of all re-reads after those compactions that was in excess of the natural curve
(:attr:`~compbench.measure.reacquire_rules.Rates.caused`). It then prints, per split, the prediction against
the observation, against the excess, and with the natural re-reads added, for every rule and with each rule
switched off (rates refitted without it); every session of the logs predicted at the rates of the others (leave
one session out; with ``--held-out`` logs, once more over both); and the natural curve against the points it was
not fitted on.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from compbench.data.transcript import Transcript
from compbench.measure.reacquire_rules import ALL, CLASSES, TABLE, Rates, Rules, from_table
from compbench.measure.workset import WorkingSet
from compbench.validation.reacquisition import (
    BOOTSTRAP,
    NATURAL_EDGES,
    Point,
    RealReacquisition,
    at_compactions,
    interval_text,
    natural_curve,
    natural_points,
    reprice,
    split,
    summarize,
)

MIN_ITEMS = 10  # a class of orientation with fewer fit items takes orientation's pooled share
RECENT_STEPS = 10  # a read within this many steps of a compaction is recent (orientation)
UNIT = Rates(dict.fromkeys(CLASSES, 1.0), 1.0, RECENT_STEPS)  # predicts each item's size: what the fit divides by
REGENERATE = "python -m compbench.validation.reacquire_fit ../shared/transcripts ../shared/real-compactions"


@dataclass(frozen=True)
class Loaded:
    """A transcript with real compactions, as fidelity reads it: its parts' tokens, its working set and its points
    where nothing was compacted."""

    transcript: Transcript
    part_tokens: Sequence[Sequence[int]]
    ws: WorkingSet
    points: tuple[Point, ...]


def load(paths: Sequence[str], tokenizer: str = "o200k_base") -> list[Loaded]:
    """The transcripts of ``paths`` that record compactions, completed and counted as ``compbench fidelity``
    counts them (each at its own growth rate of the hidden prompt)."""
    from compbench.data.importing import transcripts
    from compbench.measure.tokens import TokenCounter
    from compbench.run.missing_usage import complete
    from compbench.sdk.registry import own_strategy
    from compbench.validation.fidelity import overhead

    counter = TokenCounter(tokenizer)
    out = []
    for t in transcripts(list(paths), on_error="skip"):
        if own_strategy(t.source) is None or not t.compactions:
            continue
        t, _ = complete(t)
        _, session = overhead(t, counter)
        part_tokens = session.index(t).part_tokens
        ws = WorkingSet.build(t, part_tokens)
        out.append(Loaded(t, part_tokens, ws, tuple(natural_points(t, ws))))
    return out


def curve_of(loaded: Iterable[Loaded], where: str = "fit") -> tuple[tuple[int, float], ...]:
    """The natural curve at the points of the sessions of split ``where`` (``"all"``: every session)."""
    return natural_curve(p for x in loaded if where in ("all", split(x.transcript.id)) for p in x.points)


def measure(loaded: Iterable[Loaded], rules: Rules = ALL, rates_: Rates = UNIT) -> list[RealReacquisition]:
    return [r for x in loaded for r in at_compactions(x.transcript, x.part_tokens, ws=x.ws, rules=rules,
                                                      rates_=rates_)]


def fit(rows: Sequence[RealReacquisition], recent_steps: int = RECENT_STEPS) -> dict[str, Any]:
    """The rates table from ``rows`` measured at :data:`UNIT` rates (each paying item predicted at its size),
    on the fit split only."""
    part = [r for r in rows if r.split == "fit"]
    classes: dict[str, dict[str, Any]] = {}
    for klass in CLASSES:
        mine = [x for r in part for x in r.items if x.klass == klass and not x.spared]
        if len(mine) < MIN_ITEMS and klass.startswith("orientation"):  # too few: orientation's pooled share
            pooled = [x for r in part for x in r.items if x.klass.startswith("orientation") and not x.spared]
        else:
            pooled = mine
        had = sum(x.size for x in pooled)
        seen = sum(x.observed for x in pooled)
        classes[klass] = {"read_back": round(seen / had, 4) if had else 0.0, "items": len(mine),
                          "reread": sum(1 for x in mine if x.observed), "had": sum(x.size for x in mine),
                          "observed": sum(x.observed for x in mine), **({"pooled": True} if pooled is not mine else {})}
    observed = sum(r.reacq_observed for r in part)
    natural = sum(r.reacq_natural for r in part)
    return {"classes": classes, "caused": round((observed - natural) / observed, 4) if observed else 1.0,
            "recent_steps": recent_steps, "compactions": len(part), "sessions": len({r.transcript for r in part}),
            "observed": observed, "natural": natural}


def table(loaded: Sequence[Loaded], rows: Sequence[RealReacquisition]) -> dict[str, Any]:
    """The shipped table: the fit (``rows`` measured at the fit sessions' natural curve) and where it comes
    from."""
    fits = [x for x in loaded if split(x.transcript.id) == "fit"]
    ids = {r.transcript for r in rows if r.split == "fit"}
    return {"regenerate": REGENERATE, **fit(rows),
            "natural_curve": {"curve": [list(b) for b in curve_of(fits)], "points": sum(len(x.points) for x in fits)},
            "fit_sessions": sorted(ids),
            "files": sorted({_name(x.transcript) for x in loaded if x.transcript.id in ids})}


def shipped(loaded: Sequence[Loaded]) -> dict[str, Any]:
    """The table :data:`REGENERATE` writes: measured at the fit sessions' natural curve, then fitted."""
    return table(loaded, measure(loaded, rates_=replace(UNIT, natural=curve_of(loaded))))


def fitted(loaded: Sequence[Loaded], rules: Rules = ALL, rows: Sequence[RealReacquisition] = ()) -> Rates:
    """The rates ``rules`` give on the fit split: the natural curve first (the caused share is the excess over
    it), then the class shares; from ``rows`` already measured under ``rules`` (at any rates) where given."""
    curve = curve_of(loaded)
    unit = replace(UNIT, natural=curve)
    measured = [reprice(r, unit, rules) for r in rows] if rows else measure(loaded, rules, unit)
    return replace(from_table(fit(measured)), natural=curve)


def _name(t: Transcript) -> str:
    return Path(str(t.meta.get("path", t.id))).name


def cross_validated(rows: Sequence[RealReacquisition], points: Mapping[str, Sequence[Point]]
                    ) -> list[RealReacquisition]:
    """Every compaction of ``rows`` (measured at any rates) predicted at the rates fitted on every *other*
    session, whatever its split (leave one session out), its natural curve from the other sessions' ``points``
    too: each prediction and each excess is out of sample, and the rates rest on all sessions but one instead of
    half of them."""
    every = [replace(r, split="fit") for r in rows]
    out = []
    for session in sorted({r.transcript for r in every}):
        curve = natural_curve(p for k, ps in points.items() if k != session for p in ps)
        others = [reprice(r, replace(UNIT, natural=curve)) for r in every if r.transcript != session]
        rates_ = replace(from_table(fit(others)), natural=curve)
        out += [replace(reprice(r, rates_), split="held-out") for r in every if r.transcript == session]
    return out


def natural_check(loaded: Iterable[Loaded], rates_: Rates) -> dict[str, float]:
    """The natural curve of ``rates_`` against what agents re-read at the points of ``loaded`` (where nothing was
    compacted), each over the steps it reaches: points, observed tokens, the curve's prediction and its ratio,
    and the same of the session's own rate before each point run over those steps (the former estimate)."""
    points = [p for x in loaded for p in x.points if len(p.cumulated) > 1]
    got = sum(p.cumulated[-1] for p in points)
    curve = sum(rates_.natural_after(NATURAL_EDGES[len(p.cumulated) - 1]) for p in points)
    own = sum(p.rate_before * NATURAL_EDGES[len(p.cumulated) - 1] for p in points)
    return {"points": len(points), "observed": round(got), "predicted": round(curve),
            "ratio": curve / got if got else float("nan"), "session_rate": round(own),
            "session_rate_ratio": own / got if got else float("nan")}


FORMER = Rules(guard=False, had=False, weights=False, orientation=False, changed=False)
ABLATIONS: tuple[tuple[str, Rules], ...] = (
    ("every rule", ALL),
    ("without the guard on re-attached files", replace(ALL, guard=False)),
    ("sized by the latest delivery", replace(ALL, had=False)),
    ("every use read back whole (no class shares)", replace(ALL, weights=False)),
    ("without orientation", replace(ALL, orientation=False)),
    ("an edit of a file the agent changed like any edit", replace(ALL, changed=False)),
    ("the former rule (none of these)", FORMER),
)


def effects(loaded: Sequence[Loaded], other: Sequence[Loaded] = ()) -> list[tuple[str, dict[str, Any]]]:
    """Each rule set of :data:`ABLATIONS`, its rates refitted on the fit split, summarized per split; with
    ``other`` transcripts (none of them fitted on), their compactions summarized as ``other``. The former rule
    predicts every use at its latest delivery, with no caused share. Every rule, also cross-validated."""
    out = []
    for label, rules in ABLATIONS:
        rows = measure(loaded, rules)  # one pass per rule set: every rate below reprices these
        theirs = measure(other, rules) if other else []
        rates_ = fitted(loaded, rules, rows)
        if rules == FORMER:
            rates_ = replace(rates_, caused=1.0)
        resamples = BOOTSTRAP if rules == ALL else 0  # intervals for the shipped rules only: each costs a second
        found = summarize([reprice(r, rates_, rules) for r in rows], resamples)
        if other:
            mine = [replace(reprice(r, rates_, rules), split="held-out") for r in theirs]
            found["other"] = summarize(mine, resamples)["held-out"]
        if rules == ALL:
            points = {x.transcript.id: x.points for x in loaded}
            found["cross-validated"] = summarize(cross_validated(rows, points), resamples)["held-out"]
            if other:  # every session of both, each from the rates and curve of all the others
                points.update((x.transcript.id, x.points) for x in other)
                found["cross-validated, with other"] = summarize(cross_validated([*rows, *theirs], points),
                                                                 resamples)["held-out"]
            found["natural"] = {name: natural_check([x for x in loaded if split(x.transcript.id) == name], rates_)
                                for name in ("fit", "held-out")}
            if other:
                found["natural"]["other"] = natural_check(other, rates_)
        out.append((label, found))
    return out


SPLITS = (("fit", "fit"), ("held-out", "held-out"), ("all", "all"), ("other", "other"),
          ("cross-validated", "cross-v."), ("cross-validated, with other", "cross-v.+"))


def lines(label: str, s: dict[str, Any]) -> list[str]:
    """The figures of each split: against the raw observation (the prediction of every re-read), against the
    excess over the natural re-reads (the caused prediction), predicted + natural against the observation, each
    with its 95% interval over sessions where measured; each session's own rate's reliability."""
    out = [label]
    for name, short in SPLITS:
        x = s.get(name)
        if not x or not x["compactions"]:
            continue
        ci = partial(interval_text, x)
        out.append(f"  {short:<8} {x['compactions']:>3} compactions: observed {x['observed']:>9,} | every re-read "
                   f"{x['predicted_all']:>9,}: ratio {x['pooled_ratio_all']:.2f}{ci('pooled_ratio_all')} "
                   f"Spearman {x['spearman']:.2f}{ci('spearman')} | excess {x['excess']:>9,} against caused "
                   f"{x['predicted']:>9,} (orientation {x['orientation']:,}): ratio "
                   f"{x['pooled_ratio_excess']:.2f}{ci('pooled_ratio_excess')} Spearman "
                   f"{x['spearman_excess']:.2f}{ci('spearman_excess')} | caused + natural {x['natural']:,}: "
                   f"ratio {x['pooled_ratio_with_natural']:.2f} Spearman {x['spearman_with_natural']:.2f} | the "
                   f"session's own rate's reliability {x['natural_reliability']:.2f} ({x['natural_reliability_n']})")
    for name, x in s.get("natural", {}).items():
        out.append(f"  natural re-reads at the {x['points']} points of the {name} sessions where nothing was "
                   f"compacted: observed {x['observed']:,}; the curve {x['predicted']:,} (ratio {x['ratio']:.2f}); "
                   f"each session's own rate before the point {x['session_rate']:,} (ratio "
                   f"{x['session_rate_ratio']:.2f})")
    return out


def main(argv: Sequence[str]) -> int:
    """``PATH...`` the logs to fit on (their fit split) and validate on; ``--held-out PATH`` (repeatable) more
    logs to validate on only, every session held out; ``--check`` compares the shipped table instead."""
    args: list[str] = []
    other: list[str] = []
    it = iter(argv)
    for a in it:
        if a == "--held-out":
            other.append(next(it, ""))
        elif not a.startswith("--"):
            args.append(a)
    if not args or "" in other:
        print(f"usage: {REGENERATE} [--held-out PATH]... [--check]", file=sys.stderr)
        return 2
    loaded = load(args)
    data = shipped(loaded)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if "--check" in argv:
        same = TABLE.read_text(encoding="utf-8") == text
        print("reacquire_rates.json is " + ("up to date" if same else f"stale: run {REGENERATE}"))
        return 0 if same else 1
    TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {TABLE} ({data['compactions']} compactions of {data['sessions']} fit sessions)")
    for label, s in effects(loaded, load(other) if other else ()):
        print("\n".join(lines(label, s)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
