"""cline-condense (auto-condense at 9ee618111d58): the trigger, the summarize_task request with Cline's exact
prompt, the first pair kept and rewritten, the continuation result, no summary of a summary, failure."""

from __future__ import annotations

import pytest

from compbench.data.transcript import Message, Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits, Prune, SessionView
from compbench.strategies import resolve
from compbench.strategies.cline_condense import ClineCondense, ClineCondenseParams
from compbench.strategies.cline_context import CONTEXT_TRUNCATION_NOTICE, DUPLICATE_FILE_READ_NOTICE
from compbench.strategies.cline_prompts import CONTINUATION_AFTER, CONTINUATION_BEFORE, summarize_task
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, long_session, run, system, tool, transcript, user, view_of


def at(messages: list[Message], counter: TokenCounter, total: int, window: int = 128_000) -> SessionView:
    v = view_of(messages, counter, ModelLimits(window, 100))
    v.last_usage = Usage(input=total - 10, output=10)
    return v


def session() -> list[Message]:
    return [system(), user("u0", "add a --verbose flag"), assistant("a1", "I will read cli.py"),
            user("u2", "also update the docs"), assistant("a3", calls=[("c3", "bash", {"cmd": "ls"})]),
            tool("t4", "c3", "cli.py docs/")]


@pytest.mark.parametrize(("total", "acts"), [(97_999, False), (98_000, True), (98_001, True)])
def test_trigger_at_max_allowed_size(chars4: TokenCounter, total: int, acts: bool) -> None:
    out = ClineCondense(ClineCondenseParams()).before_step(at(session(), chars4, total))
    assert bool(out) is acts and all(isinstance(a, Compact) for a in out)


def test_request_is_the_view_then_summarize_task_on_the_main_model(chars4: TokenCounter) -> None:
    v = at(session(), chars4, 98_000)
    (c,) = ClineCondense(ClineCondenseParams(cwd="/repo")).before_step(v)
    assert isinstance(c, Compact) and c.request is not None
    req = c.request
    assert req.system == "" and req.max_output_tokens is None and req.meta["model"] == "main"
    assert [m.id for m in req.prompt] == ["u0", "a1", "u2", "a3", "t4", "cline-summarize-task"]
    assert req.prompt[-1].role == "user" and req.prompt[-1].text == summarize_task("/repo", True)
    assert "relative to the current working directory /repo." in req.prompt[-1].text
    assert "<task_progress>task_progress list here</task_progress>" in req.prompt[-1].text
    assert [m.id for m in req.source] == ["u0", "a1", "u2", "a3", "t4"]
    assert c.on_failure == "unchanged"
    assert c.new_view == (Keep("sys"), Keep("u0"), Keep("a1"),
                          Insert("user", CONTINUATION_BEFORE, CONTINUATION_AFTER, with_summary=True, origin="summary"))
    assert CONTINUATION_BEFORE.startswith("[summarize_task] Result:\n\nThis session is being continued")


def test_focus_chain_off_drops_the_task_progress_blocks(chars4: TokenCounter) -> None:
    (c,) = resolve("cline-condense:focus_chain=false").create().before_step(at(session(), chars4, 98_000))
    assert isinstance(c, Compact) and c.request is not None
    assert "task_progress" not in c.request.prompt[-1].text.replace("task_progress list", "")


def test_big_file_read_savings_skip_the_condense(chars4: TokenCounter) -> None:
    big = "x" * 4_000
    msgs = [user("u0", "task"), assistant("a1"), user("u2", "go"),
            assistant("a3", calls=[("c3", "Read", {"file_path": "a.py"})]), tool("t3", "c3", big, "Read"),
            assistant("a5", calls=[("c5", "Read", {"file_path": "a.py"})]), tool("t5", "c5", big, "Read")]
    (p,) = ClineCondense(ClineCondenseParams()).before_step(at(msgs, chars4, 98_000))
    assert isinstance(p, Prune) and p.targets == (("t3", 0, DUPLICATE_FILE_READ_NOTICE),)


