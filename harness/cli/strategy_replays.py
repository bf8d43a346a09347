"""``compbench.cli.strategy_replays`` — The checks of ``compbench strategies check`` that read the strategy's replays of
the samples (the static ones are in :mod:`compbench.cli.strategy_check`).

* **acts** — it changes the view on at least one sample; if it never does, how far the samples' contexts reached
  (a note: a trigger beyond the samples is not wrong);
* **window** — it sends calls over the window (a real API refuses such a call) where a smaller view would have
  fit, more than 1% of a condition's calls (:data:`OVER`): a warning with the figures (how many calls, on which
  samples, how many ``none`` sends, whether it had acted right before them). A call whose newest messages alone
  are over the window (a 70,000-token tool output at a 32,000-token window) is over it in any view that holds
  them (:class:`Newest` replays that floor): counted, never warned;
* **frequency** — it does not compact at most of the calls from its first compaction on (a summary request, or
  a new view that breaks the prompt cache, at nearly every call is a loop): a warning with the figures;
* **wake** — the tables a run writes are the same with and without its ``wake``;
* **actions only** — it never changes what it is shown, and answers each hook with what the hook returns.

A warning is not a failure (the command exits 0): a baseline that never summarizes sends calls over the window
by design, and OpenHands' recent-events condenser cuts the view at every call. The figures say which it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from compbench.sdk import Action, Compact, Keep, SessionView, Transcript, Usage
from compbench.sdk.protocols import asking_every_question, capabilities, stages_of
from compbench.sdk.registry import Configured
from compbench.sdk.session import ModelLimits

SHOWN = 4  # detail lines per check
MOST = 0.5  # "compacts on most calls": more than this share of the calls from its first compaction on
# calls over the window that a view could fit, as a share of a condition's calls, past which it warns. At the small
# window the samples hold turns recorded at 200k windows that cross 32k between two calls: the summarizing tools'
# own strategies (OpenCode, Codex, Claude Code, pi, Crush's go-replace) send 0 to 4 of the samples' 1,238 calls over
# it where a view would fit (0.3%; none at the samples' own windows); a trigger past the window sends hundreds
# (anthropic-compaction 646, round-chained 634).
OVER = 0.01
FEWEST_CALLS = 10  # fewer calls from the first compactions on are too few to call it most

Status = Literal["ok", "warn", "fail", "note"]
Conditions = list[tuple[str, ModelLimits | None]]


@dataclass(frozen=True)
class Finding:
    """One check's outcome: ``summary`` in a line, ``details`` below it (the first few)."""

    check: str
    status: Status
    summary: str
    details: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        out = [f"  {self.status:<5} {self.check:<13} {self.summary}"]
        out += [f"{'':<21}{d}" for d in self.details[:SHOWN]]
        if len(self.details) > SHOWN:
            out.append(f"{'':<21}... and {len(self.details) - SHOWN} more")
        return out


@dataclass(frozen=True)
class Replayed:
    """One sample's replay, in the figures these checks read (from the tables a run writes)."""

    transcript: str
    calls: int
    over_at: tuple[int, ...]  # the calls over the window: a real API would have refused them
    acted_before: tuple[int, ...]  # the calls right after an action of its own changed the view
    none_over: int  # the calls ``none`` sends over the same window
    window: int
    peak: int  # the largest call's input
    compactions: int
    prunes: int
    compacted_at: tuple[int, ...] = ()  # the calls at which an applied compaction happened, in order
    floor_at: tuple[int, ...] = ()  # the calls over the window whatever the view (:class:`Newest`)

    @property
    def over(self) -> int:
        return len(self.over_at)

    @property
    def avoidable(self) -> tuple[int, ...]:
        """The calls over the window whose newest messages alone would have fit it."""
        floor = set(self.floor_at)
        return tuple(k for k in self.over_at if k not in floor)

    @property
    def unanswered(self) -> tuple[int, ...]:
        """Of :attr:`avoidable`, the calls it let through without acting right before them."""
        acted = set(self.acted_before)
        return tuple(k for k in self.avoidable if k not in acted)

    @classmethod
    def of(cls, transcript: str, tables: Mapping[str, Any], floor_at: Sequence[int] = ()) -> Replayed:
        """From one transcript's tables (``compbench.testing.tables``): its ``results`` row, the calls over the
        window and those right after the view changed (a new epoch), the calls of its applied compactions;
        ``floor_at`` from :func:`floor`."""
        r = tables["results"].records()[0]
        steps = tables["steps"].columns
        c = tables["compactions"].columns if len(tables["compactions"]) else {"step": [], "ok": []}
        at = tuple(sorted({int(s) for s, ok in zip(c["step"], c["ok"], strict=True) if ok}))
        over = tuple(k for k, o in enumerate(steps["overflow"]) if o)
        epochs = [0, *steps["epoch"]]
        acted = tuple(k for k in range(len(steps["epoch"])) if epochs[k + 1] != epochs[k])
        return cls(transcript, int(r["steps"]), over, acted, int(r["reference_overflows"]), int(r["window"]),
                   int(r["peak_context"]), int(r["compactions"]), int(r["prunes"]), at, tuple(floor_at))


