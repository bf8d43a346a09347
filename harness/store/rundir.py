"""``compbench.store.rundir`` — The run directory: written incrementally, resumable after a crash, renamed into place
when complete.

While a run is going, its rows go to ``OUT.partial/``: every batch of :data:`BATCH` transcripts is
written as one parquet part per table (temporary file, then rename) and *committed* by a small batch
record written last. Memory holds one batch, so it does not grow with the dataset. A resumed run re-reads
the committed batches, checks that the spec and the dataset are the same, skips what is done and goes on.
At the end the parts are concatenated (one row group per part) into the final tables, ``manifest.json`` is
written, and the directory is renamed to ``OUT``. Batch boundaries do not depend on ``--workers`` or on
interruptions, so every way of producing a run gives the same bytes.

The store writes what it is given; the replays that produce it are :mod:`compbench.run.write`'s.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from compbench.errors import UsageError
from compbench.store.columns import Table
from compbench.store.manifest import FORMAT_VERSION, Manifest
from compbench.store.tables import TABLES, conform, empty

RUN_FORMAT_VERSION = FORMAT_VERSION  # compbench.store.manifest: the layout this writer makes
BATCH = 16
ROW_GROUP_ROWS = 8_192  # rows per row group of a finished table (measured: 64k-row groups of facts cost 50 MB)


def _atomic_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def partial_of(out: Path) -> Path:
    return out.with_name(out.name + ".partial")


def committed_batches(partial: Path) -> list[dict[str, Any]]:
    d = partial / "batches"
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(d.glob("*.json"))] if d.is_dir() else []


def interrupted(out: Path) -> tuple[dict[str, Any], int]:
    """What an interrupted run was started with (its identity: spec, dataset, batch size, format) and how
    many transcripts it has committed; the run's own words if there is none."""
    out = Path(out)
    partial = partial_of(out)
    if (out / "manifest.json").exists() and not partial.exists():
        raise UsageError(f"{out} is already complete; nothing to resume")
    if not (partial / "spec.json").exists():
        raise UsageError(f"{out}: no interrupted run to resume (no {partial.name}/spec.json)")
    identity = json.loads((partial / "spec.json").read_text(encoding="utf-8"))
    return identity, sum(len(b["ids"]) for b in committed_batches(partial))


