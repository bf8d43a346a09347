"""``compbench.data.formats.pi`` — pi coding-agent session JSONL, both layouts.

Followed: badlogic/pi-mono ``packages/coding-agent/src/core/session-manager.ts`` at commit 83378aad
(2026-03-15, coding-agent 0.58.3, ``CURRENT_SESSION_VERSION = 3``) and ``core/messages.ts``.

* v1 (no ``version`` in the ``session`` header): a flat list; ``compaction`` entries point at their
  first kept entry by ``firstKeptEntryIndex``, an index into the file's entries *including* the header
  (as pi's ``migrateV1ToV2`` reads it). Messages have no ids: ``m<N>``.
* v2/v3: every entry has ``id``/``parentId``, a tree. pi loads the path from the leaf (the last entry
  appended) back to the root; so do we, and other branches are only counted in meta. Compactions name
  ``firstKeptEntryId``; v2 wrote the ``custom`` message role as ``hookMessage``.

Model-visible rendering follows pi's ``convertToLlm``: ``bashExecution`` becomes a user message
("Ran `cmd`" + output), ``custom`` messages / ``custom_message`` entries and ``branch_summary``
entries become user messages. The compaction summary is not a message in the file (pi injects it on
load), so ``summary_id`` stays "". pi records no trigger, so it is "unknown".
"""

from __future__ import annotations

import base64
import binascii
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compbench.data.formats.jsonio import iter_jsonl, json_args
from compbench.data.transcript import (
    Media,
    Message,
    Part,
    Reasoning,
    RecordedCompaction,
    Role,
    Text,
    ToolCall,
    ToolResult,
    Transcript,
    Usage,
)
from compbench.errors import TranscriptError

NAME = "pi"

BRANCH_SUMMARY_PREFIX = ("The following is a summary of a branch that this conversation came back from:\n\n"
                         "<summary>\n")  # messages.ts
BRANCH_SUMMARY_SUFFIX = "</summary>"  # messages.ts
CONTEXT_ENTRIES = frozenset({"message", "custom_message", "branch_summary"})  # buildSessionContext
STATE_ENTRIES = frozenset({"model_change", "thinking_level_change", "custom", "label", "session_info", "compaction"})


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """pi's first line is its ``session`` header: an id and a cwd, and no other format's keys."""
    return (first is not None and first.get("type") == "session" and isinstance(first.get("id"), str)
            and "cwd" in first and "payload" not in first)


@dataclass
class _Entry:
    line: int
    rec: dict[str, Any]


@dataclass
class _State:
    path: Path
    messages: list[Message] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    calls: set[str] = field(default_factory=set)
    models: list[str] = field(default_factory=list)

    def fail(self, line: int, expected: str) -> TranscriptError:
        return TranscriptError(self.path, line, expected)


def read(path: Path) -> Iterator[Transcript]:
    header: dict[str, Any] | None = None
    entries: list[_Entry] = []
    for lineno, rec in iter_jsonl(path):
        if header is None:
            if rec.get("type") != "session" or not isinstance(rec.get("id"), str):
                raise TranscriptError(path, lineno, "a pi 'session' header with a string 'id' first")
            header = rec
            continue
        if not isinstance(rec.get("type"), str):
            raise TranscriptError(path, lineno, "an entry with a string 'type'")
        entries.append(_Entry(lineno, rec))
    if header is None:
        raise TranscriptError(path, None, "a pi 'session' header (file has no entries)")
    version = header.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise TranscriptError(path, 1, f"a positive integer session 'version', found {version!r}")
    yield _build(path, header, entries, version)


