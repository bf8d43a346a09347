"""go-replace (seed 003) and its ``current`` preset (Crush internal/agent at 37f36e93): triggers with their
boundaries, history cleaning, the summarizer request, the new history, replays and failure."""

from __future__ import annotations

import math

import pytest

from compbench.data.transcript import Message, ToolResult, Transcript, Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits
from compbench.strategies import resolve
from compbench.strategies.go_replace import (
    COMPACTION_PROMPT,
    CRUSH_012_PROMPT,
    CRUSH_012_SYSTEM,
    CRUSH_PROMPT,
    CRUSH_SYSTEM,
    GoReplaceParams,
    clean_history,
    remaining_threshold,
)
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of

# --- seed 003 --------------------------------------------------------------------------------------------


def session() -> list[Message]:
    return [system("sys"), user("u1", "first"), assistant("a1", "two calls", [("c1", "bash", {}), ("c2", "read", {})]),
            tool("t1", "c1", "out1"), user("u2", "do X"), assistant("a2", "on it", [("c3", "bash", {})]),
            tool("t3", "c3", "out3")]


def test_seed_pre_turn_trigger_below_equal_above(chars4: TokenCounter) -> None:
    v = view_of(session(), chars4)
    g = resolve("go-replace:preset=seed").create()
    assert g.before_step(v) == ()  # before any call ContextTokens is 0
    v.last_usage = Usage(input=199_990, output=9)
    assert g.before_step(v) == ()
    for out in (10, 11):  # ContextTokens >= 200,000
        v.last_usage = Usage(input=199_990, output=out)
        (c,) = g.before_step(v)
        assert isinstance(c, Compact) and c.reason == "context tokens >= threshold"
    v.last_usage = Usage(input=10_000_000, output=0)
    assert resolve("go-replace:preset=seed,threshold=0").create().before_step(v) == ()  # 0 disables
    assert resolve("go-replace:preset=seed").create().after_step(v, Usage(input=10_000_000)) == ()  # never after a step


def test_clean_history_fills_missing_results_and_ends_with_an_assistant() -> None:
    cleaned = clean_history(session())
    assert [m.id for m in cleaned] == ["sys", "u1", "a1", "a1:noresp0", "t1", "u2", "a2", "t3", "understood"]
    filled = cleaned[3].parts[0]
    assert isinstance(filled, ToolResult) and (filled.call_id, filled.name, filled.output) == (
        "c2", "read", "Tool no response")
    assert cleaned[-1].role == "assistant" and cleaned[-1].text == "Understood."
    assert [m.id for m in clean_history(session()[:5])] == ["sys", "u1", "a1", "a1:noresp0", "t1", "u2"]


def test_seed_request_and_new_history(chars4: TokenCounter) -> None:
    v = view_of(session(), chars4)
    v.last_usage = Usage(input=200_000)
    (c,) = resolve("go-replace:preset=seed").create().before_step(v)
    assert isinstance(c, Compact) and c.on_failure == "unchanged"
    assert c.new_view == (Keep("sys"), Insert("user", "", "\n\nLast request from user was: do X", True, "summary"))
    req = c.request
    assert req is not None and req.system == "" and req.max_output_tokens is None
    assert [m.id for m in req.prompt] == [
        "sys", "u1", "a1", "a1:noresp0", "t1", "u2", "a2", "t3", "understood", "compaction-prompt"]
    assert req.prompt[-1].role == "user" and req.prompt[-1].text == COMPACTION_PROMPT
    assert COMPACTION_PROMPT.startswith("Provide a detailed but concise summary of our conversation.")
    assert COMPACTION_PROMPT.count("\n\n") == 8  # intro, 7 sections, closing paragraph
    assert [m.id for m in req.source] == ["u1", "a1", "a1:noresp0", "t1", "u2", "a2", "t3", "understood"]


def test_seed_without_system_or_user_message(chars4: TokenCounter) -> None:
    v = view_of([assistant("a0", "hello")], chars4)
    v.last_usage = Usage(input=200_000)
    (c,) = resolve("go-replace:preset=seed").create().before_step(v)
    assert isinstance(c, Compact) and c.new_view == (Insert("user", "", "", True, "summary"),)


