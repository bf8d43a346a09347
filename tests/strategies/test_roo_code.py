"""roo-code (RooCodeInc/Roo-Code cb836567180a): the allowed-tokens and percent triggers, the reserved output,
the condense request (Roo Code's prompts, tools as text), the fresh start, the sliding window fallback."""

from __future__ import annotations

import pytest

from compbench.data.transcript import Message, ToolResult, Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits, SessionView
from compbench.strategies import resolve
from compbench.strategies.roo_code import RooCode, RooCodeParams
from compbench.strategies.roo_code_prompts import CONDENSE, SUMMARY_PROMPT
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of

HEADING = "## Conversation Summary\n"


def at(messages: list[Message], counter: TokenCounter, used: int, window: int = 1_000,
       max_output: int = 100) -> SessionView:
    """A view whose previous request used ``used`` tokens (in + out); the messages after the last
    assistant message are the new ones."""
    v = view_of(messages, counter, ModelLimits(window, max_output))
    v.last_usage = Usage(input=used - 10, output=10)
    return v


def session() -> list[Message]:
    return [system(), user("u0", "add a flag <command name=\"x\">keep this</command>"),
            assistant("a1", "reading", calls=[("c1", "bash", {"cmd": "ls", "n": 2.0, "deep": True})]),
            tool("t1", "c1", "cli.py"), assistant("a2", calls=[("c2", "read", {"path": "cli.py"})]),
            Message("t2", "tool", (ToolResult("c2", "read", "no such file", is_error=True),)),
            user("u3", "u" * 40)]  # the new message: 10 tokens with chars4


def new_tokens(counter: TokenCounter) -> int:
    """Tokens of the messages after the last assistant one (t2 and u3: one user message for Roo Code)."""
    v = view_of(session(), counter)
    return sum(e.tokens for e in v.entries[5:])


@pytest.mark.parametrize(("extra", "acts"), [(0, False), (1, True)])
def test_allowed_tokens_trigger_counts_the_new_message(chars4: TokenCounter, extra: int, acts: bool) -> None:
    # allowed = 1000 * 0.9 - min(100, ceil(200)) = 800; prev = used + the new message's tokens: > 800 acts
    used = 800 - new_tokens(chars4) + extra
    out = RooCode(RooCodeParams()).before_step(at(session(), chars4, used))
    assert bool(out) is acts


@pytest.mark.parametrize(("extra", "acts"), [(-1, False), (0, True)])
def test_percent_threshold_condenses_at_or_above(chars4: TokenCounter, extra: int, acts: bool) -> None:
    used = 500 - new_tokens(chars4) + extra  # 100 * prev / 1000 >= 50
    out = resolve("roo-code:preset=seed,threshold_percent=50").create().before_step(at(session(), chars4, used))
    assert bool(out) is acts
    if acts:  # below the allowed tokens: no sliding-window fallback
        (c,) = out
        assert isinstance(c, Compact) and c.request is not None and c.fallback is None


@pytest.mark.parametrize(("max_output", "param", "reserved"), [
    (100, 0, 100), (10_000, 0, 6_400), (0, 0, 8_192), (100, 500, 500)])
def test_reserved_output(chars4: TokenCounter, max_output: int, param: int, reserved: int) -> None:
    v = at(session(), chars4, 10, window=32_000, max_output=max_output)
    assert RooCode(RooCodeParams(reserved_output=param)).reserved(v) == reserved


def test_out_of_range_profile_threshold_falls_back_to_100() -> None:
    assert RooCode(RooCodeParams(threshold_percent=4)).threshold() == 100
    assert RooCode(RooCodeParams(threshold_percent=5)).threshold() == 5


