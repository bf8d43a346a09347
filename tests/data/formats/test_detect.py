"""A file is one format only if it fits that format as a whole; otherwise one line naming what it is instead:
a known tool's file compbench does not read, or the closest format and what did not fit. ``validate`` and
``import`` say the same, and a folder walk lists every known tool's file it does not read, with the reason."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from compbench.data.formats import iter_files, read
from compbench.data.formats import openai_chat as chat
from compbench.data.formats.detect import detect
from compbench.data.formats.known import UNSUPPORTED
from compbench.errors import TranscriptError
from helpers import FIXTURES, main_cli

DATA = FIXTURES
GEMINI_ARRAY = DATA / "gemini-cli" / "gemini-conversation-1764584000000.json"
CLINE = DATA / "cline" / "api_conversation_history.json"


def test_the_chat_reader_no_longer_takes_a_gemini_array_or_a_cline_api_history() -> None:
    gemini, cline = json.loads(GEMINI_ARRAY.read_text()), json.loads(CLINE.read_text())
    assert not chat.sniff_document(gemini) and not chat.sniff_document(cline)
    assert not chat.sniff("", {"messages": gemini}) and not chat.sniff("", {"messages": cline})
    assert chat.sniff_document([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])  # still chat
    assert detect(GEMINI_ARRAY) == "gemini-cli"
    with pytest.raises(TranscriptError, match=r"message 1 holds Anthropic content blocks \(tool_use, tool_result\)"):
        list(read(CLINE, "openai"))  # forced, it still refuses to drop the tool calls
    with pytest.raises(TranscriptError, match="message 0 has 'parts' where a chat message has 'content'"):
        list(read(GEMINI_ARRAY, "openai"))


def test_a_misfit_names_the_closest_format_and_what_did_not_fit(tmp_path: Path) -> None:
    items = json.loads(GEMINI_ARRAY.read_text())
    items[3] = {"role": "user", "content": "a chat message among Gemini Contents"}
    odd = tmp_path / "x.json"
    odd.write_text(json.dumps(items), encoding="utf-8")
    with pytest.raises(TranscriptError) as e:
        detect(odd)
    assert str(e.value) == (f"{odd}: not a supported transcript: closest is gemini-cli (a list of Gemini Content), "
                            "but 1 of 11 items are not {role: user|model, parts: [part objects]}")
    lines = tmp_path / "g.jsonl"
    lines.write_text("".join(json.dumps({"messages": [{"role": "user", "parts": [{"text": "hi"}]}]}) + "\n"
                             for _ in range(3)), encoding="utf-8")
    with pytest.raises(TranscriptError, match=r"closest is openai \(chat JSONL\), but 3 of 3 messages have `parts` "
                                              r"where it expects `content`"):
        detect(lines)


def test_a_known_tools_file_is_named_not_guessed(tmp_path: Path) -> None:
    """A Cline history is Cline's now; a known file that is no transcript (aider's prompt history) is named."""
    assert detect(CLINE) == "cline"
    named = tmp_path / ".aider.input.history"
    named.write_text("# 2025-05-01\n+fix it\n", encoding="utf-8")
    with pytest.raises(TranscriptError, match=r"aider's prompt history \(the user's inputs only\): not a transcript"):
        detect(named)


def crush_db(path: Path) -> Path:
    """A SQLite file with Crush's tables (its migrations: sessions, messages, files; goose_db_version)."""
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE goose_db_version (id INTEGER PRIMARY KEY, version_id INTEGER);"
                      "CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT, summary_message_id TEXT);"
                      "CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT, role TEXT, parts TEXT);"
                      "CREATE TABLE files (id TEXT PRIMARY KEY, path TEXT);")
    con.commit()
    con.close()
    return path


def project(tmp_path: Path) -> Path:
    """A project folder with Gemini CLI exports, a README, and a known tool's file that is no transcript."""
    d = tmp_path / "proj"
    (d / "exports").mkdir(parents=True)
    shutil.copy(GEMINI_ARRAY, d / "exports")
    shutil.copy(DATA / "gemini-cli" / "share-emoji-last.md", d / "exports")
    (d / "README.md").write_text("# shop\n\nNot a transcript.\n", encoding="utf-8")
    (d / ".aider.input.history").write_text("# 2025-05-01\n+fix it\n", encoding="utf-8")
    return d


def test_a_walk_lists_known_tools_files_as_skipped_with_the_reason(tmp_path: Path) -> None:
    d = project(tmp_path)
    skipped: list[tuple[Path, str]] = []
    found = list(iter_files([d], skip=lambda f, why: skipped.append((f, why))))
    assert sorted(f.name for f in found) == ["gemini-conversation-1764584000000.json", "share-emoji-last.md"]
    said = {f.relative_to(d).as_posix(): why for f, why in skipped}
    assert said == {".aider.input.history": "aider's prompt history (the user's inputs only): not a transcript"}


def test_validate_and_import_agree_on_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    d = project(tmp_path)
    code, out, _ = main_cli(capsys, monkeypatch, "datasets", "validate", d)
    assert code == 0
    skips = [line for line in out.splitlines() if line.startswith("SKIP  ")]
    assert len(skips) == 1 and out.splitlines()[-1] == (
        "2 valid, 0 invalid; 2 transcripts (gemini-cli 2); 1 file of known tools compbench does not read, skipped")
    code, out, err = main_cli(capsys, monkeypatch, "datasets", "import", d, "--out", tmp_path / "ds")
    assert code == 0 and out.startswith("imported 2 transcripts (gemini-cli 2); 0 errors skipped; 1 file of known "
                                        "tools compbench does not read, skipped;")
    assert sorted(line.removeprefix("warning: skipped ") for line in err.splitlines()) == sorted(
        line.removeprefix("SKIP  ") for line in skips)
    meta = json.loads((tmp_path / "ds" / "dataset.json").read_text())
    assert len(meta["unsupported"]) == 1


def test_a_known_file_named_explicitly_fails_both_alike(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / ".aider.input.history"
    f.write_text("# 2025-05-01\n+fix it\n", encoding="utf-8")
    why = "not a supported transcript: aider's prompt history (the user's inputs only): not a transcript"
    code, out, _ = main_cli(capsys, monkeypatch, "datasets", "validate", f)
    assert code == 2 and f"FAIL  {f}: {why}" in out
    code, _, err = main_cli(capsys, monkeypatch, "datasets", "import", f, "--out", tmp_path / "ds")
    assert code == 2 and err.strip() == f"error: {f}: {why}"


def test_every_known_entry_is_found_by_name_or_content() -> None:
    assert all(k.names or k.head is not None or k.tables for k in UNSUPPORTED)


def test_a_folder_of_unsupported_files_only_fails_both_alike(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    d = tmp_path / "proj"
    d.mkdir()
    (d / ".aider.input.history").write_text("# 2025-05-01\n+fix it\n", encoding="utf-8")
    code, out, err = main_cli(capsys, monkeypatch, "datasets", "validate", d)
    assert code == 2 and out.startswith(f"SKIP  {d / '.aider.input.history'}: aider's prompt history")
    assert err.strip() == (f"error: no transcript files in {d} (1 file of known tools compbench does not read)")
    code, _, err = main_cli(capsys, monkeypatch, "datasets", "import", d, "--out", tmp_path / "ds")
    assert code == 2 and "1 file(s) of known tools compbench does not read" in err