def rounds(n: int, sys: bool = True) -> Transcript:
    msgs: list[Message] = [system("sys", "s" * 40)] if sys else []
    for k in range(1, n + 1):  # 100 tokens each (chars4), the system message 10
        msgs += [user(f"u{k}", "u" * 400), assistant(f"a{k}", "a" * 400, [(f"c{k}", "bash", {})]),
                 tool(f"t{k}", f"c{k}", "t" * 400), assistant(f"b{k}", "b" * 400)]
    return transcript(*msgs)


def test_seed_replay_compacts_before_the_step_that_crosses(chars4: TokenCounter) -> None:
    sm = MockSummarizer("SUM")
    tr = run(rounds(4), resolve("go-replace:preset=seed,threshold=1000").create(), chars4, summarizer=sm)
    # a tool call is 'bash{}' = 6 chars -> 2 tokens: steps 212, 412, 614, 814, 1016 (>= 1000) ...
    assert [s.input + s.output for s in tr.steps][:5] == [212, 412, 614, 814, 1016]
    (e,) = tr.compactions
    assert (e.step, e.phase, e.kept_ids) == (5, "before", ("sys",))
    assert tr.final_view == ("sys", "compbench:1:1:summary", "b3", "u4", "a4", "t4", "b4")
    # the trailing tool result t3 got an 'Understood.' before the prompt
    assert [m.id for m in sm.requests[0].prompt][-3:] == ["t3", "understood", "compaction-prompt"]
    # the new view: 10 (system) + ceil(len('SUM' + LAST_REQUEST + 400 u) / 4) = 10 + ceil(433 / 4)
    assert (tr.steps[5].input, tr.steps[5].output) == (119, 100)


def test_seed_failure_leaves_the_view_and_retries_every_turn(chars4: TokenCounter) -> None:
    strategy = resolve("go-replace:preset=seed,threshold=1000").create()
    tr = run(rounds(4), strategy, chars4, summarizer=MockSummarizer(error="x"))
    assert [(e.step, e.ok, e.error) for e in tr.compactions] == [(5, False, "x"), (6, False, "x"), (7, False, "x")]
    assert len(tr.final_view) == 17 and tr.final_view[0] == "sys"


# --- current: Crush -------------------------------------------------------------------------------------


def test_crush_threshold_rule() -> None:
    p = GoReplaceParams()
    assert remaining_threshold(300_000, p) == 20_000  # > 200,000: fixed buffer
    assert remaining_threshold(200_000, p) == 40_000  # not > 200,000: 20%
    assert remaining_threshold(1_271, p) == 254  # int(254.2)


@pytest.mark.parametrize(("window", "threshold"), [(199_999, 39_999), (200_000, 40_000), (200_001, 20_000)])
def test_crush_keeps_20_percent_free_up_to_200k_and_a_flat_20k_above(chars4: TokenCounter, window: int,
                                                                       threshold: int) -> None:
    """Crush v0.13.0 on (2aedcb7fa, 2025-10-27; still agent.go at 37f36e93): remaining = window - (prompt +
    completion) <= int(window x 0.2) while window <= 200,000, else <= 20,000; at, below and above 200k."""
    assert remaining_threshold(window, GoReplaceParams()) == threshold
    v = view_of([system("sys"), user("u1", "go"), assistant("a1", "done")], chars4, ModelLimits(window, 4_096))
    at = window - threshold  # the first total that leaves the threshold free
    assert resolve("go-replace:preset=current").create().after_step(v, Usage(input=at - 101, output=100)) == ()
    (c,) = resolve("go-replace:preset=current").create().after_step(v, Usage(input=at - 100, output=100))
    assert isinstance(c, Compact) and c.reason == "remaining tokens <= threshold"


