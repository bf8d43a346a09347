"""openhands-llm-summarizing: OpenHands V0's rolling summary of forgotten events, and the V1 SDK's presets."""

from __future__ import annotations

import pytest

from compbench.data.transcript import Message, Reasoning
from compbench.errors import UsageError
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits
from compbench.strategies import openhands_prompts as P
from compbench.strategies import resolve
from compbench.strategies.openhands_events import EventState
from compbench.strategies.openhands_summarizing import LLMSummarizing, LLMSummarizingParams, manipulation_indices
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of

SUMMARY = Insert("user", with_summary=True, origin="summary", meta={"openhands": "condensation"})


def chat() -> list[Message]:
    """13 V0 events: system, user + 2 recall, action + obs, 2 actions + 2 obs, agent message, user + recall."""
    return [system("sys"), user("u1", "fix it"), assistant("a1", "look", [("c1", "bash", {"command": "ls"})]),
            tool("t1", "c1", "out1"), assistant("a2", "two", [("c2", "bash", {}), ("c3", "read", {"path": "x"})]),
            tool("t2", "c2", "r2"), tool("t3", "c3", "r3", name="read"), assistant("a3", "done"), user("u2", "next")]


def summ(**kw: object) -> LLMSummarizing:
    return LLMSummarizing(LLMSummarizingParams(**kw))  # type: ignore[arg-type]


def test_events_as_openhands_stores_them(chars4: TokenCounter) -> None:
    evs = EventState(True).events(view_of(chat(), chars4).entries)
    assert [e.kind for e in evs] == ["system", "user", "recall", "recall", "action", "observation", "action",
                                     "action", "observation", "observation", "message", "user", "recall"]
    assert len(EventState(False).events(view_of(chat(), chars4).entries)) == 10  # V1: no recall events


@pytest.mark.parametrize(("max_size", "acts"), [(14, False), (13, False), (12, True)])
def test_v0_trigger_is_more_than_max_size_events(chars4: TokenCounter, max_size: int, acts: bool) -> None:
    assert bool(summ(max_size=max_size).before_step(view_of(chat(), chars4))) is acts


def test_v0_keeps_head_and_tail_puts_back_the_first_user_message(chars4: TokenCounter) -> None:
    (c,) = summ(max_size=10).before_step(view_of(chat(), chars4))
    assert isinstance(c, Compact) and c.request is not None
    # keep_first 1 (system) + tail 10 // 2 - 1 - 1 = 3 (a3, u2, its recall); the summary at offset 1 is not a
    # user message, so ConversationMemory puts the first user message back before it
    assert c.new_view == (Keep("sys"), Keep("u1"), SUMMARY, Keep("a3"), Keep("u2"))
    assert c.request.system == "" and len(c.request.prompt) == 1
    text = c.request.prompt[0].text
    assert text.startswith(P.PROMPT_V0 + "\n\n<PREVIOUS SUMMARY>\nNo events summarized\n</PREVIOUS SUMMARY>\n\n\n"
                           "<EVENT id=1>\n**MessageAction** (source=EventSource.USER)\nCONTENT: fix it\n</EVENT>\n"
                           "<EVENT id=2>\n**RecallAction**\nQUERY: fix it\n</EVENT>\n")
    assert "<EVENT id=4>\n**CmdRunAction (source=EventSource.AGENT, is_input=False)**\nTHOUGHT: look\nCOMMAND:\nls\n" \
           "</EVENT>\n" in text
    assert "**MCPAction**\nNAME: read\nARGUMENTS: {'path': 'x'}\n</EVENT>" in text
    assert "MCPObservation(content='r3', observation=<ObservationType.MCP: 'mcp'>, name='read', arguments={})" in text
    assert text.endswith("</EVENT>\nNow summarize the events using the rules above.")
    assert P.PROMPT_V0.startswith("You are maintaining a context-aware state summary for an interactive agent.\n")
    assert "VERSION_CONTROL_STATUS: {Repository state, current branch, PR status, commit history}" in P.PROMPT_V0


