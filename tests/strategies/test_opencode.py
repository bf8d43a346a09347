"""``opencode``: seed 001's overflow formula, compaction pivot and prune, and the ``current`` preset.

Counts use the ``chars4`` counter without message overhead, so a message of n characters is ceil(n/4)
tokens; OpenCode's own estimate (prune, tail) is round(n/4) with JS rounding, computed here by hand.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from compbench.data.transcript import Transcript, Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits, SessionView
from compbench.strategies import resolve
from compbench.strategies.opencode import OpenCode, OpenCodeParams, serialize
from compbench.strategies.opencode_prompts import CONTINUE_TEXT_CURRENT, SUMMARY_TEMPLATE
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of

PH = "[Old tool result content cleared]"
MARKER = Insert("user", "What did we do so far?", origin="marker")
SUMMARY = Insert("assistant", with_summary=True, origin="summary", meta={"summary": True})
CONTINUE = Insert("user", "Continue if you have next steps", origin="synthetic")
INSTRUCTION = ("Provide a detailed prompt for continuing our conversation above. Focus on information that would be "
               "helpful for continuing the conversation, including what we did, what we're doing, which files we're "
               "working on, and what we're going to do next considering new session will not have access to our "
               "conversation.")


def seed() -> OpenCode:
    return OpenCode(OpenCodeParams())


def current() -> OpenCode:
    oc = resolve("opencode:preset=current").create()
    assert isinstance(oc, OpenCode)
    return oc


def js_round(x: float) -> int:
    return math.floor(x + 0.5)


# --- parameters --------------------------------------------------------------------------------------------


def test_resolve_parses_seed_and_current_params() -> None:
    assert resolve("opencode:preset=seed").params == OpenCodeParams()
    p = resolve("opencode:preset=current").params
    assert (p.input_buffer, p.at_limit, p.count_cache_write, p.tail, p.prompt, p.prune, p.continue_text) == (
        20_000, True, True, True, "anchored", False, CONTINUE_TEXT_CURRENT)
    assert resolve("opencode:preset=seed").params.count_cache_write is False
    assert (p.protect, p.minimum, p.protected_tools, p.output_cap, p.auto) == (40_000, 20_000, ("skill",), 32_000, True)
    q = resolve("opencode:preset=current,prune=true,protect=30_000,protected_tools=skill|read,auto=false").params
    assert (q.prune, q.protect, q.protected_tools, q.auto, q.tail) == (True, 30_000, ("skill", "read"), False, True)
    with pytest.raises(ValueError, match="prompt must be one of"):
        resolve("opencode:preset=seed,prompt=fancy").create()


# --- isOverflow --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("limits", "usable"), [
    (ModelLimits(200_000, 64_000), 168_000),  # min(64000, 32000)
    (ModelLimits(200_000, 8_000), 192_000),  # min(8000, 32000)
    (ModelLimits(200_000, 0), 168_000),  # min(0, 32000) || 32000
    (ModelLimits(200_000, 64_000, 100_000), 100_000),  # limit.input wins
])
def test_seed_overflow_boundary(chars4: TokenCounter, limits: ModelLimits, usable: int) -> None:
    v = view_of([user("u1")], chars4, limits)
    oc = seed()
    assert oc.usable(v) == usable
    assert not oc.is_overflow(v, Usage(input=usable - 1_001, output=1_000))  # just below
    assert not oc.is_overflow(v, Usage(input=usable - 1_000, output=1_000))  # equal: not over (>)
    assert oc.is_overflow(v, Usage(input=usable - 999, output=1_000))  # just above


def test_overflow_counts_input_with_its_cache_once_and_is_disabled_by_config(chars4: TokenCounter) -> None:
    v = view_of([user("u1")], chars4, ModelLimits(200_000, 64_000))
    oc = seed()
    # compbench's input already includes cache_read: OpenCode's input + cache.read + output = 168,000, not over
    assert not oc.is_overflow(v, Usage(input=167_000, output=1_000, cache_read=160_000))
    assert not oc.is_overflow(view_of([user("u1")], chars4, ModelLimits(0, 0)), Usage(input=10**9))
    assert not OpenCode(OpenCodeParams(auto=False)).is_overflow(v, Usage(input=10**9))
    assert oc.after_step(v, Usage(input=168_001)) == () and oc.pending


@pytest.mark.parametrize(("write", "seed_over", "current_over"), [
    (1_000, True, True),  # 170,000 - 1,000 + 0 = 169,000 > 168,000
    (2_000, False, True),  # 168,000: equal, not over; today's count (170,000) is
    (2_001, False, True),
])
def test_seed_count_leaves_cache_writes_out(chars4: TokenCounter, write: int, seed_over: bool,
                                            current_over: bool) -> None:
    """Seed 001: input + cache.read + output, OpenCode's ``tokens.input`` excluding the cache written;
    today's overflow.ts adds ``cache.write``."""
    v = view_of([user("u1")], chars4, ModelLimits(200_000, 64_000))
    u = Usage(input=170_000, output=0, cache_read=170_000 - write, cache_write=write)
    assert seed().is_overflow(v, u) is seed_over
    assert current().is_overflow(v, u) is current_over
    assert OpenCode(OpenCodeParams(count_cache_write=True)).is_overflow(v, u)


