"""pipeline: stages composed in order, each acting on the view the previous ones left."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from compbench.data.transcript import ToolResult, Usage
from compbench.decide.tune import grid_specs
from compbench.errors import UsageError
from compbench.measure.tokens import TokenCounter
from compbench.replay.trajectories import replay
from compbench.replay.viewstate import ReplayConfig
from compbench.sdk.session import Action, Compact, Keep, ModelLimits, Prune, SessionView
from compbench.strategies import names, resolve, runnable
from compbench.strategies.pipeline import Pipeline
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, tool, transcript, user

BULK = "line\n" * 600  # ~750 tokens (chars/4) per output


def session(turns: int = 24) -> object:
    msgs = [user("u0", "Refactor the scheduler.")]
    for k in range(turns):
        msgs += [assistant(f"a{k}", f"Step {k}.", [(f"c{k}", "bash", {"command": f"cat f{k}.txt"})]),
                 tool(f"t{k}", f"c{k}", BULK)]
    return transcript(*msgs)


def test_spec_parsing_and_canonical_label() -> None:
    c = resolve("pipeline:stages=observation-masking>claude-code,observation-masking.keep_last_turns=5,"
                "2.preset=current")
    assert c.params.stages == ("observation-masking:keep_last_turns=5", "claude-code:preset=current")
    assert c.label == ("pipeline:claude-code.preset=current,observation-masking.keep_last_turns=5,"
                       "stages=observation-masking>claude-code")
    assert resolve(c.label).label == c.label  # the label is itself a spec that resolves to the same
    for bad, msg in (("pipeline", "needs stages"), ("pipeline:stages=nope>claude-code", "unknown strategy"),
                     ("pipeline:stages=truncate,claude-code.x=1", "no stage named"),
                     ("pipeline:stages=truncate,3.x=1", "no stage 3"),
                     ("pipeline:stages=truncate,truncate.nope=1", "unknown parameter"),
                     ("pipeline:stages=pipeline", "cannot contain")):
        with pytest.raises(UsageError, match=msg):
            resolve(bad)
    # listed, but not run by default: it needs its stages
    assert "pipeline" in names() and "pipeline" not in runnable()


def test_a_later_stage_sees_the_view_the_earlier_stage_left() -> None:
    t = session()
    counter = TokenCounter("chars4", 0)
    summarizer = MockSummarizer()
    trace = replay(t, resolve("pipeline:stages=observation-masking>claude-code,"  # type: ignore[arg-type]
                              "observation-masking.keep_last_turns=6,claude-code.preset=seed").create(),
                   summarizer, ReplayConfig(ModelLimits(5_000, 1_000)), counter)
    assert trace.prunes and trace.compactions
    # claude-code summarized a view in which masking had already replaced old outputs by placeholders
    (req, *_) = summarizer.requests
    outputs = [p.output for m in req.source for p in m.parts if isinstance(p, ToolResult)]
    assert any(o.startswith("Old environment output") for o in outputs)
    alone = replay(t, resolve("claude-code:preset=seed").create(), MockSummarizer(),  # type: ignore[arg-type]
                   ReplayConfig(ModelLimits(5_000, 1_000)), counter)
    # masking delays the summary: the pipeline compacts later than claude-code alone
    assert trace.compactions[0].step > alone.compactions[0].step


def test_manual_compact_asks_the_stage_that_has_one() -> None:
    t = session(6)
    counter = TokenCounter("chars4", 0)
    trace = replay(t, resolve("pipeline:stages=observation-masking>claude-code").create(),  # type: ignore[arg-type]
                   MockSummarizer(), ReplayConfig(ModelLimits(1_000_000, 1_000), manual_at=8), counter)
    assert [c.phase for c in trace.compactions] == ["manual"]


def test_tune_sweeps_a_stage_parameter() -> None:
    specs = grid_specs("pipeline", ["observation-masking.keep_last_turns=2,4"],
                       "stages=observation-masking>claude-code")
    assert [resolve(s).params.stages[0] for s in specs] == ["observation-masking:keep_last_turns=2",
                                                            "observation-masking:keep_last_turns=4"]
    with pytest.raises(UsageError, match="no parameter"):
        grid_specs("pipeline", ["observation-masking.nope=1"], "stages=observation-masking>claude-code")


def test_a_pipeline_is_not_taken_for_the_reference_when_its_first_stage_never_acts(tmp_path: Path) -> None:
    """Every configuration first shadows the ``none`` reference; a composed one has more stages than the
    reference asks, so it must be replayed by itself (it was scored as ``none`` when only its first stage,
    which never acts, was asked)."""
    import pandas as pd

    from compbench.data.synth import generate
    from compbench.run.spec import RunSpec
    from compbench.run.write import write_run

    spec = RunSpec(strategies=("pipeline:stages=none>truncate", "truncate"), limits=ModelLimits(6_000, 1_000),
                   tokenizer="chars4")
    write_run(tmp_path / "r", spec, "synth", iter(list(generate(2, seed=3, turns=30))))
    r = pd.read_parquet(tmp_path / "r" / "results.parquet").groupby("strategy")[["compactions", "input_tokens"]].sum()
    assert r.loc["pipeline:stages=none>truncate"].tolist() == r.loc["truncate"].tolist()
    assert r.loc["truncate", "compactions"] > 0


class MaskOddSteps:
    """Masks the newest tool output at odd steps (a stage that acts every other step)."""

    name = "mask-odd"

    def before_step(self, s: SessionView) -> Sequence[Action]:
        e = s.entries[-1]
        if s.step % 2 and e.role == "tool" and 0 not in e.pruned:
            return [Prune(((e.id, 0, "[masked]"),))]
        return ()

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()


class KeepLastTwo:
    """Compacts to the last two entries whenever there are more (a stage that always wants to act)."""

    name = "keep-two"

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if len(s.entries) <= 2:
            return ()
        return [Compact("t", tuple(Keep(e.id) for e in s.entries[-2:]))]

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()


def test_named_compositions_and_until_first() -> None:
    g = resolve("gemini-cli")  # no preset: each Gemini CLI log at its version's (the defaults model today's)
    assert g.label == "gemini-cli" and g.auto and g.params.stages == ("gemini-cli-compression", "gemini-cli-masking")
    assert [s.name for s in g.create().stages] == ["gemini-cli-compression", "gemini-cli-masking"]  # type: ignore[attr-defined]
    tuned = resolve("gemini-cli:gemini-cli-compression.preset=0.26")
    assert tuned.label == "gemini-cli:gemini-cli-compression.preset=0.26"
    assert tuned.params.stages[0] == "gemini-cli-compression:preset=0.26"
    o = resolve("openhands")
    assert o.params.until_first and o.params.stages == ("openhands-conversation-window",
                                                        "openhands-browser-output:preset=server",
                                                        "openhands-llm-summarizing:preset=server")
    assert "gemini-cli" in runnable() and "openhands" in runnable()
    # until_first: a round ends at the first stage that compacted (OpenHands' CondenserPipeline returns the first
    # Condensation); a masking stage's prune is a new view the next stage is asked about
    t = session(8)
    counter = TokenCounter("chars4", 0)
    config = ReplayConfig(ModelLimits(1_000_000, 500))
    every = replay(t, Pipeline([MaskOddSteps(), KeepLastTwo()]), MockSummarizer(), config, counter)
    first = replay(t, Pipeline([MaskOddSteps(), KeepLastTwo()], until_first=True), MockSummarizer(), config,
                   counter)
    masked = {p.step for p in first.prunes}
    assert masked and masked == {p.step for p in every.prunes}
    assert {c.step for c in first.compactions} >= masked  # the mask did not end those rounds
    assert [c.step for c in first.compactions] == [c.step for c in every.compactions]
    compacting_first = replay(t, Pipeline([KeepLastTwo(), MaskOddSteps()], until_first=True), MockSummarizer(),
                              config, counter)
    asked_after = replay(t, Pipeline([KeepLastTwo(), MaskOddSteps()]), MockSummarizer(), config, counter)
    compacted = {c.step for c in compacting_first.compactions}
    assert compacted and not {p.step for p in compacting_first.prunes} & compacted  # the compaction ended them
    assert {p.step for p in asked_after.prunes} & compacted  # without until_first the mask is asked there