def test_crush_trigger_below_equal_above(chars4: TokenCounter) -> None:
    msgs = [system("sys"), user("u1", "go"), assistant("a1", "done")]
    for window, at in ((300_000, 280_000), (200_000, 160_000)):
        v = view_of(msgs, chars4, ModelLimits(window, 4_096))
        assert resolve("go-replace:preset=current").create().after_step(v, Usage(input=at - 1)) == ()
        (c,) = resolve("go-replace:preset=current").create().after_step(v, Usage(input=at - 10, output=10))
        assert isinstance(c, Compact) and c.reason == "remaining tokens <= threshold"
        (c,) = resolve("go-replace:preset=current").create().after_step(v, Usage(input=at + 1))
        assert isinstance(c, Compact)
    v = view_of(msgs, chars4, ModelLimits(0, 4_096))
    assert resolve("go-replace:preset=current").create().after_step(v, Usage(input=10**9)) == ()  # unknown window
    v.last_usage = Usage(input=10**9)
    assert resolve("go-replace:preset=current").create().before_step(v) == ()  # no pre-turn check


def test_crush_request_and_new_history(chars4: TokenCounter) -> None:
    v = view_of([system("sys"), user("u1", "go"), assistant("a1", "done")], chars4, ModelLimits(300_000, 4_096))
    (c,) = resolve("go-replace:preset=current").create().after_step(v, Usage(input=280_000))
    assert isinstance(c, Compact) and c.meta == {"requeued": False}
    assert c.new_view == (Keep("sys"), Insert("user", "", "", True, "summary"))  # the summary alone
    req = c.request
    assert req is not None and req.system == CRUSH_SYSTEM
    assert CRUSH_SYSTEM.startswith("You are summarizing a conversation to preserve context")
    assert [m.id for m in req.prompt] == ["u1", "a1", "crush-summary"]  # no agent system prompt
    assert req.prompt[-1].text == CRUSH_PROMPT == "Provide a detailed summary of our conversation above."


def test_crush_replay_with_tool_calls_waits_for_results_and_requeues(chars4: TokenCounter) -> None:
    sm = MockSummarizer("SUM")
    tr = run(rounds(4), resolve("go-replace:preset=current").create(), chars4, window=1_270, summarizer=sm)
    # threshold int(1270 * 0.2) = 254; after a3: 1270 - 1016 = 254 <= 254 (a3 has a tool call)
    (e,) = tr.compactions
    assert (e.step, e.phase, e.kept_ids) == (5, "before", ("sys",))
    assert e.replaced_ids[-2:] == ("a3", "t3")  # its tool result is summarized with it
    assert tr.final_view == (
        "sys", "compbench:1:1:summary", "compbench:1:2:synthetic", "b3", "u4", "a4", "t4", "b4")
    assert e.meta == {"requeued": True}
    requeue = ("The previous session was interrupted because it got too long, the initial user request was: `"
               + "u" * 400 + "`")
    assert len(requeue) == 494 and chars4.count_text(requeue) == 124
    assert tr.steps[5].input == 10 + 1 + 124  # system, 'SUM', the re-queued prompt
    assert [m.id for m in sm.requests[0].prompt][-3:] == ["a3", "t3", "crush-summary"]


def test_crush_replay_without_tool_calls_compacts_at_once(chars4: TokenCounter) -> None:
    tr = run(rounds(4), resolve("go-replace:preset=current").create(), chars4, window=1_271,
             summarizer=MockSummarizer("SUM"))
    # after a3: 255 > 254; after b3 (no calls, the run ends): 1271 - 1216 = 55 -> summarize before u4
    (e,) = tr.compactions
    assert (e.step, e.phase, e.meta) == (5, "after", {"requeued": False})
    assert tr.final_view == ("sys", "compbench:1:1:summary", "u4", "a4", "t4", "b4")
    failed = run(rounds(4), resolve("go-replace:preset=current").create(), chars4, window=1_271,
                 summarizer=MockSummarizer(error="boom"))
    # a4 (tool call) flags again and fails before b4; b4 ends its run and fails at once
    assert [(x.step, x.phase, x.ok) for x in failed.compactions] == [
        (5, "after", False), (7, "before", False), (7, "after", False)]
    assert len(failed.final_view) == 17


