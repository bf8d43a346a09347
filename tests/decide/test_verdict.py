"""Figures that hide what drives them (issue 26): the per-transcript median beside a pooled figure, one rule for the
verdict and the leaderboard, a pick on the edge of a bar, and the verdict per agent with the tool's own strategy.

Results are hand-made rows (a transcript × a strategy each) of the shapes that misled a user: three huge
transcripts carrying a pooled saving the typical transcript never sees, a sound strategy that saves most and
misses the recall bar, a pick whose interval straddles the bar."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from compbench.decide.bootstrap import batch
from compbench.decide.flags import flag_details
from compbench.decide.headline import HEADLINE, PRIMARY, spread, spreads
from compbench.decide.metrics import BY_NAME, METRICS
from compbench.decide.objective import edge, parse_objective, ranked
from compbench.decide.ranking import standings
from compbench.decide.stats import Estimate
from compbench.decide.verdict import choose, lines, verdict


def row(t: str, s: str, *, ref: int, saved: float, needs: int = 10, present: int = 10, acted: bool = True,
        overflows: int = 0, source: str = "compbench", project: str = "", model: str = "") -> dict[str, Any]:
    """One transcript × strategy: ``saved`` of none's ``ref`` input tokens, ``present`` of ``needs`` met."""
    inp = int(ref * (1 - saved))
    return {"transcript_id": t, "strategy": s, "name": s.split(":")[0], "source": source, "session": t,
            "project": project, "model": model, "steps": 20, "compactions": 1 if acted else 0, "prunes": 0,
            "pruned_parts": 0, "overflows": overflows, "overflows_before_action": 0, "failed_compactions": 0,
            "noop_compactions": 0, "first_action_step": 3 if acted else -1, "input_tokens": inp,
            "output_tokens": 100, "summarizer_input_tokens": 0, "summarizer_output_tokens": 0,
            "reference_input_tokens": ref, "needs": needs if acted else 0, "needs_present": present if acted else 0,
            "needs_verbatim": present if acted else 0, "needs_upper": present if acted else 0,
            "oracle_present": needs if acted else 0, "retention_after": 0.9 if acted else float("nan"),
            "cost_usd": inp / 1e6, "reference_cost_usd": ref / 1e6, "cost_usd_nocache": inp / 1e6,
            "reference_cost_usd_nocache": ref / 1e6}


def frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows)


# --- the per-transcript median beside the pooled figure ----------------------------------------------------

def dominated_run() -> pd.DataFrame:
    """61 transcripts: 3 huge ones where the strategy saves 95%, 58 small ones where it never acts (none's own
    tokens): a pooled saving of ~80% and a typical transcript that saves nothing."""
    rows = []
    for k in range(61):
        huge = k < 3
        t = f"t{k:02d}"
        rows.append(row(t, "none", ref=1_000_000 if huge else 10_000, saved=0.0, acted=False))
        rows.append(row(t, "big-only", ref=1_000_000 if huge else 10_000, saved=0.95 if huge else 0.0, acted=huge))
    return frame(rows)


def test_a_pooled_saving_carried_by_three_transcripts_shows_its_median_and_says_so() -> None:
    df = dominated_run()
    sp = spreads(df, BY_NAME[HEADLINE])["big-only"]
    assert sp.median == 0.0 and sp.n == 61  # the typical transcript: the strategy never acted there
    assert sp.top_share == pytest.approx(3_000_000 / 3_580_000)
    assert sp.dominated and sp.note() == "the 3 largest of 61 transcripts hold 84% of none's input tokens"
    b = batch(df, METRICS, 500)
    assert b.estimates["big-only"][HEADLINE].value == pytest.approx(0.95 * 3 / 3.58, abs=1e-3)
    st = standings(df, flag_details(df))
    v = verdict(df, b, st, {}, "calibrated", spreads=spreads(df, BY_NAME[HEADLINE]))
    text = "\n".join(lines(v))
    assert "per-transcript median 0.0%" in text  # beside the pooled figure of the pick
    assert "note: pooled figures are ratios of sums: the 3 largest of 61 transcripts hold 84%" in text
    assert any("mostly theirs" in c for c in v.caveats)


def test_evenly_spread_transcripts_are_not_said_to_dominate() -> None:
    df = frame([row(f"t{k:02d}", "even", ref=10_000 + 37 * k, saved=0.5) for k in range(61)])
    sp = spread(df, BY_NAME[HEADLINE])
    assert not sp.dominated and sp.note() == "" and sp.median == pytest.approx(0.5, abs=0.001)
    # six transcripts: three of them always hold half of the tokens; that is their share, not dominance
    six = frame([row(f"t{k}", "even", ref=10_000, saved=0.5) for k in range(6)])
    assert not spread(six, BY_NAME[HEADLINE]).dominated


# --- one rule for the verdict and the leaderboard ------------------------------------------------------------

def rule_run(careful_overflows: int = 0) -> pd.DataFrame:
    """``greedy`` saves most and misses the 90% recall bar; ``careful`` saves less and meets it."""
    rows = []
    for k in range(8):
        t = f"t{k}"
        rows.append(row(t, "none", ref=100_000, saved=0.0, acted=False))
        rows.append(row(t, "greedy", ref=100_000, saved=0.8, needs=10, present=8))
        rows.append(row(t, "careful", ref=100_000, saved=0.6, needs=10, present=10, overflows=careful_overflows))
    return frame(rows)


