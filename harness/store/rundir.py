"""``compbench.store.rundir`` — The run directory: written incrementally, resumable after a crash, renamed into place
when complete.

While a run is going, its rows go to ``OUT.partial/``: every batch of :data:`BATCH` transcripts is
written as one parquet part per table (temporary file, then rename) and *committed* by a small batch
record written last. Memory holds one batch, so it does not grow with the dataset. ``--resume``
re-reads the committed batches, checks that the spec and the dataset are the same, skips what is done
and goes on. At the end the parts are concatenated (one row group per part) into the final tables,
``manifest.json`` is written, and the directory is renamed to ``OUT``. Batch boundaries do not depend
on ``--workers`` or on interruptions, so every way of producing a run gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from compbench import __version__
from compbench.data.transcript import Transcript, to_json
from compbench.errors import CompbenchError, UsageError
from compbench.replay.rows import Table
from compbench.replay.runs import RunSpec, replay_all, versions
from compbench.store.manifest import FORMAT_VERSION, DatasetRef, Manifest, StrategyRecord
from compbench.store.tables import TABLES, conform, empty
from compbench.strategies import resolve

RUN_FORMAT_VERSION = FORMAT_VERSION  # compbench.store.manifest: the layout this writer makes
BATCH = 16
ROW_GROUP_ROWS = 8_192  # rows per row group of a finished table (measured: 64k-row groups of facts cost 50 MB)


def _atomic_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _partial(out: Path) -> Path:
    return out.with_name(out.name + ".partial")


def _committed(partial: Path) -> list[dict[str, Any]]:
    d = partial / "batches"
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(d.glob("*.json"))] if d.is_dir() else []


def recorded(out: Path) -> tuple[RunSpec, str, int]:
    """What an interrupted run was started with: its spec, its dataset, and how many transcripts it has
    committed (``run --resume`` takes its options from here; the run's own words if it cannot)."""
    out = Path(out)
    partial = _partial(out)
    if (out / "manifest.json").exists() and not partial.exists():
        raise UsageError(f"{out} is already complete; nothing to resume")
    if not (partial / "spec.json").exists():
        raise UsageError(f"{out}: no interrupted run to resume (no {partial.name}/spec.json)")
    identity = json.loads((partial / "spec.json").read_text(encoding="utf-8"))
    done = sum(len(b["ids"]) for b in _committed(partial))
    return RunSpec.from_manifest(identity["spec"]), str(identity["dataset"]), done


def _skip_done(transcripts: Iterable[Transcript], done: list[str]) -> Iterator[Transcript]:
    it = iter(transcripts)
    for expected in done:
        t = next(it, None)
        if t is None or t.id != expected:
            raise UsageError(f"cannot resume: the dataset changed since the run started (expected transcript "
                             f"{expected!r}, found {t.id if t else 'the end of the dataset'!r})")
    yield from it


def _batches(items: Iterable[tuple[Transcript, Any]]) -> Iterator[list[tuple[Transcript, Any]]]:
    batch: list[tuple[Transcript, Any]] = []
    for item in items:
        batch.append(item)
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def summarizer_limit(summarizer: str) -> str:
    """The method limit of the run's own summarizer, in words (a calibrated run is not an extractive one)."""
    from compbench.decide.summary import describe_summarizer

    return f"Summaries by {describe_summarizer(summarizer)}."


def write_run(out: Path, spec: RunSpec, dataset: str, transcripts: Iterable[Transcript], workers: int = 1,
              progress: Callable[[str], None] | None = None, force: bool = False,
              resume: bool = False, executor: str = "local", concurrency: int = 1,
              ray_address: str | None = None) -> Manifest:
    """Replay ``transcripts`` and write the run directory ``out``; returns the manifest."""
    out = Path(out)
    partial = _partial(out)
    identity = json.loads(json.dumps(  # as it reads back from spec.json
        {"spec": spec.manifest(), "dataset": dataset, "batch": BATCH, "format_version": RUN_FORMAT_VERSION}))
    if resume:
        if (out / "manifest.json").exists() and not partial.exists():
            raise UsageError(f"{out} is already complete; nothing to resume")
        if not (partial / "spec.json").exists():
            raise UsageError(f"{out}: no interrupted run to resume (no {partial.name}/spec.json)")
        if json.loads((partial / "spec.json").read_text(encoding="utf-8")) != identity:
            raise UsageError(f"cannot resume {out}: it was started with other options or another dataset")
    else:
        if out.exists() and not force:
            raise UsageError(f"{out} exists; choose another --out, or pass --force to replace it")
        if partial.exists() and not force:
            raise UsageError(f"{out} has an interrupted run ({partial.name}); pass --resume {out} to continue it, "
                             "or --force to start again")
        shutil.rmtree(partial, ignore_errors=True)
        for sub in ("batches", *(f"parts/{t}" for t in TABLES)):
            (partial / sub).mkdir(parents=True)
        _atomic_text(partial / "spec.json", json.dumps(identity, sort_keys=True))
    try:
        return _replay(out, partial, spec, dataset, transcripts, workers, progress, executor, concurrency,
                       ray_address)
    except CompbenchError:
        if not resume:  # a user mistake, not a crash: nothing to resume, so nothing is left behind
            shutil.rmtree(partial, ignore_errors=True)
        raise


def _replay(out: Path, partial: Path, spec: RunSpec, dataset: str, transcripts: Iterable[Transcript],
            workers: int, progress: Callable[[str], None] | None, executor: str, concurrency: int,
            ray_address: str | None) -> Manifest:
    """Replay what is not committed yet, a batch at a time, then finalize. A crash or kill leaves
    ``OUT.partial`` for ``--resume``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    committed = _committed(partial)
    done = [tid for b in committed for tid in b["ids"]]
    n = len(committed)
    replays = replay_all(spec, _skip_done(transcripts, done), workers, progress, executor, concurrency, ray_address)
    for batch in _batches(replays):
        record: dict[str, Any] = {"ids": [], "hashes": [], "errors": []}
        rows = {k: Table() for k in TABLES}
        for t, result in batch:
            record["ids"].append(t.id)
            record["hashes"].append(hashlib.sha256(to_json(t).encode()).hexdigest())
            if isinstance(result, str):
                record["errors"].append({"transcript_id": t.id, "error": result})
                continue
            for k in TABLES:
                rows[k].merge(result[k])
        for k in TABLES:
            if rows[k].rows:
                dest = partial / "parts" / k / f"{n:06d}.parquet"
                tmp = dest.with_name(f".{dest.name}.tmp")
                pq.write_table(pa.Table.from_pydict(rows[k].columns), tmp, compression="zstd")
                tmp.replace(dest)
        _atomic_text(partial / "batches" / f"{n:06d}.json", json.dumps(record))  # the commit point
        committed.append(record)
        n += 1
    if not committed:
        raise UsageError(f"no transcripts in {dataset}")
    return _finalize(out, partial, spec, dataset, committed)


def _finalize(out: Path, partial: Path, spec: RunSpec, dataset: str, committed: list[dict[str, Any]]) -> Manifest:
    import pyarrow as pa
    import pyarrow.parquet as pq

    final = partial / "final"
    shutil.rmtree(final, ignore_errors=True)
    final.mkdir()
    for k in TABLES:
        paths = sorted((partial / "parts" / k).glob("*.parquet"))
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
    fingerprint = hashlib.sha256("".join(h for b in committed for h in b["hashes"]).encode()).hexdigest()
    manifest = Manifest(
        format_version=RUN_FORMAT_VERSION, compbench_version=__version__,
        created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),  # the one field that varies
        dataset=DatasetRef(dataset, fingerprint, sum(len(b["ids"]) for b in committed)),
        spec=json.loads(json.dumps(spec.manifest())),  # as it reads back
        strategies=tuple(StrategyRecord(c.label, c.name, c.info.source, c.param_dict())
                         for c in (resolve(s) for s in spec.strategies)),
        errors=tuple(e for b in committed for e in b["errors"]),
        environment={"python": platform.python_version(), **versions()},
        method_limits=("The replay assumes the agent would have acted the same after a compaction.",
                       summarizer_limit(spec.summarizer)))
    _atomic_text(final / "manifest.json", manifest.dumps())
    if out.exists():
        shutil.rmtree(out)
    final.rename(out)
    shutil.rmtree(partial, ignore_errors=True)
    return manifest
