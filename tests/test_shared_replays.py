"""A tuning grid's configurations share replays while they act alike (``Replayer._trajectories``):
the tables must be byte-identical to replaying every configuration by itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from compbench.data.dataset import iter_transcripts
from compbench.data.synth import generate
from compbench.decide.tune import grid_specs
from compbench.replay import loop, runs
from compbench.replay.runs import TABLES, RunSpec
from compbench.replay.session import ModelLimits
from compbench.store.rundir import write_run

ROOT = Path(__file__).resolve().parent.parent

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
    calls = {"n": 0}
    real = loop.replay

    def counting(*a: object, **k: object) -> loop.Trace:
        calls["n"] += 1
        return real(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(runs, "replay", counting)
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
    shared_calls = calls["n"]
    monkeypatch.setattr(runs, "SHARE_REPLAYS", False)
    calls["n"] = 0
    write_run(tmp_path / "alone", spec, source, iter(data))
    assert calls["n"] == len(data) * len(GRID)  # + the reference, minus the "none" configuration: same count
    assert shared_calls < calls["n"] * 0.75  # the grid really shared most replays
    assert tables(tmp_path / "shared") == tables(tmp_path / "alone")


def test_the_replay_context_forgets_each_transcript() -> None:
    """Nothing derived from a transcript outlives it: the run's context is empty between transcripts."""
    data = list(generate(2, seed=4, turns=40))
    r = runs.Replayer(RunSpec(strategies=("round-chained:preset=window", "pi"), limits=ModelLimits(24_000, 4_096),
                               summarizer="extractive"))
    for t in data:
        r.run(t)
        assert r.context.size() == 0 and r.context.transcript is None
