"""The checks of ``compbench strategies check`` that read a strategy's replays (compbench.cli.strategy_replays): calls
over the window that a view could fit warn past 1% of the calls (1 of 100: ok, 2: a warning with the figures; a
call whose newest messages alone are over it is counted, never warned), and so does compacting at most calls from
the first compaction on (half: ok, one more: a warning; under 10 such calls: too few to say); a warning is not a
failure (exit 0). Hand-made replays for the boundaries, the samples for what the checks read from a run's tables."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from compbench.cli import strategy_check
from compbench.cli.strategy_replays import FEWEST_CALLS, Replayed, check_frequency, check_window, floor, replayed
from compbench.sdk import ModelLimits, Transcript, resolve
from compbench.sdk.registry import STRATEGIES
from compbench.testing import samples, tables

OWN = "at their own windows"


def replay(calls: int = 100, over: tuple[int, ...] = (), acted: tuple[int, ...] = (), floor: tuple[int, ...] = (),
           at: tuple[int, ...] = (), tid: str = "t1") -> Replayed:
    """A hand-made replay of ``calls`` calls: those ``over`` a 32,000-token window, those right after an action of
    its own (``acted``), those over it in any view (``floor``), its compactions at the calls ``at``."""
    return Replayed(tid, calls, over, acted, none_over=40, window=32_000, peak=40_000 if over else 30_000,
                    compactions=len(at), prunes=0, compacted_at=at, floor_at=floor)


# --- calls over the window -----------------------------------------------------------------------------------------

def test_no_call_over_the_window_is_ok() -> None:
    found = check_window({OWN: [replay(), replay(tid="t2")], "at 32,000 tokens": [replay(50)]})
    assert found.status == "ok" and found.details == ()
    assert found.summary == ("over the window: none of 200 calls at their own windows; none of 50 calls at 32,000 "
                             "tokens: at most 1% of the calls where a view would fit")


@pytest.mark.parametrize(("over", "status"), [((), "ok"), ((7,), "ok"), ((7, 8), "warn")])
def test_more_than_one_call_in_a_hundred_over_the_window_warns(over: tuple[int, ...], status: str) -> None:
    """100 calls: 1 over the window is 1%, the most a condition may send; 2 warn."""
    found = check_window({OWN: [replay(over=over)]})
    assert found.status == status
    assert (found.details == ()) is (status == "ok")


def test_a_warning_gives_the_figures() -> None:
    found = check_window({OWN: [replay(over=(7, 8, 9)), replay(tid="t2")]})
    assert found.status == "warn"
    assert found.summary == ("over the window: 3 of 200 at their own windows, on 1 of 2 samples, 0 of them in any "
                             "view (none sends 80): more than 1% of the calls where a view would fit")
    assert found.details == (
        "at their own windows, t1: 3 of 100 calls over its 32,000-token window, the largest 40,000 tokens; 3 a view "
        "would fit, from call 7 (none sends 40)",
        "at their own windows: 3 with no action of its own right before: a trigger past the window, or a context that "
        "crossed it in one turn (s.limits.input_limit is the largest prompt the API accepts)")


@pytest.mark.parametrize(("floor_at", "status"), [((7, 8, 9), "ok"), ((7, 8), "ok"), ((7,), "warn")])
def test_calls_over_the_window_in_any_view_are_counted_not_warned(floor_at: tuple[int, ...], status: str) -> None:
    """Calls whose newest messages alone are over the window: no view that holds them fits. Of 3 calls over it, 1
    that could fit is 1% of 100; 2 warn."""
    found = check_window({OWN: [replay(over=(7, 8, 9), floor=floor_at)]})
    assert found.status == status
    assert f", {len(floor_at)} of them in any view (none sends 40)" in found.summary


def test_calls_over_the_window_right_after_it_acted_say_what_it_kept_does_not_fit() -> None:
    found = check_window({OWN: [replay(over=(10, 11, 12), acted=(10, 11), at=(10, 11)), replay(tid="t2")],
                          "at 32,000 tokens": [replay()]})
    assert found.status == "warn" and "; none of 100 calls at 32,000 tokens: more than 1%" in found.summary
    assert found.details[1:] == (
        "at their own windows: 1 with no action of its own right before: a trigger past the window, or a context that "
        "crossed it in one turn (s.limits.input_limit is the largest prompt the API accepts)",
        "at their own windows: 2 right after it acted: what it kept does not fit the window")


# --- compacting at most calls ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("compacted", "status"), [(5, "ok"), (6, "warn")])
def test_compacting_at_most_calls_from_the_first_compaction_on_warns(compacted: int, status: str) -> None:
    """10 calls from the first compaction on (calls 90 to 99): at 5 of them is half, not most; at 6, most."""
    at = tuple(range(90, 90 + compacted))
    found = check_frequency({OWN: [replay(100, at=at), replay(tid="t2")]})
    assert found.status == status
    assert found.summary.startswith(f"compacted at, of the calls from its first compaction on: {compacted} of 10 at "
                                    "their own windows: ")
    if status == "warn":
        assert "most calls" in found.summary
        assert found.details == (f"at their own windows, t1: at {compacted} of 10 calls from call 90 on",)


@pytest.mark.parametrize(("calls", "status"), [(FEWEST_CALLS - 1, "ok"), (FEWEST_CALLS, "warn")])
def test_too_few_calls_from_the_first_compaction_on_say_nothing(calls: int, status: str) -> None:
    """A compaction at each of the last 9 calls: too few to call it most; at each of the last 10, most."""
    start = 100 - calls
    assert check_frequency({OWN: [replay(100, at=tuple(range(start, 100)))]}).status == status


def test_the_calls_are_counted_over_every_sample_of_a_condition() -> None:
    """A sample compacting at its only call after the first compaction (1 of 1) does not make most of 21."""
    found = check_frequency({OWN: [replay(100, at=(99,)), replay(100, at=(80, 90), tid="t2")]})
    assert found.status == "ok" and found.summary == ("compacted at, of the calls from its first compaction on: 3 of "
                                                      "21 at their own windows: at most half")
    assert check_frequency({OWN: [replay()]}).summary == "never compacted on the samples"


# --- from a run's tables, and through the command ----------------------------------------------------------------

@pytest.fixture(scope="module")
def claude() -> list[Transcript]:
    return [t for t in samples() if t.source == "claude-code"]


def test_a_replay_is_read_from_the_tables_a_run_writes(claude: list[Transcript]) -> None:
    limits = ModelLimits(32_000, 4_096)
    for tid, t in tables("truncate", claude, limits=limits):
        r, row = Replayed.of(tid, t), t["results"].records()[0]
        assert r.transcript == tid and r.calls == len(t["steps"]) == row["steps"] and r.window == 32_000
        assert r.over == sum(t["steps"].columns["overflow"]) == row["overflows"]
        assert len(r.compacted_at) == row["compactions"] and list(r.compacted_at) == sorted(set(r.compacted_at))
        assert all(0 <= s < r.calls for s in r.compacted_at)
        # a call right after an action starts a new epoch of the view: one per applied compaction here
        assert len(r.acted_before) == len(set(t["steps"].columns["epoch"])) - 1 == row["compactions"]
    for (tid, t), transcript in zip(tables("none", claude, limits=limits), claude, strict=True):
        r = Replayed.of(tid, t, floor(transcript, limits))
        assert r.over == r.none_over and r.acted_before == () and r.unanswered == r.avoidable
        assert set(r.floor_at) <= set(r.over_at)  # the smallest view is over the window only where none is
    floors = [floor(t, limits) for t in claude]
    overs = [Replayed.of(tid, t).over for tid, t in tables("none", claude, limits=limits)]
    assert sum(map(len, floors)) < sum(overs)  # most calls none sends over the window could fit


def test_the_floor_keeps_the_system_prompt_and_the_newest_messages_only() -> None:
    from compbench.testing import assistant, tool, transcript, user

    big = "word " * 30_000  # about 30,000 tokens
    t = transcript(user("u0", big), assistant("a0", calls=[("c0", "read", {"path": "a.py"})]), tool("t0", "c0", big),
                   assistant("a1", calls=[("c1", "read", {"path": "b.py"})]), tool("t1", "c1", "small"),
                   assistant("a2"), user("u1", big + big), assistant("a3"))
    # call 1: u0 and t0 (60,000 tokens) are over; its newest message, t0, fits. Call 2: t1 alone. Call 3: u1 alone
    # (60,000 tokens) is over the window in any view.
    assert floor(t, ModelLimits(32_000, 4_096)) == (3,)
    assert floor(t, ModelLimits(200_000, 4_096)) == ()


MODULE = '''
from dataclasses import dataclass
from compbench.sdk import Compact, Insert, Keep, SessionView, SummaryRequest, param, strategy


@dataclass(frozen=True)
class P:
    trigger: int = param(30_000, "Context tokens at which it compacts.")
    keep: int = param(6, "Messages kept.")


class S:
    name = "{name}"

    def __init__(self, p):
        self.p = p

    def before_step(self, s: SessionView):
        if s.context_tokens < self.p.trigger or len(s.entries) <= self.p.keep:
            return ()
        cut = len(s.entries) - self.p.keep
        return (Compact("over", (Insert("user", "Summary: ", with_summary=True, origin="summary"),
                                 *(Keep(e.id) for e in s.entries[cut:])),
                        SummaryRequest("Summarize.", s.rendered(), s.rendered(0, cut), 50)),)

    def after_step(self, s, u):
        return ()


@strategy("{name}", params=P, upstream="a test", summary="a hand-made strategy")
def make(p):
    return S(p)
'''


def test_a_strategy_past_the_window_and_one_compacting_every_call_warn(tmp_path: Path, claude: list[Transcript]
                                                                        ) -> None:
    """A trigger of a million tokens sends what ``none`` sends over a 32,000-token window, never acting; a trigger of
    one token with 2 messages kept compacts at nearly every call. Both warn; neither fails."""
    path = tmp_path / "warned.py"
    path.write_text(textwrap.dedent(MODULE).format(name="test-warned"))
    try:
        late = strategy_check.load(f"{path}:test-warned:trigger=1000000")
        found = {f.check: f for f in replayed(late, claude, [("at 32,000 tokens", ModelLimits(32_000, 4_096))])}
        window = found["window"]
        assert window.status == "warn" and found["frequency"].summary == "never compacted on the samples", window
        said = re.fullmatch(r"over the window: ([\d,]+) of [\d,]+ at 32,000 tokens, on \d of 3 samples, [\d,]+ of "
                            r"them in any view \(none sends \1\): more than 1% of the calls where a view would fit",
                            window.summary)
        assert said, window.summary  # it never acted: what none sends over the window
        assert "with no action of its own right before: a trigger past the window" in window.details[-1]
        eager = resolve("test-warned:trigger=1,keep=2")  # the module is imported: the name resolves
        found = {f.check: f for f in replayed(eager, claude, [(OWN, None)])}
        assert found["frequency"].status == "warn" and "most calls" in found["frequency"].summary
        assert found["acts"].status == "ok" and found["wake"].status == "note"
    finally:
        STRATEGIES.unregister("test-warned")
