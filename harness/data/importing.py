"""``compbench.data.importing`` — The one way paths become transcripts, shared by every command that reads them.

``validate`` used to read files one at a time while ``import`` also checked what only shows across files
(a transcript id seen twice, a dataset inside a walked folder), so the two disagreed on the same folder.
Both now consume the events of :func:`collect`, and so do ``inspect``, ``run`` and ``fidelity`` on raw
files:

* :class:`Imported`: a transcript, with the file it came from;
* :class:`Skipped`: an unreadable file (``--on-error skip``) or a broken line (``skip-lines``);
* :class:`Merged`: a session whose whole history another file continues (Claude Code writes a resumed
  session to a new file that starts with the parent's records): imported once, as the continuation;
* :class:`Note`: something passed over on purpose, and why;
* :class:`Unsupported`: a known tool's file a folder walk met that no importer reads (``formats.known``).

``on_error``: ``fail`` raises the first TranscriptError; ``skip`` records an unreadable file and goes on;
``skip-lines`` also keeps a transcript whose file has broken lines, skipping only those lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from compbench.data.transcript import Transcript
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
    id: str
    into: str
    file: str
    messages: int

    def __str__(self) -> str:
        return (f"{self.file}: session {self.id} ({self.messages} messages) is the history that {self.into} "
                "resumes; imported once, as part of it")


@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class Unsupported:
    """A file (or folder) of a tool compbench knows but does not read, met in a folder walk: listed, not read."""

    file: str
    reason: str


Event = Imported | Skipped | Merged | Note | Unsupported


@dataclass(frozen=True)
class _Source:
    kind: Literal["dataset", "file"]
    path: Path
    root: Path


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
    from compbench.data.dataset import is_dataset
    from compbench.data.formats import iter_files

    seen: set[Path] = set()
    for arg in map(Path, paths):
        if is_dataset(arg):
            if arg.resolve() not in seen:
                seen.add(arg.resolve())
                yield _Source("dataset", arg, arg)
            continue
        if not arg.exists():
            yield TranscriptError(arg, None, "an existing file or directory")
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


@dataclass
class _Collector:
    on_error: str
    fmt: str | None
    ids: dict[str, str] = field(default_factory=dict)  # transcript id -> where it came from
    deferred: list[_Deferred] = field(default_factory=list)
    continuations: list[tuple[str, tuple[str, ...], frozenset[str]]] = field(default_factory=list)

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


def collect(paths: Iterable[str | Path], fmt: str | None = None, on_error: str = "fail") -> Iterator[Event]:
    """Every transcript of ``paths`` (files, folders, datasets; any mix of formats), in order, and what was
    skipped, merged or passed over on the way."""
    from compbench.data.dataset import iter_transcripts

    if on_error not in ON_ERROR:
        raise UsageError(f"on_error must be one of {', '.join(ON_ERROR)}, got {on_error!r}")
    notes: list[str] = []
    unsupported: list[Unsupported] = []
    sources = list(_expand(paths, notes, unsupported))
    c = _Collector(on_error, fmt)
    for missing in (s for s in sources if isinstance(s, TranscriptError) and on_error == "fail"):
        raise missing  # before any work
    yield from (Note(n) for n in notes)
    yield from unsupported
    continued = _continued([s for s in sources if isinstance(s, _Source)])
    for src in sources:
        if isinstance(src, TranscriptError):
            yield from c.fail_or_skip(src)
        elif src.kind == "dataset":
            rel = relative(src.path, src.root)
            for t in iter_transcripts(src.path):
                yield from c.emit(t, rel, str(src.path), dataset=True)
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


def describe(ev: Skipped | Merged | Note | Unsupported) -> str:
    if isinstance(ev, Unsupported):
        return f"skipped {ev.file}: {ev.reason}"
    if isinstance(ev, Skipped):
        return f"skipped {'broken line ' if ev.what == 'line' else ''}{ev.error}"
    if isinstance(ev, Merged):
        return f"merged {ev}"
    return ev.text
