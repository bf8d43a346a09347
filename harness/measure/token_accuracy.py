"""``compbench.measure.token_accuracy`` — How accurate our token counts are: against the prompt sizes real APIs
recorded (``datasets inspect --calibrate``).

For every assistant message with recorded usage, the recorded prompt (``Usage.input``, cached tokens
included) is compared with what compbench counts for the context before that call: the sum of the
message counts of all earlier messages. Only calls whose context is fully recorded count: a transcript
stops at its first recorded compaction (after it the tool's context is a summary we cannot see), and
messages the importer marks as compaction machinery (``meta["compaction"]``) are skipped.

The system prompt and tool schemas are not in the transcripts, so every call's prompt is larger than our
count. The tokenizer and correction tables give each session a constant overhead, the median of
(recorded − counted) over its calls (:func:`own_overhead`), to isolate the counting error; a run models the
hidden prompt as a fixed part and a part that grows (:mod:`compbench.measure.overhead`), and the overhead
rows compare the two on the first call and on every call. A call's relative error is ``|counted +
overhead − recorded| / recorded``. Counted with a model family's correction (:mod:`compbench.measure.token_correction`)
as a run counts, and without.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from compbench.data.transcript import Transcript
from compbench.measure.tokens import DEFAULT_MESSAGE_OVERHEAD, DEFAULT_TOKENIZER, TOKENIZERS, TokenCounter
from compbench.measure.usage import errors, own_overhead, p90, pairs


@dataclass(frozen=True, slots=True)
class CalibrationRow:
    """One tokenizer on one source format, uncorrected: calls, sessions, overhead, error distribution."""

    tokenizer: str
    source: str
    calls: int
    overhead: float  # the median over sessions of each session's own overhead
    median_error: float
    p90_error: float
    sessions: int = 0


@dataclass(frozen=True, slots=True)
class CorrectionRow:
    """One source format and model family under the default tokenizer: errors without and with the
    family's correction, each session with its own constant overhead (the counting error alone)."""

    source: str
    family: str
    correction: str
    sessions: int
    calls: int
    raw_median: float
    raw_p90: float
    median_error: float
    p90_error: float
    overhead: int  # the median over sessions of each session's own constant overhead, corrected counts


@dataclass(frozen=True, slots=True)
class Spread:
    """Median and 90th percentile of relative errors."""

    median: float
    p90: float

    @classmethod
    def of(cls, xs: Sequence[float]) -> Spread | None:
        return cls(statistics.median(xs), p90(xs)) if xs else None


@dataclass(frozen=True, slots=True)
class OverheadRow:
    """One source format, counted as a run counts it: the error of the first call (one per session) and of
    every call, under the former constant overhead (the session's median), the run's model (a fixed part
    and a growth rate, :mod:`compbench.measure.overhead`), and the agent's shipped defaults instead of the
    session's own (a transcript that recorded no usage)."""

    source: str
    sessions: int
    calls: int
    fixed: int  # the median over sessions of each session's fixed part
    rate: int  # the median over sessions of each session's growth rate, per mille
    median_first: Spread
    median_calls: Spread
    first: Spread
    calls_error: Spread
    default_first: Spread | None
    default_calls: Spread | None
    flagged: tuple[str, ...]  # "<transcript>: <why>" of the sessions whose fit is flagged


@dataclass(frozen=True)
class Calibration:
    rows: list[CalibrationRow]
    corrections: list[CorrectionRow] = field(default_factory=list)
    overheads: list[OverheadRow] = field(default_factory=list)










class _Group:
    """The running figures of one row: errors of every call, one overhead per session."""

    def __init__(self) -> None:
        self.errors: list[float] = []
        self.overheads: list[int] = []
        self.raw: list[float] = []

    def add(self, ps: Sequence[tuple[int, int]]) -> None:
        oh = own_overhead(ps)
        self.overheads.append(oh)
        self.errors += errors(ps, oh)


