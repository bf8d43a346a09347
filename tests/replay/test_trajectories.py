"""The loop applies strategy actions to the view and accounts for them as a real API would."""

from __future__ import annotations

from collections.abc import Sequence

from compbench.data.transcript import Usage
from compbench.measure.tokens import TokenCounter
from compbench.replay.trajectories import replay
from compbench.replay.viewstate import ReplayConfig
from compbench.sdk.session import Action, Compact, Insert, Keep, Prune, SessionView, SummaryRequest
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user


class Scripted:
    """Acts once, before a given step, with a given action list."""

    name = "scripted"

    def __init__(self, at: int, make: object, phase: str = "before") -> None:
        self.at, self.make, self.phase = at, make, phase

    def before_step(self, s: SessionView) -> Sequence[Action]:
        return self.make(s) if self.phase == "before" and s.step == self.at else ()  # type: ignore[operator]

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return self.make(s) if self.phase == "after" and s.step == self.at else ()  # type: ignore[operator]


def session():  # type: ignore[no-untyped-def]
    return transcript(
        system("sys", "s" * 40),                                   # 10 tokens (chars4, no overhead)
        user("u1", "u" * 40),                                      # 10
        assistant("a1", "a" * 4, [("c1", "bash", {})]),            # 1 + ceil(len('bash{}')/4)=2 -> 3
        tool("t1", "c1", "o" * 400),                               # 100
        assistant("a2", "b" * 8),                                  # 2
        user("u2", "v" * 40),                                      # 10
        assistant("a3", "c" * 8),                                  # 2
    )


def test_prune_hides_output_and_breaks_cache_from_that_position(chars4: TokenCounter) -> None:
    strat = Scripted(2, lambda s: [Prune((("t1", 0, "[cleared]"),))])
    tr = run(session(), strat, chars4)
    _, s1, s2 = tr.steps
    assert s1.input == 10 + 10 + 3 + 100
    # after the prune t1 costs ceil(9/4) = 3 instead of 100; prefix before t1 (sys,u1,a1) stays cached
    assert s2.input == 10 + 10 + 3 + 3 + 2 + 10
    assert s2.cache_read == 23
    assert tr.prunes[0].parts == (("t1", 0),) and tr.prunes[0].tokens_hidden == 97


def test_compact_builds_new_view_counts_summarizer_and_records_event(chars4: TokenCounter) -> None:
    def compact(s: SessionView) -> list[Action]:
        req = SummaryRequest("sum it", s.rendered(), s.rendered(1), 50)
        return [Compact("auto", (Keep("sys"), Insert("user", "Summary: ", with_summary=True, origin="summary"),
                                 Keep("u2")), req)]

    summ = MockSummarizer("x" * 20)
    tr = run(session(), Scripted(2, compact), chars4, summarizer=summ)
    ev = tr.compactions[0]
    assert ev.ok and ev.step == 2 and ev.phase == "before"
    assert ev.kept_ids == ("sys", "u2")
    assert ev.replaced_ids == ("u1", "a1", "t1", "a2")
    assert ev.replaced_tokens == 10 + 3 + 100 + 2
    # summarizer input: system 'sum it' (2) + every message of the view (10+10+3+100+2+10), output 5
    assert (ev.summarizer_input, ev.summarizer_output) == (2 + 135, 5)
    assert tr.steps[2].input == 10 + ceil_div(len("Summary: ") + 20, 4) + 10
    assert tr.steps[2].cache_read == 10  # only the system message survived as a prefix
    assert tr.final_view == ("sys", "compbench:1:1:summary", "u2", "a3")
    assert tr.epochs[-1] == ("sys", "compbench:1:1:summary", "u2")


def test_failed_summary_leaves_view_unchanged(chars4: TokenCounter) -> None:
    def compact(s: SessionView) -> list[Action]:
        req = SummaryRequest("", s.rendered(), s.rendered())
        return [Compact("auto", (Insert("user", with_summary=True),), req)]

    tr = run(session(), Scripted(2, compact), chars4, summarizer=MockSummarizer(error="RateLimitError: 429"))
    ev = tr.compactions[0]
    assert not ev.ok and ev.error == "RateLimitError: 429"
    assert tr.final_view == ("sys", "u1", "a1", "t1", "a2", "u2", "a3")


