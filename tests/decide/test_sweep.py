"""The settings sweep widens until the best value is between values tried or at the tool's limit
(compbench.decide.sweep, compbench.run.write's widening rounds)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pandas as pd
import pytest

from compbench.decide.sweep import beyond, next_configurations
from compbench.run.spec import RunSpec, settings_sweep
from compbench.run.write import write_run
from compbench.sdk.tools import Accepts, Setting
from helpers import growing_session

PCT = Setting("pct", "MY_PCT", "env", "unset", "export MY_PCT={value}", sweep=(60.0, 80.0),
              accepts=Accepts(10.0, 100.0))


@pytest.mark.parametrize(("best", "values", "expected"), [
    (60.0, [60.0, 80.0, 92.8], [40.0, 20.0]),  # at the low edge: two steps of the grid's spacing
    (92.8, [60.0, 80.0, 92.8], [100.0]),  # at the high edge: clamped to what the tool accepts, once
    (80.0, [60.0, 80.0, 92.8], []),  # between values tried
    (20.0, [20.0, 40.0, 60.0], [10.0]),  # the next step would pass the tool's limit: the limit itself
    (10.0, [10.0, 20.0, 60.0], []),  # at the tool's limit
])
def test_beyond_the_edge_within_what_the_tool_accepts(best: float, values: list[float],
                                                      expected: list[float]) -> None:
    assert beyond(PCT, best, values) == pytest.approx(expected)


LIMIT = Setting("limit", "my_limit", "config", "unset", "my_limit = {value}", sweep=(100_000, 150_000),
                accepts=Accepts(0, 244_800, unset=0, refuse=False))


@pytest.mark.parametrize(("best", "values", "expected"), [
    # the next step lands on 0, which leaves the setting unset: the steps halve their way towards it
    (50_000, [50_000, 100_000, 150_000, 244_800], [25_000, 12_500]),
    (100_000, [100_000, 150_000, 244_800], [50_000, 25_000]),  # one full step, then halving
    (12_500, [12_500, 25_000, 50_000], [6_250, 3_125]),
    (244_800, [100_000, 150_000, 244_800], []),  # at the tool's upper limit
])
def test_a_bound_that_means_unset_is_approached_by_halving(best: float, values: list[float],
                                                           expected: list[float]) -> None:
    assert beyond(LIMIT, best, values) == pytest.approx(expected)


def results(scores: dict[str, float], source: str = "claude-code") -> Any:
    """Six transcripts of ``source`` (Claude Code's), each configuration with the effective savings ``scores``
    gives it."""
    rows = []
    for k in range(6):
        for label, score in scores.items():
            name = label.partition(":")[0]
            rows.append({"transcript_id": f"t{k}", "session": f"t{k}", "source": source, "strategy": label,
                         "name": name, "swept": "sweep" if ":" in label else "", "first_action_step": 3,
                         "steps": 40, "compactions": 1, "failed_compactions": 0, "noop_compactions": 0,
                         "prunes": 0, "overflows": 0, "overflows_before_action": 0, "manual_compactions": 0,
                         "input_tokens": 1_000 * (1 - score), "reference_input_tokens": 1_000,
                         "summarizer_input_tokens": 0, "summarizer_output_tokens": 0, "reacquired_tokens": 0,
                         "reacquired_output_tokens": 0, "needs": 0, "needs_present": 0})
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("scores", "expected"), [
    ({"claude-code": 0.2, "claude-code:autocompact_pct_override=60": 0.4,
      "claude-code:autocompact_pct_override=80": 0.3}, ["claude-code:autocompact_pct_override=40",
                                                        "claude-code:autocompact_pct_override=20"]),
    ({"claude-code": 0.2, "claude-code:autocompact_pct_override=60": 0.3,
      "claude-code:autocompact_pct_override=80": 0.4}, []),  # 80 is between 60 and the unset default (92.8)
    ({"claude-code": 0.5, "claude-code:autocompact_pct_override=60": 0.3,
      "claude-code:autocompact_pct_override=80": 0.4}, []),  # the default is best: nothing to widen
])
def test_next_configurations_go_past_the_edge_the_best_sits_on(scores: dict[str, float], expected: list[str]) -> None:
    assert next_configurations(results(scores)) == expected


@pytest.fixture(scope="module")
def widened(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A run whose widening adds one configuration once: replayed on its tool's logs only, listed in the manifest."""
    ts = [growing_session(34, id=f"s{k}") for k in range(3)]
    other = [replace(growing_session(34, id="codex-log"), source="codex", compactions=())]
    strategies = ("none", "recorded", "claude-code")
    sweep = settings_sweep(strategies, {"claude-code"})
    out = tmp_path_factory.mktemp("widen") / "run"
    asked: list[int] = []

    def widen(rows: Any) -> list[str]:
        asked.append(len(rows))
        return ["claude-code:autocompact_pct_override=40"] if len(asked) == 1 else []

    manifest = write_run(out, RunSpec(strategies=strategies + sweep, settings=sweep, tokenizer="chars4"), "hand-made",
                         ts + other, widen=widen, again=lambda: ts + other)
    return manifest, pd.read_parquet(out / "results.parquet"), asked


def test_a_run_replays_what_widening_adds_on_its_tools_logs_and_lists_it(widened: Any) -> None:
    manifest, rows, asked = widened
    added = "claude-code:autocompact_pct_override=40"
    assert asked == [3 * 5 + 3, 3 * 5 + 3 + 3]  # asked on the rows so far, then again after its round
    assert added in manifest.spec["strategies"] and added in manifest.spec["settings"]
    mine = rows[rows["strategy"] == added]
    assert sorted(mine["transcript_id"]) == ["s0", "s1", "s2"] and set(mine["swept"]) == {"sweep"}
    assert manifest.dataset.transcripts == 4  # the widening's replays are not transcripts twice


def test_a_setting_inside_a_composed_strategy_is_read_from_its_stage() -> None:
    """Gemini CLI's threshold is its compression stage's parameter (``STAGE.PARAM``): the sweep reads each value
    tried from that stage (a run over Gemini CLI logs once failed here, after every replay)."""
    key = "gemini-cli:gemini-cli-compression.threshold"
    widened = next_configurations(results({"gemini-cli": 0.2, f"{key}=0.3": 0.4, f"{key}=0.4": 0.3},
                                          source="gemini-cli"))
    assert widened and all(x.startswith(f"{key}=") for x in widened)
    assert all(float(x.partition("=")[2]) < 0.3 for x in widened)
    assert next_configurations(results({"gemini-cli": 0.5, f"{key}=0.3": 0.4, f"{key}=0.4": 0.3},
                                       source="gemini-cli")) == []


def test_a_value_that_loses_the_agents_facts_is_not_the_best_however_much_it_saves() -> None:
    """Ranked by effective savings, but a value whose needed-fact recall falls under the bar is set aside (named
    as lossy): the best is the value that saves most among those that keep the facts."""
    from compbench.decide.ranking import standings
    from compbench.decide.toolverdict import tried
    from compbench.sdk.registry import get

    key = "claude-code:autocompact_pct_override"
    rows = results({"claude-code": 0.2, f"{key}=40": 0.5, f"{key}=60": 0.4, f"{key}=80": 0.3})
    recall = {f"{key}=40": 0.5, f"{key}=60": 0.95, f"{key}=80": 0.97, "claude-code": 0.98}
    rows["needs"] = 100
    rows["needs_present"] = [round(100 * recall[x]) for x in rows["strategy"]]
    setting = next(s for s in get("claude-code").tool.settings if s.param == "autocompact_pct_override")
    t = tried(rows, "claude-code", setting, standings(rows))
    assert (t.best, t.lossy) == (f"{key}=60", (f"{key}=40",))
    rows["needs_present"] = [round(100 * (0.89 if x == f"{key}=60" else recall[x])) for x in rows["strategy"]]
    assert tried(rows, "claude-code", setting, standings(rows)).best == f"{key}=80"  # 89%: under the bar
    rows["needs_present"] = 90
    assert tried(rows, "claude-code", setting, standings(rows)).best == f"{key}=40"  # 90%: at the bar, kept


@pytest.mark.parametrize(("scores", "expected"), [
    # n=1 is the parameter's minimum: the halving towards 0 rounds to 0, which the strategy refuses
    ({"swe-agent": 0.2, "swe-agent:n=1": 0.5, "swe-agent:n=2": 0.4}, []),
    ({"swe-agent": 0.2, "swe-agent:n=2": 0.5, "swe-agent:n=3": 0.4}, ["swe-agent:n=1"]),  # just above: 1 is tried
])
def test_widening_never_adds_a_value_below_an_int_parameters_minimum(scores: dict[str, float],
                                                                     expected: list[str]) -> None:
    assert next_configurations(results(scores, source="swe-agent")) == expected