def _build(path: Path, header: dict[str, Any], entries: list[_Entry], version: int) -> Transcript:
    st = _State(path)
    meta: dict[str, Any] = {"path": str(path), "session_version": version}
    branch = _active_branch(st, entries, meta) if version >= 2 else entries
    compactions: list[RecordedCompaction] = []
    keys: list[str | None] = []  # per branch entry: the message id it produced
    labels: dict[str, Any] = {}
    for n, e in enumerate(branch):
        rec, kind = e.rec, e.rec["type"]
        key = str(rec["id"]) if version >= 2 else f"m{len(st.messages)}"
        produced = None
        stamp = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
        if kind == "message":
            produced = _message(st, e, key)
        elif kind == "custom_message":
            produced = _custom(st, e, key, rec.get("content"), {"pi_entry": "custom_message", "timestamp": stamp})
        elif kind == "branch_summary":
            summary = rec.get("summary")
            if not isinstance(summary, str):
                raise st.fail(e.line, "a string 'summary' in a branch_summary entry")
            text = BRANCH_SUMMARY_PREFIX + summary + BRANCH_SUMMARY_SUFFIX
            produced = _append(st, key, "user", (Text(text),), None, {"pi_entry": "branch_summary",
                                                                      "from_id": rec.get("fromId"), "timestamp": stamp})
        elif kind == "compaction":
            compactions.append(_compaction(st, e, branch, keys, n))
        elif kind == "model_change" and isinstance(rec.get("modelId"), str):
            meta["model_changes"] = meta.get("model_changes", 0) + 1
        elif kind == "label" and isinstance(rec.get("targetId"), str):
            labels[rec["targetId"]] = rec.get("label")
        elif kind == "session_info" and isinstance(rec.get("name"), str):
            meta["title"] = rec["name"]
        elif kind not in STATE_ENTRIES:
            st.skipped[kind] += 1
        keys.append(produced)
    _header_meta(header, meta, st)
    if labels:
        meta["labels"] = labels
    for kind, count in sorted(st.skipped.items()):
        st.warnings.append(f"skipped {count} records of unknown type {kind!r}")
    return Transcript(header["id"], NAME, tuple(st.messages), meta, tuple(compactions), tuple(st.warnings))


def _active_branch(st: _State, entries: list[_Entry], meta: dict[str, Any]) -> list[_Entry]:
    """pi's buildSessionContext: walk from the leaf (last entry) to the root by ``parentId``."""
    by_id: dict[str, _Entry] = {}
    parents: set[str] = set()
    for e in entries:
        eid, pid = e.rec.get("id"), e.rec.get("parentId")
        if not isinstance(eid, str) or not eid:
            raise st.fail(e.line, "a string 'id' on every entry (session version >= 2)")
        if pid is not None and not isinstance(pid, str):
            raise st.fail(e.line, "'parentId': a string or null")
        if eid in by_id:
            raise st.fail(e.line, f"unique entry ids (duplicate {eid!r})")
        by_id[eid] = e
        if pid is not None:
            parents.add(pid)
    if not entries:
        return []
    path: list[_Entry] = []
    seen: set[str] = set()
    cur: _Entry | None = entries[-1]
    while cur is not None:
        eid = cur.rec["id"]
        if eid in seen:
            raise st.fail(cur.line, f"a tree of entries ('parentId' cycle through {eid!r})")
        seen.add(eid)
        path.append(cur)
        pid = cur.rec.get("parentId")
        cur = by_id.get(pid) if isinstance(pid, str) else None
        if cur is None and isinstance(pid, str):
            st.warnings.append(f"entry {eid!r} names a missing parent {pid!r}; the branch starts there")
    path.reverse()
    leaves = [e.rec["id"] for e in entries if e.rec["id"] not in parents]
    if len(leaves) > 1 or len(path) < len(entries):
        meta["branches"] = len(leaves)
        meta["off_branch_entries"] = len(entries) - len(path)
        meta["other_leaves"] = [x for x in leaves if x != entries[-1].rec["id"]]
    return path


def _append(st: _State, mid: str, role: Role, parts: tuple[Part, ...], usage: Usage | None,
            meta: dict[str, Any]) -> str:
    st.messages.append(Message(mid, role, parts, usage, {k: v for k, v in meta.items() if v is not None}))
    return mid


