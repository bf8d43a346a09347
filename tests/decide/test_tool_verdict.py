"""Each tool's verdict (compbench.decide.toolverdict): as it ran, the tool's settings against the evidence gate with
the line to set where it holds, the best other strategy, each paired against as it ran; and the settings sweep a run
adds for the tools present, replayed on their own logs only."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from compbench.data.transcript import Message, RecordedCompaction, Text, Transcript, Usage
from compbench.decide.breakdown import breakdown
from compbench.decide.flags import flag_details
from compbench.decide.metrics import metric
from compbench.decide.toolverdict import build, lines, setting_lines
from compbench.run.spec import RunSpec, settings_sweep
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits

METRICS = [metric(m) for m in ("effective_savings", "needed_recall", "cost", "reacquired_tokens")]


def session(k: int, source: str, version: str) -> Transcript:
    """A long session whose tool compacted once, at a recorded step, with a real summary."""
    msgs: list[Message] = []
    for i in range(60):
        msgs += [Message(f"u{i}", "user", (Text(f"edit src/mod_{i % 7}.py " + "word " * 300),)),
                 Message(f"a{i}", "assistant", (Text(f"done {i}"),), usage=Usage(input=400 + 380 * i, output=5))]
    rc = RecordedCompaction(index=60, tool=source, trigger="auto", summary="the work so far: src/mod_1.py edited",
                            tokens_before=11_800)
    return Transcript(f"{source}-{k}", source, tuple(msgs), meta={"tool_version": version}, compactions=(rc,))


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    ts = [session(k, "claude-code", "2.1.49") for k in range(3)] + [session(k, "codex", "0.142.4") for k in range(2)]
    strategies = ("none", "recorded", "claude-code", "codex", "truncate")
    sweep = settings_sweep(strategies, {"claude-code", "codex"})
    out = tmp_path_factory.mktemp("mixed") / "run"
    write_run(out, RunSpec(strategies=strategies + sweep, settings=sweep, limits=ModelLimits(20_000, 2_000),
                           tokenizer="chars4"), "hand-made", ts)
    return pd.read_parquet(out / "results.parquet"), sweep


def test_the_sweep_is_of_the_tools_present_and_each_setting_replays_only_its_tools_logs(mixed: Any) -> None:
    results, sweep = mixed
    assert sweep == ("claude-code:autocompact_pct_override=60", "claude-code:autocompact_pct_override=80",
                     "codex:auto_compact_token_limit=150000", "codex:auto_compact_token_limit=200000")
    assert settings_sweep(("claude-code", "codex:preset=0.77", "truncate"), {"claude-code"}) == sweep[:2]
    assert settings_sweep(("claude-code:preset=seed", "codex"), {"claude-code"}) == ()  # named seed; no codex log
    per = results.groupby("strategy")["source"].agg(lambda x: sorted(set(x)))
    assert per["claude-code:autocompact_pct_override=60"] == ["claude-code"]
    assert per["codex:auto_compact_token_limit=150000"] == ["codex"] and per["truncate"] == ["claude-code", "codex"]
    marked = results.drop_duplicates("strategy").set_index("strategy")["swept"]
    assert set(marked[marked == "sweep"].index) == set(sweep) and marked["claude-code"] == ""
    own = results[(results["strategy"] == "claude-code") & (results["source"] == "claude-code")]
    assert set(own["preset"]) == {"2.1.21"} and set(own["preset_source"]) == {
        "Claude Code 2.1.49 recorded: the preset that models it"}
    other = results[(results["strategy"] == "claude-code") & (results["source"] == "codex")]
    assert set(other["preset"]) == {"2.1.299"}  # another tool's logs: the newest preset


def test_each_tool_reads_as_it_ran_its_settings_and_the_best_other(mixed: Any) -> None:
    results, _ = mixed
    groups = {g.key: g for g in breakdown(results, "source", METRICS, 500)}
    v = build(groups["claude-code"])
    assert v.tool == "Claude Code" and v.as_ran == "recorded" and v.own_strategy == "claude-code"
    (c,) = v.candidates  # the one swept setting
    assert c.setting.name == "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"
    assert c.tried == ("unset (default)", "60", "80")
    if c.label is not None:
        change = c.change
        assert change is not None and set(change.diffs) == {"effective_savings", "cost", "reacquired_tokens"}
        d = change.diffs["effective_savings"]
        rows = groups["claude-code"].rows
        from compbench.decide.headline import pooled

        assert d.value == pytest.approx(pooled(rows[rows["strategy"] == c.label], metric("effective_savings"))
                                        - pooled(rows[rows["strategy"] == "recorded"], metric("effective_savings")),
                                        abs=1e-9)
    assert v.advice is None  # three transcripts: too few reach any threshold
    assert v.best_other not in ("recorded", "none", "claude-code") and not str(v.best_other).startswith(
        "claude-code")
    text = lines(v)
    assert text[0] == "Claude Code logs (3 transcripts)"
    assert text[1].startswith("  as it ran (recorded: the tool's own recorded compactions): effective savings")


def test_the_line_to_set_is_the_tools_own() -> None:
    assert setting_lines("claude-code:autocompact_pct_override=70") == ["export CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=70"]
    assert setting_lines("codex:auto_compact_token_limit=150000") == ["model_auto_compact_token_limit = 150000"]
    assert setting_lines("swe-agent:n=3") == ["agent:", "  history_processors:", "    - type: last_n_observations",
                                              "      n: 3"]
    assert setting_lines("claude-code") == []  # the settings it runs with
    # OpenHands V1 (its conversations) keeps the condenser in agent_settings.json; V0 reads config.toml's section
    assert setting_lines("openhands-llm-summarizing:max_size=60", source="openhands") == [
        '"condenser": {"kind": "LLMSummarizingCondenser", "max_size": 60}']
    assert setting_lines("openhands-llm-summarizing:max_size=60", source="openhands-v0") == [
        "[condenser]", 'type = "llm"', "max_size = 60"]
    assert setting_lines("claude-code:threshold_ratio=0.5") == ["threshold_ratio=0.5 (not a setting of the tool)"]


def tool_rows(source: str) -> pd.DataFrame:
    return pd.DataFrame([{"transcript_id": f"t{k}", "strategy": s, "name": s, "source": source, "session": f"t{k}",
                          "first_action_step": 1 if s != "none" else -1, "steps": 10, "compactions": 1,
                          "prunes": 0, "overflows": 0, "overflows_before_action": 0, "failed_compactions": 0,
                          "noop_compactions": 0, "input_tokens": 100 if s != "none" else 200,
                          "reference_input_tokens": 200, "summarizer_input_tokens": 0,
                          "summarizer_output_tokens": 0, "reacquired_tokens": 0, "cost_usd": 1.0,
                          "needs": 2, "needs_present": 2, "swept": "", "recorded_inferred": 0}
                         for k in range(3) for s in ("none", "truncate")])


def test_a_tool_no_strategy_reproduces_and_a_run_without_its_record_say_so() -> None:
    (g,) = breakdown(tool_rows("openai"), "source", [metric("effective_savings"), metric("needed_recall")], 200)
    text = lines(build(g))
    assert text[0] == "OpenAI chat logs (3 transcripts)"
    assert "  as it ran: not in this run (add --strategy recorded)" in text
    assert "  no strategy reproduces OpenAI chat: no setting of its own to suggest" in text
    # Copilot CLI has its own strategy (copilot-cli, a documented heuristic): a run without it says so
    (g,) = breakdown(tool_rows("copilot"), "source", [metric("effective_savings"), metric("needed_recall")], 200)
    text = lines(build(g))
    assert text[0] == "Copilot CLI logs (3 transcripts)"
    assert any(x.startswith("  Copilot CLI's own st") and "(copilot-cli) is not in this run" in x for x in text)


def frame(name: str, failed: int, compactions: int) -> pd.DataFrame:
    return pd.DataFrame([{"transcript_id": "t", "strategy": name, "name": name, "first_action_step": 1,
                          "steps": 10, "compactions": compactions, "failed_compactions": failed,
                          "noop_compactions": 0, "overflows": 0, "overflows_before_action": 0}])


def test_a_tools_designed_behaviour_is_named_as_what_it_is() -> None:
    aider = flag_details(frame("aider", failed=4, compactions=0))["aider"]
    assert [f.kind for f in aider] == ["designed"] and "drops the summary it made" in aider[0].text
    goose = flag_details(frame("goose", failed=0, compactions=9))["goose"]
    assert [f.kind for f in goose] == ["designed"] and "its design" in goose[0].text
    other = flag_details(frame("truncate", failed=4, compactions=9))["truncate"]
    assert [f.kind for f in other] == ["failed", "degenerate"]  # a generic strategy keeps the generic flags


def test_the_recorded_rows_self_check_compares_its_next_prompt_with_the_logs() -> None:
    from compbench.decide.breakdown import recorded_check, recorded_check_line

    compactions = pd.DataFrame({"strategy": ["recorded", "recorded", "recorded", "claude-code"],
                                "transcript_id": ["a", "b", "c", "a"], "step": [3, 5, 7, 3],
                                "phase": ["before", "after", "before", "before"],
                                "reason": ["recorded auto", "recorded auto", "recorded auto", "auto"],
                                "recorded_next_input": [1_000, 2_000, -1, 1_000]})
    steps = pd.DataFrame({"strategy": ["recorded"] * 3, "transcript_id": ["a", "b", "c"], "step": [3, 6, 7],
                          "input": [900, 2_000, 5]})
    assert recorded_check(compactions, steps) == (2, pytest.approx(0.05), pytest.approx(0.1))
    assert recorded_check_line(recorded_check(compactions, steps)).startswith(
        "Self-check of as it ran: after each of the 2 recorded compactions it replays, its next prompt is within 5.0%")
    assert recorded_check(compactions[compactions["strategy"] != "recorded"], steps) is None


def test_the_self_check_names_what_the_logs_lack_and_leaves_out_what_it_sized_to_the_log() -> None:
    """Beside its error, the self-check says what the logs lack of what their tools sent (each compaction's
    ``recorded_lacks``); an inferred compaction, sized to the recorded prompt, would check nothing: left out."""
    from compbench.decide.breakdown import recorded_check, recorded_check_line, recorded_lacks

    compactions = pd.DataFrame({"strategy": ["recorded"] * 4, "transcript_id": ["a", "b", "c", "d"],
                                "step": [3, 5, 7, 2], "phase": ["before"] * 4,
                                "reason": ["recorded auto", "recorded auto", "recorded auto", "recorded inferred"],
                                "recorded_next_input": [1_000, 2_000, 1_000, 4_000],
                                "recorded_lacks": ["the files", "the files", "", "no marker"]})
    steps = pd.DataFrame({"strategy": ["recorded"] * 4, "transcript_id": ["a", "b", "c", "d"], "step": [3, 5, 7, 2],
                          "input": [900, 1_800, 1_000, 4_000]})
    check = recorded_check(compactions, steps)
    assert check is not None and check[0] == 3  # the inferred one is not counted
    lacks = recorded_lacks(compactions)
    assert lacks == (("the files", 2), ("inferred", 1))
    line = recorded_check_line(check, lacks)
    assert "What the logs lack there: the files (2)." in line
    assert "1 inferred compaction (no marker in the log) is sized to the recorded prompt and not counted." in line
    assert "system prompt and tool schemas" in line


def _verdict_at(tmp_path: Any, window: int) -> list[str]:
    ts = [session(k, "claude-code", "2.1.49") for k in range(3)]
    strategies = ("none", "recorded", "claude-code")
    out = tmp_path / f"run{window}"
    write_run(out, RunSpec(strategies=strategies, limits=ModelLimits(window, 2_000), tokenizer="chars4"),
              "hand-made", ts)
    results = pd.read_parquet(out / "results.parquet")
    (g,) = breakdown(results, "source", METRICS, 200)
    return lines(build(g))


def test_a_strategy_that_never_compacts_where_the_tool_did_is_not_said_to_miss_its_threshold(tmp_path: Any) -> None:
    """On a window far above the sessions the tool's own strategy never acts, though each log shows the tool
    compacting by itself: that is said as the strategy failing to reproduce the tool, never as "its threshold is
    not reached"."""
    text = "\n".join(_verdict_at(tmp_path, 1_000_000))
    assert "threshold is not reached" not in text
    assert "never compacts on these logs at any value tried, though your tool compacted by itself 3 times" in text


