"""``compbench.data.formats.homes`` — The folders where agent tools keep their logs in a user's home, as data: which
of their files a folder walk reads, and which of their sub-folders it enters.

A walk passes over hidden folders (``.git``, ``.cache``, ``.ssh``: never opened) but for these, which it enters
whatever their name says, reading only their logs: every other file in them is a setting, a credential, a cache
or another program's, never opened, and counted in one line. Entered only where a log can be (``walks``), so
``~/.config`` costs a few folders, not every program's settings.

Where each tool writes (the importers' docstrings name the sources): Claude Code ``~/.claude/projects/<project>/
<session>.jsonl`` (sub-agents below it); Codex ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`` and
``archived_sessions/``; pi ``~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl``; Gemini CLI
``~/.gemini/tmp/<project>/chats/`` and checkpoints (:mod:`.gemini_cli`); GitHub Copilot CLI
``~/.copilot/session-state/<id>/events.jsonl``; OpenHands ``~/.openhands/conversations/<id>/`` (V1) and
``sessions/<id>/`` (V0, also ``~/.openhands-state``; :mod:`.openhands_folders`); OpenCode
``~/.local/share/opencode/opencode.db``; Goose ``~/.local/share/goose/sessions/``; Crush ``~/.local/share/crush/``
(its projects' ``.crush/`` are walked where they are); Cline, Roo Code and Kilo Code in a VS Code-family editor's
``User/globalStorage/<extension>/tasks/`` under ``~/.config/<editor>/`` (Linux), ``~/Library/Application
Support/<editor>/`` (macOS), ``~/AppData/Roaming/<editor>/`` (Windows) or a remote server's
``~/.vscode-server/data/`` (also Cursor's, Windsurf's).

:data:`NOT_READ`: folders of agent tools compbench does not read yet, listed by a walk as skipped, with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

CLINE_FAMILY = r"(?:saoudrizwan\.claude-dev|rooveterinaryinc\.roo-cline|kilocode\.kilo-code)"
EDITOR_TASKS = r"[^/]+/User/globalStorage/" + CLINE_FAMILY + r"/tasks/.+"


@dataclass(frozen=True)
class Home:
    """A tool's folder: ``logs``, what of it is read, in words; ``reads``, a regular expression over a file's
    path relative to the folder (the files a walk offers to the importers); ``walks``, one over a sub-folder's
    relative path (the folders it enters; all when empty); ``what`` it is and what the ``other`` files are;
    ``marker``, a path that must exist inside it for a folder of this name to be it (``Library`` is macOS's
    only with ``Application Support`` in it)."""

    name: str
    what: str
    logs: str
    reads: str
    other: str
    walks: str = ""
    marker: str = ""

    @cached_property
    def _reads(self) -> re.Pattern[str]:
        return re.compile(self.reads)

    @cached_property
    def _walks(self) -> re.Pattern[str] | None:
        return re.compile(self.walks) if self.walks else None

    def is_it(self, folder: Path) -> bool:
        return folder.name == self.name and (not self.marker or (folder / self.marker).exists())

    def read(self, rel: str) -> bool:
        return self._reads.fullmatch(rel) is not None

    def enters(self, rel: str) -> bool:
        return self._walks is None or self._walks.fullmatch(rel) is not None

    def note(self) -> str:
        return f"{self.what}: read {self.logs}, not the {{n}} beside them ({self.other}; not opened)"


def _down(*parts: str) -> str:
    """A sub-folder pattern entering each of ``parts`` in turn, and everything below the last."""
    out = r"(?:/.*)?"
    for part in reversed(parts[1:]):
        out = f"(?:/{part}{out})?"
    return parts[0] + out


SETTINGS = "other programs' settings and caches"
EDITORS = "the Cline / Roo Code / Kilo Code tasks of its VS Code-family editors"
SERVER_TASKS = r"data/User/globalStorage/" + CLINE_FAMILY + r"/tasks/.+"
OPENHANDS = r"(?:conversations|sessions|file_store)/.+"
HOMES: tuple[Home, ...] = (
    Home(".claude", "Claude Code's home", "its sessions in projects/", r"projects/.+\.jsonl",
         "settings, credentials, todos, plans, shell snapshots, caches"),
    Home(".codex", "Codex's home", "its rollouts in sessions/ and archived_sessions/",
         r"(?:sessions/.+/rollout-[^/]+\.jsonl|archived_sessions/(?:.+/)?rollout-[^/]+\.jsonl)",
         "config, credentials, the prompt history, logs"),
    Home(".pi", "pi's home", "its sessions in agent/sessions/", r"agent/sessions/.+\.jsonl",
         "settings, credentials, models, sub-agents' notes"),
    Home(".gemini", "Gemini CLI's home", "its chat recordings and checkpoints in tmp/",
         r"tmp/[^/]+/(?:chats/(?:session-[^/]+\.jsonl?|[^/]+/[^/]+\.jsonl)|checkpoint-[^/]+\.json)",
         "settings, credentials, prompt logs, tool outputs"),
    Home(".copilot", "GitHub Copilot CLI's home", "its sessions in session-state/",
         r"session-state/[^/]+/(?:events\.jsonl|workspace\.yaml)", "config, logs, checkpoints, plans"),
    Home(".openhands", "OpenHands' home", "its conversations", OPENHANDS,
         "settings, secrets, the conversations' state"),
    Home(".openhands-state", "OpenHands' home (before 0.40)", "its sessions", OPENHANDS,
         "settings, secrets, the conversations' state"),
    Home(".local", "the user's data folder (~/.local)", "OpenCode's, Goose's and Crush's stores in share/",
         r"share/(?:opencode/opencode[^/]*\.db(?:-[^/]+)?|goose/sessions/[^/]+|crush/crush\.db(?:-[^/]+)?)",
         "OpenCode's legacy storage and credentials, " + SETTINGS, walks=_down("share", "(?:opencode|goose|crush)")),
    Home(".config", "the user's settings folder (~/.config)", EDITORS, EDITOR_TASKS, "VS Code's and " + SETTINGS,
         walks=_down("[^/]+", "User", "globalStorage", CLINE_FAMILY)),
    Home(".vscode-server", "a VS Code remote server's folder", EDITORS, SERVER_TASKS, "extensions, settings, logs",
         walks=_down("data", "User", "globalStorage", CLINE_FAMILY)),
    Home(".cursor-server", "a Cursor remote server's folder", EDITORS, SERVER_TASKS, "extensions, settings, logs",
         walks=_down("data", "User", "globalStorage", CLINE_FAMILY)),
    Home("Library", "macOS's Library", EDITORS, r"Application Support/" + EDITOR_TASKS, SETTINGS,
         walks=_down("Application Support", "[^/]+", "User", "globalStorage", CLINE_FAMILY),
         marker="Application Support"),
    Home("AppData", "Windows' AppData", EDITORS, r"Roaming/" + EDITOR_TASKS, SETTINGS,
         walks=_down("Roaming", "[^/]+", "User", "globalStorage", CLINE_FAMILY), marker="Roaming"),
)
BY_NAME = {h.name: h for h in HOMES}

# Agent tools' folders compbench recognises but does not read yet: listed as skipped, never opened.
NOT_READ: dict[str, str] = {
    ".continue": "Continue's folder (its sessions): not supported yet",
    ".qwen": "Qwen Code's folder (a Gemini CLI fork; its recordings unverified): not supported yet",
    ".factory": "Factory's Droid folder (its sessions): not supported yet",
}

# Folders of dependencies, never of logs: not entered (said in one line).
DEPENDENCIES = frozenset({"node_modules", "__pycache__", "site-packages"})


def home_of(folder: Path) -> Home | None:
    h = BY_NAME.get(folder.name)
    return h if h is not None and h.is_it(folder) else None
