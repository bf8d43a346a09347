"""aider (Aider-AI/aider 5dc9490bb35f): the history budget, messages counted as their JSON, the history moved and
checked only after a reply that edited files, its summary used as real logs show (preset=snapshot-race drops it,
the reading of summarize_end's check), summarize_all as its manual summary, the tail under half the budget, the
head summarized by the weak model, the recursion, "Ok.", the emptied history on failure."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from compbench.data.transcript import Message, Text, ToolCall, Transcript, Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits, SessionView
from compbench.strategies import resolve
from compbench.strategies.aider import DROPPED, OK, SUMMARIZE, SUMMARY_PREFIX, Aider, AiderParams, edits_files
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of

EDITED = {"edited": True}


def msg(id: str, role: str, tokens: int, **meta: object) -> Message:
    """A message whose JSON (what aider counts) is exactly ``tokens`` chars4 tokens (at least 9)."""
    aider_role = "assistant" if role == "assistant" else "user"
    n = 4 * tokens - len(json.dumps({"role": aider_role, "content": ""}))
    assert n >= 0
    return Message(id, role, (Text(id[0] * n),), None, meta)  # type: ignore[arg-type]


def history(*sizes: int) -> list[Message]:
    """Alternating user/assistant messages m0, m1, ... of these JSON token sizes (chars4, no overhead)."""
    return [msg(f"{'u' if k % 2 == 0 else 'a'}{k}", "user" if k % 2 == 0 else "assistant", n)
            for k, n in enumerate(sizes)]


def view(messages: list[Message], counter: TokenCounter, window: int = 100_000) -> SessionView:
    return view_of(messages, counter, ModelLimits(window, 1_000))


def edited(messages: list[Message]) -> list[Message]:
    """The last reply edited files (aider moves the exchange into its history after it)."""
    last = messages[-1]
    return [*messages[:-1], Message(last.id, last.role, last.parts, last.usage, {**last.meta, **EDITED})]


def act(messages: list[Message], counter: TokenCounter, budget: float = 100, **kw: int) -> Compact | None:
    out = Aider(AiderParams(max_chat_history_tokens=budget, **kw)).after_step(  # type: ignore[arg-type]
        view(edited(messages), counter), Usage())
    assert len(out) <= 1
    return out[0] if out else None  # type: ignore[return-value]


@pytest.mark.parametrize(("window", "budget"), [(16_000, 1_024), (32_000, 2_000), (131_072, 8_192), (200_000, 8_192)])
def test_budget_is_max_input_over_16_between_1k_and_8k(chars4: TokenCounter, window: int, budget: float) -> None:
    assert Aider(AiderParams()).budget(view([], chars4, window)) == budget


@pytest.mark.parametrize(("last", "acts"), [(9, False), (10, False), (11, True)])
def test_summarizes_when_the_history_exceeds_the_budget(chars4: TokenCounter, last: int, acts: bool) -> None:
    assert (act(history(30, 30, 30, 30, 30, last), chars4, budget=160) is not None) is acts  # 150 + last vs 160


def test_messages_are_counted_as_their_json(chars4: TokenCounter) -> None:
    """``token_count`` of a dict counts ``json.dumps`` of it: quotes, escapes and non-ASCII as \\uXXXX."""
    ascii_ = Message("a", "user", (Text("e" * 80),))
    accented = Message("b", "user", (Text("é" * 80),))
    v = view([ascii_, accented], chars4)
    a = Aider(AiderParams())
    wrapper = len('{"role": "user", "content": ""}')  # 31 characters around the text
    assert [a.tokens(v, e) for e in v.entries] == [-(-(wrapper + 80) // 4), -(-(wrapper + 6 * 80) // 4)] == [28, 128]
    assert [e.tokens for e in v.entries] == [20, 20]  # the text alone: what the view holds
    # at, below and above the budget, by the JSON count: 128 tokens of "é" text weigh 775 (+ 10 for "done")
    over = [Message("u", "user", (Text("é" * 511),)), Message("r", "assistant", (Text("done"),), meta=EDITED)]
    for budget, acts in ((784, True), (785, False), (786, False)):
        out = Aider(AiderParams(max_chat_history_tokens=budget)).after_step(view(over, chars4), Usage())
        assert bool(out) is acts, budget


def test_only_a_reply_that_edited_files_moves_the_exchange_into_the_history(chars4: TokenCounter) -> None:
    big = history(60, 60, 60, 60, 60, 60)
    a = Aider(AiderParams(max_chat_history_tokens=100))
    assert a.after_step(view(big, chars4), Usage()) == ()  # /ask-like: cur_messages only, never summarized
    (c,) = a.after_step(view(edited(big), chars4), Usage())
    assert isinstance(c, Compact) and c.request is not None and len(c.request.source) == 6  # all of it moved


@pytest.mark.parametrize(("call", "edits"), [
    (ToolCall("c", "Edit", "{}"), True), (ToolCall("c", "apply_patch", "{}"), True),
    (ToolCall("c", "write_to_file", "{}"), True),
    (ToolCall("c", "developer__text_editor", '{"command": "str_replace"}'), True),
    (ToolCall("c", "developer__text_editor", '{"command": "view"}'), False), (ToolCall("c", "Read", "{}"), False),
    (ToolCall("c", "bash", '{"cmd": "sed -i s/a/b/ x"}'), False)])
def test_which_replies_edited_files_in_other_tools_logs(call: ToolCall, edits: bool) -> None:
    assert edits_files(Message("a", "assistant", (Text("ok"), call))) is edits
    assert edits_files(Message("a", "assistant", (Text("ok"),), meta={"edited_files": ["x.py"]}))


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


@pytest.mark.parametrize("sizes", [(60, 60, 60, 60), (60, 10, 10, 10, 10, 60)])
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
        out += [msg(f"u{k}", "user", 10), msg(f"a{k}", "assistant", 10, **EDITED)]
    return out


def test_the_snapshot_race_preset_pays_for_the_summary_and_drops_it(chars4: TokenCounter) -> None:
    """The code's reading: the edit note appended after the summarizer's snapshot, summarize_end drops the
    summary. The history grows on; every edit pays the weak model."""
    summ = MockSummarizer("s")
    tr = run(transcript(*steps(6)), resolve("aider:preset=snapshot-race,max_chat_history_tokens=100").create(), chars4,
             summarizer=summ)
    assert tr.compactions and all(not c.ok and c.error == DROPPED for c in tr.compactions)
    assert all(c.summarizer_input > 0 for c in tr.compactions) and len(summ.requests) == len(tr.compactions)
    none = run(transcript(*steps(6)), resolve("none").create(), chars4)
    assert [s.input for s in tr.steps] == [s.input for s in none.steps]


def test_preset_0_71_applies_it_and_goes_one_level_deeper(chars4: TokenCounter) -> None:
    big = MockSummarizer("s" * 360)  # 90 tokens + the prefix: with any tail over a 100 budget
    spec = "aider:preset=0.71,max_chat_history_tokens=100"
    tr = run(transcript(*steps(6)), resolve(spec).create(), chars4, summarizer=big)
    depths = [c.meta["depth"] for c in tr.compactions]
    assert depths[:2] == [0, 1] and all(c.phase == "after" and c.ok for c in tr.compactions)
    assert tr.compactions[1].step == tr.compactions[0].step  # in the same moment, before the next request
    small = MockSummarizer("s")
    tr = run(transcript(*steps(6)), resolve(spec).create(), chars4, summarizer=small)
    assert {c.meta["depth"] for c in tr.compactions} == {0}


@pytest.mark.parametrize(("depth", "summarized"), [(3, 6), (4, 8)])
def test_depth_beyond_three_summarizes_everything(chars4: TokenCounter, depth: int, summarized: int) -> None:
    v = view(history(20, 20, 20, 20, 20, 20, 20, 20), chars4)
    c = Aider(AiderParams(max_chat_history_tokens=100)).summarize(v, list(v.entries), depth)
    assert c is not None and c.request is not None and len(c.request.source) == summarized


def test_a_failed_summary_empties_the_history_only_where_it_is_used(chars4: TokenCounter) -> None:
    down = MockSummarizer(error="weak model down")
    tr = run(transcript(system(), *steps(6)), resolve("aider:preset=0.71,max_chat_history_tokens=100").create(),
             chars4, summarizer=down)
    assert [(c.reason, c.ok) for c in tr.compactions[:2]] == [
        ("aider: chat history summary (depth 0)", False), ("aider: summary failed, history emptied", True)]
    assert tr.compactions[1].kept_ids == ("sys",)
    race = resolve("aider:preset=snapshot-race,max_chat_history_tokens=100")
    tr = run(transcript(system(), *steps(6)), race.create(), chars4, summarizer=MockSummarizer(error="weak model down"))
    assert tr.compactions and all(c.reason.startswith("aider: chat history summary") for c in tr.compactions)


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


def test_the_summary_is_used_as_real_logs_show(chars4: TokenCounter) -> None:
    """The default uses the summary (aider up to 0.71; an assumption for later versions, see the strategy's
    docstring): later requests are smaller than without it."""
    tr = run(transcript(*steps(8)), resolve("aider:max_chat_history_tokens=100").create(), chars4,
             summarizer=MockSummarizer("s"))
    assert tr.compactions and all(c.ok for c in tr.compactions)
    none = run(transcript(*steps(8)), resolve("none").create(), chars4)
    assert tr.steps[-1].input < none.steps[-1].input


def test_manual_is_summarize_all_with_no_tail_and_no_ok(chars4: TokenCounter) -> None:
    v = view([system(), *history(20, 20, 20, 20)], chars4)
    c = resolve("aider").create().manual(v)
    assert c is not None and c.request is not None and [m.id for m in c.request.source] == ["u0", "a1", "u2", "a3"]
    assert c.new_view == (Keep("sys"), Insert("user", SUMMARY_PREFIX, with_summary=True, origin="summary"))


def test_a_log_with_summaries_and_no_edit_says_the_strategy_cannot_act() -> None:
    """aider summarizes after a reply that edited files; a log that shows summaries and marks no such reply
    leaves the strategy nothing to act on: the run's preset_source says so, not a silent "never compacted"."""
    from compbench.data.transcript import RecordedCompaction
    from compbench.strategies.aider import TOOL

    summary = RecordedCompaction(index=3, tool="aider", trigger="auto", summary="s")
    t = Transcript("t", "aider", (user("u0"), assistant("a1"), user("s"), assistant("a2")), {}, (summary,))
    preset, why = TOOL.preset_for(t, ["0.71", "snapshot-race"])
    assert preset is None and "1 automatic summary but marks no reply as editing files" in why
    edited = replace(t, messages=(user("u0"), replace(assistant("a1"), meta={"edited": True}), user("s"),
                                  assistant("a2")))
    assert "cannot act" not in TOOL.preset_for(edited, ["0.71", "snapshot-race"])[1]
    manual = replace(t, compactions=(replace(summary, trigger="manual"),))  # a chat-mode switch: no edit needed
    assert "cannot act" not in TOOL.preset_for(manual, ["0.71", "snapshot-race"])[1]


def test_the_default_applies_the_summary_as_the_logs_show_both_presets_kept(chars4: TokenCounter) -> None:
    """The race (module doc): the shipped check keeps a summary only when the main thread's note lands before the
    worker's snapshot; the logs show summaries applied, so the default applies them and snapshot-race drops them."""
    default = run(transcript(*steps(10)), resolve("aider:max_chat_history_tokens=100").create(), chars4,
                  summarizer=MockSummarizer("s"))
    applied = run(transcript(*steps(10)), resolve("aider:preset=0.71,max_chat_history_tokens=100").create(), chars4,
                  summarizer=MockSummarizer("s"))
    dropped = run(transcript(*steps(10)), resolve("aider:preset=snapshot-race,max_chat_history_tokens=100").create(),
                  chars4, summarizer=MockSummarizer("s"))
    assert default.compactions and all(c.ok for c in default.compactions)
    assert [s.input for s in default.steps] == [s.input for s in applied.steps]
    assert default.steps[-1].input < dropped.steps[-1].input and not any(c.ok for c in dropped.compactions)
