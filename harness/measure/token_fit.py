"""``compbench.measure.token_fit`` — Fit the token corrections per model family and the overhead defaults per agent on
recorded usage.

The model, per fully recorded call of a session ``t`` (see :mod:`compbench.measure.token_accuracy`)::

    recorded ≈ overhead_t + factor × counted + reasoning × thinking + media

``counted`` is our ``o200k_base`` count of everything before the call (parts and per-message
overhead, images apart: ``media`` is already a flat Anthropic-style figure), ``thinking`` our count of
the readable reasoning before it, ``overhead_t`` the session's own hidden prompt (system prompt, tool
schemas; a free term per session, taken as the median residual). ``factor`` and ``reasoning`` are
shared by a model family and chosen to minimise the mean over its sessions of each session's median
relative error — the figure the goal is stated in, robust to the calls after an unrecorded event
(a hook's output, an attachment) that no token count can see. Coordinate descent on a grid (factor
steps of 0.005, reasoning of 0.01), deterministic.

The errors are then measured with the real :class:`~compbench.measure.tokens.TokenCounter` (integers, per part):
in-sample, leaving each transcript out (its family's correction fitted without it; its own overhead
still its own, as a run has it). The hidden overhead a run adds (:mod:`compbench.measure.overhead`: a
fixed part from the first call, a growth rate) ships as each agent's defaults (the medians of its
sessions), with its errors on the first call and on every call: in-sample, against the former constant
overhead, with the rate fitted on each session's first half of calls (the errors on the second half), and
as a session without usage gets it (the defaults of the agent's *other* sessions, the family's
correction fitted without it). Written to ``data/token_correction.json``::

    python -m compbench.measure.token_fit ../shared/transcripts ../shared/real-compactions
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compbench.data.transcript import Media, Reasoning, Transcript
from compbench.measure.overhead import RATE_RANGE, UNIT, Overhead, growth_rate, rated
from compbench.measure.overhead import fit as hidden_fit
from compbench.measure.token_correction import DATA, REGENERATE, Correction, family_of, recorded_model
from compbench.measure.tokens import DEFAULT_MESSAGE_OVERHEAD, DEFAULT_TOKENIZER, TokenCounter
from compbench.measure.usage import errors, own_overhead, p90, pairs

FITTED = ("claude", "gemini")  # families whose tokenizer is not ours
NOT_FITTED = {"openai": "o200k_base is the tokenizer of OpenAI's GPT-4o, GPT-5 and o-series models"}
FACTOR_RANGE = (0.8, 2.0)
REASONING_RANGE = (0.0, 3.0)
# the reasoning term is fitted only where readable thinking is at least this share of what the family's
# sessions hold (Claude's logs: ~5%); below it, as in the Gemini sessions (0.5%), it would fit noise
MIN_THINKING_SHARE = 0.01


@dataclass
class Session:
    """One transcript's fully recorded calls, as features of the fit, and its counter (for the errors)."""

    t: Transcript
    file: str
    family: str
    counter: TokenCounter  # o200k_base, scoped: the tokenizer's counts are memoized, corrections are arithmetic
    rec: list[int]
    counted: list[int]  # parts and per-message overhead, media excluded
    thinking: list[int]
    media: list[int]


def session(t: Transcript, file: str) -> Session | None:
    """The features of ``t``'s fully recorded calls (the calls :func:`compbench.measure.token_accuracy.pairs` keeps)."""
    counter = TokenCounter(DEFAULT_TOKENIZER, DEFAULT_MESSAGE_OVERHEAD).scoped()
    index = counter.index(t)
    limit = min((c.index for c in t.compactions), default=len(t.messages))
    s = Session(t, file, family_of(recorded_model(t)) or "unknown", counter, [], [], [], [])
    x = z = w = 0
    for i, m in enumerate(t.messages[:limit]):
        if m.meta.get("compaction"):
            continue
        if m.role == "assistant" and m.usage is not None and m.usage.input > 0:
            s.rec.append(m.usage.input)
            s.counted.append(x)
            s.thinking.append(z)
            s.media.append(w)
        media = sum(counter.media_tokens for p in m.parts if isinstance(p, Media))
        x += index.message_tokens[i] - media
        w += media
        z += sum(counter.count_raw(p.text) for p in m.parts if isinstance(p, Reasoning) and not p.encrypted)
    return s if s.rec else None


