"""``compbench.data.importing`` — The one way paths become transcripts, shared by every command that reads them.

``validate`` used to read files one at a time while ``import`` also checked what only shows across files
(a transcript id seen twice, a dataset inside a walked folder), so the two disagreed on the same folder.
Both now consume the events of :func:`collect`, and so do ``inspect``, ``run`` and ``fidelity`` on raw
files:

* :class:`Imported`: a transcript, with the file it came from;
* :class:`Skipped`: an unreadable file (``--on-error skip``) or a broken line (``skip-lines``; in a store, an
  unreadable record: a message, its session kept);
* :class:`Merged`: a session whose whole history another file continues (Claude Code writes a resumed
  session to a new file that starts with the parent's records): imported once, as the continuation; and an
  aider run both of aider's logs in one folder record: imported once, from the request log
  (:mod:`compbench.data.formats.aider_runs`);
* :class:`Note`: something passed over on purpose, and why;
* :class:`Unsupported`: a known tool's file a folder walk met that no importer reads (``formats.known``);
* :class:`Empty`: a session with no reply, left out (``keep_empty=False``: what ``datasets import`` does unless
  ``--keep-empty``).

``on_error``: ``fail`` raises the first TranscriptError; ``skip`` records an unreadable file and goes on;
``skip-lines`` also keeps a transcript whose file has broken lines, skipping only those lines.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

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
from compbench.data.transcript import Transcript, to_json
from compbench.errors import TranscriptError, UsageError

ON_ERROR = ("fail", "skip", "skip-lines")
CLAUDE = "claude-code"


@dataclass(frozen=True)
class Imported:
    transcript: Transcript
    rel: str  # the file relative to the parent of the argument it was found under
    file: str
    dataset: bool = False  # read from a dataset directory (``file`` is the directory)


@dataclass(frozen=True)
class Skipped:
    error: TranscriptError
    what: Literal["file", "line"]


@dataclass(frozen=True)
class Merged:
    """A transcript imported as part of another: a Claude Code session its continuation resumes, or an aider run
    of the chat history read from the request log beside it (``via``)."""

    id: str
    into: str
    file: str
    messages: int
    via: str = ""

    def __str__(self) -> str:
        if self.via:
            return (f"{self.file}: aider run {self.id} ({self.messages} messages) is also in the request log "
                    f"{self.via}, as {self.into}; imported once, from the request log (it holds the requests and "
                    "the summaries)")
        return (f"{self.file}: session {self.id} ({self.messages} messages) is the history that {self.into} "
                "resumes; imported once, as part of it")


@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class Empty:
    """A session with no reply (:func:`compbench.data.dataset.is_empty`), left out unless ``keep_empty``."""

    id: str
    file: str
    messages: int


@dataclass(frozen=True)
class Unsupported:
    """A file (or folder) of a tool compbench knows but does not read, met in a folder walk: listed, not read."""

    file: str
    reason: str


Event = Imported | Skipped | Merged | Note | Unsupported | Empty


@dataclass(frozen=True)
class _Source:
    kind: Literal["dataset", "file", "hf"]
    path: Path
    root: Path
    arg: str = ""  # a Hugging Face dataset's reference as given (hf:OWNER/NAME..., or a saved folder)


@dataclass(frozen=True)
class _Deferred:
    """A session another file continues, held back until the end: merged if a continuation holds it all."""

    id: str
    ids: frozenset[str]
    continues: tuple[str, ...]
    file: Path
    rel: str


def relative(f: Path, root: Path) -> str:
    """``f`` relative to the parent of the argument it was found under, so a dataset does not depend on
    the directory the import ran in (a folder argument keeps its own name as the first component)."""
    base = root.resolve().parent
    try:
        return f.resolve().relative_to(base).as_posix()
    except ValueError:
        return f.resolve().as_posix()


def _expand(paths: Iterable[str | Path], notes: list[str],
            unsupported: list[Unsupported]) -> Iterator[_Source | TranscriptError]:
    """Datasets and transcript files, each once. A dataset inside a walked folder is passed over (it is
    usually built from the files beside it, which are read) and said in ``notes``."""
    from compbench.data import hf
    from compbench.data.formats import iter_files
    from compbench.data.formats.walk import MISSING

    seen: set[Path] = set()
    for given in paths:
        if hf.is_hf(given) or hf.is_saved(given):
            yield _Source("hf", Path(str(given)), Path(str(given)), str(given))
            continue
        arg = Path(given)
        if is_dataset(arg):
            if arg.resolve() not in seen:
                seen.add(arg.resolve())
                yield _Source("dataset", arg, arg)
            continue
        if not arg.exists():
            yield TranscriptError(arg, None, MISSING)
            continue
        nested: set[Path] = set()
        for f in iter_files([arg], notes.append, lambda f, why: unsupported.append(Unsupported(str(f), why))):
            key = f.resolve()
            if key in seen:
                continue
            seen.add(key)
            if is_dataset(f.parent):
                if f.parent not in nested and f.parent.resolve() not in seen:  # not when named as well
                    nested.add(f.parent)
                    notes.append(f"{f.parent}: a dataset inside {arg}, passed over (name it to import its rows)")
                continue
            yield _Source("file", f, arg)


def _continued(sources: list[_Source]) -> set[str]:
    """Sessions that another Claude Code file continues, found before reading anything: such a session's own
    file must wait until its continuation is read. A cheap scan: the head, then the file's session ids."""
    from compbench.data.formats.claude_chain import lineage, session_ids
    from compbench.data.formats.claude_code import sniff
    from compbench.data.formats.detect import HEAD_BYTES

    named: set[str] = set()
    for s in sources:
        if s.kind != "file" or not s.path.name.endswith((".jsonl", ".json")):
            continue
        with s.path.open("rb") as f:
            head = f.read(HEAD_BYTES).decode("utf-8", errors="replace")
        if sniff(head, None):
            named.update(lineage(session_ids(s.path))[1])
    return named


