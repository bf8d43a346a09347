"""Every executor gives the same tables, byte for byte: local, processes, threads, Ray."""

from __future__ import annotations

from pathlib import Path

import pytest

from compbench.data.synth import generate
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits

TABLES = ("results", "steps", "compactions", "prunes", "facts")
SPEC = RunSpec(strategies=("none",), limits=ModelLimits(6_000, 1_000), tokenizer="chars4")


def run(out: Path, **kw: object) -> dict[str, bytes]:
    write_run(out, SPEC, "synth:3", generate(20, seed=3, turns=14, log_lines=10, code_lines=10), **kw)  # type: ignore[arg-type]
    return {t: (out / f"{t}.parquet").read_bytes() for t in TABLES}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    return run(tmp_path_factory.mktemp("ref") / "run")


def test_threads_match(reference: dict[str, bytes], tmp_path: Path) -> None:
    assert run(tmp_path / "t", executor="threads", concurrency=4) == reference


def test_ray_matches(reference: dict[str, bytes], tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'compbench[ray]')")
    assert run(tmp_path / "r", executor="ray", workers=2) == reference
