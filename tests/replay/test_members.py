"""The loop's hooks for tools that look at their summary: a follow-up that replaces the answer it checks
(Gemini CLI's verification turn), a strategy's ``accept`` rejecting a compaction once its summary is
known, and prune marks that belong to a compaction (they apply only with it)."""

from __future__ import annotations

from collections.abc import Sequence

from compbench.data.transcript import Message, Text, Usage
from compbench.measure.tokens import TokenCounter
from compbench.replay.members import Member
from compbench.replay.trajectories import replay_together
from compbench.replay.viewstate import ReplayConfig
from compbench.sdk.session import (
    PREVIOUS_ANSWER,
    Action,
    Compact,
    Followup,
    Insert,
    Keep,
    ModelLimits,
    SessionView,
    SummaryRequest,
)
from compbench.summarizers import SummaryResult
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user


def session():  # type: ignore[no-untyped-def]
    return transcript(system("sys", "s" * 40), user("u1", "u" * 40), assistant("a1", "a" * 4, [("c1", "bash", {})]),
                      tool("t1", "c1", "o" * 400), assistant("a2", "b" * 8), user("u2", "v" * 40),
                      assistant("a3", "c" * 8))


class Once:
    """Compacts before step 2 with the action ``make`` builds; ``verdict`` is what ``accept`` answers."""

    name = "once"

    def __init__(self, make: object, verdict: str | None = None) -> None:
        self.make, self.verdict = make, verdict
        self.asked: list[str] = []

    def before_step(self, s: SessionView) -> Sequence[Action]:
        return self.make(s) if s.step == 2 else ()  # type: ignore[operator]

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def accept(self, a: Compact, summary: str) -> str | None:
        self.asked.append(summary)
        return self.verdict


def compaction(followups: tuple[Followup, ...] = (), prune: tuple[tuple[str, int, str], ...] = ()):  # type: ignore[no-untyped-def]
    def make(s: SessionView) -> list[Action]:
        req = SummaryRequest("sum", s.rendered(), s.rendered(1, 4))
        view = (Keep("sys"), Insert("user", with_summary=True, origin="summary"), Keep("t1"), Keep("a2"), Keep("u2"))
        return [Compact("auto", view, req, followups=followups, prune=prune)]
    return make


def verification() -> Followup:
    slot = Message("answer", "assistant", (Text(""),), meta={PREVIOUS_ANSWER: True})
    return Followup(SummaryRequest("sum", (slot, Message("v", "user", (Text("check it"),))), ()), replaces=True)


def test_a_replacing_followup_sees_the_answer_and_takes_its_place(chars4: TokenCounter) -> None:
    answers = iter(["first answer", "checked answer"])
    summ = MockSummarizer(lambda r: next(answers))
    tr = run(session(), Once(compaction((verification(),))), chars4, summarizer=summ)
    ev = tr.compactions[0]
    assert ev.ok and ev.summary == "checked answer"
    assert summ.requests[1].prompt[0].text == "first answer"  # written into the marked slot
    # both requests are paid for: 'sum' (1) + the 4 view messages (10+10+3+100+2+10 with u2) ...
    assert ev.summarizer_output == len("first answer") // 4 + len("checked answer") // 4 + 1


def test_a_blank_replacing_answer_keeps_the_first(chars4: TokenCounter) -> None:
    answers = iter(["first answer", "  \n"])
    tr = run(session(), Once(compaction((verification(),))), chars4, summarizer=MockSummarizer(lambda r: next(answers)))
    assert tr.compactions[0].summary == "first answer"


def test_replacing_followup_latencies_add_up(chars4: TokenCounter) -> None:
    class Timed(MockSummarizer):
        def summarize(self, request: SummaryRequest) -> SummaryResult:
            self.requests.append(request)
            return SummaryResult("x", latency_ms=100.0 * len(self.requests))

    tr = run(session(), Once(compaction((verification(),))), chars4, summarizer=Timed())
    assert tr.compactions[0].latency_ms == 300.0
    joined = Followup(SummaryRequest("sum", (), ()), "\n")
    tr = run(session(), Once(compaction((joined,))), chars4, summarizer=Timed())
    assert tr.compactions[0].latency_ms == 200.0 and tr.compactions[0].summary == "x\nx"


def test_accept_rejects_after_the_summary_view_unchanged_cost_recorded(chars4: TokenCounter) -> None:
    strat = Once(compaction(), verdict="too large")
    tr = run(session(), strat, chars4, summarizer=MockSummarizer("the summary"))
    ev = tr.compactions[0]
    assert strat.asked == ["the summary"]
    assert not ev.ok and ev.error == "too large" and ev.summary == ""
    assert ev.summarizer_output > 0 and ev.tokens_after == ev.tokens_before
    assert tr.final_view == ("sys", "u1", "a1", "t1", "a2", "u2", "a3")


def test_accept_is_not_asked_when_the_summary_failed(chars4: TokenCounter) -> None:
    strat = Once(compaction(), verdict=None)
    tr = run(session(), strat, chars4, summarizer=MockSummarizer(error="boom"))
    assert strat.asked == [] and tr.compactions[0].error == "boom"


def test_compaction_prune_marks_apply_with_the_new_view_only(chars4: TokenCounter) -> None:
    marks = (("t1", 0, "[cut]"),)
    tr = run(session(), Once(compaction(prune=marks)), chars4, summarizer=MockSummarizer("s" * 8))
    ev = tr.compactions[0]
    assert ev.ok and tr.prunes == ()  # part of the compaction, not a prune event
    # new view: sys 10 + summary 2 + t1 as '[cut]' 2 + a2 2 + u2 10
    assert ev.tokens_after == 10 + 2 + 2 + 2 + 10
    rejected = run(session(), Once(compaction(prune=marks), verdict="no"), chars4, summarizer=MockSummarizer("s"))
    assert rejected.steps[2].input == rejected.steps[1].input + 2 + 10  # t1 still whole


def test_a_follower_that_judges_otherwise_is_replayed_again_by_itself(chars4: TokenCounter) -> None:
    """A follower that rejects the summary its leader accepts cannot fork at a question: it is replayed
    again from the start, from a fresh instance, and its trace is its own."""
    leader, same, other = Once(compaction()), Once(compaction()), Once(compaction(), verdict="no")
    fresh: list[Once] = []

    def again() -> Once:
        fresh.append(Once(compaction(), verdict="no"))
        return fresh[-1]

    out = replay_together(session(), Member(0, leader), [Member(1, same), Member(2, other, again)],
                          MockSummarizer("s"), ReplayConfig(ModelLimits(128_000, 4_096)), chars4)
    assert same.asked == ["s"] and other.asked == ["s"] and [x.asked for x in fresh] == [["s"]]
    assert out[0][0] is out[1][0] and out[0][0].compactions[0].ok
    alone = run(session(), Once(compaction(), verdict="no"), chars4, summarizer=MockSummarizer("s"))
    assert out[2][0] == alone and not alone.compactions[0].ok
