"""``compbench.data.reading`` — The one way paths become transcripts, shared by every command that reads them
(``compbench.data.importing`` writes them into a dataset, streams them to a run).

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

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from compbench.data.dataset import is_dataset, is_empty, read_transcripts
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


def _aider_groups(sources: list[_Source]) -> dict[Path, tuple[_Source, ...]]:
    """Each file of a folder holding both of aider's logs -> the group (the chat history first, then the request
    logs), read together: one transcript per aider run."""
    from compbench.data.formats.aider_runs import pairs

    files = {s.path: s for s in sources if s.kind == "file"}
    out: dict[Path, tuple[_Source, ...]] = {}
    for chat, logs in pairs(list(files)).items():
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
            for t in read_transcripts(src.path):
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
