"""``compbench.store.reader`` — The one reader of a finished run directory: compare, gate, tune, judge, summary and
report read through it.

:meth:`Run.open` checks that a path is a finished run (and says what it is instead, in one line: a dataset,
an interrupted run, nothing), reads the manifest at any version this compbench knows (upgrading it;
refusing a newer one), and gives each table with its declared schema (:mod:`compbench.store.tables`), so a table
that is empty, or absent from an old run, still has every column, and an older run's table the columns added
since (:func:`compbench.store.manifest.upgrade_table`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compbench.errors import UsageError
from compbench.store.manifest import FORMAT_VERSION, MANIFEST, Manifest, upgrade_table
from compbench.store.tables import TABLES, empty


def check_run_dir(run: Path) -> None:
    """``run`` must be a finished run directory; say what it is instead, in one line, before any work."""
    from compbench.data.dataset import is_dataset

    if (run / MANIFEST).is_file():
        return
    if is_dataset(run):
        raise UsageError(f"{run} is a dataset, not a run: replay it first (`compbench run {run} --out RUN`), "
                         "then give RUN")
    if run.with_name(run.name + ".partial").is_dir():
        raise UsageError(f"{run} is an interrupted run: finish it with `compbench run --resume {run}` first")
    if not run.exists():
        raise UsageError(f"{run}: no such run directory")
    raise UsageError(f"{run} is not a run directory (no {MANIFEST}); give the --out of `compbench run`")


@dataclass(frozen=True)
class Run:
    """A finished run: where it is and its manifest (upgraded to the current format)."""

    path: Path
    manifest: Manifest

    @classmethod
    def open(cls, path: str | Path) -> Run:
        p = Path(path)
        check_run_dir(p)
        return cls(p, Manifest.load(p / MANIFEST))

    @property
    def dataset(self) -> str:
        """Where the replayed dataset was when the run was made."""
        return self.manifest.dataset.path

    @property
    def summarizer(self) -> str:
        return str(self.manifest.spec.get("summarizer", "?"))

    def table(self, name: str, columns: Sequence[str] | None = None) -> Any:
        """The table as a pandas DataFrame with its declared columns (``columns``: only those)."""
        import pandas as pd
        import pyarrow.parquet as pq

        if name not in TABLES:
            raise UsageError(f"a run has no table {name!r} (tables: {', '.join(TABLES)})")
        p = self.path / f"{name}.parquet"
        if p.exists():
            with pq.ParquetFile(p) as f:
                rows = f.metadata.num_rows
            if rows and self.manifest.written_as == FORMAT_VERSION:
                return pd.read_parquet(p, columns=list(columns) if columns is not None else None)
            if rows:  # an older run's: the columns added since, as its version's upgrade says
                frame = upgrade_table(name, pd.read_parquet(p), self.manifest.written_as)
                return frame[list(columns)] if columns is not None else frame
        table = empty(name)  # no rows (a version 1 run wrote an empty table with one column): the declared ones
        frame = table.to_pandas()
        return frame[list(columns)] if columns is not None else frame

    def results(self) -> Any:
        return self.table("results")
