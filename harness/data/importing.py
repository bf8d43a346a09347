"""``compbench.data.importing`` — Transcripts into a dataset, and out of one: ``datasets import`` writes what
:mod:`compbench.data.reading` collects (atomically, with what was skipped, merged, passed over or left out), and the
commands that replay stream a dataset's or raw files' transcripts (the sessions with no reply left out unless
asked). The reading's events and :func:`~compbench.data.reading.collect` are re-exported here.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from compbench import __version__
from compbench.data.boilerplate import Scanner, Templates, scan, stamp, stored
from compbench.data.dataset import (
    COLUMNS,
    COMPANIONS,
    DATA_FILE,
    DATASET_FORMAT_VERSION,
    META_FILE,
    ROW_GROUP_BYTES,
    ROW_GROUP_ROWS,
    SUMMARY_COLUMNS,
    Warn,
    is_dataset,
    is_empty,
    missing,
    read_meta,
    read_summary,
    read_transcripts,
    summary_row,
)
from compbench.data.reading import (  # the reading's vocabulary, where the commands have always found it
    ON_ERROR,
    Empty,
    Event,
    Imported,
    Merged,
    Note,
    Skipped,
    Unsupported,
    collect,
    describe,
    relative,
    transcripts,
)
from compbench.data.transcript import Transcript, to_json
from compbench.errors import UsageError

__all__ = ["ON_ERROR", "Empty", "Event", "ImportReport", "Imported", "Merged", "Note", "Skipped", "Unsupported",
           "collect", "describe", "empty_lines", "iter_transcripts", "load_summary", "relative", "replayable",
           "scan_dataset", "transcripts", "write_dataset"]


class _Named(Protocol):
    @property
    def id(self) -> str: ...


T = TypeVar("T", bound=_Named)


@dataclass
class ImportReport:
    transcripts: int = 0
    formats: dict[str, int] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)  # unreadable files skipped
    skipped_lines: list[dict[str, Any]] = field(default_factory=list)  # broken lines skipped (skip-lines)
    merged: list[dict[str, Any]] = field(default_factory=list)  # sessions imported as part of their continuation
    notes: list[str] = field(default_factory=list)
    unsupported: list[dict[str, str]] = field(default_factory=list)  # known tools' files no importer reads
    empty: list[dict[str, Any]] = field(default_factory=list)  # sessions with no reply, left out
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
                  warn: Warn | None = None, force: bool = False, keep_empty: bool = False,
                  download: bool = False) -> ImportReport:
    """Import into ``out`` atomically: rows go to a temporary sibling directory renamed into place.

    On any error (including Ctrl-C) the temporary directory is removed and ``out`` is untouched. An existing
    dataset is replaced only with ``force``. What was skipped, merged or passed over goes to ``warn`` and into
    ``dataset.json``; so do the sessions with no reply, left out unless ``keep_empty``.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq


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
        for ev in collect(paths, fmt, on_error, keep_empty, download):
            if not isinstance(ev, Imported):
                if isinstance(ev, Empty):
                    report.empty.append({"id": ev.id, "file": ev.file, "messages": ev.messages})
                    continue
                if isinstance(ev, Merged):
                    report.merged.append({"id": ev.id, "into": ev.into, "file": ev.file,
                                          **({"via": ev.via} if ev.via else {})})
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
                                        ("notes", report.notes), ("unsupported", report.unsupported),
                                        ("empty", report.empty)) if v})
        (tmp / META_FILE).write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        _swap(tmp, out)
        if warn is not None:
            for note in report.notes:
                warn(note)
            for u in report.unsupported:
                warn(f"skipped {u['file']}: {u['reason']}")
            for line in empty_lines(report.empty):
                warn(line)
        return report
    except BaseException:
        if writer is not None:
            writer.close()
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def empty_lines(empty: list[dict[str, Any]], verb: str = "left out") -> list[str]:
    """One line a file for the sessions with no reply it held."""
    by_file: dict[str, int] = {}
    for e in empty:
        by_file[e["file"]] = by_file.get(e["file"], 0) + 1
    return [f"{verb} {n} empty session{'s' * (n != 1)} (no reply: a prompt and nothing after it) of {f}"
            for f, n in by_file.items()]


def replayable(transcripts: Iterable[T], keep_empty: bool, warn: Warn | None = None,
               left_out: Callable[[str], None] | None = None,
               empty: Callable[[T], bool] = is_empty) -> Iterator[T]:  # type: ignore[assignment]
    """The transcripts a run replays: those with no reply are left out unless ``keep_empty`` (each given to
    ``left_out``, e.g. a progress bar's tick; their count to ``warn`` at the end). ``empty`` says it of an item
    (a reference to a transcript knows it without its messages)."""
    n = 0
    for t in transcripts:
        if not keep_empty and empty(t):
            n += 1
            if left_out is not None:
                left_out(t.id)
            continue
        yield t
    if n and warn is not None:
        warn(f"left out {n} empty session{'s' * (n != 1)} (no reply: nothing to replay); --keep-empty replays them")


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


def iter_transcripts(path: str | Path, on_error: str = "fail", warn: Warn | None = None) -> Iterator[Transcript]:
    """Stream the transcripts of a dataset directory, or import raw files/folders on the fly (the same
    pipeline as ``datasets import``: ``on_error`` and merges as there, reported through ``warn``)."""
    from compbench.data import hf

    if hf.is_hf(path):  # a Hugging Face dataset, from the cache (`datasets import --download` fetches it)
        yield from transcripts([str(path)], None, on_error, warn)
        return
    p = Path(path)
    if not p.exists():
        raise missing(p)
    if not is_dataset(p):
        yield from transcripts([p], None, on_error, warn)
        return
    yield from read_transcripts(p)


def load_summary(path: str | Path) -> Any:
    """The summary columns as a pandas DataFrame; the transcript payloads are never read for a dataset."""
    import pandas as pd

    p = Path(path)
    if is_dataset(p):
        return read_summary(p)
    if not p.exists():
        raise missing(p)
    rows = [summary_row(ev.transcript, ev.rel) for ev in collect([p]) if isinstance(ev, Imported)]
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def scan_dataset(path: str) -> dict[str, object]:
    """:func:`scan` over a dataset path, in the JSON form a run spec keeps. A dataset directory written by
    ``datasets import`` carries its scan (made as it was written): read from there when it was made as today's
    scan would make it, else (an older dataset, raw files or folders) every transcript is read for it."""
    from compbench.data.dataset import is_dataset
    from compbench.data.importing import iter_transcripts

    if is_dataset(path):
        kept = read_meta(path).get("boilerplate")
        if isinstance(kept, dict) and {k: kept.get(k) for k in stamp()} == stamp():
            templates = kept.get("templates")
            if isinstance(templates, dict):
                return Templates.from_json(templates).to_json()
    return scan(iter_transcripts(path)).to_json()
