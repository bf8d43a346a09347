"""pi, ``preset=current`` (pi-mono 83378aad): the threshold checked at the end of a run and before a new
prompt, compaction and retry on a provider overflow, ``findCutPoint`` (user or assistant, moving forward),
the split turn's two requests, the UPDATE prompt and the file lists."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from compbench.data.transcript import Message, Text, Transcript, Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.events import CompactionEvent
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits, SessionView, SummaryRequest
from compbench.strategies import resolve
from compbench.strategies.pi import Pi, current_cut
from compbench.strategies.pi_summary import (
    CURRENT_PREFIX,
    NO_PRIOR_HISTORY,
    SPLIT_TURN_JOINER,
    SUMMARIZATION_PROMPT,
    SUMMARIZATION_SYSTEM_PROMPT,
    TURN_PREFIX_PROMPT,
    UPDATE_PROMPT,
)
from compbench.summarizers import SummaryResult
from compbench.summarizers.mock import MockSummarizer
from helpers import applied, assistant, run, system, tool, transcript, user, view_of

RESERVE = 16_384
WINDOW = ModelLimits(128_000, 4_096)
OVER = Usage(input=128_000 - RESERVE, output=1)


def current(**overrides: object) -> Pi:
    spec = "pi:preset=current" + "".join(f",{k}={v}" for k, v in overrides.items())
    p = resolve(spec).create()
    assert isinstance(p, Pi)
    return p


def ended(messages: Sequence[Message], counter: TokenCounter, usage: Usage = OVER,
          limits: ModelLimits = WINDOW) -> SessionView:
    """The view before the next call: ``messages`` and the last call's usage."""
    v = view_of(messages, counter, limits)
    v.last_usage = usage
    return v


def turn_view() -> list[Message]:
    # estimates: sys 6, u1 10, a1 8, t1 5, a1b 9, t2 1, u2 2, a2 3
    return [system("sys"), user("u1", "x" * 40), assistant("a1", "y" * 8, [("c1", "read", {"path": "/src/a.py"})]),
            tool("t1", "c1", "z" * 20, "read"), assistant("a1b", "w" * 12, [("c2", "edit", {"path": "/src/b.py"})]),
            tool("t2", "c2", "ok", "edit"), user("u2", "q" * 8), assistant("a2", "r" * 12)]


# --- when: the end of a run, a new prompt, an overflow ----------------------------------------------------


def test_threshold_is_checked_when_a_run_has_ended_and_a_prompt_arrives(chars4: TokenCounter) -> None:
    p = current(keep_recent_tokens=10)
    assert p.after_step(view_of(turn_view(), chars4), OVER) == ()  # never after a message
    assert p.before_step(ended(turn_view(), chars4)) == ()  # the run goes on (no new prompt)
    (c,) = p.before_step(ended([*turn_view(), user("u3", "next")], chars4))
    assert isinstance(c, Compact) and c.reason.startswith("agent_end")
    # the compaction is of the session before the prompt, which is kept after it: a2 alone is 3 < 10,
    # u2 5, t2 6, a1b 15 >= 10 -> a1b (the prompt's 1 would have moved the cut to u2)
    assert c.new_view[2:] == (Keep("a1b"), Keep("t2"), Keep("u2"), Keep("a2"), Keep("u3"))


def test_a_user_message_after_a_tool_result_is_steering_inside_the_run(chars4: TokenCounter) -> None:
    steer = [*turn_view()[:4], user("u-steer", "use b.py instead")]
    assert current().before_step(ended(steer, chars4)) == ()
    aborted = [*turn_view()[:3], user("u-again", "stop, do this")]  # an assistant cut short: the run ended
    assert current().before_step(ended(aborted, chars4))


@pytest.mark.parametrize(("input_tokens", "fires"), [(128_000 - RESERVE - 2, False), (128_000 - RESERVE - 1, False),
                                                      (128_000 - RESERVE, True)])
def test_threshold_just_below_equal_above(chars4: TokenCounter, input_tokens: int, fires: bool) -> None:
    v = ended([*turn_view(), user("u3")], chars4, Usage(input=input_tokens, output=1))
    assert bool(current().before_step(v)) is fires  # contextTokens > contextWindow - reserveTokens


