"""deepagents (create_summarization_middleware, deepagents 0.7.32): the profile defaults (0.85 / 0.10,
no trim, 3.3 chars per token) and the no-profile preset (170k / 6 messages / truncation at 20), the
system message and tools counted, the input budget and overflow fallbacks, the summary message with the
offload path, the media-reference prompt, write_file/edit_file argument truncation."""

from __future__ import annotations

import json

import pytest

from compbench.data.transcript import Message
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits, Prune, SessionView
from compbench.strategies import resolve
from compbench.strategies.deepagents import DeepAgents, DeepAgentsParams
from compbench.strategies.langchain_messages import buffer_string_xml
from compbench.strategies.langchain_prompts import DEEPAGENTS_SUMMARY_PROMPT, DEFAULT_SUMMARY_PROMPT
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of

BIG = ModelLimits(10_000_000, 100)


def conversation(n: int) -> list[Message]:
    msgs: list[Message] = [system("sys", "S" * 400), user("u0", "fix the bug")]
    for k in range(1, n + 1):
        msgs += [assistant(f"a{k}", calls=[(f"c{k}", "bash", {"k": k})]), tool(f"t{k}", f"c{k}", "o" * 40)]
    return msgs


def da(spec: str = "deepagents") -> DeepAgents:
    strat = resolve(spec).create()
    assert isinstance(strat, DeepAgents)
    return strat


def total(strat: DeepAgents, v: SessionView) -> int:
    everything = strat.messages(v, 0)
    return strat.total(v, everything[:1], everything[1:])


def compacts(actions: object) -> list[Compact]:
    return [a for a in actions if isinstance(a, Compact)]  # type: ignore[attr-defined]


def test_defaults_for_a_model_with_a_profile_and_without() -> None:
    p = DeepAgentsParams()
    assert (p.trigger, p.keep, p.trim_tokens_to_summarize, p.chars_per_token, p.truncate_trigger, p.truncate_keep,
            p.max_arg_length, p.input_budget) == ("fraction:0.85", "fraction:0.1", None, 3.3, "fraction:0.85",
                                                   "fraction:0.1", 2_000, 0.95)
    q = resolve("deepagents:preset=no-profile").params
    assert (q.trigger, q.keep, q.truncate_trigger, q.truncate_keep, q.input_budget) == (
        "tokens:170000", "messages:6", "messages:20", "messages:20", 0.0)


@pytest.mark.parametrize(("delta", "fires"), [(-1, True), (0, True), (1, False)])
def test_trigger_counts_the_system_message_and_tools(chars4: TokenCounter, delta: int, fires: bool) -> None:
    v = view_of(conversation(8), chars4, BIG, system_tokens=50)
    n = total(da(), v)
    assert n > total(da(), view_of(conversation(8), chars4, BIG)) + 49  # the tools' 50 and the system message
    assert bool(compacts(da(f"deepagents:trigger=tokens:{n + delta},keep=messages:4").before_step(v))) is fires


@pytest.mark.parametrize(("offset", "fires"), [(-1, True), (0, True), (1, False)])
def test_fraction_trigger_at_85_percent(chars4: TokenCounter, offset: int, fires: bool) -> None:
    n = total(da(), view_of(conversation(8), chars4, BIG))
    limit = next(x for x in range(n, 2 * n) if int(x * 0.85) == n + offset)  # the threshold: n - 1, n, n + 1
    v = view_of(conversation(8), chars4, ModelLimits(limit, 0))
    assert bool(compacts(da("deepagents:input_budget=2").before_step(v))) is fires


@pytest.mark.parametrize(("output", "fires"), [(1, True), (0, False)])
def test_over_the_input_budget(chars4: TokenCounter, output: int, fires: bool) -> None:
    n = total(da(), view_of(conversation(8), chars4, BIG))
    limit = 1_000_000
    v = view_of(conversation(8), chars4, ModelLimits(limit, int(limit * 0.95) - n + output))  # budget n - output
    assert bool(compacts(da("deepagents:keep=messages:4").before_step(v))) is fires
    assert not compacts(da("deepagents:keep=messages:4,input_budget=0").before_step(v))  # no profile, no budget