def _message(st: _State, e: _Entry, mid: str) -> str | None:
    m = e.rec.get("message")
    if not isinstance(m, dict) or not isinstance(m.get("role"), str):
        raise st.fail(e.line, "a 'message' object with a string 'role'")
    role = m["role"]
    base = {"timestamp": e.rec.get("timestamp") if isinstance(e.rec.get("timestamp"), str) else None}
    if role == "user":
        return _append(st, mid, "user", _content(st, e, m.get("content"), ("text", "image")), None, base)
    if role == "assistant":
        return _assistant(st, e, m, mid, base)
    if role == "toolResult":
        call_id, name = m.get("toolCallId"), m.get("toolName")
        if not isinstance(call_id, str) or not isinstance(name, str):
            raise st.fail(e.line, "'toolCallId' and 'toolName' strings in a toolResult message")
        blocks = _content(st, e, m.get("content"), ("text", "image"))
        text = "\n".join(p.text for p in blocks if isinstance(p, Text))
        orphan = call_id not in st.calls
        if orphan:
            st.warnings.append(f"line {e.line}: tool result {call_id!r} has no matching tool call")
        result = ToolResult(call_id, name, text, m.get("isError") is True, orphan)
        media = tuple(p for p in blocks if isinstance(p, Media))
        return _append(st, mid, "tool", (result, *media), None, base)
    if role == "bashExecution":
        if m.get("excludeFromContext") is True:  # the !! prefix: never sent to the model
            st.skipped["bashExecution (excluded from context)"] += 1
            return None
        return _append(st, mid, "user", (Text(_bash_text(st, e, m)),), None, {**base, "pi_role": role})
    if role in ("custom", "hookMessage"):
        return _custom(st, e, mid, m.get("content"), {**base, "pi_role": role, "custom_type": m.get("customType")})
    st.skipped[f"message role {role}"] += 1
    return None


def _custom(st: _State, e: _Entry, mid: str, content: Any, meta: dict[str, Any]) -> str:
    meta.setdefault("custom_type", e.rec.get("customType"))
    return _append(st, mid, "user", _content(st, e, content, ("text", "image")), None, meta)


def _bash_text(st: _State, e: _Entry, m: dict[str, Any]) -> str:
    """messages.ts bashExecutionToText, the text pi sends for a user's ``!command``."""
    cmd, out = m.get("command"), m.get("output", "")
    if not isinstance(cmd, str) or not isinstance(out, str):
        raise st.fail(e.line, "string 'command' and 'output' in a bashExecution message")
    text = f"Ran `{cmd}`\n" + (f"```\n{out}\n```" if out else "(no output)")
    code = m.get("exitCode")
    if m.get("cancelled") is True:
        text += "\n\n(command cancelled)"
    elif code is not None and code != 0:
        text += f"\n\nCommand exited with code {code}"
    if m.get("truncated") is True and m.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {m['fullOutputPath']}]"
    return text


def _assistant(st: _State, e: _Entry, m: dict[str, Any], mid: str, base: dict[str, Any]) -> str:
    parts: list[Part] = []
    content = m.get("content")
    if not isinstance(content, list):
        raise st.fail(e.line, "a 'content' list in an assistant message")
    for b in content:
        t = b.get("type") if isinstance(b, dict) else None
        if t == "text" and isinstance(b.get("text"), str):
            parts.append(Text(b["text"]))
        elif t == "thinking" and isinstance(b.get("thinking"), str):
            parts.append(Reasoning(b["thinking"], encrypted=b.get("redacted") is True))
        elif t == "toolCall" and isinstance(b.get("id"), str) and isinstance(b.get("name"), str):
            parts.append(ToolCall(b["id"], b["name"], json_args(b.get("arguments", {}))))
            st.calls.add(b["id"])
        elif isinstance(t, str) and t not in ("text", "thinking", "toolCall"):
            st.skipped[f"content block {t}"] += 1
        else:
            raise st.fail(e.line, "assistant content blocks: text{text} | thinking{thinking} | toolCall{id,name}")
    meta = {**base, "model": m.get("model"), "provider": m.get("provider"), "api": m.get("api"),
            "stop_reason": m.get("stopReason"), "error_message": m.get("errorMessage")}
    meta = {k: v for k, v in meta.items() if isinstance(v, str)}
    if isinstance(meta.get("model"), str):
        st.models.append(meta["model"])
    usage = _usage(st, e, m.get("usage"), meta)
    return _append(st, mid, "assistant", tuple(parts), usage, meta)