def _verdict_of(tmp_path: Any, ts: list[Transcript]) -> str:
    out = tmp_path / "run"
    write_run(out, RunSpec(strategies=("none", "recorded", "claude-code"), limits=ModelLimits(1_000_000, 2_000),
                           tokenizer="chars4"), "hand-made", ts)
    (g,) = breakdown(pd.read_parquet(out / "results.parquet"), "source", METRICS, 200)
    return "\n".join(lines(build(g)))


def _manual(t: Transcript, also_auto: bool = False) -> Transcript:
    from dataclasses import replace

    rc = replace(t.compactions[0], trigger="manual")
    more = (replace(t.compactions[0], index=100, trigger="auto", tokens_before=38_000),) if also_auto else ()
    return replace(t, compactions=(rc, *more))


def test_logs_whose_every_transcript_was_compacted_by_hand_leave_nothing_to_compare(tmp_path: Any) -> None:
    """Every transcript holds a /compact: an automatic threshold has nothing to be compared on, and the verdict
    says so rather than that the threshold is not reached."""
    text = _verdict_of(tmp_path, [_manual(session(k, "claude-code", "2.1.49")) for k in range(3)])
    assert "every transcript of these logs holds a manual compaction (3 set aside)" in text
    assert "  as it ran (recorded" in text and "as it ran: not in this run" not in text  # one as-it-ran line
    assert "threshold is not reached" not in text