class _Overheads:
    """The running figures of one overhead row."""

    def __init__(self) -> None:
        self.fixed: list[int] = []
        self.rates: list[int] = []
        self.calls = 0
        self.errors: dict[str, list[float]] = {k: [] for k in ("median_first", "median_calls", "first", "calls",
                                                               "default_first", "default_calls")}
        self.flagged: list[str] = []

    def add(self, t: Transcript, counter: TokenCounter, ps: Sequence[tuple[int, int]]) -> None:
        from compbench.measure.overhead import fit, rated
        from compbench.measure.token_correction import overhead_default

        e = self.errors
        old = errors(ps, own_overhead(ps))
        e["median_first"].append(old[0])
        e["median_calls"] += old
        o, session = fit(t, counter)
        self.fixed.append(o.fixed)
        self.rates.append(o.rate)
        self.calls += o.calls
        e["first"].append(o.first_error)
        e["calls"] += errors(pairs(t, session), o.fixed)
        if o.flag:
            self.flagged.append(f"{t.id}: {o.flag}")
        default = overhead_default(t.source)
        if default is not None:
            dflt = errors(pairs(t, rated(counter, default[1])), default[0])
            e["default_first"].append(dflt[0])
            e["default_calls"] += dflt

    def row(self, source: str) -> OverheadRow:
        e = self.errors

        def spread(key: str) -> Spread:
            s = Spread.of(e[key])
            assert s is not None  # every session adds to these
            return s

        return OverheadRow(source, len(self.fixed), self.calls, round(statistics.median(self.fixed)),
                           round(statistics.median(self.rates)), spread("median_first"), spread("median_calls"),
                           spread("first"), spread("calls"), Spread.of(e["default_first"]),
                           Spread.of(e["default_calls"]), tuple(self.flagged))


def calibrate(transcripts: Iterable[Transcript], tokenizers: Sequence[str] = TOKENIZERS,
              message_overhead: int = DEFAULT_MESSAGE_OVERHEAD) -> Calibration:
    """Rows per tokenizer (in the order given) and source format (sorted), and the correction and overhead
    rows of the default tokenizer, from one pass over ``transcripts``: only errors and overheads are kept,
    so a streamed dataset stays streamed, and the corrected counts reuse the tokenizer's (arithmetic)."""
    from compbench.measure.token_correction import correction_for, family_of, recorded_model

    counters = [TokenCounter(name, message_overhead) for name in tokenizers]
    groups: dict[tuple[str, str], _Group] = {}
    fixes: dict[tuple[str, str], tuple[str, _Group]] = {}
    hidden: dict[str, _Overheads] = {}
    for t in transcripts:
        for base in counters:
            counter = base.scoped()
            ps = pairs(t, counter)
            if not ps:
                continue
            groups.setdefault((base.tokenizer, t.source), _Group()).add(ps)
            if base.tokenizer != DEFAULT_TOKENIZER:
                continue
            correction = correction_for(t, base.tokenizer)
            _, g = fixes.setdefault((t.source, family_of(recorded_model(t)) or "unknown"),
                                    (correction.label if correction else "none", _Group()))
            run_counter = counter.with_correction(correction) if correction else counter
            fixed = pairs(t, run_counter) if correction else ps
            g.add(fixed)
            g.raw += errors(ps, own_overhead(ps))
            hidden.setdefault(t.source, _Overheads()).add(t, run_counter, fixed)
    order = {name: i for i, name in enumerate(tokenizers)}
    rows = [CalibrationRow(tok, source, len(g.errors), float(statistics.median(g.overheads)),
                           statistics.median(g.errors), p90(g.errors), len(g.overheads))
            for (tok, source), g in sorted(groups.items(), key=lambda kv: (order[kv[0][0]], kv[0][1]))]
    out = [CorrectionRow(source, family, label, len(g.overheads), len(g.errors), statistics.median(g.raw),
                         p90(g.raw), statistics.median(g.errors), p90(g.errors), round(statistics.median(g.overheads)))
           for (source, family), (label, g) in sorted(fixes.items())]
    return Calibration(rows, out, [h.row(src) for src, h in sorted(hidden.items())])
