"""The run's flags on what its figures rest on: a prompt-cache model more than 5 points off the recording."""

from __future__ import annotations

import pandas as pd
import pytest

from compbench.decide.flags import cache_flags


def results(recorded: float, simulated: float) -> pd.DataFrame:
    return pd.DataFrame([{"transcript_id": "t", "source": "gemini-cli", "cache_calls": 10,
                          "recorded_cache_read": int(recorded * 1_000_000), "recorded_input": 1_000_000,
                          "simulated_cache_read": int(simulated * 1_000_000), "simulated_input": 1_000_000}])


@pytest.mark.parametrize(("recorded", "simulated", "flagged"), [
    (0.65, 0.971, True), (0.90, 0.95, False), (0.90, 0.950001, True), (0.95, 0.90, False), (0.95, 0.899, True)])
def test_an_agent_whose_cache_model_is_more_than_5_points_off_is_flagged(recorded: float, simulated: float,
                                                                          flagged: bool) -> None:
    got = cache_flags(results(recorded, simulated))
    assert bool(got) is flagged
    if flagged:
        assert got[0].startswith("gemini-cli: simulated ")


def test_1m_window_sessions_are_flagged_by_where_their_rule_comes_from() -> None:
    """A 1M-window Claude Code session's auto-compact window is inferred, from its own first automatic
    compaction where it has one (the words the strategy writes in preset_source), else from the version
    table: the run says which, and says nothing of 200k sessions or of other tools."""
    from compbench.data.transcript import RecordedCompaction, Transcript
    from compbench.decide.flags import inferred_window_caveat, inferred_windows
    from compbench.sdk.registry import resolve
    from compbench.sdk.tools import FROM_LOG

    rc = RecordedCompaction(3, "claude-code", trigger="auto", tokens_before=568_000)
    t = Transcript("t", "claude-code", (), meta={"tool_version": "2.1.139"}, compactions=(rc,))
    _, why = resolve("claude-code").for_log(t)
    assert FROM_LOG in why and "inferred from the log's first automatic compaction" in why
    rows = pd.DataFrame({
        "transcript_id": ["a", "a", "b", "c", "d"],
        "source": ["claude-code", "claude-code", "claude-code", "claude-code", "codex"],
        "window": [1_000_000, 1_000_000, 1_000_000, 200_000, 1_000_000],
        "preset_source": [why, "", "recorded version 2.1.139", why, ""]})
    assert inferred_windows(rows) == (["a"], ["b"])
    text = inferred_window_caveat(rows)
    assert text.startswith("2 Claude Code sessions on a 1M window, whose auto-compact window is inferred: 1 from its "
                           "own first automatic compaction")
    assert "; 1 from the version table, its log showing no automatic compaction past 200k" in text
    assert inferred_window_caveat(rows[rows["window"] < 1_000_000]) == ""


def _rows(label: str, order: tuple[str, ...], tokens: dict[str, int]) -> list[dict[str, object]]:
    return [{"transcript_id": t, "strategy": label, "name": "x", "steps": 10, "compactions": 1, "prunes": 0,
             "input_tokens": tokens.get(t, 100), "cost_usd": 0.1} for t in order]


@pytest.mark.parametrize(("other", "identical"), [
    ({}, [["x:a=1", "x:a=2"]]),  # the same rows, in another transcript order, on a frame filtered before
    ({"t2": 101}, []),  # one token more on one transcript
    ({"t2": 99}, []),  # one less
])
def test_identical_configurations_compare_rows_by_transcript(other: dict[str, int],
                                                             identical: list[list[str]]) -> None:
    from compbench.decide.flags import identical_configurations

    df = pd.DataFrame([{"transcript_id": "t0", "strategy": "y", "name": "y"}, *_rows("x:a=1", ("t1", "t2", "t3"), {}),
                       *_rows("x:a=2", ("t3", "t1", "t2"), other)]).iloc[1:]
    assert identical_configurations(df) == identical
