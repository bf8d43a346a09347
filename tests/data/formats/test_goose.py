"""Goose's sessions (block/goose 9a91fccfb5d7): its SQLite store, the JSONL files before it, the JSON and Markdown
exports; compactions and tool-pair summaries as the store keeps them; hand-made fixtures of each shape."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from stores import crush_db, goose_db

from compbench.data.formats import iter_files, read
from compbench.data.formats.detect import detect
from compbench.data.transcript import Reasoning, Text, ToolCall, ToolResult
from compbench.errors import TranscriptError

AGENT_ONLY = {"userVisible": False, "agentVisible": True}
USER_ONLY = {"userVisible": True, "agentVisible": False}
CONTINUE = ("Your context was compacted. The previous message contains a summary of the conversation so far.\n"
            "Do not mention that you read a summary or that conversation summarization occurred.\n"
            "Just continue the conversation naturally based on the summarized context.")
MANUAL = ("Your context was compacted at the user's request. The previous message contains a summary of the "
          "conversation so far.\nDo not mention that you read a summary or that conversation summarization "
          "occurred.\nJust continue the conversation naturally based on the summarized context.")


def text(role: str, body: str, mid: str, created: int, **meta: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"id": mid, "role": role, "created": created, "content": [{"type": "text", "text": body}]}
    if meta:
        d["metadata"] = meta
    return d


def call(mid: str, cid: str, name: str, created: int, **meta: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"id": mid, "role": "assistant", "created": created, "content": [
        {"type": "toolRequest", "id": cid, "toolCall": {"status": "success", "value": {"name": name,
                                                                                      "arguments": {"path": "a"}}}}]}
    if meta:
        d["metadata"] = meta
    return d


def result(mid: str, cid: str, out: str, created: int, **meta: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"id": mid, "role": "user", "created": created, "content": [
        {"type": "toolResponse", "id": cid, "toolResult": {"status": "success", "value": {
            "content": [{"type": "text", "text": out}], "isError": False}}}]}
    if meta:
        d["metadata"] = meta
    return d


def compacted() -> list[dict[str, Any]]:
    """A session after an automatic compaction and a tool-pair summary, as Goose stores it."""
    hidden = {"userVisible": True, "agentVisible": False}
    return [
        text("user", "fix the tests", "m1", 100, **hidden),
        call("m2", "c1", "developer__shell", 101, **hidden), result("m3", "c1", "1 failed", 101, **hidden),
        text("assistant", "a.py is wrong", "m4", 102, **hidden),
        text("user", "then fix a.py", "m5", 103, **{"userVisible": False, "agentVisible": False}),
        text("user", "## Goal\nfix the tests in a.py", "s1", 104, **AGENT_ONLY),
        text("assistant", CONTINUE, "k1", 104, **AGENT_ONLY),
        text("user", "then fix a.py", "m5b", 104),
        call("m6", "c2", "developer__text_editor", 105), result("m7", "c2", "def f(): pass", 105),
        call("m8", "c3", "developer__shell", 106), result("m9", "c3", "ok", 106),
        text("user", "A call to text_editor viewed a.py", "tp1", 106, **AGENT_ONLY),
        text("assistant", "fixed", "m10", 107),
    ]


def test_the_store_reads_every_session_with_its_compaction(tmp_path: Path) -> None:
    db = goose_db(tmp_path / "sessions.db", [
        {"id": "20260217_2", "working_dir": "/p", "name": "fix tests", "total_tokens": 41_000,
         "accumulated_total_tokens": 90_000,
         "model_config": {"model_name": "claude-sonnet-4-5", "context_limit": 200_000},
         "provider": "anthropic", "messages": compacted(), "created_at": "2026-02-17 10:05:00"},
        {"id": "20260217_1", "messages": [], "created_at": "2026-02-17 09:00:00"}])
    assert detect(db) == "goose-db"
    empty, t = read(db)
    assert empty.id == "20260217_1" and empty.messages == () and "the session has no messages" in empty.warnings
    assert t.source == "goose" and t.meta["model"] == "claude-sonnet-4-5" and t.meta["context_window"] == 200_000
    assert t.meta["session_usage"] == {"total_tokens": 41_000, "accumulated_total_tokens": 90_000}
    assert all(m.usage is None for m in t.messages) and "per session only" in t.meta["usage"]
    ids = [m.id for m in t.messages]
    (c,) = t.compactions
    assert c.trigger == "auto" and c.summary == "## Goal\nfix the tests in a.py" and c.summary_id == "s1"
    assert c.index == ids.index("m5b") + 1 and c.kept_ids == ("m5",)  # Goose re-adds the last prompt's text
    kinds = {m.id: m.meta.get("compaction") for m in t.messages}
    assert (kinds["s1"], kinds["k1"], kinds["m5b"], kinds["tp1"], kinds["m6"]) == (
        "summary", "continue", "continue", "tool-pair", None)
    assert t.meta["tool_pair_summaries"] == 1 and not t.messages[ids.index("m1")].meta.get("compaction")


def test_goose_tool_call_messages_of_one_reply_are_one_call(tmp_path: Path) -> None:
    db = goose_db(tmp_path / "sessions.db", [{"id": "s", "messages": [
        text("user", "look", "u", 1), {"id": "th", "role": "assistant", "created": 5, "content": [
            {"type": "thinking", "thinking": "two files", "signature": "x"}]},
        call("a1", "c1", "view", 5), result("r1", "c1", "one", 4), call("a2", "c2", "view", 5),
        result("r2", "c2", "two", 4), call("a3", "c3", "view", 9), result("r3", "c3", "three", 9)]}])
    (t,) = read(db)
    assert [(m.id, m.role) for m in t.messages] == [("u", "user"), ("th", "assistant"), ("r1", "tool"),
                                                     ("a3", "assistant"), ("r3", "tool")]  # a3: another reply
    assert t.messages[1].parts == (Reasoning("two files"), ToolCall("c1", "view", '{"path": "a"}'),
                                   ToolCall("c2", "view", '{"path": "a"}'))
    assert [p.output for p in t.messages[2].parts if isinstance(p, ToolResult)] == ["one", "two"]


def test_a_manual_compact_keeps_no_prompt_and_old_markers_are_skipped(tmp_path: Path) -> None:
    marker = {"id": "mk", "role": "assistant", "created": 3, "metadata": USER_ONLY,
              "content": [{"type": "conversationCompacted", "msg": "Conversation compacted and summarized"}]}
    db = goose_db(tmp_path / "sessions.db", [{"id": "s", "messages": [
        text("user", "hello", "u", 1, **USER_ONLY), text("assistant", "hi", "a", 2, **USER_ONLY), marker,
        text("user", "we said hello", "s1", 3, **AGENT_ONLY), text("assistant", MANUAL, "k1", 3, **AGENT_ONLY),
        text("user", "go on", "u2", 4), text("assistant", "ok", "a2", 5)]}])
    (t,) = read(db)
    (c,) = t.compactions
    assert c.trigger == "manual" and c.kept_ids == () and t.messages[c.index].id == "u2"
    assert next(m for m in t.messages if m.id == "mk").meta["compaction"] == "marker"


def test_older_stores_and_unknown_content(tmp_path: Path) -> None:
    msgs = [text("user", "hi", "", 1), {"role": "assistant", "created": 2, "content": [
        {"type": "text", "text": "yo"}, {"type": "fromTheFuture", "x": 1},
        {"type": "systemNotification", "notificationType": "inlineMessage", "msg": "ui"}]}]
    (t,) = read(goose_db(tmp_path / "sessions.db", [{"id": "old", "messages": msgs}], version=2))
    assert [m.text for m in t.messages] == ["hi", "yo"] and t.messages[0].id == "msg_old_1"
    assert "skipped 1 content item of unknown type 'fromTheFuture'" in t.warnings
    assert t.meta["schema_version"] == "2"


def test_a_broken_row_names_the_session_and_the_row(tmp_path: Path) -> None:
    db = goose_db(tmp_path / "sessions.db", [{"id": "s", "messages": [{"role": "user", "created": 1,
                                                                        "content": "{not json"}]}])
    with pytest.raises(TranscriptError, match=r"sessions\.db: session s, message row 1: JSON in the 'content_json' "
                                              r"column") as e:
        list(read(db))
    assert not e.value.internal
    db2 = goose_db(tmp_path / "two.db", [{"id": "s", "messages": [{"role": "system", "created": 1, "content": []}]}])
    with pytest.raises(TranscriptError, match=r"session s, message row 1: a Goose message: role user\|assistant"):
        list(read(db2))


def test_a_live_wal_is_read_and_nothing_written_beside_the_store(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    db = goose_db(folder / "sessions.db", [{"id": "s", "messages": [text("user", "hi", "u", 1)]}])
    sqlite3.connect(db).execute("PRAGMA journal_mode=WAL").connection.close()
    before = sorted(p.name for p in folder.iterdir())
    assert [t.id for t in read(db)] == ["s"] and sorted(p.name for p in folder.iterdir()) == before
    live = sqlite3.connect(db)
    live.execute("PRAGMA wal_autocheckpoint=0")
    live.execute("INSERT INTO sessions (id, working_dir) VALUES ('s2', '/w')")
    live.commit()
    assert [t.id for t in read(db)] == ["s", "s2"]
    live.close()


def legacy(path: Path, messages: list[dict[str, Any]], **meta: Any) -> Path:
    head = {"working_dir": "/p", "description": "fix tests", "message_count": len(messages), **meta}
    path.write_text("".join(json.dumps(x) + "\n" for x in [head, *messages]))
    return path


def test_a_legacy_jsonl_session_and_a_broken_line(tmp_path: Path) -> None:
    f = legacy(tmp_path / "20250101_120000.jsonl", compacted(), total_tokens=5)
    assert detect(f) == "goose"
    (t,) = read(f)
    assert t.id == "20250101_120000" and len(t.compactions) == 1 and t.meta["session_usage"] == {"total_tokens": 5}
    f.write_text(f.read_text() + "{broken\n")
    with pytest.raises(TranscriptError, match=r"20250101_120000\.jsonl:16: a JSON object"):
        list(read(f))
    skipped: list[TranscriptError] = []
    (t,) = read(f, skipped=skipped)
    assert [e.line for e in skipped] == [16] and len(t.compactions) == 1
    bad = legacy(tmp_path / "bad.jsonl", [{"role": "tool", "content": []}])
    with pytest.raises(TranscriptError, match=r"bad\.jsonl:2: a Goose message: role user\|assistant"):
        list(read(bad))


def test_the_json_export(tmp_path: Path) -> None:
    doc = {"id": "20260217_3", "working_dir": "/p", "name": "n", "description": "", "message_count": 2,
           "conversation": [text("user", "hi", "u", 1), text("assistant", "yo", "a", 2)], "total_tokens": 10}
    f = tmp_path / "export.json"
    f.write_text(json.dumps(doc, indent=2))
    assert detect(f) == "goose"
    (t,) = read(f)
    assert t.id == "20260217_3" and [m.text for m in t.messages] == ["hi", "yo"] and t.meta["title"] == "n"


EXPORT = """# Session Export: fix tests

