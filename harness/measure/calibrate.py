"""``compbench.measure.calibrate`` — Calibration: compbench's token counts against the prompt sizes real APIs recorded.

For every assistant message with recorded usage, the recorded prompt (``Usage.input``, cached tokens
included) is compared with what compbench counts for the context before that call: the sum of the
message counts of all earlier messages. Only calls whose context is fully recorded count: a transcript
stops at its first recorded compaction (after it the tool's context is a summary we cannot see), and
messages the importer marks as compaction machinery (``meta["compaction"]``) are skipped.

The system prompt and tool schemas are not in the transcripts, so every call's prompt is larger than
our count by a roughly fixed amount: each transcript's own *overhead*, the median of (recorded −
counted) over its calls (:func:`overhead_for`, what ``run --system-tokens auto`` adds). A call's relative
error is ``|counted + overhead − recorded| / recorded``: how far a replay is from the real prompt size.
Counted with a model family's correction (:mod:`compbench.measure.correction`) as a run counts, and without.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from compbench.data.transcript import Transcript
from compbench.measure.tokens import DEFAULT_MESSAGE_OVERHEAD, DEFAULT_TOKENIZER, TOKENIZERS, TokenCounter


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
    family's correction (each session with its own overhead), and with the format's shipped default
    overhead instead of its own (a transcript that recorded no usage)."""

    source: str
    family: str
    correction: str
    sessions: int
    calls: int
    raw_median: float
    raw_p90: float
    median_error: float
    p90_error: float
    overhead: int  # the median over sessions of each session's own overhead, corrected counts
    default: int | None  # the shipped default overhead of the format
    default_median: float | None
    default_p90: float | None


@dataclass(frozen=True)
class Calibration:
    rows: list[CalibrationRow]
    corrections: list[CorrectionRow] = field(default_factory=list)


def pairs(t: Transcript, counter: TokenCounter) -> list[tuple[int, int]]:
    """(recorded prompt, counted context) for each fully recorded call of ``t``."""
    limit = min((c.index for c in t.compactions), default=len(t.messages))
    counts = counter.index(t).message_tokens
    out: list[tuple[int, int]] = []
    running = 0
    for i, m in enumerate(t.messages[:limit]):
        if m.meta.get("compaction"):
            continue
        if m.role == "assistant" and m.usage is not None and m.usage.input > 0:
            out.append((m.usage.input, running))
        running += counts[i]
    return out


def own_overhead(ps: Sequence[tuple[int, int]]) -> int:
    """A session's hidden overhead from its calls: median(recorded − counted), never negative."""
    return max(0, round(statistics.median(r - c for r, c in ps)))


def overhead_for(t: Transcript, counter: TokenCounter) -> tuple[int, str]:
    """``t``'s hidden overhead (system prompt, tool schemas) in ``counter``'s tokens, and where it comes from:
    calibrated on its own fully recorded calls where the API recorded usage, else its agent's shipped
    default (the median of the real sessions the corrections were fitted on), else 0.

    Pass the counter the run counts ``t`` with (``TokenCounter.scoped(t)``: corrected for its family)."""
    ps = pairs(t, counter)
    if ps:
        return own_overhead(ps), f"calibrated on {len(ps)} recorded call{'s' * (len(ps) != 1)}"
    from compbench.measure.correction import overhead_default

    default = overhead_default(t.source)
    if default is not None:
        return default
    return 0, f"no recorded usage, and no {t.source} default: 0"


def errors(ps: Sequence[tuple[int, int]], overhead: int) -> list[float]:
    return [abs(c + overhead - r) / r for r, c in ps]


def p90(xs: Sequence[float]) -> float:
    """Nearest-rank 90th percentile: the ceil(0.9·n)-th smallest value (an observed value, no interpolation)."""
    s = sorted(xs)
    return s[max(0, math.ceil(0.9 * len(s)) - 1)]


class _Group:
    """The running figures of one row: errors of every call, one overhead per session."""

    def __init__(self) -> None:
        self.errors: list[float] = []
        self.overheads: list[int] = []
        self.raw: list[float] = []
        self.default: list[float] = []

    def add(self, ps: Sequence[tuple[int, int]]) -> None:
        oh = own_overhead(ps)
        self.overheads.append(oh)
        self.errors += errors(ps, oh)


def calibrate(transcripts: Iterable[Transcript], tokenizers: Sequence[str] = TOKENIZERS,
              message_overhead: int = DEFAULT_MESSAGE_OVERHEAD) -> Calibration:
    """Rows per tokenizer (in the order given) and source format (sorted), and the correction rows
    of the default tokenizer, from one pass over ``transcripts``: only errors and overheads are kept, so
    a streamed dataset stays streamed, and the corrected counts reuse the tokenizer's (arithmetic)."""
    from compbench.measure.correction import correction_for, family_of, overhead_default, recorded_model

    counters = [TokenCounter(name, message_overhead) for name in tokenizers]
    groups: dict[tuple[str, str], _Group] = {}
    fixes: dict[tuple[str, str], tuple[str, _Group]] = {}
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
            label, g = fixes.setdefault((t.source, family_of(recorded_model(t)) or "unknown"),
                                        (correction.label if correction else "none", _Group()))
            fixed = pairs(t, counter.with_correction(correction)) if correction else ps
            g.add(fixed)
            g.raw += errors(ps, own_overhead(ps))
            default = overhead_default(t.source)
            if default is not None:
                g.default += errors(fixed, default[0])
    order = {name: i for i, name in enumerate(tokenizers)}
    rows = [CalibrationRow(tok, source, len(g.errors), float(statistics.median(g.overheads)),
                           statistics.median(g.errors), p90(g.errors), len(g.overheads))
            for (tok, source), g in sorted(groups.items(), key=lambda kv: (order[kv[0][0]], kv[0][1]))]
    out = []
    for (source, family), (label, g) in sorted(fixes.items()):
        default = overhead_default(source)
        out.append(CorrectionRow(
            source, family, label, len(g.overheads), len(g.errors), statistics.median(g.raw), p90(g.raw),
            statistics.median(g.errors), p90(g.errors), round(statistics.median(g.overheads)),
            default[0] if default else None, statistics.median(g.default) if g.default else None,
            p90(g.default) if g.default else None))
    return Calibration(rows, out)
