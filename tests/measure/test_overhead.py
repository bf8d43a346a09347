"""The hidden overhead a run adds: a fixed part from the first recorded call and a growth rate, never an
overhead above the first recorded prompt; a poor fit, a clamped rate and a session that lacks its history
flagged; the replay counting the session at its rate."""

from __future__ import annotations

import math
import statistics
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from compbench.data.transcript import Message, Text, Transcript, Usage
from compbench.measure import token_correction as correction
from compbench.measure.overhead import POOR_MEDIAN, UNIT, fit, growth_rate, rated
from compbench.measure.tokens import TokenCounter
from compbench.measure.usage import errors, own_overhead, pairs
from compbench.run.engine import Replayer
from compbench.run.spec import RunSpec

GOAL_FIRST, GOAL_CALLS = 0.05, 0.03  # issue 26: first-call error and per-call error (medians)


def growing(recorded: list[int], source: str = "claude-code", words: int = 400, **meta: Any) -> Transcript:
    """u, a, u, a, ...: each user message ``words`` words of 5 chars (chars4: ``words * 5 / 4`` tokens), each
    assistant call recording ``recorded[k]`` as its prompt."""
    msgs: list[Message] = []
    for k, rec in enumerate(recorded):
        msgs += [Message(f"u{k}", "user", (Text("word " * words),)),
                 Message(f"a{k}", "assistant", (Text("ok"),), Usage(rec, 1))]
    return Transcript("g", source, tuple(msgs), {"model": "claude-opus-4-6", **meta})


CHARS4 = TokenCounter("chars4", 0)  # "word " * 400: 500 tokens a user message, "ok": 1 token


def test_a_gap_that_grows_never_gets_an_overhead_above_the_first_prompt() -> None:
    """The case the former fit got wrong: what the log omits grows with the session (here half a token per
    counted token), so (recorded - counted) grows from 1,000 to 13,000 and its median overstated the first
    call, and every early call, by thousands of tokens."""
    counted = [500 + 501 * k for k in range(25)]
    t = growing([1_000 + round(1.5 * c) for c in counted])
    ps = pairs(t, CHARS4)
    assert [c for _, c in ps] == counted
    old = own_overhead(ps)
    assert old > ps[0][0]  # the former overhead alone exceeds the whole first recorded prompt
    assert errors(ps, old)[0] > 1.5  # its first call simulated at more than two and a half times the recorded one
    o, session = fit(t, CHARS4)
    assert o.fixed <= ps[0][0] and o.rate == 1_500
    assert o.first_error <= GOAL_FIRST and o.median_error <= GOAL_CALLS and o.flag == ""
    # the replay's counter carries the rate: every call's simulated prompt is the recorded one (to the
    # rounding of each message's count)
    assert all(abs(o.fixed + c - r) <= 2 * k for k, ((_, c), (r, _)) in enumerate(zip(pairs(t, session), ps,
                                                                                       strict=True)))


def test_the_fixed_part_comes_from_the_first_call_and_the_rate_from_the_others() -> None:
    counted = [500 + 501 * k for k in range(10)]
    t = growing([20_000 + c for c in counted])
    o, session = fit(t, CHARS4)
    assert (o.fixed, o.rate, o.median_error) == (20_000, UNIT, 0.0) and session is CHARS4
    assert o.source == "fixed from the first of 10 recorded calls, growth x1.000 per counted token"
    # a first call below its counted context: the system prompt is in the transcript, the fixed part is 0
    o, _ = fit(growing([c - 100 for c in counted]), CHARS4)
    assert o.fixed == 0 and o.first_error == pytest.approx(100 / 400)


def test_one_noisy_call_does_not_move_the_rate() -> None:
    """The rate is a weighted median of slopes: a call after an unrecorded event (a hook's output) is one
    slope among many."""
    counted = [500 + 501 * k for k in range(21)]
    rec = [10_000 + round(1.2 * c) for c in counted]
    rec[10] += 30_000
    assert growth_rate(list(zip(rec, counted, strict=True))) == 1_200


def test_a_fit_that_stays_poor_is_flagged() -> None:
    counted = [500 + 501 * k for k in range(12)]
    zigzag = [10_000 + c + (8_000 if k % 2 else 0) for k, c in enumerate(counted)]
    o, _ = fit(growing(zigzag), CHARS4)
    assert o.median_error > POOR_MEDIAN and o.flag.startswith("the overhead fit stays poor: median error")
    # a prompt that grows far faster than its text: the rate is clamped, and said to be
    o, _ = fit(growing([1_000 + 5 * c for c in counted]), CHARS4)
    assert o.rate == 2_000 and "grows x5.00 per counted token (clamped to x2.00)" in o.flag


