"""``compbench.data.formats.crush_db`` — Crush's SQLite store (``.crush/crush.db``): every session, as Crush sends it.

Read against charmbracelet/crush 37f36e93: ``internal/db/migrations/*.sql`` (tables ``sessions`` and
``messages``; ``summary_message_id`` from migration 20250515, ``provider`` from 20250627,
``is_summary_message`` from 20250810), ``internal/db/sql/messages.sql`` (messages in ``created_at`` order,
Unix seconds whatever the schema comment says; ties in insertion order), ``internal/message/message.go``
(``parts``: a JSON list of ``{"type", "data"}``) and ``content.go`` (``ToAIMessage``: what the model is
sent), ``internal/agent/agent.go`` (``Summarize``, ``getSessionMessages``, ``updateSessionTokenCounters``).

* **What the model saw.** A user message is its first text part, trimmed, with its text attachments
  inlined ("<system_info>The files below have been attached by the user…") and its ``!``-shell commands
  appended (``$ cmd``, output, ``(exit code N)``); other attachments are media. An assistant message is
  its text (trimmed), reasoning and tool calls; a tool message its results (an error result's content; a
  media result's data, or "[Image data could not be loaded]" when that is not base64). ``finish`` parts
  are bookkeeping: their reason goes to the message's meta.
* **Compactions.** ``Summarize`` writes an assistant message with ``is_summary_message = 1`` and points
  ``sessions.summary_message_id`` at it; from then on Crush loads the session from that message on,
  re-labelled as a user message. Each finished summary is a recorded compaction: nothing before it is kept,
  the summary is its text. When the summarized run had tool calls, Crush re-queues the run as the user
  message "The previous session was interrupted because it got too long, the initial user request was: …":
  such a compaction is automatic (``trigger="auto"``); without it the log cannot tell an automatic one that
  ended a run from the user's Summarize command (``"unknown"``). A summary that failed (finish reason
  ``error``) is no compaction: Crush keeps sending it as an assistant message, and so does the transcript.
  A store from before migration 20250810 marks only its latest summary (``summary_message_id``).
* **Usage is per session only.** ``sessions.prompt_tokens`` / ``completion_tokens`` hold the last call's
  counts, overwritten after each call (``PromptTokens`` = input + cache reads; ``CompletionTokens`` reset
  to the summary's size after a compaction), and ``cost`` a running sum: no per-call series exists. They
  are kept in ``meta["session_usage"]``, never as a message's usage, and ``meta["usage"]`` says so: no
  figure downstream (calibration, fidelity triggers, cache checks) takes them for a call's.

* **Streamed tool calls split into parts.** Between migrations 20250627 and 20250810 (charmbracelet/crush
  3280b4a85, ``internal/llm/provider/openai.go`` ``stream``) a provider that sent a call's later chunks under
  a new index made Crush start a new ``tool_call`` part for them: a string ``id`` (a fresh UUID), an empty
  ``name`` and the rest of the arguments; its agent answered it "Tool not found: ". Crush's own fix
  (0c8e111af, ``toolCalls``) joins the chunks and drops the nameless entry, as its reader drops a result whose
  call it does not hold (``filterOrphanedToolResults``): so here a nameless part whose call before it in the
  message holds arguments that do not parse yet is joined to that call, and its "Tool not found" result is
  dropped (both said in the warnings). A nameless call with no unfinished call before it is kept as Crush
  sent it (an empty name, said).
* **A message that cannot be read** (parts that are no JSON list, a part of no known form, a tool call with no
  id, a result with no call id, a binary part that is not base64) fails the store in one line naming the
  session, the message, what was expected and what was found; under ``--on-error skip-lines`` that message
  alone is skipped, its session kept and the skip said (in the session's warnings and as a skipped record).

Sessions come in creation order; sub-agent sessions (``parent_session_id``) are their own transcripts; the
project is the folder holding the store's ``.crush/`` (``meta["project"]``: the store records no working
directory). The
store is read writing nothing beside it (:mod:`compbench.data.formats.sqlite_store`: a live ``-wal`` through a
private copy).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import sqlite3
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from compbench.data.formats.jsonio import SKIPPED_LINES
from compbench.data.formats.sqlite_store import Schema, has, read_store
from compbench.data.transcript import (
    Media,
    Message,
    Part,
    Reasoning,
    RecordedCompaction,
    Text,
    ToolCall,
    ToolResult,
    Transcript,
)
from compbench.errors import TranscriptError

NAME = "crush-db"
MULTI_TRANSCRIPT = True

REQUEUE_PREFIX = "The previous session was interrupted because it got too long, the initial user request was: `"
ATTACHED = ("\n<system_info>The files below have been attached by the user, consider them in your response"
            "</system_info>\n")
MEDIA_FAILED = "[Image data could not be loaded]"  # message/content.go mediaLoadFailedPlaceholder
USAGE_NOTE = ("per session only: Crush keeps the last call's prompt/completion tokens and a running cost per "
              "session, no per-call usage")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*(?:\x07|\x1b\\)")


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """A SQLite store is claimed by its tables (:func:`sniff_store`)."""
    return False


def sniff_store(schema: Schema) -> bool:
    """Crush's ``sessions`` (with ``parent_session_id`` and token counters) and ``messages`` (with ``parts``)."""
    return has(schema, "sessions", "id", "parent_session_id", "title", "prompt_tokens", "completion_tokens") and has(
        schema, "messages", "id", "session_id", "role", "parts", "created_at")