@pytest.mark.parametrize(("limits", "usable"), [
    (ModelLimits(200_000, 64_000), 168_000),  # no input limit: context - maxOutputTokens, as the seed
    (ModelLimits(200_000, 64_000, 100_000), 80_000),  # limit.input - min(20000, 32000)
    (ModelLimits(200_000, 8_000, 100_000), 92_000),  # limit.input - min(20000, 8000)
])
def test_current_overflow_is_at_or_above_usable(chars4: TokenCounter, limits: ModelLimits, usable: int) -> None:
    v = view_of([user("u1")], chars4, limits)
    oc = current()
    assert oc.usable(v) == usable
    assert not oc.is_overflow(v, Usage(input=usable - 1, output=0))
    assert oc.is_overflow(v, Usage(input=usable, output=0))  # >= since overflow.ts
    assert oc.is_overflow(v, Usage(input=usable + 1, output=0))


# --- the compaction pivot ------------------------------------------------------------------------------------


def with_pruned(v: SessionView, msg_id: str, part: int) -> SessionView:
    entries = [replace(e, pruned={part: PH}) if e.id == msg_id else e for e in v.entries]
    return SessionView(entries, v.limits, v.counter)


def test_seed_compaction_request_and_new_view(chars4: TokenCounter) -> None:
    msgs = [system("sys"), user("u1", "fix the bug"), assistant("a1", calls=[("c1", "bash", {"cmd": "ls"})]),
            tool("t1", "c1", "file.py"), user("u2", "go on")]
    v = with_pruned(view_of(msgs, chars4, ModelLimits(200_000, 8_000)), "t1", 0)
    oc = seed()
    oc.after_step(v, Usage(input=192_001))
    (c,) = oc.before_step(v)  # the new prompt u2 prunes nothing; the queued marker runs
    assert isinstance(c, Compact) and c.reason == "overflow (auto)" and c.on_failure == "unchanged"
    assert c.new_view == (Keep("sys"), MARKER, SUMMARY, CONTINUE)
    r = c.request
    assert r is not None and r.max_output_tokens == 8_000
    assert r.system.startswith("You are a helpful AI assistant tasked with summarizing conversations.\n\n")
    assert r.system.endswith("concise enough to be quickly understood.")
    assert [m.id for m in r.prompt] == ["u1", "a1", "t1", "u2", "opencode-marker", "opencode-instruction"]
    assert r.prompt[-2].text == "What did we do so far?" and r.prompt[-1].text == INSTRUCTION
    assert r.prompt[2].parts[0].output == PH  # type: ignore[union-attr]
    assert [m.id for m in r.source] == ["u1", "a1", "t1", "u2"] and r.previous_summary is None
    assert not oc.pending and not oc.before_step(v)  # one marker, one compaction


def replay_transcript(u3_chars: int) -> Transcript:
    return transcript(user("u1", "x" * 2_000), assistant("a1", "y" * 400), user("u2", "z" * 3_200),
                      assistant("a2", "w" * 24), user("u3", "q" * u3_chars), assistant("a3", "r" * 40),
                      user("u4", "s" * 40), assistant("a4", "e" * 40), user("u5", "n" * 40), assistant("a5", "m" * 4))


