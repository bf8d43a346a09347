"""pi (seed 002 plan; current = pi-mono compaction.ts at 83378aad): loader examples, estimator, trigger,
cut points, boundary rule, replay, failure, and today's prompt/summary format."""

from __future__ import annotations

from compbench.session import Compact, Insert, Keep, ModelLimits, SummaryRequest
from compbench.strategies import resolve
from compbench.strategies.pi import (
    CURRENT_PREFIX,
    NO_PRIOR_HISTORY,
    SEED_PREFIX,
    SEED_PROMPT,
    SPLIT_TURN_JOINER,
    SUMMARIZATION_PROMPT,
    SUMMARIZATION_SYSTEM_PROMPT,
    TURN_PREFIX_PROMPT,
    UPDATE_PROMPT,
    CompactionEvent,
    PiParams,
    estimate_tokens,
    serialize,
    session_context,
)
from compbench.summarizers import SummaryResult
from compbench.summarizers.mock import MockSummarizer
from compbench.tokens import TokenCounter
from compbench.transcript import Message, Text, Transcript, Usage
from helpers import assistant, run, system, tool, transcript, user, view_of

# --- seed 002's session loader: the three worked examples, exactly ---------------------------------------


def names(s: str) -> list[str]:
    return [x.strip() for x in s.split(",")]


FILE = names("u1, a1, t1, t1, a1, u2, a2, u3, a3, t3, a3, t3, a3, u4, a4, t4, a4")


def test_single_compaction_and_new_messages_after_it() -> None:
    c = CompactionEvent("summary", 4)
    assert session_context([*FILE, c]) == ["[summary]", "u4", "a4", "t4", "a4"]
    assert session_context([*FILE, c, "u5", "a5"]) == ["[summary]", "u4", "a4", "t4", "a4", "u5", "a5"]


def test_multiple_compactions_latest_wins_and_never_crosses_the_first() -> None:
    two: list[str | CompactionEvent] = [*FILE, CompactionEvent("summary1", 4), *names("u5, a5, u6, a6, t6, a6, u7, a7")]
    # keepLastMessages=3 lands on a6: the turn is kept whole from u6
    assert session_context([*two, CompactionEvent("summary2", 3)]) == [
        "[summary2]", "u6", "a6", "t6", "a6", "u7", "a7"]
    # boundary rule: keepLastMessages=10 with 8 messages since COMPACTION 1 takes those 8, no more
    assert session_context([*two, CompactionEvent("summary2", 10)]) == [
        "[summary2]", "u5", "a5", "u6", "a6", "t6", "a6", "u7", "a7"]


def test_branching_after_and_before_compaction() -> None:
    session: list[str | CompactionEvent] = [*names("u1, a1, u2, a2"), CompactionEvent("summary", 2),
                                            *names("u3, a3, u4, a4")]
    assert session_context(session) == ["[summary]", "u2", "a2", "u3", "a3", "u4", "a4"]
    assert session_context(session[:5]) == ["[summary]", "u2", "a2"]  # branched at u3
    assert session_context(session[:2]) == ["u1", "a1"]  # branched at u2: the compaction is undone


# --- estimator and trigger -------------------------------------------------------------------------------


def test_estimate_tokens_is_pis_chars_over_4() -> None:
    assert estimate_tokens(user("u", "x" * 9)) == 3  # ceil(9 / 4)
    # 8 + len("read") + len('{"path":"/src/a.py"}') = 8 + 4 + 20 = 32 (JSON.stringify: no spaces)
    assert estimate_tokens(assistant("a", "y" * 8, [("c", "read", {"path": "/src/a.py"})])) == 8
    assert estimate_tokens(tool("t", "c", "z" * 21)) == 6
    assert estimate_tokens(user("e", "\U0001F600" * 2)) == 1  # UTF-16 units: 4 -> 1
    assert estimate_tokens(system("s", "x" * 400)) == 100


def test_trigger_just_below_equal_above(chars4: TokenCounter) -> None:
    v = view_of([user("u1"), assistant("a1")], chars4, ModelLimits(50_000, 4_096))
    limit = 50_000 - 16_384  # 33,616: contextTokens > contextWindow - reserveTokens
    assert resolve("pi").create().after_step(v, Usage(input=limit - 101, output=100)) == ()
    assert resolve("pi").create().after_step(v, Usage(input=limit - 100, output=100)) == ()  # equal
    (c,) = resolve("pi").create().after_step(v, Usage(input=limit - 99, output=100))
    assert isinstance(c, Compact) and c.request is not None
    assert c.request.max_output_tokens == 13_107  # floor(0.8 * 16384)
    assert resolve("pi:enabled=false").create().after_step(v, Usage(input=limit, output=100)) == ()
    (r,) = resolve("pi:reserve_tokens=1000").create().after_step(v, Usage(input=49_001, output=0))
    assert isinstance(r, Compact) and r.request is not None and r.request.max_output_tokens == 800


# --- cut points: seed (user only) vs current (user or assistant, split turn) -------------------------------


