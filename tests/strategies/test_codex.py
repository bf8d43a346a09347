"""codex (seed 002 + openai/codex compact.rs): limits, trigger boundaries, the rebuilt history with the
20k user-message budget and Codex's middle truncation, the request, a replay, failure, and `current`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import shared_glob

from compbench.data.transcript import Message, Text, Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits
from compbench.strategies import resolve
from compbench.strategies.codex import (
    COMPACT_PROMPT,
    CURRENT_COMPACT_PROMPT,
    CURRENT_SUMMARY_PREFIX,
    SUMMARY_PREFIX,
    Codex,
    CodexParams,
    approx_token_count,
    item_tokens,
    truncate_text,
)
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of


def compact_after(c: Codex, msgs: list[Message], counter: TokenCounter, total: int,
                  window: int = 200_000) -> Compact | None:
    """Tell the strategy a step used ``total`` tokens, then ask before the next call."""
    v = view_of(msgs, counter, ModelLimits(window, 32_000))
    assert c.after_step(v, Usage(input=total - 100, output=100)) == ()  # decided after, applied before
    actions = c.before_step(v)
    if not actions:
        return None
    (a,) = actions
    assert isinstance(a, Compact)
    return a


# --- the limit -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("window", "seed", "current"), [
    (200_000, 180_000, 180_000),  # o3 / o4-mini / codex-mini-latest: seed 002's "180k"
    (272_000, 244_800, 244_800),  # GPT-5 family: seed 002's "244k" = 272,000 * 9 / 10
    (128_000, 115_200, 115_200),  # not in seed 002's table: window * 9 / 10 (openai_model_info.rs)
    (100_001, 90_000, 90_000),    # integer division, as the Rust does
])
def test_limit_per_model_and_derived(chars4: TokenCounter, window: int, seed: int, current: int) -> None:
    v = view_of([user("u1")], chars4, ModelLimits(window, 32_000))
    assert Codex(CodexParams()).limit(v) == seed
    assert resolve("codex:preset=current").create().limit(v) == current  # type: ignore[attr-defined]


def test_explicit_limit_is_capped_at_the_effective_window(chars4: TokenCounter) -> None:
    v = view_of([user("u1")], chars4, ModelLimits(272_000, 128_000))
    assert Codex(CodexParams(auto_compact_token_limit=100_000)).limit(v) == 100_000
    assert Codex(CodexParams(auto_compact_token_limit=300_000)).limit(v) == 258_400  # 95% of 272,000
    assert Codex(CodexParams(auto_compact_token_limit=300_000, effective_window_percent=100)).limit(v) == 272_000


def test_real_rollout_reports_the_95_percent_effective_window(transcripts_dir: Path) -> None:
    """Both real rollouts (gpt-5.1-codex-max, gpt-5.2-codex: 272k) report model_context_window 258,400."""
    for f in shared_glob(transcripts_dir / "codex", "*.jsonl"):
        windows = {json.loads(line)["payload"]["info"]["model_context_window"]
                   for line in f.open() if '"token_count"' in line and '"model_context_window"' in line}
        assert windows == {272_000 * 95 // 100} == {258_400}


# --- the trigger: total = input + output >= limit, boundaries ------------------------------------------


@pytest.mark.parametrize(("total", "fires"), [(179_999, False), (180_000, True), (180_001, True)])
def test_trigger_boundary_at_180k(chars4: TokenCounter, total: int, fires: bool) -> None:
    msgs = [user("u1"), assistant("a1")]
    assert (compact_after(Codex(CodexParams()), msgs, chars4, total) is not None) is fires


def test_trigger_counts_output_and_waits_for_the_next_call(chars4: TokenCounter) -> None:
    c = Codex(CodexParams(auto_compact_token_limit=1_000))
    v = view_of([user("u1"), assistant("a1")], chars4)
    c.after_step(v, Usage(input=999, output=0))
    assert c.before_step(v) == ()
    c.after_step(v, Usage(input=900, output=100))
    assert len(c.before_step(v)) == 1 and c.before_step(v) == ()  # one compaction, then the flag is clear


# --- the rebuilt history -----------------------------------------------------------------------------------


def long_session() -> list[Message]:
    agents = Message("agents", "user", (Text("# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>x</INSTRUCTIONS>"),))
    env = Message("env", "user", (Text("<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"),),
                  meta={"session_prefix": True})
    return [system("dev", "developer instructions"), agents, env,
            user("u1", "a" * 60_000), assistant("a1", calls=[("c1", "bash", {"cmd": "ls"})]), tool("t1", "c1", "out"),
            user("u2", "b" * 40_000), assistant("a2"), user("u3", "c" * 20_000), assistant("a3")]


def test_new_history_initial_context_recent_users_and_prefixed_summary(chars4: TokenCounter) -> None:
    msgs = long_session()
    c = compact_after(Codex(CodexParams()), msgs, chars4, 180_000)
    assert c is not None
    # budget 20,000: u3 costs 5,000, u2 10,000, u1 15,000 > the 5,000 left: truncated to 5,000 tokens
    # marker (30 bytes): (60,000 - 20,000 bytes) / 4 removed; head = tail budget = (20,000 - 30) / 2 = 9,985;
    # head + marker + "\n" + tail = 20,001 bytes is clipped to 20,000: the tail keeps 9,984
    marker = "[…10000 tokens truncated…]"
    left, right = 9_985, 9_984
    assert c.new_view == (Keep("dev"), Keep("agents"), Keep("env"),
                          Insert("user", "a" * left + marker + "\n" + "a" * right, origin="synthetic"),
                          Keep("u2"), Keep("u3"),
                          Insert("user", SUMMARY_PREFIX + "\n", with_summary=True, origin="summary"))
    assert len(marker.encode()) == 30
    trunc = c.new_view[3]
    assert isinstance(trunc, Insert) and len(trunc.before.encode()) == 20_000
    assert c.on_failure == "unchanged" and c.meta == {"limit": 180_000}
    req = c.request
    assert req is not None and req.system == "" and req.max_output_tokens is None
    assert [m.id for m in req.prompt] == [m.id for m in msgs] + ["codex-compact"]
    assert req.prompt[-1] == Message("codex-compact", "user", (Text(COMPACT_PROMPT),))
    assert [m.id for m in req.source] == ["u1", "a1", "t1", "u2", "a2", "u3", "a3"]


def test_budget_exactly_spent_stops_and_earlier_summaries_are_not_user_messages(chars4: TokenCounter) -> None:
    old_summary = user("s0", SUMMARY_PREFIX + "\nearlier work")
    msgs = [old_summary, user("u1", "x" * 400), assistant("a1"), user("u2", "y" * 400), assistant("a2")]
    c = compact_after(Codex(CodexParams(user_message_max_tokens=100)), msgs, chars4, 180_000)
    assert c is not None  # u2 costs exactly 100: kept whole, nothing left for u1
    assert [s for s in c.new_view if isinstance(s, Keep)] == [Keep("u2")]
    c0 = compact_after(Codex(CodexParams(user_message_max_tokens=0)), msgs, chars4, 180_000)
    assert c0 is not None and len(c0.new_view) == 1  # only the summary


@pytest.mark.parametrize("spec", ["codex", "codex:preset=0.77", "codex:preset=current"])
def test_an_earlier_summary_is_never_kept_as_a_user_message(chars4: TokenCounter, spec: str) -> None:
    """collect_user_messages skips a message starting with the summary prefix: the earlier summary is the
    most recent user-role message here and the budget is ample, so only the filter keeps it out."""
    c = resolve(spec).create()
    assert isinstance(c, Codex)
    earlier = user("s0", c.p.summary_prefix + "\nwhat happened before")
    msgs = [user("u1", "the task"), assistant("a1"), earlier, assistant("a2", calls=[("c1", "bash", {})]),
            tool("t1", "c1", "out")]
    compaction = c.manual(view_of(msgs, chars4))
    kept = [x.id for x in compaction.new_view if isinstance(x, Keep)]
    assert kept == ["u1"]
    other = user("s1", (SUMMARY_PREFIX if c.p.summary_prefix != SUMMARY_PREFIX else CURRENT_SUMMARY_PREFIX)
                 + "\nnot this tool's prefix")
    assert "s1" in [x.id for x in c.manual(view_of([*msgs, other], chars4)).new_view if isinstance(x, Keep)]


def test_interruption_marker_and_a_recorded_summary_are_not_user_messages(chars4: TokenCounter) -> None:
    """<turn_aborted> is contextual (no request, no boundary) and no initial context: a rebuild drops it; a
    summary the tool recorded (fidelity's restart point) is no user message either."""
    aborted = user("x1", "<turn_aborted>\nThe user interrupted the previous turn on purpose.")
    recorded = Message("r0", "user", (Text("(summary not recorded)"),), meta={"recorded_summary": True})
    msgs = [recorded, system("dev"), user("u1", "task"), assistant("a1"), aborted, user("u2", "go on"),
            assistant("a2", calls=[("c1", "bash", {})]), tool("t1", "c1", "out")]
    c = resolve("codex:preset=current").create()
    assert isinstance(c, Codex)
    compaction = c.manual(view_of(msgs, chars4))
    assert [getattr(x, "id", "summary") for x in compaction.new_view] == ["u1", "dev", "u2", "summary"]


def test_tool_result_only_and_multimodal_user_messages(chars4: TokenCounter) -> None:
    from compbench.data.transcript import ToolResult

    mixed = Message("m", "user", (Text("see"), ToolResult("c", "bash", "big output")))
    only_result = Message("r", "user", (ToolResult("c2", "bash", "output"),))
    c = compact_after(Codex(CodexParams()), [mixed, only_result, assistant("a1")], chars4, 180_000)
    assert c is not None
    assert c.new_view[0] == Insert("user", "see", origin="synthetic")  # Codex keeps the text only
    assert len(c.new_view) == 2


def test_approx_token_count_and_truncation_follow_codex() -> None:
    assert approx_token_count("") == 0 and approx_token_count("abcd") == 1 and approx_token_count("abcde") == 2
    assert approx_token_count("é" * 3) == 2  # 6 bytes
    lines = "".join(f"{i:03}\n" for i in range(1, 21))  # 80 bytes, 16 tokens = 64 bytes
    assert truncate_text(lines, 16) == "001\n002\n003\n004\n[…4 tokens truncated…]\n017\n018\n019\n020\n"
    assert truncate_text("word " * 200, 16) == "word word word wor[…234 tokens truncated…]\nrd word word word"
    assert truncate_text("abcdef", 0) == "[…2 tokens truncated…]"
    assert truncate_text("short", 100) == "short"
    assert "\ufffd" not in truncate_text("😀" * 40, 8)


# --- replay through the loop -------------------------------------------------------------------------------


def small() -> list[Message]:
    return [system("sys", "S" * 40), user("u1", "x" * 400), assistant("a1", "A" * 40, calls=[("c1", "bash", {})]),
            tool("t1", "c1", "o" * 400), assistant("a2", "B" * 40), user("u2", "z" * 40), assistant("a3", "C" * 40)]


def test_replay_compacts_before_the_call_after_the_limit(chars4: TokenCounter) -> None:
    # chars4, no overhead: sys 10, u1 100, a1 10 + 2 ("bash{}"), t1 100, a2 10, u2 10, a3 10
    # step 0: 110 in + 12 out = 122; step 1: 222 + 10 = 232 (>= 232: compact before step 2)
    t = transcript(*small())
    strategy = resolve("codex:preset=seed,auto_compact_token_limit=232").create()
    tr = run(t, strategy, chars4, summarizer=MockSummarizer("DONE"))
    assert [(s.input, s.output) for s in tr.steps[:2]] == [(110, 12), (222, 10)]
    (ev,) = tr.compactions
    assert (ev.step, ev.phase, ev.ok, ev.tokens_before) == (2, "before", True, 242)
    assert ev.kept_ids == ("sys", "u1", "u2") and ev.replaced_ids == ("a1", "t1", "a2")
    assert tr.final_view == ("sys", "u1", "u2", "compbench:1:3:summary", "a3")
    summary = math.ceil(len(SUMMARY_PREFIX + "\nDONE") / 4)
    assert tr.steps[2].input == 10 + 100 + 10 + summary and tr.steps[2].cache_read == 110  # u2 moved: sys + u1 cached
    assert run(t, resolve("codex:preset=seed,auto_compact_token_limit=233").create(), chars4).compactions == ()


def test_replay_failure_leaves_the_history_unchanged(chars4: TokenCounter) -> None:
    tr = run(transcript(*small()), resolve("codex:preset=seed,auto_compact_token_limit=232").create(), chars4,
             summarizer=MockSummarizer(error="stream closed before response.completed"))
    (ev,) = tr.compactions
    assert not ev.ok and ev.error == "stream closed before response.completed"
    assert tr.final_view == ("sys", "u1", "a1", "t1", "a2", "u2", "a3")


# --- preset current -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("reported", "fires"), [(784, False), (785, True), (786, True)])
def test_current_counts_items_after_the_last_model_output(chars4: TokenCounter, reported: int, fires: bool) -> None:
    """Today's Codex adds each item after the last model output at its serialized JSON size / 4, rounded
    up: {"type":"function_call_output","call_id":"c1","output":"o...o"} is 58 + 400 bytes = 115 tokens."""
    msgs = [user("u1", "x" * 40), assistant("a1", calls=[("c1", "bash", {})]), tool("t1", "c1", "o" * 400)]
    assert item_tokens(msgs[2]) == 115
    v = view_of(msgs, chars4, ModelLimits(1_000, 100))
    v.last_usage = Usage(input=reported, output=0)  # + 115 >= 900 = 90% of 1,000
    actions = resolve("codex:preset=current").create().before_step(v)
    assert bool(actions) is fires
    v.last_usage = Usage(input=900, output=0)
    assert resolve("codex:preset=seed").create().before_step(v) == ()  # the seed decides after the step, on usage only
    if fires:
        (c,) = actions
        assert isinstance(c, Compact)
        last = c.new_view[-1]
        assert isinstance(last, Insert) and last.before == CURRENT_SUMMARY_PREFIX + "\n"
        assert c.request is not None and c.request.prompt[-1].text == CURRENT_COMPACT_PROMPT


@pytest.mark.parametrize(("configured", "current", "seed"), [
    (244_799, 244_799, 244_799), (244_800, 244_800, 244_800), (244_801, 244_800, 244_801),
    (258_401, 244_800, 258_400),
])
def test_a_set_limit_is_capped_at_90_percent_today(chars4: TokenCounter, configured: int, current: int,
                                                    seed: int) -> None:
    """ModelInfo::auto_compact_token_limit: min(configured, window * 9 / 10), not the 95% effective window."""
    v = view_of([user("u1")], chars4, ModelLimits(272_000, 128_000))
    cur = resolve(f"codex:preset=current,auto_compact_token_limit={configured}").create()
    assert cur.limit(v) == current  # type: ignore[attr-defined]
    assert Codex(CodexParams(auto_compact_token_limit=configured)).limit(v) == seed


def turn(prompt: str = "next, please") -> list[Message]:
    agents = Message("agents", "user", (Text("# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>x</INSTRUCTIONS>"),))
    return [system("dev", "developer instructions"), agents, user("u1", "first request"),
            assistant("a1", calls=[("c1", "bash", {})]), tool("t1", "c1", "out"), assistant("a2", "done"),
            user("u2", prompt)]


def test_mid_turn_rebuild_puts_the_initial_context_before_the_last_user_message(chars4: TokenCounter) -> None:
    """turn.rs: a compaction between a tool output and the next call is mid-turn
    (InitialContextInjection::BeforeLastUserMessage): [users..., initial context, last user, summary]."""
    msgs = [*turn(), assistant("a3", calls=[("c2", "bash", {})]), tool("t2", "c2", "more")]
    v = view_of(msgs, chars4, ModelLimits(272_000, 128_000))
    v.last_usage = Usage(input=250_000, output=0)
    (c,) = resolve("codex:preset=current").create().before_step(v)
    assert isinstance(c, Compact)
    assert [getattr(x, "id", "summary") for x in c.new_view] == ["u1", "dev", "agents", "u2", "summary"]
    old = resolve("codex:preset=0.77").create().manual(v)  # type: ignore[attr-defined]
    assert [getattr(x, "id", "summary") for x in old.new_view] == ["dev", "agents", "u1", "u2", "summary"]


@pytest.mark.parametrize(("reported", "fires"), [(244_799, False), (244_800, True)])
def test_pre_turn_compaction_runs_before_the_new_prompt_is_recorded(chars4: TokenCounter, reported: int,
                                                                    fires: bool) -> None:
    """run_pre_sampling_compact runs before the new prompt is recorded: the prompt (20k tokens here) is
    not counted, not summarized, not a kept user message; it follows the summary and the reinjected
    initial context."""
    msgs = turn("p" * 80_000)
    v = view_of(msgs, chars4, ModelLimits(272_000, 128_000))
    v.last_usage = Usage(input=reported, output=0)
    actions = resolve("codex:preset=current").create().before_step(v)
    assert bool(actions) is fires
    if fires:
        (c,) = actions
        assert isinstance(c, Compact) and c.request is not None
        assert [getattr(x, "id", "summary") for x in c.new_view] == ["u1", "summary", "dev", "agents", "u2"]
        assert "u2" not in [m.id for m in c.request.source]


def test_a_pre_turn_check_does_not_see_the_new_prompt_as_a_boundary(chars4: TokenCounter) -> None:
    """The reasoning of the turn that just ended becomes "earlier" only once the new prompt is recorded."""
    msgs = [user("u1"), reasoning("a1", 4_000), user("u2")]  # 588 tokens of reasoning before u2
    v = view_of(msgs, chars4, ModelLimits(272_000, 128_000))
    v.last_usage = Usage(input=244_800 - 588, output=0)
    assert resolve("codex:preset=current").create().before_step(v) == ()
    c = Codex(CodexParams(reasoning_items="per-item"))
    assert c.reasoning_tokens(v) == 588 and c.reasoning_tokens(v, upto=2) == 0


def test_current_templates_differ_from_the_seed_as_the_source_does() -> None:
    assert "use the information in this summary to  assist with" in CURRENT_SUMMARY_PREFIX
    assert CURRENT_COMPACT_PROMPT.startswith(COMPACT_PROMPT.split("\n")[0] + "\n\nInclude:\n- Goal / user objective\n")
    assert CURRENT_COMPACT_PROMPT.endswith("seamlessly continue the work.\n")
    assert len(CURRENT_SUMMARY_PREFIX) == 400  # templates/compact/summary_prefix.md, no final newline


def test_resolve_parses_params() -> None:
    c = resolve("codex:preset=current,auto_compact_token_limit=150_000,user_message_max_tokens=10,"
                "effective_window_percent=90")
    p = c.params
    assert isinstance(p, CodexParams)
    assert (p.auto_compact_token_limit, p.user_message_max_tokens, p.effective_window_percent) == (150_000, 10, 90)
    assert (p.per_model_limits, p.count_pending_items) == (False, True)
    assert resolve("codex:preset=seed,auto_compact_token_limit=none").params.auto_compact_token_limit is None
    assert resolve("codex:preset=seed").params == CodexParams()


# --- encrypted reasoning of earlier turns (0.77: "sum", today: "per-item") ---------------------------------


def reasoning(id: str, blob_len: int) -> Message:
    from compbench.data.transcript import Reasoning

    return Message(id, "assistant", (Reasoning("A" * blob_len, encrypted=True), Text(f"done {id}")))


def test_reasoning_estimate_sums_items_before_the_last_user_message(chars4: TokenCounter) -> None:
    # blob 4,000 bytes: 4,000 * 3 / 4 - 650 = 2,350 bytes; blob 1,001: 750 - 650 = 100; blob 800: 0
    env = Message("env", "user", (Text("<environment_context>\n  <cwd>/r</cwd>\n</environment_context>"),))
    msgs = [user("u1"), reasoning("a1", 4_000), reasoning("a2", 1_001), reasoning("a3", 800),
            user("u2"), reasoning("a4", 9_000)]  # a4 is after the last user message: not counted
    v = view_of(msgs, chars4, ModelLimits(272_000, 128_000))
    assert Codex(CodexParams(reasoning_items="sum")).reasoning_tokens(v) == math.ceil(2_450 / 4) == 613
    assert Codex(CodexParams(reasoning_items="per-item")).reasoning_tokens(v) == 588 + 25 == 613
    assert Codex(CodexParams()).reasoning_tokens(v) == 0  # the seed: off
    # per item, rounding differs: 2 x 101 bytes = ceil(202 / 4) = 51 summed, 26 + 26 = 52 per item
    two = [user("u1"), reasoning("a1", 1_002), reasoning("a2", 1_002), user("u2")]
    v2 = view_of(two, chars4)
    assert Codex(CodexParams(reasoning_items="sum")).reasoning_tokens(v2) == 51
    assert Codex(CodexParams(reasoning_items="per-item")).reasoning_tokens(v2) == 52
    # today's boundary skips contextual user messages (<environment_context>); 0.77's is any user message
    v3 = view_of([*two, reasoning("a3", 4_000), env], chars4)
    assert Codex(CodexParams(reasoning_items="sum")).reasoning_tokens(v3) == math.ceil((202 + 2_350) / 4)
    assert Codex(CodexParams(reasoning_items="per-item")).reasoning_tokens(v3) == 52


def test_reasoning_estimate_follows_the_view_incrementally(chars4: TokenCounter) -> None:
    """The estimate is kept per entry as the view grows and restarts after a compaction."""
    c = Codex(CodexParams(reasoning_items="sum"))
    msgs = [user("u1"), reasoning("a1", 4_000), user("u2")]
    v = view_of(msgs, chars4)
    assert c.reasoning_tokens(v) == 588
    grown = view_of([*msgs, reasoning("a2", 4_000), user("u3")], chars4)
    assert c.reasoning_tokens(grown) == 1_175  # ceil(4,700 / 4)
    compacted = view_of([user("u3")], chars4)
    compacted.compactions = 1
    assert c.reasoning_tokens(compacted) == 0


@pytest.mark.parametrize(("reported", "fires"), [(244_799 - 613, False), (244_800 - 613, True)])
def test_trigger_adds_the_reasoning_estimate(chars4: TokenCounter, reported: int, fires: bool) -> None:
    msgs = [user("u1"), reasoning("a1", 4_000), reasoning("a2", 1_001), user("u2"), assistant("a3")]
    c = Codex(CodexParams(reasoning_items="sum"))
    assert (compact_after(c, msgs, chars4, reported, window=272_000) is not None) is fires


def test_limit_uses_the_models_input_window(chars4: TokenCounter) -> None:
    """Codex's context_window for GPT-5 models is 272,000: litellm's input limit of a 400k model."""
    v = view_of([user("u1")], chars4, ModelLimits(400_000, 128_000, max_input=272_000))
    assert Codex(CodexParams()).limit(v) == resolve("codex:preset=0.77").create().limit(v) == 244_800  # type: ignore[attr-defined]


def test_presets_for_0_77_and_today() -> None:
    p077, cur = resolve("codex:preset=0.77").params, resolve("codex:preset=current").params
    assert isinstance(p077, CodexParams) and isinstance(cur, CodexParams)
    assert (p077.reasoning_items, p077.count_pending_items) == ("sum", False)
    assert (cur.reasoning_items, cur.count_pending_items) == ("per-item", True)
    from compbench.errors import UsageError

    with pytest.raises(UsageError, match="reasoning_items='sometimes' is not one of off, sum, per-item"):
        resolve("codex:preset=seed,reasoning_items=sometimes")
    with pytest.raises(ValueError, match="reasoning_items"):
        Codex(CodexParams(reasoning_items="sometimes"))  # type: ignore[arg-type]


def test_manual_compact_is_the_same_rebuild(chars4: TokenCounter) -> None:
    msgs = long_session()
    c = Codex(CodexParams()).manual(view_of(msgs, chars4))
    auto = compact_after(Codex(CodexParams()), msgs, chars4, 180_000)
    assert auto is not None and c.reason == "manual" and c.new_view == auto.new_view
