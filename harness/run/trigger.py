"""``compbench.run.trigger`` — Does the tool's own strategy compact where the log shows the tool did? Checked on every
transcript of every run, before anything is advised on it.

Advice about a tool's setting rests on a replay of that tool's strategy on the user's logs: if the strategy at
the log's preset does not fire where the tool fired, a change of its threshold predicts nothing. So each real
*automatic* compaction the log records is replayed as ``compbench fidelity`` does — from the tool's state after
the one before (:func:`compbench.data.recorded.segment`), the strategy shown the usage the API recorded — and
the strategy's first compaction is compared with the real one, in model calls (within
:data:`WITHIN` calls agrees). A compaction the user asked for (``/compact``, or one recorded without a trigger
below what the tool compacts at by itself) is counted apart: it is part of *as it ran*, never evidence for or
against an automatic threshold. A log without per-call usage (Crush, Goose) cannot place a trigger and is
counted as unchecked.

Where the strategy misses, or where the tool's own model table does not know the model's window, the window is
calibrated from the log's own automatic compactions (:func:`calibrate`): the window with which the strategy's
own formula fires at the calls the tool fired at. The log wins over a table (DESIGN: "where the log's
compactions contradict the table, the log wins and the results say so").

Each check replays a segment only up to :data:`WITHIN` + 1 calls past the real compaction, with the extractive
summarizer (the trigger does not depend on what a summary says), so a transcript costs about one replay of
one configuration, and a calibration a few dozen of those truncated segments.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from compbench.data.recorded import segment
from compbench.data.transcript import RecordedCompaction, Transcript
from compbench.measure.tokens import TokenCounter
from compbench.replay.trajectories import replay
from compbench.replay.viewstate import ReplayConfig
from compbench.sdk.events import CompactionEvent
from compbench.sdk.registry import Configured, get, own_strategy
from compbench.sdk.session import ModelLimits
from compbench.summarizers import Summarizer

WITHIN = 2  # calls: a strategy's compaction this close to the tool's agrees with it (fidelity's measure)
# the windows a calibration searches (tokens); a figure is rounded to CALIBRATION_STEP
LOWEST_WINDOW, HIGHEST_WINDOW, CALIBRATION_STEP = 4_096, 4_000_000, 256


def main_compaction(events: Iterable[CompactionEvent], phase: str | None = None) -> CompactionEvent | None:
    """A strategy's first applied compaction (of ``phase``), not counting Goose's one-pair summaries: those are
    its own, smaller mechanism, never what the tool's recorded compaction is compared with."""
    return next((e for e in events if e.ok and e.meta.get("kind") != "tool-pair"
                 and (phase is None or e.phase == phase)), None)


def position(ev: CompactionEvent) -> int:
    """Model calls completed before the compaction: one in step k's after-hook (pi's seed) comes after k + 1
    calls, one in its before-hook (Claude Code, Codex, OpenCode, today's pi) after k."""
    return ev.step + 1 if ev.phase == "after" else ev.step


def steps_before(t: Transcript, index: int) -> int:
    """Model calls recorded before message ``index`` (the tool's own summary calls not counted)."""
    return sum(1 for m in t.messages[:index] if m.role == "assistant" and not m.meta.get("compaction"))


def manual_reason(t: Transcript, rc: RecordedCompaction, limits: ModelLimits) -> str:
    """Why a compaction recorded without a trigger was a user's ``/compact`` (below what the tool compacts at by
    itself, as its strategy's ``manual_compaction`` says), or ""."""
    own = own_strategy(t.source)
    declared = get(own).tool if own is not None else None
    if rc.trigger != "unknown" or not rc.tokens_before or not limits.context_window or declared is None:
        return ""
    why = declared.manual_compaction
    return str(why(rc.tokens_before, limits.context_window)) if why is not None else ""


def is_manual(t: Transcript, rc: RecordedCompaction, limits: ModelLimits) -> bool:
    return rc.trigger == "manual" or bool(manual_reason(t, rc, limits))


@dataclass(frozen=True)
class Point:
    """One real automatic compaction the strategy is compared with: where it is in its segment."""

    n: int  # which compaction of the transcript
    seg: Transcript  # the transcript as the tool saw it after the compaction before, cut after the comparison
    real: int  # model calls before it in its segment


@dataclass(frozen=True)
class TriggerCheck:
    """A transcript's real compactions, split by kind, and how many automatic ones the tool's own strategy
    lands within :data:`WITHIN` calls of (``offsets``: its first compaction minus the real one, in calls, per
    checked compaction; None: it never compacted there)."""

    automatic: int = 0  # real automatic compactions (or recorded without a trigger the tool could have made)
    manual: int = 0  # asked for by the user, or below what the tool compacts at by itself
    unchecked: int = 0  # automatic, but the log holds no usage to place a trigger with
    offsets: tuple[int | None, ...] = ()

    @property
    def checked(self) -> int:
        return len(self.offsets)

    @property
    def within(self) -> int:
        return sum(1 for d in self.offsets if d is not None and abs(d) <= WITHIN)

    @property
    def early(self) -> int:
        return sum(1 for d in self.offsets if d is not None and d < -WITHIN)

    @property
    def late(self) -> int:
        return sum(1 for d in self.offsets if d is None or d > WITHIN)

    def columns(self, prefix: str = "trigger") -> dict[str, Any]:
        return {"auto_compactions": self.automatic, "manual_compactions": self.manual,
                "unchecked_compactions": self.unchecked, f"{prefix}_checked": self.checked,
                f"{prefix}_within": self.within, f"{prefix}_early": self.early, f"{prefix}_late": self.late}


