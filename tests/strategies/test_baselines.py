"""The two baselines: observation-masking (SWE-agent's placeholder, last M turns) and truncate (drop the
oldest whole turns until the call fits)."""

from __future__ import annotations

import pytest

from compbench.data.transcript import Message, ToolResult
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Keep, ModelLimits, Prune
from compbench.strategies import resolve
from compbench.strategies.observation_masking import ObservationMasking, ObservationMaskingParams
from compbench.strategies.truncate import Truncate, TruncateParams
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of

# --- observation-masking ------------------------------------------------------------------------------------


def steps(n: int) -> list[Message]:
    """u0, then a_k with one call and t_k whose output has k lines."""
    msgs = [user("u0", "fix the bug")]
    for k in range(1, n + 1):
        msgs += [assistant(f"a{k}", calls=[(f"c{k}", "bash", {})]), tool(f"t{k}", f"c{k}", "\n".join(["l"] * k))]
    return msgs


def om(keep: int, placeholder: str | None = None) -> ObservationMasking:
    p = ObservationMaskingParams(keep) if placeholder is None else ObservationMaskingParams(keep, placeholder)
    return ObservationMasking(p)


def test_masks_outputs_older_than_the_last_m_turns_with_swe_agent_wording(chars4: TokenCounter) -> None:
    strat = om(2)
    (p,) = strat.before_step(view_of(steps(4), chars4))
    assert isinstance(p, Prune)
    assert p.targets == (("t1", 0, "Old environment output: (1 lines omitted)"),
                         ("t2", 0, "Old environment output: (2 lines omitted)"))
    assert strat.before_step(view_of(steps(4), chars4)) == ()  # nothing newly aged
    (p,) = strat.before_step(view_of(steps(5), chars4))  # only the newly aged turn
    assert isinstance(p, Prune) and p.targets == (("t3", 0, "Old environment output: (3 lines omitted)"),)


@pytest.mark.parametrize(("turns", "masked"), [(2, ()), (3, ("t1",)), (4, ("t1", "t2"))])
def test_turn_count_boundary(chars4: TokenCounter, turns: int, masked: tuple[str, ...]) -> None:
    out = om(2).before_step(view_of(steps(turns), chars4))
    assert tuple(t[0] for a in out if isinstance(a, Prune) for t in a.targets) == masked


def test_line_counts_several_results_per_turn_and_zero_keep(chars4: TokenCounter) -> None:
    msgs = [user("u0"), assistant("a1", calls=[("c1", "read", {}), ("c2", "read", {})]),
            tool("t1", "c1", ""), Message("t2", "tool", (ToolResult("c2", "read", "x\r\ny\n"),
                                                          ToolResult("c3", "read", "one"))),
            assistant("a2", calls=[("c4", "ls", {})]), tool("t4", "c4", "a\nb\nc")]
    (p,) = om(0, "[masked {lines}]").before_step(view_of(msgs, chars4))
    assert isinstance(p, Prune)
    assert p.targets == (("t1", 0, "[masked 0]"), ("t2", 0, "[masked 2]"), ("t2", 1, "[masked 1]"),
                         ("t4", 0, "[masked 3]"))
    (p,) = om(1).before_step(view_of(msgs, chars4))
    assert isinstance(p, Prune) and [t[:2] for t in p.targets] == [("t1", 0), ("t2", 0), ("t2", 1)]


def test_replay_masks_from_the_twelfth_step_and_never_summarizes(chars4: TokenCounter) -> None:
    t = transcript(*steps(13), assistant("end"))
    summ = MockSummarizer()
    tr = run(t, resolve("observation-masking").create(), chars4, summarizer=summ)
    # before a_k the view holds k-1 assistant turns (plus u0's): the 11th turn appears before a12 (step 11)
    assert [(p.step, p.phase, p.parts) for p in tr.prunes] == [
        (11, "before", (("t1", 0),)), (12, "before", (("t2", 0),)), (13, "before", (("t3", 0),))]
    # t2 was 'l\nl' (3 chars, 1 token) -> 'Old environment output: (2 lines omitted)' (41 chars, 11 tokens)
    assert tr.prunes[1].tokens_hidden == 1 - 11
    assert tr.compactions == () and summ.requests == []
    assert tr.final_view == tuple(m.id for m in t.messages)


def test_observation_masking_presets() -> None:
    assert resolve("observation-masking").params == ObservationMaskingParams(10, "Old environment output: "
                                                                                 "({lines} lines omitted)")
    c = resolve("observation-masking:preset=current")
    assert c.params.keep_last_turns == 5 and c.label == "observation-masking:preset=current"
    assert resolve("observation-masking:preset=current,keep_last_turns=3,placeholder=[gone {lines}]").params == \
        ObservationMaskingParams(3, "[gone {lines}]")


# --- truncate -----------------------------------------------------------------------------------------------


