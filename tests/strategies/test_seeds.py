"""Strategies against their seeds' worked examples, formulas and trigger boundaries."""

from __future__ import annotations

from dataclasses import replace

from compbench.data.transcript import Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits, Prune
from compbench.strategies import resolve
from compbench.strategies.opencode import PLACEHOLDER, OpenCode, OpenCodeParams
from compbench.strategies.round_chained import (
    RoundChained,
    RoundChainedParams,
    calculate_threshold,
    estimate_message,
    select,
)
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of

# --- pi: seed 002's worked examples run through the strategy itself in tests/strategies/test_pi.py ----------


def test_pi_trigger_boundary(chars4: TokenCounter) -> None:
    v = view_of([user("u1", "x" * 400), assistant("a1", "y")], chars4, ModelLimits(100_000, 4_096))
    pi = resolve("pi:preset=seed").create()
    limit = 100_000 - 16_384  # contextTokens > contextWindow - reserveTokens
    assert pi.after_step(v, Usage(input=limit - 10, output=10)) == ()
    (c,) = pi.after_step(v, Usage(input=limit - 9, output=10))
    assert isinstance(c, Compact) and c.request is not None and c.request.max_output_tokens == 13_107


# --- round-chained: seed 004 -----------------------------------------------------------------------------


def fifty() -> list:  # type: ignore[type-arg]
    msgs = [system("m0"), user("m1", "Build a flashcard app")]
    for i in range(2, 46):
        msgs.append(assistant(f"m{i}", "step", [(f"c{i}", "bash", {"n": i})]) if i % 2 == 0
                    else tool(f"m{i}", f"c{i - 1}", "result"))
    msgs += [assistant("m46", "All tests pass"), user("m47", "Add AI integration"),
             assistant("m48", "I'll add OpenAI...", [("c48", "bash", {})]), tool("m49", "c48", "ok")]
    return msgs


def test_round_chained_fifty_message_example(chars4: TokenCounter) -> None:
    msgs = fifty()
    v = view_of(msgs, chars4)
    assert select(v.entries, 10) == (1, 40, None)
    strat = RoundChained(RoundChainedParams(model_context_limit=11_100))  # threshold floor(100 * 0.8) = 80
    (c,) = strat.before_step(v)
    assert isinstance(c, Compact)
    assert c.new_view[0] == Keep("m0") and isinstance(c.new_view[1], Insert)
    assert [s.id for s in c.new_view[2:] if isinstance(s, Keep)] == [f"m{i}" for i in range(40, 50)]
    assert c.request is not None and [m.id for m in c.request.source] == [f"m{i}" for i in range(1, 40)]
    assert c.request.max_output_tokens == 1_000
    assert "### Session Summary (Compaction Round 1)" in c.request.prompt[0].text


def test_round_chained_tool_pair_boundary_and_chaining(chars4: TokenCounter) -> None:
    msgs = fifty()[:41]  # boundary = 41 - 10 = 31, a tool result: moves back to its call at 30
    v = view_of(msgs, chars4)
    assert select(v.entries, 10) == (1, 30, None)
    chained = [msgs[0], assistant("s", "## Session Summary (Compaction Round 1)\nold"), *msgs[1:]]
    assert select(view_of(chained, chars4).entries, 10) == (2, 31, "## Session Summary (Compaction Round 1)\nold")