def test_v0_rolling_summary_feeds_the_next_and_events_are_cut_at_10000(chars4: TokenCounter) -> None:
    msgs: list[Message] = [system("sys"), user("u1", "task")]
    for k in range(12):
        msgs += [assistant(f"a{k}", "", [(f"c{k}", "bash", {"command": "x"})]), tool(f"t{k}", f"c{k}", "o" * 12_000)]
    msgs.append(assistant("end", "ok"))
    s = MockSummarizer(lambda r: f"SUM{len(s.requests)}")
    tr = run(transcript(*msgs), summ(max_size=12, keep_first=2), chars4, summarizer=s, window=10**7)
    first, second = s.requests[0].prompt[0].text, s.requests[1].prompt[0].text
    block = first.split("<EVENT id=5>\n")[1].split("\n</EVENT>")[0]  # t0: header + 12,000 chars, cut to 10,000
    assert len(block) == 10_000 + len("\n[... Observation truncated due to length ...]\n")
    assert block.startswith("**CmdOutputObservation") and "o\n[... Observation truncated due to length ...]\no" in block
    assert "<PREVIOUS SUMMARY>\nSUM1\n</PREVIOUS SUMMARY>" in second
    assert s.requests[1].previous_summary == "SUM1"
    summaries = [i for i in tr.final_view if i.endswith(":summary")]
    assert len(summaries) == 1  # one rolling summary, at keep_first
    assert tr.final_view[:3] == ("sys", "u1", summaries[0])


def test_v0_server_preset_keeps_system_user_and_recall(chars4: TokenCounter) -> None:
    c = resolve("openhands-llm-summarizing:preset=server")
    assert (c.params.keep_first, c.params.max_size, c.params.version) == (4, 120, "v0")
    (act,) = summ(max_size=12, keep_first=4).before_step(view_of(chat(), chars4))
    # keep_first 4 = system, u1, its RecallAction and RecallObservation; tail 12 // 2 - 4 - 1 = 1: u2's
    # RecallAction, which renders nothing: u2 itself is forgotten, as in OpenHands
    assert isinstance(act, Compact) and act.new_view == (Keep("sys"), Keep("u1"), SUMMARY)


def test_v0_condensation_request_on_a_prompt_over_the_input_limit(chars4: TokenCounter) -> None:
    v = view_of(chat(), chars4, ModelLimits(10, 5))
    assert v.context_tokens > 10
    (c,) = summ(max_size=20).before_step(v)
    assert isinstance(c, Compact) and c.reason == "condensation request"
    assert summ(max_size=20, condense_on_overflow=False).before_step(v) == ()


def test_v0_validation() -> None:
    with pytest.raises(UsageError, match="less than half"):
        summ(max_size=10, keep_first=5)


# --- V1 --------------------------------------------------------------------------------------------------


def test_v1_presets() -> None:
    v1 = resolve("openhands-llm-summarizing:preset=v1").params
    assert (v1.version, v1.max_size, v1.keep_first, v1.minimum_progress, v1.recall_events) == ("v1", 240, 2, 0.1, False)
    agent = resolve("openhands-llm-summarizing:preset=v1-agent").params
    assert (agent.max_size, agent.keep_first) == (80, 4)
    with pytest.raises(UsageError, match="leave room"):
        summ(version="v1", max_size=8, keep_first=3)


