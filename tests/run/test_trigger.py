"""The log's own compactions against its tool's strategy in every run (compbench.run.trigger): automatic and manual
apart, the agreement within 2 calls at and past its boundary, a log without usage unchecked, and the window
calibrated from the log where the table's misses."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from compbench.data.transcript import Transcript
from compbench.measure.tokens import TokenCounter
from compbench.replay.viewstate import ReplayConfig
from compbench.run import trigger
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.registry import resolve
from compbench.sdk.session import ModelLimits
from compbench.summarizers.extractive import ExtractiveSummarizer
from helpers import growing_session as session


def counts(t: Transcript, window: int = 200_000) -> trigger.TriggerCheck:
    config = ReplayConfig(ModelLimits(window, 32_000), 0, recorded_usage=True)
    own = resolve("claude-code").for_log(t)[0]
    return trigger.check(t, own, config, TokenCounter("chars4"), ExtractiveSummarizer())


def test_within_counts_offsets_at_and_past_the_boundary() -> None:
    c = trigger.TriggerCheck(automatic=6, offsets=(-3, -2, 0, 2, 3, None))
    assert (c.checked, c.within, c.early, c.late) == (6, 3, 1, 2)


def test_the_strategy_at_its_threshold_agrees_and_one_far_from_it_does_not() -> None:
    # Claude Code 2.1.49 at 200k compacts once its count passes 167,000: the 34th call (170,000)
    near = counts(session(34))
    assert (near.automatic, near.manual, near.checked, near.within) == (1, 0, 1, 1)
    assert near.offsets[0] is not None and abs(near.offsets[0]) <= trigger.WITHIN
    # the tool compacted at 100,000: the strategy, at 200k, is 13 calls late
    far = counts(session(20))
    assert far.checked == 1 and far.within == 0 and far.late == 1


def test_manual_and_unplaceable_compactions_are_counted_apart() -> None:
    assert counts(session(20, "manual")).columns()["manual_compactions"] == 1
    assert counts(session(20, "manual")).checked == 0
    no_usage = counts(session(34, usage=False))
    assert (no_usage.automatic, no_usage.unchecked, no_usage.checked) == (1, 1, 0)


def test_calibration_finds_the_window_the_log_compacted_at() -> None:
    t = session(20)
    config = ReplayConfig(ModelLimits(200_000, 32_000), 0, recorded_usage=True)
    own = resolve("claude-code").for_log(t)[0]
    found = trigger.points(t, config.limits)
    counter, quiet = TokenCounter("chars4"), ExtractiveSummarizer()
    before = trigger.check(t, own, config, counter, quiet, found)
    cal = trigger.calibrate(t, own, config, counter, quiet, found, before)
    assert cal is not None and cal.before.within == 0 and cal.check.within == 1
    # the tool compacted at 100,000 = W - 20,000 reserve - 13,000 buffer: W between 128,000 and 133,000
    assert 128_000 <= cal.window <= 133_000
    # nothing to calibrate where the table's window already places it
    t2 = session(34)
    found2 = trigger.points(t2, config.limits)
    assert trigger.calibrate(t2, own, config, counter, quiet, found2,
                             trigger.check(t2, own, config, counter, quiet, found2)) is None


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    ts = [session(34, id="fits"), session(20, id="early"), session(20, "manual", id="manual"),
          session(34, usage=False, id="no-usage")]
    out = tmp_path_factory.mktemp("trigger") / "run"
    write_run(out, RunSpec(strategies=("none", "recorded", "claude-code", "truncate"), tokenizer="chars4"),
              "hand-made", ts)
    return pd.read_parquet(out / "results.parquet").set_index(["transcript_id", "strategy"])


def test_a_run_records_the_check_on_every_row_and_calibrates_where_the_table_missed(run: Any) -> None:
    fits = run.loc[("fits", "truncate")]
    assert (fits["trigger_checked"], fits["trigger_within"], fits["window"]) == (1, 1, 200_000)
    assert not fits["window_calibrated"]
    early = run.loc[("early", "truncate")]  # every configuration replays at the window the log shows
    assert early["window_calibrated"] and 128_000 <= early["window"] <= 133_000
    assert early["trigger_within_table"] == 0 and early["trigger_within"] == 1
    assert "calibrated from the log's 1 automatic compaction" in early["window_source"]
    assert "trigger calibrated from the log" in run.loc[("early", "claude-code")]["preset_source"]
    assert "calibrated" not in run.loc[("early", "truncate")]["preset_source"]
    manual = run.loc[("manual", "claude-code")]
    assert (manual["manual_compactions"], manual["auto_compactions"], manual["window"]) == (1, 0, 200_000)
    assert run.loc[("no-usage", "none")]["unchecked_compactions"] == 1
