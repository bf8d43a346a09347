"""``compbench.data.formats`` — Importers: one module per native transcript format, chosen by content, never by file
name alone.

Each format module defines ``NAME``, ``sniff(head, record) -> bool`` (``head``: the file's first 64 KiB
as text; ``record``: one JSON record of the file, parsed, or None), optionally ``sniff_document(doc) ->
bool`` for a whole JSON document, and ``read(path) -> Iterator[Transcript]`` raising
:class:`~compbench.errors.TranscriptError` for anything it cannot read (see ``detect.py`` for how the
records are chosen); ``MULTI_TRANSCRIPT = True`` when one file holds many transcripts. Modules are
imported lazily, in detection order (:mod:`.catalog`): specific formats first, the generic OpenAI chat format last.

The contract that keeps a file from being read as another format: a sniffer says True only when the file
fits the format *as a whole* (a document: every message; JSON lines: the record it is shown, and ``read``
raises with the line for a later one that does not fit); optionally ``misfit(doc) -> detect.Misfit | None``
says how far a file no format claims is from this one, so the error can name the closest format; and
optionally ``WALK_SUFFIXES`` (e.g. ``(".md",)``): other file endings a folder walk offers to ``sniff``
(the head only; what no format claims there is passed over, a README is no transcript). After reading,
:mod:`.coverage` refuses an import that read too little of what the file holds. Files of tools that are
known but not imported are data in :mod:`.known`.

Other packages add an importer through the ``compbench.formats`` entry-point group (``name = "pkg.module"``,
a module as above): it is tried after the built-in specific formats, before the generic one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from compbench.data.formats.catalog import detection_order, is_multi, module
from compbench.data.transcript import Transcript
from compbench.errors import TranscriptError

LIMIT_ENV = "COMPBENCH_MAX_TRANSCRIPT_MB"
DEFAULT_MAX_TRANSCRIPT_MB = 1024  # measured: a 200 MB transcript imports and replays in ~785 MB peak RSS


def max_transcript_bytes() -> int:
    import os

    raw = os.environ.get(LIMIT_ENV, "")
    try:
        return int(float(raw) * 2**20) if raw else DEFAULT_MAX_TRANSCRIPT_MB * 2**20
    except ValueError:
        raise TranscriptError(LIMIT_ENV, None, f"a number of MiB, got {raw!r}") from None


# Suffixes a directory walk picks up; a file named explicitly is always tried. Of SQLite files only the tools'
# stores are picked up (OpenCode's ``opencode.db``, also ``opencode-<channel>.db``; Crush's ``crush.db``; Goose's
# ``sessions/sessions.db``), not their -wal/-shm. Of text files: aider's histories by name; a Markdown file when a
# format that writes Markdown claims its head (``WALK_SUFFIXES``: Goose's and Gemini CLI's exports, aider's
# history, Roo Code's task export).
TRANSCRIPT_SUFFIXES = (".jsonl", ".json", ".traj")
TOOL_FILES = frozenset({"crush.db", ".aider.chat.history.md", ".aider.llm.history", "aider.llm.history"})
AIDER_CHAT = ".aider.chat.history.md"
TOOL_HIDDEN = frozenset({".crush", ".aider.chat.history.md", ".aider.llm.history"})  # walked though hidden


def _is_store(name: str) -> bool:
    return name.startswith("opencode") and name.endswith(".db")


def _is_goose_store(f: Path) -> bool:
    return f.name == "sessions.db" and f.parent.name == "sessions"


def _walked(f: Path, note: Callable[[str], None] | None = None) -> bool:
    name = f.name
    if name.endswith(TRANSCRIPT_SUFFIXES) or _is_store(name) or name in TOOL_FILES or _is_goose_store(f):
        return True
    if name.endswith(".db"):  # a store under another name (a copy): walked when its tables are a tool's
        return _known_store(f, note)
    return False


def _known_store(f: Path, note: Callable[[str], None] | None) -> bool:
    from compbench.data.formats.detect import store_format
    from compbench.data.formats.sqlite_store import MAGIC, schema

    with f.open("rb") as h:
        if h.read(len(MAGIC)).decode("latin-1") != MAGIC:
            return False
    try:
        if store_format(schema(f)) is not None:
            return True
    except TranscriptError:
        pass
    if note is not None:
        note(f"{f}: a SQLite file that is no known tool's store, passed over")
    return False


def _hidden(parts: tuple[str, ...]) -> bool:
    return any(part.startswith(".") and part not in TOOL_HIDDEN for part in parts)




# Folders where a tool keeps its own store: (which files in or below the folder are read, given their path
# relative to it; what the folder is). Every other file there is the tool's, not a transcript, and is never
# opened (OpenCode keeps credentials in auth.json beside its database, Gemini CLI in oauth_creds.json).
Rule = tuple[Callable[[str], bool], str]
_OPENCODE: Rule = (lambda n: "/" not in n and (_is_store(n) or (n.startswith("opencode") and ".db-" in n)),
                   "OpenCode's store: read its database, not the {n} beside it (legacy storage/, settings, "
                   "credentials)")
_COPILOT: Rule = (lambda n: n in ("events.jsonl", "workspace.yaml"),
                  "a Copilot CLI session: read its events.jsonl, not the {n} beside it (checkpoints, plan, files)")
_CLINE_TASK: Rule = (lambda n: n == "api_conversation_history.json",
                     "a Cline / Roo Code / Kilo Code task: read through its api_conversation_history.json "
                     "(ui_messages.json and task_metadata.json with it); {n} not opened as transcripts")
_CLINE_TASKS: Rule = (lambda n: "/" not in n and n != "_index.json",
                      "a Cline / Roo Code / Kilo Code tasks folder: its tasks are read, not the {n} among them (the "
                      "task index, other state)")
_CLINE_HOME: Rule = (lambda n: False, "a Cline / Roo Code / Kilo Code storage folder: its tasks are read, not the {n} "
                                      "around them (settings, caches, state)")
CLINE_EXTENSIONS = ("saoudrizwan.claude-dev", "rooveterinaryinc.roo-cline", "kilocode.kilo-code")
_CRUSH: Rule = (lambda n: "/" not in n and n.startswith("crush.db"),
                "Crush's data folder: read its crush.db, not the {n} beside it (settings, logs)")
_GOOSE: Rule = (lambda n: "/" not in n and n.startswith("sessions.db"),
                "Goose's session store: read its sessions.db, not the {n} beside it (legacy .jsonl sessions, which "
                "Goose imported into the database when it created it)")


def _tool_folders(files: list[Path]) -> dict[Path, Rule]:
    from compbench.data.formats.gemini_cli import tool_folder
    from compbench.data.formats.openhands_folders import openhands_folders

    names: dict[Path, set[str]] = {}
    for f in files:
        names.setdefault(f.parent, set()).add(f.name)
    out: dict[Path, Rule] = {}
    for d, found in names.items():
        if any(_is_store(n) for n in found):
            out[d] = _OPENCODE
        elif {"events.jsonl", "workspace.yaml"} <= found:
            out[d] = _COPILOT
        elif "api_conversation_history.json" in found:
            out[d] = _CLINE_TASK
            if d.parent.name == "tasks":  # the tool's task store, in its VS Code extension folder
                out.setdefault(d.parent, _CLINE_TASKS)
                if d.parent.parent.name.lower() in CLINE_EXTENSIONS:
                    out.setdefault(d.parent.parent, _CLINE_HOME)
        elif "crush.db" in found:
            out[d] = _CRUSH
        elif "sessions.db" in found and d.name == "sessions":
            out[d] = _GOOSE
        elif (gemini := tool_folder(d, found)) is not None:
            out[gemini[0]] = gemini[1]
    for d, rule in openhands_folders(names).items():
        out.setdefault(d, rule)
    return out


def _offered(f: Path, suffixes: dict[str, tuple[str, ...]], note: Callable[[str], None] | None = None) -> bool:
    """Is a file no tool folder claims a transcript candidate? By its ending, or (an ending a format names in
    ``WALK_SUFFIXES``, e.g. a markdown export) by its head, which that format must claim."""
    if _walked(f, note):
        return True
    if "llm" in f.name.lower() and (f.parent / AIDER_CHAT).is_file():  # --llm-history-file takes any name
        return bool(module("aider-llm").sniff(_head(f), None))
    claimants = [n for n, x in suffixes.items() if f.name.endswith(x)]
    return bool(claimants) and any(module(n).sniff(_head(f), None) for n in claimants)


def _head(f: Path) -> str:
    from compbench.data.formats.detect import HEAD_BYTES

    with f.open("rb") as fh:
        return fh.read(HEAD_BYTES).decode("utf-8", errors="replace")


def iter_files(paths: Iterable[str | Path], note: Callable[[str], None] | None = None,
               skip: Callable[[Path, str], None] | None = None) -> Iterator[Path]:
    """Expand directories (recursively, sorted, hidden files skipped but the tools' own: ``.crush/``, aider's
    ``.aider.chat.history.md`` and ``.aider.llm.history``) into transcript files.

    A tool's own store folder is read as the tool reads it: OpenCode's data folder through its database (the
    legacy ``storage/`` JSON it was migrated from and the credentials beside it are not opened), a Copilot CLI
    session folder through its ``events.jsonl``, a Gemini CLI home (``~/.gemini``) or project folder through
    its recordings and checkpoints, Crush's ``.crush`` through its ``crush.db``, Goose's ``sessions`` folder
    through its ``sessions.db``; ``note`` is told how many files were passed over. A file of a tool
    compbench knows but does not read (:mod:`.known`, by name, hidden ones too, or by content among the
    files no format claims) is given to ``skip`` with the reason.
    """
    from compbench.data.formats.known import by_content, by_name, describe

    suffixes = {n: tuple(x) for n in detection_order() if (x := getattr(module(n), "WALK_SUFFIXES", ()))}
    for p in map(Path, paths):
        if not p.is_dir():
            if not p.exists():
                raise TranscriptError(p, None, "an existing file or directory")
            yield p
            continue
        every = [f for f in sorted(p.rglob("*")) if f.is_file()]
        hidden = {f for f in every if _hidden(f.relative_to(p).parts)}
        folders = _tool_folders([f for f in every if f not in hidden])
        passed: dict[Path, int] = {}
        skipped: dict[tuple[Path, str], int] = {}  # known files listed once a folder (per_folder ones)
        for f in every:
            home = next((d for d in (f.parent, *f.parent.parents) if d in folders), None)
            known = by_name(f) if home is None else None
            offered = known is None and home is None and f not in hidden and _offered(f, suffixes, note)
            if known is None and home is None and f not in hidden and not offered and f.suffix in (".md", ".db"):
                known = by_content(f, _head(f))
            if known is not None:
                key = (f.parent, describe(known)) if known.per_folder else (f, describe(known))
                skipped[key] = skipped.get(key, 0) + 1
            elif offered:
                yield f
            elif home is None or f in hidden:
                continue
            elif folders[home][0](f.relative_to(home).as_posix()):
                if _walked(f):
                    yield f
            else:
                passed[home] = passed.get(home, 0) + 1
        for (where, why), n in skipped.items():
            if skip is not None:
                skip(where, why if where.is_file() else f"{why} ({n} file{'s' * (n != 1)})")
        for d, n in sorted(passed.items()):
            if note is not None:
                note(f"{d}: " + folders[d][1].format(n=f"{n} other file{'s' * (n != 1)}"))


def read(path: str | Path, fmt: str | None = None,
         skipped: list[TranscriptError] | None = None, check: bool = True) -> Iterator[Transcript]:
    """Read every transcript in one file, detecting its format unless ``fmt`` names it.

    ``skipped``: collect broken lines there and go on (``--on-error skip-lines``) instead of failing on
    the first; the transcript of a one-transcript file also lists them (``meta["skipped_lines"]``, warnings).
    ``check``: refuse a one-transcript file whose import read too little of what it holds
    (:mod:`.coverage`; the generic chat reader checks each conversation itself).

    Importers raise TranscriptError themselves, with the line; anything else escaping one is an importer
    bug, turned here into a TranscriptError marked ``internal`` so the user still gets one clear line
    (and the fuzz tests, which reject ``internal`` errors, catch the bug).
    """
    from compbench.data.formats.detect import detect
    from compbench.data.formats.jsonio import SKIPPED_LINES, forget

    p = Path(path)
    try:
        name = fmt or detect(p)
        limit = max_transcript_bytes()
        multi = is_multi(name)
        if not multi and p.stat().st_size > limit:
            raise TranscriptError(p, None, f"a transcript under {limit // 2**20} MiB, the limit that keeps a "
                                           f"replay's memory bounded (file is {p.stat().st_size // 2**20} MiB; "
                                           f"raise {LIMIT_ENV} to allow it: a replay needs about 4x the file "
                                           "size in memory)")
        from compbench.data.formats.coverage import FORCED
        from compbench.data.formats.coverage import check as covered

        transcripts = module(name).read(p)
        lines: list[TranscriptError] = []
        while True:
            token = SKIPPED_LINES.set(lines if skipped is not None else None)  # only while the importer runs
            forced = FORCED.set(fmt is not None or not check)  # a named format is warned, never refused
            try:
                t = next(transcripts, None)
            except TranscriptError:
                raise
            except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError, UnicodeError) as e:
                err = TranscriptError(p, None, f"a readable {name} transcript (the importer failed: "
                                               f"{type(e).__name__}: {e})")
                err.internal = True
                raise err from e
            finally:
                SKIPPED_LINES.reset(token)
                FORCED.reset(forced)
            if t is None:
                break
            if lines and skipped is not None:
                if not multi:
                    t = replace(t, meta={**t.meta, "skipped_lines": [e.line for e in lines]},
                                warnings=(*t.warnings, *(f"skipped line {e.line}: {e.expected}" for e in lines)))
                skipped.extend(lines)
                lines.clear()
            if check and not multi:
                forced = FORCED.set(fmt is not None)
                try:
                    t = covered(p, name, t)
                finally:
                    FORCED.reset(forced)
            yield t
        if skipped is not None:
            skipped.extend(lines)
    finally:
        forget()


def read_all(paths: Iterable[str | Path], fmt: str | None = None) -> Iterator[Transcript]:
    for f in iter_files(paths):
        yield from read(f, fmt)
