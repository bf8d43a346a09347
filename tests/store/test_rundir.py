"""Runs survive kill -9: resume continues from the last committed batch and ends byte-identical."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent('''
    import sys
    from pathlib import Path
    from compbench.run.write import write_run
    from compbench.run.spec import RunSpec
    from compbench.sdk.session import ModelLimits
    from compbench.data.synth import generate

    out, resume, workers = Path(sys.argv[1]), sys.argv[2] == "resume", int(sys.argv[3])
    spec = RunSpec(strategies=("none",), limits=ModelLimits(8_000, 1_000), tokenizer="chars4")
    write_run(out, spec, "synth:7", generate(72, seed=7, turns=30, log_lines=40, code_lines=60),
              workers=workers, resume=resume)
''')
TABLES = ("results", "steps", "compactions", "prunes", "facts")


def run(tmp: Path, out: Path, mode: str, workers: int = 1) -> subprocess.Popen[bytes]:
    script = tmp / "go.py"
    script.write_text(SCRIPT)
    return subprocess.Popen([sys.executable, str(script), str(out), mode, str(workers)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def tables(d: Path) -> dict[str, bytes]:
    return {t: (d / f"{t}.parquet").read_bytes() for t in TABLES}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("ref")
    p = run(tmp, tmp / "ref", "new")
    assert p.wait(timeout=300) == 0, p.stderr.read() if p.stderr else ""
    return tmp / "ref"


def test_kill_9_then_resume_gives_identical_tables(reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    p = run(tmp_path, out, "new")
    second_batch = tmp_path / "run.partial" / "batches" / "000001.json"
    deadline = time.time() + 120
    while not second_batch.exists() and p.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    assert p.poll() is None, "the run finished before it could be killed; make the dataset larger"
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    assert not out.exists() and second_batch.exists()
    r = run(tmp_path, out, "resume")
    assert r.wait(timeout=300) == 0, r.stderr.read() if r.stderr else ""
    assert tables(out) == tables(reference)
    assert not (tmp_path / "run.partial").exists()


def test_workers_give_identical_tables(reference: Path, tmp_path: Path) -> None:
    p = run(tmp_path, tmp_path / "w2", "new", workers=2)
    assert p.wait(timeout=300) == 0, p.stderr.read() if p.stderr else ""
    assert tables(tmp_path / "w2") == tables(reference)


def test_resume_refuses_a_changed_spec(tmp_path: Path) -> None:
    from compbench.data.synth import generate
    from compbench.errors import UsageError
    from compbench.run.spec import RunSpec
    from compbench.run.write import write_run
    from compbench.sdk.session import ModelLimits

    (tmp_path / "r.partial").mkdir()
    (tmp_path / "r.partial" / "spec.json").write_text('{"spec": {}}')
    spec = RunSpec(strategies=("none",), limits=ModelLimits(8_000, 1_000), tokenizer="chars4")
    with pytest.raises(UsageError, match="started with other options"):
        write_run(tmp_path / "r", spec, "x", generate(1), resume=True)
    with pytest.raises(UsageError, match=r"has an interrupted run \(r.partial\); pass --resume .* to continue it"):
        write_run(tmp_path / "r", spec, "x", generate(1))


def test_finished_tables_are_cut_into_fixed_row_groups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Row groups hold exactly ROW_GROUP_ROWS rows (the last the remainder), whatever the batches were:
    the footer stays small on long runs and a different batch split cannot change the file's bytes."""
    import pyarrow.parquet as pq

    from compbench.data.synth import generate
    from compbench.run import write
    from compbench.run.spec import RunSpec
    from compbench.sdk.session import ModelLimits
    from compbench.store import rundir

    spec = RunSpec(strategies=("none", "truncate"), limits=ModelLimits(8_000, 1_000), tokenizer="chars4")
    monkeypatch.setattr(rundir, "ROW_GROUP_ROWS", 7)
    written = {}
    for batch in (16, 5):
        monkeypatch.setattr(rundir, "BATCH", batch)
        out = tmp_path / f"b{batch}"
        write.write_run(out, spec, "synth:3", generate(20, seed=3, turns=8))
        written[batch] = tables(out)
        meta = pq.ParquetFile(out / "steps.parquet").metadata
        sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
        assert meta.num_rows > 7 * 3
        assert sizes[:-1] == [7] * (len(sizes) - 1) and 0 < sizes[-1] <= 7
    assert written[16] == written[5]