def test_a_request_the_provider_would_reject_is_summarized(chars4: TokenCounter) -> None:
    v = view_of(conversation(8), chars4, ModelLimits(100, 0))
    assert v.context_tokens > 100
    assert compacts(da("deepagents:trigger=tokens:10000000,input_budget=1000").before_step(v))
    v = view_of(conversation(8), chars4, ModelLimits(v.context_tokens, 0))
    assert not compacts(da("deepagents:trigger=tokens:10000000,input_budget=1000").before_step(v))


def test_summary_message_prompt_and_whole_span(chars4: TokenCounter) -> None:
    v = view_of(conversation(8), chars4, BIG)
    (c,) = compacts(da("deepagents:trigger=messages:1,keep=messages:4").before_step(v))
    assert c.new_view[:2] == (Keep("sys"), Insert(
        "user", "You are in the middle of a conversation that has been summarized.\n\nThe full conversation history "
        "has been saved to /conversation_history/session_00000000000000000000000000000000.md should you need to "
        "refer back to it for details.\n\nA condensed summary follows:\n\n<summary>\n", "\n</summary>",
        with_summary=True, origin="summary"))
    assert [k.id for k in c.new_view[2:] if isinstance(k, Keep)] == ["a7", "t7", "a8", "t8"]
    assert c.request is not None
    assert [m.id for m in c.request.source] == ["u0"] + [f"{x}{k}" for k in range(1, 7) for x in "at"]  # untrimmed
    span = da().messages(v, 1)[:-4]
    assert c.request.prompt[0].text == DEEPAGENTS_SUMMARY_PROMPT.format(messages=buffer_string_xml(span)).rstrip()
    assert DEEPAGENTS_SUMMARY_PROMPT.count("<media_reference_information>") == 1
    assert DEEPAGENTS_SUMMARY_PROMPT.replace(DEEPAGENTS_SUMMARY_PROMPT[DEEPAGENTS_SUMMARY_PROMPT.index(
        "<media_reference_information>"):DEEPAGENTS_SUMMARY_PROMPT.index("</media_reference_information>\n\n")
        + len("</media_reference_information>\n\n")], "") == DEFAULT_SUMMARY_PROMPT


def writes(n: int, size: int) -> list[Message]:
    msgs: list[Message] = [user("u0", "write files")]
    for k in range(1, n + 1):
        msgs += [assistant(f"a{k}", calls=[(f"c{k}", "write_file", {"file_path": f"/f{k}.py", "content": "x" * size})]),
                 tool(f"t{k}", f"c{k}", "ok")]
    return msgs


@pytest.mark.parametrize(("size", "truncated"), [(2_000, False), (2_001, True)])
def test_old_write_file_arguments_are_truncated(chars4: TokenCounter, size: int, truncated: bool) -> None:
    v = view_of(writes(11, size), chars4, BIG)  # 23 messages, the newest 20 kept: a1 is older
    actions = da("deepagents:preset=no-profile").before_step(v)
    prunes = [t for a in actions if isinstance(a, Prune) for t in a.targets]
    assert not compacts(actions)
    if not truncated:
        assert prunes == []
        return
    assert prunes == [("a1", 1, json.dumps({"file_path": "/f1.py", "content": "x" * 20 + "...(argument truncated)"}))]
    assert da("deepagents:preset=no-profile,truncate_trigger=").before_step(v) == []


def test_replay_and_failure(chars4: TokenCounter) -> None:
    t = transcript(*conversation(8), assistant("end"))
    tr = run(t, da("deepagents:trigger=messages:17,keep=messages:4"), chars4, window=10_000_000,
             summarizer=MockSummarizer("S"))
    assert tr.compactions and tr.compactions[0].ok and tr.final_view[:2] == ("sys", "compbench:1:1:summary")
    failed = run(t, da("deepagents:trigger=messages:17,keep=messages:4"), chars4, window=10_000_000,
                 summarizer=MockSummarizer(error="boom"))
    assert failed.compactions and not failed.compactions[0].ok
    assert failed.final_view == tuple(m.id for m in t.messages)


# --- FilesystemMiddleware: large tool results evicted to a file (deepagents @ 23b83ad) -------------------------