def _usage(st: _State, e: _Entry, u: Any, meta: dict[str, Any]) -> Usage | None:
    """pi's usage.input excludes the cache: Usage.input adds cacheRead and cacheWrite back."""
    if u is None:
        return None
    if not isinstance(u, dict):
        raise st.fail(e.line, "a 'usage' object in an assistant message")
    vals = {}
    for key in ("input", "output", "cacheRead", "cacheWrite"):
        v = u.get(key, 0)
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise st.fail(e.line, f"a non-negative integer usage.{key}")
        vals[key] = v
    cost = u.get("cost")
    if isinstance(cost, dict) and isinstance(cost.get("total"), (int, float)) and not isinstance(cost["total"], bool):
        meta["cost"] = cost["total"]
    return Usage(input=vals["input"] + vals["cacheRead"] + vals["cacheWrite"], output=vals["output"],
                 cache_read=vals["cacheRead"], cache_write=vals["cacheWrite"])


def _content(st: _State, e: _Entry, content: Any, allowed: tuple[str, ...]) -> tuple[Part, ...]:
    if isinstance(content, str):
        return (Text(content),)
    if not isinstance(content, list):
        raise st.fail(e.line, "message 'content': a string or a list of blocks")
    out: list[Part] = []
    for b in content:
        t = b.get("type") if isinstance(b, dict) else None
        if t == "text" and isinstance(b.get("text"), str):
            out.append(Text(b["text"]))
        elif t == "image" and isinstance(b.get("data"), str):
            mime = b.get("mimeType") if isinstance(b.get("mimeType"), str) else ""
            try:
                data = base64.b64decode(b["data"], validate=True)
            except (binascii.Error, ValueError):
                raise st.fail(e.line, "base64 'data' in an image block") from None
            out.append(Media("image", str(mime), data))
        elif isinstance(t, str) and t not in allowed:
            st.skipped[f"content block {t}"] += 1
        else:
            raise st.fail(e.line, "content blocks: text{text} | image{data, mimeType}")
    return tuple(out)


def _compaction(st: _State, e: _Entry, branch: list[_Entry], keys: list[str | None], n: int) -> RecordedCompaction:
    """index: the next message; kept_ids: the messages from the first kept entry up to the compaction."""
    rec = e.rec
    summary, before = rec.get("summary"), rec.get("tokensBefore")
    if not isinstance(summary, str):
        raise st.fail(e.line, "a string 'summary' in a compaction entry")
    if before is not None and (isinstance(before, bool) or not isinstance(before, int)):
        raise st.fail(e.line, "an integer 'tokensBefore' in a compaction entry")
    start: int | None = None
    if "firstKeptEntryIndex" in rec:  # v1: index into the file's entries, header at 0
        idx = rec["firstKeptEntryIndex"]
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise st.fail(e.line, "an integer 'firstKeptEntryIndex' in a compaction entry")
        start = idx - 1 if 1 <= idx <= n else None
    else:
        first = rec.get("firstKeptEntryId")
        if not isinstance(first, str):
            raise st.fail(e.line, "a string 'firstKeptEntryId' in a compaction entry")
        start = next((i for i in range(n) if branch[i].rec.get("id") == first), None)
    if start is None:
        st.warnings.append(f"line {e.line}: the compaction's first kept entry is not on the branch before it")
    kept = tuple(k for k in keys[start:n] if k is not None) if start is not None else ()
    meta: dict[str, Any] = {}
    for src, dst in (("timestamp", "timestamp"), ("details", "details"), ("fromHook", "from_hook"),
                     ("firstKeptEntryIndex", "first_kept_entry_index"), ("firstKeptEntryId", "first_kept_entry_id")):
        if rec.get(src) is not None:
            meta[dst] = rec[src]
    return RecordedCompaction(index=len(st.messages), tool=NAME, trigger="unknown", tokens_before=before,
                              summary=summary, summary_id="", kept_ids=kept, meta=meta)


def _header_meta(header: dict[str, Any], meta: dict[str, Any], st: _State) -> None:
    for src, dst in (("cwd", "cwd"), ("timestamp", "started_at"), ("provider", "provider"),
                     ("thinkingLevel", "thinking_level"), ("branchedFrom", "branched_from"),
                     ("parentSession", "parent_session")):
        if isinstance(header.get(src), str):
            meta[dst] = header[src]
    model = header.get("modelId")
    if isinstance(model, str):
        meta["model"] = model
    elif st.models:
        meta["model"] = st.models[0]
