"""A run's configurations share one trajectory while they act alike, and a tuning grid's go on sharing
theirs after acting (``Replayer._trajectories``, :mod:`compbench.replay.branch`): the tables must be
byte-identical to replaying every configuration by itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from compbench.data.importing import iter_transcripts
from compbench.data.synth import generate
from compbench.decide.tune import grid_specs
from compbench.replay import branch, trajectories
from compbench.run import engine as runs
from compbench.run.engine import TABLES
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits
from helpers import ROOT

GRID = [
    *grid_specs("opencode", ["protect=2000,10000,40000", "minimum=1000,20000"]),
    *grid_specs("opencode", ["protect=5000,40000"], fixed="preset=current,prune=true"),
    *grid_specs("pi", ["keep_recent_tokens=2000,8000,20000"]),
    *grid_specs("codex", ["auto_compact_token_limit=10000,20000,none"]),
    *grid_specs("round-chained", ["recent_messages_to_keep=4,10"], fixed="preset=window"),  # compacts at 24k
    "claude-code", "claude-code:preset=current", "truncate", "none",
]


def tables(out: Path) -> dict[str, bytes]:
    return {k: (out / f"{k}.parquet").read_bytes() for k in TABLES}


@pytest.mark.parametrize(("source", "summarizer"), [("synth", "extractive"), ("samples", "extractive"),
                                                    ("synth", "mock")])
def test_shared_replays_give_the_tables_of_separate_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         source: str, summarizer: str) -> None:
    """With the mock summarizer (not pure) only the ``none`` reference is shadowed; the grid is not."""
    data = (list(generate(6, seed=4, turns=40)) if source == "synth"
            else list(iter_transcripts(ROOT / "datasets" / "samples"))[:6])
    spec = RunSpec(strategies=tuple(GRID), limits=ModelLimits(24_000, 4_096), tokenizer="o200k_base",
                   summarizer=summarizer)
    calls = {"n": 0, "trajectories": 0}
    real = trajectories.replay
    real_branch = branch.Branch.run

    def counting(*a: object, **k: object) -> trajectories.Trace:
        calls["n"] += 1
        return real(*a, **k)  # type: ignore[arg-type]

    def trajectory(self: branch.Branch, *a: object) -> None:
        calls["trajectories"] += 1
        real_branch(self, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(runs, "replay", counting)
    monkeypatch.setattr(branch.Branch, "run", trajectory)
    held: list[int] = []  # values cached in the run's context when a transcript's replays end
    real_run = runs.Replayer._run

    def run(self: runs.Replayer, t: object) -> object:
        try:
            return real_run(self, t)  # type: ignore[arg-type]
        finally:
            held.append(self.context.size())

    monkeypatch.setattr(runs.Replayer, "_run", run)
    write_run(tmp_path / "shared", spec, source, iter(data))
    assert all(n > 0 for n in held)  # the replays shared work through the run's context
    assert calls["n"] == 0  # one replay of all configurations together, forked where they act otherwise
    shared_calls = calls["trajectories"]
    monkeypatch.setattr(runs, "SHARE_REPLAYS", False)
    calls["n"] = 0
    write_run(tmp_path / "alone", spec, source, iter(data))
    assert calls["n"] == len(data) * len(GRID)  # + the reference, minus the "none" configuration: same count
    # the grid really shared most trajectories (not with the mock summarizer: each that acts has its own)
    assert shared_calls < calls["n"] * (0.75 if summarizer != "mock" else 1)
    assert tables(tmp_path / "shared") == tables(tmp_path / "alone")


def test_the_replay_context_forgets_each_transcript() -> None:
    """Nothing derived from a transcript outlives it: the run's context is empty between transcripts."""
    data = list(generate(2, seed=4, turns=40))
    r = runs.Replayer(RunSpec(strategies=("round-chained:preset=window", "pi"), limits=ModelLimits(24_000, 4_096),
                               summarizer="extractive"))
    for t in data:
        r.run(t)
        assert r.context.size() == 0 and r.context.transcript is None


@pytest.mark.parametrize("source", ["synth", "samples"])
def test_every_strategy_forked_from_the_reference_gives_its_own_replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      source: str) -> None:
    """Every runnable strategy (compositions too: they follow the reference with all their stages) forks
    from the ``none`` trajectory at its first action; its tables are those of its replay from the start."""
    from compbench.strategies import runnable

    if source == "synth":
        data = list(generate(4, seed=7, turns=40))
    else:  # the smallest samples of each format
        data = sorted(iter_transcripts(ROOT / "datasets" / "samples"), key=lambda t: len(t.messages))[:5]
    spec = RunSpec(strategies=tuple(runnable()), limits=ModelLimits(12_000, 2_048), tokenizer="o200k_base",
                   summarizer="calibrated")
    write_run(tmp_path / "shared", spec, source, iter(data))
    monkeypatch.setattr(runs, "SHARE_REPLAYS", False)
    write_run(tmp_path / "alone", spec, source, iter(data))
    assert tables(tmp_path / "shared") == tables(tmp_path / "alone")