def big_result(n: int, name: str = "bash") -> list[Message]:
    lines = "".join(f"row {k:07d} value\n" for k in range(n // 18 + 1))[:n]
    return [system("sys", "S" * 40), user("u0", "dump the table"),
            assistant("a1", calls=[("call.1/x", name, {"q": 1})]), tool("t1", "call.1/x", lines, name=name)]


@pytest.mark.parametrize(("extra", "evicted"), [(-1, False), (0, False), (1, True)])
def test_a_tool_result_over_80000_characters_is_evicted(chars4: TokenCounter, extra: int, evicted: bool) -> None:
    msgs = big_result(80_000 + extra)
    actions = list(da().before_step(view_of(msgs, chars4, BIG)))
    prunes = [a for a in actions if isinstance(a, Prune) and a.reason == "large tool result evicted"]
    assert bool(prunes) is evicted
    if evicted:
        ((mid, j, text),) = prunes[0].targets
        out = msgs[3].tool_results()[0].output
        rows = out.splitlines()
        assert (mid, j) == ("t1", 0)
        assert text.startswith("Tool result too large, the result of this tool call call.1/x was saved in the "
                               "filesystem at this path: /large_tool_results/call_1_x\n\n")
        # a head-and-tail preview: 5 + 5 numbered lines around the count of the rest
        assert text.endswith(f"1  {rows[0]}\n2  {rows[1]}\n3  {rows[2]}\n4  {rows[3]}\n5  {rows[4]}\n"
                             f"... [{len(rows) - 10} lines truncated] ...\n"
                             + "\n".join(f"{len(rows) - 4 + i}  {rows[-5 + i]}" for i in range(5)) + "\n")


@pytest.mark.parametrize("name", ["ls", "glob", "grep", "edit_file", "write_file", "delete", "Grep", "Glob", "Edit",
                                  "mcp__fs__list_directory"])
def test_its_own_file_tools_are_never_evicted(chars4: TokenCounter, name: str) -> None:
    """deepagents' own file tools, and another agent's tools in the same roles (by name, a heuristic)."""
    assert list(da().before_step(view_of(big_result(200_000, name), chars4, BIG))) == []
    assert list(da("deepagents:tool_token_limit_before_evict=0").before_step(
        view_of(big_result(200_000), chars4, BIG))) == []


def test_the_summarization_counts_the_evicted_result(chars4: TokenCounter) -> None:
    """The result is evicted before it joins the state: the model, and the trigger, only ever see the preview.
    A window where the raw result would pass 85% and the preview does not: no summary, one eviction."""
    msgs = big_result(400_000)
    t = transcript(*msgs, assistant("a2", "done"))
    raw = run(t, resolve("none").create(), chars4, window=10_000_000).steps[1].input
    trace = run(t, da(), chars4, window=int(raw / 0.85) - 10, max_output=100)
    assert [p.reason for p in trace.prunes] == ["large tool result evicted"] and trace.compactions == ()
    assert trace.steps[1].input < 1_000 < raw


@pytest.mark.parametrize("name", ["read_file", "Read", "view"])
@pytest.mark.parametrize(("extra", "cut"), [(-1, False), (0, True), (1, True)])
def test_a_file_read_is_cut_at_80000_characters_not_evicted(chars4: TokenCounter, name: str, extra: int,
                                                             cut: bool) -> None:
    """read_file cuts its own output (_truncate_paginated_read: unchanged under 80,000 characters, else the last
    whole line that fits with its truncation message); another agent's Read plays read_file's role: it is cut,
    never evicted (it was: the exemption matched deepagents' own names only)."""
    msgs = big_result(80_000 + extra, name)
    actions = [a for a in da().before_step(view_of(msgs, chars4, BIG)) if isinstance(a, Prune)]
    assert bool(actions) is cut and all(a.reason == "read_file's own cut at 80,000 characters" for a in actions)
    if cut:
        ((_, _, text),) = actions[0].targets
        assert "Tool result too large" not in text and len(text) <= 80_000
        assert text.endswith("split long lines.]") and "[Output was truncated due to size limits." in text
        out = msgs[3].tool_results()[0].output
        assert out.startswith(text.split("\n\n[Output was truncated")[0])


def test_another_agents_shell_output_is_evicted_as_execute_is(chars4: TokenCounter) -> None:
    actions = [a for a in da().before_step(view_of(big_result(90_000, "Bash"), chars4, BIG)) if isinstance(a, Prune)]
    ((_, _, text),) = actions[0].targets
    assert text.startswith("Tool result too large")
