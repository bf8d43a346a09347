"""Calibration: compbench's token counts against the prompt sizes real APIs recorded.

For every assistant message with recorded usage, the recorded prompt (``Usage.input``) is compared with
what compbench counts for the context before that call: the sum of the counts of all earlier messages.
Only calls whose context is fully recorded count (a transcript stops at its first recorded compaction).
The system prompt and tool schemas are not in transcripts, so the median of (recorded − counted) is
reported as the estimated fixed overhead and the relative error is measured after subtracting it.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from compbench.tokens import TokenCounter
from compbench.transcript import Transcript


@dataclass(frozen=True)
class CalibrationRow:
    tokenizer: str
    source: str
    calls: int
    overhead: float
    median_error: float
    p90_error: float


def pairs(t: Transcript, counter: TokenCounter) -> list[tuple[int, int]]:
    """(recorded prompt, counted context) for each fully recorded call of ``t``."""
    limit = min((c.index for c in t.compactions), default=len(t.messages))
    counts = counter.index(t).message_tokens
    out, running = [], 0
    for i, m in enumerate(t.messages[:limit]):
        if m.meta.get("compaction"):
            continue
        if m.role == "assistant" and m.usage is not None and m.usage.input > 0:
            out.append((m.usage.input, running))
        running += counts[i]
    return out


def _quantile(xs: Sequence[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]


def calibrate(transcripts: Iterable[Transcript], tokenizers: Sequence[str],
              message_overhead: int = 4) -> list[CalibrationRow]:
    ts = list(transcripts)
    rows = []
    for name in tokenizers:
        counter = TokenCounter(name, message_overhead)
        by_source: dict[str, list[tuple[int, int]]] = {}
        for t in ts:
            by_source.setdefault(t.source, []).extend(pairs(t, counter))
        for source, ps in sorted(by_source.items()):
            if not ps:
                continue
            overhead = statistics.median(r - c for r, c in ps)
            errs = [abs(c + overhead - r) / r for r, c in ps]
            rows.append(CalibrationRow(name, source, len(ps), overhead, statistics.median(errs), _quantile(errs, 0.9)))
    return rows
