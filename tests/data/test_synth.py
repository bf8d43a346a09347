"""Synthetic sessions: deterministic, and deterministic retention checked against the planted truth."""

from __future__ import annotations

from collections.abc import Sequence

from compbench.data.synth import generate, session
from compbench.data.transcript import Usage, to_jsonl
from compbench.measure.facts.presence import FactIndex, PresenceTracker
from compbench.measure.facts.sources import facts_for
from compbench.measure.retention import evaluate
from compbench.measure.tokens import TokenCounter
from compbench.replay.trajectories import replay
from compbench.replay.viewstate import ReplayConfig
from compbench.sdk.session import Action, Compact, Insert, Keep, ModelLimits, SessionView, SummaryRequest
from compbench.strategies import resolve
from compbench.summarizers.mock import MockSummarizer


def test_same_seed_same_sessions_and_planted_kinds() -> None:
    a, b = list(generate(3, seed=5, turns=12)), list(generate(3, seed=5, turns=12))
    assert [to_jsonl(t) for t in a] == [to_jsonl(t) for t in b]
    assert to_jsonl(session(6, 0, 12)) != to_jsonl(a[0])
    kinds = sorted({f["kind"] for f in a[0].meta["planted_facts"]})
    assert kinds == ["artifact", "continuation", "decision", "recall"]


class SummarizeAt:
    name = "summarize-at"

    def __init__(self, at: int) -> None:
        self.at = at

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if s.step != self.at:
            return ()
        last_user = next(e.id for e in reversed(s.entries) if e.role == "user")
        return [Compact("test", (Keep(s.entries[0].id), Insert("user", with_summary=True, origin="summary"),
                                 Keep(last_user)), SummaryRequest("", s.rendered(), s.rendered()))]

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()


def planted_run(strategy: object, summary: str) -> tuple[dict[str, object], list[object], FactIndex,
                                                         PresenceTracker]:
    t = session(1, 0, turns=18)
    index = FactIndex.build(t, facts_for(t, derived=False))
    tracker = PresenceTracker(index)
    counter = TokenCounter("chars4", 0)
    trace = replay(t, strategy, MockSummarizer(summary), ReplayConfig(ModelLimits(10**7, 1000)), counter,  # type: ignore[arg-type]
                   None, tracker)
    row, events, _ = evaluate(t, trace, index, tracker, counter.index(t).part_tokens)
    return row, events, index, tracker  # type: ignore[return-value]


def test_keeping_everything_recalls_every_planted_need() -> None:
    row, events, index, tracker = planted_run(resolve("none").create(), "")
    # none never acts: no need is scored, and every need it met along the way was present
    assert row["needs_all"] and not row["needs"] and not events
    assert all(h.present for h in tracker.need_hits)
    assert {f.source for f in index.facts} == {"planted"}


def test_a_summary_missing_one_planted_fact_loses_exactly_it() -> None:
    t = session(1, 0, turns=18)
    planted = t.meta["planted_facts"]
    dropped = next(f for f in planted if f["kind"] == "recall" and f["meta"]["what"] == "error")
    summary = "\n".join(f["anchors"][0] for f in planted if f is not dropped)
    _, (ev,), _, _ = planted_run(SummarizeAt(10), summary)
    assert ev.lost == (dropped["id"],)  # type: ignore[attr-defined]
    n = len(planted)  # all planted facts are present before the event (none was pruned)
    assert ev.retention == (n - 1) / n  # type: ignore[attr-defined]
