"""``compbench.measure.overhead`` — A session's hidden prompt, in two parts: a fixed part and a part that grows.

A real call's prompt holds more than the transcript: the system prompt and tool schemas (and, for Claude
Code, CLAUDE.md and memory injections, the first turn's reminders), sent unchanged on every call — the
*fixed* part — and content that grows with the conversation: what the log omits around each turn
(system reminders appended to tool results, file-change notices, tool-call framing), and the drift between
our count and the provider's tokenizer on this session's text. Per fully recorded call ``k`` (see
:func:`compbench.measure.token_accuracy.pairs`)::

    recorded_k ≈ fixed + rate × counted_k

``rate`` is the session's own: the weighted median of the slopes ``(recorded_k − recorded_0) / (counted_k
− counted_0)`` (each weighted by ``(counted_k − counted_0) / recorded_k``: the least absolute relative
error of a line through the first call), in per mille. The replay counts the session's messages at
that rate (its counter's correction times the rate: the growing part lives in the messages it came with,
so a compaction that drops a message drops its share, and a summary is counted at the session's rate).
``fixed`` is then the first recorded call's prompt minus its counted context at that rate: never above
the first recorded prompt, never negative.

The former model took the median of (recorded − counted) over the session as one fixed overhead: the
median absorbed the growth, overstated every early call and every call after a compaction (on held-out
Claude Code sessions a first call was simulated a median 204% above the recorded one).

A session without recorded usage takes its agent's defaults (the medians of the real sessions the shipped
corrections were fitted on, :mod:`compbench.measure.token_fit`). A fit whose errors stay large, a rate at
its bounds, or a first call far above its agent's usual fixed part (a session whose file lacks the history
it continues) is flagged, in words.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from compbench.data.transcript import Transcript
from compbench.measure.token_correction import Correction
from compbench.measure.tokens import TokenCounter
from compbench.measure.usage import errors, p90, pairs

UNIT = 1000  # rates in per mille
RATE_RANGE = (500, 2000)  # beyond these a session's count is not the text it sent: clamped and flagged
POOR_MEDIAN = 0.03  # the goal per call (issue 26): a session whose median error exceeds it is flagged
POOR_P90 = 0.10
# a first call whose fixed part exceeds the agent's usual one this many times (and by this many tokens)
# carries more than a system prompt: history the file lacks (a heuristic)
INHERITED_TIMES = 2.5
INHERITED_TOKENS = 10_000


@dataclass(frozen=True, slots=True)
class Overhead:
    """A session's hidden prompt and how well it describes the recorded calls.

    ``fixed``: tokens every call carries beyond the transcript; ``rate``: the session's count is scaled by
    ``rate / 1000``; ``source``: where both come from, in words; the errors are the model's against the
    recorded prompts (NaN without recorded calls); ``flag``: why the figures rest on a poor fit ('' if not).
    """

    fixed: int
    rate: int
    source: str
    calls: int = 0
    first_error: float = math.nan
    median_error: float = math.nan
    p90_error: float = math.nan
    flag: str = ""
    # of ``fixed``, the history a file that starts mid-conversation lacks (a heuristic split: what exceeds the
    # agent's usual fixed part); a run replays it as a leading message, which a compaction removes like any other
    inherited: int = 0


def _weighted_median(values: Sequence[float], weights: Sequence[float]) -> float:
    """The lower weighted median (deterministic: ties broken by the value)."""
    pairs_ = sorted(zip(values, weights, strict=True))
    half = sum(weights) / 2
    acc = 0.0
    for v, w in pairs_:
        acc += w
        if acc >= half:
            return v
    return pairs_[-1][0]


def growth_rate(ps: Sequence[tuple[int, int]]) -> int | None:
    """The per-mille rate at which the recorded prompt grows per counted token, from the line through the
    first call (None: no later call with more counted context than the first)."""
    r0, c0 = ps[0]
    slopes, weights = [], []
    for r, c in ps[1:]:
        x = c - c0
        if x > 0:
            slopes.append((r - r0) / x)
            weights.append(x / r)
    if not slopes:
        return None
    return round(_weighted_median(slopes, weights) * UNIT)


def rated(counter: TokenCounter, rate: int) -> TokenCounter:
    """``counter`` with the session's rate on top of its correction (the tokenizer's counts are shared)."""
    if rate == UNIT:
        return counter
    c = counter.correction
    session = (Correction(c.family, round(c.factor * rate / UNIT), round(c.reasoning * rate / UNIT)) if c
               else Correction("session", rate))
    return counter.with_correction(session)


# The hidden prompt of tools whose logs hold no system prompt and record no usage to fit one on: what the tool
# sends before the conversation, measured from its source at the commit named (o200k tokens). A lower bound where
# the tool's schemas could not be counted. SWE-agent is not here: its trajectories hold its system prompt and tool
# documentation in their history (0 is right there); aider's LLM history holds the system prompt (the table
# applies only to a transcript that starts without a system message).
SOURCE_PROMPTS: dict[str, tuple[int, str]] = {
    "crush": (7_193, "Crush's coder.md.tpl and its default tools' descriptions (charmbracelet/crush 37f36e9; tool "
                     "schemas not counted)"),
    "aider": (2_417, "aider's edit-block prompts with its examples (aider/coders/editblock_prompts.py and "
                     "base_prompts.py, Aider-AI/aider 5dc9490bb35f: 1,393 + 544) and the default 1,024-token repo map"),
    "goose": (1_820, "Goose's system.md (block/goose 7f4da30d: 7,643 characters at ~4.2 a token; extension "
                     "instructions and tool schemas not counted)"),
    "gemini-cli": (3_217, "Gemini CLI's rendered system prompt (packages/core/src/core/__snapshots__/"
                          "prompts.test.ts.snap, google-gemini/gemini-cli v0.20.0 b05fb545ef; tool declarations not "
                          "counted)"),
    "roo-code": (10_100, "Roo Code's system prompt and native tool definitions (the consistent-system-prompt "
                         "snapshot and src/core/prompts/tools/native-tools, RooCodeInc/Roo-Code cb83656718)"),
    "kilo-code": (10_100, "Roo Code's system prompt and native tool definitions (Kilo Code legacy forks it; "
                          "RooCodeInc/Roo-Code cb83656718)"),
    "cline": (12_434, "Cline's system prompt with its tools, for Claude Sonnet 4 (the anthropic_claude_sonnet_4-basic "
                      "snapshot, cline/cline 9ee618111d58)"),
}

Default = tuple[int, int, str] | None  # an agent's (fixed, rate, sentence), or none
SHIPPED = object()  # fit()'s default: the agent's shipped defaults


def fit(t: Transcript, counter: TokenCounter, defaults: Default | object = SHIPPED) -> tuple[Overhead, TokenCounter]:
    """``t``'s hidden prompt in ``counter``'s tokens (the run's: ``TokenCounter.scoped(t)``), and the counter
    a replay of ``t`` counts with (the session's rate applied). ``defaults``: its agent's (fixed, rate,
    sentence), the shipped ones unless given (the fit of the shipped ones passes None)."""
    from compbench.measure.token_correction import overhead_default

    ps = pairs(t, counter)
    default = overhead_default(t.source) if defaults is SHIPPED else defaults
    assert default is None or isinstance(default, tuple)
    if not ps:
        source_prompt = SOURCE_PROMPTS.get(t.source)
        if (defaults is SHIPPED and default is None and source_prompt is not None
                and not (t.messages and t.messages[0].role == "system")):
            tokens, what = source_prompt
            return Overhead(tokens, UNIT, f"no recorded usage and no system prompt in the log: {what}, "
                                          f"{tokens:,} tokens"), counter
        if default is None:
            return Overhead(0, UNIT, f"no recorded usage, and no {t.source} default: 0"), counter
        fixed, rate, sentence = default
        return Overhead(fixed, rate, sentence), rated(counter, rate)
    own = growth_rate(ps)
    flags = []
    if own is None:
        rate = default[1] if default else UNIT
        how = f"growth x{rate / UNIT:.3f} ({'its agent default' if default else 'none'}: one recorded call)"
    else:
        rate = min(max(own, RATE_RANGE[0]), RATE_RANGE[1])
        how = f"growth x{rate / UNIT:.3f} per counted token"
        if rate != own:
            flags.append(f"its prompt grows x{own / UNIT:.2f} per counted token (clamped to x{rate / UNIT:.2f}): "
                         "the log does not hold what it sent")
    session = rated(counter, rate)
    ps = pairs(t, session)
    r0, c0 = ps[0]
    fixed = max(0, r0 - c0)
    errs = errors(ps, fixed)
    median, high = statistics.median(errs), p90(errs)
    inherited = bool(t.meta.get("starts_mid_chain"))
    usual = default[0] if default else 0
    lacked = 0
    if inherited or (usual and fixed > INHERITED_TIMES * usual and fixed - usual > INHERITED_TOKENS):
        why = "its file starts mid-conversation" if inherited else f"{t.source}'s usual fixed part is {usual:,}"
        lacked = max(0, fixed - usual)
        flags.append(f"its first call carries {fixed:,} tokens beyond its counted context ({why}): history its file "
                     f"lacks, {lacked:,} of them replayed as a leading message a compaction can remove")
    if median > POOR_MEDIAN or high > POOR_P90:
        flags.append(f"the overhead fit stays poor: median error {median:.1%}, p90 {high:.1%} over {len(ps)} calls")
    n = len(ps)
    source = f"fixed from the first of {n} recorded call{'s' * (n != 1)}, {how}"
    return Overhead(fixed, rate, source, n, errs[0], median, high, "; ".join(flags), lacked), session


INHERITED_ID = "inherited-history"  # the id of the stand-in for the history a file lacks


def inherited_history(t: Transcript, tokens: int, counter: TokenCounter) -> Transcript:
    """``t`` with a leading user message standing in for the ``tokens`` of history its file lacks (counted by
    ``counter`` at about that size): part of what a compaction removes, not an overhead every call keeps."""
    from dataclasses import replace

    from compbench.data.transcript import Message, Text

    if tokens <= 0:
        return t
    head = f"[the conversation before this file: about {tokens:,} tokens the log does not hold]\n"
    lo, hi = 0, 4 * tokens + 8
    while lo < hi:  # the fewest repetitions that count at least ``tokens``
        mid = (lo + hi) // 2
        if counter.count_text(head + "earlier " * mid) >= tokens:
            hi = mid
        else:
            lo = mid + 1
    text = head + "earlier " * lo
    message = Message(INHERITED_ID, "user", (Text(text),), None, {"synthetic": True, "inherited_history": tokens})
    return replace(t, messages=(message, *t.messages))
