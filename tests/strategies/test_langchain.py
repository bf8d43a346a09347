"""langchain (SummarizationMiddleware, langchain 1.5.0): the counter, trim and XML rendering pinned on
what langchain-core 1.8.2 returns for the same messages; the trigger (none by default; tokens, messages,
fraction; AND / OR; the reported-usage path), keep and the tool-pair rule, the 4,000-token trim and the
fixed text when it leaves nothing, the summary message, failure, presets."""

from __future__ import annotations

import pytest

from compbench.data.transcript import Message, Usage
from compbench.errors import UsageError
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits, SessionView
from compbench.strategies import resolve
from compbench.strategies.langchain import LangChainParams, LangChainSummarization
from compbench.strategies.langchain_messages import (
    buffer_string_xml,
    count_tokens_approximately,
    lc_messages,
    trim_last,
)
from compbench.strategies.langchain_prompts import DEFAULT_SUMMARY_PROMPT
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of

# --- pinned on langchain-core 1.8.2 (the values it returned for the same LangChain messages) -------------


def ref() -> list[Message]:
    return [user("h1", "fix the bug in parser.py"),
            Message("a1", "assistant", assistant("a1", "I'll look.", [("c1", "bash", {"cmd": "cat parser.py"})]).parts),
            tool("t1", "c1", "line1\nline2 <b> & c\nline3", name="bash"),
            assistant("a2", "Found it."), user("h2", "thanks, now run tests")]


def ref_view(chars4: TokenCounter) -> SessionView:
    return view_of(ref(), chars4)


def test_count_tokens_approximately_as_langchain_core(chars4: TokenCounter) -> None:
    msgs = lc_messages(ref_view(chars4).entries, 0, {"a1": 500, "a2": 900})
    assert count_tokens_approximately(msgs) == 69
    assert [count_tokens_approximately([m]) for m in msgs] == [10, 29, 12, 8, 10]
    assert count_tokens_approximately(msgs, use_usage_metadata_scaling=True) == 87  # 69 * min(1.25, 900/49)
    assert count_tokens_approximately(msgs, use_usage_metadata_scaling=True, chars_per_token=3.3) == 102
    assert repr(list(msgs[1].tool_calls)) == ("[{'name': 'bash', 'args': {'cmd': 'cat parser.py'}, 'id': 'c1', "
                                              "'type': 'tool_call'}]")


def test_get_buffer_string_xml_as_langchain_core(chars4: TokenCounter) -> None:
    assert buffer_string_xml(lc_messages(ref_view(chars4).entries)) == (
        '<message type="human">fix the bug in parser.py</message>\n<message type="ai">\n  <content>I\'ll look.'
        '</content>\n  <tool_call id="c1" name="bash">{"cmd": "cat parser.py"}</tool_call>\n</message>\n'
        '<message type="tool">line1\nline2 &lt;b&gt; &amp; c\nline3</message>\n<message type="ai">Found it.'
        '</message>\n<message type="human">thanks, now run tests</message>')


def _trim(messages: list[Message], n: int, chars4: TokenCounter, scaled: bool = False,
          usage: dict[str, int] | None = None) -> list[tuple[str, str]]:
    lcs = lc_messages(view_of(messages, chars4).entries, 0, usage)
    kept = trim_last(lcs, n, lambda ms: count_tokens_approximately(ms, use_usage_metadata_scaling=scaled),
                     allow_partial=True, start_on="human", include_system=True)
    return [(m.type, m.content) for m in kept]


@pytest.mark.parametrize(("n", "kept"), [(60, 1), (200, 5)])
def test_trim_messages_as_langchain_core(chars4: TokenCounter, n: int, kept: int) -> None:
    got = _trim(ref(), n, chars4, scaled=True, usage={"a1": 500, "a2": 900})
    assert got == [(m.type, m.content) for m in lc_messages(ref_view(chars4).entries)][-kept:]


@pytest.mark.parametrize(("n", "kept"), [(40, 0), (60, 4)])
def test_trim_starts_on_a_human_message_or_keeps_nothing(chars4: TokenCounter, n: int, kept: int) -> None:
    msgs = [user("h", "first task"), assistant("a", "ok", [("c9", "bash", {"cmd": "ls"})]),
            tool("t", "c9", "a\nb\nc\nd\ne\nf"), assistant("d", "done")]
    assert len(_trim(msgs, n, chars4)) == kept


