"""goose (block/goose 9a91fccf): the 0.8 trigger at a new prompt, the overflow path, the summary request
(compaction.md as the system prompt), middle-out removal of tool responses, the new context."""

from __future__ import annotations

import json

import pytest

from compbench.data.transcript import Media, Message, Reasoning, Text, ToolCall, ToolResult, Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits, SessionView
from compbench.strategies import resolve
from compbench.strategies.goose import (
    CONVERSATION_CONTINUATION_TEXT,
    MANUAL_COMPACT_CONTINUATION_TEXT,
    SUMMARIZE_REQUEST,
    TOOL_LOOP_CONTINUATION_TEXT,
    Goose,
    GooseParams,
    filter_tool_responses,
    format_message,
)
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of


def session() -> list[Message]:
    return [system(), user("u0", "add a flag"), assistant("a1", "ok", calls=[("c1", "shell", {"cmd": "ls"})]),
            tool("t1", "c1", "cli.py"), assistant("a2", "done"), user("u2", "now the docs")]


def at(messages: list[Message], counter: TokenCounter, used: int | None, window: int = 1_000,
       seen: int = 5) -> tuple[Goose, SessionView]:
    g = Goose(GooseParams())
    g.seen = seen  # the positions before the new prompt were seen after the last step
    v = view_of(messages, counter, ModelLimits(window, 100))
    if used is not None:
        v.last_usage = Usage(input=used - 10, output=10)
    return g, v


@pytest.mark.parametrize(("used", "acts"), [(800, False), (801, True)])
def test_threshold_is_strictly_above_80_percent_at_a_new_prompt(chars4: TokenCounter, used: int, acts: bool) -> None:
    g, v = at(session(), chars4, used)
    assert bool(g.before_step(v)) is acts


def test_no_check_without_a_new_prompt_and_disabled_thresholds(chars4: TokenCounter) -> None:
    g, v = at(session(), chars4, 900, seen=6)  # u2 was already there: a tool loop, no reply start
    assert g.before_step(v) == ()
    for t in (0.0, 1.0):
        g, v = at(session(), chars4, 999)
        g.p = GooseParams(threshold=t)
        assert g.before_step(v) == ()


def test_first_request_estimates_the_visible_messages(chars4: TokenCounter) -> None:
    visible = sum(e.tokens for e in view_of(session(), chars4).entries[1:])
    g, v = at(session(), chars4, None, window=visible)
    assert g.needs_compaction(v)  # 100% > 80%
    g, v = at(session(), chars4, None, window=visible * 2)
    assert not g.needs_compaction(v)


def test_compaction_request_and_new_context(chars4: TokenCounter) -> None:
    g, v = at(session(), chars4, 900)
    (c,) = g.before_step(v)
    assert isinstance(c, Compact) and c.request is not None and c.reason == "goose: auto"
    req = c.request
    history = ("[user]: add a flag\n[assistant]: ok\ntool_request(shell): {\"cmd\":\"ls\"}\n"
               "[user]: tool_response: cli.py\n[assistant]: done\n[user]: now the docs")
    assert req.system.startswith("## Task Context\n- An llm context limit was reached")
    assert f"**Conversation History:**\n{history}\n\nWrap reasoning in `<analysis>` tags:" in req.system
    assert [m.text for m in req.prompt] == [SUMMARIZE_REQUEST] and req.meta["model"] == "fast"
    assert c.new_view == (Keep("sys"), Insert("user", with_summary=True, origin="summary"),
                          Insert("assistant", CONVERSATION_CONTINUATION_TEXT), Keep("u2"))
    assert c.on_failure == "unchanged"


def test_overflow_in_a_tool_loop_uses_the_tool_loop_text(chars4: TokenCounter) -> None:
    msgs = [*session()[:-1], assistant("a3", calls=[("c3", "shell", {})]), tool("t3", "c3", "x" * 4_000)]
    g, v = at(msgs, chars4, 10, seen=len(msgs))
    assert v.context_tokens > 1_000
    (c,) = g.before_step(v)
    assert isinstance(c, Compact) and c.reason == "goose: context length exceeded"
    assert c.new_view[2:] == (Insert("assistant", TOOL_LOOP_CONTINUATION_TEXT), Keep("u0"))


def test_manual_has_no_preserved_prompt(chars4: TokenCounter) -> None:
    g, v = at(session(), chars4, 10)
    c = g.manual(v)
    assert c is not None and c.new_view[2:] == (Insert("assistant", MANUAL_COMPACT_CONTINUATION_TEXT),)


def test_preserved_prompt_with_an_image_is_re_added_as_text(chars4: TokenCounter) -> None:
    msgs = [*session()[:-1], Message("u2", "user", (Text("look"), Media("image", "image/png")))]
    g, v = at(msgs, chars4, 900)
    (c,) = g.before_step(v)
    assert isinstance(c, Compact) and c.new_view[-1] == Insert("user", "look")