def test_replay_compacts_before_the_step_after_the_overflow(chars4: TokenCounter) -> None:
    """Window 2,000, max output 500: usable 1,500. The seed counts what the call read from the cache and
    its output; the new part of a prompt (the previous answer, a new message) is a cache write, counted
    at the next call. u3 (200 tokens) makes a3's prompt 1,606 but its count 1,400 + 10; a4's count is
    1,606 + 10 > 1,500."""
    t = replay_transcript(800)
    tr = run(t, seed(), chars4, window=2_000, max_output=500)
    assert [(s.input, s.cache_read, s.output) for s in tr.steps[:4]] == [
        (500, 0, 100), (1_400, 500, 6), (1_606, 1_400, 10), (1_626, 1_606, 10)]
    (ev,) = tr.compactions
    assert (ev.step, ev.phase, ev.ok, ev.kept_ids) == (4, "before", True, ())
    assert ev.replaced_ids == ("u1", "a1", "u2", "a2", "u3", "a3", "u4", "a4", "u5")  # the new prompt too
    assert ev.summary_budget == 500
    assert tr.final_view == ("compbench:1:0:marker", "compbench:1:1:summary", "compbench:1:2:synthetic", "a5")
    # "What did we do so far?" 6 + "SUMMARY of 9 messages" 6 + "Continue if you have next steps" 8
    assert tr.steps[4].input == 20
    # u3 of 84 tokens: a4's count is 1,406 + 84 + 10 = 1,500, not over (and a5's, 1,511, has no next step)
    equal = run(replay_transcript(336), seed(), chars4, window=2_000, max_output=500)
    assert [s.cache_read + s.output for s in equal.steps][3] == 1_500 and equal.compactions == ()
    assert run(replay_transcript(340), seed(), chars4, window=2_000, max_output=500).compactions[0].step == 4
    cur = run(t, current(), chars4, window=2_000, max_output=500)  # the whole prompt: 1,606 + 10 >= 1,500
    (cev,) = cur.compactions
    # the whole history fits the 2,000-token tail budget, so the tail would start at the first message: none
    assert cev.step == 3 and cev.kept_ids == ()
    assert cur.final_view[2:] == ("compbench:1:2:synthetic", "a4", "u5", "a5")


def test_failed_summary_leaves_the_view_and_retriggers(chars4: TokenCounter) -> None:
    t = transcript(user("u1", "x" * 4_000), assistant("a1", "y" * 400), user("u2", "z" * 40), assistant("a2"),
                   user("u3"), assistant("a3"), user("u4"), assistant("a4"))
    tr = run(t, seed(), chars4, window=1_500, max_output=500, summarizer=MockSummarizer(error="boom"))
    # usable 1,000: a2's call reads 1,100 from the cache; the failed compaction leaves it all, so again
    assert [(c.step, c.ok, c.error) for c in tr.compactions] == [(2, False, "boom"), (3, False, "boom")]
    assert tr.final_view == ("u1", "a1", "u2", "a2", "u3", "a3", "u4", "a4")


# --- preset current: the tail, the anchored prompt ---------------------------------------------------------


@pytest.mark.parametrize(("limits", "budget"), [
    (ModelLimits(8_000, 2_000), 2_000),  # floor(6,000 / 4) = 1,500 -> MIN 2,000
    (ModelLimits(12_000, 2_000), 2_500),
    (ModelLimits(63_999, 4_000), 14_999),  # usable 59,999
    (ModelLimits(64_000, 4_000), 15_000),
    (ModelLimits(200_000, 64_000), 15_000),  # 42,000 -> MAX 15,000
])
def test_current_tail_budget(chars4: TokenCounter, limits: ModelLimits, budget: int) -> None:
    assert current().tail_budget(view_of([user("u1")], chars4, limits)) == budget


def model_json(role: str, text: str) -> str:
    return json.dumps({"role": role, "content": [{"type": "text", "text": text}]}, separators=(",", ":"))


def test_current_keeps_a_split_tail_and_sends_the_serialized_head(chars4: TokenCounter) -> None:
    msgs = [user("u1", "a" * 4_000), assistant("a1", "b" * 4_000), user("u2", "c" * 8_000),
            assistant("a2", "d" * 2_000), user("u3", "e" * 400)]
    v = view_of(msgs, chars4, ModelLimits(12_000, 2_000))  # budget 2,500
    u3 = js_round((2 + len(model_json("user", "e" * 400))) / 4)
    turn2 = js_round((3 + len(model_json("user", "c" * 8_000)) + len(model_json("assistant", "d" * 2_000))) / 4)
    a2 = js_round((2 + len(model_json("assistant", "d" * 2_000))) / 4)
    assert u3 <= 2_500 and u3 + turn2 > 2_500 and a2 <= 2_500 - u3  # turn 2 does not fit; its suffix a2 does
    oc = current()
    oc.after_step(v, Usage(input=10_000))
    (c,) = oc.before_step(v)
    assert isinstance(c, Compact)
    assert c.new_view == (MARKER, SUMMARY, Keep("a2"), Keep("u3"),
                          Insert("user", CONTINUE_TEXT_CURRENT, origin="synthetic"))
    assert c.meta == {"tail": 2}
    r = c.request
    assert r is not None and r.max_output_tokens == 2_000 and r.previous_summary is None
    assert r.system.startswith("You are an anchored context summarization assistant for coding sessions.")
    (prompt,) = r.prompt
    assert prompt.role == "user" and prompt.text == (
        "Create a new anchored summary from the conversation history.\n\n" + SUMMARY_TEMPLATE + "\n\n"
        + "[User]: " + "a" * 4_000 + "\n\n[Assistant]: " + "b" * 4_000 + "\n\n[User]: " + "c" * 8_000)
    assert SUMMARY_TEMPLATE.startswith("Output exactly the Markdown structure") and "## Next Move" in SUMMARY_TEMPLATE
    assert [m.id for m in r.source] == ["u1", "a1", "u2"]