def test_condense_request_and_fresh_start(chars4: TokenCounter) -> None:
    (c,) = RooCode(RooCodeParams()).before_step(at(session(), chars4, 900))
    assert isinstance(c, Compact) and c.request is not None and c.reason == "roo-code: condense (fresh start)"
    req = c.request
    assert req.system == SUMMARY_PROMPT and req.prompt[-1].text == CONDENSE and req.prompt[-1].role == "user"
    texts = [m.text for m in req.prompt[:-1]]
    assert texts[1] == "reading\n[Tool Use: bash]\ncmd: ls\nn: 2\ndeep: true"
    assert texts[2] == "[Tool Result]\ncli.py" and texts[4] == "[Tool Result (Error)]\nno such file"
    assert [m.role for m in req.prompt[:-1]] == ["user", "assistant", "user", "assistant", "user", "user"]
    assert [m.id for m in req.source] == ["u0", "a1", "t1", "a2", "t2", "u3"]
    after = ("\n\n<system-reminder>\n## Active Workflows\nThe following directives must be maintained across all "
             'future condensings:\n<command name="x">keep this</command>\n</system-reminder>')
    assert c.new_view == (Keep("sys"), Insert("user", HEADING, after, with_summary=True, origin="summary"))
    assert c.on_failure == "unchanged" and isinstance(c.fallback, Compact)  # prev > allowed: the sliding window


def test_orphaned_calls_get_deferred_results_and_custom_prompt(chars4: TokenCounter) -> None:
    msgs = [user("u0"), assistant("a1", calls=[("c1", "bash", {})]), tool("t1", "c1", "ok"), user("u2"),
            assistant("a2", calls=[("c9", "attempt_completion", {"result": "done"})]), user("u3")]
    (c,) = RooCode(RooCodeParams(custom_condensing_prompt=" be brief ")).before_step(at(msgs, chars4, 900))
    assert isinstance(c, Compact) and c.request is not None
    assert c.request.prompt[-2].text == "[Tool Result]\nContext condensation triggered. Tool execution deferred."
    assert c.request.prompt[-1].text == "be brief"


def test_sliding_window_hides_half_rounded_to_even_behind_a_marker(chars4: TokenCounter) -> None:
    msgs = [user("u0")] + [assistant(f"a{k}") if k % 2 else user(f"u{k}") for k in range(1, 8)]  # 8 messages
    (c,) = resolve("roo-code:preset=no-condense").create().before_step(at(msgs, chars4, 900))
    # floor((8 - 1) * 0.5) = 3 -> 2 (even): a1 u2 hidden, the marker before a3
    assert isinstance(c, Compact) and c.request is None and c.meta["messages_removed"] == 2
    assert c.new_view == (Keep("u0"), Insert("user", "[Sliding window truncation: 2 messages hidden to reduce context]",
                                             origin="marker"), Keep("a3"), Keep("u4"), Keep("a5"), Keep("u6"),
                          Keep("a7"))
    few = msgs[:3]  # floor(2 * 0.5) = 1 -> 0: nothing to hide
    assert resolve("roo-code:preset=no-condense").create().before_step(at(few, chars4, 900)) == ()


def long_session(n: int) -> list[Message]:
    msgs: list[Message] = [user("u0", "refactor the parser")]
    for k in range(1, n):
        msgs += [assistant(f"a{k}", "w" * 40, calls=[(f"c{k}", "bash", {"k": k})]), tool(f"t{k}", f"c{k}", "o" * 200)]
    return [*msgs, assistant("end")]


def test_replay_fresh_start_chains_summaries(chars4: TokenCounter) -> None:
    summ = MockSummarizer("S")
    strategy = resolve("roo-code:preset=seed").create()
    tr = run(transcript(*long_session(40)), strategy, chars4, window=1_000, max_output=100,
             summarizer=summ)
    assert len(tr.compactions) >= 2 and all(c.ok and c.reason.endswith("(fresh start)") for c in tr.compactions)
    assert tr.compactions[0].kept_ids == ()  # nothing kept: the summary alone
    second = summ.requests[1].source
    assert second[0].text == HEADING + "S"  # since the last summary, the summary included
    assert max(s.input for s in tr.steps) < 1_000


def test_replay_failed_condense_falls_back_to_the_sliding_window(chars4: TokenCounter) -> None:
    strategy = resolve("roo-code:preset=seed").create()
    tr = run(transcript(*long_session(40)), strategy, chars4, window=1_000, max_output=100,
             summarizer=MockSummarizer(error="overloaded"))
    reasons = [(c.reason, c.ok) for c in tr.compactions]
    assert reasons[:2] == [("roo-code: condense (fresh start)", False), ("roo-code: sliding window truncation", True)]
    assert tr.final_view[0] == "u0"


