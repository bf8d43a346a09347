"""OpenCode's SQLite store (opencode.db): each session hydrated as OpenCode does and read as its export."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import shared_glob

from compbench.data.formats import iter_files, read, read_all
from compbench.data.formats.detect import detect
from compbench.data.transcript import Transcript
from compbench.errors import TranscriptError
from helpers import opencode_db


def sql(db: Path, *statements: str) -> Path:
    con = sqlite3.connect(db)
    for statement in statements:
        con.execute(statement)
    con.commit()
    con.close()
    return db


def exports(transcripts_dir: Path) -> list[Path]:
    return shared_glob(transcripts_dir / "opencode", "*.json")


def comparable(t: Transcript) -> Transcript:
    meta = {k: v for k, v in t.meta.items() if k not in ("path", "session")}
    return replace(t, meta=meta)


@pytest.mark.parametrize("schema", ["current", "early"])
def test_every_session_reads_as_its_export(transcripts_dir: Path, tmp_path: Path, schema: str) -> None:
    files = exports(transcripts_dir)
    db = opencode_db(tmp_path / "opencode.db", [json.loads(f.read_text()) for f in files], schema)
    assert detect(db) == "opencode-db"
    from_db = {t.id: t for t in read(db)}
    from_json = {t.id: t for t in read_all(files)}
    assert set(from_db) == set(from_json) == {"ses_39b7f9e89ffe7J0WzLzYrUt4eW", "ses_39b9a333bffeVNXMK6bSZru9Uq"}
    for sid, t in from_db.items():
        assert t.source == "opencode" and t.meta["session"] == sid and t.meta["path"] == str(db)
        assert comparable(t) == comparable(from_json[sid])
    # the session with OpenCode's manual compaction keeps it (the fidelity row needs it)
    (c,) = from_db["ses_39b7f9e89ffe7J0WzLzYrUt4eW"].compactions
    assert c.trigger == "manual" and c.index == 70


def test_sessions_come_in_creation_order_and_parts_by_id(tmp_path: Path) -> None:
    def doc(sid: str, created: int, texts: list[tuple[str, str]]) -> dict[str, object]:
        return {"info": {"id": sid, "time": {"created": created}, "directory": "/w", "version": "1.2.5"},
                "messages": [{"info": {"id": f"msg_{sid}", "role": "user", "time": {"created": created}},
                              "parts": [{"id": pid, "type": "text", "text": text} for pid, text in texts]}]}

    db = opencode_db(tmp_path / "opencode.db", [doc("ses_b", 2, [("prt_2", "second"), ("prt_1", "first")]),
                                                doc("ses_a", 1, [("prt_3", "only")])])
    ts = list(read(db))
    assert [t.id for t in ts] == ["ses_a", "ses_b"]
    assert [[p.text for p in t.messages[0].parts] for t in ts] == [["only"], ["first", "second"]]  # type: ignore[union-attr]


def test_not_opencodes_store_is_a_clear_error(tmp_path: Path) -> None:
    other = sql(tmp_path / "other.db", "CREATE TABLE notes (id integer)")
    with pytest.raises(TranscriptError, match=r"other\.db: a tool's SQLite store \(OpenCode's opencode\.db, Crush's "
                                              r"crush\.db, Goose's sessions\.db\); this SQLite file has tables: notes"):
        list(read(other))
    with pytest.raises(TranscriptError, match=r"other\.db: OpenCode's opencode\.db \(tables session, message and "
                                              r"part\); this SQLite file has: notes"):
        list(read(other, "opencode-db"))
    v2 = sql(tmp_path / "opencode2.db", "CREATE TABLE session_v2 (id text)")
    with pytest.raises(TranscriptError, match=r"OpenCode 2's \(session_v2\).*opencode export"):
        list(read(v2))


def test_broken_rows_name_the_session_and_row(tmp_path: Path) -> None:
    db = opencode_db(tmp_path / "opencode.db", [{"info": {"id": "ses_x", "time": {"created": 1}}, "messages": []}])
    sql(db, "INSERT INTO message (id, session_id, time_created, data) VALUES ('msg_1', 'ses_x', 1, '{oops')")
    with pytest.raises(TranscriptError, match=r"opencode\.db: a JSON object in the 'data' column of message msg_1"):
        list(read(db))
    sql(db, "UPDATE message SET data = '{\"role\": \"user\", \"time\": {\"created\": 1}}'",
        "INSERT INTO part (id, message_id, session_id, data) VALUES "
        "('prt_1', 'msg_1', 'ses_x', '{\"type\": \"text\", \"text\": 5}')")
    with pytest.raises(TranscriptError, match=r"opencode\.db: session ses_x: a string 'text' in a text part") as e:
        list(read(db))
    assert not e.value.internal and e.value.line is None


def test_a_directory_walk_takes_the_store_not_its_wal_or_other_databases(tmp_path: Path) -> None:
    data = tmp_path / "opencode"
    data.mkdir()
    opencode_db(data / "opencode.db", [{"info": {"id": "ses_x", "time": {"created": 1}}, "messages": []}])
    for name in ("opencode.db-wal", "opencode.db-shm", "cache.db"):
        (data / name).write_bytes(b"\0" * 16)
    assert [p.name for p in iter_files([data])] == ["opencode.db"]
    assert [t.id for t in read_all([data])] == ["ses_x"]


def test_a_wal_store_is_read_without_writing_next_to_it(tmp_path: Path) -> None:
    """OpenCode keeps its store in WAL mode. A store with no -wal file (checkpointed, or a copy) is read
    immutable: nothing is written beside it. A live one (a -wal file present) is read through the WAL,
    so rows OpenCode has not checkpointed yet are seen."""
    db = opencode_db(tmp_path / "opencode.db", [{"info": {"id": "ses_w", "time": {"created": 1}}, "messages": []}])
    sql(db, "PRAGMA journal_mode=WAL")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert list(before) == ["opencode.db"]
    assert [t.id for t in read(db)] == ["ses_w"]
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    live = sqlite3.connect(db)  # a writer that keeps its WAL open, as a running OpenCode does
    live.execute("PRAGMA wal_autocheckpoint=0")
    live.execute("INSERT INTO session (id, time_created) VALUES ('ses_z', 2)")
    live.commit()
    assert (tmp_path / "opencode.db-wal").exists()
    assert [t.id for t in read(db)] == ["ses_w", "ses_z"]
    live.close()
