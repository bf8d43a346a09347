"""round-chained against seed 004: its 50-message example, the estimator, the threshold, the tool-pair
boundary, chained rounds, the prompts verbatim, the failure path and the ``window`` preset."""

from __future__ import annotations

import re

import pytest
from conftest import need_shared

from compbench.data.transcript import Message, Reasoning, Text
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits, SessionView
from compbench.strategies import resolve
from compbench.strategies.round_chained import (
    SYSTEM_PROMPT,
    USER_PROMPT,
    RoundChained,
    RoundChainedParams,
    args_json,
    calculate_threshold,
    estimate_message,
    format_messages_for_summary,
    js_len,
    js_stringify,
    original_task,
    select,
)
from compbench.summarizers.mock import MockSummarizer
from helpers import ROOT, applied, assistant, run, system, tool, transcript, user, view_of

SEED = ROOT.parent / "shared" / "seeds" / "004_de18f529e65eee2b.txt"


def fifty() -> list[Message]:
    """Seed 004's visual example: [0] system, [1] the task, tool pairs, [46] 'All tests pass', [47] user,
    [48] a call and [49] its result."""
    msgs = [system("m0"), user("m1", "Build a flashcard app")]
    for i in range(2, 46):
        msgs.append(assistant(f"m{i}", "step", [(f"c{i}", "bash", {"n": i})]) if i % 2 == 0
                    else tool(f"m{i}", f"c{i - 1}", "result"))
    msgs += [assistant("m46", "All tests pass"), user("m47", "Add AI integration"),
             assistant("m48", "I'll add OpenAI...", [("c48", "bash", {})]), tool("m49", "c48", "ok")]
    return msgs