def read(path: Path) -> Iterator[Transcript]:
    return read_store(path, "Crush", "Crush's crush.db (tables sessions and messages with a 'parts' column)",
                      sniff_store, _sessions)


def _migration(con: sqlite3.Connection, found: Schema) -> str:
    """The newest applied goose migration: the only version-like stamp a Crush store has."""
    if not has(found, "goose_db_version", "version_id", "is_applied"):
        return ""
    row = con.execute("SELECT max(version_id) FROM goose_db_version WHERE is_applied").fetchone()
    return str(row[0]) if row and row[0] else ""


def _sessions(path: Path, con: sqlite3.Connection, found: Schema, warnings: list[str]) -> Iterator[Transcript]:
    scols, mcols = found["sessions"], found["messages"]
    extra = [c for c in ("summary_message_id", "cost", "created_at", "message_count") if c in scols]
    columns = ", ".join(["id", "parent_session_id", "title", "prompt_tokens", "completion_tokens", *extra])
    order = "created_at, rowid" if "created_at" in scols else "rowid"
    rows = con.execute(f"SELECT {columns} FROM sessions ORDER BY {order}").fetchall()
    migration = _migration(con, found)
    mextra = [c for c in ("model", "provider", "is_summary_message") if c in mcols]
    query = (f"SELECT id, role, parts, created_at{''.join(', ' + c for c in mextra)} FROM messages "
             "WHERE session_id = ? ORDER BY created_at, rowid")
    for row in rows:
        sid = row[0]
        if not isinstance(sid, str) or not sid:
            raise TranscriptError(path, None, "a session id (text) in every row of the sessions table")
        info = dict(zip(["id", "parent", "title", "prompt_tokens", "completion_tokens", *extra], row, strict=True))
        msgs = [dict(zip(["id", "role", "parts", "created_at", *mextra], m, strict=True))
                for m in con.execute(query, (sid,))]
        session = _Session(path, sid, info, "is_summary_message" in mcols)
        yield session.build(msgs, migration, warnings)


def _stamp(seconds: Any) -> str | None:
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and 0 < seconds < 1e11:
        return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return None


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _found(value: Any, clip: int = 120) -> str:
    """What was found, as compact JSON clipped for one line."""
    try:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= clip else text[: clip - 1] + "…"


def _parses(args: str) -> bool:
    try:
        json.loads(args)
    except (ValueError, RecursionError):
        return False
    return True


