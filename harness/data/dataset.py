"""``compbench.data.dataset`` — Datasets: imported transcripts stored as parquet that HF ``datasets`` and pandas load,
streamed back.

A dataset is a directory with ``data.parquet`` (one row per transcript: summary columns plus the
whole transcript as compbench JSON, lossless) and ``dataset.json`` (format version, fingerprint, the
import errors that were skipped). ``datasets.load_dataset("parquet", data_files=...)`` and
``pandas.read_parquet`` both read it. Rows are written in bounded row groups and read back in small
batches, so neither an import nor a replay holds the whole dataset in memory. Every command also accepts
raw transcript files or folders (any format): they are imported on the fly.

pyarrow, pandas and datasets are imported inside functions: ``import compbench`` must stay light.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compbench import __version__
from compbench.data.transcript import ToolCall, ToolResult, Transcript, from_json, to_json
from compbench.errors import TranscriptError, UsageError

DATASET_FORMAT_VERSION = 1
COMPANIONS = frozenset({"gold_facts.jsonl", "SOURCES.md", "README.md"})  # files a dataset directory may carry
DATA_FILE = "data.parquet"
META_FILE = "dataset.json"
# A row group is flushed at whichever comes first: memory during an import stays near ROW_GROUP_BYTES
# plus one transcript, and a reader never has to decode more than one row group at a time.
ROW_GROUP_ROWS = 64
ROW_GROUP_BYTES = 64 * 2**20
READ_BATCH_ROWS = 8  # transcripts decoded per batch when streaming

# column -> arrow type name; the transcript payload is ``large_string`` (64-bit offsets: one real
# transcript may be hundreds of MiB, see formats.DEFAULT_MAX_TRANSCRIPT_MB).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "string"), ("source", "string"), ("path", "string"),
    ("n_messages", "int64"), ("n_user", "int64"), ("n_assistant", "int64"), ("n_tool", "int64"),
    ("n_tool_calls", "int64"), ("n_tool_results", "int64"), ("n_compactions", "int64"),
    ("recorded_input_tokens", "int64"), ("recorded_last_input", "int64"), ("recorded_max_input", "int64"),
    ("model", "string"), ("n_warnings", "int64"), ("transcript", "large_string"),
)
SUMMARY_COLUMNS = tuple(name for name, _ in COLUMNS if name != "transcript")

Warn = Callable[[str], None]


def is_dataset(path: str | Path) -> bool:
    p = Path(path)
    return p.is_dir() and (p / META_FILE).is_file() and (p / DATA_FILE).is_file()


def summary_row(t: Transcript, path: str = "") -> dict[str, Any]:
    """The summary columns of one transcript (everything but the payload).

    ``recorded_input_tokens`` sums ``Usage.input`` over the messages that carry usage (the prompt tokens
    the real tool paid for); the last and the largest recorded prompt describe how full the window got.
    """
    roles = [m.role for m in t.messages]
    recorded = [m.usage.input for m in t.messages if m.usage is not None]
    model = t.meta.get("model")
    return {
        "id": t.id, "source": t.source, "path": path, "n_messages": len(t.messages),
        "n_user": roles.count("user"), "n_assistant": roles.count("assistant"), "n_tool": roles.count("tool"),
        "n_tool_calls": t.count_parts(ToolCall), "n_tool_results": t.count_parts(ToolResult),
        "n_compactions": len(t.compactions), "recorded_input_tokens": sum(recorded),
        "recorded_last_input": recorded[-1] if recorded else 0, "recorded_max_input": max(recorded, default=0),
        "model": model if isinstance(model, str) else "", "n_warnings": len(t.warnings),
    }


def fingerprint_of(payloads: Iterable[str]) -> str:
    """sha256 of the transcript JSON texts in order, each followed by a newline.

    ``to_json`` never emits a raw newline, so the separator is unambiguous; anyone can recompute it
    from the ``transcript`` column. No timestamps or paths enter it: same transcripts, same fingerprint.
    """
    digest = hashlib.sha256()
    for payload in payloads:
        digest.update(payload.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


@dataclass
class ImportReport:
    transcripts: int = 0
    formats: dict[str, int] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)  # unreadable files skipped
    skipped_lines: list[dict[str, Any]] = field(default_factory=list)  # broken lines skipped (skip-lines)
    merged: list[dict[str, Any]] = field(default_factory=list)  # sessions imported as part of their continuation
    notes: list[str] = field(default_factory=list)
    unsupported: list[dict[str, str]] = field(default_factory=list)  # known tools' files no importer reads
    fingerprint: str = ""


def _check_out(out: Path, force: bool) -> None:
    """Refuse before importing anything, rather than after minutes of work."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is a file; --out must be a dataset directory")
    if out.is_dir() and not is_dataset(out) and any(f.name not in COMPANIONS for f in out.iterdir()):
        raise UsageError(f"{out} exists and is not a compbench dataset; choose another --out")
    if is_dataset(out) and not force:
        raise UsageError(f"{out} is already a dataset; choose another --out, or pass --force to replace it")