def points(t: Transcript, limits: ModelLimits) -> tuple[list[Point], TriggerCheck]:
    """The real automatic compactions a trigger can be compared with, each in its segment cut
    :data:`WITHIN` + 1 calls after it; and the counts of every kind (offsets empty)."""
    from compbench.run.missing_usage import per_call_usage

    own = own_strategy(t.source)
    declared = get(own).tool if own is not None else None
    if declared is None or not t.compactions:
        return [], TriggerCheck()
    placeable = per_call_usage(t) or declared.own_count
    out: list[Point] = []
    automatic = manual = unchecked = 0
    for n, rc in enumerate(t.compactions):
        if is_manual(t, rc, limits):
            manual += 1
            continue
        automatic += 1
        seg = segment(t, n)[0]
        first = seg.compactions[0]
        measurable = declared.own_count or first.tokens_before is not None or any(
            m.usage for m in seg.messages[:first.index])
        if not placeable or not measurable or rc.meta.get("history_in_file") is False:
            unchecked += 1
            continue
        real = steps_before(seg, first.index)
        out.append(Point(n, _cut(seg, first.index, WITHIN + 1), real))
    return out, TriggerCheck(automatic, manual, unchecked)


def _cut(t: Transcript, index: int, calls: int) -> Transcript:
    """``t`` up to ``calls`` model calls recorded after message ``index``: what deciding "within" needs."""
    seen = 0
    for i in range(index, len(t.messages)):
        m = t.messages[i]
        if m.role == "assistant" and not m.meta.get("compaction"):
            seen += 1
            if seen > calls:
                return replace(t, messages=t.messages[:i + 1])
    return t


def offset(p: Point, own: Configured, config: ReplayConfig, counter: TokenCounter,
           summarizer: Summarizer) -> int | None:
    """The strategy's first automatic compaction on ``p``'s segment minus the real one, in calls (None: none)."""
    trace = replay(p.seg, own.create(), summarizer, replace(config, manual_at=None), counter)
    ev = main_compaction(trace.compactions)
    return None if ev is None else position(ev) - p.real


def check(t: Transcript, own: Configured, config: ReplayConfig, counter: TokenCounter,
          summarizer: Summarizer, found: tuple[list[Point], TriggerCheck] | None = None) -> TriggerCheck:
    """``t``'s :class:`TriggerCheck` for ``own`` (the tool's strategy as it replays ``t``) at ``config``."""
    pts, counts = found if found is not None else points(t, config.limits)
    return replace(counts, offsets=tuple(offset(p, own, config, counter, summarizer) for p in pts))


def with_window(limits: ModelLimits, window: int) -> ModelLimits:
    """``limits`` at another window; a separate input limit moves by as much (it is the window less a reserve)."""
    shift = window - limits.context_window
    return ModelLimits(window, limits.max_output,
                       None if limits.max_input is None else max(1, limits.max_input + shift))


@dataclass(frozen=True)
class Calibration:
    """The window with which the tool's strategy fires where the log's automatic compactions show the tool did,
    and the check at it."""

    window: int
    check: TriggerCheck
    before: TriggerCheck  # at the table's window


def calibrate(t: Transcript, own: Configured, config: ReplayConfig, counter: TokenCounter, summarizer: Summarizer,
              found: tuple[list[Point], TriggerCheck], before: TriggerCheck) -> Calibration | None:
    """The window that makes the strategy's first compaction land at the real one on each checked compaction.

    The strategy's first compaction moves later as the window grows (every tool's threshold is a share of the
    window, or the window less a reserve), so per compaction a bisection finds the windows that place it
    exactly: from the smallest that does not fire before the real call to the smallest that fires after it.
    The windows common to every compaction are taken (their middle, rounded); where none is common, the median
    of each compaction's own. None when no window in the searched range places any compaction, or the
    calibration does no better than the table."""
    pts = found[0]
    if not pts:
        return None

    def at(p: Point, window: int) -> int | None:
        c = replace(config, limits=with_window(config.limits, window), manual_at=None)
        return offset(p, own, c, counter, summarizer)

    def smallest(p: Point, reaches: int) -> int | None:
        """The smallest window at which the first compaction comes no earlier than ``reaches`` calls from the
        real one (never compacting counts as later than any)."""
        def late_enough(w: int) -> bool:
            d = at(p, w)
            return d is None or d >= reaches
        lo, hi = LOWEST_WINDOW, HIGHEST_WINDOW
        if late_enough(lo):
            return lo
        if not late_enough(hi):
            return None
        while hi - lo > CALIBRATION_STEP:
            mid = (lo + hi) // 2
            if late_enough(mid):
                hi = mid
            else:
                lo = mid
        return hi

    spans: list[tuple[int, int]] = []
    for p in pts:
        a = smallest(p, 0)
        if a is None:
            continue
        b = smallest(p, 1)
        spans.append((a, b if b is not None else HIGHEST_WINDOW))
    if not spans:
        return None
    lo, hi = max(a for a, _ in spans), min(b for _, b in spans)
    if lo < hi:
        window = (lo + hi) // 2
    else:
        mids = sorted((a + b) // 2 for a, b in spans)
        window = mids[len(mids) // 2]
    window = max(LOWEST_WINDOW, round(window / CALIBRATION_STEP) * CALIBRATION_STEP)
    after = check(t, own, replace(config, limits=with_window(config.limits, window)), counter, summarizer, found)
    if after.within <= before.within:
        return None
    return Calibration(window, after, before)