def test_the_leaderboards_first_row_is_the_verdicts_pick() -> None:
    df = rule_run()
    b = batch(df, METRICS, 500)
    st = standings(df, flag_details(df))
    obj = parse_objective(PRIMARY)
    order = ranked(b.estimates, st, obj)
    assert order[:2] == ["careful", "greedy"]  # greedy saves more but misses the bar: it comes second
    c = choose(b, st, PRIMARY)
    assert c.best == order[0] == "careful" and c.above == ""
    v = verdict(df, b, st, {}, "calibrated")
    assert v.order == order and "before those without" in v.rule and "needed-fact recall ≥ 90%" in v.rule


def test_a_pick_below_the_first_row_says_why_the_rows_above_are_not_it() -> None:
    df = rule_run(careful_overflows=1)  # careful now has a call over the window: ranked below sound greedy
    b = batch(df, METRICS, 500)
    st = standings(df, flag_details(df))
    order = ranked(b.estimates, st, parse_objective(PRIMARY))
    c = choose(b, st, PRIMARY)
    assert order[0] == "greedy" and c.best == "careful"
    # the sound strategies ranked above it (none has no recall at all) are named, with the bar they miss
    assert c.above == "ranked above it: greedy, none (miss needed-fact recall ≥ 90%)"
    assert "no sound strategy meets it" in c.note


@pytest.mark.parametrize(("needs", "best"), [(0, "more"), (10, None)])
def test_transcripts_that_cannot_measure_the_bar_are_decided_by_the_metric_and_say_so(needs: int,
                                                                                       best: str | None) -> None:
    """Short logs where no fact received is used again have no recall at all: the pick is the best by effective
    savings, with the reason said; where recall is measured and every strategy misses the bar, none is picked."""
    rows = []
    for k in range(6):
        t = f"t{k}"
        rows += [row(t, "none", ref=10_000, saved=0.0, acted=False),
                 row(t, "less", ref=10_000, saved=0.2, needs=needs, present=needs // 2),
                 row(t, "more", ref=10_000, saved=0.4, needs=needs, present=needs // 2)]
    df = frame(rows)
    b = batch(df, METRICS, 500)
    c = choose(b, standings(df, flag_details(df)), PRIMARY)
    assert c.best == best
    said = "needed-fact recall ≥ 90% is not measurable on these transcripts (no fact received was used again)"
    assert (said in c.note) == (needs == 0)
    assert (c.note == "no strategy meets it") == (needs > 0)


# --- a pick on the edge of a bar ---------------------------------------------------------------------------

def test_a_pick_whose_interval_straddles_the_bar_says_so() -> None:
    obj = parse_objective(PRIMARY)

    def ms(recall: Estimate) -> dict[str, Estimate]:
        return {HEADLINE: Estimate(0.6, 0.5, 0.7, 40), "needed_recall": recall}

    said = edge(ms(Estimate(0.9, 0.876, 0.923, 40)), obj)
    assert said == ("on the edge: its needed-fact recall interval [87.6%, 92.3%] straddles the 90% bar (it may "
                    "miss the bar on other transcripts)")
    assert edge(ms(Estimate(0.95, 0.90, 0.97, 40)), obj) == ""  # the lower bound at the bar: it holds
    assert edge(ms(Estimate(0.95, 0.8999, 0.97, 40)), obj) != ""  # just below it: on the edge
    assert edge(ms(Estimate(0.95, 0.91, 0.97, 40)), obj) == ""
    from compbench.decide.bootstrap import Batch

    b = Batch({"edgy": {**ms(Estimate(0.9, 0.876, 0.923, 40)), "cost": Estimate(1, 1, 1, 40)}})
    st = standings(rule_run(), None)
    c = choose(b, {"edgy": st["careful"]}, PRIMARY)
    assert c.best == "edgy" and "[87.6%, 92.3%] straddles the 90% bar" in c.edge


# --- per agent: the tool's own strategy beside the best alternative ------------------------------------------

def agents_run() -> pd.DataFrame:
    """Claude Code logs where roo-code beats claude-code; Codex logs where codex is best and roo-code second."""
    rows = []
    for k in range(6):
        for src, model in (("claude-code", "claude-opus-4-5"), ("codex", "gpt-5")):
            t = f"{src}-{k}"
            own_best = src == "codex"
            kw = {"source": src, "model": model, "project": f"/p/{k % 2}"}
            rows.append(row(t, "none", ref=100_000, saved=0.0, acted=False, **kw))
            rows.append(row(t, "claude-code", ref=100_000, saved=0.5, present=9 + (k % 2), **kw))
            rows.append(row(t, "codex", ref=100_000, saved=0.75 if own_best else 0.4, present=10, **kw))
            rows.append(row(t, "roo-code", ref=100_000, saved=0.6 + 0.01 * k, present=10, **kw))
    return frame(rows)


def test_per_agent_the_tools_own_strategy_stands_beside_the_best_alternative() -> None:
    from compbench.decide.breakdown import breakdown, sentence, summary

    df = agents_run()
    groups = {g.key: g for g in breakdown(df, "source", METRICS, 500)}
    assert set(groups) == {"claude-code", "codex"}
    cc = summary(groups["claude-code"])
    assert cc["best"] == "roo-code" and cc["own"] == "claude-code" and not cc["own_is_best"]
    assert cc["margin"].startswith("+") and "effective savings" in cc["margin"]  # best − own, paired
    cx = summary(groups["codex"])
    assert cx["best"] == "codex" and cx["own_is_best"] and cx["versus"] == "roo-code"
    text = sentence(groups["claude-code"])
    assert text.startswith("For your Claude Code logs (6 transcripts): best for highest effective savings")
    assert "The tool's own strategy: claude-code" in text
    by_model = {g.key for g in breakdown(df, "model", METRICS, 300)}
    assert by_model == {"claude-opus-4-5", "gpt-5"}
    assert {g.key for g in breakdown(df, "project", METRICS, 300)} == {"/p/0", "/p/1"}