Arrays = tuple[Any, ...]  # rec, counted, thinking, media (numpy, a row per session, padded), padding mask, lengths


def arrays(sessions: Sequence[Session]) -> Arrays:
    """The sessions' features as padded 2-D arrays, so one objective evaluation is a few array operations."""
    import numpy as np

    lengths = np.array([len(s.rec) for s in sessions])
    width = int(lengths.max())
    out = []
    for name in ("rec", "counted", "thinking", "media"):
        a = np.ones((len(sessions), width))
        for k, s in enumerate(sessions):
            a[k, : len(s.rec)] = getattr(s, name)
        out.append(a)
    return (*out, np.arange(width)[None, :] >= lengths[:, None], lengths)


def _row_medians(a: Any, pad: Any, lengths: Any) -> Any:
    """The median of each row's first ``lengths[k]`` values (the padding sorts last)."""
    import numpy as np

    s = np.sort(np.where(pad, np.inf, a), axis=1)
    rows = np.arange(len(lengths))
    return (s[rows, (lengths - 1) // 2] + s[rows, lengths // 2]) / 2


def objective(data: Arrays, factor: float, reasoning: float) -> float:
    """The mean over sessions of each session's median relative error, its overhead its median residual."""
    import numpy as np

    rec, counted, thinking, media, pad, lengths = data
    res = rec - factor * counted - reasoning * thinking - media
    err = np.abs(res - _row_medians(res, pad, lengths)[:, None]) / rec
    return float(np.mean(_row_medians(err, pad, lengths)))


def _best(f: Any, lo: float, hi: float, step: float, current: float) -> float:
    """The grid point of [lo, hi] minimising f; the current value is kept unless another is strictly better."""
    best, value = current, f(current)
    n = round((hi - lo) / step)
    for k in range(n + 1):
        x = round(lo + k * step, 6)
        v = f(x)
        if v < value - 1e-12:
            best, value = x, v
    return best


def _search(f: Any, bounds: tuple[float, float], coarse: float, fine: float, current: float) -> float:
    """The coarse grid's best point, refined on the fine grid around it."""
    lo, hi = bounds
    x = _best(f, lo, hi, coarse, current)
    return _best(f, max(lo, x - coarse), min(hi, x + coarse), fine, x)


def fit(sessions: Sequence[Session]) -> tuple[float, float]:
    """(factor, reasoning) for one family: coordinate descent from (1, 0)."""
    factor, reasoning = 1.0, 0.0
    thinks = sum(s.thinking[-1] for s in sessions) >= MIN_THINKING_SHARE * sum(s.counted[-1] for s in sessions)
    data = arrays(sessions)
    for _ in range(10):
        before = (factor, reasoning)
        r = reasoning
        factor = _search(lambda x, r=r: objective(data, x, r), FACTOR_RANGE, 0.05, 0.005, factor)
        if thinks:
            f = factor
            reasoning = _search(lambda x, f=f: objective(data, f, x), REASONING_RANGE, 0.1, 0.01, reasoning)
        if (factor, reasoning) == before:
            break
    return factor, reasoning


def read(paths: Sequence[str]) -> Iterator[Session]:
    """Every transcript under ``paths`` with fully recorded calls, named by its file relative to the
    folder above its argument (``transcripts/claude-code/….jsonl``)."""
    from compbench.data.importing import iter_transcripts

    for arg in paths:
        root = Path(arg).resolve().parent
        for t in iter_transcripts(arg):
            raw = str(t.meta.get("path") or t.id)
            try:
                file = Path(raw).resolve().relative_to(root).as_posix()
            except ValueError:
                file = Path(raw).name
            s = session(t, file)
            if s is not None:
                yield s


def _corrected(s: Session, c: Correction | None) -> list[tuple[int, int]]:
    return pairs(s.t, s.counter.with_correction(c)) if c else pairs(s.t, s.counter)


def _stats(xs: Sequence[float]) -> dict[str, float]:
    return {"median": round(statistics.median(xs), 4), "p90": round(p90(xs), 4)}


def _correction(family: str, values: tuple[float, float] | None) -> Correction | None:
    return Correction(family, round(values[0] * 1000), round(values[1] * 1000)) if values else None


def fit_sessions(sessions: Sequence[Session]) -> dict[str, Any]:
    """The data file's content from the sessions (see the module docstring)."""
    sessions = sorted(sessions, key=lambda s: (s.t.source, s.file, s.t.id))
    by_family: dict[str, list[Session]] = {}
    for s in sessions:
        by_family.setdefault(s.family, []).append(s)
    fits = {f: fit(by_family[f]) for f in FITTED if f in by_family}
    # each transcript's family fitted without it: its held-out correction (None: not fitted, or alone)
    held: dict[int, tuple[float, float] | None] = {
        id(s): fit([o for o in by_family[s.family] if o is not s])
        if s.family in fits and len(by_family[s.family]) > 1 else None for s in sessions}
    shipped = {f: _correction(f, v) for f, v in fits.items()}
    families: dict[str, Any] = {}
    for family, members in sorted(by_family.items()):
        entry: dict[str, Any] = ({"fitted": True, "factor": fits[family][0], "reasoning": fits[family][1]}
                                 if family in fits else
                                 {"fitted": False, "factor": 1.0, "reasoning": 0.0,
                                  "why": NOT_FITTED.get(family, "not a family we know")})
        folds = [v for s in members if (v := held[id(s)]) is not None]
        if folds:  # how far the fit moves when one transcript is left out
            entry["leave_one_out"] = {"factor": [min(f for f, _ in folds), max(f for f, _ in folds)],
                                      "reasoning": [min(r for _, r in folds), max(r for _, r in folds)]}
        entry.update(sessions=len(members), calls=sum(len(s.rec) for s in members),
                     files=[{"file": s.file, "transcript": s.t.id, "source": s.t.source, "model": recorded_model(s.t),
                             "calls": len(s.rec)} for s in members])
        families[family] = entry
    corrected = {id(s): _corrected(s, shipped.get(s.family)) for s in sessions}
    overheads = {id(s): own_overhead(corrected[id(s)]) for s in sessions}
    counters = {id(s): s.counter.with_correction(shipped.get(s.family)) for s in sessions}
    hidden = {id(s): hidden_fit(s.t, counters[id(s)], None)[0] for s in sessions}
    by_source: dict[str, list[Session]] = {}
    for s in sessions:
        by_source.setdefault(s.t.source, []).append(s)
    defaults = {src: {"tokens": round(statistics.median(hidden[id(s)].fixed for s in ms)),
                      "rate": round(statistics.median(hidden[id(s)].rate for s in ms)), "sessions": len(ms),
                      "min": min(hidden[id(s)].fixed for s in ms), "max": max(hidden[id(s)].fixed for s in ms)}
                for src, ms in sorted(by_source.items())}
    report: dict[str, Any] = {}
    for src, ms in sorted(by_source.items()):
        raw = {id(s): pairs(s.t, s.counter) for s in ms}
        pooled = round(statistics.median(r - c for s in ms for r, c in raw[id(s)]))
        e: dict[str, list[float]] = {k: [] for k in ("pooled", "uncorrected", "corrected", "loo")}
        for s in ms:
            e["pooled"] += errors(raw[id(s)], pooled)
            e["uncorrected"] += errors(raw[id(s)], own_overhead(raw[id(s)]))
            e["corrected"] += errors(corrected[id(s)], overheads[id(s)])
            held_out = _corrected(s, _correction(s.family, held[id(s)]))
            e["loo"] += errors(held_out, own_overhead(held_out))
        report[src] = {"families": sorted({s.family for s in ms}), "sessions": len(ms),
                       "calls": sum(len(s.rec) for s in ms), "pooled_overhead": pooled,
                       **{k: _stats(v) for k, v in e.items() if v},
                       "overhead": _overhead_errors(ms, corrected, overheads, counters, hidden, held)}
    return {"regenerate": REGENERATE, "tokenizer": DEFAULT_TOKENIZER, "message_overhead": DEFAULT_MESSAGE_OVERHEAD,
            "model": "recorded = overhead(session) + factor x counted + reasoning x thinking + media; "
                     "fitted per family: min mean over sessions of the median relative error",
            "overhead_model": "recorded = fixed + rate x counted (compbench.measure.overhead): fixed from the "
                              "session's first call, rate its own; defaults: medians over the agent's sessions",
            "families": families, "overhead_defaults": defaults, "errors": report}


def _overhead_errors(ms: Sequence[Session], corrected: dict[int, list[tuple[int, int]]], overheads: dict[int, int],
                     counters: dict[int, TokenCounter], hidden: dict[int, Overhead],
                     held: dict[int, tuple[float, float] | None]) -> dict[str, Any]:
    """The hidden-overhead errors of one agent's sessions, first call (one per session) and every call:
    ``median`` the former constant overhead; ``fitted`` the run's model; ``half`` its rate fitted on each
    session's first half of calls, the errors on the second half; ``default_loo`` a session without usage:
    the agent's fixed part and rate from its other sessions, its family's correction fitted without it."""
    e: dict[str, list[float]] = {}

    def add(key: str, errs: Sequence[float], first: bool = True) -> None:
        if first:
            e.setdefault(f"{key}_first", []).append(errs[0])
        e.setdefault(f"{key}_calls", []).extend(errs)

    for s in ms:
        add("median", errors(corrected[id(s)], overheads[id(s)]))
        o = hidden[id(s)]
        counter = counters[id(s)]
        add("fitted", errors(pairs(s.t, rated(counter, o.rate)), o.fixed))
        ps = corrected[id(s)]
        half = len(ps) // 2
        if half >= 2:
            rate = min(max(growth_rate(ps[:half]) or UNIT, RATE_RANGE[0]), RATE_RANGE[1])
            first_half = pairs(s.t, rated(counter, rate))
            add("half", errors(first_half, max(0, first_half[0][0] - first_half[0][1]))[half:], first=False)
        rest = [hidden[id(x)] for x in ms if x is not s]
        if rest:
            loo = s.counter.with_correction(_correction(s.family, held[id(s)]))
            rate = round(statistics.median(x.rate for x in rest))
            add("default_loo", errors(pairs(s.t, rated(loo, rate)), round(statistics.median(x.fixed for x in rest))))
    return {k: _stats(v) for k, v in sorted(e.items())} | {
        "flagged": [f"{s.file}: {hidden[id(s)].flag}" for s in ms if hidden[id(s)].flag]}


def fit_paths(paths: Sequence[str]) -> dict[str, Any]:
    return fit_sessions(list(read(paths)))


def table_lines(data: dict[str, Any]) -> list[str]:
    """The before/after table per agent: median and p90 of the per-call relative error."""
    cols = ("pooled", "uncorrected", "corrected", "loo")
    out = [f"{'agent':<16}{'family':<9}{'sessions':>9}{'calls':>7}" + "".join(f"{c:>16}" for c in cols)]
    for src, r in data["errors"].items():
        cells = "".join(f"{r[c]['median']:>8.1%}{r[c]['p90']:>8.1%}" if c in r else f"{'-':>16}" for c in cols)
        out.append(f"{src:<16}{','.join(r['families']):<9}{r['sessions']:>9}{r['calls']:>7}{cells}")
    for f, e in data["families"].items():
        what = f"factor {e['factor']:.3f}, reasoning {e['reasoning']:.2f}" if e["fitted"] else f"none ({e['why']})"
        out.append(f"{f}: {what}; {e['sessions']} sessions, {e['calls']} calls")
    hidden = ("median_first", "median_calls", "fitted_first", "fitted_calls", "half_calls", "default_loo_first",
              "default_loo_calls")
    out += ["", "hidden overhead, median and p90 of the relative error (first call: one per session)",
            f"{'agent':<16}" + "".join(f"{c:>20}" for c in hidden)]
    for src, r in data["errors"].items():
        o = r["overhead"]
        out.append(f"{src:<16}" + "".join(f"{o[c]['median']:>10.1%}{o[c]['p90']:>10.1%}" if c in o else f"{'-':>20}"
                                          for c in hidden))
        out += [f"  flagged {x}" for x in o["flagged"]]
    return out


def main(argv: Sequence[str]) -> int:
    if not argv:
        print(REGENERATE, file=sys.stderr)
        return 2
    data = fit_paths(argv)
    DATA.parent.mkdir(parents=True, exist_ok=True)
    DATA.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for line in table_lines(data):
        print(line)
    print(f"-> {DATA}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