def test_one_recorded_call_takes_its_agents_rate() -> None:
    d = correction.table()["overhead_defaults"]["claude-code"]
    o, session = fit(growing([30_000]), CHARS4)
    assert o.rate == d["rate"] and o.calls == 1 and "its agent default" in o.source
    assert o.fixed == 30_000 - session.message(growing([30_000]).messages[0])


def test_a_session_without_its_history_is_said_to_carry_it_as_fixed() -> None:
    usual = correction.table()["overhead_defaults"]["claude-code"]["tokens"]
    counted = [500 + 501 * k for k in range(5)]
    big = growing([150_000 + c for c in counted])
    o, _ = fit(big, CHARS4)  # far above the agent's usual fixed part: history its file lacks
    assert o.fixed == 150_000 and "history its file lacks" in o.flag and f"{usual:,}" in o.flag
    assert "history its file lacks" not in fit(growing([usual + c for c in counted]), CHARS4)[0].flag
    # the importer's evidence (a file that starts mid-conversation) is said whatever the size
    o, _ = fit(growing([usual + c for c in counted], starts_mid_chain=True), CHARS4)
    assert "its file starts mid-conversation" in o.flag


def test_the_rate_rides_on_the_family_correction() -> None:
    c = correction.family_correction("claude", "o200k_base")
    assert c is not None
    base = TokenCounter(correction=c)
    assert rated(base, UNIT) is base
    r = rated(base, 1_100).correction
    assert r is not None and (r.family, r.factor, r.reasoning) == ("claude", round(c.factor * 1.1),
                                                                   round(c.reasoning * 1.1))
    plain = rated(TokenCounter(), 900)
    assert plain.count_text("word " * 400) == round(TokenCounter().count_text("word " * 400) * 0.9)


def test_a_run_replays_the_fixed_part_and_the_rate_and_reports_them() -> None:
    counted = [500 + 501 * k for k in range(8)]
    t = growing([5_000 + round(1.25 * c) for c in counted])
    spec = RunSpec(strategies=("none",), limits=None, summarizer="mock", tokenizer="chars4", message_overhead=0,
                   token_correction="none", system_tokens=None)
    rows = Replayer(spec).run(t)
    (row,) = rows["results"].records()
    assert (row["system_tokens"], row["overhead_rate"], row["overhead_flag"]) == (5_000, 1.25, "")
    assert row["overhead_first_error"] == 0.0 and row["overhead_error"] <= GOAL_CALLS
    simulated = [s["input"] for s in rows["steps"].records()]
    assert all(abs(s - r) / r < 0.001 for s, r in zip(simulated, [m.usage.input for m in t.messages if m.usage],
                                                      strict=True))
    # --system-tokens N: that fixed part for every transcript, no rate
    (row,) = Replayer(replace(spec, system_tokens=7)).run(t)["results"].records()
    assert (row["system_tokens"], row["overhead_rate"]) == (7, 1.0) and math.isnan(row["overhead_error"])


def test_summary_and_report_name_the_flagged_sessions(tmp_path: Path) -> None:
    """A run over a session whose overhead fit stays poor and one whose fit holds: the run summary and the
    report's verdict name the first, not the second."""
    from compbench.decide.flags import overhead_flags
    from compbench.decide.summary import summary_table
    from compbench.reports.html import write_report
    from compbench.run.write import write_run

    counted = [500 + 501 * k for k in range(12)]
    poor = replace(growing([10_000 + c + (8_000 if k % 2 else 0) for k, c in enumerate(counted)]), id="zigzag")
    fine = replace(growing([10_000 + c for c in counted]), id="steady")
    spec = RunSpec(strategies=("none", "truncate"), summarizer="mock", tokenizer="chars4", message_overhead=0,
                   system_tokens=None)
    write_run(tmp_path / "run", spec, "hand-made", [poor, fine])
    text = summary_table(tmp_path / "run")
    assert "! hidden overhead flagged on 1 transcript" in text
    assert "!   the overhead fit stays poor, 1 transcript: zigzag (median error" in text  # grouped by flag
    assert "steady" not in text.split("! hidden overhead")[1]
    html = write_report(tmp_path / "run", tmp_path / "report.html").read_text(encoding="utf-8")
    assert "the overhead fit stays poor (1)" in html and "<code>zigzag</code></a>" in html
    assert "<code>steady</code></a>" not in html
    import pandas as pd

    df = pd.DataFrame([{"transcript_id": "a", "overhead_flag": ""}, {"transcript_id": "b", "overhead_flag": "poor"},
                       {"transcript_id": "b", "overhead_flag": "poor"}])
    assert overhead_flags(df) == ["b: poor"] and overhead_flags(df.drop(columns="overhead_flag")) == []


