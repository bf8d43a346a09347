"""anthropic-context-editing (Claude API docs, Context editing): the trigger on the original prompt
(> value, input tokens or tool uses), keep, exclude_tools, clear_at_least, clear_tool_inputs (bool and
list), the placeholder, the cache break at the first cleared position, clear_thinking, presets."""

from __future__ import annotations

import pytest

from compbench.data.transcript import Message, Reasoning, Text, ToolCall, ToolResult
from compbench.errors import UsageError
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Entry, ModelLimits, Prune
from compbench.strategies import resolve
from compbench.strategies.anthropic_context_editing import (
    AnthropicContextEditing,
    AnthropicContextEditingParams,
)
from helpers import assistant, run, system, tool, transcript, user, view_of


def uses(n: int, out: str = "o" * 40) -> list[Message]:
    """u0 then n tool uses a_k -> t_k (call c_k to bash, 40-char output: 10 tokens with chars4)."""
    msgs = [user("u0", "fix the bug")]
    for k in range(1, n + 1):
        msgs += [assistant(f"a{k}", calls=[(f"c{k}", "bash", {"k": k})]), tool(f"t{k}", f"c{k}", out)]
    return msgs


def edit(**kw: object) -> AnthropicContextEditing:
    return AnthropicContextEditing(AnthropicContextEditingParams(**kw))  # type: ignore[arg-type]


def targets(actions: object) -> list[tuple[str, int, str]]:
    return [t for a in actions for t in a.targets]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("extra", "fires"), [(-1, False), (0, False), (1, True)])
def test_trigger_is_more_than_the_input_tokens(chars4: TokenCounter, extra: int, fires: bool) -> None:
    v = view_of(uses(5), chars4)
    strat = edit(trigger_value=v.context_tokens - extra)  # "once the prompt exceeds this threshold"
    assert bool(strat.before_step(v)) is fires


def test_clears_all_but_the_three_newest_results_with_the_placeholder(chars4: TokenCounter) -> None:
    v = view_of(uses(5), chars4)
    (p,) = edit(trigger_value=1).before_step(v)
    assert isinstance(p, Prune) and p.reason == "clear_tool_uses_20250919"
    assert p.targets == (("t1", 0, "[cleared]"), ("t2", 0, "[cleared]"))


def test_default_trigger_and_keep_are_the_docs(chars4: TokenCounter) -> None:
    p = resolve("anthropic-context-editing").params
    assert (p.trigger_type, p.trigger_value, p.keep, p.clear_at_least, p.exclude_tools, p.clear_tool_inputs,
            p.placeholder) == ("input_tokens", 100_000, 3, 0, (), False, "[cleared]")
    below = view_of(uses(5), chars4, system_tokens=100_000 - view_of(uses(5), chars4).context_tokens)
    assert below.context_tokens == 100_000
    assert resolve("anthropic-context-editing").create().before_step(below) == []
    above = view_of(uses(5), chars4, system_tokens=100_001 - view_of(uses(5), chars4).context_tokens)
    assert targets(resolve("anthropic-context-editing").create().before_step(above)) == [
        ("t1", 0, "[cleared]"), ("t2", 0, "[cleared]")]


@pytest.mark.parametrize(("n", "fires"), [(3, False), (4, False), (5, True)])
def test_tool_uses_trigger(chars4: TokenCounter, n: int, fires: bool) -> None:
    strat = edit(trigger_type="tool_uses", trigger_value=4, keep=1)
    assert bool(strat.before_step(view_of(uses(n), chars4))) is fires


def test_excluded_tools_count_towards_keep_and_are_never_cleared(chars4: TokenCounter) -> None:
    msgs = uses(5)
    msgs[4] = tool("t2", "c2", "o" * 40, name="web_search")
    got = targets(edit(trigger_value=1, keep=2, exclude_tools=("web_search",)).before_step(view_of(msgs, chars4)))
    assert got == [("t1", 0, "[cleared]"), ("t3", 0, "[cleared]")]