*Total messages: 8*

---

### User:
run the tests

---

### Assistant:
**Thinking:**
> check first

Running them.

#### Tool Call: `shell` (namespace: `developer`)
**Arguments:**
*   **command**:
    ```sh
    pytest -q
    ```
*   **timeout**: 30

---

#### Tool Response:
1 failed

---

### Assistant:
#### Tool Call: `text_editor` (namespace: `developer`)
**Arguments:**
*   **path**: `a.py`
*   **verbose**: *true*

---

#### Tool Response:
```json
{"lines": 2}
```

---

### User:
## Goal
fix a.py

---

### Assistant:
""" + CONTINUE + """

---

### User:
a message whose text holds a rule

---

still the same message
"""


def test_the_markdown_export(tmp_path: Path) -> None:
    f = tmp_path / "fix.md"
    f.write_text(EXPORT)
    assert detect(f) == "goose-md"
    (t,) = read(f)
    roles = [m.role for m in t.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "user", "assistant", "user"]
    a1 = t.messages[1]
    assert a1.parts == (Reasoning("check first"), Text("Running them."),
                        ToolCall("m2c1", "developer__shell", '{"command": "pytest -q", "timeout": 30}'))
    assert t.messages[2].parts == (ToolResult("m2c1", "developer__shell", "1 failed"),)
    assert t.messages[3].parts == (ToolCall("m4c1", "developer__text_editor", '{"path": "a.py", "verbose": true}'),)
    assert t.messages[4].parts[0] == ToolResult("m4c1", "developer__text_editor", '{"lines": 2}')
    (c,) = t.compactions
    assert c.summary == "## Goal\nfix a.py" and c.trigger == "auto" and t.messages[c.index].text.startswith(
        "a message whose text holds a rule\n\n---\n\nstill")


def test_a_markdown_export_that_does_not_add_up_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "x.md"
    f.write_text(EXPORT.replace("*Total messages: 8*", "*Total messages: 9*"))
    with pytest.raises(TranscriptError, match=r"x\.md: 9 messages \(the export's \*Total messages\*\), found 8"):
        list(read(f))
    empty = tmp_path / "empty.md"
    empty.write_text("# Session Export: nothing\n\n*(This session has no messages)*\n")
    (t,) = read(empty)
    assert t.messages == () and t.meta["title"] == "nothing"


def test_misfits_are_refused_with_one_clear_line(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# Session Export: looks like one\n\nbut is not\n")
    with pytest.raises(TranscriptError, match=r"README\.md:1: JSON or JSONL text"):
        list(read(readme))
    with pytest.raises(TranscriptError, match=r"README\.md:3: '\*Total messages: N\*'"):
        list(read(readme, "goose-md"))
    chat = tmp_path / "c.md"
    chat.write_text("# aider chat started at 2025-01-01 10:00:00\n\n#### hi\n")
    with pytest.raises(TranscriptError, match=r"c\.md:1: '# Session Export: <name>'"):
        list(read(chat, "goose-md"))


def test_a_goose_data_folder_reads_the_store_and_passes_over_the_imported_jsonl(tmp_path: Path) -> None:
    folder = tmp_path / "goose" / "sessions"
    folder.mkdir(parents=True)
    goose_db(folder / "sessions.db", [{"id": "20250101_120000", "messages": [text("user", "hi", "u", 1)]}])
    legacy(folder / "20250101_120000.jsonl", [text("user", "hi", "u", 1)])
    notes: list[str] = []
    assert [f.name for f in iter_files([tmp_path / "goose"], notes.append)] == ["sessions.db"]
    assert notes == [f"{folder}: Goose's session store: read its sessions.db, not the 1 other file beside it (legacy "
                     ".jsonl sessions, which Goose imported into the database when it created it)"]
    legacy_only = tmp_path / "old" / "sessions"
    legacy_only.mkdir(parents=True)
    legacy(legacy_only / "20250101_120000.jsonl", [text("user", "hi", "u", 1)])
    assert [f.name for f in iter_files([tmp_path / "old"])] == ["20250101_120000.jsonl"]


def test_crush_and_goose_stores_are_told_apart(tmp_path: Path) -> None:
    g = goose_db(tmp_path / "sessions.db", [{"id": "g1", "messages": []}])
    c = crush_db(tmp_path / "crush.db", [{"id": "c1", "messages": []}])
    assert (detect(g), detect(c)) == ("goose-db", "crush-db")
    with pytest.raises(TranscriptError, match=r"sessions\.db: Crush's crush\.db \(tables sessions and messages with "
                                              r"a 'parts' column\); this SQLite file has: messages, schema_version"):
        list(read(g, "crush-db"))
    with pytest.raises(TranscriptError, match=r"crush\.db: Goose's sessions\.db"):
        list(read(c, "goose-db"))


def test_fidelity_compares_what_goose_kept_where_it_compacted(tmp_path: Path) -> None:
    from compbench.validation.fidelity import fidelity

    (t,) = read(legacy(tmp_path / "20250101_120000.jsonl", compacted()))
    rows = {r.preset: r for r in fidelity([t])}
    assert set(rows) == {"seed", "no-tool-pairs", "2025", "2026-02-26", "2026-03-16"}
    for r in rows.values():
        assert r.tool == "goose" and r.our_step is None and r.d_steps is None
        assert r.kept_jaccard == 1.0  # both keep the last prompt, re-added after the summary
        assert "no per-call usage in the log: the strategy was made to compact where the tool did" in r.cause


@pytest.mark.parametrize(("created", "preset"), [("2026-02-17 10:05:00", "seed"), ("2026-03-20 08:00:00", "2026-03-16"),
                                                 ("2026-01-05 08:00:00", "2025")])
def test_fidelity_picks_goose_s_build_from_the_session_date(tmp_path: Path, created: str, preset: str) -> None:
    """Goose records no version: the session's start date says which build it ran at the latest; that build's
    preset is the row "recorded by" it."""
    from compbench.validation.fidelity import fidelity

    db = goose_db(tmp_path / "sessions.db", [{"id": "20260217_2", "working_dir": "/p", "messages": compacted(),
                                               "created_at": created}])
    (t,) = read(db)
    own = [r.preset for r in fidelity([t]) if "the version this preset models" in r.cause]
    assert own == [preset]
    assert any(f"recorded by goose session of {created[:10]}" in r.cause for r in fidelity([t]))
