"""``compbench.data.formats.goose_session`` — A Goose session as a file: the JSONL files Goose kept one per session
(``~/.local/share/goose/sessions/<id>.jsonl``) before its SQLite store, and ``goose session export --format
json``.

Read against block/goose 9a91fccfb5d7: ``crates/goose/src/session/legacy.rs`` (``load_session``: line 1 is
the session's metadata, ``working_dir``, ``description``, ``message_count``, token totals…; every later line
a ``Message``; the session id is the file's stem) and ``crates/goose-cli/src/commands/session.rs``
(``handle_session_export``: the ``Session`` pretty-printed, its messages under ``conversation``). Messages and
compactions as :mod:`compbench.data.formats.goose_messages` says; usage per session only. Goose skipped a
line it could not parse; here a broken line is an error naming it (``--on-error skip-lines`` skips it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compbench.data.formats import goose_messages as gm
from compbench.data.formats.jsonio import is_document, iter_jsonl, load_json
from compbench.data.transcript import Transcript
from compbench.errors import TranscriptError

NAME = "goose"
TOKENS = gm.TOKENS
SESSION_KEYS = frozenset({"id", "working_dir", "description", "name", "schedule_id", "project_id", "message_count",
                          "extension_data", "created_at", "updated_at", "user_set_name", "session_type",
                          "recipe", "user_recipe_values", "provider_name", "model_config", "conversation", *TOKENS})


def _is_session(d: Any) -> bool:
    """Goose's session metadata: mostly its keys (a later version's extra one allowed), a message count or a
    conversation, a directory or a description, and none of a message's or another log's record keys."""
    return isinstance(d, dict) and len(set(d) & SESSION_KEYS) >= max(2, len(d) - 2) and not (
        {"role", "type", "messages", "payload", "content"} & set(d)) and (
        isinstance(d.get("message_count"), int) or isinstance(d.get("conversation"), list)) and (
        isinstance(d.get("working_dir"), str) or isinstance(d.get("description"), str))


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """A legacy session file's first line: the session's metadata."""
    return first is not None and _is_session(first) and "conversation" not in first


def sniff_document(doc: Any) -> bool:
    """``goose session export --format json``: the session with its ``conversation`` list."""
    return _is_session(doc) and isinstance(doc.get("conversation"), list) and isinstance(doc.get("id"), str)


def read(path: Path) -> Iterator[Transcript]:
    def fail(where: str, expected: str) -> TranscriptError:
        line = int(where[5:]) if where.startswith("line ") else None
        return TranscriptError(path, line, expected if line is not None else f"{where}: {expected}")

    if is_document(path):
        doc = load_json(path)
        if not sniff_document(doc):
            raise TranscriptError(path, None, "a Goose session export: an object with 'id', 'working_dir' and a "
                                              "'conversation' list")
        stored = [gm.raw(m, f"conversation[{k}]", f"{doc['id']}:{k}", fail) for k, m in enumerate(doc["conversation"])]
        yield gm.build(doc["id"], stored, _meta(path, doc, doc["id"]), fail)
        return
    lines = iter_jsonl(path)
    first = next(lines, None)
    if first is None or not _is_session(first[1]):
        raise TranscriptError(path, first[0] if first else 1, "a Goose session's metadata line (working_dir or "
                                                              "description, message_count)")
    sid = path.stem
    stored = [gm.raw(d, f"line {no}", f"{sid}:{no}", fail) for no, d in lines]
    yield gm.build(sid, stored, _meta(path, first[1], sid), fail)


def _meta(path: Path, info: dict[str, Any], sid: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"path": str(path), "session": sid, "usage": gm.USAGE_NOTE}
    if isinstance(info.get("working_dir"), str) and info["working_dir"]:
        meta["cwd"] = info["working_dir"]
    gm.describe(meta, info, info.get("model_config"))
    return meta
