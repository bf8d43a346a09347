"""A folder walk (compbench.data.formats.walk, .homes): a home folder laid out like a user's imports every tool's
logs it knows, hidden homes included, opens nothing else (no setting, no credential), and lists what it passed
over with the reason."""

from __future__ import annotations

import builtins
import io
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from homes import SECRETS, build_home

from compbench.data.formats import iter_files
from compbench.data.formats.homes import BY_NAME
from compbench.data.importing import Imported, Merged, Note, Unsupported, collect

EVERY_TOOL = {"aider", "claude-code", "cline", "codex", "copilot", "crush", "gemini-cli", "goose", "kilo-code",
              "mini-swe-agent", "opencode", "openhands", "pi", "roo-code"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return build_home(tmp_path / "home")


def test_a_home_folder_imports_every_tool_it_knows_and_says_what_it_passed_over(home: Path) -> None:
    events = list(collect([home]))
    imported = [e for e in events if isinstance(e, Imported)]
    assert {e.transcript.source for e in imported} == EVERY_TOOL
    assert sorted(e.rel.split("/")[1] for e in imported) == [
        ".claude", ".codex", *[".config"] * 5, ".copilot", ".gemini", ".local", ".local", ".openhands", ".pi",
        "Downloads", "Downloads", *["work"] * 5]
    notes = [e.text.replace(str(home), "~") for e in events if isinstance(e, Note)]
    assert "~/.claude: Claude Code's home: read its sessions in projects/, not the 3 other files beside them " \
           "(settings, credentials, todos, plans, shell snapshots, caches; not opened)" in notes
    assert "~/.config: the user's settings folder (~/.config): read the Cline / Roo Code / Kilo Code tasks of its " \
           "VS Code-family editors, not the 2 other files and 1 folder not entered beside them (VS Code's and " \
           "other programs' settings and caches; not opened)" in notes
    assert notes[-2:] == [
        "~: passed over 5 hidden folders and 1 hidden file no supported tool keeps its logs in (not opened): .aws, "
        ".cache, .ssh, work/app/.git, work/app/.venv, .bashrc",
        "~: passed over 1 dependency folder (node_modules, virtual environments: no logs): work/app/node_modules"]
    assert not any("hidden" in n and (".claude" in n or ".codex" in n or ".config" in n) for n in notes)
    skipped = {Path(e.file).relative_to(home).as_posix(): e.reason for e in events if isinstance(e, Unsupported)}
    assert skipped == {
        ".continue": "Continue's folder (its sessions): not supported yet (not opened)",
        ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1700000000099/ui_messages.json":
            "a Cline / Roo Code / Kilo Code task's ui_messages.json, the UI's record, with no "
            "api_conversation_history.json beside it (the conversation): nothing to import (not opened)"}
    assert [Path(e.file).name for e in events if isinstance(e, Merged)] == [".aider.chat.history.md"]


def test_nothing_is_opened_but_the_logs(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real_open, real_connect = io.open, sqlite3.connect

    def spy_open(file: Any, *a: Any, **k: Any) -> Any:
        opened.append(str(file))
        return real_open(file, *a, **k)

    def spy_connect(database: Any, *a: Any, **k: Any) -> Any:
        opened.append(str(database))
        return real_connect(database, *a, **k)

    monkeypatch.setattr(io, "open", spy_open)
    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(sqlite3, "connect", spy_connect)
    assert len([e for e in collect([home]) if isinstance(e, Imported)]) == 20
    secrets = {str(home / rel) for rel in SECRETS}
    assert not [p for p in opened if any(p.endswith(s) or s in p for s in secrets)]
    assert any(p.endswith("api_conversation_history.json") for p in opened)  # the spy saw the reads


def test_a_tools_home_named_alone_reads_only_its_logs(home: Path) -> None:
    notes: list[str] = []
    assert [f.relative_to(home).as_posix() for f in iter_files([home / ".claude"], notes.append)] == [
        ".claude/projects/-home-u-app/22222222-2222-4222-8222-222222222222.jsonl"]
    assert len(notes) == 1 and "not the 3 other files" in notes[0]


@pytest.mark.parametrize(("home", "rel", "read", "enters"), [
    (".config", "Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1/api_conversation_history.json", True, True),
    (".config", "Code - Insiders/User/globalStorage/kilocode.kilo-code/tasks/1/ui_messages.json", True, True),
    (".config", "Code/User/settings.json", False, True),
    (".config", "Code/User/workspaceStorage/x/state.vscdb", False, False),
    (".config", "google-chrome/Default/Preferences", False, False),
    (".local", "share/opencode/opencode.db", True, True),
    (".local", "share/opencode/auth.json", False, True),
    (".local", "state/x/y", False, False),
    (".codex", "sessions/2026/01/01/rollout-x.jsonl", True, True),
    (".codex", "history.jsonl", False, True),
    (".claude", "projects/p/s/subagents/agent-1.jsonl", True, True),
    (".claude", "todos/t.json", False, True),
])
def test_a_home_reads_its_logs_and_enters_only_where_they_can_be(home: str, rel: str, read: bool,
                                                                 enters: bool) -> None:
    h = BY_NAME[home]
    assert h.read(rel) is read
    assert h.enters(rel.rsplit("/", 1)[0]) is enters


def test_library_is_a_home_only_on_macos(tmp_path: Path) -> None:
    lib = tmp_path / "Library"
    lib.mkdir()
    assert not BY_NAME["Library"].is_it(lib)  # a project's folder named Library
    (lib / "Application Support").mkdir()
    assert BY_NAME["Library"].is_it(lib)
