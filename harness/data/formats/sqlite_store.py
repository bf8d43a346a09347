"""``compbench.data.formats.sqlite_store`` — Opening a tool's SQLite store read-only, and telling stores apart by their
tables.

OpenCode, Crush and Goose keep their sessions in SQLite, in WAL mode. A store is opened read-only and nothing
is ever written beside it: one in WAL mode with no ``-wal`` file (checkpointed, or a copy) is opened
immutable, so not even a ``-shm`` appears; a live one (its ``-wal`` present) is read through the WAL, so
rows the tool has not checkpointed yet are seen; one whose ``-shm`` cannot be created (a read-only place) is
opened immutable, and the transcripts say that changes still in the ``-wal`` file were not seen.

Detection asks each store importer's ``sniff_store(schema)`` (``schema``: table name -> column names), so a
SQLite file is one store only when its tables say so, never by its file name or its first bytes alone.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from urllib.parse import quote

from compbench.data.transcript import Transcript
from compbench.errors import TranscriptError

MAGIC = "SQLite format 3"
IMMUTABLE_NOTE = "opened immutable (read-only place): changes still in the -wal file were not seen"
Schema = Mapping[str, frozenset[str]]
Sessions = Callable[[Path, sqlite3.Connection, Schema, list[str]], Iterator[Transcript]]


def is_sqlite(head: str) -> bool:
    return head.startswith(MAGIC)


def _text(raw: bytes) -> str:
    """Text columns as written; a damaged byte is replaced rather than failing the whole store."""
    return raw.decode("utf-8", errors="replace")


def _open(uri: str) -> sqlite3.Connection:
    con = sqlite3.connect(uri, uri=True)
    con.text_factory = _text
    con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return con


def connect(path: Path) -> tuple[sqlite3.Connection, list[str]]:
    """The store opened read-only (see the module docstring), and the warnings its transcripts carry."""
    uri = "file:" + quote(str(path.resolve()))
    with path.open("rb") as f:
        header = f.read(20)
    wal_mode = len(header) == 20 and header[18:20] == b"\x02\x02"
    if wal_mode and not path.with_name(path.name + "-wal").exists():
        try:
            return _open(uri + "?immutable=1"), []
        except (sqlite3.Error, UnicodeDecodeError) as e:
            raise TranscriptError(path, None, f"a readable SQLite database ({e})") from None
    try:
        return _open(uri + "?mode=ro"), []
    except (sqlite3.Error, UnicodeDecodeError):
        pass
    try:
        con = _open(uri + "?immutable=1")
    except (sqlite3.Error, UnicodeDecodeError) as e:
        raise TranscriptError(path, None, f"a readable SQLite database ({e})") from None
    return con, [IMMUTABLE_NOTE]


def schema_of(con: sqlite3.Connection) -> dict[str, frozenset[str]]:
    tables = [row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {t: frozenset(str(row[1]) for row in con.execute(f"PRAGMA table_info('{t}')")) for t in tables}


def schema(path: Path) -> dict[str, frozenset[str]]:
    """The store's tables and their columns (a TranscriptError if it is not a readable database)."""
    con, _ = connect(path)
    try:
        return schema_of(con)
    except (sqlite3.Error, UnicodeDecodeError) as e:
        raise TranscriptError(path, None, f"a readable SQLite database ({e})") from None
    finally:
        con.close()


def has(found: Schema, table: str, *columns: str) -> bool:
    return table in found and set(columns) <= found[table]


def read_store(path: Path, tool: str, expected: str, sniff: Callable[[Schema], bool],
               sessions: Sessions) -> Iterator[Transcript]:
    """The transcripts of a tool's store: opened read-only, refused in one line naming what was ``expected``
    and the tables it has when ``sniff`` does not know them, read by ``sessions``; a database error on the way
    is one line naming ``tool``'s database, and the store is closed however the reading ends."""
    con, warnings = connect(path)
    try:
        found = schema_of(con)
        if not sniff(found):
            tables = ", ".join(sorted(found)) or "no tables"
            raise TranscriptError(path, None, f"{expected}; this SQLite file has: {tables}")
        yield from sessions(path, con, found, warnings)
    except (sqlite3.Error, UnicodeDecodeError) as e:
        raise TranscriptError(path, None, f"a readable {tool} database ({type(e).__name__}: {e})") from None
    finally:
        con.close()
