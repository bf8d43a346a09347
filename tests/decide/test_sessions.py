"""A session with its sub-agents as one unit (compbench.decide.sessions): sums, shares and savings per session and
configuration, the root of a tree, the verdict's line, the --by session table."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from compbench.decide.sessions import SHOWN_SESSIONS, base_strategy, line, rollup, roots, table


def _row(tid: str, session: str, kind: str, strategy: str, inp: int, cost: float, ref_inp: int, ref_cost: float,
         summ: int = 0, source: str = "claude-code") -> dict[str, Any]:
    return {"transcript_id": tid, "strategy": strategy, "session": session, "source": source, "agent_type": kind,
            "input_tokens": inp, "output_tokens": 10, "summarizer_input_tokens": summ, "summarizer_output_tokens": 0,
            "cost_usd": cost, "reference_input_tokens": ref_inp, "reference_cost_usd": ref_cost}


def _results() -> Any:
    rows = []
    for strategy, k in (("recorded", 1.0), ("none", 1.2)):
        rows += [_row("s1", "s1", "main", strategy, int(1000 * k), 1.0 * k, 1200, 1.2, summ=100 if k == 1 else 0),
                 _row("s1/a1", "s1", "Explore", strategy, int(300 * k), 0.3 * k, 360, 0.36),
                 _row("s1/a2", "s1", "general-purpose", strategy, int(600 * k), 0.6 * k, 720, 0.72),
                 _row("s2", "s2", "main", strategy, int(500 * k), 0.5 * k, 600, 0.6)]
    return pd.DataFrame(rows)


def test_a_session_is_summed_with_its_sub_agents() -> None:
    r = rollup(_results()).set_index(["strategy", "session"])
    s1 = r.loc[("recorded", "s1")]
    assert (s1["transcripts"], s1["subagents"], s1["input_tokens"], s1["tokens"]) == (3, 2, 1900, 1900 + 30 + 100)
    assert s1["cost_usd"] == pytest.approx(1.9) and s1["subagent_cost_usd"] == pytest.approx(0.9)
    assert s1["subagent_token_share"] == pytest.approx(920 / 2030)
    assert s1["subagent_cost_share"] == pytest.approx(0.9 / 1.9)
    assert s1["net_savings"] == pytest.approx(1 - (1900 + 100) / 2280)
    assert s1["cost_savings"] == pytest.approx(1 - 1.9 / 2.28)
    s2 = r.loc[("recorded", "s2")]
    assert (s2["transcripts"], s2["subagents"], s2["subagent_token_share"]) == (1, 0, 0.0)
    assert list(rollup(_results())["session"]) == ["s1", "s2", "s1", "s2"]  # first appearance, run order


def test_a_sub_agents_sub_agent_rolls_up_to_the_root() -> None:
    df = pd.DataFrame([_row("root", "root", "main", "none", 10, 0.1, 10, 0.1, source="opencode"),
                       _row("child", "root", "general", "none", 10, 0.1, 10, 0.1, source="opencode"),
                       _row("grandchild", "child", "explore", "none", 10, 0.1, 10, 0.1, source="opencode")])
    assert roots(df) == {"root": "root", "child": "root", "grandchild": "root"}
    (only,) = rollup(df).itertuples()
    assert (only.session, only.transcripts, only.subagents) == ("root", 3, 2)


def test_a_cycle_of_parents_stops() -> None:
    df = pd.DataFrame([_row("a", "b", "x", "none", 1, 0.0, 1, 0.0), _row("b", "a", "y", "none", 1, 0.0, 1, 0.0)])
    assert set(roots(df)) == {"a", "b"}  # terminates; each lands on one of the two


def test_a_run_without_the_agent_type_column_tells_sub_agents_by_their_session() -> None:
    df = _results().drop(columns=["agent_type"])
    r = rollup(df).set_index(["strategy", "session"])
    assert r.loc[("recorded", "s1"), "subagents"] == 2


def test_the_line_reads_under_as_it_ran_and_is_empty_without_sub_agents() -> None:
    text = line(_results())
    assert text.startswith("Sub-agents: 2 of 4 transcripts, in 1 of 2 sessions; as it ran they spent 36.2% of the "
                           "tokens and 37.5% of the cost.")
    assert "costs $1.20 (median; $1.90 at the 90th percentile, $1.90 at most)" in text
    assert line(_results(), "none").startswith("Sub-agents: 2 of 4 transcripts, in 1 of 2 sessions; under none")
    assert line(_results()[_results()["agent_type"] == "main"]) == ""
    assert base_strategy(_results()[_results()["strategy"] == "none"]) == "none"


@pytest.mark.parametrize(("sessions", "shown"), [(SHOWN_SESSIONS - 1, SHOWN_SESSIONS - 1),
                                                 (SHOWN_SESSIONS, SHOWN_SESSIONS),
                                                 (SHOWN_SESSIONS + 1, SHOWN_SESSIONS)])
def test_the_table_shows_the_costliest_sessions(sessions: int, shown: int) -> None:
    df = pd.DataFrame([_row(f"s{k:02d}", f"s{k:02d}", "main", s, 100, 0.01 * (k + 1), 100, 0.01 * (k + 1))
                       for s in ("recorded", "none") for k in range(sessions)])
    headers, rows, base = table(df, ["none", "recorded"])
    assert base == "recorded" and len(rows) == shown
    assert rows[0][0] == f"s{sessions - 1:02d}" and headers[-1] == "cost none"
    assert len(table(df, ["none", "recorded"], wide=True)[1]) == sessions


def test_the_table_says_each_configurations_change_against_the_base() -> None:
    headers, rows, _ = table(_results(), ["none", "recorded"])
    assert headers == ["session", "tool", "transcripts", "sub-agents", "tokens as it ran", "sub-agents' tokens",
                       "sub-agents' cost", "cost as it ran", "cost none"]
    assert rows[0] == ["s1", "Claude Code", "3", "2", "2,030", "45.3%", "47.4%", "$1.90", "$2.28 (+20.0%)"]