def limit_for(threshold: int) -> int:
    """The smallest modelContextLimit whose threshold is ``threshold`` (reserves 11,000, 80%)."""
    w = 11_000 + -(-threshold * 10 // 8)
    while calculate_threshold(RoundChainedParams(model_context_limit=w), 0) < threshold:
        w += 1
    return w


# --- the estimator ----------------------------------------------------------------------------------------


def test_estimator_per_message_and_fifty_total() -> None:
    msgs = fifty()
    # system 'You are a coding agent.' 23 chars -> 6 + 2; 'step' 1 + 'bash' 1 + '{"n":2}' 2 + 2 = 6;
    # tool '"result"' (JSON.stringify adds quotes) 8 chars -> 2 + 2 = 4; m48: 5 + 1 + '{}' 1 + 2 = 9; m49 '"ok"' 3
    assert [estimate_message(m) for m in msgs[:4]] == [8, 8, 6, 4]
    assert [estimate_message(m) for m in msgs[46:]] == [6, 7, 9, 3]
    assert sum(estimate_message(m) for m in msgs) == 261


def test_estimator_follows_javascript() -> None:
    # a non-BMP character is 2 UTF-16 units: '😀😀😀' is 6 units -> 2 tokens (Python len would give 1)
    assert js_len("😀😀😀") == 6 and estimate_message(user("u", "😀😀😀")) == 2 + 2
    # JSON.stringify(JSON.parse(args)): compact, integer-like keys first, JS numbers
    assert args_json('{"b": 1.0, "10": 2, "a": [1e21, 1.5e-7, 0.000001]}') == \
        '{"10":2,"b":1,"a":[1e+21,1.5e-7,0.000001]}'
    assert args_json("not json") == '"not json"' and args_json("NaN") == '"NaN"'
    # string results: quotes and escapes count; a lone surrogate is escaped as JS does
    assert js_stringify('a"b\nc') == '"a\\"b\\nc"'
    assert estimate_message(tool("t", "c", 'a"b\nc')) == 2 + 3  # 10 chars
    assert js_stringify("x\ud800") == '"x\\ud800"'
    # reasoning is not context; an empty text costs 0
    m = Message("a", "assistant", (Reasoning("think " * 100), Text("")))
    assert estimate_message(m) == 2


# --- trigger: threshold formula and boundaries ---------------------------------------------------------


def test_threshold_formula_128k_whatever_the_window() -> None:
    """``shouldCompact(stepMessages)`` gets no config: DEFAULT_CONFIG's 128k whatever the model."""
    assert calculate_threshold(RoundChainedParams(), 128_000) == 93_600  # floor(117,000 * 0.8)
    assert calculate_threshold(RoundChainedParams(), 200_000) == 93_600
    assert calculate_threshold(RoundChainedParams(model_context_limit=None), 200_000) == 151_200


@pytest.mark.parametrize("window", [128_000, 200_000, 1_000_000])
@pytest.mark.parametrize(("chars", "estimate", "fires"), [
    (374_236, 93_599, False), (374_240, 93_600, True), (374_241, 93_601, True)])
def test_threshold_boundary_is_93600_on_any_window(chars4: TokenCounter, chars: int, estimate: int, fires: bool,
                                                    window: int) -> None:
    # system 8 + ten small users 3 each + a big user 2 + ceil(chars / 4)
    msgs = [system("s"), user("big", "x" * chars), *(user(f"u{i}", "y") for i in range(10))]
    v = view_of(msgs, chars4, ModelLimits(window, 4_096))
    assert sum(estimate_message(m) for m in msgs) == estimate
    assert bool(resolve("round-chained").create().before_step(v)) is fires
    # the window-following variant waits for floor((window - 11,000) * 0.8)
    assert bool(resolve("round-chained:preset=window").create().before_step(v)) is (fires and window == 128_000)


def test_message_count_condition(chars4: TokenCounter) -> None:
    p = RoundChainedParams(model_context_limit=limit_for(1))
    eleven = [system("s"), *(user(f"u{i}", "y") for i in range(10))]
    assert RoundChained(p).before_step(view_of(eleven, chars4)) == ()  # length 11 <= keepLast + 1
    assert RoundChained(p).before_step(view_of([*eleven, user("u10", "y")], chars4))


@pytest.mark.parametrize(("threshold", "fires"), [(260, True), (261, True), (262, False)])
def test_fifty_trigger_boundary(chars4: TokenCounter, threshold: int, fires: bool) -> None:
    p = RoundChainedParams(model_context_limit=limit_for(threshold))
    assert calculate_threshold(p, 0) == threshold
    assert bool(RoundChained(p).before_step(view_of(fifty(), chars4))) is fires


# --- selection: the seed's visual example, tool pairs, chaining ------------------------------------------


def test_fifty_message_visual_example(chars4: TokenCounter) -> None:
    v = view_of(fifty(), chars4)
    assert select(v.entries, 10) == (1, 40, None)
    (c,) = RoundChained(RoundChainedParams(model_context_limit=limit_for(261))).before_step(v)
    assert isinstance(c, Compact) and c.on_failure == "unchanged"
    assert c.new_view == (Keep("m0"), Insert("assistant", with_summary=True, origin="summary", meta={"round": 1}),
                          *(Keep(f"m{i}") for i in range(40, 50)))
    assert c.request is not None
    assert [m.id for m in c.request.source] == [f"m{i}" for i in range(1, 40)]
    assert c.request.max_output_tokens == 1_000 and c.request.previous_summary is None
    assert c.request.meta["heading"] == "## Session Summary (Compaction Round 1)"


def test_fifty_replayed_compacts_before_m50_and_rebuilds_the_view(chars4: TokenCounter) -> None:
    t = transcript(*fifty(), assistant("m50", "next"))
    # the view before m48 estimates 249 < 261; before m50 it is 261: the 25th call (step 24) compacts
    tr = run(t, RoundChained(RoundChainedParams(model_context_limit=limit_for(261))), chars4,
             summarizer=MockSummarizer("## Session Summary (Round 1) ok"))
    (ev,) = tr.compactions
    assert (ev.step, ev.phase, ev.ok) == (24, "before", True)
    assert ev.replaced_ids == tuple(f"m{i}" for i in range(1, 40))
    assert tr.final_view == ("m0", "compbench:1:1:summary", *(f"m{i}" for i in range(40, 51)))


def test_tool_pair_boundary_walks_back_over_every_result(chars4: TokenCounter) -> None:
    msgs = [system("s"), user("u1"), assistant("a2", calls=[("c1", "read", {}), ("c2", "read", {})]),
            tool("t3", "c1", "x"), tool("t4", "c2", "y"),
            *(assistant(f"a{i}") if i % 2 else user(f"u{i}") for i in range(5, 14))]
    v = view_of(msgs, chars4)
    assert select(v.entries, 10) == (1, 2, None)  # 14 - 10 = 4 (t4) -> 3 (t3) -> 2 (a2, the call)
    (c,) = RoundChained(RoundChainedParams(model_context_limit=limit_for(1))).before_step(v)
    assert isinstance(c, Compact) and c.request is not None
    assert [m.id for m in c.request.source] == ["u1"]
    assert [s.id for s in c.new_view if isinstance(s, Keep)] == ["s", "a2", "t3", "t4",
                                                                  *(m.id for m in msgs[5:])]


def test_previous_summary_detection_and_chaining_start(chars4: TokenCounter) -> None:
    msgs = fifty()[:41]
    assert select(view_of(msgs, chars4).entries, 10) == (1, 30, None)  # 31 is a tool result -> its call at 30
    summary = "## Session Summary (Compaction Round 1)\nold"
    chained = [msgs[0], assistant("s", summary), *msgs[1:]]
    assert select(view_of(chained, chars4).entries, 10) == (2, 31, summary)
    # three hashes (what the instruction literally asks for) is not detected: it gets re-summarized
    three = [msgs[0], assistant("s", "#" + summary), *msgs[1:]]
    assert select(view_of(three, chars4).entries, 10) == (1, 31, None)


def test_replay_chains_rounds_with_previous_summary(chars4: TokenCounter) -> None:
    t = [system("s"), user("u", "Build a flashcard app")]
    for i in range(1, 41):
        t += [assistant(f"a{i}", "step", [(f"c{i}", "bash", {"n": i})]), tool(f"t{i}", f"c{i}", "result")]
    t.append(assistant("end", "done"))
    summ = MockSummarizer(lambda r: f"## Session Summary (Compaction Round {r.meta['round']})\nS{r.meta['round']}")
    # threshold 100; the view before a_k estimates 16 + 10(k-1): a10 (step 9) compacts [u .. t4]
    tr = run(transcript(*t), RoundChained(RoundChainedParams(model_context_limit=limit_for(100))), chars4,
             summarizer=summ)
    assert [e.step for e in tr.compactions] == [9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39]
    first, second = summ.requests[:2]
    assert [m.id for m in first.source] == ["u", "a1", "t1", "a2", "t2", "a3", "t3", "a4", "t4"]
    # round 2 summarizes [2..boundary): the summary at [1] is passed, not re-summarized
    assert [m.id for m in second.source] == ["a5", "t5", "a6", "t6", "a7", "t7"]
    assert second.previous_summary == "## Session Summary (Compaction Round 1)\nS1"
    prompt = second.prompt[0].text
    assert prompt.startswith("## Previous Summary\n## Session Summary (Compaction Round 1)\nS1\n\n"
                             "## Original User Task\nUnknown task\n\n## Messages to Summarize\n[0] ASSISTANT:\nstep\n")
    assert "### Session Summary (Compaction Round 2)" in prompt
    assert tr.final_view == ("s", "compbench:11:1:summary", *(f"{k}{i}" for i in range(35, 41) for k in "at"), "end")


# --- prompts ------------------------------------------------------------------------------------------------


def _template(name: str) -> str:
    text = SEED.read_text()
    return re.search(rf"const {name} = `(.*?)`;", text, re.S).group(1)  # type: ignore[union-attr]


def test_prompts_are_the_seeds_verbatim() -> None:
    need_shared(SEED, "seed 004")
    assert SYSTEM_PROMPT == _template("systemPrompt")
    expected = (_template("userPrompt")
                .replace("${previousSummary ?? 'None - this is the first compaction round.'}", "{previous}")
                .replace("${originalTask}", "{task}").replace("${formattedMessages}", "{messages}")
                .replace("${compactionRound}", "{round}"))
    assert USER_PROMPT == expected


def test_first_request_prompt_exactly(chars4: TokenCounter) -> None:
    msgs = fifty()[:4] + [user(f"x{i}", "y") for i in range(10)]
    (c,) = RoundChained(RoundChainedParams(model_context_limit=limit_for(1))).before_step(view_of(msgs, chars4))
    assert isinstance(c, Compact) and c.request is not None and c.request.system == SYSTEM_PROMPT
    (p,) = c.request.prompt
    assert p.role == "user" and p.text == USER_PROMPT.format(
        previous="None - this is the first compaction round.", task="Build a flashcard app", round=1,
        messages='[0] USER:\nBuild a flashcard app\n\n---\n\n[1] ASSISTANT:\nstep\n[Tool: bash({"n":2})]'
                 '\n\n---\n\n[2] TOOL:\n[Result: "result"...]')


def test_formatting_truncates_results_and_long_content() -> None:
    out = format_messages_for_summary([tool("t", "c", "r" * 600), user("u", "z" * 2_001)])
    block_t, block_u = out.split("\n\n---\n\n")
    assert block_t == "[0] TOOL:\n[Result: \"" + "r" * 499 + "...]"  # 500 chars of JSON.stringify
    assert block_u == "[1] USER:\n" + "z" * 2_000 + "\n[...truncated...]"


def test_original_task_and_no_system_message(chars4: TokenCounter) -> None:
    assert original_task([system("s"), assistant("a")]) == "Unknown task"
    # no system message: index 0 (the task) is treated as 'system' and kept verbatim
    msgs = [user("u0", "the task"), *(assistant(f"a{i}") if i % 2 else user(f"u{i}") for i in range(1, 13))]
    (c,) = RoundChained(RoundChainedParams(model_context_limit=limit_for(1))).before_step(view_of(msgs, chars4))
    assert isinstance(c, Compact) and c.new_view[0] == Keep("u0")
    assert c.request is not None and [m.id for m in c.request.source] == ["a1", "u2"]


# --- failure, rounds, presets ---------------------------------------------------------------------------


def test_failure_leaves_view_unchanged_and_round_is_not_consumed(chars4: TokenCounter) -> None:
    t = transcript(*fifty(), assistant("m50", "next"), user("m51", "more"), assistant("m52", "again"))
    summ = MockSummarizer(error="APIError: 500")
    tr = run(t, RoundChained(RoundChainedParams(model_context_limit=limit_for(261))), chars4, summarizer=summ)
    assert [(e.step, e.ok, e.error) for e in tr.compactions] == [(24, False, "APIError: 500"),
                                                                 (25, False, "APIError: 500")]
    assert tr.final_view == tuple(m.id for m in t.messages)
    assert [r.meta["round"] for r in summ.requests] == [1, 1]


def test_noop_resets_the_saved_round(chars4: TokenCounter) -> None:
    strat = RoundChained(RoundChainedParams(model_context_limit=limit_for(1)))
    first = strat.before_step(view_of(fifty(), chars4))
    assert first[0].meta["round"] == 1  # type: ignore[union-attr]
    # round 1 succeeded; the next view is [system, summary, one call with 11 results]: a no-op (boundary 2)
    calls: list[tuple[str, str, dict[str, object]]] = [(f"c{i}", "read", {}) for i in range(11)]
    noop = [system("m0"), assistant("S", "## Session Summary x"), assistant("a", calls=calls),
            *(tool(f"t{i}", f"c{i}", "o") for i in range(11))]
    v: SessionView = view_of(noop, chars4)
    saved = applied(v, first[0])
    assert select(v.entries, 10) is None and strat.before_step(v) == ()
    again = view_of(fifty(), chars4)
    applied(again, first[0], event=saved)  # still its last event: not saved again
    (c,) = strat.before_step(again)
    assert c.meta["round"] == 1  # type: ignore[union-attr]  # round 0 event saved by the no-op: 0 + 1


def test_presets_parse() -> None:
    c = resolve("round-chained:preset=window,recent_messages_to_keep=6,threshold_percent=0.5")
    assert c.params == RoundChainedParams(model_context_limit=None, recent_messages_to_keep=6,
                                          threshold_percent=0.5)
    assert resolve("round-chained").params == RoundChainedParams() == RoundChainedParams(model_context_limit=128_000)
    assert resolve("round-chained:model_context_limit=none").params == RoundChainedParams(model_context_limit=None)
    # seed: DEFAULT_CONFIG's 128k whatever the model; window: the simulated window
    assert calculate_threshold(resolve("round-chained").params, 200_000) == 93_600
    assert calculate_threshold(resolve("round-chained:preset=window").params, 200_000) == 151_200