def _head(path: Path) -> str:
    from compbench.data.formats.detect import HEAD_BYTES

    with path.open("rb") as f:
        return f.read(HEAD_BYTES).decode("utf-8", errors="replace")


def _aider_groups(sources: list[_Source]) -> dict[Path, tuple[_Source, ...]]:
    """Each file of a folder holding both of aider's logs -> the group (the chat history first, then the request
    logs), read together: one transcript per aider run."""
    from compbench.data.formats.aider_runs import pairs

    files = {s.path: s for s in sources if s.kind == "file"}
    out: dict[Path, tuple[_Source, ...]] = {}
    for chat, logs in pairs(list(files), _head).items():
        group = (files[chat], *(files[p] for p in logs))
        for member in group:
            out[member.path] = group
    return out


@dataclass
class _Collector:
    on_error: str
    fmt: str | None
    keep_empty: bool = True
    ids: dict[str, str] = field(default_factory=dict)  # transcript id -> where it came from
    deferred: list[_Deferred] = field(default_factory=list)
    continuations: list[tuple[str, tuple[str, ...], frozenset[str]]] = field(default_factory=list)
    aider: dict[Path, tuple[_Source, ...]] = field(default_factory=dict)
    done: set[Path] = field(default_factory=set)  # files read with their group already
    download: bool = False  # a hf: dataset missing from the cache may be fetched from the Hub

    def read_hf(self, src: _Source) -> Iterator[Event]:
        """A Hugging Face dataset's rows, one transcript each (:mod:`compbench.data.hf`); a row that is none is
        failed or skipped as a file would be, the whole source when it cannot be loaded."""
        from compbench.data import hf

        ref = hf.parse(src.arg)
        try:
            for found in hf.transcripts(ref, self.download):
                if isinstance(found, TranscriptError):
                    yield from self.fail_or_skip(found)
                else:
                    yield from self.emit(found, found.meta["path"], src.arg)
        except UsageError as e:
            if self.on_error == "fail":
                raise
            yield Skipped(TranscriptError(src.arg, None, str(e).removeprefix(f"{src.arg}: ")), "file")

    def fail_or_skip(self, err: TranscriptError, what: Literal["file", "line"] = "file") -> Iterator[Event]:
        if self.on_error == "fail":
            raise err
        yield Skipped(err, what)

    def emit(self, t: Transcript, rel: str, file: str, dataset: bool = False) -> Iterator[Event]:
        if t.id in self.ids:
            yield from self.fail_or_skip(TranscriptError(
                rel, None, f"a transcript id not imported before ({t.id!r} also comes from {self.ids[t.id]})"))
            return
        parents = tuple(t.meta.get("continues", ())) if t.source == CLAUDE else ()
        if parents:
            self.continuations.append((t.id, parents, frozenset(m.id for m in t.messages)))
            for p in parents:
                if p in self.ids:
                    yield Note(f"{file}: resumes session {p}, already imported from {self.ids[p]}: their shared "
                               "history is in both")
        self.ids[t.id] = rel
        if not self.keep_empty and is_empty(t):
            yield Empty(t.id, file, len(t.messages))
            return
        yield Imported(t, rel, file, dataset)

    def read(self, src: _Source, continued: set[str]) -> Iterator[Event]:
        from compbench.data.formats import read

        rel = relative(src.path, src.root)
        lines: list[TranscriptError] | None = [] if self.on_error == "skip-lines" else None
        found = 0
        try:
            for t in read(src.path, self.fmt, lines):
                found += 1
                if t.source == CLAUDE and t.id in continued and t.id not in self.ids:
                    self.deferred.append(_Deferred(t.id, frozenset(m.id for m in t.messages),
                                                   tuple(t.meta.get("continues", ())), src.path, rel))
                    continue
                yield from self.emit(t, rel, str(src.path))
            if not found:
                yield Note(f"{src.path}: read, but it holds no transcript")
        except TranscriptError as err:
            yield from self.fail_or_skip(err)
        for broken in lines or ():
            yield Skipped(broken, "line")

    def read_aider(self, group: tuple[_Source, ...]) -> Iterator[Event]:
        """A chat history and the request logs beside it: one transcript per aider run, the runs the request log
        holds read from it and their chat-history copies reported as merged."""
        from compbench.data.formats import read
        from compbench.data.formats.aider_runs import combine

        self.done.update(s.path for s in group)
        read_from: dict[str, _Source] = {}
        chat: list[Transcript] = []
        logs: list[Transcript] = []
        for k, src in enumerate(group):
            try:
                found = list(read(src.path, None, [] if self.on_error == "skip-lines" else None))
            except TranscriptError as err:
                yield from self.fail_or_skip(err)
                continue
            (chat if k == 0 else logs).extend(found)
            read_from.update((t.id, src) for t in found)
        combined, merges = combine(chat, logs)
        for t in combined:
            src = read_from[t.id]
            yield from self.emit(t, relative(src.path, src.root), str(src.path))
        for m in merges:
            yield Merged(m.run, m.into, str(group[0].path), m.messages, via=str(read_from[m.into].path))

    def settle(self) -> Iterator[Event]:
        """Merge each held-back session into a continuation holding all of its messages; import the others
        (a continuation that failed, or a fork that went on after being resumed), the end of a chain first."""
        from compbench.data.formats import read

        pending = list(self.deferred)
        while pending:
            covered = [(d, next((c for c in self.continuations if d.id in c[1] and d.ids <= c[2]), None))
                       for d in pending]
            if any(c is not None for _, c in covered):
                for d, c in covered:
                    if c is not None:
                        pending.remove(d)
                        yield Merged(d.id, c[0], str(d.file), len(d.ids))
                continue
            d = max(pending, key=lambda d: len(d.continues))
            pending.remove(d)
            if any(d.id in c[1] for c in self.continuations):
                yield Note(f"{d.file}: session {d.id} kept: the file resuming it does not hold all of its messages")
            for t in read(d.file, self.fmt, [] if self.on_error == "skip-lines" else None):
                if t.id == d.id:
                    yield from self.emit(t, d.rel, str(d.file))


