"""Calibration: compbench's token counts against the prompt sizes real APIs recorded.

For every assistant message with recorded usage, the recorded prompt (``Usage.input``, cached tokens
included) is compared with what compbench counts for the context before that call: the sum of the
message counts of all earlier messages. Only calls whose context is fully recorded count: a transcript
stops at its first recorded compaction (after it the tool's context is a summary we cannot see), and
messages the importer marks as compaction machinery (``meta["compaction"]``) are skipped.

The system prompt and tool schemas are not in the transcripts, so every call's prompt is larger than
our count by a roughly fixed amount. Per tokenizer and source format, the median of (recorded − counted)
is reported as that estimated fixed overhead, and each call's relative error is
``|counted + overhead − recorded| / recorded``: how far off a replay that adds the overhead as
``system_tokens`` would be on the real prompt size.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from compbench.tokens import DEFAULT_MESSAGE_OVERHEAD, TOKENIZERS, TokenCounter
from compbench.transcript import Transcript


@dataclass(frozen=True, slots=True)
class CalibrationRow:
    """One tokenizer on one source format: how many calls, the overhead, the error distribution."""

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
    out: list[tuple[int, int]] = []
    running = 0
    for i, m in enumerate(t.messages[:limit]):
        if m.meta.get("compaction"):
            continue
        if m.role == "assistant" and m.usage is not None and m.usage.input > 0:
            out.append((m.usage.input, running))
        running += counts[i]
    return out


def p90(xs: Sequence[float]) -> float:
    """Nearest-rank 90th percentile: the ceil(0.9·n)-th smallest value (an observed value, no interpolation)."""
    s = sorted(xs)
    return s[max(0, math.ceil(0.9 * len(s)) - 1)]


def summarize(tokenizer: str, source: str, ps: Sequence[tuple[int, int]]) -> CalibrationRow:
    """The row for one group of (recorded, counted) pairs; ``ps`` must not be empty."""
    overhead = statistics.median(r - c for r, c in ps)
    errors = [abs(c + overhead - r) / r for r, c in ps]
    return CalibrationRow(tokenizer, source, len(ps), float(overhead), statistics.median(errors), p90(errors))


def calibrate(transcripts: Iterable[Transcript], tokenizers: Sequence[str] = TOKENIZERS,
              message_overhead: int = DEFAULT_MESSAGE_OVERHEAD) -> list[CalibrationRow]:
    """Rows per tokenizer (in the order given) and source format (sorted), from one pass over
    ``transcripts``: only the (recorded, counted) pairs are kept, so a streamed dataset stays streamed."""
    counters = [TokenCounter(name, message_overhead) for name in tokenizers]
    groups: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for t in transcripts:
        for counter in counters:
            ps = pairs(t, counter)
            if ps:
                groups.setdefault((counter.tokenizer, t.source), []).extend(ps)
    order = {name: i for i, name in enumerate(tokenizers)}
    return [summarize(tok, source, ps)
            for (tok, source), ps in sorted(groups.items(), key=lambda kv: (order[kv[0][0]], kv[0][1]))]


# Per-agent hidden overhead (system prompt + tool schemas, o200k_base tokens): the median of recorded −
# counted over the fully recorded calls of ../shared/transcripts (`datasets inspect --calibrate`).
AGENT_OVERHEAD = {"claude-code": 35_550, "codex": 4_688, "mini-swe-agent": 2_288, "opencode": 16_753, "pi": 30_122}


def overhead_for(t: Transcript, counter: TokenCounter) -> tuple[int, str]:
    """A transcript's hidden overhead and where it comes from: its own recorded usage (median of recorded −
    counted over its fully recorded calls), else its agent's default, else none known (0)."""
    ps = pairs(t, counter)
    if ps:
        return max(0, round(statistics.median(r - c for r, c in ps))), f"calibrated on {len(ps)} recorded calls"
    if t.source in AGENT_OVERHEAD:
        return AGENT_OVERHEAD[t.source], f"{t.source} default (median over ../shared/transcripts)"
    return 0, f"no recorded usage and no default for {t.source}: 0"
