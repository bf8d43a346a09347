"""``compbench.data.formats.walk`` — A folder walk: which files of a folder are offered to the importers, and what is
passed over, said.

A file is offered by its ending (JSON lines, JSON, ``.traj``), a tool's store or history by its name, a Markdown
file when a format that writes Markdown claims its head. A tool's own folder is read as the tool reads it (its
store, its session files; the settings and credentials beside them never opened, counted in one line). Hidden
folders are passed over but the tools' homes (:mod:`.homes`: ``~/.claude``, ``~/.codex``, ``~/.config``'s editors'
task folders…), entered only where their logs are; the other hidden folders, the dependency folders and the known
tools' folders compbench does not read are listed, never silently dropped.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from compbench.data.formats.catalog import detection_order, module
from compbench.data.formats.homes import DEPENDENCIES, NOT_READ, Home, home_of
from compbench.errors import TranscriptError

# Suffixes a directory walk picks up; a file named explicitly is always tried. Of SQLite files only the tools'
# stores are picked up (OpenCode's ``opencode.db``, also ``opencode-<channel>.db``; Crush's ``crush.db``; Goose's
# ``sessions/sessions.db``), not their -wal/-shm. Of text files: aider's histories by name; a Markdown file when a
# format that writes Markdown claims its head (``WALK_SUFFIXES``: Goose's and Gemini CLI's exports, aider's
# history, Roo Code's task export); any file beside an aider chat history whose first line is a request of aider's
# ``--llm-history-file`` log, which takes any name (:func:`_request_log`).
TRANSCRIPT_SUFFIXES = (".jsonl", ".json", ".traj")
TOOL_FILES = frozenset({"crush.db", ".aider.chat.history.md", ".aider.llm.history", "aider.llm.history"})
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
Rule = tuple[Callable[[str], bool | None], str]  # read / read with the one read (None) / passed over
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
MISSING = "no such file or directory"  # said of a path given that is not there (skipped under --on-error skip)
UI_FILE, API_FILE = "ui_messages.json", "api_conversation_history.json"
UI_ONLY = ("a Cline / Roo Code / Kilo Code task's ui_messages.json, the UI's record, with no "
           "api_conversation_history.json beside it (the conversation): nothing to import (not opened)")
_CRUSH: Rule = (lambda n: "/" not in n and n.startswith("crush.db"),
                "Crush's data folder: read its crush.db, not the {n} beside it (settings, logs)")
_HF_SAVED: Rule = (lambda n: False, "a Hugging Face dataset saved to disk: its rows are read when it is named "
                                    "(compbench datasets import PATH), not its {n} in a walk")
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
        elif {"state.json", "dataset_info.json"} <= found or "dataset_dict.json" in found:
            out[d] = _HF_SAVED
        elif (gemini := tool_folder(d, found)) is not None:
            out[gemini[0]] = gemini[1]
    for d, rule in openhands_folders(names).items():
        out.setdefault(d, rule)
    return out


def _offered(f: Path, suffixes: dict[str, tuple[str, ...]], note: Callable[[str], None] | None = None,
             chats: Container[Path] = frozenset()) -> bool:
    """Is a file no tool folder claims a transcript candidate? By its ending, or (an ending a format names in
    ``WALK_SUFFIXES``, e.g. a markdown export) by its head, which that format must claim; in a folder holding an
    aider chat history (``chats``), by its first line (:func:`_request_log`)."""
    if _walked(f, note):
        return True
    if f.parent in chats and _request_log(f):
        return True
    claimants = [n for n, x in suffixes.items() if f.name.endswith(x)]
    return bool(claimants) and any(module(n).sniff(_head(f), None) for n in claimants)


def _head(f: Path, size: int = 0) -> str:
    from compbench.data.formats.detect import HEAD_BYTES

    with f.open("rb") as fh:
        return fh.read(size or HEAD_BYTES).decode("utf-8", errors="replace")


FIRST_LINE = 512  # bytes: what tells an aider log by its first line (its chat history's header, a request's)


def _request_log(f: Path) -> bool:
    """aider's ``--llm-history-file`` log, whatever its name: its first line is ``TO LLM <time>``."""
    return bool(module("aider-llm").sniff(_head(f, FIRST_LINE), None))


