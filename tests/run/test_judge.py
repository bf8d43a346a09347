"""The judged track end to end with a fake model through the real litellm path (cache, parsing)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace as NS
from typing import Any

from compbench.data.facts import Fact
from compbench.data.transcript import Message, Text
from compbench.run.judge import DIMENSIONS, agreement, choose_probes, head_and_tail, judge_event, judge_run
from compbench.summarizers.llm import LLMSummarizer

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
            text = (hit.split(": ", 1)[1] if ": " in hit else hit) if hit else "unknown"
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


def test_the_answering_model_sees_the_summary_at_the_head_of_a_long_view() -> None:
    summary = Message("s", "user", (Text("Summary: the flaky test is tests/test_sync.py::test_retry"),))
    filler = [Message(f"m{i}", "assistant", (Text(f"step {i} " + "x" * 400),)) for i in range(200)]
    last = Message("last", "user", (Text("Now what?"),))
    text = head_and_tail([summary, *filler, last], 24_000)
    assert len(text) <= 24_000
    assert text.startswith("USER: Summary: the flaky test") and text.endswith("USER: Now what?")
    assert "message(s) omitted" in text and "step 199" in text and "step 100 " not in text
    # a view that fits is given whole
    assert head_and_tail([summary, last], 24_000) == "USER: Summary: the flaky test is tests/test_sync.py::test_retry" \
        "\n\nUSER: Now what?"
    # a head message longer than the head's share is cut at its end, never dropped
    big = Message("b", "user", (Text("Summary: " + "y" * 30_000),))
    assert head_and_tail([big, last], 1_000).startswith("USER: Summary: yyy")


def test_probes_come_from_the_facts_needed_after_the_event() -> None:
    facts = [Fact("r-a", "recall", "a", ("a",)), Fact("r-b", "recall", "b", ("b",)),
             Fact("d-a", "decision", "d", ("d",)), Fact("c-a", "continuation", "c", ("c",))]
    chosen = choose_probes(facts, frozenset({"r-a", "r-b", "d-a", "c-a"}), {"r-b": 3, "r-a": 1, "d-a": 1})
    assert [(f.id, needed) for f, needed in chosen] == [("r-b", True), ("d-a", True), ("c-a", False)]


def test_judge_run_end_to_end_offline(tmp_path: Path) -> None:
    """A real run on synthetic sessions, judged through the litellm path with a fake model and a cache
    folder, then again from that cache alone (cache-only): the same rows, no model call."""
    from compbench.data.synth import generate
    from compbench.run.spec import RunSpec
    from compbench.run.write import write_run
    from compbench.sdk.session import ModelLimits

    data = list(generate(2, seed=5, turns=30, log_lines=30, code_lines=30))
    spec = RunSpec(strategies=("claude-code",), limits=ModelLimits(6_000, 1_000), tokenizer="chars4")
    run = tmp_path / "run"
    write_run(run, spec, "synth", data)
    (tmp_path / "data").mkdir()
    from compbench.data.formats.native import write

    write(data, tmp_path / "data" / "synth.jsonl")
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["dataset"]["path"] = str(tmp_path / "data")
    (run / "manifest.json").write_text(json.dumps(manifest))
    fake = Model()
    llm = LLMSummarizer("fake-model", tmp_path / "cache", completion=fake)
    rows = judge_run(run, llm, llm, max_events=3)
    assert rows and {r["transcript_id"] for r in rows} <= {t.id for t in data}
    assert all(not r["error"] for r in rows) and any(r["needed"] for r in rows)
    assert {r["kind"] for r in rows} >= {"recall", "decision"}
    calls = fake.calls
    cached = LLMSummarizer("fake-model", tmp_path / "cache", cache_only=True)
    assert judge_run(run, cached, cached, max_events=3) == rows and fake.calls == calls


def test_judge_replays_the_run_with_the_run_s_summaries(tmp_path: Path, monkeypatch: Any) -> None:
    """The calibrated summarizer reads each transcript's facts from the replay context: judge opens one as the
    run does, so the compactions it probes are the run's, summary for summary."""
    import pandas as pd

    from compbench.data.formats.native import write
    from compbench.data.synth import generate
    from compbench.replay import trajectories
    from compbench.run.spec import RunSpec
    from compbench.run.write import write_run
    from compbench.sdk.session import ModelLimits

    data = list(generate(2, seed=5, turns=30, log_lines=30, code_lines=30))
    (tmp_path / "data").mkdir()
    write(data, tmp_path / "data" / "synth.jsonl")
    spec = RunSpec(strategies=("claude-code", "pi:keep_recent_tokens=1500,reserve_tokens=1500"),
                   limits=ModelLimits(6_000, 1_000), tokenizer="chars4")
    write_run(tmp_path / "run", spec, str(tmp_path / "data"), iter(data))
    seen: dict[tuple[str, str], list[str]] = {}
    real = trajectories.replay

    def replay(t: Any, strategy: Any, *a: Any, **k: Any) -> Any:
        trace = real(t, strategy, *a, **k)
        seen[(t.id, strategy.name)] = [c.summary for c in trace.compactions]
        return trace

    monkeypatch.setattr(trajectories, "replay", replay)
    llm = LLMSummarizer("fake-model", tmp_path / "cache", completion=Model())
    judge_run(tmp_path / "run", llm, llm, max_events=1)
    run = pd.read_parquet(tmp_path / "run" / "compactions.parquet")
    run["name"] = run["strategy"].str.split(":").str[0]
    assert seen and all(list(run[(run.transcript_id == t) & (run.name == s)]["summary"]) == summaries
                        for (t, s), summaries in seen.items())