def test_round_chained_threshold_formula_and_boundary(chars4: TokenCounter) -> None:
    assert calculate_threshold(RoundChainedParams(), 128_000) == 93_600
    msgs = fifty()
    total = sum(estimate_message(m) for m in msgs)
    for limit, fires in ((total, True), (total + 1, False), (total - 1, True)):
        # choose the window so the threshold is exactly `limit`: floor((W - 11000) * 0.8) == limit
        window = 11_000 + -(-limit * 10 // 8)
        p = RoundChainedParams(model_context_limit=window)
        assert calculate_threshold(p, 0) == limit
        assert bool(RoundChained(p).before_step(view_of(msgs, chars4))) is fires


# --- opencode: seed 001 -----------------------------------------------------------------------------------


def test_opencode_is_overflow_boundary(chars4: TokenCounter) -> None:
    oc = OpenCode(OpenCodeParams())
    v = view_of([user("u1")], chars4, ModelLimits(200_000, 64_000))
    usable = 200_000 - 32_000  # min(64000, 32000)
    assert not oc.is_overflow(v, Usage(input=usable - 100, output=100))  # equal: not over
    assert oc.is_overflow(v, Usage(input=usable - 99, output=100))
    assert not oc.is_overflow(view_of([user("u1")], chars4, ModelLimits(0, 0)), Usage(input=10**9))
    assert not OpenCode(OpenCodeParams(auto=False)).is_overflow(v, Usage(input=10**9))
    assert oc.is_overflow(view_of([user("u1")], chars4, ModelLimits(200_000, 0)), Usage(input=168_001))


def huge_session(turns: int) -> list:  # type: ignore[type-arg]
    out = []
    for k in range(1, turns + 1):
        names = ["skill" if k == 2 else "bash", "bash", "bash"]
        out += [user(f"u{k}"), assistant(f"a{k}", calls=[(f"c{k}{j}", names[j], {}) for j in range(3)])]
        from compbench.data.transcript import Message, ToolResult

        out.append(Message(f"t{k}", "tool", tuple(ToolResult(f"c{k}{j}", names[j], "x" * 30_000,
                                                             is_error=(k == 1 and j == 2)) for j in range(3))))
    return out


def test_opencode_prunes_exactly_what_seed_001_selects(chars4: TokenCounter) -> None:
    oc = OpenCode(OpenCodeParams())
    v = view_of([*huge_session(12), user("u13")], chars4)
    p = oc.prune(v)
    # every output estimates round(30000/4) = 7,500. Walking back from u13: turns < 2 until u12, so
    # t12 is skipped; t11 (3 parts, 22,500) and t10's last two parts (37,500) are protected; t10 part 0
    # crosses 40,000; then t9..t3 all; t2 minus its `skill` output; t1 minus its errored output.
    expected = [("t10", 0)] + [(f"t{k}", j) for k in range(9, 2, -1) for j in (2, 1, 0)] + [
        ("t2", 2), ("t2", 1), ("t1", 1), ("t1", 0)]
    assert p is not None and [(m, j) for m, j, _ in p.targets] == expected
    assert all(text == PLACEHOLDER for *_, text in p.targets)
    # apply, add a turn: the next prune protects 40k again and stops at the already-pruned part
    entries = list(v.entries)
    marked = {(m, j) for m, j, _ in p.targets}
    entries = [replace(e, pruned={j: PLACEHOLDER for (m, j) in marked if m == e.id}) for e in entries]
    more = view_of([*[e.message for e in entries], *huge_session(13)[-2:], user("u14")], chars4)
    more_entries = list(more.entries)
    for k, e in enumerate(entries):
        more_entries[k] = e
    v2 = view_of([], chars4)
    v2._entries = more_entries  # type: ignore[attr-defined]
    p2 = oc.prune(v2)
    assert p2 is not None and [(m, j) for m, j, _ in p2.targets] == [("t11", 0), ("t10", 2), ("t10", 1)]


def test_opencode_compaction_view_and_failure(chars4: TokenCounter) -> None:
    t = transcript(user("u1", "x" * 4_000), assistant("a1", "y" * 400), user("u2", "z" * 40), assistant("a2", "w"),
                   user("u3", "q" * 40), assistant("a3", "e"))
    # usable 1,000: a2's call reads u1 a1 (1,100) from the cache (seed 001 counts no cache writes)
    tr = run(t, resolve("opencode:preset=seed").create(), chars4, window=1_500, max_output=500)
    assert len(tr.compactions) == 1 and tr.compactions[0].phase == "before" and tr.compactions[0].step == 2
    assert [x.split(":")[-1] for x in tr.final_view[:3]] == ["marker", "summary", "synthetic"]
    failed = run(t, resolve("opencode:preset=seed").create(), chars4, window=1_500, max_output=500,
                 summarizer=MockSummarizer(error="boom"))
    assert not failed.compactions[0].ok and failed.final_view == ("u1", "a1", "u2", "a2", "u3", "a3")


# --- go-replace, claude-code, codex, baselines -------------------------------------------------------------


def test_go_replace_threshold_boundary_and_new_history(chars4: TokenCounter) -> None:
    msgs = [system("sys"), user("u1", "first"), assistant("a1", calls=[("c1", "bash", {})]), user("u2", "do X")]
    v = view_of(msgs, chars4)
    g = resolve("go-replace:preset=seed").create()
    v.last_usage = Usage(input=199_990, output=9)
    assert g.before_step(v) == ()
    v.last_usage = Usage(input=199_990, output=10)  # ContextTokens >= 200,000
    (c,) = g.before_step(v)
    assert isinstance(c, Compact) and c.new_view[0] == Keep("sys")
    ins = c.new_view[1]
    assert isinstance(ins, Insert) and ins.after == "\n\nLast request from user was: do X"
    assert c.request is not None
    filled = [m for m in c.request.prompt if m.role == "tool"]
    assert filled and filled[0].parts[0].output == "Tool no response"  # type: ignore[union-attr]
    assert resolve("go-replace:preset=seed,threshold=0").create().before_step(v) == ()


def test_claude_code_threshold_and_summary_message(chars4: TokenCounter) -> None:
    v = view_of([user("u1"), assistant("a1")], chars4, ModelLimits(200_000, 64_000))
    cc = resolve("claude-code:preset=seed").create()
    assert cc.after_step(v, Usage(input=189_999, output=0)) == ()
    cc.after_step(v, Usage(input=190_000, output=0))  # >= 95%
    (c,) = cc.before_step(v)
    assert isinstance(c, Compact) and isinstance(c.new_view[0], Insert)
    assert c.new_view[0].before.startswith("This session is being continued from a previous conversation")
    old = resolve("claude-code:preset=2.0").create()  # 2.0.x: 200k - 32k - 13k
    old.after_step(v, Usage(input=155_000, output=0))
    assert old.before_step(v)
    cur = resolve("claude-code:preset=current").create()  # 2.1.21+: 200k - 20k - 13k
    cur.after_step(v, Usage(input=166_999, output=0))
    assert not cur.before_step(v)
    cur.after_step(v, Usage(input=167_000, output=0))
    assert cur.before_step(v)


def test_observation_masking_and_truncate(chars4: TokenCounter) -> None:
    msgs = []
    for k in range(1, 5):
        msgs += [assistant(f"a{k}", calls=[(f"c{k}", "bash", {})]), tool(f"t{k}", f"c{k}", "l1\nl2\nl3")]
    v = view_of([user("u0"), *msgs], chars4)
    om = resolve("observation-masking:keep_last_turns=2").create()
    (p,) = om.before_step(v)
    assert isinstance(p, Prune) and p.targets == (("t1", 0, "Old environment output: (3 lines omitted)"),
                                                  ("t2", 0, "Old environment output: (3 lines omitted)"))
    t = transcript(user("u1", "x" * 400), assistant("a1", "y" * 40), user("u2", "z" * 400), assistant("a2", "w"),
                   user("u3", "q" * 40), assistant("a3", "e"))
    tr = run(t, resolve("truncate:reserve_output=10").create(), chars4, window=150, max_output=10)
    assert tr.compactions and tr.compactions[0].replaced_ids == ("u1", "a1")
