"""``compbench.data.formats.goose_db`` — Goose's session store, ``~/.local/share/goose/sessions/sessions.db``: every
session.

Read against block/goose 9a91fccfb5d7, ``crates/goose/src/session/session_manager.rs`` (schema version 7;
since September 2025, when Goose moved from one JSONL file per session to this store and imported the JSONL
files it found into it): ``sessions`` (``id``, ``name``, ``description``, ``working_dir``, ``created_at``,
token totals, ``model_config_json`` from version 6, ``session_type`` from 5) and ``messages`` (``role``,
``content_json``, ``created_timestamp``, ``metadata_json`` from version 3, ``message_id`` from 7), read in
``timestamp`` order as Goose does (``get_conversation``). Messages and compactions are read as
:mod:`compbench.data.formats.goose_messages` says; the window Goose used (``model_config_json``'s
``context_limit``) goes to ``meta["context_window"]``. Usage is per session only. The store is read
writing nothing beside it (:mod:`compbench.data.formats.sqlite_store`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compbench.data.formats import goose_messages as gm
from compbench.data.formats.sqlite_store import Schema, has, read_store
from compbench.data.transcript import Transcript
from compbench.errors import TranscriptError

NAME = "goose-db"
MULTI_TRANSCRIPT = True
TOKENS = gm.TOKENS


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """A SQLite store is claimed by its tables (:func:`sniff_store`)."""
    return False


def sniff_store(schema: Schema) -> bool:
    return "schema_version" in schema and has(schema, "sessions", "id", "working_dir") and has(
        schema, "messages", "session_id", "role", "content_json", "created_timestamp")


def read(path: Path) -> Iterator[Transcript]:
    return read_store(path, "Goose", "Goose's sessions.db (tables schema_version, sessions and messages with "
                                     "'content_json')", sniff_store, _sessions)


def _sessions(path: Path, con: sqlite3.Connection, found: Schema, warnings: list[str]) -> Iterator[Transcript]:
    scols, mcols = found["sessions"], found["messages"]
    wanted = ["id", *(c for c in ("name", "description", "working_dir", "created_at", "session_type",
                                  "provider_name", "model_config_json", *TOKENS) if c in scols)]
    order = "created_at, id" if "created_at" in scols else "rowid"
    version = con.execute("SELECT max(version) FROM schema_version").fetchone()[0]
    mwanted = ["id", "role", "content_json", "created_timestamp",
               *(c for c in ("metadata_json", "message_id") if c in mcols)]
    morder = "timestamp, id" if "timestamp" in mcols else "id"

    def fail(where: str, expected: str) -> TranscriptError:
        return TranscriptError(path, None, f"{where}: {expected}")

    for row in con.execute(f"SELECT {', '.join(wanted)} FROM sessions ORDER BY {order}").fetchall():
        info = dict(zip(wanted, row, strict=True))
        sid = info["id"]
        if not isinstance(sid, str) or not sid:
            raise TranscriptError(path, None, "a session id (text) in every row of the sessions table")
        stored = []
        query = f"SELECT {', '.join(mwanted)} FROM messages WHERE session_id = ? ORDER BY {morder}"
        for mrow in con.execute(query, (sid,)):
            m = dict(zip(mwanted, mrow, strict=True))
            where = f"session {sid}, message row {m['id']}"
            d = {"id": m.get("message_id") or f"msg_{sid}_{m['id']}", "role": m["role"],
                 "created": m["created_timestamp"], "content": _json(m["content_json"], where, "content_json", fail)}
            if m.get("metadata_json"):
                d["metadata"] = _json(m["metadata_json"], where, "metadata_json", fail)
            stored.append(gm.raw(d, where, d["id"], fail))
        t = gm.build(sid, stored, _meta(path, info, version), fail)
        yield Transcript(t.id, t.source, t.messages, t.meta, t.compactions, (*warnings, *t.warnings))


def _json(raw: Any, where: str, column: str, fail: gm.Fail) -> Any:
    try:
        return json.loads(raw) if isinstance(raw, (str, bytes)) else None
    except (ValueError, RecursionError):
        raise fail(where, f"JSON in the '{column}' column") from None


def _meta(path: Path, info: dict[str, Any], version: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"path": str(path), "session": info["id"], "usage": gm.USAGE_NOTE}
    for src, dst in (("working_dir", "cwd"), ("provider_name", "provider"), ("session_type", "session_type")):
        if isinstance(info.get(src), str) and info[src]:
            meta[dst] = info[src]
    title = info.get("name") or info.get("description")
    if isinstance(title, str) and title:
        meta["title"] = title
    if isinstance(info.get("created_at"), str):
        meta["started_at"] = info["created_at"].replace(" ", "T")
    try:
        config = json.loads(info["model_config_json"]) if info.get("model_config_json") else None
    except (ValueError, RecursionError):
        config = None
    meta.update(gm.model_meta(info, config))
    if isinstance(version, int):
        meta["schema_version"] = str(version)
    return meta