def test_history_is_kept_as_anthropic_messages(chars4: TokenCounter) -> None:
    strat = RooCode(RooCodeParams())
    strat.before_step(at(session(), chars4, 10))  # below every threshold: only takes the messages in
    assert [[e.id for e in r.entries] for r in strat.stored] == [["u0"], ["a1"], ["t1"], ["a2"], ["t2", "u3"]]


def test_condensed_recently_is_an_error_not_a_request(chars4: TokenCounter) -> None:
    from dataclasses import replace

    from compbench.strategies.roo_code import Stored

    v = at([user("s", HEADING + "S"), assistant("a1"), assistant("a2")], chars4, 900)
    entries = list(v.entries)
    summary = replace(entries[0], origin="summary")
    strat = RooCode(RooCodeParams())
    strat.stored = [Stored([summary], "summary"), Stored(entries[1:])]  # the summary and one message after it
    strat.known = {e.id for e in entries}
    v2 = SessionView([summary, *entries[1:]], v.limits, v.counter)
    v2.last_usage = v.last_usage
    assert strat.before_step(v2) == ()  # no condense (condensed_recently), nothing the window could hide
    strat.stored.append(Stored([], "marker"))  # a third stored message since the summary: condense again
    (c,) = strat.before_step(v2)
    assert isinstance(c, Compact) and c.request is not None


class SucceedsOnce:
    name = "succeeds-once"

    def __init__(self) -> None:
        self.calls = 0

    def summarize(self, request):  # type: ignore[no-untyped-def]
        from compbench.summarizers import SummaryResult

        self.calls += 1
        return SummaryResult("S") if self.calls == 1 else SummaryResult("", error="down")


def test_after_a_summary_the_window_first_hides_what_the_summary_hides(chars4: TokenCounter) -> None:
    """Roo Code counts condensed messages as visible when it truncates: its first truncations after a
    fresh start change nothing the model sees; only later ones reach the messages after the summary."""
    strategy = resolve("roo-code:preset=seed").create()
    tr = run(transcript(*long_session(60)), strategy, chars4, window=1_000, max_output=100,
             summarizer=SucceedsOnce())  # type: ignore[arg-type]
    first = tr.compactions[0]
    assert first.ok and first.reason.endswith("(fresh start)")
    later = [c for c in tr.compactions[1:] if c.ok]
    failed = [c for c in tr.compactions[1:] if not c.ok]
    assert failed and later and later[0].reason == "roo-code: sliding window truncation"
    assert failed[0].seq < later[0].seq  # the condense failed before: no visible truncation at first
    # the unseen truncation at step 26 is recorded, so the next one (27) already reaches past the summary
    assert (failed[0].step, later[0].step) == (26, 27)
    assert not set(later[0].replaced_ids) & set(first.replaced_ids)  # it hides messages after the summary


@pytest.mark.parametrize("tokenizer", ["o200k_base", "cl100k_base"])
def test_a_tool_results_block_counts_as_its_header_and_its_output(tokenizer: str) -> None:
    """``[Tool Result]\\n`` and the output: summed where the output begins neither with '/' nor with whitespace
    reaching a newline (the tokenizers' split then ends a piece at the header's newline), counted whole otherwise;
    the one-pass count either way."""
    from compbench.data.transcript import Text
    from compbench.strategies.roo_code import as_text

    outputs = ["ok", "/usr/bin/x\n", "     1\tx", " \t\nlead", "\n\nlead", "", "é—ü/", "[x]\n}\n", "//c", ".\n/",
               "123 456", "  /x", "\r\n"]
    summed = {"", "ok", "     1\tx", "é—ü/", "[x]\n}\n", ".\n/", "123 456", "  /x"}
    counter = TokenCounter(tokenizer).scoped()
    for k, out in enumerate(outputs):
        for error in (False, True):
            m = Message(f"t{k}", "tool", (ToolResult(f"c{k}", "bash", out, is_error=error),))
            counter.remember(m)  # as a transcript's index does: the output's count is then read, not tokenized
            (part,) = as_text(m, counter).parts
            assert isinstance(part, Text) and part.text == as_text(m).parts[0].text
            assert part.text == f"[Tool Result{' (Error)' if error else ''}]\n{out}"
            assert counter._memo is not None and (id(part) in counter._memo) == (out in summed)
            assert counter.part(part) == TokenCounter(tokenizer).count_raw(part.text), out
