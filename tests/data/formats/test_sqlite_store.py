"""Reading a tool's SQLite store writes nothing beside it (Crush, OpenCode, Goose): a store a killed tool left with
its -wal, and one a running tool holds open, are read through a private copy, the rows only in the -wal seen, the
folder listed byte for byte before and after."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from stores import crush_db, goose_db, part

from compbench.data.formats import read
from compbench.data.formats import sqlite_store as store
from compbench.data.formats.sqlite_store import schema, side_files
from helpers import opencode_db

# each store: a builder writing one session "s1", and the SQL a running tool would add a session "s2" with
Builder = Callable[[Path], Path]


def _crush(folder: Path) -> Path:
    return crush_db(folder / "crush.db", [{"id": "s1", "messages": [
        {"id": "u1", "role": "user", "parts": [part("text", text="hi")]}]}])


def _opencode(folder: Path) -> Path:
    return opencode_db(folder / "opencode.db", [{"info": {"id": "s1", "time": {"created": 1}}, "messages": []}])


def _goose(folder: Path) -> Path:
    (folder / "sessions").mkdir()
    return goose_db(folder / "sessions" / "sessions.db", [{"id": "s1", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}]}])


STORES: dict[str, tuple[Builder, str]] = {
    "crush": (_crush, "INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('s2', 't', 9, 9)"),
    "opencode": (_opencode, "INSERT INTO session (id, time_created) VALUES ('s2', 2)"),
    "goose": (_goose, "INSERT INTO sessions (id, working_dir, created_at) VALUES ('s2', '/w', '2026-02-18 10:00:00')"),
}


def listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def live(db: Path, statement: str) -> sqlite3.Connection:
    """The tool running: its store in WAL mode, a write that sits in the -wal (no checkpoint)."""
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute(statement)
    con.commit()
    return con


@pytest.mark.parametrize("tool", sorted(STORES))
def test_a_store_a_killed_tool_left_with_its_wal_is_read_and_nothing_appears_beside_it(tool: str,
                                                                                       tmp_path: Path) -> None:
    build, statement = STORES[tool]
    running = tmp_path / "running"
    running.mkdir()
    db = build(running)
    con = live(db, statement)
    left = tmp_path / "left"  # what a killed tool leaves: the database and its -wal, no -shm
    left.mkdir()
    for f in (db, db.with_name(db.name + "-wal")):
        shutil.copyfile(f, left / f.name)
    con.close()
    copy = left / db.name
    before = listing(left)
    assert sorted(before) == [db.name, db.name + "-wal"]
    assert [p.name for p in side_files(copy)] == [db.name + "-wal"]
    assert sorted(t.id for t in read(copy)) == ["s1", "s2"]  # s2 is only in the -wal
    assert listing(left) == before


@pytest.mark.parametrize("tool", sorted(STORES))
def test_a_store_its_tool_holds_open_is_read_without_touching_its_files(tool: str, tmp_path: Path) -> None:
    build, statement = STORES[tool]
    db = build(tmp_path)
    con = live(db, statement)
    try:
        before = listing(db.parent)
        assert {db.name + "-wal", db.name + "-shm"} <= set(before)
        assert sorted(t.id for t in read(db)) == ["s1", "s2"]
        assert listing(db.parent) == before  # not even the -shm's read marks move
    finally:
        con.close()


def test_a_checkpointed_store_is_read_immutable_without_a_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = _crush(tmp_path)
    before = listing(tmp_path)
    monkeypatch.setattr(store, "_private_copy", lambda *a: pytest.fail("no side file: nothing to copy"))
    assert [t.id for t in read(db)] == ["s1"]
    assert listing(tmp_path) == before


def test_the_private_copy_is_removed_however_the_reading_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = _crush(tmp_path)
    con = live(db, STORES["crush"][1])
    made: list[Path] = []
    real = store.tempfile.mkdtemp

    def mkdtemp(prefix: str) -> str:
        made.append(Path(real(prefix=prefix, dir=tmp_path.parent)))
        return str(made[-1])

    monkeypatch.setattr(store.tempfile, "mkdtemp", mkdtemp)
    try:
        first = next(iter(read(db)))  # a reader that stops after the first transcript
        assert first.id == "s1" and made
        del first
        import gc

        gc.collect()
        assert all(not d.exists() for d in made)
    finally:
        con.close()


def test_no_room_for_a_copy_reads_immutable_and_says_what_was_not_seen(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    db = _crush(tmp_path)
    con = live(db, STORES["crush"][1])

    def full(prefix: str) -> str:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store.tempfile, "mkdtemp", full)
    try:
        before = listing(tmp_path)
        ts = list(read(db))
        assert [t.id for t in ts] == ["s1"]  # s2 is in the -wal, which immutable does not read
        assert ts[0].warnings[0] == ("opened immutable (no private copy could be made: No space left on device): "
                                     "changes still in the -wal file were not seen")
        assert listing(tmp_path) == before
    finally:
        con.close()


def test_schema_reads_the_file_alone_unless_its_tables_are_only_in_the_wal(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.db"
    con = sqlite3.connect(fresh)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("CREATE TABLE notes (id integer)")
    con.commit()
    try:
        before = listing(tmp_path)
        assert schema(fresh) == {"notes": frozenset({"id"})}
        assert listing(tmp_path) == before
    finally:
        con.close()