def turn_view() -> list[Message]:
    # estimates: sys 6, u1 10, a1 8, t1 5, a1b 9, t2 1, u2 2, a2 3
    return [system("sys"), user("u1", "x" * 40), assistant("a1", "y" * 8, [("c1", "read", {"path": "/src/a.py"})]),
            tool("t1", "c1", "z" * 20, "read"), assistant("a1b", "w" * 12, [("c2", "edit", {"path": "/src/b.py"})]),
            tool("t2", "c2", "ok", "edit"), user("u2", "q" * 8), assistant("a2", "r" * 12)]


OVER = Usage(input=128_000 - 16_384, output=1)


def test_seed_cuts_before_a_user_message_and_sends_the_whole_context(chars4: TokenCounter) -> None:
    v = view_of(turn_view(), chars4)
    (c,) = resolve("pi:keep_recent_tokens=10").create().after_step(v, OVER)
    # walk back: a2 3, u2 5, t2 6, a1b 15 >= 10 at a1b; first user at or after it: u2
    assert isinstance(c, Compact) and c.new_view == (
        Keep("sys"), Insert("user", SEED_PREFIX, "", True, "summary"), Keep("u2"), Keep("a2"))
    assert SEED_PREFIX == ("Another language model worked on this task and produced a summary. Use this to "
                           "continue the work without duplicating effort:\n\n")
    req = c.request
    assert req is not None and req.system == "" and req.previous_summary is None
    assert [m.id for m in req.prompt] == ["sys", "u1", "a1", "t1", "a1b", "t2", "u2", "a2", "pi-compaction"]
    assert req.prompt[-1].role == "user" and req.prompt[-1].text == SEED_PROMPT
    assert SEED_PROMPT.startswith("You are performing a CONTEXT CHECKPOINT COMPACTION.")
    assert [m.id for m in req.source] == ["u1", "a1", "t1", "a1b", "t2"]
    (f,) = resolve("pi:custom_instructions=focus on tests").create().after_step(v, OVER)
    assert isinstance(f, Compact) and f.request is not None
    assert f.request.prompt[-1].text == SEED_PROMPT + "\n\nAdditional focus: focus on tests"


def test_current_cuts_at_an_assistant_and_summarizes_the_split_turn(chars4: TokenCounter) -> None:
    v = view_of(turn_view(), chars4)
    (c,) = resolve("pi:preset=current,keep_recent_tokens=10").create().after_step(v, OVER)
    assert isinstance(c, Compact)
    assert c.new_view[2:] == (Keep("a1b"), Keep("t2"), Keep("u2"), Keep("a2"))  # a1b: never a tool result
    ins = c.new_view[1]
    assert isinstance(ins, Insert) and ins.before == (
        "The conversation history before this point was compacted into the following summary:\n\n<summary>\n")
    # the edit of /src/b.py is in the kept part: only the read is reported
    assert ins.after == "\n\n<read-files>\n/src/a.py\n</read-files>\n</summary>"
    assert c.meta == {"kept_messages": 4, "split_turn": True, "read_files": ["/src/a.py"], "modified_files": []}
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
    tr = run(split_turn_transcript(), resolve("pi:preset=current,keep_recent_tokens=150").create(), chars4,
             window=16_384 + 450, summarizer=sm)
    # after a1b: 507 + 100 > 450; walk back a1b 100, t1 200 >= 150 -> cut at a1b (t1 is a tool result);
    # the turn began at u1: history u0 a0, turn prefix u1 a1 t1
    (ev,) = tr.compactions
    assert ev.step == 2 and ev.ok and ev.kept_ids == ("a1b",)
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

    tr = run(split_turn_transcript(), resolve("pi:preset=current,keep_recent_tokens=150").create(), chars4,
             window=16_384 + 450, summarizer=PrefixFails("H"))
    assert tr.compactions[0].error == "HTTP 529 overloaded" and not tr.compactions[0].ok
    # Promise.all rejects: nothing applied, so the next compaction still finds u0 in the view
    assert tr.compactions[1].ok and tr.compactions[1].replaced_ids[0] == "u0"


def test_current_file_lists_carry_over_and_modified_wins(chars4: TokenCounter) -> None:
    p = resolve("pi:preset=current,keep_recent_tokens=10").create()
    first = view_of(turn_view(), chars4)
    p.after_step(first, OVER)  # kept a1b, t2, u2, a2; read_files ['/src/a.py']
    msgs = [*turn_view()[:1], *turn_view()[4:], user("u3", "n" * 8),
            assistant("a3", "m" * 4, [("c3", "write", {"path": "/src/a.py"})]), tool("t3", "c3", "done", "write"),
            assistant("a4", "f" * 40)]
    second = view_of(msgs, chars4)
    second.compactions = 1  # the first compaction applied
    (c,) = p.after_step(second, OVER)
    # start after the previous kept messages (u3); a4 alone reaches 10 -> cut at a4, turn started at u3
    assert isinstance(c, Compact) and c.new_view[2:] == (Keep("a4"),)
    assert c.meta["read_files"] == [] and c.meta["modified_files"] == ["/src/a.py"]
    assert c.request is None and [m.id for m in c.followups[0].request.source] == ["u3", "a3", "t3"]