def test_format_message() -> None:
    m = Message("x", "assistant", (Reasoning("hmm"), Text("a"), Media("image", "image/png")))
    assert format_message(m) == "[assistant]: a\n[image: image/png]"
    assert format_message(Message("y", "assistant", (Reasoning("hmm"),))) == "[assistant]: <empty message>"
    assert format_message(Message("z", "tool", (ToolResult("c", "t", "out"),))) == "[user]: tool_response: out"


def tools(n: int) -> list[Message]:
    return [tool(f"t{k}", f"c{k}", str(k)) for k in range(n)]


@pytest.mark.parametrize(("percent", "removed"), [
    (0, []), (10, [4]), (20, [4, 5]), (50, [4, 5, 3, 6, 2]), (100, list(range(10)))])
def test_middle_out_removal(percent: int, removed: list[int]) -> None:
    kept = filter_tool_responses(tools(10), percent)
    assert [m.id for m in kept] == [f"t{k}" for k in range(10) if k not in removed]


def test_retries_drop_tool_responses_until_the_request_fits(chars4: TokenCounter) -> None:
    msgs = [user("u0", "go")]
    for k in range(10):
        msgs += [assistant(f"a{k}", calls=[(f"c{k}", "shell", {})]), tool(f"t{k}", f"c{k}", "o" * 400)]
    msgs.append(user("u9", "next"))
    g, v = at(msgs, chars4, 3_000, window=3_000, seen=len(msgs) - 1)
    (c,) = g.before_step(v)  # all ten outputs (1,000 tokens) + the template (455) do not fit 1,200 tokens
    assert isinstance(c, Compact) and c.request is not None
    v.limits = ModelLimits(1_200, 100)
    g.seen = len(msgs) - 1
    (c,) = g.before_step(v)
    assert isinstance(c, Compact) and c.request is not None
    assert c.request.meta["removed_percent"] == 50 and len([m for m in c.request.source if m.role == "tool"]) == 5
    v.limits = ModelLimits(400, 100)
    g.seen = len(msgs) - 1
    assert g.before_step(v) == ()  # even without any tool response too long: Goose gives up the reply


def turns(n: int, size: int, calls: int = 3) -> list[Message]:
    msgs: list[Message] = []
    for turn in range(n):
        msgs.append(user(f"p{turn}", f"task number {turn}"))
        for k in range(calls):
            msgs += [assistant(f"a{turn}{k}", calls=[(f"c{turn}{k}", "shell", {})]),
                     tool(f"t{turn}{k}", f"c{turn}{k}", "o" * size)]
        msgs.append(assistant(f"r{turn}", "done"))
    return msgs


def test_replay_compacts_at_prompts_and_keeps_the_prompt(chars4: TokenCounter) -> None:
    summ = MockSummarizer("S")
    tr = run(transcript(*turns(20, 400)), resolve("goose:preset=seed").create(), chars4, window=1_500, max_output=100,
             summarizer=summ)
    assert tr.compactions and all(c.ok for c in tr.compactions)
    auto = [c for c in tr.compactions if c.reason == "goose: auto"]
    assert auto and all(c.kept_ids[-1].startswith("p") for c in auto)  # the new prompt, kept as it was
    folded = [r for r in summ.requests if r.meta.get("kind") != "tool-pair"][1]
    assert folded.source[0].text == "S"  # the next summary folds the previous one


def call_only(mid: str, cid: str, args: dict[str, object]) -> Message:
    """An assistant message of one tool call, as Goose stores each call."""
    return Message(mid, "assistant", (ToolCall(cid, "shell", json.dumps(args)),))


def goose_at(entries: list[Message], chars4: TokenCounter, **kw: object) -> tuple[Goose, SessionView]:
    g = Goose(GooseParams(**kw))  # type: ignore[arg-type]
    v = view_of(entries, chars4, ModelLimits(100_000, 100))
    g.seen = len(entries)
    return g, v


@pytest.mark.parametrize(("visible", "chosen"), [(10, None), (11, "c0"), (12, "c0")])
def test_the_oldest_call_is_chosen_past_the_cutoff_of_ten(chars4: TokenCounter, visible: int,
                                                          chosen: str | None) -> None:
    msgs = [user("p", "go")]
    for k in range(visible):
        msgs += [call_only(f"a{k}", f"c{k}", {"n": k}), tool(f"t{k}", f"c{k}", f"out {k}")]
    g, v = goose_at(msgs, chars4)
    assert g.before_step(v) == ()  # chosen now, summarized while the model answers: nothing happens yet
    assert (g.pending[0].call if g.pending else None) == chosen
    g, v = goose_at(msgs, chars4, tool_pairs=False)
    g.before_step(v)
    assert g.pending == []