def _chat_folders(files: Iterable[Path], skipped: Container[Path]) -> set[Path]:
    """The folders holding an aider chat history, known by its first line (``--chat-history-file`` takes any name
    too): among the files a walk reads by name or as Markdown (``skipped``: hidden or a tool folder's)."""
    chat = module("aider-chat")
    suffixes = tuple(getattr(chat, "WALK_SUFFIXES", ()))
    return {f.parent for f in files if f not in skipped and (f.name in TOOL_FILES or f.name.endswith(suffixes))
            and chat.sniff(_head(f, FIRST_LINE), None)}


def _hidden_aider(f: Path, chats: Container[Path]) -> bool:
    """A hidden file beside a chat history that a walk opens to see if it is aider's request log: only one whose
    name is aider's (``.aider*``); the user's other dotfiles (``.env`` among them) are never opened."""
    return f.parent in chats and f.name.lower().startswith(".aider")


@dataclass
class _Walked:
    """One walked folder: its files (sorted), the tools' homes met, what was not entered and why."""

    files: list[Path] = field(default_factory=list)
    homes: dict[Path, Home] = field(default_factory=dict)
    not_entered: dict[Path, int] = field(default_factory=dict)  # a home -> its sub-folders not entered
    hidden: list[Path] = field(default_factory=list)  # hidden folders no tool keeps logs in
    dependencies: list[Path] = field(default_factory=list)
    unsupported: list[tuple[Path, str]] = field(default_factory=list)  # known tools' folders compbench does not read


def _walk(root: Path) -> _Walked:
    """The files below ``root``, entering the tools' homes (only where their logs are) and the tools' own hidden
    folders (``.crush``), and no other hidden folder, dependency folder or known tool's unread folder."""
    out = _Walked()
    if (h := home_of(root)) is not None:
        out.homes[root] = h
    for dirpath, dirnames, filenames in os.walk(root):
        d = Path(dirpath)
        home = next((x for x in (d, *d.parents) if x in out.homes), None)
        keep = []
        for name in sorted(dirnames):
            sub = d / name
            if home is not None and not out.homes[home].enters(sub.relative_to(home).as_posix()):
                out.not_entered[home] = out.not_entered.get(home, 0) + 1
            elif home is None and (h := home_of(sub)) is not None:
                out.homes[sub] = h
                keep.append(name)
            elif home is None and name in NOT_READ:
                out.unsupported.append((sub, NOT_READ[name]))
            elif home is None and name.startswith(".") and name not in TOOL_HIDDEN:
                out.hidden.append(sub)
            elif name in DEPENDENCIES or (sub / "pyvenv.cfg").is_file():
                out.dependencies.append(sub)
            else:
                keep.append(name)
        dirnames[:] = keep
        out.files += (d / n for n in filenames if (d / n).is_file())
    out.files.sort()
    return out


def _names(paths: list[Path], root: Path, most: int = 8) -> str:
    rel = [p.relative_to(root).as_posix() for p in paths]
    return ", ".join(rel[:most]) + (f" and {len(rel) - most} more" if len(rel) > most else "")


def _said(root: Path, w: _Walked, hidden_files: list[Path], note: Callable[[str], None] | None,
          skip: Callable[[Path, str], None] | None) -> None:
    """What the walk did not enter, in one line each (never a file's content: these were not opened)."""
    if skip is not None:
        for folder, why in w.unsupported:
            skip(folder, why + " (not opened)")
    if note is None:
        return
    if w.hidden or hidden_files:
        what = " and ".join(x for x in (f"{len(w.hidden)} hidden folder{'s' * (len(w.hidden) != 1)}" if w.hidden
                                        else "", f"{len(hidden_files)} hidden file{'s' * (len(hidden_files) != 1)}"
                                        if hidden_files else "") if x)
        note(f"{root}: passed over {what} no supported tool keeps its logs in (not opened): "
             f"{_names([*w.hidden, *hidden_files], root)}")
    if w.dependencies:
        note(f"{root}: passed over {len(w.dependencies)} dependency folder{'s' * (len(w.dependencies) != 1)} "
             f"(node_modules, virtual environments: no logs): {_names(w.dependencies, root)}")


