"""``compbench.data.formats.opencode_db`` — OpenCode's SQLite store: ``opencode.db`` (``~/.local/share/opencode/``,
OpenCode 1.2 of February 2026 onwards; earlier versions wrote a JSON tree, later 2.x a different ``session_v2``
schema).

Read against anomalyco/opencode ``packages/opencode/src/session/session.sql.ts``: tables ``session``
(``id``, ``directory``, ``title``, ``version``, ``parent_id``, ``time_created`` …), ``message`` (``id``,
``session_id``, ``time_created``, ``data``: the message info without ``id``/``sessionID``) and ``part``
(``id``, ``message_id``, ``data``: the part without ``id``/``sessionID``/``messageID``). Each session is
hydrated as OpenCode does (``{...data, id, sessionID[, messageID]}``; messages by creation time then id,
parts by id) into the document ``opencode export`` writes, and read by the export importer: one
transcript per session, sub-agent sessions included (``meta["parent_session"]``).

The database is read writing nothing beside it (:mod:`compbench.data.formats.sqlite_store`: immutable, or a
live ``-wal`` read through a private copy). Column names that moved between 1.x releases (``created_at`` /
``time_created``) are looked up, not assumed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from compbench.data.formats import opencode
from compbench.data.formats.sqlite_store import Schema, opened
from compbench.data.transcript import Transcript
from compbench.errors import TranscriptError

NAME = "opencode-db"


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """A SQLite store is claimed by its tables (:func:`sniff_store`), never by its first bytes."""
    return False


def sniff_store(schema: Schema) -> bool:
    """OpenCode 1.x's tables, or OpenCode 2's ``session_v2`` (``read`` says that one is not read yet)."""
    return {"session", "message", "part"} <= set(schema) or "session_v2" in schema


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in con.execute(f"PRAGMA table_info('{table}')")}


def _pick(columns: set[str], *names: str) -> str | None:
    return next((n for n in names if n in columns), None)


def _data(path: Path, raw: Any, what: str) -> dict[str, Any]:
    try:
        value = json.loads(raw) if isinstance(raw, (str, bytes)) else None
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, dict):
        raise TranscriptError(path, None, f"a JSON object in the 'data' column of {what}")
    return value


def read(path: Path) -> Iterator[Transcript]:
    with opened(path) as (con, warnings):
        try:
            yield from _sessions(path, con, warnings)
        except (sqlite3.Error, UnicodeDecodeError) as e:
            raise TranscriptError(path, None, f"a readable OpenCode database ({type(e).__name__}: {e})") from None


def _sessions(path: Path, con: sqlite3.Connection, warnings: list[str]) -> Iterator[Transcript]:
    tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not {"session", "message", "part"} <= tables:
        if "session_v2" in tables:
            raise TranscriptError(path, None, "OpenCode 1.x's store (tables session, message, part); this is "
                                              "OpenCode 2's (session_v2), not read yet: `opencode export "
                                              "<session id>` writes a JSON file compbench reads")
        raise TranscriptError(path, None, "OpenCode's opencode.db (tables session, message and part); this SQLite "
                                          f"file has: {', '.join(sorted(tables)) or 'no tables'}")
    scols, mcols, pcols = _columns(con, "session"), _columns(con, "message"), _columns(con, "part")
    if "data" not in mcols or "data" not in pcols or "session_id" not in mcols or "message_id" not in pcols:
        raise TranscriptError(path, None, "OpenCode's message and part tables with a JSON 'data' column")
    s_time = _pick(scols, "time_created", "created_at")
    m_time = _pick(mcols, "time_created", "created_at")
    fields = {"directory": "directory", "title": "title", "version": "version", "slug": "slug",
              "project_id": "projectID", "parent_id": "parentID"}
    present = [c for c in fields if c in scols]
    select = ", ".join(["id", *present, *([s_time] if s_time else [])])
    order = f"{s_time}, id" if s_time else "rowid"
    for row in con.execute(f"SELECT {select} FROM session ORDER BY {order}").fetchall():
        sid = row[0]
        if not isinstance(sid, str) or not sid:
            raise TranscriptError(path, None, "a session id (text) in every row of the session table")
        info: dict[str, Any] = {"id": sid}
        for col, value in zip(present, row[1:], strict=False):
            if isinstance(value, str):
                info[fields[col]] = value
        if s_time and isinstance(row[-1], (int, float)):
            info["time"] = {"created": row[-1]}
        yield _session(path, con, info, m_time, warnings)


def _session(path: Path, con: sqlite3.Connection, info: dict[str, Any], m_time: str | None,
             warnings: list[str]) -> Transcript:
    sid = info["id"]
    order = f"{m_time}, id" if m_time else "rowid"
    messages: list[dict[str, Any]] = []
    by_id: dict[str, list[dict[str, Any]]] = {}
    for mid, raw in con.execute(f"SELECT id, data FROM message WHERE session_id = ? ORDER BY {order}", (sid,)):
        parts: list[dict[str, Any]] = []
        messages.append({"info": {**_data(path, raw, f"message {mid}"), "id": mid, "sessionID": sid},
                         "parts": parts})
        by_id[str(mid)] = parts
    query = ("SELECT message_id, id, data FROM part WHERE message_id IN "
             "(SELECT id FROM message WHERE session_id = ?) ORDER BY message_id, id")
    for mid, pid, raw in con.execute(query, (sid,)):
        owner = by_id.get(str(mid))
        if owner is not None:
            owner.append({**_data(path, raw, f"part {pid}"), "id": pid, "sessionID": sid, "messageID": mid})
    t = opencode.from_document(path, info, messages, where=f"session {sid}")
    return replace(t, meta={**t.meta, "session": sid}, warnings=(*t.warnings, *warnings))