def test_automatic_compactions_only_beside_a_manual_one_are_named_as_set_aside(tmp_path: Any) -> None:
    """The tool compacted by itself only in a transcript also compacted by hand (set aside): the threshold is
    unreached on the others, and the verdict says where the tool's own compaction went, never "never compacted"."""
    from dataclasses import replace

    quiet = [replace(session(k, "claude-code", "2.1.49"), compactions=()) for k in (1, 2)]
    text = _verdict_of(tmp_path, [_manual(session(0, "claude-code", "2.1.49"), also_auto=True), *quiet])
    assert ("its threshold is not reached at any value tried on the 2 transcripts compared; your tool compacted by "
            "itself only in the 1 set aside for a manual compaction") in text
    assert "never compacted by itself" not in text
    assert "no automatic compaction in the transcripts compared; in those set aside for a manual compaction, " \
           "0 of 1 within 2 calls" in text  # the only automatic compaction, checked beside the manual one


def test_the_recorded_rows_calls_over_the_window_are_the_replays_not_the_tools(tmp_path: Any) -> None:
    """A window below what the log shows answered (the tool compacted at 11,800 on a 9,000 replay window): the
    recorded row's overflows say the replay's window or count is off, not that the tool failed."""
    lines = _verdict_at(tmp_path, 9_000)
    as_ran = next(x for x in lines if x.startswith("  as it ran"))
    assert "over the window as counted here, though the log shows them answered" in as_ran