def write_dataset(out: Path, paths: Iterable[str | Path], fmt: str | None = None, on_error: str = "fail",
                  warn: Warn | None = None, force: bool = False) -> ImportReport:
    """Import into ``out`` atomically: rows go to a temporary sibling directory renamed into place.

    On any error (including Ctrl-C) the temporary directory is removed and ``out`` is untouched. An existing
    dataset is replaced only with ``force``. What was skipped, merged or passed over goes to ``warn`` and into
    ``dataset.json``.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from compbench.data.importing import ON_ERROR, Imported, Merged, Note, Unsupported, collect, describe
    from compbench.measure.facts.boilerplate import Scanner, stored

    if on_error not in ON_ERROR:
        raise UsageError(f"on_error must be one of {', '.join(ON_ERROR)}, got {on_error!r}")
    out = Path(out)
    _check_out(out, force)
    schema = pa.schema([(name, getattr(pa, kind)()) for name, kind in COLUMNS])
    report = ImportReport()
    tmp = out.with_name(f".{out.name}.importing")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    writer: Any = None
    try:
        writer = pq.ParquetWriter(tmp / DATA_FILE, schema, compression="zstd")
        rows: list[dict[str, Any]] = []
        pending = 0

        def flush() -> None:
            nonlocal rows, pending
            if rows:
                writer.write_table(pa.Table.from_pylist(rows, schema=schema))
            rows, pending = [], 0

        digest = hashlib.sha256()
        scanner = Scanner()  # the boilerplate scan rides along: a run over the dataset reads it once
        for ev in collect(paths, fmt, on_error):
            if not isinstance(ev, Imported):
                if isinstance(ev, Merged):
                    report.merged.append({"id": ev.id, "into": ev.into, "file": ev.file})
                elif isinstance(ev, Note):
                    report.notes.append(ev.text)  # said once the import succeeded: an error stays one line
                    continue
                elif isinstance(ev, Unsupported):
                    report.unsupported.append({"file": ev.file, "reason": ev.reason})
                    continue
                else:
                    entry = {"file": ev.error.path, "line": ev.error.line, "expected": ev.error.expected}
                    (report.errors if ev.what == "file" else report.skipped_lines).append(entry)
                if warn is not None:
                    warn(describe(ev))
                continue
            t = ev.transcript
            scanner.add(t)
            payload = to_json(t)
            digest.update(payload.encode("utf-8"))
            digest.update(b"\n")
            rows.append({**summary_row(t, ev.rel), "transcript": payload})
            pending += len(payload)
            report.transcripts += 1
            report.formats[t.source] = report.formats.get(t.source, 0) + 1
            if len(rows) >= ROW_GROUP_ROWS or pending >= ROW_GROUP_BYTES:
                flush()
        flush()
        writer.close()
        if report.transcripts == 0:
            skipped = [f"{len(report.errors)} files skipped"] if report.errors else []
            if report.unsupported:
                skipped.append(f"{len(report.unsupported)} file(s) of known tools compbench does not read")
            raise UsageError("nothing to import: no transcript was read"
                             + (f" ({'; '.join(skipped)})" if skipped else ""))
        report.fingerprint = digest.hexdigest()
        meta = {"format_version": DATASET_FORMAT_VERSION, "created_by": f"compbench {__version__}",
                "n_transcripts": report.transcripts, "formats": dict(sorted(report.formats.items())),
                "fingerprint": report.fingerprint, "errors": report.errors,
                "boilerplate": stored(scanner.templates())}
        meta.update({k: v for k, v in (("skipped_lines", report.skipped_lines), ("merged", report.merged),
                                        ("notes", report.notes), ("unsupported", report.unsupported)) if v})
        (tmp / META_FILE).write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        _swap(tmp, out)
        if warn is not None:
            for note in report.notes:
                warn(note)
            for u in report.unsupported:
                warn(f"skipped {u['file']}: {u['reason']}")
        return report
    except BaseException:
        if writer is not None:
            writer.close()
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _swap(tmp: Path, out: Path) -> None:
    """Put the new dataset in place. Files a user keeps beside the data (gold_facts.jsonl, SOURCES.md)
    carry over; the old directory is moved aside before the rename, so ``out`` is never half-written."""
    if out.exists():
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


def read_meta(path: str | Path) -> dict[str, Any]:
    """The manifest of a dataset directory, checked for a version this compbench can read."""
    p = Path(path)
    try:
        meta = json.loads((p / META_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise TranscriptError(p / META_FILE, None, f"a readable dataset manifest ({e})") from None
    if not isinstance(meta, dict):
        raise TranscriptError(p / META_FILE, None, "a JSON object")
    version = meta.get("format_version")
    if not isinstance(version, int) or version > DATASET_FORMAT_VERSION:
        raise TranscriptError(p / META_FILE, None, f"dataset format_version <= {DATASET_FORMAT_VERSION}, "
                                                   f"found {version!r}")
    return meta


def default_dataset() -> Path:
    """The bundled sample dataset, every command's default input: in a source checkout ``datasets/samples``
    (where ``python -m compbench.data.samples`` builds it), in an installed wheel the copy shipped inside the
    package (``compbench/samples_data``, package data: see pyproject)."""
    package = Path(__file__).resolve().parents[1]
    checkout = package.parent / "datasets" / "samples"
    return checkout if (checkout / META_FILE).is_file() else package / "samples_data"


def _missing(p: Path) -> UsageError:
    if p.resolve() == default_dataset():
        return UsageError(f"the bundled sample dataset is missing at {p}; build it with "
                          "`python -m compbench.data.samples` or give a dataset, file or directory")
    return UsageError(f"{p}: no such dataset, file or directory")


def iter_transcripts(path: str | Path, on_error: str = "fail", warn: Warn | None = None) -> Iterator[Transcript]:
    """Stream the transcripts of a dataset directory, or import raw files/folders on the fly (the same
    pipeline as ``datasets import``: ``on_error`` and merges as there, reported through ``warn``)."""
    p = Path(path)
    if not p.exists():
        raise _missing(p)
    if not is_dataset(p):
        from compbench.data.importing import transcripts

        yield from transcripts([p], None, on_error, warn)
        return
    import pyarrow.parquet as pq

    read_meta(p)
    pf = pq.ParquetFile(p / DATA_FILE)
    row = 0
    for batch in pf.iter_batches(batch_size=READ_BATCH_ROWS, columns=["transcript"]):
        for payload in batch.column(0).to_pylist():
            row += 1
            try:
                yield from_json(payload)
            except (KeyError, TypeError, ValueError) as e:
                raise TranscriptError(p / DATA_FILE, row, f"a valid transcript row ({e})") from None


def load_summary(path: str | Path) -> Any:
    """The summary columns as a pandas DataFrame; the transcript payloads are never read for a dataset."""
    import pandas as pd

    p = Path(path)
    if is_dataset(p):
        import pyarrow.parquet as pq

        read_meta(p)
        cols = [c for c in pq.ParquetFile(p / DATA_FILE).schema_arrow.names if c != "transcript"]
        return pd.read_parquet(p / DATA_FILE, columns=cols)
    if not p.exists():
        raise _missing(p)
    from compbench.data.importing import Imported, collect

    rows = [summary_row(ev.transcript, ev.rel) for ev in collect([p]) if isinstance(ev, Imported)]
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def fingerprint(path: str | Path) -> str | None:
    """A dataset's recorded fingerprint (None for raw files, which have no manifest)."""
    p = Path(path)
    if is_dataset(p):
        return str(read_meta(p).get("fingerprint"))
    return None