def iter_files(paths: Iterable[str | Path], note: Callable[[str], None] | None = None,
               skip: Callable[[Path, str], None] | None = None) -> Iterator[Path]:
    """Expand directories (recursively, sorted) into transcript files.

    Hidden folders are passed over, and said, but the tools' homes (:mod:`.homes`: ``~/.claude``, ``~/.codex``,
    ``~/.gemini``, ``~/.pi``, ``~/.copilot``, ``~/.openhands``, the editors' task folders in ``~/.config``,
    OpenCode's and Goose's in ``~/.local``…) and the tools' own hidden files and folders (``.crush/``, aider's
    ``.aider.chat.history.md`` and ``.aider.llm.history``); hidden files are never read but those. A tool's
    own folder is read as the tool reads it: OpenCode's data folder through its database (the legacy
    ``storage/`` JSON it was migrated from and the credentials beside it are not opened), a Copilot CLI session
    folder through its ``events.jsonl``, a Gemini CLI home or project folder through its recordings and
    checkpoints, Crush's ``.crush`` through its ``crush.db``, Goose's ``sessions`` folder through its
    ``sessions.db``, a home through its logs; ``note`` is told how many files were passed over in each, and
    which folders were not entered. A file or folder of a tool compbench knows but does not read (:mod:`.known`,
    by name, hidden ones too, or by content among the files no format claims; :data:`.homes.NOT_READ`) is
    given to ``skip`` with the reason.
    """
    from compbench.data.formats.known import by_content, by_name, describe

    suffixes = {n: tuple(x) for n in detection_order() if (x := getattr(module(n), "WALK_SUFFIXES", ()))}
    for p in map(Path, paths):
        if not p.is_dir():
            if not p.exists():
                raise TranscriptError(p, None, MISSING)
            yield p
            continue
        w = _walk(p)
        under_home = {f for f in w.files if any(h in f.parents for h in w.homes)}
        hidden = {f for f in w.files if f not in under_home and _hidden(f.relative_to(p).parts)}
        folders = _tool_folders([f for f in w.files if f not in hidden])
        in_tools = {f for f in w.files if any(d in folders for d in (f.parent, *f.parent.parents))}
        chats = _chat_folders(w.files, hidden | in_tools)
        for h, tool_home in w.homes.items():
            folders.setdefault(h, (tool_home.read, tool_home.note()))
        passed: dict[Path, int] = {}
        skipped: dict[tuple[Path, str], int] = {}  # known files listed once a folder (per_folder ones)
        hidden_files: list[Path] = []
        for f in w.files:
            home = next((d for d in (f.parent, *f.parent.parents) if d in folders), None)
            known = by_name(f) if home is None else None
            offered = known is None and home is None and (
                _offered(f, suffixes, note, chats) if f not in hidden else _hidden_aider(f, chats) and _request_log(f))
            if known is None and home is None and f not in hidden and not offered and f.suffix in (".md", ".db"):
                known = by_content(f, _head(f))
            if known is not None:
                key = (f.parent, describe(known)) if known.per_folder else (f, describe(known))
                skipped[key] = skipped.get(key, 0) + 1
            elif offered:
                yield f
            elif home is None or f in hidden:
                if f in hidden:
                    hidden_files.append(f)
                continue
            elif (verdict := folders[home][0](f.relative_to(home).as_posix())) is None:
                continue  # read with the file its importer is given
            elif verdict:
                if _walked(f):
                    yield f
            elif f.name == UI_FILE and not (f.parent / API_FILE).exists():
                skipped[(f, UI_ONLY)] = 1
            else:
                passed[home] = passed.get(home, 0) + 1
        for (where, why), n in skipped.items():
            if skip is not None:
                skip(where, why if where.is_file() else f"{why} ({n} file{'s' * (n != 1)})")
        for d in sorted(set(passed) | set(w.not_entered)):
            if note is not None:
                n, k = passed.get(d, 0), w.not_entered.get(d, 0)
                files = f"{n} other file{'s' * (n != 1)}" if n else ""
                dirs = f"{k} folder{'s' * (k != 1)} not entered" if k else ""
                note(f"{d}: " + folders[d][1].format(n=" and ".join(x for x in (files, dirs) if x)))
        _said(p, w, hidden_files, note, skip)