def test_the_pair_is_replaced_by_its_summary_when_the_turn_is_over(chars4: TokenCounter) -> None:
    msgs = [user("p", "go")]
    for k in range(11):
        msgs += [call_only(f"a{k}", f"c{k}", {"n": k}), tool(f"t{k}", f"c{k}", f"out {k}")]
    g, v = goose_at(msgs, chars4)
    g.before_step(v)
    g.after_step(v, Usage())
    (c,) = g.before_step(v)  # the next turn: the last one's pair is applied first
    assert isinstance(c, Compact) and c.reason == "goose: tool-pair summary" and c.meta["call"] == "c0"
    assert c.request is not None and c.request.system.startswith("Your task is to summarize a tool call & response")
    assert [m.text for m in c.request.prompt] == ['[assistant]: tool_request(shell): {"n":0}\n[user]: tool_response: '
                                                  'out 0']
    assert c.request.meta == {"model": "fast", "kind": "tool-pair"} and c.request.max_output_tokens == 64
    kept = [s.id for s in c.new_view if isinstance(s, Keep)]
    assert "a0" not in kept and "t0" not in kept and kept[:2] == ["p", "a1"]
    assert c.new_view[-1] == Insert("user", with_summary=True, origin="summary", meta={"kind": "tool-pair"})


def test_a_prompt_that_came_after_the_turn_follows_the_pair_summary_and_shared_messages_are_cleared(
        chars4: TokenCounter) -> None:
    msgs = [user("p", "go"), assistant("a0", "reading both", calls=[("c0", "view", {"f": "a"}), ("x", "view", {})]),
            tool("t0", "c0", "A"), tool("tx", "x", "X")]
    for k in range(1, 11):
        msgs += [call_only(f"a{k}", f"c{k}", {}), tool(f"t{k}", f"c{k}", "o")]
    g, v = goose_at(msgs, chars4)
    g.before_step(v)
    v = view_of([*msgs, user("p2", "next task")], chars4, ModelLimits(100_000, 100))
    (c,) = g.before_step(v)
    assert isinstance(c, Compact)
    assert c.new_view[-2:] == (Insert("user", with_summary=True, origin="summary", meta={"kind": "tool-pair"}),
                               Keep("p2"))
    assert Keep("a0") in c.new_view and Keep("t0") not in c.new_view  # a0 holds another call: kept, c0 cleared
    assert c.prune == (("a0", 1, "{}"),)


def test_at_a_new_prompt_the_pair_comes_first_then_the_compaction(chars4: TokenCounter) -> None:
    """agent.rs: the last turn's pair is stored when the turn ends; ``reply`` checks 0.8 at the next prompt."""
    msgs = [*turns(1, 200, calls=11), user("p1", "next"), assistant("r1", "ok")]
    summ = MockSummarizer("S")
    strategy = resolve("goose:preset=seed").create()
    tr = run(transcript(*msgs), strategy, chars4, window=700, max_output=50, summarizer=summ)
    at_prompt = [(c.step, c.reason) for c in tr.compactions if c.step == 12]
    assert at_prompt == [(12, "goose: tool-pair summary"), (12, "goose: auto")]
    auto = next(r for r in summ.requests if r.meta.get("kind") != "tool-pair")
    assert "[user]: S" in auto.system  # the pair's summary is in what the compaction summarizes


def test_tool_pairs_keep_the_context_under_the_threshold_longer(chars4: TokenCounter) -> None:
    """Goose's always-on mechanism changes when its 0.8 compaction fires: here it never has to."""
    msgs = turns(20, 200)
    without = run(transcript(*msgs), resolve("goose:preset=no-tool-pairs").create(), chars4, window=1_500,
                  max_output=100, summarizer=MockSummarizer("S"))
    with_pairs = run(transcript(*msgs), resolve("goose:preset=seed").create(), chars4, window=1_500, max_output=100,
                     summarizer=MockSummarizer("S"))
    assert [c.reason for c in without.compactions] == ["goose: auto"] * 2
    reasons = {c.reason for c in with_pairs.compactions}
    assert reasons == {"goose: tool-pair summary"} and len(with_pairs.compactions) > 40
    assert max(s.input for s in with_pairs.steps) < 0.8 * 1_500


