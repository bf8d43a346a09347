"""claude-code (seed 002 + the real CLI 2.0.76 session): the 95% trigger and today's window - reserve - buffer
trigger pinned on the real compaction, the whole-history request, the continuation message, replay, failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compbench.session import Compact, Insert, Keep, ModelLimits
from compbench.strategies import resolve
from compbench.strategies.claude_code import (
    COMPACT_PROMPT,
    SUMMARY_PREFIX,
    SUMMARY_SUFFIX,
    ClaudeCode,
    ClaudeCodeParams,
)
from compbench.summarizers.mock import MockSummarizer
from compbench.tokens import TokenCounter
from compbench.transcript import Message, Text, Usage
from helpers import assistant, run, system, tool, transcript, user, view_of

REAL = "M-Claude__c7d2069e-c561-4759-8adf-b0745be78c29.jsonl"


def fires(c: ClaudeCode, total: int, limits: ModelLimits, counter: TokenCounter) -> bool:
    v = view_of([user("u1"), assistant("a1")], counter, limits)
    assert c.after_step(v, Usage(input=total - 10, output=10)) == ()  # decided after, applied before
    return bool(c.before_step(v))


@pytest.mark.parametrize(("total", "expected"), [(189_999, False), (190_000, True), (190_001, True)])
def test_seed_trigger_at_95_percent(chars4: TokenCounter, total: int, expected: bool) -> None:
    assert fires(ClaudeCode(ClaudeCodeParams()), total, ModelLimits(200_000, 64_000), chars4) is expected


@pytest.mark.parametrize(("total", "expected"), [
    (154_999, False), (155_000, True), (155_001, True),
    (152_770, False), (155_548, True),  # the real session: the step before did not compact, this one did
])
def test_current_trigger_window_minus_reserve_minus_buffer(chars4: TokenCounter, total: int, expected: bool) -> None:
    # 200,000 - min(64,000, 32,000) - 13,000 = 155,000 (77.5%)
    cur = resolve("claude-code:preset=current").create()
    assert isinstance(cur, ClaudeCode)
    assert fires(cur, total, ModelLimits(200_000, 64_000), chars4) is expected


def test_current_with_the_older_20k_reserve_is_the_observed_83_5_percent(chars4: TokenCounter) -> None:
    older = resolve("claude-code:preset=current,output_reserve=20000").create()
    assert isinstance(older, ClaudeCode)
    v = view_of([user("u1")], chars4, ModelLimits(200_000, 64_000))
    assert older.threshold(v) == 167_000 == 0.835 * 200_000
    small_output = view_of([user("u1")], chars4, ModelLimits(200_000, 8_192))  # min(max_output, reserve)
    assert resolve("claude-code:preset=current").create().threshold(small_output) == 178_808  # type: ignore[attr-defined]


def test_real_session_pre_tokens_are_input_plus_output(transcripts_dir: Path) -> None:
    """preTokens = the last call's input (with cache reads/writes) + output; the summary's wording."""
    records = [json.loads(line) for line in (transcripts_dir / "claude-code" / REAL).open()]
    (k,) = [i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary"]
    assert records[k]["compactMetadata"] == {"trigger": "auto", "preTokens": 155_548}
    u = next(r["message"]["usage"] for r in reversed(records[:k]) if isinstance(r.get("message"), dict)
             and r["message"].get("usage"))
    total = u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"] + u["output_tokens"]
    assert total == 155_548
    text = records[k + 1]["message"]["content"]
    assert records[k + 1]["isCompactSummary"] and text.startswith(SUMMARY_PREFIX) and text.endswith(SUMMARY_SUFFIX)


def test_compaction_summarizes_everything_but_the_system_head(chars4: TokenCounter) -> None:
    msgs = [system("sys"), user("u1", "fix the bug"), assistant("a1", calls=[("c1", "bash", {"cmd": "ls"})]),
            tool("t1", "c1", "a.py"), system("late", "a reminder"), user("u2", "go on")]
    c = ClaudeCode(ClaudeCodeParams()).compact(view_of(msgs, chars4, ModelLimits(200_000, 64_000)), "auto")
    assert c.new_view == (Keep("sys"), Insert("user", SUMMARY_PREFIX, SUMMARY_SUFFIX, with_summary=True,
                                              origin="summary"))
    assert c.on_failure == "unchanged" and c.meta == {"threshold": 190_000.0}
    req = c.request
    assert req is not None and req.system == "" and req.max_output_tokens == 20_000
    assert req.prompt[:-1] == tuple(msgs)
    assert req.prompt[-1] == Message("claude-code-compact", "user", (Text(COMPACT_PROMPT),))
    assert [m.id for m in req.source] == ["u1", "a1", "t1", "late", "u2"]
    assert Insert("user", SUMMARY_PREFIX, SUMMARY_SUFFIX, with_summary=True).text("S") == (
        "This session is being continued from a previous conversation that ran out of context. The conversation "
        "is summarized below:\nS.\nPlease continue the conversation from where we left it off without asking the "
        "user any further questions. Continue with the last task that you were asked to work on.")


def test_custom_instructions_are_appended_as_compact_does(chars4: TokenCounter) -> None:
    cc = resolve("claude-code:custom_instructions=summarize only the TODOs,max_summary_tokens=5000").create()
    assert isinstance(cc, ClaudeCode)
    c = cc.compact(view_of([user("u1")], chars4), "auto")
    assert c.request is not None and c.request.max_output_tokens == 5_000
    assert c.request.prompt[-1].text == COMPACT_PROMPT + "\n\nAdditional Instructions:\nsummarize only the TODOs"
    blank = ClaudeCode(ClaudeCodeParams(custom_instructions="   ")).compact(view_of([user("u1")], chars4), "auto")
    assert blank.request is not None and blank.request.prompt[-1].text == COMPACT_PROMPT


def small() -> list[Message]:
    return [system("sys", "S" * 40), user("u1", "x" * 400), assistant("a1", "A" * 40, calls=[("c1", "bash", {})]),
            tool("t1", "c1", "o" * 400), assistant("a2", "B" * 40), user("u2", "z" * 40), assistant("a3", "C" * 40)]


@pytest.mark.parametrize(("buffer", "compacts"), [(267, False), (268, True), (269, True)])
def test_replay_boundary_and_final_view(chars4: TokenCounter, buffer: int, compacts: bool) -> None:
    # chars4, no overhead: step 0 = 110 in + 12 out = 122; step 1 = 222 + 10 = 232; step 2 = 242 + 10 = 252
    # threshold = 1,000 - min(500, 500) - buffer: 233 (above 232) / 232 (equal) / 231 (below)
    cc = resolve(f"claude-code:output_reserve=500,autocompact_buffer={buffer}").create()
    tr = run(transcript(*small()), cc, chars4, window=1_000, max_output=500, summarizer=MockSummarizer("DONE"))
    assert [s.input + s.output for s in tr.steps[:2]] == [122, 232]
    if not compacts:
        assert tr.compactions == () and tr.final_view == ("sys", "u1", "a1", "t1", "a2", "u2", "a3")
        return
    (ev,) = tr.compactions
    assert (ev.step, ev.phase, ev.ok, ev.tokens_before) == (2, "before", True, 242)
    assert ev.kept_ids == ("sys",) and ev.replaced_ids == ("u1", "a1", "t1", "a2", "u2")
    assert tr.final_view == ("sys", "compbench:1:1:summary", "a3")
    assert tr.steps[2].input == 10 + -(-len(SUMMARY_PREFIX + "DONE" + SUMMARY_SUFFIX) // 4)


def test_replay_failure_leaves_the_view_unchanged(chars4: TokenCounter) -> None:
    tr = run(transcript(*small()), resolve("claude-code:output_reserve=500,autocompact_buffer=268").create(), chars4,
             window=1_000, max_output=500, summarizer=MockSummarizer(error="overloaded"))
    (ev,) = tr.compactions
    assert not ev.ok and ev.error == "overloaded"
    assert tr.final_view == ("sys", "u1", "a1", "t1", "a2", "u2", "a3")


def test_resolve_parses_params() -> None:
    p = resolve("claude-code:preset=current,threshold_ratio=0.9,custom_instructions=keep TODOs").params
    assert isinstance(p, ClaudeCodeParams)
    assert (p.threshold_ratio, p.output_reserve, p.autocompact_buffer, p.custom_instructions,
            p.max_summary_tokens) == (0.9, 32_000, 13_000, "keep TODOs", 20_000)
    assert resolve("claude-code").params == ClaudeCodeParams()
    cur = resolve("claude-code:preset=current").create()
    assert isinstance(cur, ClaudeCode) and isinstance(cur.compact(view_of([user("u")], TokenCounter("chars4", 0)),
                                                                   "auto"), Compact)
