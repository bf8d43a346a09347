"""``compbench.data.formats.sqlite_store`` — Opening a tool's SQLite store without writing anything beside it, and
telling stores apart by their tables.

OpenCode, Crush and Goose keep their sessions in SQLite, in WAL mode. SQLite's read-only mode is not enough:
opening a store whose ``-wal`` file is present creates its ``-shm`` beside the user's live database (and a hot
``-journal`` cannot be rolled back read-only at all). So:

* a store with no ``-wal`` and no ``-journal`` beside it (checkpointed, a copy, or closed cleanly) is opened
  ``immutable``: SQLite reads the file and creates nothing;
* a store with a ``-wal`` or ``-journal`` (the tool running, or killed before its checkpoint) is read through
  a **private copy**: the database and its side files are copied into a temporary folder (the side file
  first, then the database, again if either changed while copied) and SQLite recovers the copy there, so
  rows the tool has not checkpointed yet are seen; the folder is removed when the reading ends;
* if the copy cannot be made (no room for it), the store is opened immutable and its transcripts say that
  changes still in the ``-wal`` file were not seen.

Detection asks each store importer's ``sniff_store(schema)`` (``schema``: table name -> column names), so a
SQLite file is one store only when its tables say so, never by its file name or its first bytes alone; the
schema is read immutable (no copy) unless the main file holds no table yet.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from compbench.data.transcript import Transcript
from compbench.errors import TranscriptError

MAGIC = "SQLite format 3"
SIDE_FILES = ("-wal", "-journal")  # what SQLite must read beside a database to see its latest rows
IMMUTABLE_NOTE = "opened immutable (no private copy could be made: {why}): changes still in the -wal file were not seen"
COPY_ATTEMPTS = 3
Schema = Mapping[str, frozenset[str]]
Sessions = Callable[[Path, sqlite3.Connection, Schema, list[str]], Iterator[Transcript]]


def _text(raw: bytes) -> str:
    """Text columns as written; a damaged byte is replaced rather than failing the whole store."""
    return raw.decode("utf-8", errors="replace")


def _open(uri: str) -> sqlite3.Connection:
    con = sqlite3.connect(uri, uri=True)
    con.text_factory = _text
    con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return con


def _uri(path: Path) -> str:
    return "file:" + quote(str(path.resolve()))


def side_files(path: Path) -> list[Path]:
    """The ``-wal`` / ``-journal`` files beside ``path`` that hold something (an empty one holds no row)."""
    out = []
    for suffix in SIDE_FILES:
        f = path.with_name(path.name + suffix)
        try:
            if f.stat().st_size > 0:
                out.append(f)
        except OSError:
            continue
    return out


def _state(files: list[Path]) -> list[tuple[int, int]]:
    out = []
    for f in files:
        st = f.stat()
        out.append((st.st_size, st.st_mtime_ns))
    return out


def _private_copy(path: Path, sides: list[Path], into: Path) -> Path:
    """``path`` and its side files copied into ``into``; copied again (up to COPY_ATTEMPTS times) when the tool
    wrote to either meanwhile, so the copy is one moment of the store."""
    copy = into / path.name
    for _ in range(COPY_ATTEMPTS):
        before = _state([*sides, path])
        for f in sides:  # the log before the database: a checkpoint in between leaves frames SQLite re-applies
            shutil.copyfile(f, into / f.name)
        shutil.copyfile(path, copy)
        if _state([*sides, path]) == before:
            break
    return copy


@contextmanager
def opened(path: Path) -> Iterator[tuple[sqlite3.Connection, list[str]]]:
    """The store opened as the module docstring says, and the warnings its transcripts carry; any private copy
    is removed when the block ends."""
    sides = side_files(path)
    warnings: list[str] = []
    folder: str | None = None
    target = path
    try:
        if sides:
            try:
                folder = tempfile.mkdtemp(prefix="compbench-store-")
                target = _private_copy(path, sides, Path(folder))
            except OSError as e:
                warnings.append(IMMUTABLE_NOTE.format(why=e.strerror or type(e).__name__))
                target = path
        try:
            con = _open(_uri(target) if target != path else _uri(path) + "?immutable=1")
        except (sqlite3.Error, UnicodeDecodeError) as e:
            raise TranscriptError(path, None, f"a readable SQLite database ({e})") from None
        try:
            yield con, warnings
        finally:
            con.close()
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def connect(path: Path) -> tuple[sqlite3.Connection, list[str]]:
    """The store opened immutable, for a caller that reads no side file (see :func:`opened` for one that must)."""
    try:
        return _open(_uri(path) + "?immutable=1"), []
    except (sqlite3.Error, UnicodeDecodeError) as e:
        raise TranscriptError(path, None, f"a readable SQLite database ({e})") from None


def schema_of(con: sqlite3.Connection) -> dict[str, frozenset[str]]:
    tables = [row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {t: frozenset(str(row[1]) for row in con.execute(f"PRAGMA table_info('{t}')")) for t in tables}


def schema(path: Path) -> dict[str, frozenset[str]]:
    """The store's tables and their columns (a TranscriptError if it is not a readable database): read from the
    file alone, writing nothing; through a private copy only when the file holds no table yet (a new store whose
    tables are still in its ``-wal``)."""
    con, _ = connect(path)
    try:
        found = schema_of(con)
    except (sqlite3.Error, UnicodeDecodeError) as e:
        raise TranscriptError(path, None, f"a readable SQLite database ({e})") from None
    finally:
        con.close()
    if found or not side_files(path):
        return found
    with opened(path) as (copy, _):
        try:
            return schema_of(copy)
        except (sqlite3.Error, UnicodeDecodeError) as e:
            raise TranscriptError(path, None, f"a readable SQLite database ({e})") from None


def has(found: Schema, table: str, *columns: str) -> bool:
    return table in found and set(columns) <= found[table]


def read_store(path: Path, tool: str, expected: str, sniff: Callable[[Schema], bool],
               sessions: Sessions) -> Iterator[Transcript]:
    """The transcripts of a tool's store: opened writing nothing beside it (:func:`opened`), refused in one line
    naming what was ``expected`` and the tables it has when ``sniff`` does not know them, read by ``sessions``; a
    database error on the way is one line naming ``tool``'s database, and the store is closed (its private copy
    removed) however the reading ends."""
    with opened(path) as (con, warnings):
        try:
            found = schema_of(con)
            if not sniff(found):
                tables = ", ".join(sorted(found)) or "no tables"
                raise TranscriptError(path, None, f"{expected}; this SQLite file has: {tables}")
            yield from sessions(path, con, found, warnings)
        except (sqlite3.Error, UnicodeDecodeError) as e:
            raise TranscriptError(path, None, f"a readable {tool} database ({type(e).__name__}: {e})") from None