@pytest.mark.parametrize(("n", "human"), [
    (24, None), (30, "line three of the request"),
    (40, "line one of the request\nline two of the request\nline three of the request")])
def test_trim_takes_the_last_lines_of_a_partial_message(chars4: TokenCounter, n: int, human: str | None) -> None:
    msgs = [system("s", "sys prompt"), user("h", "line one of the request\nline two of the request\n"
                                            "line three of the request"), assistant("a", "ok then")]
    expected = [("system", "sys prompt")] + ([("human", human), ("ai", "ok then")] if human else [])
    assert _trim(msgs, n, chars4) == expected


# --- the trigger ------------------------------------------------------------------------------------------


def conversation(n: int, out: str = "o" * 40) -> list[Message]:
    msgs: list[Message] = [system("sys"), user("u0", "fix the bug")]
    for k in range(1, n + 1):
        msgs += [assistant(f"a{k}", calls=[(f"c{k}", "bash", {"k": k})]), tool(f"t{k}", f"c{k}", out)]
    return msgs


def lc(spec: str) -> LangChainSummarization:
    strat = resolve(spec).create()
    assert isinstance(strat, LangChainSummarization)
    return strat


def total(strat: LangChainSummarization, v: SessionView) -> int:
    return strat.count(strat.messages(v, 1))  # the system prompt is not state


def test_no_trigger_never_summarizes(chars4: TokenCounter) -> None:
    v = view_of(conversation(40), chars4, ModelLimits(500, 100))
    assert v.context_tokens > 500
    assert lc("langchain").before_step(v) == ()
    assert LangChainParams().trigger == "" and LangChainParams().keep == "messages:20"


@pytest.mark.parametrize(("delta", "fires"), [(-1, True), (0, True), (1, False)])
def test_tokens_trigger_is_reached(chars4: TokenCounter, delta: int, fires: bool) -> None:
    v = view_of(conversation(12), chars4)
    n = total(lc("langchain"), v)
    assert bool(lc(f"langchain:trigger=tokens:{n + delta}").before_step(v)) is fires


@pytest.mark.parametrize(("count", "fires"), [(24, True), (25, True), (26, False)])
def test_messages_trigger_counts_state_messages(chars4: TokenCounter, count: int, fires: bool) -> None:
    v = view_of(conversation(12), chars4)  # u0 + 24 = 25 state messages (the system prompt is not one)
    assert bool(lc(f"langchain:trigger=messages:{count}").before_step(v)) is fires


def test_and_within_a_clause_or_across_clauses(chars4: TokenCounter) -> None:
    v = view_of(conversation(12), chars4)
    n = total(lc("langchain"), v)
    assert not lc(f"langchain:trigger=tokens:{n}&messages:26").before_step(v)
    assert lc(f"langchain:trigger=tokens:{n}&messages:25").before_step(v)
    assert lc(f"langchain:trigger=tokens:{n + 1}|messages:25").before_step(v)
    assert not lc(f"langchain:trigger=tokens:{n + 1}|messages:26").before_step(v)


@pytest.mark.parametrize(("offset", "fires"), [(-1, True), (0, True), (1, False)])
def test_fraction_of_the_max_input_truncates(chars4: TokenCounter, offset: int, fires: bool) -> None:
    n = total(lc("langchain"), view_of(conversation(12), chars4))
    # a window whose int(window * 0.3) is the threshold wanted while rounding would give one more
    limit = next(x for x in range(n, 4 * n) if int(x * 0.3) == n + offset and x * 0.3 - (n + offset) > 0.5)
    v = view_of(conversation(12), chars4, ModelLimits(limit, 100))
    assert bool(lc("langchain:trigger=fraction:0.3").before_step(v)) is fires


def test_the_last_reported_usage_also_triggers(chars4: TokenCounter) -> None:
    v = view_of(conversation(12), chars4)
    strat = lc("langchain:trigger=tokens:5000")
    assert total(strat, v) < 5_000 and strat.before_step(v) == ()
    v2 = view_of(conversation(12)[:-1], chars4)
    strat.after_step(v2, Usage(input=4_990, output=10))  # a12's reported total_tokens: 5,000
    assert strat.before_step(v)


