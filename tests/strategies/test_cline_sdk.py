"""cline-sdk (cline/cline 21cb8d2525bc, agentic compaction): the chars/3 estimate, the 0.9 x usable input
trigger, the target and the preserved tail, the cut rules, the summary request and message."""

from __future__ import annotations

import math

import pytest

from compbench.data.transcript import Message, Reasoning, Text, ToolCall, ToolResult
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits, SessionView
from compbench.strategies import resolve
from compbench.strategies.cline_sdk import (
    SUMMARY_PREFIX,
    SUMMARY_SYSTEM,
    ClineSdk,
    ClineSdkParams,
    as_json,
    serialize,
)
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of


def est(m: Message) -> int:
    return max(1, math.ceil(len(as_json(m)) / 3))


def session() -> list[Message]:
    return [system(), user("u0", "add a flag"), assistant("a1", "ok", calls=[("c1", "read_files", {"path": "cli.py"})]),
            tool("t1", "c1", "x" * 300), assistant("a2", calls=[("c2", "editor", {"path": "cli.py"})]),
            tool("t2", "c2", "edited"), user("u3", "now the docs"), assistant("a3", "reading"),
            tool("t3", "c3", "y" * 300)]


def at(msgs: list[Message], counter: TokenCounter, window: int, max_input: int | None = None,
       system_tokens: int = 0) -> SessionView:
    return view_of(msgs, counter, ModelLimits(window, 100, max_input), system_tokens)


def total(msgs: list[Message]) -> int:
    return sum(est(m) for m in msgs if m.role != "system")


@pytest.mark.parametrize(("delta", "acts"), [(1, False), (0, True)])
def test_trigger_at_0_9_of_0_9_window(chars4: TokenCounter, delta: int, acts: bool) -> None:
    # without an input limit, maxInput = 0.9 * window; trigger = 0.9 * maxInput; request >= trigger acts
    t = total(session())
    window = max(w for w in range(1, 2 * t) if w * 0.9 * 0.9 <= t) + delta
    out = ClineSdk(ClineSdkParams(preserve_recent_tokens=50)).before_step(at(session(), chars4, window))
    assert bool(out) is acts


def test_input_limit_is_the_usable_input(chars4: TokenCounter) -> None:
    s = ClineSdk(ClineSdkParams())
    assert s.max_input(at([], chars4, 100_000)) == 90_000
    assert s.max_input(at([], chars4, 100_000, max_input=60_000)) == 60_000
    assert s.max_input(at([], chars4, 100_000, max_input=200_000)) == 100_000


def test_request_and_summary_message(chars4: TokenCounter) -> None:
    (c,) = ClineSdk(ClineSdkParams(preserve_recent_tokens=50)).before_step(at(session(), chars4, 200))
    assert isinstance(c, Compact) and c.request is not None
    # the tail: the latest typed prompt u3 and after; the head u0 .. t2 summarized
    assert c.new_view == (Keep("sys"), Insert("user", SUMMARY_PREFIX, with_summary=True, origin="summary"),
                          Keep("u3"), Keep("a3"), Keep("t3"))
    req = c.request
    assert req.system == SUMMARY_SYSTEM and req.max_output_tokens == 100 and req.previous_summary is None
    (m,) = req.prompt
    assert "## Files\nRead: cli.py\nEdited: cli.py\n\nConversation:\n[User]: add a flag\n\n[Bot]: ok\n" \
           '[Bot tool calls]: read_files(path="cli.py")\n\n[Tool result]: ' + "x" * 300 in m.text
    assert m.text.startswith("Summarize this session for continuation. Be concise and factual.")


def test_tail_never_starts_on_tool_results(chars4: TokenCounter) -> None:
    msgs = [user("u0", "go")] + [m for k in range(1, 6) for m in (
        assistant(f"a{k}", calls=[(f"c{k}", "bash", {})]), tool(f"t{k}", f"c{k}", "z" * 90))]
    strat = ClineSdk(ClineSdkParams())
    v = at(msgs, chars4, 100_000)
    entries = list(v.entries)
    preserve = est(msgs[-1])  # the budget is met at t5: a tool result, so the cut moves back to a5
    assert strat.cut_index(entries, preserve) == len(msgs) - 2
    assert strat.cut_index(entries, 10 ** 9) == 0  # everything fits the tail: nothing to summarize