def collect(paths: Iterable[str | Path], fmt: str | None = None, on_error: str = "fail",
            keep_empty: bool = True, download: bool = False) -> Iterator[Event]:
    """Every transcript of ``paths`` (files, folders, datasets; any mix of formats), in order, and what was
    skipped, merged or passed over on the way (``keep_empty=False``: sessions with no reply are :class:`Empty`)."""

    if on_error not in ON_ERROR:
        raise UsageError(f"on_error must be one of {', '.join(ON_ERROR)}, got {on_error!r}")
    notes: list[str] = []
    unsupported: list[Unsupported] = []
    sources = list(_expand(paths, notes, unsupported))
    c = _Collector(on_error, fmt, keep_empty, download=download)
    for absent in (s for s in sources if isinstance(s, TranscriptError) and on_error == "fail"):
        raise absent  # before any work
    yield from (Note(n) for n in notes)
    yield from unsupported
    found = [s for s in sources if isinstance(s, _Source)]
    continued = _continued(found)
    if fmt is None:  # a forced format reads each file as it is told
        c.aider = _aider_groups(found)
    for src in sources:
        if isinstance(src, TranscriptError):
            yield from c.fail_or_skip(src)
        elif src.kind == "dataset":
            rel = relative(src.path, src.root)
            for t in iter_transcripts(src.path):
                yield from c.emit(t, rel, str(src.path), dataset=True)
        elif src.kind == "hf":
            yield from c.read_hf(src)
        elif src.path in c.done:
            continue
        elif src.path in c.aider:
            yield from c.read_aider(c.aider[src.path])
        else:
            yield from c.read(src, continued)
    yield from c.settle()


def transcripts(paths: Iterable[str | Path], fmt: str | None = None, on_error: str = "fail",
                warn: Callable[[str], None] | None = None) -> Iterator[Transcript]:
    """Just the transcripts of :func:`collect`; everything else goes to ``warn`` as one line."""
    for ev in collect(paths, fmt, on_error):
        if isinstance(ev, Imported):
            yield ev.transcript
        elif warn is not None:
            warn(describe(ev))


def describe(ev: Skipped | Merged | Note | Unsupported | Empty) -> str:
    if isinstance(ev, Empty):
        return f"left out {ev.file}: session {ev.id} is empty ({ev.messages} message{'s' * (ev.messages != 1)}, " \
               "no reply)"
    if isinstance(ev, Unsupported):
        return f"skipped {ev.file}: {ev.reason}"
    if isinstance(ev, Skipped):
        if ev.what == "line" and ev.error.line is None:  # a record of a store (a message), not a line of text
            return f"skipped an unreadable record, the rest of its session kept: {ev.error}"
        return f"skipped {'broken line ' if ev.what == 'line' else ''}{ev.error}"
    if isinstance(ev, Merged):
        return f"merged {ev}"
    return ev.text


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


def replayable(transcripts: Iterable[Transcript], keep_empty: bool, warn: Warn | None = None,
               left_out: Callable[[str], None] | None = None) -> Iterator[Transcript]:
    """The transcripts a run replays: those with no reply are left out unless ``keep_empty`` (each given to
    ``left_out``, e.g. a progress bar's tick; their count to ``warn`` at the end)."""
    n = 0
    for t in transcripts:
        if not keep_empty and is_empty(t):
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
