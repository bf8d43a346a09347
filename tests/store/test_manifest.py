"""The run directory on the read side: a typed, versioned manifest, declared table schemas, one reader.

``tests/fixtures/runs/v1`` is a run written by compbench before this layout (format_version 1, at commit
9b3e2b7: three synthetic sessions, ``none``, ``claude-code`` and ``truncate``, so nothing was pruned and its
``prunes`` table has the one column version 1 gave an empty table). It is a frozen artifact of an old
version, never regenerated: it stands for the runs users already have.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from compbench.cli import cli, main
from compbench.data.synth import generate
from compbench.errors import UsageError
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits
from compbench.store.manifest import FORMAT_VERSION, Manifest, upgrade
from compbench.store.reader import Run
from compbench.store.tables import TABLES, conform, names, schema
from helpers import FIXTURES

V1 = FIXTURES / "runs" / "v1"


def test_a_version_1_run_still_loads_and_is_read_as_this_version() -> None:
    run = Run.open(V1)
    assert run.manifest.format_version == FORMAT_VERSION
    spec = RunSpec.from_manifest(run.manifest.spec)
    assert spec.strategies == ("none", "claude-code", "truncate") and spec.limits == ModelLimits(6_000, 1_000)
    assert pq.read_schema(V1 / "prunes.parquet").names == ["transcript_id"]  # what version 1 wrote
    prunes = run.table("prunes")
    assert list(prunes.columns) == names("prunes") and prunes.empty  # read with the declared schema
    assert len(run.results()) == 9


def test_every_reader_takes_the_version_1_run(tmp_path: Path) -> None:
    from compbench.decide.summary import summary_table

    assert "claude-code" in summary_table(V1)
    out = CliRunner().invoke(cli, ["compare", str(V1), "--resamples", "200"])
    assert out.exit_code == 0, out.output
    gate = CliRunner().invoke(cli, ["gate", str(V1), "--min", "needed_recall=0", "--resamples", "200",
                                    "--allow-few"])  # 3 transcripts: passed, marked few
    assert gate.exit_code == 0, gate.output
    html = tmp_path / "r.html"
    assert CliRunner().invoke(cli, ["report", str(V1), "--out", str(html)]).exit_code == 0 and html.exists()


def test_a_run_from_before_token_corrections_counted_without_one() -> None:
    d = json.loads((V1 / "manifest.json").read_text(encoding="utf-8"))
    del d["spec"]["token_correction"]
    assert RunSpec.from_manifest(Manifest.from_json(d).spec).token_correction == "none"


def test_a_future_manifest_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    shutil.copytree(V1, run)
    d = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    d["format_version"] = FORMAT_VERSION + 1
    (run / "manifest.json").write_text(json.dumps(d), encoding="utf-8")
    for args in (["compare", str(run)], ["gate", str(run), "--min", "needed_recall=0"],
                 ["report", str(run), "--out", str(tmp_path / "r.html")]):
        monkeypatch.setattr("sys.argv", ["compbench", *args])
        with pytest.raises(SystemExit) as e:
            main()
        err = capsys.readouterr().err
        assert e.value.code == 2 and err.count("\n") == 1, err
        assert err == (f"error: {run / 'manifest.json'}: run format_version {FORMAT_VERSION + 1} is newer than this "
                       f"compbench reads ({FORMAT_VERSION}); upgrade compbench to read it\n")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("version", [None, 0, "2", True])
def test_a_manifest_without_a_known_version_is_refused(version: object) -> None:
    with pytest.raises(UsageError, match="no run format_version this compbench reads"):
        upgrade({"format_version": version} if version is not None else {})


def test_a_written_manifest_reads_back_as_written(tmp_path: Path) -> None:
    spec = RunSpec(strategies=("none", "claude-code"), limits=ModelLimits(6_000, 1_000), tokenizer="chars4")
    written = write_run(tmp_path / "run", spec, "synth", generate(2, seed=3, turns=20))
    assert Run.open(tmp_path / "run").manifest == written
    assert RunSpec.from_manifest(Run.open(tmp_path / "run").manifest.spec) == spec


def test_every_table_is_written_with_its_declared_schema_even_empty(tmp_path: Path) -> None:
    spec = RunSpec(strategies=("none", "claude-code"), limits=ModelLimits(6_000, 1_000), tokenizer="chars4")
    write_run(tmp_path / "run", spec, "synth", generate(2, seed=3, turns=20))
    for t in TABLES:
        assert pq.read_schema(tmp_path / "run" / f"{t}.parquet").equals(schema(t)), t
    assert pq.ParquetFile(tmp_path / "run" / "prunes.parquet").metadata.num_rows == 0  # nothing pruned


def test_a_column_nobody_declared_is_refused() -> None:
    part = pa.table({"transcript_id": ["t"], "strategy": ["s"], "surprise": [1]})
    with pytest.raises(RuntimeError, match=r"undeclared column.*surprise"):
        conform("prunes", part)
    filled = conform("prunes", pa.table({"transcript_id": ["t"], "reason": pa.nulls(1)}))
    assert filled.schema.equals(schema("prunes")) and filled.num_rows == 1  # missing ones null, types declared
