"""An inferred compaction (no marker in the log: a fall of the recorded prompt the ``recorded`` row infers, or one
the importer inferred, ``RecordedCompaction.meta["inferred"]``) is flagged wherever its figures appear (issue 40):
``datasets inspect``'s compactions column, ``fidelity``'s trigger and cause, the run's ``recorded_inferred``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from compbench.data.formats import read
from compbench.data.formats.native import to_jsonl
from compbench.data.transcript import Message, Text, Transcript, Usage
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits
from helpers import FIXTURES, main_cli

GEMINI = FIXTURES / "gemini-cli" / "session-2025-11-20T15-00-eeee5555.json"  # one compression, inferred on import


def usage_log(id: str, prompts: list[int]) -> Transcript:
    """A log that marks no compaction, its calls' recorded prompts ``prompts``."""
    return Transcript(id, "copilot", tuple(m for k, p in enumerate(prompts) for m in (
        Message(f"u{k}", "user", (Text(f"step {k} " + "word " * 20),)),
        Message(f"a{k}", "assistant", (Text(f"done {k}"),), usage=Usage(input=p)))))


FALL = [30_000, 40_000, 30_000, 31_000]  # -25% and -10,000 from 40,000, staying down: one inferred compaction
NO_FALL = [30_000, 40_000, 30_100, 30_200]  # -24.75%: just under a quarter, none


def test_the_run_counts_the_inferred_compactions_the_recorded_row_replays(tmp_path: Path) -> None:
    ts = [usage_log("fall", FALL), usage_log("steady", NO_FALL), *read(GEMINI)]
    write_run(tmp_path / "run", RunSpec(strategies=("none", "recorded"), limits=ModelLimits(1_000_000, 8_000),
                                        tokenizer="chars4"), "hand-made", ts)
    results = pd.read_parquet(tmp_path / "run" / "results.parquet")
    got = {(r.transcript_id[:8], r.strategy): r.recorded_inferred for r in results.itertuples()}
    gemini = ts[2].id[:8]
    assert got == {("fall", "none"): 0, ("fall", "recorded"): 1, ("steady", "none"): 0, ("steady", "recorded"): 0,
                   (gemini, "none"): 0, (gemini, "recorded"): 1}
    assert str(results["recorded_inferred"].dtype) == "int64"


def test_inspect_says_how_many_compactions_are_inferred(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    for t in (usage_log("fall", FALL), usage_log("steady", NO_FALL)):
        (tmp_path / f"{t.id}.jsonl").write_text(to_jsonl(t))
    code, out, _ = main_cli(capsys, monkeypatch, "datasets", "inspect", tmp_path / "fall.jsonl",
                            tmp_path / "steady.jsonl", GEMINI, "--tokenizer", "chars4")
    assert code == 0
    cmp = {line.split()[0][:8]: line.split("  ")[-2].strip() for line in out.splitlines()[1:4]}
    assert cmp == {"fall": "1 (1 inferred)", "steady": "0", "eeee5555": "1 (1 inferred)"}
    code, out, _ = main_cli(capsys, monkeypatch, "datasets", "inspect", tmp_path / "fall.jsonl", "--format", "json")
    (row,) = json.loads(out)["transcripts"]
    assert (row["n_compactions"], row["n_inferred"]) == (0, 1) and "cmp" not in row


def test_fidelity_marks_an_inferred_compaction_in_its_trigger_and_cause() -> None:
    from compbench.validation.fidelity import fidelity

    rows = fidelity(read(GEMINI), tokenizer="chars4")
    assert rows and all(r.trigger == "unknown (inferred)" for r in rows)
    assert all(r.cause.startswith("inferred: the log holds no marker of this compaction (") for r in rows)