def convo() -> list[Message]:
    return [system("s", "s" * 40),                                  # 10 tokens (chars4, no overhead)
            user("u1", "x" * 400),                                  # 100
            assistant("a1", "y" * 36, [("c1", "bash", {})]),        # 9 + ceil(len('bash{}') / 4) = 11
            tool("t1", "c1", "o" * 200),                            # 50
            user("u2", "z" * 80),                                   # 20
            assistant("a2", "w" * 4),                               # 1
            user("u3", "q" * 40)]                                   # 10   -> 202 in all


@pytest.mark.parametrize(("window", "acts"), [(218, False), (217, False), (216, True)])
def test_fit_boundary_counts_system_overhead_and_reserve(chars4: TokenCounter, window: int, acts: bool) -> None:
    # 202 view + 5 system overhead + reserve min(max_output 10, 4096) = 217
    v = view_of(convo(), chars4, ModelLimits(window, 10), system_tokens=5)
    assert bool(Truncate(TruncateParams()).before_step(v)) is acts


def test_reserve_is_capped_by_max_output_and_input_limit_is_used(chars4: TokenCounter) -> None:
    v = view_of(convo(), chars4, ModelLimits(10_000, 30))
    assert Truncate(TruncateParams(reserve_output=20)).reserve(v) == 20
    assert Truncate(TruncateParams()).reserve(v) == 30
    # a dedicated input limit beats the window: 202 + 30 > 231 acts, = 232 fits
    assert Truncate(TruncateParams()).before_step(view_of(convo(), chars4, ModelLimits(10_000, 30, 231)))
    assert not Truncate(TruncateParams()).before_step(view_of(convo(), chars4, ModelLimits(10_000, 30, 232)))


@pytest.mark.parametrize(("window", "kept"), [
    (211, ("s", "u2", "a2", "u3")),  # 202 + 10 > 211; without turn 1 (161): 41 + 10 <= 211
    (40, ("s", "u3")),               # 41 + 10 > 40: turn 2 goes too
    (15, ("s", "u3")),               # the last turn alone (20) does not fit: kept, the call overflows
])
def test_drops_oldest_whole_turns_until_it_fits(chars4: TokenCounter, window: int, kept: tuple[str, ...]) -> None:
    (c,) = Truncate(TruncateParams()).before_step(view_of(convo(), chars4, ModelLimits(window, 10)))
    assert isinstance(c, Compact) and c.request is None
    assert c.new_view == tuple(Keep(i) for i in kept)


def test_tool_result_user_messages_and_single_turns(chars4: TokenCounter) -> None:
    anthropic = [system("s"), user("u1", "x" * 400), assistant("a1", calls=[("c1", "bash", {})]),
                 Message("r1", "user", (ToolResult("c1", "bash", "o" * 400),)), assistant("a2"), user("u2", "go")]
    (c,) = Truncate(TruncateParams()).before_step(view_of(anthropic, chars4, ModelLimits(100, 10)))
    assert isinstance(c, Compact) and [k.id for k in c.new_view if isinstance(k, Keep)] == ["s", "u2"]
    one_turn = [system("s"), user("u1", "x" * 400), assistant("a1"), tool("t1", "c1", "o" * 400)]
    assert Truncate(TruncateParams()).before_step(view_of(one_turn, chars4, ModelLimits(100, 10))) == ()


def test_replay_compacts_without_summary(chars4: TokenCounter) -> None:
    t = transcript(*convo(), assistant("a3", "e" * 4))
    summ = MockSummarizer()
    tr = run(t, resolve("truncate").create(), chars4, window=211, max_output=10, summarizer=summ)
    (ev,) = tr.compactions
    assert (ev.step, ev.ok, ev.replaced_ids, ev.kept_ids) == (2, True, ("u1", "a1", "t1"), ("s", "u2", "a2", "u3"))
    assert (ev.summary, ev.summarizer_input, summ.requests) == ("", 0, [])
    assert tr.steps[2].input == 41 and tr.steps[2].cache_read == 10 and not tr.steps[2].overflow
    assert tr.final_view == ("s", "u2", "a2", "u3", "a3")


def test_replay_overflows_when_the_last_turn_does_not_fit(chars4: TokenCounter) -> None:
    t = transcript(*convo(), assistant("a3", "e" * 4))
    tr = run(t, resolve("truncate").create(), chars4, window=15, max_output=10)
    # step 0: [s, u1] is one turn (110): nothing whole can go; steps 1 and 2 drop down to the last turn
    assert [e.step for e in tr.compactions] == [1, 2]
    assert [(s.input, s.overflow) for s in tr.steps] == [(110, True), (30, True), (20, True)]
    assert tr.final_view == ("s", "u3", "a3")


def test_truncate_presets() -> None:
    assert resolve("truncate").params == TruncateParams(4_096)
    assert resolve("truncate:preset=current,reserve_output=8_000").params == TruncateParams(8_000)