class _Session:
    """One session's rows turned into a transcript; errors name the session and the message."""

    def __init__(self, path: Path, sid: str, info: dict[str, Any], marked: bool) -> None:
        self.path, self.sid, self.info, self.marked = path, sid, info, marked
        self.skipped: Counter[str] = Counter()
        self.joined: dict[str, str] = {}  # a nameless streamed part's id -> the call it was joined to
        self.dropped: list[str] = []  # results of joined parts, dropped
        self.nameless: list[str] = []  # calls kept with an empty name

    def fail(self, mid: str, expected: str, found: Any) -> TranscriptError:
        """A message that cannot be read; ``--on-error skip-lines`` skips it (``broken_line``: the CLI says so)."""
        err = TranscriptError(self.path, None, f"session {self.sid}, message {mid}: {expected}; found {_found(found)}")
        err.broken_line = True
        return err

    def parts(self, mid: str, raw: Any) -> list[tuple[str, dict[str, Any]]]:
        try:
            value = json.loads(raw) if isinstance(raw, (str, bytes)) else None
        except (ValueError, RecursionError):
            value = None
        if not isinstance(value, list):
            raise self.fail(mid, "a JSON list of parts in the 'parts' column", raw)
        out = []
        for k, p in enumerate(value, 1):
            if not isinstance(p, dict) or not isinstance(p.get("type"), str) or not isinstance(p.get("data", {}), dict):
                raise self.fail(mid, f"parts of the form {{\"type\": string, \"data\": object}} (part {k})", p)
            out.append((p["type"], p.get("data") or {}))
        return out

    def build(self, rows: list[dict[str, Any]], migration: str, warnings: list[str]) -> Transcript:
        messages: list[Message] = []
        compactions: list[RecordedCompaction] = []
        notes = list(warnings)
        models: Counter[str] = Counter()
        providers: Counter[str] = Counter()
        current = _str(self.info.get("summary_message_id"))
        pending: int | None = None  # the compaction whose summary was just read: a requeue may follow
        sink = SKIPPED_LINES.get()  # --on-error skip-lines: an unreadable message is skipped, its session kept
        for r in rows:
            mid = r["id"]
            if not isinstance(mid, str) or not mid:
                err = TranscriptError(self.path, None, f"session {self.sid}: a message id (text) in every row; "
                                                       f"found {_found(mid)}")
                err.broken_line = True
                if sink is None:
                    raise err
                sink.append(err)
                notes.append(f"skipped a message: {err.expected}")
                continue
            try:
                msg = self.message(r, mid, messages, compactions, pending, notes, models, providers, current)
            except TranscriptError as err:
                if sink is None:
                    raise
                sink.append(err)
                notes.append(f"skipped message {mid}: {err.expected.split(': ', 1)[-1]}")
                continue
            if msg is None:
                continue
            pending = None
            messages.append(msg)
            if msg.meta.get("compaction") == "summary":
                compactions.append(RecordedCompaction(
                    index=len(messages), tool="crush", trigger="unknown", summary=msg.text, summary_id=mid,
                    meta={"summary_message": mid, "requeued": False, "current": mid == current}))
                pending = len(compactions) - 1
        notes += self.stream_notes()
        if not self.marked and current and not any(c.summary_id == current for c in compactions):
            notes.append(f"summary_message_id {current} names no message of the session")
        if not self.marked:
            notes.append("store predates Crush's is_summary_message column (migration 20250810): only the latest "
                         "summary (summary_message_id) is known, earlier ones read as assistant messages")
        if not messages:
            notes.append("the session has no messages")
        for kind, n in sorted(self.skipped.items()):
            notes.append(f"skipped {n} {kind} part{'s' * (n != 1)} Crush's model messages do not carry")
        return Transcript(self.sid, "crush", tuple(messages), self.meta(models, providers, migration),
                          tuple(compactions), tuple(notes))

    def message(self, r: dict[str, Any], mid: str, messages: list[Message], compactions: list[RecordedCompaction],
                pending: int | None, notes: list[str], models: Counter[str], providers: Counter[str],
                current: str) -> Message | None:
        """One row as the message Crush sends (None for a role Crush sends no message of); a requeue after a
        summary marks that compaction automatic."""
        parts = self.parts(mid, r["parts"])
        meta: dict[str, Any] = {}
        stamp = _stamp(r["created_at"])
        if stamp:
            meta["timestamp"] = stamp
        finish = next((d for t, d in parts if t == "finish"), None)
        if finish is not None and isinstance(finish.get("reason"), str):
            meta["finish"] = finish["reason"]
        role = r["role"]
        if role == "user":
            msg = Message(mid, "user", self.user(mid, parts), None, meta)
            if pending is not None and msg.text.startswith(REQUEUE_PREFIX):
                msg = Message(mid, "user", msg.parts, None, {**meta, "compaction": "continue"})
                compactions[pending] = _requeued(compactions[pending], len(messages) + 1)
            return msg
        if role == "assistant":
            body = self.assistant(mid, parts)
            for key, counter in (("model", models), ("provider", providers)):
                if _str(r.get(key)):
                    meta[key] = r[key]
                    counter[r[key]] += 1
            summary = bool(r.get("is_summary_message")) or (not self.marked and mid == current)
            if summary and meta.get("finish") == "error":
                notes.append(f"summary message {mid} failed ({_str(finish.get('message') if finish else '')}): "
                             "not a compaction, sent on as an assistant message as Crush does")
                meta["failed_summary"] = True
            elif summary:
                meta["compaction"] = "summary"
            return Message(mid, "assistant", body, None, meta)
        if role == "tool":
            return Message(mid, "tool", self.tool(mid, parts), None, meta)
        self.skipped[f"role:{role}"] += 1
        return None

    def stream_notes(self) -> list[str]:
        out = []
        if self.joined:
            n = len(self.joined)
            out.append(f"joined {n} nameless streamed tool-call part{'s' * (n != 1)} to the call before "
                       f"{'each' if n != 1 else 'it'} ({', '.join(f'{k} -> {v}' for k, v in self.joined.items())}), "
                       "as Crush's stream does since 0c8e111af")
        if self.dropped:
            n = len(self.dropped)
            out.append(f"dropped {n} result{'s' * (n != 1)} of joined parts (\"Tool not found\"), as Crush's reader "
                       f"drops a result with no call: {', '.join(self.dropped)}")
        if self.nameless:
            out.append(f"{len(self.nameless)} tool call{'s' * (len(self.nameless) != 1)} with an empty name kept as "
                       f"Crush sent {'them' if len(self.nameless) != 1 else 'it'}: {', '.join(self.nameless)}")
        return out

    def meta(self, models: Counter[str], providers: Counter[str], migration: str) -> dict[str, Any]:
        info = self.info
        meta: dict[str, Any] = {"path": str(self.path), "session": self.sid, "usage": USAGE_NOTE}
        if self.path.parent.name == ".crush":  # Crush keeps its store in the project it ran in
            meta["project"] = str(self.path.resolve().parent.parent)
        if models:
            meta["model"] = _most(models)
        if providers:
            meta["provider"] = _most(providers)
        if _str(info.get("title")):
            meta["title"] = info["title"]
        if _str(info.get("parent")):
            meta["parent_session"] = info["parent"]
        if migration:
            meta["schema_version"] = migration
        started = _stamp(info.get("created_at"))
        if started:
            meta["started_at"] = started
        usage = {k: info[k] for k in ("prompt_tokens", "completion_tokens", "cost")
                 if isinstance(info.get(k), (int, float)) and not isinstance(info.get(k), bool)}
        if usage:
            meta["session_usage"] = usage
        return meta

    def user(self, mid: str, parts: list[tuple[str, dict[str, Any]]]) -> tuple[Part, ...]:
        """``ToAIMessage`` for a user message: first text (trimmed) + text attachments + shell commands."""
        text = next((_str(d.get("text")) for t, d in parts if t == "text"), "").strip()
        attached = [d for t, d in parts if t == "binary" and _str(d.get("MIMEType")).startswith("text/")]
        if attached:
            text += ATTACHED
            for d in attached:
                name = _str(d.get("Path"))
                text += f"<file path='{name}'>\n" if name else "<file>\n"
                text += "\n" + self.decoded(mid, d.get("Data")).decode("utf-8", errors="replace") + "\n</file>\n"
        for t, d in parts:
            if t == "shell_command":
                code = d.get("exit_code") if isinstance(d.get("exit_code"), int) else 0
                shell = f"$ {_str(d.get('command'))}\n{_ANSI.sub('', _str(d.get('output')))}\n(exit code {code})"
                text = f"{text}\n\n{shell}" if text else shell
        out: list[Part] = [Text(text)] if text else []
        for t, d in parts:
            if t == "binary" and not _str(d.get("MIMEType")).startswith("text/"):
                out.append(self.media(mid, d))
            elif t == "image_url":
                out.append(Media("image", "", b"", _str(d.get("url"))))
            elif t not in ("text", "binary", "shell_command", "finish"):
                self.skipped[t] += 1
        return tuple(out)

    def assistant(self, mid: str, parts: list[tuple[str, dict[str, Any]]]) -> tuple[Part, ...]:
        """``ToAIMessage`` for an assistant message: text (trimmed), reasoning, tool calls."""
        out: list[Part] = []
        text = next((_str(d.get("text")) for t, d in parts if t == "text"), "").strip()
        if text:
            out.append(Text(text))
        thinking = next((_str(d.get("thinking")) for t, d in parts if t == "reasoning"), "")
        if thinking:
            out.append(Reasoning(thinking))
        calls: list[ToolCall] = []
        joined: dict[str, str] = {}
        nameless: list[str] = []
        for t, d in parts:
            if t == "tool_call":
                call_id, name, args = _str(d.get("id")), _str(d.get("name")), _str(d.get("input"))
                if not call_id:
                    raise self.fail(mid, "a tool_call part with a string 'id' (and a 'name', or none when it "
                                         "continues the call streamed before it)", {"type": t, "data": d})
                if not name and calls and not _parses(calls[-1].args):  # the rest of the call streamed before it
                    last = calls[-1]
                    calls[-1] = ToolCall(last.id, last.name, last.args + args)
                    joined[call_id] = last.id
                    continue
                if not name:
                    nameless.append(call_id)
                calls.append(ToolCall(call_id, name, args))
            elif t not in ("text", "reasoning", "finish"):
                self.skipped[t] += 1
        self.joined.update(joined)
        self.nameless += nameless
        return (*out, *(ToolCall(c.id, c.name, c.args or "{}") for c in calls))

    def tool(self, mid: str, parts: list[tuple[str, dict[str, Any]]]) -> tuple[Part, ...]:
        out: list[Part] = []
        media: list[Part] = []
        for t, d in parts:
            if t == "tool_result":
                call_id = _str(d.get("tool_call_id"))
                if not call_id:
                    raise self.fail(mid, "a tool_result part with a string 'tool_call_id'", {"type": t, "data": d})
                if call_id in self.joined:
                    self.dropped.append(call_id)
                    continue
                name, error = _str(d.get("name")), d.get("is_error") is True
                data = _str(d.get("data"))
                if data and not error:
                    try:
                        media.append(Media("image" if _str(d.get("mime_type")).startswith("image/") else "file",
                                           _str(d.get("mime_type")), base64.b64decode(data, validate=True), name))
                        out.append(ToolResult(call_id, name, ""))
                    except (binascii.Error, ValueError):
                        out.append(ToolResult(call_id, name, MEDIA_FAILED))
                else:
                    out.append(ToolResult(call_id, name, _str(d.get("content")), is_error=error))
            elif t != "finish":
                self.skipped[t] += 1
        return (*out, *media)

    def decoded(self, mid: str, data: Any) -> bytes:
        if not data:
            return b""
        try:
            return base64.b64decode(_str(data), validate=True)
        except (binascii.Error, ValueError):
            raise self.fail(mid, "base64 'Data' in a binary part", data) from None

    def media(self, mid: str, d: dict[str, Any]) -> Media:
        mime = _str(d.get("MIMEType"))
        return Media("image" if mime.startswith("image/") else "file", mime, self.decoded(mid, d.get("Data")),
                     _str(d.get("Path")))


def _most(c: Counter[str]) -> str:
    """The most frequent value; among equals the one seen last (what the session ended with)."""
    top = max(c.values())
    return [k for k in c if c[k] == top][-1]


def _requeued(c: RecordedCompaction, index: int) -> RecordedCompaction:
    from dataclasses import replace

    return replace(c, index=index, trigger="auto", meta={**c.meta, "requeued": True})
