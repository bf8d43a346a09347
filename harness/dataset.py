"""Datasets: imported transcripts stored as parquet through HF ``datasets``, streamed back with pyarrow.

A dataset is a directory with ``data.parquet`` (one row per transcript: summary columns plus the
whole transcript as compbench JSON, lossless) and ``dataset.json`` (format version, fingerprint, the
import errors that were skipped). It loads with ``datasets.load_dataset("parquet", ...)`` or pandas.
Reading streams row batches, so a dataset larger than memory works. Every command also accepts raw
transcript files or folders (any format): they are imported on the fly.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compbench import __version__
from compbench.errors import TranscriptError, UsageError
from compbench.transcript import ToolCall, ToolResult, Transcript, from_json, to_json

DATASET_FORMAT_VERSION = 1
DATA_FILE = "data.parquet"
META_FILE = "dataset.json"
BATCH_ROWS = 64


def is_dataset(path: str | Path) -> bool:
    p = Path(path)
    return p.is_dir() and (p / META_FILE).is_file() and (p / DATA_FILE).is_file()


def summary_row(t: Transcript, path: str = "") -> dict[str, Any]:
    """The summary columns of one transcript (everything but the payload)."""
    roles = [m.role for m in t.messages]
    recorded = [m.usage.input for m in t.messages if m.usage is not None]
    return {
        "id": t.id, "source": t.source, "path": path, "n_messages": len(t.messages),
        "n_user": roles.count("user"), "n_assistant": roles.count("assistant"), "n_tool": roles.count("tool"),
        "n_tool_calls": t.count_parts(ToolCall), "n_tool_results": t.count_parts(ToolResult),
        "n_compactions": len(t.compactions), "recorded_input_tokens": sum(recorded),
        "recorded_last_input": recorded[-1] if recorded else 0, "recorded_max_input": max(recorded, default=0),
        "model": str(t.meta.get("model") or ""), "warnings": len(t.warnings),
    }


@dataclass
class ImportReport:
    transcripts: int = 0
    formats: dict[str, int] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)


def import_paths(paths: Iterable[str | Path], fmt: str | None = None,
                 on_error: str = "fail") -> Iterator[tuple[Transcript, str] | TranscriptError]:
    """Transcripts of every file (any mix of formats); errors raise, or are yielded when skipping."""
    from compbench.formats import iter_files, read

    for f in iter_files(paths):
        try:
            for t in read(f, fmt):
                yield t, str(f)
        except TranscriptError as e:
            if on_error != "skip":
                raise
            yield e


def write_dataset(out: Path, paths: Iterable[str | Path], fmt: str | None = None, on_error: str = "fail",
                  warn: Any = None) -> ImportReport:
    """Import into ``out`` atomically: a temporary sibling directory renamed into place."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    report = ImportReport()
    tmp = out.with_name(f".{out.name}.importing")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    digest = hashlib.sha256()
    ids: set[str] = set()
    try:
        writer: Any = None
        rows: list[dict[str, Any]] = []

        def flush() -> None:
            nonlocal writer, rows
            if not rows:
                return
            table = pa.Table.from_pylist(rows, schema=writer.schema if writer else None)
            if writer is None:
                writer = pq.ParquetWriter(tmp / DATA_FILE, table.schema, compression="zstd")
            writer.write_table(table)
            rows = []

        for item in import_paths(paths, fmt, on_error):
            if isinstance(item, TranscriptError):
                report.errors.append({"file": item.path, "line": item.line, "expected": item.expected})
                if warn:
                    warn(f"skipped: {item}")
                continue
            t, src = item
            if t.id in ids:
                raise UsageError(f"{src}: transcript id {t.id!r} appears twice in the import")
            ids.add(t.id)
            payload = to_json(t)
            digest.update(hashlib.sha256(payload.encode()).digest())
            rows.append({**summary_row(t, src), "transcript": payload})
            report.transcripts += 1
            report.formats[t.source] = report.formats.get(t.source, 0) + 1
            if len(rows) >= BATCH_ROWS:
                flush()
        flush()
        if writer is None:
            raise UsageError("nothing to import: no transcript was read")
        writer.close()
        meta = {"format_version": DATASET_FORMAT_VERSION, "created_by": f"compbench {__version__}",
                "n_transcripts": report.transcripts, "formats": report.formats,
                "fingerprint": digest.hexdigest(), "errors": report.errors}
        (tmp / META_FILE).write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        _swap(tmp, out)
        return report
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _swap(tmp: Path, out: Path) -> None:
    """Put the new dataset in place. Files a user keeps beside the data (gold_facts.jsonl, SOURCES.md)
    carry over; the old directory is moved aside before the rename, so ``out`` is never half-written."""
    if out.exists():
        if not is_dataset(out) and any(out.iterdir()):
            raise UsageError(f"{out} exists and is not a compbench dataset; choose another --out")
        for extra in out.iterdir():
            if extra.name not in (DATA_FILE, META_FILE) and extra.is_file():
                shutil.copy2(extra, tmp / extra.name)
        old = out.with_name(f".{out.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        out.rename(old)
        tmp.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        tmp.rename(out)


def _check_meta(path: Path) -> dict[str, Any]:
    try:
        meta: dict[str, Any] = json.loads((path / META_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise TranscriptError(path / META_FILE, None, f"a readable dataset manifest ({e})") from None
    if meta.get("format_version", 0) > DATASET_FORMAT_VERSION:
        raise TranscriptError(path / META_FILE, None, f"dataset format_version <= {DATASET_FORMAT_VERSION}")
    return meta


def iter_transcripts(path: str | Path) -> Iterator[Transcript]:
    """Stream the transcripts of a dataset directory, or import raw files/folders on the fly."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{p}: no such dataset, file or directory")
    if not is_dataset(p):
        from compbench.formats import read_all

        yield from read_all([p])
        return
    import pyarrow.parquet as pq

    _check_meta(p)
    pf = pq.ParquetFile(p / DATA_FILE)
    for batch in pf.iter_batches(batch_size=BATCH_ROWS, columns=["transcript"]):
        for payload in batch.column(0).to_pylist():
            try:
                yield from_json(payload)
            except (KeyError, TypeError, ValueError) as e:
                raise TranscriptError(p / DATA_FILE, None, f"a valid transcript row ({e})") from None


def load_summary(path: str | Path) -> Any:
    """The summary columns as a pandas DataFrame (the transcript payloads are not loaded)."""
    import pandas as pd

    p = Path(path)
    if is_dataset(p):
        import pyarrow.parquet as pq

        cols = [c for c in pq.ParquetFile(p / DATA_FILE).schema_arrow.names if c != "transcript"]
        return pd.read_parquet(p / DATA_FILE, columns=cols)
    return pd.DataFrame([summary_row(t) for t in iter_transcripts(p)])


def fingerprint(path: str | Path) -> str | None:
    p = Path(path)
    if is_dataset(p):
        return str(_check_meta(p).get("fingerprint"))
    return None