def test_small_savings_rewrite_and_the_request_shows_the_rewrite(chars4: TokenCounter) -> None:
    msgs = [user("u0", "task " * 300), assistant("a1"), user("u2", "go"),
            assistant("a3", calls=[("c3", "Read", {"file_path": "a.py"})]), tool("t3", "c3", "x" * 200, "Read"),
            assistant("a5", calls=[("c5", "Read", {"file_path": "a.py"})]), tool("t5", "c5", "y", "Read")]
    p, c = ClineCondense(ClineCondenseParams()).before_step(at(msgs, chars4, 98_000))
    assert isinstance(p, Prune) and isinstance(c, Compact) and c.request is not None
    (t3,) = [m for m in c.request.prompt if m.id == "t3"]
    assert t3.tool_results()[0].output == DUPLICATE_FILE_READ_NOTICE




def test_replay_condenses_keeps_the_first_pair_and_never_summarizes_a_summary(chars4: TokenCounter) -> None:
    summ = MockSummarizer("S")
    tr = run(transcript(*long_session(30)), resolve("cline-condense").create(), chars4, window=1_000,
             max_output=100, summarizer=summ)
    assert len(tr.compactions) >= 2 and all(c.ok and c.phase == "before" for c in tr.compactions)
    first, second = tr.compactions[:2]
    assert first.kept_ids == ("u0", "a1")
    assert second.step - first.step >= 2  # two messages after the condense before another one
    assert tr.final_view[:2] == ("u0", "a1")
    # the second condense summarizes the first pair (already rewritten) and the summary result
    assert summ.requests[1].source[0].text == "[Continue assisting the user!]"
    assert summ.requests[1].source[2].text == CONTINUATION_BEFORE + "S" + CONTINUATION_AFTER


def test_replay_failure_leaves_the_view_and_the_first_pair(chars4: TokenCounter) -> None:
    tr = run(transcript(*long_session(30)), resolve("cline-condense").create(), chars4, window=1_000,
             max_output=100, summarizer=MockSummarizer(error="boom"))
    assert tr.compactions and not any(c.ok for c in tr.compactions)
    assert tr.final_view == tuple(m.id for m in long_session(30))


def test_no_condense_right_after_one(chars4: TokenCounter) -> None:
    strat = ClineCondense(ClineCondenseParams())
    strat.condensed = True
    after = [user("u0"), assistant("a1"), user("s", "summary result"), assistant("a2"), user("u3")]
    assert strat.before_step(at(after, chars4, 98_000)) == ()  # 2 messages after the pair: skipped
    more = [*after[:4], user("u3"), assistant("a4"), user("u5")]
    assert strat.before_step(at(more, chars4, 98_000))


def test_first_pair_rewritten_right_after_a_good_summary_once(chars4: TokenCounter) -> None:
    from compbench.sdk.events import CompactionEvent

    def event(ok: bool) -> CompactionEvent:
        reason = "cline: auto-condense (summarize_task)"
        return CompactionEvent(1, 0, "before", reason, ok, 0, 0, (), (), 0, "", 0, 0, 0)

    strat = ClineCondense(ClineCondenseParams())
    v = at(session(), chars4, 98_000)
    strat.before_step(v)
    assert strat.after_compaction(v, event(False)) == ()  # the summary failed: nothing rewritten or recorded
    strat.before_step(v)
    (p,) = strat.after_compaction(v, event(True))
    assert isinstance(p, Prune) and p.targets == (("u0", 0, "[Continue assisting the user!]"),
                                                  ("a1", 0, CONTEXT_TRUNCATION_NOTICE))
    strat.before_step(at([*session(), assistant("a5"), user("u6")], chars4, 98_000))
    assert strat.after_compaction(v, event(True)) == ()  # rewritten once


class FailsOnce:
    name = "fails-once"

    def __init__(self) -> None:
        self.inner = MockSummarizer("S")
        self.calls = 0

    def summarize(self, request):  # type: ignore[no-untyped-def]
        from compbench.summarizers import SummaryResult

        self.calls += 1
        return SummaryResult("", error="boom") if self.calls == 1 else self.inner.summarize(request)


def test_a_failed_condense_then_a_good_one_rewrites_the_first_pair(chars4: TokenCounter) -> None:
    summ = FailsOnce()
    tr = run(transcript(*long_session(30)), resolve("cline-condense").create(), chars4, window=1_000,
             max_output=100, summarizer=summ)  # type: ignore[arg-type]
    assert [c.ok for c in tr.compactions[:3]] == [False, True, True]
    assert summ.inner.requests[1].source[0].text == "[Continue assisting the user!]"