def test_current_serialize_clips_outputs_and_marks_errors_and_pruned(chars4: TokenCounter) -> None:
    msgs = [user("u1", "hi"), assistant("a1", "look", calls=[("c1", "bash", {"cmd": "ls"})]),
            tool("t1", "c1", "o" * 2_500), assistant("a2", "again", calls=[("c2", "read", {})]),
            tool("t2", "c2", "boom", is_error=True), tool("t3", "c2", "secret")]
    v = view_of(msgs, chars4)
    assert serialize(v.entries, {"t3": {0: PH}}) == (
        "[User]: hi\n\n[Assistant]: look\n[Assistant tool call]: bash({\"cmd\": \"ls\"})\n[Tool result]: "
        + "o" * 2_000 + "\n[truncated]\n\n[Assistant]: again\n[Assistant tool call]: read({})\n"
        "[Tool error]: boom\n[Tool result]: " + PH)


def test_current_second_compaction_updates_the_previous_summary(chars4: TokenCounter) -> None:
    t = transcript(user("u1", "x" * 4_000), assistant("a1", "y" * 400), user("u2", "z" * 40), assistant("a2"),
                   user("u3", "q" * 4_000), assistant("a3", "r" * 400), user("u4"), assistant("a4"))
    summarizer = MockSummarizer("S1")
    tr = run(t, current(), chars4, window=1_500, max_output=500, summarizer=summarizer)
    assert [c.step for c in tr.compactions] == [1, 3] and all(c.ok for c in tr.compactions)
    second = summarizer.requests[1]
    assert second.previous_summary == "S1"
    assert second.prompt[0].text.startswith(
        "Update the anchored summary below using the conversation history above.\n"
        "Preserve still-true details, remove stale details, and merge in the new facts.\n"
        "<previous-summary>\nS1\n</previous-summary>\n\n" + SUMMARY_TEMPLATE)


# --- a real OpenCode export ------------------------------------------------------------------------------------

SAILOR = "dark-factory__session__curious-sailor__ses_39b7f9e89ffe7J0WzLzYrUt4eW.json"


def test_real_opencode_session_compacts_after_the_first_overflowing_step(transcripts_dir: Path,
                                                                          chars4: TokenCounter) -> None:
    """The seed compacts right before the step after the first step whose cache read + output passes
    usable (40,000 - min(8,000, 32,000) = 32,000), measured independently on the uncompacted replay. The
    big tool output before step 10 is a cache write at step 10, so it is counted one call later."""
    from compbench.data.formats import read

    (t,) = read(transcripts_dir / "opencode" / SAILOR)
    counter = chars4
    base = run(t, resolve("none").create(), counter, window=40_000, max_output=8_000)
    first = next(s.step for s in base.steps if s.cache_read + s.output > 32_000)
    assert (first, base.steps[first].cache_read) == (11, 47_193)  # step 10's prompt, past the window
    assert base.steps[first - 1].input + base.steps[first - 1].output > 32_000  # counting writes: one earlier
    tr = run(t, seed(), counter, window=40_000, max_output=8_000)
    assert [x.step for x in tr.compactions] == [12]
    c = tr.compactions[0]
    assert (c.step, c.phase, c.ok) == (first + 1, "before", True)
    assert tr.steps[first] == base.steps[first]  # nothing changed the view before the compaction
    sent = sum(1 for m in t.messages[:tr.steps[first + 1].message_index] if not m.meta.get("compaction"))
    assert c.kept_ids == () and c.summary == f"SUMMARY of {sent} messages"  # the whole view was the source
    assert c.tokens_after == 6 + math.ceil(len(c.summary) / 4) + 8  # marker + summary + continue
    after = tr.epochs[tr.epoch_starts.index(tr.steps[first + 1].message_index)]
    assert [x.split(":")[-1] for x in after] == ["marker", "summary", "synthetic"]
    assert [x.step for x in run(t, OpenCode(OpenCodeParams(count_cache_write=True)), counter, window=40_000,
                                max_output=8_000).compactions] == [11, 17]


@pytest.mark.parametrize(("version", "preset"), [
    ("1.2.5", "seed"), ("1.2.99", "seed"), ("1.3.0", "1.3"), ("1.3.17", "1.3"), ("1.4.0", "1.4"), ("1.4.3", "1.4"),
    ("1.18.16", "1.4"), ("1.18.17", "current"), ("1.18.18", "current"), ("2.0.9", "current"), ("0.15.0", "seed"),
    ("dev", "current")])
def test_each_recorded_version_gets_its_preset(version: str, preset: str) -> None:
    from compbench.strategies.opencode import version_preset

    assert version_preset(version) == preset