def test_recorded_compaction_messages_are_skipped(chars4: TokenCounter) -> None:
    from dataclasses import replace

    t = session()
    marked = replace(t.messages[5], meta={"compaction": "summary"})
    t = replace(t, messages=(*t.messages[:5], marked, t.messages[6]))
    tr = run(t, Scripted(99, lambda s: []), chars4)
    assert "u2" not in tr.final_view and len(tr.steps) == 3


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def test_prefix_sums_match_brute_force() -> None:
    import random

    from compbench.replay.viewstate import PrefixSums

    rng = random.Random(5)
    values: list[int] = []
    sums = PrefixSums()
    for _ in range(2_000):
        op = rng.random()
        if op < 0.6 or not values:
            v = rng.randint(0, 1_000)
            values.append(v)
            sums.append(v)
        elif op < 0.9:
            k = rng.randrange(len(values))
            d = rng.randint(-values[k], 500)
            values[k] += d
            sums.add(k, d)
        else:
            values = [rng.randint(0, 9) for _ in range(rng.randint(0, 50))]
            sums.reset(values)
        n = rng.randint(0, len(values))
        assert sums.prefix(n) == sum(values[:n])


def test_manual_compaction_runs_where_asked_and_after_the_last_message(chars4: TokenCounter) -> None:
    """``manual_at`` asks the strategy's /compact before that message joins the view (or after the last
    one); strategies without a /compact are left alone. OpenCode's manual compaction adds no
    "Continue" message (``auto: false``)."""
    from compbench.sdk.session import ModelLimits
    from compbench.strategies import resolve

    t = transcript(system(), user("u1"), assistant("a1"), user("u2"), assistant("a2"), user("u3"), assistant("a3"))
    limits = ModelLimits(128_000, 4_096)
    for at, step in ((3, 1), (5, 2), (7, 3)):
        strategy = resolve("opencode:preset=seed").create()
        tr = replay(t, strategy, MockSummarizer("S"), ReplayConfig(limits, manual_at=at), chars4)
        (ev,) = tr.compactions
        assert (ev.phase, ev.reason, ev.step, ev.ok) == ("manual", "manual", step, True)
        assert set(ev.replaced_ids) == {m.id for m in t.messages[1:at]}
        rest = tuple(m.id for m in t.messages[at:])
        # system, marker, summary, then the recorded messages after the point: no "Continue" message
        assert tr.final_view[0] == "sys" and len(tr.final_view) == 3 + len(rest)
        assert tr.final_view[3:] == rest
    auto = replay(t, resolve("none").create(), MockSummarizer("S"), ReplayConfig(limits, manual_at=3), chars4)
    assert auto.compactions == ()


def test_a_failed_compaction_applies_its_fallback(chars4: TokenCounter) -> None:
    """Compact.fallback: the tool's own failure path (Roo Code's truncation after a failed condense)."""
    def make(s: SessionView) -> list[Action]:
        fallback = Compact("fallback", (Keep("sys"), Keep("u1"), Keep("a2")))
        return [Compact("summary", (Keep("sys"), Insert("user", with_summary=True, origin="summary")),
                        SummaryRequest("", (), s.rendered()), fallback=fallback)]

    tr = run(session(), Scripted(2, make), chars4, summarizer=MockSummarizer(error="down"))
    assert [(c.reason, c.ok, c.seq) for c in tr.compactions] == [("summary", False, 1), ("fallback", True, 2)]
    assert tr.final_view == ("sys", "u1", "a2", "a3")
    tr = run(session(), Scripted(2, make), chars4)
    assert [(c.reason, c.ok) for c in tr.compactions] == [("summary", True)]


def test_after_compaction_is_asked_right_after_each_compaction(chars4: TokenCounter) -> None:
    """CompactionFollowup: aider's next summary level is applied before anything else happens."""
    from compbench.sdk.events import CompactionEvent

    class Deeper(Scripted):
        def __init__(self) -> None:
            super().__init__(2, lambda s: [Compact("first", (Keep("sys"), Keep("u1"), Keep("a2")))])
            self.asked: list[str] = []

        def after_compaction(self, s: SessionView, event: CompactionEvent) -> Sequence[Action]:
            self.asked.append(event.reason)
            return [Compact("second", (Keep("sys"), Keep("a2")))] if event.reason == "first" else []

    strat = Deeper()
    tr = run(session(), strat, chars4)
    assert [(c.reason, c.step, c.phase) for c in tr.compactions] == [("first", 2, "before"), ("second", 2, "before")]
    assert strat.asked == ["first", "second"] and tr.final_view == ("sys", "a2", "a3")