def _with_needs(results: Any, needs: int, present: int) -> Any:
    """The run's rows with every Claude Code log holding ``needs`` needed facts, ``present`` of them kept."""
    out = results.copy()
    mask = out["source"] == "claude-code"
    for col in [c for c in out.columns if c.startswith("needs")]:
        out.loc[mask, col] = 0
    out.loc[mask, "needs"], out.loc[mask, "needs_present"] = needs, present
    return out


@pytest.mark.parametrize(("needs", "present"), [(0, 0), (10, 10), (10, 5)])
def test_recall_is_shown_as_a_heuristic_beside_not_as_the_bar(mixed: Any, needs: int, present: int) -> None:
    """Needed-fact recall does not predict what agents re-read after real compactions: a tool's verdict ranks by
    effective savings and shows recall beside it, labelled a heuristic, never as a bar met or missed."""
    results, _ = mixed
    groups = {g.key: g for g in breakdown(_with_needs(results, needs, present), "source", METRICS, 500)}
    text = "\n".join(lines(build(groups["claude-code"])))
    assert "misses" not in text
    assert ("(a heuristic)" in text) == (needs > 0)


def test_compare_by_source_says_whose_summaries_each_row_has(tmp_path: Any) -> None:
    """As it ran replays the logs' own summaries; every other row's come from the run's summarizer: compare says
    which, so a difference in recall is not read as the tool's."""
    from helpers import invoke

    out = tmp_path / "run"
    write_run(out, RunSpec(strategies=("none", "recorded", "truncate"), limits=ModelLimits(20_000, 2_000),
                           tokenizer="chars4"), "hand-made", [session(k, "claude-code", "2.1.49") for k in range(2)])
    code, output = invoke("compare", out, "--by", "source", "--resamples", "200")
    assert code == 0, output
    text = " ".join(output.split())
    assert "as it ran replays each log's own summaries; every other row's summaries are the run's: calibrated" in text
