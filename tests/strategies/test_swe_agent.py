"""swe-agent (SWE-agent 3ea751c087f3 LastNObservations): the omit range with polling, the first observation
kept, the placeholder, keep/remove tags, SWE-agent's message types, replay."""

from __future__ import annotations

import pytest

from compbench.data.transcript import Media, Message, Text, ToolResult
from compbench.errors import UsageError
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Prune
from compbench.strategies import resolve
from compbench.strategies.swe_agent import SweAgent, SweAgentParams
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of


def steps(k: int, **meta: object) -> list[Message]:
    """The task, then k - 1 steps each with an observation of j lines (observation j = t{j})."""
    msgs: list[Message] = [system(), user("task", "fix the bug\nin parser.py")]
    for j in range(1, k):
        msgs += [assistant(f"a{j}", calls=[(f"c{j}", "bash", {})]), tool(f"t{j}", f"c{j}", "\n".join(["l"] * j))]
    return msgs


def elided(strat: SweAgent, msgs: list[Message], counter: TokenCounter) -> list[str]:
    return [t[0] for a in strat.before_step(view_of(msgs, counter)) if isinstance(a, Prune) for t in a.targets]


@pytest.mark.parametrize(("k", "gone"), [(6, []), (7, ["t1"]), (9, ["t1", "t2", "t3"])])
def test_all_but_the_last_n_and_never_the_first(chars4: TokenCounter, k: int, gone: list[str]) -> None:
    assert elided(SweAgent(SweAgentParams(n=5)), steps(k), chars4) == gone


@pytest.mark.parametrize(("k", "gone"), [(7, []), (8, []), (9, ["t1", "t2", "t3"]), (11, ["t1", "t2", "t3"]),
                                         (12, ["t1", "t2", "t3", "t4", "t5", "t6"])])
def test_polling_moves_the_cut_every_polling_observations(chars4: TokenCounter, k: int, gone: list[str]) -> None:
    # last_removed = (k // 3) * 3 - 5
    assert elided(SweAgent(SweAgentParams(n=5, polling=3)), steps(k), chars4) == gone


def test_placeholder_counts_lines_and_images(chars4: TokenCounter) -> None:
    msgs = steps(7)
    msgs[3] = Message("t1", "tool", (ToolResult("c1", "bash", "one\ntwo\r\nthree"), Media("image", "image/png"),
                                     Text("extra line")))
    (p,) = SweAgent(SweAgentParams()).before_step(view_of(msgs, chars4))
    assert isinstance(p, Prune) and p.targets == (
        ("t1", 0, "Old environment output: (4 lines omitted) (1 images omitted)"), ("t1", 1, ""), ("t1", 2, ""))
    assert SweAgent(SweAgentParams()).before_step(view_of(steps(7), chars4))[0].targets == (  # type: ignore[union-attr]
        ("t1", 0, "Old environment output: (1 lines omitted)"),)


def test_each_observation_elided_once(chars4: TokenCounter) -> None:
    strat = SweAgent(SweAgentParams())
    assert elided(strat, steps(7), chars4) == ["t1"]
    assert elided(strat, steps(7), chars4) == []
    assert elided(strat, steps(8), chars4) == ["t2"]


def tagged(msgs: list[Message], id: str, tag: str) -> list[Message]:
    return [Message(m.id, m.role, m.parts, m.usage, {**m.meta, "tags": [tag]}) if m.id == id else m for m in msgs]


def test_keep_and_remove_tags(chars4: TokenCounter) -> None:
    msgs = tagged(tagged(steps(8), "t1", "keep_output"), "t6", "remove_output")
    assert elided(SweAgent(SweAgentParams()), msgs, chars4) == ["t6", "t2"]  # t6 recent but removed, t1 kept
    msgs = tagged(steps(3), "task", "remove_output")
    assert elided(SweAgent(SweAgentParams()), msgs, chars4) == ["task"]  # even the first
    custom = SweAgent(SweAgentParams(keep_tags=("pin",), remove_tags=()))
    assert elided(custom, tagged(tagged(steps(8), "t1", "pin"), "t6", "remove_output"), chars4) == ["t2"]


def test_swe_agent_message_types_and_demonstrations(chars4: TokenCounter) -> None:
    def m(id: str, role: str, kind: str, **more: object) -> Message:
        text = "x\ny"
        parts = (ToolResult("c", "bash", text),) if role == "tool" else (Text(text),)
        return Message(id, role, parts, meta={"message_type": kind, **more})  # type: ignore[arg-type]

    msgs = [m("sys", "system", "system_prompt"), m("demo", "user", "demonstration", demo=True),
            m("inst", "user", "observation")]
    for j in range(1, 8):
        msgs += [m(f"a{j}", "assistant", "action"), m(f"o{j}", "tool" if j % 2 else "user", "observation")]
    assert elided(SweAgent(SweAgentParams()), msgs, chars4) == ["o1", "o2"]  # 8 observations: [1:3]


def test_presets_and_validation() -> None:
    assert resolve("swe-agent:preset=seed").params == SweAgentParams(5, 1, ("keep_output",), ("remove_output",))
    assert resolve("swe-agent:preset=polling").params.polling == 5
    with pytest.raises(UsageError, match="n=0 is below its minimum 1"):  # param(lo=1): tests/strategies/test_bounds.py
        resolve("swe-agent:n=0")


def test_replay_masks_and_never_summarizes(chars4: TokenCounter) -> None:
    t = transcript(*steps(20), assistant("end"))
    summ = MockSummarizer()
    tr = run(t, resolve("swe-agent:preset=seed").create(), chars4, summarizer=summ)
    assert tr.compactions == () and summ.requests == []
    assert [p.parts for p in tr.prunes][:2] == [(("t1", 0),), (("t2", 0),)]
    polled = run(t, resolve("swe-agent:preset=polling").create(), chars4)
    assert len(polled.prunes) < len(tr.prunes)  # the cut moves every 5 observations: fewer cache breaks
    assert sum(s.cache_read for s in polled.steps) > sum(s.cache_read for s in tr.steps)