def test_manipulation_indices_respect_batches_calls_and_thinking_loops(chars4: TokenCounter) -> None:
    evs = EventState(False).events(view_of(chat(), chars4).entries)
    # 0 system, 1 user, 2 a1, 3 t1, 4 a2/c2, 5 a2/c3, 6 t2, 7 t3, 8 a3, 9 u2
    assert manipulation_indices(evs) == [0, 1, 2, 4, 8, 9, 10]
    thinking = Message("a1", "assistant", (Reasoning("hmm"), *assistant("x", "", [("c1", "bash", {})]).parts))
    msgs = [system("sys"), user("u1"), thinking, tool("t1", "c1", "o"), assistant("a2", "", [("c2", "bash", {})]),
            tool("t2", "c2", "o"), assistant("a3", "done")]
    evs = EventState(False).events(view_of(msgs, chars4).entries)
    assert manipulation_indices(evs) == [0, 1, 2, 6, 7]  # the loop a1..t2 starts with thinking: no cut inside


@pytest.mark.parametrize(("max_size", "acts"), [(10, False), (9, True)])
def test_v1_events_trigger_and_atomic_cut(chars4: TokenCounter, max_size: int, acts: bool) -> None:
    s = summ(version="v1", max_size=max_size, keep_first=2, recall_events=False, minimum_progress=0.1)
    out = s.before_step(view_of(chat(), chars4))
    assert bool(out) is acts
    if out:
        (c,) = out
        assert isinstance(c, Compact)
        # tail 9 // 2 - 2 - 1 = 1 -> naive end 9 (u2); forgetting starts at 2: a1 .. a3 are summarized
        assert c.new_view == (Keep("sys"), Keep("u1"), SUMMARY, Keep("u2"))
        text = c.request.prompt[0].text  # type: ignore[union-attr]
        assert text.startswith(P.PROMPT_V1 + "\n<EVENT>\nActionEvent (agent)\n  Thought: look\n  Action: BashAction\n"
                               "</EVENT>\n\n<EVENT>\nObservationEvent (environment)\n  Tool: bash\n  Result: out1\n")
        assert text.endswith("</EVENT>\n\n\nNow summarize the events using the rules above.")


def test_v1_minimum_progress_soft_waits_hard_resets(chars4: TokenCounter) -> None:
    msgs = chat()
    s = summ(version="v1", max_size=9, keep_first=2, recall_events=False, minimum_progress=0.9)
    assert s.before_step(view_of(msgs, chars4)) == ()  # events only: soft, too little progress
    v = view_of(msgs, chars4, ModelLimits(10, 5))  # tokens over the input limit: hard
    (c,) = s.before_step(v)
    assert isinstance(c, Compact) and c.new_view == (SUMMARY,) and c.meta["hard_reset"]


def test_v1_token_trigger_condenses_to_half_the_limit(chars4: TokenCounter) -> None:
    msgs: list[Message] = [system("sys"), user("u1", "go")]
    for k in range(10):
        msgs += [assistant(f"a{k}", "", [(f"c{k}", "bash", {})]), tool(f"t{k}", f"c{k}", "o" * 400)]
    v = view_of(msgs, chars4, ModelLimits(1_000, 100))
    total = v.context_tokens
    assert total > 1_000
    (c,) = summ(version="v1", max_size=240, keep_first=2, recall_events=False).before_step(v)
    assert isinstance(c, Compact)
    kept = sum(e.tokens for e in v.entries if e.id in {k.id for k in c.new_view if isinstance(k, Keep)})
    assert kept <= 500 < kept + 100 + 3  # under half the limit, by no more than one call and its result
    assert summ(version="v1", max_size=240, keep_first=2, recall_events=False).before_step(
        view_of(msgs, chars4, ModelLimits(total, 100))) == ()  # at the limit: no token reason


def test_a_failed_summary_leaves_the_view_and_the_next_step_tries_again(chars4: TokenCounter) -> None:
    t = transcript(*chat(), assistant("a4", "more"), user("u3", "again"), assistant("a5", "ok"))
    tr = run(t, summ(max_size=10), chars4, summarizer=MockSummarizer(error="RateLimitError"))
    assert len(tr.compactions) >= 2 and not any(e.ok for e in tr.compactions)
    assert tr.final_view == tuple(m.id for m in t.messages)
