"""The example strategy (strategies/example_keep_last.py), tested as its author would: through compbench.testing
only. Its trigger at, below and above the boundary; what it keeps (the system prompt, never a tool result without
its call); its wake at each side of the trigger, and exact on the samples; its presets by version; and that it is
listed as an example, never in a run of every strategy nor a tool's own strategy."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from compbench.sdk import Compact, Insert, Keep, Message, ModelLimits, Text, Usage, Wake, resolve
from compbench.sdk.registry import get, own_strategy, runnable
from compbench.strategies.example_keep_last import KeepLast, KeepLastParams, version_preset
from compbench.testing import (
    acted,
    assert_wake_exact,
    assistant,
    compactions,
    counter,
    replay,
    tool,
    transcript,
    user,
    view,
)

CHARS = counter("chars4")  # a quarter of the characters: the counts below need no tokenizer file


def system(text: str = "You are a coding agent.") -> Message:
    return Message("sys", "system", (Text(text),))


def session(turns: int) -> list[Message]:
    """A system prompt, then per turn a user message, a tool call and its result, and a reply."""
    out = [system()]
    for k in range(turns):
        out += [user(f"u{k}", f"step {k}: look at file{k}.py " + "x" * 200),
                assistant(f"a{k}", calls=[(f"c{k}", "read", {"path": f"file{k}.py"})]),
                tool(f"t{k}", f"c{k}", "y" * 400), assistant(f"r{k}", "done " * 20)]
    return out


@pytest.mark.parametrize(("offset", "acts"), [(-1, True), (0, True), (1, False)])
def test_it_compacts_from_its_trigger_on(offset: int, acts: bool) -> None:
    messages = session(5)
    v = view(messages, counting=CHARS)
    s = KeepLast(KeepLastParams(keep=4, trigger=v.context_tokens + offset))
    actions = s.before_step(v)
    assert bool(actions) is acts
    assert s.after_step(v, Usage(input=v.context_tokens, output=10)) == ()  # it decides before a call only


def test_it_keeps_the_system_prompt_and_the_last_messages_behind_one_summary() -> None:
    messages = session(5)
    (a,) = KeepLast(KeepLastParams(keep=4, trigger=1)).before_step(view(messages, counting=CHARS))
    assert isinstance(a, Compact) and a.request is not None
    assert a.new_view[0] == Keep("sys")
    assert isinstance(a.new_view[1], Insert) and a.new_view[1].with_summary and a.new_view[1].origin == "summary"
    assert [s.id for s in a.new_view[2:] if isinstance(s, Keep)] == [m.id for m in messages[-4:]]
    assert [m.id for m in a.request.source] == [m.id for m in messages[1:-4]]  # the span summarized


@pytest.mark.parametrize(("keep", "kept"), [(1, ["r2"]), (2, ["a2", "t2", "r2"]), (3, ["a2", "t2", "r2"]),
                                            (4, ["u2", "a2", "t2", "r2"])])
def test_a_tool_result_never_loses_its_call(keep: int, kept: list[str]) -> None:
    """keep=2 would start the kept tail at a tool result: the cut moves back to its call."""
    messages = session(3)
    (a,) = KeepLast(KeepLastParams(keep=keep, trigger=1)).before_step(view(messages, counting=CHARS))
    assert isinstance(a, Compact)
    assert [s.id for s in a.new_view if isinstance(s, Keep)] == ["sys", *kept]


def test_nothing_to_summarize_is_no_action() -> None:
    messages = [system(), user("u0")]
    assert KeepLast(KeepLastParams(keep=4, trigger=1)).before_step(view(messages, counting=CHARS)) == ()


@pytest.mark.parametrize(("offset", "expected"), [(1, "tokens"), (0, "entries"), (-1, "entries")])
def test_its_wake_below_and_over_the_trigger(offset: int, expected: str) -> None:
    """Under the trigger it wakes when the context reaches it; over it (too little to cut), at the next
    message."""
    messages = [system(), user("u0")]
    v = view(messages, counting=CHARS)
    trigger = v.context_tokens + offset
    w = KeepLast(KeepLastParams(keep=4, trigger=trigger)).wake(v)
    assert w == (Wake(tokens=trigger) if expected == "tokens" else Wake(entries=3))


def test_a_replay_compacts_and_keeps_going() -> None:
    t = transcript(*session(30), id="hand-made")
    trace = replay("example-keep-last:preset=1.2,trigger=3000", t, limits=ModelLimits(64_000, 4_096))
    assert acted(trace) == len(compactions(trace)) >= 2
    assert trace.final_view[0] == "sys" and trace.final_view[-1] == "r29"
    low = replay("example-keep-last:preset=1.2,trigger=3000000", t, limits=ModelLimits(64_000, 4_096))
    assert acted(low) == 0  # a trigger the session never reaches


@pytest.mark.parametrize(("version", "preset"), [("1.9.9", "1.2"), ("2.0", "2.0"), ("2.0.1", "2.0"),
                                                 ("v1.2 (beta)", "1.2"), ("dev", None)])
def test_presets_by_the_recorded_version(version: str, preset: str | None) -> None:
    assert version_preset(version) == preset


def test_a_log_of_its_tool_replays_at_its_versions_preset() -> None:
    c = resolve("example-keep-last")
    old = transcript(user("u"), id="old", tool_version="1.4.0")
    new = transcript(user("u"), id="new", tool_version="2.3.0")
    other = transcript(user("u"), id="pi", source="pi", tool_version="1.4.0")
    assert c.for_log(old)[0].params == KeepLastParams()
    assert c.for_log(new)[0].params == KeepLastParams(keep=4, trigger=40_000)
    assert c.for_log(other)[0].params == KeepLastParams(keep=4, trigger=40_000)  # not its tool's: the newest
    tool_ = get("example-keep-last").tool
    assert tool_ is not None and tool_.settings[0].paste(20_000) == "export MYTOOL_COMPACT_AT=20000"


def test_its_wake_is_exact_on_the_samples() -> None:
    assert_wake_exact("example-keep-last")
    assert_wake_exact("example-keep-last:preset=1.2", limits=ModelLimits(32_000, 4_096))


def test_it_is_an_example_listed_but_never_in_a_run_of_every_strategy() -> None:
    from compbench.cli import cli

    assert get("example-keep-last").example and "example-keep-last" not in runnable()
    assert own_strategy("compbench") is None  # an example is no tool's own strategy
    out = CliRunner().invoke(cli, ["strategies", "list"])
    line = next(x for x in out.output.splitlines() if x.startswith("example-keep-last"))
    assert "[example: not in a run of every strategy]" in line
    shown = CliRunner().invoke(cli, ["strategies", "show", "example-keep-last"]).output
    assert "an example for strategy authors" in shown and "Messages kept verbatim" in shown
