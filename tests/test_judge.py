"""The judged track end to end with a fake model through the real litellm path (cache, parsing)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace as NS
from typing import Any

from compbench.facts import Fact
from compbench.judge import DIMENSIONS, agreement, judge_event
from compbench.summarizers.llm import LLMSummarizer
from compbench.transcript import Message, Text

FACTS = [Fact("r-1", "recall", "KeyError: 'user'", ("keyerror: 'user'",), 2),
         Fact("d-1", "decision", "Never touch the migrations", ("never touch the migrations",), 0)]


class Model:
    """A perfect model: writes probes from the fact, answers only from what it is shown, grades by match."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, **kw: Any) -> Any:
        self.calls += 1
        system, prompt = kw["messages"][0]["content"], kw["messages"][-1]["content"]
        if system.startswith("You write evaluation probes"):
            fact = prompt.split("Fact the agent must still know: ", 1)[1].split("\n", 1)[0]
            text = json.dumps({"question": f"What about: {fact[:6]}?", "answer": fact})
        elif system.startswith("You are the coding agent"):
            context, question = prompt.split("\n\n---\nQuestion: ")
            key = question[len("What about: "):-1]
            hit = next((line for line in context.splitlines() if key in line), None)
            text = hit.split(": ", 1)[1] if hit else "unknown"
        else:
            ref = prompt.split("Reference answer: ")[1].split("\n")[0]
            ans = prompt.split("Agent's answer: ")[1]
            ok = ref in ans
            text = json.dumps({**{d: 5 if ok else 0 for d in DIMENSIONS}, "correct": ok})
        return NS(choices=[NS(message=NS(content=text))], usage=NS(prompt_tokens=10, completion_tokens=5))


def test_judged_correctness_agrees_with_presence_for_a_perfect_model(tmp_path: Path) -> None:
    fake = Model()
    llm = LLMSummarizer("fake-model", tmp_path, completion=fake)
    replaced = [Message("u1", "user", (Text("Never touch the migrations. KeyError: 'user' seen."),))]
    view = [Message("s", "user", (Text("Summary: we saw KeyError: 'user' in login"),))]
    rows = judge_event(llm, llm, FACTS, replaced, view, frozenset({"r-1", "d-1"}), frozenset({"r-1"}))
    by_kind = {r["kind"]: r for r in rows}
    assert by_kind["recall"]["present"] and by_kind["recall"]["correct"] is True
    assert not by_kind["decision"]["present"] and by_kind["decision"]["correct"] is False
    assert by_kind["recall"]["accuracy"] == 5.0 and by_kind["decision"]["accuracy"] == 0.0
    a = agreement(rows)
    assert a["all"] == {"probes": 2, "present": 0.5, "correct": 0.5, "agreement": 1.0}
    # the cache answers a rerun, and cache-only reproduces it without any model
    calls = fake.calls
    again = judge_event(LLMSummarizer("fake-model", tmp_path, cache_only=True), llm, FACTS, replaced, view,
                        frozenset({"r-1", "d-1"}), frozenset({"r-1"}))
    assert again == rows and fake.calls == calls


def test_malformed_model_output_is_recorded_not_raised(tmp_path: Path) -> None:
    def bad(**kw: Any) -> Any:
        return NS(choices=[NS(message=NS(content="no json here"))], usage=None)

    llm = LLMSummarizer("bad-model", tmp_path, completion=bad)
    rows = judge_event(llm, llm, FACTS, [], [], frozenset({"r-1"}), frozenset())
    assert rows[0]["error"] == "probe: malformed JSON" and rows[0]["correct"] is None