def test_threshold_is_on_the_context_window_and_overflow_on_the_input_limit(chars4: TokenCounter) -> None:
    """``shouldCompact`` takes ``model.contextWindow``; the overflow is the provider refusing a prompt
    over its input limit."""
    limits = ModelLimits(200_000, 32_000, max_input=100_000)
    prompt = [*turn_view(), user("u3")]
    assert current().before_step(ended(prompt, chars4, Usage(input=150_000), limits)) == ()
    assert current().before_step(ended(prompt, chars4, Usage(input=183_617), limits))
    v = ended(turn_view(), chars4, Usage(input=0), limits)
    for context, fires in ((100_000, False), (100_001, True)):
        v.context_tokens = context
        assert bool(current().before_step(v)) is fires
    wide = ended(turn_view(), chars4, Usage(input=0), ModelLimits(200_000, 32_000))
    wide.context_tokens = 100_001
    assert current().before_step(wide) == ()
    wide.context_tokens = 200_001
    (c,) = current().before_step(wide)
    assert isinstance(c, Compact) and c.reason.startswith("context overflow")
    assert current(overflow_retry="false").before_step(wide) == ()


def test_a_usage_older_than_the_last_compaction_is_not_checked(chars4: TokenCounter) -> None:
    p = current()
    v = view_of(turn_view(), chars4)
    p.after_step(v, OVER)  # the usage is reported ...
    later = ended([*turn_view(), user("u3")], chars4)
    later.compactions = 1  # ... then a /compact applied before the prompt
    assert p.before_step(later) == ()


def test_a_single_turn_compacts_only_when_the_provider_refuses(chars4: TokenCounter) -> None:
    msgs: list[Message] = [user("u1", "fix it")]
    for k in range(30):
        msgs += [assistant(f"a{k}", "a" * 392, [(f"c{k}", "bash", {})]), tool(f"t{k}", f"c{k}", "o" * 3_600)]
    tr = run(transcript(*msgs), current(keep_recent_tokens=2_000), chars4, window=RESERVE + 6_000,
             summarizer=MockSummarizer("S"))
    assert tr.compactions and all(e.reason.startswith("context overflow") and e.phase == "before"
                                  for e in tr.compactions)
    assert not any(s.overflow for s in tr.steps)  # each refused call was retried on the compacted view


# --- where: findCutPoint ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("keep", "first_kept"), [(5, "u2"), (6, "u2"), (7, "a1b")])
def test_keep_recent_tokens_is_reached_at_equality(chars4: TokenCounter, keep: int, first_kept: str) -> None:
    # walk back a2 3, u2 5, t2 6: >= 6 at t2, the first cut point at or after it is u2; a strict > goes on
    # to a1b (15) and cuts there
    v = view_of(turn_view(), chars4)
    assert v.entries[current_cut(v.entries, 1, len(v.entries), keep)].id == first_kept


def test_cuts_at_an_assistant_and_summarizes_the_split_turn(chars4: TokenCounter) -> None:
    (c,) = current(keep_recent_tokens=10).before_step(ended([*turn_view(), user("u3", "n")], chars4))
    assert isinstance(c, Compact)
    assert c.new_view[2:6] == (Keep("a1b"), Keep("t2"), Keep("u2"), Keep("a2"))  # a1b: never a tool result
    ins = c.new_view[1]
    assert isinstance(ins, Insert) and ins.before == CURRENT_PREFIX == (
        "The conversation history before this point was compacted into the following summary:\n\n<summary>\n")
    # the edit of /src/b.py is in the kept part: only the read is reported
    assert ins.after == "\n\n<read-files>\n/src/a.py\n</read-files>\n</summary>"
    assert c.meta == {"kept_messages": 5, "split_turn": True, "read_files": ["/src/a.py"], "modified_files": []}
    # the whole summarized span is the turn's prefix: compact() puts "No prior history." in the history's place
    assert c.request is None and c.summary_text == NO_PRIOR_HISTORY == "No prior history."
    (f,) = c.followups
    assert f.joiner == SPLIT_TURN_JOINER == "\n\n---\n\n**Turn Context (split turn):**\n\n"
    req = f.request
    assert req.system == SUMMARIZATION_SYSTEM_PROMPT and len(req.prompt) == 1 and req.previous_summary is None
    convo = ("[User]: " + "x" * 40 + "\n\n[Assistant]: yyyyyyyy\n\n"
             '[Assistant tool calls]: read(path="/src/a.py")\n\n[Tool result]: ' + "z" * 20)
    assert req.prompt[0].text == f"<conversation>\n{convo}\n</conversation>\n\n" + TURN_PREFIX_PROMPT
    assert req.max_output_tokens == 8_192  # generateTurnPrefixSummary: floor(0.5 * 16384)
    assert [m.id for m in req.source] == ["u1", "a1", "t1"]


