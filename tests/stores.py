"""Hand-made SQLite stores of Crush and Goose, laid out as the tools' migrations lay them out."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# charmbracelet/crush internal/db/migrations (37f36e93): the tables after every migration ("current"), and as
# they were before 20250627 / 20250810 ("early": no provider, no is_summary_message, no todos)
CRUSH_SESSIONS = ("CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL, "
                  "message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0, "
                  "completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0, "
                  "updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT{todos})")
CRUSH_MESSAGES = ("CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, "
                  "parts TEXT NOT NULL default '[]', model TEXT, created_at INTEGER NOT NULL, "
                  "updated_at INTEGER NOT NULL, finished_at INTEGER{extra})")


def part(kind: str, **data: Any) -> dict[str, Any]:
    return {"type": kind, "data": data}


def crush_db(path: Path, sessions: Sequence[dict[str, Any]], schema: str = "current") -> Path:
    """Each session: ``id``, optional ``parent``, ``title``, ``prompt_tokens``, ``completion_tokens``, ``cost``,
    ``created``, ``summary`` (summary_message_id) and ``messages``: dicts of ``id``, ``role``, ``parts`` (a list,
    or a raw string stored as it is), ``created``, optional ``model``, ``provider``, ``summary`` (is_summary)."""
    con = sqlite3.connect(path)
    current = schema == "current"
    con.execute(CRUSH_SESSIONS.format(todos=", todos TEXT" if current else ""))
    con.execute(CRUSH_MESSAGES.format(extra=", provider TEXT, is_summary_message INTEGER DEFAULT 0 NOT NULL"
                                      if current else ""))
    con.execute("CREATE TABLE goose_db_version (id INTEGER PRIMARY KEY AUTOINCREMENT, version_id INTEGER NOT NULL, "
                "is_applied INTEGER NOT NULL, tstamp TIMESTAMP DEFAULT (datetime('now')))")
    for v in (0, 20250424200609, 20250515105448, *((20250810000000, 20260127000000) if current else ())):
        con.execute("INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, 1)", (v,))
    for s in sessions:
        con.execute("INSERT INTO sessions (id, parent_session_id, title, prompt_tokens, completion_tokens, cost, "
                    "updated_at, created_at, summary_message_id) VALUES (?,?,?,?,?,?,?,?,?)",
                    (s["id"], s.get("parent"), s.get("title", "t"), s.get("prompt_tokens", 0),
                     s.get("completion_tokens", 0), s.get("cost", 0.0), s.get("created", 1), s.get("created", 1),
                     s.get("summary")))
        for k, m in enumerate(s.get("messages", [])):
            parts = m["parts"] if isinstance(m["parts"], str) else json.dumps(m["parts"])
            cols = ["id", "session_id", "role", "parts", "model", "created_at", "updated_at"]
            vals = [m["id"], s["id"], m["role"], parts, m.get("model"), m.get("created", 1_775_000_000 + k),
                    m.get("created", 1_775_000_000 + k)]
            if current:
                cols += ["provider", "is_summary_message"]
                vals += [m.get("provider"), 1 if m.get("summary") else 0]
            con.execute(f"INSERT INTO messages ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", vals)
    con.commit()
    con.close()
    return path


def goose_db(path: Path, sessions: Sequence[dict[str, Any]], version: int = 7) -> Path:
    """Goose's sessions.db (block/goose session_manager.rs, schema version 7; ``version`` 2 lacks the
    metadata_json and message_id columns). Each session: ``id``, ``working_dir``, ``name``, token columns and
    ``messages`` (Goose ``Message`` objects: ``role``, ``created``, ``content``, optional ``id``, ``metadata``)."""
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT "
                "CURRENT_TIMESTAMP)")
    con.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    con.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL "
                "DEFAULT '', working_dir TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at "
                "TIMESTAMP DEFAULT CURRENT_TIMESTAMP, extension_data TEXT DEFAULT '{}', total_tokens INTEGER, "
                "input_tokens INTEGER, output_tokens INTEGER, accumulated_total_tokens INTEGER, "
                "accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER, schedule_id TEXT, "
                "recipe_json TEXT, provider_name TEXT, model_config_json TEXT)")
    later = version >= 7
    con.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT "
                "NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL, timestamp TIMESTAMP "
                f"DEFAULT CURRENT_TIMESTAMP, tokens INTEGER{', metadata_json TEXT, message_id TEXT' if later else ''})")
    for s in sessions:
        con.execute("INSERT INTO sessions (id, name, working_dir, created_at, total_tokens, input_tokens, "
                    "output_tokens, accumulated_total_tokens, model_config_json, provider_name) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (s["id"], s.get("name", ""), s.get("working_dir", "/w"), s.get("created_at", "2026-02-17 10:00:00"),
                     s.get("total_tokens"), s.get("input_tokens"), s.get("output_tokens"),
                     s.get("accumulated_total_tokens"), json.dumps(s["model_config"]) if "model_config" in s else None,
                     s.get("provider")))
        for k, m in enumerate(s.get("messages", [])):
            content = m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
            stamp = f"2026-02-17 10:{k // 60:02d}:{k % 60:02d}"
            if later:
                con.execute("INSERT INTO messages (session_id, role, content_json, created_timestamp, timestamp, "
                            "metadata_json, message_id) VALUES (?,?,?,?,?,?,?)",
                            (s["id"], m["role"], content, m.get("created", 1_771_000_000 + k),
                             m.get("timestamp", stamp), json.dumps(m["metadata"]) if "metadata" in m else None,
                             m.get("id")))
            else:
                con.execute("INSERT INTO messages (session_id, role, content_json, created_timestamp, timestamp) "
                            "VALUES (?,?,?,?,?)", (s["id"], m["role"], content, m.get("created", 1_771_000_000 + k),
                                                  m.get("timestamp", stamp)))
    con.commit()
    con.close()
    return path