class RunDir:
    """One run directory being written: opened (new, or resumed with the same identity), fed batch by batch,
    finalized into place. :attr:`done` lists the transcripts a resumed run has already committed."""

    def __init__(self, out: Path, identity: Mapping[str, Any], *, force: bool = False, resume: bool = False) -> None:
        self.out = Path(out)
        self.partial = partial_of(self.out)
        self.resume = resume
        identity = json.loads(json.dumps(identity))  # as it reads back from spec.json
        if resume:
            if (self.out / "manifest.json").exists() and not self.partial.exists():
                raise UsageError(f"{self.out} is already complete; nothing to resume")
            if not (self.partial / "spec.json").exists():
                raise UsageError(f"{self.out}: no interrupted run to resume (no {self.partial.name}/spec.json)")
            if json.loads((self.partial / "spec.json").read_text(encoding="utf-8")) != identity:
                raise UsageError(f"cannot resume {self.out}: it was started with other options or another dataset")
        else:
            if self.out.exists() and not force:
                raise UsageError(f"{self.out} exists; choose another --out, or pass --force to replace it")
            if self.partial.exists() and not force:
                raise UsageError(f"{self.out} has an interrupted run ({self.partial.name}); pass --resume "
                                 f"{self.out} to continue it, or --force to start again")
            shutil.rmtree(self.partial, ignore_errors=True)
            for sub in ("batches", *(f"parts/{t}" for t in TABLES)):
                (self.partial / sub).mkdir(parents=True)
            _atomic_text(self.partial / "spec.json", json.dumps(identity, sort_keys=True))
        self.committed = committed_batches(self.partial)
        self.done = [tid for b in self.committed for tid in b["ids"]]
        self._drop_uncommitted()

    def _drop_uncommitted(self) -> None:
        """Parts a batch wrote before it was stopped short of its record: the batch that takes its number may
        have no rows in some table, and a part left there would add the lost batch's rows to the run."""
        n = len(self.committed)
        for sub in ("batches", *(f"parts/{t}" for t in TABLES)):
            for p in (self.partial / sub).glob("*"):
                if p.name.startswith(".") or int(p.name.split(".")[0]) >= n:
                    p.unlink()

    def abandon(self) -> None:
        """A new run that stopped on a user mistake: nothing to resume, so nothing is left behind."""
        if not self.resume:
            shutil.rmtree(self.partial, ignore_errors=True)

    def commit(self, record: Mapping[str, Any], rows: Mapping[str, Table]) -> None:
        """One batch: its tables' parts, then its record (``ids``, ``hashes``, ``errors``), the commit point."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        n = len(self.committed)
        for k in TABLES:
            if rows[k].rows:
                dest = self.partial / "parts" / k / f"{n:06d}.parquet"
                tmp = dest.with_name(f".{dest.name}.tmp")
                pq.write_table(pa.Table.from_pydict(rows[k].columns), tmp, compression="zstd")
                tmp.replace(dest)
        _atomic_text(self.partial / "batches" / f"{n:06d}.json", json.dumps(record))  # the commit point
        self.committed.append(dict(record))
        self.done.extend(record["ids"])

    def table(self, name: str) -> Any:
        """The rows of table ``name`` committed so far, as a pandas DataFrame (what a run decides on mid-way: the
        settings to add to its sweep)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        parts = []
        for path in sorted((self.partial / "parts" / name).glob("*.parquet")):
            with pq.ParquetFile(path) as f:
                parts.append(conform(name, f.read()))
        return (pa.concat_tables(parts) if parts else empty(name)).to_pandas()

    def finalize(self, manifest: Callable[[list[dict[str, Any]]], Manifest]) -> Manifest:
        """The final tables, then the manifest ``manifest(committed batches)`` makes, then the rename."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        final = self.partial / "final"
        shutil.rmtree(final, ignore_errors=True)
        final.mkdir()
        for k in TABLES:
            paths = sorted((self.partial / "parts" / k).glob("*.parquet"))
            if not paths:
                pq.write_table(empty(k), final / f"{k}.parquet")  # every declared column, no row
                continue
            # the declared schema (compbench.store.tables), then parts cut into row groups of exactly ROW_GROUP_ROWS
            # rows: memory stays at one row group however long the run, the footer (one entry per row group
            # and column, held by the writer until it closes) grows with the rows rather than the number of
            # batches, and the layout does not depend on where batches (or a resume) happened to split the rows
            schema = empty(k).schema
            with pq.ParquetWriter(final / f"{k}.parquet", schema, compression="zstd") as w:
                pending: list[pa.Table] = []
                rows = 0
                for path in paths:
                    with pq.ParquetFile(path) as f:  # not pq.read_table: that loads the dataset layer (+50 MB)
                        part = f.read()
                    pending.append(conform(k, part))
                    rows += part.num_rows
                    if rows >= ROW_GROUP_ROWS:
                        table = pa.concat_tables(pending)
                        cut = rows - rows % ROW_GROUP_ROWS
                        w.write_table(table.slice(0, cut), row_group_size=ROW_GROUP_ROWS)
                        pending, rows = [table.slice(cut)], rows - cut
                if rows:
                    w.write_table(pa.concat_tables(pending), row_group_size=ROW_GROUP_ROWS)
        made = manifest(self.committed)
        _atomic_text(final / "manifest.json", made.dumps())
        if self.out.exists():
            shutil.rmtree(self.out)
        final.rename(self.out)
        shutil.rmtree(self.partial, ignore_errors=True)
        return made
