"""A run stopped by SIGINT or SIGTERM finishes the transcripts in hand, writes every one it reported replayed, says
the command that resumes it, and the resumed run writes the tables an uninterrupted run writes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from compbench.cli import cli

CLI = [sys.executable, "-c", "from compbench.cli import main; main()"]
TABLES = ("results", "steps", "compactions", "prunes", "facts")
OPTIONS = ["--strategy", "none", "--strategy", "truncate", "--strategy", "observation-masking", "--context-window",
           "3000", "--tokenizer", "chars4", "--summarizer", "extractive", "--no-cache"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("data") / "synth"
    r = CliRunner().invoke(cli, ["datasets", "synth", "--n", "40", "--turns", "24", "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


@pytest.fixture(scope="module")
def reference(dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ref") / "run"
    p = subprocess.run([*CLI, "run", str(dataset), *OPTIONS, "--out", str(out)], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    return out


def tables(d: Path) -> dict[str, bytes]:
    return {t: (d / f"{t}.parquet").read_bytes() for t in TABLES}


@pytest.mark.parametrize(("signum", "workers"), [(signal.SIGTERM, 1), (signal.SIGINT, 2)])
def test_a_signal_writes_what_was_replayed_and_the_resumed_run_is_the_same(
        dataset: Path, reference: Path, tmp_path: Path, signum: signal.Signals, workers: int) -> None:
    out = tmp_path / "run"
    p = subprocess.Popen([*CLI, "run", str(dataset), *OPTIONS, "--workers", str(workers), "--out", str(out)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "COMPBENCH_PROGRESS_SECONDS": "0"})
    assert p.stderr is not None
    seen = 0
    for line in p.stderr:  # a line per transcript: stop once a few are reported, mid-batch (BATCH is 16)
        m = re.match(r"replayed (\d+)/40", line)
        if m and int(m.group(1)) >= 3:
            seen = int(m.group(1))
            break
    assert seen, "the run ended before it could be interrupted"
    p.send_signal(signum)
    rest = p.stderr.read()
    assert p.wait(timeout=600) == 128 + signum, rest
    assert f"resume with: compbench run --resume {out}" in rest
    written = int(re.search(r"([\d,]+) transcripts written", rest).group(1).replace(",", ""))  # type: ignore[union-attr]
    last = max([seen, *(int(n) for n in re.findall(r"replayed (\d+)/40", rest))])
    partial = out.with_name("run.partial")
    committed = sum(len(json.loads(b.read_text())["ids"]) for b in (partial / "batches").glob("*.json"))
    assert not out.exists() and committed == written >= last  # every transcript reported replayed is kept
    assert written < 40, "the signal stopped nothing"
    r = subprocess.run([*CLI, "run", "--resume", str(out), "--workers", str(workers)], capture_output=True, text=True,
                       timeout=600, env={**os.environ, "COMPBENCH_PROGRESS_SECONDS": "0"})
    assert r.returncode == 0, r.stderr
    assert f"replayed {written + 1}/40" in r.stderr  # resumed after every transcript written
    assert tables(out) == tables(reference)
    assert not partial.exists() and not list(tmp_path.glob("*.partial"))


def test_parts_of_a_batch_cut_short_are_not_taken_into_the_run(tmp_path: Path) -> None:
    """A kill between a batch's parts and its record leaves parts no record names: the resumed run drops them
    (a table the next batch has no rows in would otherwise keep the lost batch's)."""
    from compbench.store.columns import Table
    from compbench.store.rundir import RunDir
    from compbench.store.tables import TABLES as ALL

    identity = {"spec": {}, "dataset": "d", "batch": 16, "format_version": 2}
    store = RunDir(tmp_path / "r", identity)
    rows = {k: Table() for k in ALL}
    rows["prunes"].append({"transcript_id": "a", "strategy": "s", "seq": 1})
    store.commit({"ids": ["a"], "hashes": ["h"], "errors": []}, rows)
    orphan = tmp_path / "r.partial" / "parts" / "prunes" / "000001.parquet"
    orphan.write_bytes((tmp_path / "r.partial" / "parts" / "prunes" / "000000.parquet").read_bytes())
    (tmp_path / "r.partial" / "parts" / "prunes" / ".000002.parquet.tmp").write_bytes(b"half")
    resumed = RunDir(tmp_path / "r", identity, resume=True)
    assert resumed.done == ["a"] and not orphan.exists()
    assert [p.name for p in (tmp_path / "r.partial" / "parts" / "prunes").iterdir()] == ["000000.parquet"]


def test_after_a_kill_9_the_resumed_run_reads_what_was_replayed_from_the_cache(
        dataset: Path, reference: Path, tmp_path: Path) -> None:
    """SIGKILL leaves no time to write: the batch in hand is lost from the run directory, not from the results
    cache, which has each transcript from the moment it was replayed."""
    out = tmp_path / "run"
    cached = [x for x in OPTIONS if x != "--no-cache"]
    env = {**os.environ, "COMPBENCH_PROGRESS_SECONDS": "0", "COMPBENCH_CACHE_DIR": str(tmp_path / "cache")}
    p = subprocess.Popen([*CLI, "run", str(dataset), *cached, "--out", str(out)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, env=env)
    assert p.stderr is not None
    seen = 0
    for line in p.stderr:
        m = re.match(r"replayed (\d+)/40", line)
        if m and int(m.group(1)) >= 5:
            seen = int(m.group(1))
            break
    assert seen, "the run ended before it could be killed"
    p.kill()
    p.wait(timeout=600)
    partial = out.with_name("run.partial")
    committed = sum(len(json.loads(b.read_text())["ids"]) for b in (partial / "batches").glob("*.json"))
    r = subprocess.run([*CLI, "run", "--resume", str(out)], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    read = int(re.search(r"results cache: ([\d,]+) transcripts read", r.stderr).group(1))  # type: ignore[union-attr]
    assert read >= seen - committed
    assert tables(out) == tables(reference)
