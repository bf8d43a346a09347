"""aider (Aider-AI/aider 5dc9490bb35f): the history budget, the too-big check after an exchange, the tail under
half the budget, the head summarized by the weak model, the recursion, "Ok.", the emptied history on failure."""

from __future__ import annotations

import pytest

from compbench.data.transcript import Message, Text, Usage
from compbench.measure.tokens import TokenCounter
from compbench.replay.session import Compact, Insert, Keep, ModelLimits, SessionView
from compbench.strategies import resolve
from compbench.strategies.aider import OK, SUMMARIZE, SUMMARY_PREFIX, Aider, AiderParams
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of


def msg(id: str, role: str, tokens: int) -> Message:
    return Message(id, role, (Text(id[0] * 4 * tokens),))  # type: ignore[arg-type]


def history(*sizes: int) -> list[Message]:
    """Alternating user/assistant messages m0, m1, ... of these token sizes (chars4, no overhead)."""
    return [msg(f"{'u' if k % 2 == 0 else 'a'}{k}", "user" if k % 2 == 0 else "assistant", n)
            for k, n in enumerate(sizes)]


def view(messages: list[Message], counter: TokenCounter, window: int = 100_000) -> SessionView:
    return view_of(messages, counter, ModelLimits(window, 1_000))


def act(messages: list[Message], counter: TokenCounter, budget: float = 100, **kw: int) -> Compact | None:
    out = Aider(AiderParams(max_chat_history_tokens=budget, **kw)).after_step(view(messages, counter), Usage())
    assert len(out) <= 1
    return out[0] if out else None  # type: ignore[return-value]


@pytest.mark.parametrize(("window", "budget"), [(16_000, 1_024), (32_000, 2_000), (131_072, 8_192), (200_000, 8_192)])
def test_budget_is_max_input_over_16_between_1k_and_8k(chars4: TokenCounter, window: int, budget: float) -> None:
    assert Aider(AiderParams()).budget(view([], chars4, window)) == budget


@pytest.mark.parametrize(("last", "acts"), [(10, False), (11, True)])
def test_summarizes_when_the_history_exceeds_the_budget(chars4: TokenCounter, last: int, acts: bool) -> None:
    assert (act(history(30, 30, 30, 30, 30, last), chars4, budget=160) is not None) is acts


def test_tail_under_half_the_budget_and_the_head_ending_on_an_assistant(chars4: TokenCounter) -> None:
    # budget 100, half 50: from the end a5 (20) + u4 (20) = 40 < 50; + a3 (20) = 60 no -> tail [u4, a5]
    c = act(history(20, 20, 20, 20, 20, 20, 20, 20), chars4)
    assert c is not None and c.request is not None
    assert [m.id for m in c.request.source] == ["u0", "a1", "u2", "a3", "u4", "a5"]
    assert c.new_view == (Insert("user", SUMMARY_PREFIX, with_summary=True, origin="summary"), Keep("u6"), Keep("a7"))
    # a tail whose first message would be an assistant one moves back: the head ends with an assistant
    c = act(history(20, 20, 20, 20, 20, 20, 20, 30, 19), chars4)  # tail: u8 (19) + a7 (30) = 49 -> [a7, u8]
    assert c is not None and c.new_view[1:] == (Keep("u6"), Keep("a7"), Keep("u8"), Insert("assistant", OK))


def test_request_is_aiders_summarize_prompt_over_user_assistant_sections(chars4: TokenCounter) -> None:
    msgs = [system(), user("u0", "fix the bug"), assistant("a1", "ok", calls=[("c1", "bash", {"cmd": "ls"})]),
            tool("t1", "c1", "a.py"), assistant("a2", "x" * 800), user("u3", "y" * 800), assistant("a4", "z" * 8)]
    c = act(msgs, chars4, budget=300)
    assert c is not None and c.request is not None and c.request.system == SUMMARIZE
    (m,) = c.request.prompt
    assert m.role == "user" and m.text.startswith(
        '# USER\nfix the bug\n# ASSISTANT\nok\nbash({"cmd": "ls"})\n# USER\na.py\n# ASSISTANT\n')
    assert c.request.meta["model"] == "weak" and c.new_view[0] == Keep("sys")