# --- the real logs ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shipped() -> dict[str, Any]:
    return dict(correction.table()["errors"])


def test_real_sessions_meet_the_goals_and_the_former_fit_did_not(shipped: dict[str, Any],
                                                                 transcripts_dir: Path) -> None:
    """Per agent, on the real sessions that recorded usage (the shipped figures: a test fails when they are
    stale): first-call and per-call medians within the goals, also with the rate fitted on each session's
    first half of calls (errors on its second half); the former constant missed the first-call goal."""
    for src, e in shipped.items():
        o = e["overhead"]
        assert o["fitted_first"]["median"] <= GOAL_FIRST and o["fitted_calls"]["median"] <= GOAL_CALLS, (src, o)
        assert o["half_calls"]["median"] <= GOAL_CALLS, (src, o)
        assert o["fitted_first"]["p90"] <= o["median_first"]["p90"], (src, o)
    missed = {src for src, e in shipped.items() if e["overhead"]["median_first"]["median"] > GOAL_FIRST}
    assert {"claude-code", "codex", "pi"} <= missed, missed
    flagged = {x.split("__")[-1][:8]: x for e in shipped.values() for x in e["overhead"]["flagged"]}
    assert "starts mid-conversation" in flagged.pop("198393f2")
    # four of the 23 sessions added with 2.0.76-2.1.49 stay poorly fitted (median error 3.3-12.4%), and say so
    assert sorted(flagged) == ["03a1382e", "4a364c97", "a318ad73", "fdd24234"]
    assert all("the overhead fit stays poor" in x for x in flagged.values())


def test_a_real_session_is_replayed_at_its_recorded_prompts(transcripts_dir: Path) -> None:
    """pi on Claude: the run's counter, at the session's rate, puts every call near its recorded prompt."""
    from compbench.data.formats import read

    (t,) = read(transcripts_dir / "pi" / "pi-mono__before-compaction.jsonl")
    counter = TokenCounter(mode="auto").scoped(t)
    o, session = fit(t, counter)
    errs = errors(pairs(t, session), o.fixed)
    assert errs[0] == 0.0 and statistics.median(errs) <= GOAL_CALLS and o.fixed <= pairs(t, session)[0][0]


@pytest.mark.parametrize(("source", "tokens"), [("crush", 7_193), ("gemini-cli", 3_217), ("roo-code", 10_100),
                                                ("cline", 12_434), ("aider", 2_417), ("goose", 1_820)])
def test_a_log_without_a_system_prompt_or_usage_gets_its_tools_prompt_from_source(source: str, tokens: int) -> None:
    """Their logs hold no system prompt and no per-call usage: the hidden overhead was 0, their contexts looked
    smaller than they were. The tool's own prompt, measured from its source, says so."""
    t = Transcript("x", source, (Message("u", "user", (Text("hi"),)), Message("a", "assistant", (Text("yo"),))))
    o, _ = fit(t, TokenCounter("chars4"))
    assert o.fixed == tokens and "no system prompt in the log" in o.source
    with_system = Transcript("y", source, (Message("s", "system", (Text("You are aider."),)), *t.messages))
    assert fit(with_system, TokenCounter("chars4"))[0].fixed == 0  # its log holds the prompt: nothing hidden
    assert fit(Transcript("z", "swe-agent", t.messages), TokenCounter("chars4"))[0].fixed == 0


def test_a_first_turn_that_runs_a_subagent_counts_only_the_main_context() -> None:
    """Claude Code streams a sub-agent's own messages as progress records of the main file (data.message: its
    prompt, its calls, their results, ~20-45k tokens here). They are not the main agent's context: the first
    simulated call is the recorded one (18,609 tokens), not several times it (a held-out session's was 4.4x)."""
    from compbench.data.formats import read_all
    from helpers import FIXTURES

    (t,) = read_all([FIXTURES / "shapes" / "claude-subagent-first-turn.jsonl"])
    assert [m.id for m in t.messages] == ["s-u1", "s-a1", "s-t1", "s-a2"]
    o, session = fit(t, TokenCounter("o200k_base"))
    assert o.first_error == 0.0 and o.fixed + pairs(t, session)[0][1] == 18_609