# --- keep, the cutoff, the summary ------------------------------------------------------------------------


def test_keep_twenty_messages_and_never_split_a_call_from_its_result(chars4: TokenCounter) -> None:
    v = view_of(conversation(12), chars4)  # state: u0 a1 t1 ... a12 t12; 25 - 20 = 5 -> t3: back to a3
    (c,) = lc("langchain:trigger=messages:1").before_step(v)
    assert isinstance(c, Compact)
    assert c.new_view[:2] == (Keep("sys"), Insert("user", "Here is a summary of the conversation to date:\n\n",
                                                  with_summary=True, origin="summary"))
    assert [k.id for k in c.new_view[2:] if isinstance(k, Keep)][:2] == ["a3", "t3"]
    assert len(c.new_view) == 2 + 20 and c.on_failure == "unchanged"


def test_keep_tokens_binary_search(chars4: TokenCounter) -> None:
    v = view_of(conversation(12), chars4)
    strat = lc("langchain:trigger=messages:1,keep=tokens:100")
    (c,) = strat.before_step(v)
    assert isinstance(c, Compact)
    kept = [k.id for k in c.new_view[2:] if isinstance(k, Keep)]
    tail = strat.messages(v, 1)[-len(kept):]
    assert count_tokens_approximately(tail) <= 100 < count_tokens_approximately(strat.messages(v, 1)[-len(kept) - 2:])
    assert kept[0].startswith("a")


def test_summary_request_is_the_prompt_over_the_trimmed_span(chars4: TokenCounter) -> None:
    msgs = [system("sys"), user("u0", "first"), assistant("a1", "one"), user("u1", "second"), assistant("a2", "two"),
            user("u2", "third")]
    v = view_of(msgs, chars4)
    (c,) = lc("langchain:trigger=messages:1,keep=messages:1").before_step(v)
    assert isinstance(c, Compact) and c.request is not None and c.summary_text == ""
    (prompt,) = c.request.prompt
    span = lc("langchain").messages(v, 1)[:-1]
    assert prompt.role == "user" and prompt.text == DEFAULT_SUMMARY_PROMPT.format(messages=buffer_string_xml(span))
    assert [m.id for m in c.request.source] == ["u0", "a1", "u1", "a2"]
    assert [k.id for k in c.new_view if isinstance(k, Keep)] == ["sys", "u2"]


def test_the_span_without_a_human_message_in_its_last_4000_tokens_is_too_long(chars4: TokenCounter) -> None:
    v = view_of(conversation(12, out="o" * 16_000), chars4)  # one-line results of over 4,000 tokens each
    (c,) = lc("langchain:trigger=messages:1").before_step(v)
    assert isinstance(c, Compact) and c.request is None
    assert c.summary_text == "Previous conversation was too long to summarize."
    (c,) = lc("langchain:trigger=messages:1,trim_tokens_to_summarize=none").before_step(v)
    assert isinstance(c, Compact) and c.request is not None and c.request.source[0].id == "u0"


def test_replay_final_view_and_failure(chars4: TokenCounter) -> None:
    t = transcript(*conversation(12), assistant("end"))
    tr = run(t, lc("langchain:trigger=messages:25"), chars4, summarizer=MockSummarizer("S"))
    assert tr.compactions and tr.compactions[0].ok and tr.compactions[0].step == 12
    assert tr.final_view[:2] == ("sys", "compbench:1:1:summary") and tr.final_view[-1] == "end"
    failed = run(t, lc("langchain:trigger=messages:25"), chars4, summarizer=MockSummarizer(error="boom"))
    assert failed.compactions and not failed.compactions[0].ok
    assert failed.final_view == tuple(m.id for m in t.messages)


def test_presets_and_bad_specs() -> None:
    assert resolve("langchain:preset=docs").params.trigger == "tokens:4000"
    assert resolve("langchain:preset=docs").params.keep == "messages:20"
    assert resolve("langchain:preset=anthropic").params.chars_per_token == 3.3
    for bad in ("trigger=tokens", "trigger=bytes:3", "trigger=fraction:1.5", "keep=messages:2|tokens:3",
                "trigger=messages:2.5", "summary_prompt=no placeholder"):
        with pytest.raises(UsageError):
            resolve(f"langchain:{bad}")