class Newest:
    """The floor of the window check: whenever the context is over the window, a view of the system prompt and the
    messages since the last reply only (what any view must hold for the next call to answer them). A call over the
    window with this view is over it with every view that keeps its newest messages."""

    name = "newest-only"

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if s.context_tokens <= s.limits.input_limit:
            return ()
        entries = s.entries
        last = max((i for i, e in enumerate(entries) if e.role == "assistant"), default=-1)
        kept = [e for e in entries[:last + 1] if e.role == "system"] + list(entries[last + 1:])
        if len(kept) == len(entries):
            return ()
        return (Compact("the newest messages only", tuple(Keep(e.id) for e in kept)),)

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()


def floor(t: Transcript, limits: ModelLimits | None) -> tuple[int, ...]:
    """The calls of ``t`` over the window even in the smallest view (:class:`Newest`), as a run replays ``t``."""
    from compbench.testing import replay

    return tuple(k for k, step in enumerate(replay(Newest(), t, limits=limits).steps) if step.overflow)


Replays = Mapping[str, Sequence[Replayed]]  # per condition ("at their own windows", ...), a replay per sample


def check_acts(replays: Replays, n: int) -> Finding:
    """Where it acted, or how far the samples' contexts went."""
    said, acted_anywhere, peaks = [], False, []
    for condition, rows in replays.items():
        acting = [r for r in rows if r.compactions + r.prunes > 0]
        acted_anywhere |= bool(acting)
        made = sum(r.compactions for r in rows), sum(r.prunes for r in rows)
        said.append(f"{len(acting)} of {n} {condition} ({count(made[0], 'compaction')}, {count(made[1], 'prune')})")
        top = max(rows, key=lambda r: r.peak)
        peaks.append(f"{condition}: the contexts peak at {top.peak:,} tokens ({top.transcript}, a {top.window:,}-token "
                     "window)")
    if acted_anywhere:
        return Finding("acts", "ok", "acted on " + "; ".join(said))
    return Finding("acts", "note", f"never acted on the {n} samples: its triggers are never reached there",
                   tuple(peaks))


def check_window(replays: Replays) -> Finding:
    """A warning when more than :data:`OVER` of a condition's calls are over the window where a view of their newest
    messages would have fit, with the figures per condition, the worst samples, and whether it had acted right before
    those calls."""
    said, details, warned = [], [], False
    for condition, rows in replays.items():
        over = [r for r in rows if r.over]
        calls, n_over = sum(r.calls for r in rows), sum(r.over for r in rows)
        if not over:
            said.append(f"none of {count(calls, 'call')} {condition}")
            continue
        avoidable, unanswered = sum(len(r.avoidable) for r in rows), sum(len(r.unanswered) for r in rows)
        said.append(f"{n_over:,} of {calls:,} {condition}, on {len(over)} of {len(rows)} samples, "
                    f"{n_over - avoidable:,} of them in any view (none sends {sum(r.none_over for r in rows):,})")
        if avoidable <= OVER * calls:
            continue
        warned = True
        details += [f"{condition}, {r.transcript}: {r.over:,} of {count(r.calls, 'call')} over its {r.window:,}-token "
                    f"window, the largest {r.peak:,} tokens; {len(r.avoidable):,} a view would fit, from call "
                    f"{r.avoidable[0]:,} (none sends {r.none_over:,})"
                    for r in sorted(over, key=lambda r: (-len(r.avoidable), r.transcript))[:2] if r.avoidable]
        if unanswered:
            details.append(f"{condition}: {unanswered:,} with no action of its own right before: a trigger past the "
                           "window, or a context that crossed it in one turn (s.limits.input_limit is the largest "
                           "prompt the API accepts)")
        if avoidable > unanswered:
            details.append(f"{condition}: {avoidable - unanswered:,} right after it acted: what it kept does not fit "
                           "the window")
    verdict = f"more than {OVER:.0%}" if warned else f"at most {OVER:.0%}"
    return Finding("window", "warn" if warned else "ok",
                   f"over the window: {'; '.join(said)}: {verdict} of the calls where a view would fit", tuple(details))


