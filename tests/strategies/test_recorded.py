"""``recorded``: each log's own compactions replayed where the tool made them, on hand-made logs of each shape a
tool records (a summary and nothing kept, kept messages around the summary, a summary-less truncation, a
compaction after the last call) and where a log marks none (TraceLab's fall, at and either side of its bounds)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from compbench.data.transcript import Message, RecordedCompaction, Text, Transcript, Usage
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits
from compbench.strategies.recorded import inferred_falls

SUMMARY = "This session is being continued. The user wants the parser fixed; tests in tests/test_parse.py fail."


def turn(k: int, words: int = 200, usage: int | None = None) -> list[Message]:
    return [Message(f"u{k}", "user", (Text(f"step {k} " + "word " * words),)),
            Message(f"a{k}", "assistant", (Text(f"done {k}"),), usage=Usage(input=usage) if usage else None)]


def run_recorded(tmp_path: Path, *ts: Transcript) -> tuple[pd.DataFrame, pd.DataFrame]:
    out = tmp_path / "run"
    write_run(out, RunSpec(strategies=("none", "recorded"), limits=ModelLimits(200_000, 8_000), tokenizer="chars4"),
              "hand-made", list(ts))
    c = pd.read_parquet(out / "compactions.parquet")
    return pd.read_parquet(out / "results.parquet"), c[c["strategy"] == "recorded"]


def test_a_summary_that_keeps_nothing_is_replayed_at_the_recorded_step_and_charged(tmp_path: Path) -> None:
    msgs = [*turn(0), *turn(1), *turn(2),
            Message("boundary", "user", (Text(SUMMARY),), meta={"compaction": "summary"}),  # the tool's record
            *turn(3), *turn(4)]
    rc = RecordedCompaction(index=7, tool="claude-code", trigger="auto", tokens_before=900, summary=SUMMARY)
    results, c = run_recorded(tmp_path, Transcript("cc", "claude-code", tuple(msgs), compactions=(rc,)))
    (ev,) = c.itertuples()
    assert (ev.step, ev.phase, ev.ok, ev.reason) == (3, "before", True, "recorded auto")  # 3 calls before it
    assert list(ev.kept_ids) == ["u3"] and set(ev.replaced_ids) == {"u0", "a0", "u1", "a1", "u2", "a2"}
    assert ev.summary == SUMMARY and ev.summary_tokens == (len(SUMMARY) + 3) // 4
    # the tool's summary request is paid for: the context it summarized in, the real summary out
    assert ev.summarizer_input >= ev.tokens_before and ev.summarizer_output == ev.summary_tokens
    row = results[results["strategy"] == "recorded"].iloc[0]
    assert row["compactions"] == 1 and row["summarizer_output_tokens"] == ev.summary_tokens


def test_kept_messages_and_where_the_log_put_the_summary(tmp_path: Path) -> None:
    msgs = [Message("sys", "system", (Text("you are an agent"),)), *turn(0), *turn(1), *turn(2), *turn(3)]
    rc = RecordedCompaction(index=5, tool="openhands", trigger="auto", summary="the events so far",
                            kept_ids=("sys", "u0"), meta={"summary_offset": 1})
    _, c = run_recorded(tmp_path, Transcript("oh", "openhands", tuple(msgs), compactions=(rc,)))
    (ev,) = c.itertuples()
    assert list(ev.kept_ids) == ["sys", "u0", "u2"]  # kept before it, then what was recorded after it
    assert set(ev.replaced_ids) == {"a0", "u1", "a1"}


def test_a_truncation_inserts_its_stand_in_and_costs_no_summary(tmp_path: Path) -> None:
    msgs = [*turn(0), *turn(1), *turn(2), *turn(3)]
    rc = RecordedCompaction(index=4, tool="cline", trigger="auto", kept_ids=("u0", "a0"),
                            meta={"stand_in": "[NOTE] Some previous conversation history has been removed."})
    _, c = run_recorded(tmp_path, Transcript("cl", "cline", tuple(msgs), compactions=(rc,)))
    (ev,) = c.itertuples()
    assert ev.summarizer_input == 0 and ev.summarizer_output == 0 and ev.summary == ""
    assert list(ev.kept_ids) == ["u0", "a0", "u2"] and set(ev.replaced_ids) == {"u1", "a1"}


def test_a_compaction_after_the_last_call_is_made_after_it(tmp_path: Path) -> None:
    msgs = [*turn(0), *turn(1), Message("end", "user", (Text("/compact"),))]
    rc = RecordedCompaction(index=5, tool="claude-code", trigger="manual", summary=SUMMARY)
    _, c = run_recorded(tmp_path, Transcript("end", "claude-code", tuple(msgs), compactions=(rc,)))
    (ev,) = c.itertuples()
    assert (ev.step, ev.phase) == (1, "after")  # after the second (last) call: before a third, had there been one


def test_the_recorded_next_prompt_is_beside_each_compaction(tmp_path: Path) -> None:
    msgs = [*turn(0, usage=50_000), *turn(1, usage=60_000), *turn(2, usage=9_000)]
    rc = RecordedCompaction(index=4, tool="claude-code", trigger="auto", summary=SUMMARY)
    _, c = run_recorded(tmp_path, Transcript("nx", "claude-code", tuple(msgs), compactions=(rc,)))
    assert list(c["recorded_next_input"]) == [9_000]


def usage_log(prompts: list[int]) -> Transcript:
    return Transcript("fall", "copilot", tuple(m for k, p in enumerate(prompts) for m in turn(k, 20, p)))


@pytest.mark.parametrize(("prompts", "falls"), [
    ([30_000, 40_000, 30_000, 31_000], [5]),  # -25% and -10,000 from 40,000, and it stays down
    ([30_000, 32_000, 24_000, 24_500], [5]),  # exactly the bounds: 32,000, -25%, -8,000; then it grows a little
    ([30_000, 31_999, 23_000, 23_500], []),  # from just under 32,000
    ([30_000, 40_000, 30_100, 30_200], []),  # -24.75%: just under a quarter
    ([30_000, 100_000, 92_001, 92_500], []),  # -7,999: just under 8,000 tokens
    ([30_000, 40_000, 30_000, 39_500], []),  # back up at once (regains 95%): a smaller request, no compaction
    ([30_000, 40_000, 30_000, 34_000], [5]),  # regains 40%: still down
    ([30_000, 40_000, 30_000], [5]),  # the last call: nothing after it to go back up
])
def test_a_fall_in_a_log_without_a_marker_is_a_compaction_by_tracelabs_rule(prompts: list[int],
                                                                          falls: list[int]) -> None:
    assert inferred_falls(usage_log(prompts)) == falls


def test_an_inferred_compaction_is_sized_to_the_recorded_prompt(tmp_path: Path) -> None:
    t = usage_log([30_000, 40_000, 12_000, 12_500])
    _, c = run_recorded(tmp_path, t)
    (ev,) = c.itertuples()
    assert ev.reason == "recorded inferred" and ev.step == 2 and ev.recorded_next_input == 12_000
    assert ev.tokens_after == pytest.approx(12_000, rel=0.02)  # the stand-in fills what the log does not hold


def test_a_log_that_records_nothing_is_the_none_row(tmp_path: Path) -> None:
    results, c = run_recorded(tmp_path, Transcript("plain", "claude-code", tuple([*turn(0), *turn(1)])))
    assert c.empty
    rows = results.set_index("strategy")
    assert rows.loc["recorded", "input_tokens"] == rows.loc["none", "input_tokens"]