def test_resolve_parses_params() -> None:
    assert resolve("go-replace:preset=seed").params == GoReplaceParams(200_000, "threshold", 200_000, 20_000, 0.2)
    assert resolve("go-replace:preset=current,remaining_tokens=30000,remaining_ratio=0.25").params == (
        GoReplaceParams(mode="remaining", remaining_tokens=30_000, remaining_ratio=0.25))
    assert resolve("go-replace:preset=seed,threshold=150000").params.threshold == 150_000




@pytest.mark.parametrize(("version", "preset"), [
    ("session of 2025-10-26", "0.12"), ("session of 2025-10-27", "current"), ("session of 2025-10-28", "current"),
    ("session of 2025-07-29", "0.12"), ("session of 2026-04-02", "current"), ("0.90.0", "")])
def test_crush_builds_are_chosen_from_the_sessions_date(version: str, preset: str) -> None:
    from compbench.strategies.go_replace import version_preset

    assert version_preset(version) == preset


# --- 0.12: Crush before v0.13.0 -------------------------------------------------------------------------------


@pytest.mark.parametrize(("window", "at"), [(200_000, 190_000), (300_000, 285_000), (100_001, 95_001), (1_271, 1_208)])
def test_crush_012_asks_at_95_percent_of_any_window(chars4: TokenCounter, window: int, at: int) -> None:
    """v0.12.3 tui.go: tokens >= window x 0.95 (ceil), whatever the window (no 200k rule): at, below, above."""
    assert at == math.ceil(window * 0.95)
    v = view_of([system("sys"), user("u1", "go"), assistant("a1", "done")], chars4, ModelLimits(window, 4_096))
    assert resolve("go-replace:preset=0.12").create().after_step(v, Usage(input=at - 101, output=100)) == ()
    (c,) = resolve("go-replace:preset=0.12").create().after_step(v, Usage(input=at - 100, output=100))
    assert isinstance(c, Compact) and c.meta == {"requeued": False}
    (c,) = resolve("go-replace:preset=0.12").create().after_step(v, Usage(input=at + 1))
    assert isinstance(c, Compact)
    if window > 200_000:  # today's rule compacts 20,000 from the end, v0.12 not yet
        assert resolve("go-replace:preset=current").create().after_step(v, Usage(input=window - 20_000)) != ()
        assert resolve("go-replace:preset=0.12").create().after_step(v, Usage(input=window - 20_000)) == ()


def test_crush_012_waits_for_the_run_to_end_and_asks_with_its_own_prompt(chars4: TokenCounter) -> None:
    calls = [system("sys"), user("u1", "go"), assistant("a1", "run", [("c1", "bash", {})])]
    v = view_of(calls, chars4, ModelLimits(200_000, 4_096))
    old = resolve("go-replace:preset=0.12").create()
    assert old.after_step(v, Usage(input=199_000)) == () and old.before_step(v) == ()  # a tool call pending: no dialog
    new = resolve("go-replace:preset=current").create()
    assert new.after_step(v, Usage(input=199_000)) == () and new.before_step(v) != ()  # today: after the results
    sm = MockSummarizer("SUM")
    tr = run(rounds(4), resolve("go-replace:preset=0.12").create(), chars4, window=800, summarizer=sm)
    # 0.95 x 800 = 760: a2 (614) with its tool call, no; b2 ends run 2 at 814: summarized before u3, not re-queued;
    # run 4 again at its end (b4), never at a tool call's step
    assert [s.input + s.output for s in tr.steps][:4] == [212, 412, 614, 814]
    assert [(e.step, e.phase, e.meta["requeued"]) for e in tr.compactions] == [(3, "after", False), (7, "after", False)]
    assert tr.compactions[0].replaced_ids[-1] == "b2" and tr.compactions[1].replaced_ids[-1] == "b4"
    assert tr.final_view == ("sys", "compbench:2:1:summary")
    req = sm.requests[0]
    assert req.system == CRUSH_012_SYSTEM and req.prompt[-1].text == CRUSH_012_PROMPT
    assert CRUSH_012_SYSTEM.startswith("You are a helpful AI assistant tasked with summarizing conversations.")