def test_a_pair_inside_shared_messages_is_cleared_in_place_and_its_summary_added(chars4: TokenCounter) -> None:
    """Other tools put several calls in one message: nothing is hidden whole, the pair's parts are cleared (a
    compaction that only clears kept messages' parts and adds a summary is no no-op)."""
    msgs: list[Message] = [user("p", "go")]
    for k in range(7):
        msgs += [assistant(f"a{k}", calls=[(f"c{k}x", "shell", {"k": k}), (f"c{k}y", "shell", {"k": k})]),
                 Message(f"t{k}", "tool", (ToolResult(f"c{k}x", "shell", "x" * 80),
                                           ToolResult(f"c{k}y", "shell", "y")))]
    msgs.append(assistant("r", "done"))
    strategy = resolve("goose:preset=seed").create()
    tr = run(transcript(*msgs), strategy, chars4, window=100_000, summarizer=MockSummarizer("S"))
    (first, *_) = [c for c in tr.compactions if c.reason == "goose: tool-pair summary"]
    assert first.ok and first.replaced_ids == () and first.meta["call"] == "c0x"
    assert first.tokens_after < first.tokens_before  # c0x's 80-character output cleared, a one-word summary added


@pytest.mark.parametrize(("window", "threshold", "cutoff"), [
    (128_000, 0.8, 15), (200_000, 0.8, 24), (1_000_000, 0.8, 120), (50_000, 0.8, 10), (10_000_000, 0.8, 500),
    (200_000, 0.3, 10), (1_000_000, 0.5, 75), (200_000, 0.0, 24), (200_000, 1.5, 24)])
def test_the_cutoff_scales_with_the_window_from_7938(chars4: TokenCounter, window: int, threshold: float,
                                                     cutoff: int) -> None:
    """compute_tool_call_cutoff (aaif-goose 006bd233): clamp(3 * floor(W * thr) / 20,000, 10, 500), a threshold
    outside (0, 1] read as 0.8; GOOSE_TOOL_CALL_CUTOFF, when set, wins."""
    g = resolve(f"goose:preset=2026-03-16,threshold={threshold}").create()
    v = view_of([user("p", "go")], chars4, ModelLimits(window, 100))
    assert isinstance(g, Goose) and g.cutoff(v) == cutoff
    assert resolve("goose:preset=2026-03-16,tool_call_cutoff=7").create().cutoff(v) == 7  # type: ignore[attr-defined]


def pairs_then_turn(before: int, turn: int) -> list[Message]:
    msgs = [user("p0", "go")]
    msgs += [m for k in range(before) for m in (call_only(f"a{k}", f"c{k}", {"n": k}), tool(f"t{k}", f"c{k}", "o"))]
    msgs.append(user("p1", "and now this"))
    msgs += [m for k in range(before, before + turn)
             for m in (call_only(f"a{k}", f"c{k}", {"n": k}), tool(f"t{k}", f"c{k}", "o"))]
    return msgs


@pytest.mark.parametrize(("before", "turn", "chosen"), [(12, 3, 0), (13, 3, 10), (13, 0, 10), (12, 9, 0)])
def test_batches_of_ten_spare_the_current_turn(chars4: TokenCounter, before: int, turn: int, chosen: int) -> None:
    """tool_ids_to_summarize: the calls before this turn must exceed cutoff + 10 (here 2 + 10); then the oldest 10."""
    g, v = goose_at(pairs_then_turn(before, turn), chars4, tool_call_cutoff=2, batch=10)
    g.before_step(v)
    assert [p.call for p in g.pending] == [f"c{k}" for k in range(chosen)]


def test_a_batch_is_applied_pair_by_pair_when_the_turn_ends(chars4: TokenCounter) -> None:
    msgs = [*pairs_then_turn(13, 1), assistant("end", "done")]
    tr = run(transcript(*msgs), resolve("goose:preset=2026-03-16,tool_call_cutoff=2").create(), chars4,
             window=200_000)
    pairs = [c for c in tr.compactions if c.meta.get("kind") == "tool-pair"]
    assert len(pairs) == 10 and all(c.ok for c in pairs) and len({c.step for c in pairs}) == 1
    one = run(transcript(*msgs), resolve("goose:preset=seed,tool_call_cutoff=2").create(), chars4, window=200_000)
    steps = [c.step for c in one.compactions if c.meta.get("kind") == "tool-pair"]
    assert len(steps) == len(set(steps)) > 1  # the 2026-01-28 build: one pair per turn of the loop


@pytest.mark.parametrize(("version", "preset"), [
    ("session of 2026-01-27", "2025"), ("session of 2026-01-28", "seed"), ("session of 2026-02-25", "seed"),
    ("session of 2026-02-26", "2026-02-26"), ("session of 2026-03-15", "2026-02-26"),
    ("session of 2026-03-16", "2026-03-16"), ("1.9.0", "seed")])
def test_the_build_is_chosen_from_the_sessions_date(version: str, preset: str) -> None:
    from compbench.strategies.goose import version_preset

    assert version_preset(version) == preset