@pytest.mark.parametrize("sizes", [(60, 60, 60, 60), (60, 1, 1, 1, 1, 60)])
def test_few_messages_or_a_short_head_summarize_everything_then_ok(chars4: TokenCounter,
                                                                   sizes: tuple[int, ...]) -> None:
    c = act(history(*sizes), chars4)
    assert c is not None and c.request is not None and len(c.request.source) == len(sizes)
    assert c.new_view == (Insert("user", SUMMARY_PREFIX, with_summary=True, origin="summary"), Insert("assistant", OK))


def test_head_cut_to_the_weak_models_input_limit(chars4: TokenCounter) -> None:
    c = act(history(20, 20, 20, 20, 20, 20, 20, 20), chars4, weak_max_input=512 + 40)
    assert c is not None and c.request is not None
    assert [m.id for m in c.request.source] == ["u0", "a1"]  # 40 tokens fit; u2..a5 are dropped
    assert c.meta["dropped_head"] == 4 and c.new_view[1:] == (Keep("u6"), Keep("a7"))


def steps(n: int) -> list[Message]:
    out: list[Message] = []
    for k in range(n):
        out += [user(f"u{k}", "q" * 40), assistant(f"a{k}", "r" * 40)]
    return out


def test_replay_summary_and_tail_over_budget_go_one_level_deeper(chars4: TokenCounter) -> None:
    big = MockSummarizer("s" * 360)  # 90 tokens + the prefix: with any tail over a 100 budget
    tr = run(transcript(*steps(6)), Aider(AiderParams(max_chat_history_tokens=100)), chars4, summarizer=big)
    depths = [c.meta["depth"] for c in tr.compactions]
    assert depths[:2] == [0, 1] and all(c.phase == "after" and c.ok for c in tr.compactions)
    assert tr.compactions[1].step == tr.compactions[0].step  # in the same moment, before the next request
    small = MockSummarizer("s")
    tr = run(transcript(*steps(6)), Aider(AiderParams(max_chat_history_tokens=100)), chars4, summarizer=small)
    assert {c.meta["depth"] for c in tr.compactions} == {0}


@pytest.mark.parametrize(("depth", "summarized"), [(3, 6), (4, 8)])
def test_depth_beyond_three_summarizes_everything(chars4: TokenCounter, depth: int, summarized: int) -> None:
    v = view(history(20, 20, 20, 20, 20, 20, 20, 20), chars4)
    c = Aider(AiderParams(max_chat_history_tokens=100)).summarize(v, list(v.entries), (), depth)
    assert c is not None and c.request is not None and len(c.request.source) == summarized


def test_replay_failure_empties_the_history(chars4: TokenCounter) -> None:
    tr = run(transcript(system(), *steps(6)), resolve("aider:max_chat_history_tokens=100").create(), chars4,
             summarizer=MockSummarizer(error="weak model down"))
    assert [(c.reason, c.ok) for c in tr.compactions[:2]] == [
        ("aider: chat history summary (depth 0)", False), ("aider: summary failed, history emptied", True)]
    assert tr.compactions[1].kept_ids == ("sys",)


def test_tail_boundary_is_strictly_under_half(chars4: TokenCounter) -> None:
    # from the end: 10 + 10 = 20, + a5 (30) = 50 is not < 50: tail [u6, a7], the head of six summarized
    c = act(history(20, 20, 20, 20, 20, 30, 10, 10), chars4)
    assert c is not None and c.request is not None and len(c.request.source) == 6


def test_a_split_at_four_summarizes_everything(chars4: TokenCounter) -> None:
    c = act(history(20, 20, 20, 20, 20, 20), chars4)  # tail [u4, a5] would leave a head of 4: all summarized
    assert c is not None and c.request is not None and len(c.request.source) == 6


def test_weak_input_limit_keeps_512_in_reserve(chars4: TokenCounter) -> None:
    c = act(history(20, 20, 20, 20, 20, 20, 20, 20), chars4, weak_max_input=512 + 59)  # 59: u0 a1 (40) fit
    assert c is not None and c.request is not None and [m.id for m in c.request.source] == ["u0", "a1"]


def test_head_moves_back_over_user_messages_to_an_assistant(chars4: TokenCounter) -> None:
    msgs = [msg("u0", "user", 20), msg("a1", "assistant", 20)] + [msg(f"u{k}", "user", 20) for k in range(2, 6)] \
        + [msg("u6", "user", 30)]
    c = act(msgs, chars4)  # split 6 moves back to 2 (after a1): <= 4, everything is summarized
    assert c is not None and c.request is not None and len(c.request.source) == 7