def split_turn_transcript() -> Transcript:
    # chars4, no overhead: u0 100, a0 100, u1 100, a1 107 (a read call), t1 100, a1b 100, u2 100, a2 100
    return transcript(user("u0", "p" * 400), assistant("a0", "o" * 400), user("u1", "x" * 400),
                      assistant("a1", "y" * 400, [("c1", "read", {"path": "/src/a.py"})]),
                      tool("t1", "c1", "z" * 400, "read"), assistant("a1b", "w" * 400), user("u2", "q" * 400),
                      assistant("a2", "r" * 400))


def test_replay_split_turn_asks_history_and_turn_prefix_separately_and_joins_them(chars4: TokenCounter) -> None:
    sm = MockSummarizer(lambda r: "P" if r.meta.get("turn_prefix") else "H")
    tr = run(split_turn_transcript(), current(keep_recent_tokens=150), chars4, window=RESERVE + 450, summarizer=sm)
    # a1b's call reported 507 + 100 > 450; at u2 (the run ended): a1b 100, t1 200 >= 150 -> cut at a1b (t1
    # is a tool result); the turn began at u1: history u0 a0, turn prefix u1 a1 t1; u2 is kept after it
    (ev,) = tr.compactions
    assert ev.step == 3 and ev.phase == "before" and ev.ok and ev.kept_ids == ("a1b", "u2")
    history, prefix = sm.requests
    assert [m.id for m in history.source] == ["u0", "a0"] and history.max_output_tokens == 13_107
    assert history.prompt[0].text.endswith(SUMMARIZATION_PROMPT)
    assert [m.id for m in prefix.source] == ["u1", "a1", "t1"] and prefix.max_output_tokens == 8_192
    assert ev.summary == "H" + SPLIT_TURN_JOINER + "P"
    # both requests are paid for: each counted as the API would (system + prompt, and the answer)
    counted = [chars4.count_text(r.system) + chars4.count_text(r.prompt[0].text) for r in (history, prefix)]
    assert ev.summarizer_input == sum(counted) and ev.summarizer_output == 2
    assert ev.summary_budget == 13_107 + 8_192
    assert tr.final_view == ("compbench:1:0:summary", "a1b", "u2", "a2")


def test_replay_split_turn_fails_as_a_whole_when_the_turn_prefix_request_fails(chars4: TokenCounter) -> None:
    class PrefixFails(MockSummarizer):
        def summarize(self, request: SummaryRequest) -> SummaryResult:
            if request.meta.get("turn_prefix"):
                return SummaryResult("", error="HTTP 529 overloaded")
            return super().summarize(request)

    t = transcript(*split_turn_transcript().messages, user("u3", "s" * 400), assistant("a3", "e" * 400))
    tr = run(t, current(keep_recent_tokens=150), chars4, window=RESERVE + 450, summarizer=PrefixFails("H"))
    assert tr.compactions[0].error == "HTTP 529 overloaded" and not tr.compactions[0].ok
    # Promise.all rejects: nothing applied, so the next check still finds u0 in the view
    assert tr.compactions[1].ok and tr.compactions[1].replaced_ids[0] == "u0"


def test_file_lists_carry_over_and_modified_wins(chars4: TokenCounter) -> None:
    p = current(keep_recent_tokens=10)
    (first,) = p.before_step(ended([*turn_view(), user("u3", "n" * 8)], chars4))  # kept a1b .. a2, u3
    assert isinstance(first, Compact) and first.meta["read_files"] == ["/src/a.py"]
    msgs = [*turn_view()[:1], *turn_view()[4:], user("u3", "n" * 8),
            assistant("a3", "m" * 4, [("c3", "write", {"path": "/src/a.py"})]), tool("t3", "c3", "done", "write"),
            assistant("a4", "f" * 40), user("u4", "go")]
    second = ended(msgs, chars4)
    applied(second, first)  # the first compaction applied
    p.after_step(second, OVER)  # a4's usage, after it
    (c,) = p.before_step(second)
    # start after the previous kept messages (u3); a4 alone reaches 10 -> cut at a4, turn started at u3
    assert isinstance(c, Compact) and c.new_view[2:] == (Keep("a4"), Keep("u4"))
    assert c.meta["read_files"] == [] and c.meta["modified_files"] == ["/src/a.py"]
    assert c.request is None and [m.id for m in c.followups[0].request.source] == ["u3", "a3", "t3"]


