"""anthropic-compaction (Claude API docs, Compaction at a token threshold): the trigger (reached, >=;
150,000 by default, at least 50,000), the whole conversation summarized with the default prompt or the
instructions that replace it, the compaction block after the system prompt, its cost apart, failure."""

from __future__ import annotations

import pytest

from compbench.data.transcript import Message, Text
from compbench.errors import UsageError
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep
from compbench.strategies import resolve
from compbench.strategies.anthropic_compaction import (
    DEFAULT_PROMPT,
    AnthropicCompaction,
    AnthropicCompactionParams,
)
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of


def convo() -> list[Message]:
    return [system("sys"), user("u1", "fix the bug"), assistant("a1", calls=[("c1", "bash", {"cmd": "ls"})]),
            tool("t1", "c1", "a.py"), user("u2", "go on")]


@pytest.mark.parametrize(("total", "fires"), [(149_999, False), (150_000, True), (150_001, True)])
def test_trigger_is_reached_at_150k(chars4: TokenCounter, total: int, fires: bool) -> None:
    base = view_of(convo(), chars4).context_tokens
    v = view_of(convo(), chars4, system_tokens=total - base)
    assert v.context_tokens == total
    assert bool(resolve("anthropic-compaction").create().before_step(v)) is fires


def test_trigger_minimum_is_50k() -> None:
    with pytest.raises(UsageError, match="at least 50,000"):
        resolve("anthropic-compaction:trigger=49999")
    assert resolve("anthropic-compaction:preset=minimum").params.trigger == 50_000
    assert AnthropicCompactionParams().trigger == 150_000


def test_the_whole_conversation_becomes_one_compaction_block(chars4: TokenCounter) -> None:
    v = view_of(convo(), chars4)
    c = AnthropicCompaction(AnthropicCompactionParams()).compact(v)
    assert isinstance(c, Compact) and c.on_failure == "unchanged"
    assert c.new_view == (Keep("sys"), Insert("assistant", with_summary=True, origin="summary",
                                              meta={"block": "compaction"}))
    req = c.request
    assert req is not None and req.system == "" and req.max_output_tokens is None
    assert req.prompt[:-1] == tuple(convo())  # the summarizer reads the whole prompt, system included
    assert req.prompt[-1] == Message("anthropic-compaction", "user", (Text(DEFAULT_PROMPT),))
    assert [m.id for m in req.source] == ["u1", "a1", "t1", "u2"]  # the latest user message too
    assert DEFAULT_PROMPT.startswith("You have written a partial transcript for the initial task above. ")
    assert DEFAULT_PROMPT.endswith("You must wrap your summary in a <summary></summary> block.")


def test_instructions_replace_the_default_prompt(chars4: TokenCounter) -> None:
    strat = resolve("anthropic-compaction:instructions=Keep file paths only.").create()
    assert isinstance(strat, AnthropicCompaction)
    req = strat.compact(view_of(convo(), chars4)).request
    assert req is not None and req.prompt[-1].text == "Keep file paths only."
    no_tools = resolve("anthropic-compaction:preset=no-tools").params.instructions
    assert "Do not call any tools while writing this summary; respond with text only." in no_tools


def big(k: int) -> Message:
    return user(f"u{k}", "x" * 100_000)  # 25,000 tokens with chars4


def test_replay_summary_cost_apart_and_placement(chars4: TokenCounter) -> None:
    t = transcript(system("sys", "S" * 40), big(1), assistant("a1", "A" * 40), big(2), assistant("a2", "B" * 40),
                   user("u3", "z" * 40), assistant("a3", "C" * 40))
    summ = MockSummarizer("DONE")
    tr = run(t, resolve("anthropic-compaction:preset=minimum").create(), chars4, window=200_000, summarizer=summ)
    # before a2 the prompt is 10 + 25,000 + 10 + 25,000 = 50,020 >= 50,000
    (ev,) = tr.compactions
    assert (ev.step, ev.phase, ev.ok, ev.tokens_before) == (1, "before", True, 50_020)
    assert ev.kept_ids == ("sys",) and ev.replaced_ids == ("u1", "a1", "u2")
    # the compaction iteration is billed apart: the summarizer's tokens, not the step's input
    assert ev.summarizer_input == 50_020 + -(-len(DEFAULT_PROMPT) // 4) and ev.summarizer_output == 1
    assert tr.steps[1].input == 10 + 1  # the message iteration: system + the compaction block
    assert tr.final_view == ("sys", "compbench:1:1:summary", "a2", "u3", "a3")


def test_failure_is_a_no_op_and_the_next_request_tries_again(chars4: TokenCounter) -> None:
    t = transcript(big(1), assistant("a1"), big(2), assistant("a2"), user("u3"), assistant("a3"))
    tr = run(t, resolve("anthropic-compaction:trigger=50000").create(), chars4, window=200_000,
             summarizer=MockSummarizer(error="content null"))
    assert [(e.step, e.ok) for e in tr.compactions] == [(1, False), (2, False)]
    assert all(e.summarizer_input > 50_000 for e in tr.compactions)  # each failed iteration is still billed
    assert tr.final_view == tuple(m.id for m in t.messages)
