"""pi, seed preset (seed 002's plan, measured as pi's implementation of it, c89b1ec3, measured it): the
plan's worked examples through the strategy's own cut, the cut rule and its single-long-turn fallback,
the trigger, the summary request, chained summaries and failure. ``preset=current``: test_strategy_pi_current.

Transcripts use seed 002's notation (u user, a assistant, t a tool result answering the assistant before it);
every message counts 100 tokens with the ``chars4`` counter, so a step's usage is 100 × (messages before it
+ 1) and usage differences count messages.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from compbench.data.transcript import Message, Usage
from compbench.measure.tokens import TokenCounter
from compbench.replay.trajectories import replay
from compbench.replay.viewstate import ReplayConfig
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits
from compbench.sdk.trace import Trace
from compbench.strategies import resolve
from compbench.strategies.pi import Pi, PiParams, estimate_tokens, seed_cut
from compbench.strategies.pi_summary import SEED_PREFIX, SEED_PROMPT, serialize
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of

RESERVE = 16_384


def notation(seq: str) -> list[Message]:
    """``"u1, a1, t1"`` as messages of 100 tokens each; an assistant calls one tool per result after it.
    Ids are the names with their position (``a1#1``), as names repeat."""
    names = [x.strip() for x in seq.split(",")]
    out: list[Message] = []
    for i, n in enumerate(names):
        if n.startswith("u"):
            out.append(user(f"{n}#{i}", "u" * 400))
        elif n.startswith("t"):
            out.append(tool(f"{n}#{i}", f"c{i}", "t" * 400))
        else:
            calls = 0
            while i + 1 + calls < len(names) and names[i + 1 + calls].startswith("t"):
                calls += 1
            out.append(assistant(f"{n}#{i}", "a" * (400 - 8 * calls),  # a call ("bash{}") counts 2
                                 [(f"c{i + 1 + k}", "bash", {}) for k in range(calls)]))
    return out


def names(ids: Sequence[str]) -> list[str]:
    return [i.split("#")[0] if "#" in i else "[summary]" for i in ids]


FILE = "u1, a1, t1, t1, a1, u2, a2, u3, a3, t3, a3, t3, a3, u4, a4, t4, a4"


def replayed(seq: str, keep: int, threshold: int, summary: str = "S", manual_at: int | None = None) -> Trace:
    t = transcript(*notation(seq))
    limits = ModelLimits(threshold + RESERVE, 4_096)  # compacts once input + output > threshold
    return replay(t, resolve(f"pi:preset=seed,keep_recent_tokens={keep}").create(), MockSummarizer(summary),
                  ReplayConfig(limits, manual_at=manual_at), TokenCounter("chars4", message_overhead=0))


# --- seed 002's worked examples, through the strategy's own cut -------------------------------------------


def test_messages_count_100_tokens_as_the_tests_assume(chars4: TokenCounter) -> None:
    assert {chars4.message(m) for m in notation(FILE)} == {100}


def test_single_compaction_keeps_u4_a4_t4_a4_and_new_messages_follow() -> None:
    """ "Compaction triggers, keeping last 4 messages": [summary], u4, a4, t4, a4; then u5, a5 are appended.
    Usages after a4: newest 1,700; a4 1,500 (diff 200), a3 1,300 (diff 400 >= 300): the oldest kept
    assistant is a4 (position 14), whose turn starts at u4."""
    tr = replayed(f"{FILE}, u5, a5", keep=300, threshold=1_550, summary="S" * 1_600)
    (ev,) = tr.compactions
    assert ev.step == 7 and ev.phase == "after"  # the 8th call (a4, position 16): 1,700 > 1,550
    assert names(tr.final_view) == ["[summary]", "u4", "a4", "t4", "a4", "u5", "a5"]
    assert names(ev.replaced_ids) == ["u1", "a1", "t1", "t1", "a1", "u2", "a2", "u3", "a3", "t3", "a3", "t3", "a3"]


def test_multiple_compactions_the_second_keeps_u6s_whole_turn_and_never_crosses_the_first() -> None:
    """ "[COMPACTION 2: keepLastMessages=3]" builds [summary2], u6, a6, t6, a6, u7, a7: the third-last
    message (a6) is mid-turn, so the whole turn from u6 is kept. After compaction 1 the view is 432 + 400;
    a7's call reports 832 + 700 + 100 = 1,632 > 1,550 (a6's: 1,432). Walking back from a7: a6 (diff 200),
    a6 (diff 400 >= 300): the oldest kept assistant is the second a6; its turn starts at u6."""
    tr = replayed(f"{FILE}, u5, a5, u6, a6, t6, a6, u7, a7", keep=300, threshold=1_550, summary="S" * 1_600)
    first, second = tr.compactions
    assert names(first.kept_ids) == ["u4", "a4", "t4", "a4"]
    assert second.step == 11 and names(tr.final_view) == ["[summary]", "u6", "a6", "t6", "a6", "u7", "a7"]
    # the summarizer saw the whole current context: the first summary and compaction 1's kept messages
    assert names(second.replaced_ids) == ["[summary]", "u4", "a4", "t4", "a4", "u5", "a5"]


def test_boundary_rule_more_than_available_takes_what_followed_the_previous_compaction() -> None:
    """ "keepLastMessages=10 but only 6 messages exist after COMPACTION 1: we take all available messages
    up to the boundary". Compaction 1 is a /compact before u5 (keeping u3..a4, 10 messages: 1,032 tokens
    with the summary); compaction 2 follows a7 (1,832 > 1,750; a6: 1,632) with 8 messages since and 600
    tokens of usage difference < 1,000: all 8 are kept, not one of compaction 1's."""
    tr = replayed(f"{FILE}, u5, a5, u6, a6, t6, a6, u7, a7", keep=1_000, threshold=1_750, manual_at=17)
    first, second = tr.compactions
    assert first.phase == "manual" and names(first.kept_ids) == ["u3", "a3", "t3", "a3", "t3", "a3", "u4", "a4",
                                                                  "t4", "a4"]
    assert second.phase == "after" and names(second.kept_ids) == ["u5", "a5", "u6", "a6", "t6", "a6", "u7", "a7"]


def test_branching_example_compaction_keeps_u2_a2() -> None:
    """Branching example: u1, a1, u2, a2 [COMPACTION keepLastMessages=2] u3, a3, u4, a4 builds [summary],
    u2, a2, u3, a3, u4, a4. The compaction (a /compact before u3) keeps u2, a2; what a branch then copies
    is the session file's business, not the strategy's."""
    tr = replayed("u1, a1, u2, a2, u3, a3, u4, a4", keep=200, threshold=100_000, manual_at=4)
    assert names(tr.final_view) == ["[summary]", "u2", "a2", "u3", "a3", "u4", "a4"]


# --- the cut: usages, the turn rule, the single long turn ---------------------------------------------------


def cut(seq: str, usages: dict[int, int], keep: int, start: int = 0) -> int:
    msgs = notation(seq)
    v = view_of(msgs, TokenCounter("chars4", message_overhead=0))
    return seed_cut(v.entries, 0, start, len(msgs), keep, {msgs[k].id: u for k, u in usages.items()})


@pytest.mark.parametrize(("keep", "expected"), [(199, 4), (200, 4), (201, 2)])
def test_keep_recent_tokens_is_reached_at_equality(keep: int, expected: int) -> None:
    # newest a3 500; a2 300 (diff 200), a1 100 (diff 400). diff >= keep at a2 keeps a3's turn (u3 at 4);
    # a strict > would go on to a1 and keep from u2 (2)
    assert cut("u1, a1, u2, a2, u3, a3", {1: 100, 3: 300, 5: 500}, keep) == expected


def test_the_cut_moves_back_to_the_turn_of_the_oldest_kept_assistant() -> None:
    # u1 a1 | u2 a2 t2 a2 t2 a2: newest 800; a2 (3) 400 diff 400 >= 300 -> oldest kept a2 at 5, turn u2 (2)
    assert cut("u1, a1, u2, a2, t2, a2, t2, a2", {1: 200, 3: 400, 5: 600, 7: 800}, 300) == 2
    # nothing reaches keepRecentTokens: keep everything; no usage: keep the last turn
    assert cut("u1, a1, u2, a2", {1: 200, 3: 400}, 1_000) == 0
    assert cut("u1, a1, u2, a2", {}, 1_000) == 2


def test_one_long_turn_is_cut_before_an_assistant_not_at_its_prompt() -> None:
    """The literal rule keeps the turn whole: from u1, summarizing nothing. The cut moves to the oldest kept
    assistant instead, its tool result following it."""
    seq = "u1, a1, t1, a2, t2, a3, t3, a4"
    assert cut(seq, {1: 200, 3: 400, 5: 600, 7: 800}, 300) == 5
    # after a compaction (range from 2): no user message in range, the same rule (not "keep everything")
    assert cut(seq, {3: 400, 5: 600, 7: 800}, 300, start=2) == 5
    # a range opening with the tool result of an already kept call is never cut there
    assert cut(seq, {3: 400, 5: 600, 7: 800}, 10_000, start=2) == 3


def test_a_single_turn_session_compacts_to_keep_recent_tokens_every_time(chars4: TokenCounter) -> None:
    """Issue 15: one prompt and 40 tool calls (a 100, t 900). The literal seed replaced nothing at the first
    compaction (the context grew) and kept 3 messages at the next; now each one keeps the steps whose usage
    is within keepRecentTokens, from an assistant message."""
    msgs: list[Message] = [system("sys", "s" * 400), user("u1", "fix it " * 57)]
    for k in range(40):
        msgs += [assistant(f"a{k}", "a" * 392, [(f"c{k}", "bash", {})]), tool(f"t{k}", f"c{k}", "o" * 3_600)]
    strategy = resolve("pi:preset=seed,keep_recent_tokens=2000").create()
    tr = run(transcript(*msgs), strategy, chars4, window=RESERVE + 10_000,
             summarizer=MockSummarizer("S"))
    assert len(tr.compactions) == 4
    for ev in tr.compactions:
        assert ev.tokens_after < ev.tokens_before - 6_000
        kept = [i for i in ev.kept_ids if i != "sys"]
        assert kept[0].startswith("a") and len(kept) == 3  # a, t, a: 2,000 of usage difference
    assert "u1" in tr.compactions[0].replaced_ids


# --- trigger -------------------------------------------------------------------------------------------------


def test_estimate_tokens_is_pis_chars_over_4() -> None:
    assert estimate_tokens(user("u", "x" * 9)) == 3  # ceil(9 / 4)
    # 8 + len("read") + len('{"path":"/src/a.py"}') = 8 + 4 + 20 = 32 (JSON.stringify: no spaces)
    assert estimate_tokens(assistant("a", "y" * 8, [("c", "read", {"path": "/src/a.py"})])) == 8
    assert estimate_tokens(tool("t", "c", "z" * 21)) == 6
    assert estimate_tokens(user("e", "\U0001F600" * 2)) == 1  # UTF-16 units: 4 -> 1
    assert estimate_tokens(system("s", "x" * 400)) == 100


def test_trigger_just_below_equal_above(chars4: TokenCounter) -> None:
    v = view_of([user("u1"), assistant("a1")], chars4, ModelLimits(50_000, 4_096))
    limit = 50_000 - RESERVE  # 33,616: contextTokens > contextWindow - reserveTokens
    assert resolve("pi:preset=seed").create().after_step(v, Usage(input=limit - 101, output=100)) == ()
    assert resolve("pi:preset=seed").create().after_step(v, Usage(input=limit - 100, output=100)) == ()  # equal
    (c,) = resolve("pi:preset=seed").create().after_step(v, Usage(input=limit - 99, output=100))
    assert isinstance(c, Compact) and c.request is not None
    assert c.request.max_output_tokens == 13_107  # floor(0.8 * 16384)
    assert resolve("pi:preset=seed,enabled=false").create().after_step(v, Usage(input=limit, output=100)) == ()
    (r,) = resolve("pi:preset=seed,reserve_tokens=1000").create().after_step(v, Usage(input=49_001, output=0))
    assert isinstance(r, Compact) and r.request is not None and r.request.max_output_tokens == 800


def test_trigger_is_on_the_context_window_not_the_input_limit(chars4: TokenCounter) -> None:
    """``shouldCompact(contextTokens, model.contextWindow, ...)``: a model's smaller input limit is not it."""
    v = view_of([user("u1"), assistant("a1")], chars4, ModelLimits(200_000, 32_000, max_input=100_000))
    assert resolve("pi:preset=seed").create().after_step(v, Usage(input=183_616)) == ()  # over 100,000 - 16,384
    assert resolve("pi:preset=seed").create().after_step(v, Usage(input=183_617))


def test_seed_request_is_the_whole_context_and_the_plans_prompt(chars4: TokenCounter) -> None:
    msgs = notation("u1, a1, t1, a1, u2, a2")
    p = Pi(PiParams(keep_recent_tokens=200))
    p.usages = {msgs[1].id: 200, msgs[3].id: 400, msgs[5].id: 600}  # what the loop reported
    (c,) = p.after_step(view_of([system("sys"), *msgs], chars4), Usage(input=200_000))
    # newest 600, a1 400 (diff 200 >= 200): the oldest kept assistant is a2, its turn starts at u2
    assert isinstance(c, Compact) and c.new_view == (
        Keep("sys"), Insert("user", SEED_PREFIX, "", True, "summary"), Keep("u2#4"), Keep("a2#5"))
    assert SEED_PREFIX == ("Another language model worked on this task and produced a summary. Use this to "
                           "continue the work without duplicating effort:\n\n")
    req = c.request
    assert req is not None and req.system == "" and req.previous_summary is None
    assert [m.id for m in req.prompt] == ["sys", *(m.id for m in msgs), "pi-compaction"]
    assert req.prompt[-1].role == "user" and req.prompt[-1].text == SEED_PROMPT
    assert SEED_PROMPT.startswith("You are performing a CONTEXT CHECKPOINT COMPACTION.")
    assert names([m.id for m in req.source]) == ["u1", "a1", "t1", "a1"]
    f = Pi(PiParams(keep_recent_tokens=200, custom_instructions="focus on tests"))
    f.usages = dict(p.usages)
    (fc,) = f.after_step(view_of([system("sys"), *msgs], chars4), Usage(input=200_000))
    assert isinstance(fc, Compact) and fc.request is not None
    assert fc.request.prompt[-1].text == SEED_PROMPT + "\n\nAdditional focus: focus on tests"


def test_aborted_assistant_messages_report_no_usage(chars4: TokenCounter) -> None:
    """``getAssistantUsage`` skips aborted messages: their usage never enters the cut's walk."""
    p = Pi(PiParams())
    aborted = Message("x", "assistant", assistant("x").parts, meta={"stop_reason": "aborted"})
    p.after_step(view_of([user("u1"), aborted], chars4), Usage(input=10))
    p.after_step(view_of([user("u1"), aborted, user("u2"), assistant("a2")], chars4), Usage(input=20))
    assert p.usages == {"a2": 20}


# --- replay: chained summaries, failure ------------------------------------------------------------------------


def test_replay_chains_summaries_through_the_whole_context() -> None:
    tr = replayed("u1, a1, u2, a2, u3, a3, u4, a4, u5, a5", keep=150, threshold=450)
    # usages 200, 400, 600 (> 450): diff 200 >= 150 at a2 keeps u3 a3; then 32 + 300 + 100 = 432, 632
    assert [(e.step, names(e.kept_ids)) for e in tr.compactions] == [(2, ["u3", "a3"]), (4, ["u5", "a5"])]
    assert names(tr.compactions[1].replaced_ids) == ["[summary]", "u3", "a3", "u4", "a4"]


def test_replay_second_compaction_never_cuts_into_the_first_ones_kept_messages() -> None:
    tr = replayed("u1, a1, u2, a2, u3, a3, u4, a4", keep=350, threshold=450)
    # first: diffs 200, 400 >= 350 at a1 keep u2..a3; then 32 + 500 + 100 = 632: only u4 a4 are new, and
    # their usage difference (none: one assistant) keeps them whole, u2..a3 are summarized
    assert [(e.step, names(e.kept_ids)) for e in tr.compactions] == [(2, ["u2", "a2", "u3", "a3"]),
                                                                     (3, ["u4", "a4"])]


def test_replay_failure_leaves_the_view_unchanged(chars4: TokenCounter) -> None:
    t = transcript(*notation("u1, a1, u2, a2, u3, a3, u4, a4"))
    tr = run(t, resolve("pi:preset=seed,keep_recent_tokens=150").create(), chars4, window=RESERVE + 450,
             summarizer=MockSummarizer(error="boom"))
    assert [(e.step, e.ok, e.error) for e in tr.compactions] == [(2, False, "boom"), (3, False, "boom")]
    assert tr.final_view == tuple(m.id for m in t.messages)


def test_serialize_truncates_tool_results_at_2000_chars() -> None:
    text = serialize([tool("t", "c", "k" * 2_005), tool("e", "c", ""), user("u", "hi")])
    assert text == "[Tool result]: " + "k" * 2_000 + "\n\n[... 5 more characters truncated]\n\n[User]: hi"


def test_resolve_parses_params() -> None:
    assert resolve("pi:preset=seed").params == PiParams(16_384, 20_000, True, False, False, "message_end", False, "")
    assert resolve("pi:preset=current,keep_recent_tokens=8000").params == PiParams(
        keep_recent_tokens=8_000, cut_at_assistant=True, current_format=True, trigger="agent_end",
        overflow_retry=True, cache_write=True)