def rounds(n: int) -> Transcript:
    msgs: list[Message] = []
    for k in range(1, n + 1):
        msgs += [user(f"u{k}", "u" * 400), assistant(f"a{k}", "a" * 400)]  # 100 tokens each
    return transcript(*msgs)


def test_replay_update_prompt_summarizes_only_since_the_last_compaction(chars4: TokenCounter) -> None:
    calls: list[int] = []

    def numbered(_: object) -> str:
        calls.append(1)
        return f"S{len(calls)}"

    sm = MockSummarizer(numbered)
    tr = run(rounds(6), current(keep_recent_tokens=150), chars4, window=RESERVE + 450, summarizer=sm)
    # a3 reported 600 > 450; at u4: a3 100, u3 200 >= 150 -> keep u3 a3 (and u4 after them)
    assert [(e.step, e.kept_ids) for e in tr.compactions] == [(3, ("u3", "a3", "u4")), (5, ("u5", "a5", "u6"))]
    u, a = "[User]: " + "u" * 400, "[Assistant]: " + "a" * 400
    assert sm.requests[0].prompt[0].text == (
        f"<conversation>\n{u}\n\n{a}\n\n{u}\n\n{a}\n</conversation>\n\n" + SUMMARIZATION_PROMPT)
    # pi today: u3/a3 (kept by the first compaction) are in neither summary; the previous one is updated
    assert sm.requests[1].prompt[0].text == (
        f"<conversation>\n{u}\n\n{a}\n</conversation>\n\n<previous-summary>\nS1\n</previous-summary>\n\n"
        + UPDATE_PROMPT)
    assert sm.requests[1].previous_summary == "S1"
    summary = Message("x", "user", (Text(CURRENT_PREFIX + "S1\n</summary>"),))
    assert chars4.message(summary) == 28  # 112 chars


# --- the prompt cache: pi writes its summary requests (pi-ai's default cacheRetention), reads none ------------


def cached_replay(spec: str, minimum: int, chars4: TokenCounter) -> tuple[list[SummaryRequest],
                                                                          list[CompactionEvent]]:
    from compbench.measure.cache import CacheModel
    from compbench.replay.trajectories import replay
    from compbench.replay.viewstate import ReplayConfig

    sm = MockSummarizer(lambda r: "P" if r.meta.get("turn_prefix") else "H")
    p = resolve(spec).create()
    tr = replay(split_turn_transcript(), p, sm, ReplayConfig(ModelLimits(RESERVE + 450, 4_096), 0,
                                                             cache=CacheModel("anthropic", 1.25, None, minimum)),
                chars4)
    return sm.requests, tr.compactions


def test_current_writes_each_summary_request_to_the_cache_from_the_minimum_on(chars4: TokenCounter) -> None:
    spec = "pi:preset=current,keep_recent_tokens=150"
    (history, prefix), (ev,) = cached_replay(spec, 0, chars4)
    sizes = sorted(chars4.count_text(r.system) + chars4.count_text(r.prompt[0].text) for r in (history, prefix))
    assert history.cache_write and prefix.cache_write
    assert ev.summarizer_written == ev.summarizer_input == sum(sizes) and ev.summarizer_cached == 0
    # each request is written only if it reaches the provider's minimum: at, just above the smaller one, above both
    assert cached_replay(spec, sizes[0], chars4)[1][0].summarizer_written == sum(sizes)
    assert cached_replay(spec, sizes[0] + 1, chars4)[1][0].summarizer_written == sizes[1]
    assert cached_replay(spec, sizes[1] + 1, chars4)[1][0].summarizer_written == 0
    # sent without a cache mark (cacheRetention "none"), or the seed's request: nothing written
    assert cached_replay(spec + ",cache_write=false", 0, chars4)[1][0].summarizer_written == 0
    seed = cached_replay("pi:preset=seed,keep_recent_tokens=150", 0, chars4)[1]
    assert seed and all(c.summarizer_written == 0 for c in seed)
