"""langchain-clear-tool-uses (ContextEditingMiddleware + ClearToolUsesEdit, langchain 1.5.0): the trigger
(approximate count > trigger, the system prompt not counted), keep over all tool results, excluded tools,
clear_at_least as a stop, clear_tool_inputs, the placeholder, recomputed from the full history."""

from __future__ import annotations

import pytest

from compbench.data.transcript import Message
from compbench.errors import UsageError
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Prune, SessionView
from compbench.strategies import resolve
from compbench.strategies.langchain_clear_tool_uses import LangChainClearToolUses, LangChainClearToolUsesParams
from compbench.strategies.langchain_messages import count_tokens_approximately, lc_messages
from helpers import assistant, run, system, tool, transcript, user, view_of


def uses(n: int, out: str = "o" * 40) -> list[Message]:
    msgs: list[Message] = [system("sys", "S" * 400), user("u0", "fix the bug")]
    for k in range(1, n + 1):
        msgs += [assistant(f"a{k}", calls=[(f"c{k}", "bash", {"k": k})]), tool(f"t{k}", f"c{k}", out)]
    return msgs


def clear(**kw: object) -> LangChainClearToolUses:
    return LangChainClearToolUses(LangChainClearToolUsesParams(**kw))  # type: ignore[arg-type]


def cleared(strat: LangChainClearToolUses, v: SessionView) -> list[tuple[str, int, str]]:
    return [t for a in strat.before_step(v) if isinstance(a, Prune) for t in a.targets]


def approx(v: SessionView) -> int:
    return count_tokens_approximately(lc_messages(v.entries, 1))  # the messages, not the system prompt


@pytest.mark.parametrize(("delta", "fires"), [(-1, True), (0, False), (1, False)])
def test_trigger_is_more_than_the_approximate_count(chars4: TokenCounter, delta: int, fires: bool) -> None:
    v = view_of(uses(5), chars4)
    assert bool(cleared(clear(trigger=approx(v) + delta), v)) is fires


def test_defaults_mirror_anthropic_and_clear_all_but_three(chars4: TokenCounter) -> None:
    p = LangChainClearToolUsesParams()
    assert (p.trigger, p.clear_at_least, p.keep, p.clear_tool_inputs, p.exclude_tools, p.placeholder) == (
        100_000, 0, 3, False, (), "[cleared]")
    assert cleared(clear(trigger=1), view_of(uses(5), chars4)) == [("t1", 0, "[cleared]"), ("t2", 0, "[cleared]")]


def test_keep_counts_excluded_tools_which_are_never_cleared(chars4: TokenCounter) -> None:
    msgs = uses(5)
    msgs[5] = tool("t2", "c2", "o" * 40, name="read")
    assert cleared(clear(trigger=1, keep=2, exclude_tools=("read",)), view_of(msgs, chars4)) == [
        ("t1", 0, "[cleared]"), ("t3", 0, "[cleared]")]


@pytest.mark.parametrize(("least", "n"), [(8, 1), (9, 2), (16, 2), (17, 3)])
def test_clear_at_least_stops_once_reclaimed(chars4: TokenCounter, least: int, n: int) -> None:
    # a result: 40 + 'c1' + 'tool' + 'bash' = 50 chars -> 13 + 3 = 16; '[cleared]' -> 19 chars -> 5 + 3 = 8
    assert len(cleared(clear(trigger=1, clear_at_least=least), view_of(uses(6), chars4))) == n


def test_clear_tool_inputs_empties_the_call_arguments(chars4: TokenCounter) -> None:
    assert cleared(clear(trigger=1, keep=3, clear_tool_inputs=True), view_of(uses(4), chars4)) == [
        ("t1", 0, "[cleared]"), ("a1", 1, "{}")]


def test_a_result_whose_call_is_not_in_the_nearest_ai_message_is_skipped(chars4: TokenCounter) -> None:
    msgs = uses(5)
    msgs.insert(3, assistant("x", "an interjection"))  # between a1 and t1
    assert cleared(clear(trigger=1), view_of(msgs, chars4)) == [("t2", 0, "[cleared]")]


def test_recomputed_from_the_full_history_each_call(chars4: TokenCounter) -> None:
    t = transcript(*uses(6, "o" * 400), assistant("end"))
    v3 = view_of(list(t.messages[:8]), chars4)  # before a4: u0 a1 t1 a2 t2 a3 t3
    strat = resolve(f"langchain-clear-tool-uses:trigger={approx(v3) - 1},keep=2").create()
    tr = run(t, strat, chars4)
    assert [(p.step, p.parts) for p in tr.prunes] == [(3, (("t1", 0),)), (4, (("t2", 0),)), (5, (("t3", 0),)),
                                                      (6, (("t4", 0),))]
    assert tr.compactions == ()


def test_bad_values() -> None:
    with pytest.raises(UsageError):
        resolve("langchain-clear-tool-uses:keep=-1")
    assert resolve("langchain-clear-tool-uses:exclude_tools=read|grep").params.exclude_tools == ("read", "grep")