def test_clear_tool_inputs_bool_and_list(chars4: TokenCounter) -> None:
    v = view_of(uses(4), chars4)
    got = targets(edit(trigger_value=1, keep=3, clear_tool_inputs=True).before_step(v))
    assert got == [("t1", 0, "[cleared]"), ("a1", 1, "{}")]
    msgs = uses(5)
    msgs[3] = assistant("a2", calls=[("c2", "edit", {"path": "x"})])
    msgs[4] = tool("t2", "c2", "o" * 40, name="edit")
    got = targets(edit(trigger_value=1, keep=3, clear_tool_inputs_for=("edit",)).before_step(view_of(msgs, chars4)))
    assert got == [("t1", 0, "[cleared]"), ("t2", 0, "[cleared]"), ("a2", 1, "{}")]


@pytest.mark.parametrize(("least", "applied"), [(15, True), (16, True), (17, False)])
def test_clear_at_least_or_not_applied(chars4: TokenCounter, least: int, applied: bool) -> None:
    # two results of 10 tokens become '[cleared]' (3 tokens each): 14 reclaimed; with inputs cleared too,
    # bash{"k": 1} (12 chars, 3 tokens) -> bash{} (6 chars, 2 tokens): 1 more each -> 16
    strat = edit(trigger_value=1, clear_at_least=least, clear_tool_inputs=True)
    assert bool(strat.before_step(view_of(uses(5), chars4))) is applied


def test_the_original_prompt_stays_over_the_trigger_after_a_clear(chars4: TokenCounter) -> None:
    """The client resends the full history: each request is edited afresh from it, so once the original
    is over the trigger, every newly aged tool use is cleared too, even though the view shrank."""
    out = "o" * 400  # 100 tokens
    t = transcript(*uses(6, out), assistant("end"))
    # before a4 (step 3) the view is u0 a1 t1 a2 t2 a3 t3: 3 + 3*(6 + 100) = 321
    tr = run(t, resolve("anthropic-context-editing:trigger_value=320,keep=2").create(), chars4)
    assert [(p.step, p.parts) for p in tr.prunes] == [(3, (("t1", 0),)), (4, (("t2", 0),)), (5, (("t3", 0),)),
                                                      (6, (("t4", 0),))]
    assert tr.steps[4].input < 320  # the view is under the trigger, the original is not
    # the cache breaks at the cleared result: the next call reads the prefix before it
    assert tr.steps[3].cache_read == 3 + 8 and tr.steps[4].cache_read == 3 + 8 + 3 + 8


def test_prune_of_a_tool_call_keeps_the_call_with_new_arguments(chars4: TokenCounter) -> None:
    e = Entry(Message("a", "assistant", (Text("hi"), ToolCall("c", "bash", '{"cmd": "ls -la"}'))), 0, (0, 0))
    shown = Entry(e.message, 0, (0, 0), pruned={1: "{}"}).rendered()
    assert shown.parts[1] == ToolCall("c", "bash", "{}")
    t = transcript(*uses(4), assistant("end"))
    tr = run(t, resolve("anthropic-context-editing:trigger_value=1,keep=3,clear_tool_inputs=true").create(), chars4)
    # a1's call bash{"k": 1} (12 chars, 3 tokens) becomes bash{} (6 chars, 2 tokens): name + new arguments
    assert tr.prunes[0].parts == (("t1", 0), ("a1", 1)) and tr.prunes[0].tokens_hidden == (10 - 3) + (3 - 2)


def thinking_turns(n: int) -> list[Message]:
    msgs = [user("u0")]
    for k in range(1, n + 1):
        msgs += [Message(f"a{k}", "assistant", (Reasoning(f"thought {k}"), Text(f"reply {k}"))), user(f"u{k}")]
    return msgs


def test_clear_thinking_keeps_the_last_turns_and_saves_no_tokens_here(chars4: TokenCounter) -> None:
    strat = edit(edits=("clear_thinking_20251015",), keep_thinking_turns=2)
    (p,) = strat.before_step(view_of(thinking_turns(4), chars4))
    assert isinstance(p, Prune) and p.reason == "clear_thinking_20251015"
    assert p.targets == (("a1", 0, ""), ("a2", 0, ""))
    assert strat.before_step(view_of(thinking_turns(4), chars4)) == []  # nothing newly old
    assert edit(edits=("clear_thinking_20251015",), keep_thinking_turns=0).before_step(
        view_of(thinking_turns(4), chars4)) == []  # "all"
    tr = run(transcript(*thinking_turns(3), assistant("end")), resolve(
        "anthropic-context-editing:preset=thinking,trigger_value=100000").create(), chars4)
    assert [p.parts for p in tr.prunes] == [(("a1", 0),), (("a2", 0),)]
    assert all(p.tokens_hidden == 0 for p in tr.prunes)  # compbench never counts reasoning as context
    assert tr.steps[2].cache_read == 3  # but the cache is invalidated where the thinking was cleared