def test_serialize_cuts_tool_results_and_thinking_at_2000() -> None:
    call = ToolCall("c", "bash", '{"cmd": "ls -l", "n": 2}')
    m = Message("a", "assistant", (Reasoning("t" * 2_001), Text("hi"), call))
    assert serialize(m) == f"[Bot thinking]: {'t' * 2_000}\n...[truncated 1 chars]\n[Bot]: hi\n" \
                           '[Bot tool calls]: bash(cmd="ls -l", n=2)'
    r = Message("t", "tool", (ToolResult("c", "bash", "o" * 2_000),))
    assert serialize(r) == "[Tool result]: " + "o" * 2_000


def test_replay_folds_the_previous_summary(chars4: TokenCounter) -> None:
    msgs: list[Message] = [user("u0", "refactor")]
    for k in range(1, 40):
        msgs += [assistant(f"a{k}", "w" * 40, calls=[(f"c{k}", "bash", {"k": k})]), tool(f"t{k}", f"c{k}", "o" * 300)]
    summ = MockSummarizer("S")
    tr = run(transcript(*msgs, assistant("end")), resolve("cline-sdk:preserve_recent_tokens=300").create(), chars4,
             window=3_000, max_output=100, summarizer=summ)
    assert len(tr.compactions) >= 2 and all(c.ok for c in tr.compactions)
    assert summ.requests[1].previous_summary == "S"
    assert "Previous summary:\nS\n\nConversation:" in summ.requests[1].prompt[0].text


def test_estimate_is_json_chars_over_3_rounded_up(chars4: TokenCounter) -> None:
    m = Message("u", "user", (Text("a" * 11),))
    assert as_json(m) == '{"role":"user","content":[{"type":"text","text":"aaaaaaaaaaa"}]}' and len(as_json(m)) == 64
    assert ClineSdk(ClineSdkParams()).size(view_of([m], chars4).entries[0]) == 22  # ceil(64 / 3)


@pytest.mark.parametrize(("over", "acts"), [(-1, False), (0, True)])
def test_trigger_is_at_or_above(chars4: TokenCounter, over: int, acts: bool) -> None:
    t = total(session())  # maxInput 1000 -> trigger 900; the system overhead makes the request exactly 900 (+over)
    v = at(session(), chars4, 10_000, max_input=1_000, system_tokens=900 - t + over)
    assert bool(ClineSdk(ClineSdkParams(preserve_recent_tokens=50)).before_step(v)) is acts


def test_preserve_budget_boundary(chars4: TokenCounter) -> None:
    msgs = [user("u0", "go")] + [m for k in range(1, 6) for m in (
        assistant(f"a{k}", calls=[(f"c{k}", "bash", {})]), tool(f"t{k}", f"c{k}", "z" * 90))]
    entries = list(view_of(msgs, chars4).entries)
    strat = ClineSdk(ClineSdkParams())
    assert strat.cut_index(entries, est(msgs[-1]) + est(msgs[-2])) == len(msgs) - 2  # met exactly at a5
    assert strat.cut_index(entries, est(msgs[-1]) + est(msgs[-2]) + 1) == len(msgs) - 4  # t4 -> back to a4


def test_target_long_conversations_and_defaults(chars4: TokenCounter) -> None:
    assert ClineSdkParams().preserve_recent_tokens == 20_000
    short = ClineSdk(ClineSdkParams(preserve_recent_tokens=50)).before_step(at(session(), chars4, 200))
    assert isinstance(short[0], Compact) and short[0].meta["target"] == math.floor(200 * 0.9 * 0.9 * 0.7)
    msgs = [user("u0", "go")] + [m for k in range(1, 6) for m in (
        assistant(f"a{k}", calls=[(f"c{k}", "bash", {})]), tool(f"t{k}", f"c{k}", "z" * 90))]
    long = ClineSdk(ClineSdkParams(preserve_recent_tokens=50)).before_step(at(msgs, chars4, 300))  # 5 pairs
    assert isinstance(long[0], Compact) and long[0].meta["target"] == math.floor(300 * 0.9 * 0.5)