def test_serialize_truncates_tool_results_at_2000_chars() -> None:
    text = serialize([tool("t", "c", "k" * 2_005), tool("e", "c", ""), user("u", "hi")])
    assert text == "[Tool result]: " + "k" * 2_000 + "\n\n[... 5 more characters truncated]\n\n[User]: hi"


# --- replay: which steps compact, the boundary rule, failure ----------------------------------------------


def rounds(n: int) -> Transcript:
    msgs: list[Message] = []
    for k in range(1, n + 1):
        msgs += [user(f"u{k}", "u" * 400), assistant(f"a{k}", "a" * 400)]  # 100 tokens each
    return transcript(*msgs)


def numbered() -> MockSummarizer:
    calls: list[int] = []

    def text(_: object) -> str:
        calls.append(1)
        return f"S{len(calls)}"
    return MockSummarizer(text)


def test_replay_compacts_when_over_and_chains_summaries(chars4: TokenCounter) -> None:
    sm = numbered()
    tr = run(rounds(5), resolve("pi:keep_recent_tokens=150").create(), chars4, window=16_384 + 450, summarizer=sm)
    # contextTokens per step: 200, 400, 600 (> 450), then 32 + 300 + 100 = 432, then 632
    assert [s.input + s.output for s in tr.steps] == [200, 400, 600, 432, 632]
    assert [(e.step, e.kept_ids) for e in tr.compactions] == [(2, ("u3", "a3")), (4, ("u5", "a5"))]
    assert tr.compactions[1].replaced_ids == ("compbench:1:0:summary", "u3", "a3", "u4", "a4")
    assert tr.final_view == ("compbench:2:0:summary", "u5", "a5")
    # the second summarizer sees the whole context, the first summary included (seed: folded in)
    assert [m.id for m in sm.requests[1].prompt] == [
        "compbench:1:0:summary", "u3", "a3", "u4", "a4", "u5", "a5", "pi-compaction"]
    assert sm.requests[1].prompt[0].text == SEED_PREFIX + "S1" and sm.requests[1].previous_summary == "S1"


def test_replay_second_compaction_never_cuts_into_the_first_ones_kept_messages(chars4: TokenCounter) -> None:
    tr = run(rounds(4), resolve("pi:keep_recent_tokens=350").create(), chars4, window=16_384 + 450,
             summarizer=numbered())
    # first: a3 100, u3 200, a2 300, u2 400 >= 350 -> cut at u2; step 3: 32 + 500 + 100 = 632 > 450
    assert [(e.step, e.kept_ids) for e in tr.compactions] == [(2, ("u2", "a2", "u3", "a3")), (3, ("u4", "a4"))]
    # without the boundary rule the walk would reach u3 (a4 100, u4 200, a3 300, u3 400) and keep it
    assert tr.final_view == ("compbench:2:0:summary", "u4", "a4")


def test_replay_failure_leaves_the_view_unchanged(chars4: TokenCounter) -> None:
    tr = run(rounds(4), resolve("pi:keep_recent_tokens=150").create(), chars4, window=16_384 + 450,
             summarizer=MockSummarizer(error="boom"))
    assert [(e.step, e.ok, e.error) for e in tr.compactions] == [(2, False, "boom"), (3, False, "boom")]
    assert tr.final_view == tuple(f"{r}{k}" for k in range(1, 5) for r in "ua")


def test_current_replay_update_prompt_summarizes_only_since_the_last_compaction(chars4: TokenCounter) -> None:
    sm = numbered()
    tr = run(rounds(5), resolve("pi:preset=current,keep_recent_tokens=150").create(), chars4,
             window=16_384 + 450, summarizer=sm)
    assert [(e.step, e.kept_ids) for e in tr.compactions] == [(2, ("u3", "a3")), (4, ("u5", "a5"))]
    u, a = "[User]: " + "u" * 400, "[Assistant]: " + "a" * 400
    assert sm.requests[0].prompt[0].text == (
        f"<conversation>\n{u}\n\n{a}\n\n{u}\n\n{a}\n</conversation>\n\n" + SUMMARIZATION_PROMPT)
    # pi today: u3/a3 (kept by the first compaction) are in neither summary; the previous one is updated
    assert sm.requests[1].prompt[0].text == (
        f"<conversation>\n{u}\n\n{a}\n</conversation>\n\n<previous-summary>\nS1\n</previous-summary>\n\n"
        + UPDATE_PROMPT)
    assert sm.requests[1].previous_summary == "S1"
    assert tr.final_view == ("compbench:2:0:summary", "u5", "a5")
    summary = Message("x", "user", (Text(CURRENT_PREFIX + "S1\n</summary>"),))
    assert estimate_tokens(summary) == 28  # 112 chars; with chars4 the loop counts it the same
    assert [s.input + s.output for s in tr.steps] == [200, 400, 600, 428, 628]


def test_resolve_parses_params() -> None:
    assert resolve("pi").params == PiParams(16_384, 20_000, True, False, False, "")
    assert resolve("pi:preset=current,keep_recent_tokens=8000").params == PiParams(
        keep_recent_tokens=8_000, cut_at_assistant=True, current_format=True)