def test_edits_order_and_validation() -> None:
    assert resolve("anthropic-context-editing:preset=thinking").params.edits == (
        "clear_thinking_20251015", "clear_tool_uses_20250919")
    with pytest.raises(UsageError, match="listed first"):
        resolve("anthropic-context-editing:edits=clear_tool_uses_20250919|clear_thinking_20251015")
    with pytest.raises(UsageError, match="edits must name"):
        resolve("anthropic-context-editing:edits=clear_everything")
    with pytest.raises(UsageError):
        resolve("anthropic-context-editing:trigger_type=messages")


def test_docs_example_preset() -> None:
    p = resolve("anthropic-context-editing:preset=docs-example").params
    assert (p.trigger_value, p.keep, p.clear_at_least, p.exclude_tools) == (30_000, 3, 5_000, ("web_search",))


def test_replay_view_and_no_summary(chars4: TokenCounter) -> None:
    t = transcript(system(), *uses(5), assistant("end"))
    tr = run(t, resolve("anthropic-context-editing:trigger_value=1").create(), chars4, window=1_000)
    assert tr.compactions == () and tr.final_view == tuple(m.id for m in t.messages)
    assert [p.parts for p in tr.prunes][-1] == (("t2", 0),)
    assert ModelLimits(1_000, 4_096).input_limit == 1_000
    assert isinstance(t.messages[2].parts[1], ToolCall) and isinstance(t.messages[3].parts[0], ToolResult)


def tool_loop_turns() -> list[Message]:
    """Two assistant turns: the first a tool-use loop of three assistant messages (each with thinking), then a
    user prompt and a one-message turn."""
    msgs: list[Message] = [user("u0", "fix it")]
    for k in (1, 2):
        msgs += [Message(f"a{k}", "assistant", (Reasoning(f"loop thought {k}"), ToolCall(f"c{k}", "bash", "{}"))),
                 tool(f"t{k}", f"c{k}", "ok")]
    msgs += [Message("a3", "assistant", (Reasoning("loop thought 3"), Text("fixed"))), user("u1", "thanks, now docs"),
             Message("a4", "assistant", (Reasoning("docs thought"), Text("done")))]
    return msgs


@pytest.mark.parametrize(("keep", "cleared"), [(1, [("a1", 0), ("a2", 0), ("a3", 0)]), (2, []), (3, [])])
def test_clear_thinking_a_turn_is_the_whole_tool_loop(chars4: TokenCounter, keep: int,
                                                      cleared: list[tuple[str, int]]) -> None:
    """Docs: "a tool-use loop is one assistant turn": keeping 1 turn keeps no thinking of the loop before the last
    prompt and all of the last turn's; keeping 2 keeps both turns (the loop whole, not its last message only)."""
    actions = edit(edits=("clear_thinking_20251015",), keep_thinking_turns=keep).before_step(
        view_of(tool_loop_turns(), chars4))
    assert [(m, j) for a in actions for m, j, _ in a.targets] == cleared  # type: ignore[attr-defined]


def test_clear_thinking_keeps_a_loop_in_progress_whole(chars4: TokenCounter) -> None:
    """Mid-loop (the last message a tool result), the current turn is the whole loop so far: none of it is
    cleared with keep 1; the turn before the prompt is."""
    msgs = [user("u0", "a"), Message("a0", "assistant", (Reasoning("first turn"), Text("ok"))), user("u1", "b")]
    msgs += tool_loop_turns()[1:5]  # a1, t1, a2, t2: a loop still running
    actions = edit(edits=("clear_thinking_20251015",), keep_thinking_turns=1).before_step(view_of(msgs, chars4))
    assert [(m, j) for a in actions for m, j, _ in a.targets] == [("a0", 0)]  # type: ignore[attr-defined]
