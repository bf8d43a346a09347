"""``compbench.measure.usage`` — compbench's counts against the prompt sizes real APIs recorded, call by call.

For every assistant message with recorded usage, the recorded prompt (``Usage.input``, cached tokens
included) against what compbench counts for the context before that call. Only calls whose context is fully
recorded count: a transcript stops at its first recorded compaction (after it the tool's context is a
summary we cannot see), and messages the importer marks as compaction machinery are skipped. The accuracy
tables (:mod:`compbench.measure.token_accuracy`), the hidden overhead (:mod:`compbench.measure.overhead`) and
the correction fit (:mod:`compbench.measure.token_fit`) all start from these pairs.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from compbench.data.transcript import Transcript
from compbench.measure.tokens import TokenCounter


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


def errors(ps: Sequence[tuple[int, int]], overhead: int) -> list[float]:
    return [abs(c + overhead - r) / r for r, c in ps]


def p90(xs: Sequence[float]) -> float:
    """Nearest-rank 90th percentile: the ceil(0.9·n)-th smallest value (an observed value, no interpolation)."""
    s = sorted(xs)
    return s[max(0, math.ceil(0.9 * len(s)) - 1)]