def check_frequency(replays: Replays) -> Finding:
    """A warning when, over a condition's samples, it compacted at most of the calls from each sample's first
    compaction on (counted over at least :data:`FEWEST_CALLS` such calls)."""
    said, details, warned = [], [], False
    for condition, rows in replays.items():
        acting = [r for r in rows if r.compacted_at]
        if not acting:
            continue
        at = sum(len(r.compacted_at) for r in acting)
        since = sum(r.calls - r.compacted_at[0] for r in acting)
        said.append(f"{at:,} of {since:,} {condition}")
        if since >= FEWEST_CALLS and at > MOST * since:
            warned = True
            worst = sorted(acting, key=lambda r: (-len(r.compacted_at) / max(1, r.calls - r.compacted_at[0]),
                                                  r.transcript))[:2]
            details += [f"{condition}, {r.transcript}: at {len(r.compacted_at):,} of "
                        f"{count(r.calls - r.compacted_at[0], 'call')} from call {r.compacted_at[0]:,} on"
                        for r in worst]
    if not said:
        return Finding("frequency", "ok", "never compacted on the samples")
    head = f"compacted at, of the calls from its first compaction on: {'; '.join(said)}"
    if warned:
        return Finding("frequency", "warn", f"{head}: most calls (a compaction every call breaks the prompt cache, a "
                                            "summary every call costs one more)", tuple(details))
    return Finding("frequency", "ok", f"{head}: at most half")


def check_wake(woken: Mapping[str, Sequence[tuple[str, Any]]], asked: Mapping[str, Sequence[tuple[str, Any]]],
               has_wake: bool) -> Finding:
    from compbench.testing import table_differences

    if not has_wake:
        return Finding("wake", "note", "no wake: asked before and after every step (a replay costs a question per "
                                       "step; see compbench.sdk.Wakeful)")
    diffs = [f"{condition}, {tid}: {d}" for condition in woken
             for (tid, w), (_, a) in zip(woken[condition], asked[condition], strict=True)
             for d in table_differences(a, w, ("asked every question", "with its wake"))]
    if diffs:
        return Finding("wake", "fail", "not exact: the tables differ asked every question (a wake came too late, or "
                                       "the strategy keeps state from questions it was not asked)", tuple(diffs))
    return Finding("wake", "ok", f"exact: the same tables asked every question ({', '.join(woken)})")


def check_actions(c: Configured, data: Sequence[Any], conditions: Conditions) -> Finding:
    from compbench.testing import untouched

    problems = [p for _, limits in conditions for p in untouched(c, data, limits=limits)]
    if problems:
        return Finding("actions only", "fail", "it changed what it was shown instead of answering with actions",
                       tuple(dict.fromkeys(problems)))
    return Finding("actions only", "ok", "every hook answered with actions; the view and the messages untouched")


def replayed(c: Configured, data: Sequence[Any], conditions: Conditions) -> list[Finding]:
    """The checks on the tables a run writes: acts, window, frequency, wake."""
    from compbench.testing import tables

    has_wake = any("wake" in capabilities(s) for s in stages_of(c.create()))
    woken = {name: tables(c, data, limits=limits) for name, limits in conditions}
    asked: dict[str, list[tuple[str, Any]]] = {}
    if has_wake:
        with asking_every_question():
            asked = {name: tables(c, data, limits=limits) for name, limits in conditions}
    floors = {name: [floor(t, limits) if any(tb["steps"].columns["overflow"]) else () for t, (_, tb)
                     in zip(data, woken[name], strict=True)] for name, limits in conditions}
    replays = {name: [Replayed.of(tid, t, f) for (tid, t), f in zip(rows, floors[name], strict=True)]
               for name, rows in woken.items()}
    return [check_acts(replays, len(data)), check_window(replays), check_frequency(replays),
            check_wake(woken, asked, has_wake)]


def count(n: int, word: str) -> str:
    return f"{n:,} {word}{'s' * (n != 1)}"
