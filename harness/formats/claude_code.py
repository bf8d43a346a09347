"""Claude Code session JSONL (``~/.claude/projects/*/SESSION.jsonl``; followed: CLI 2.0.60–2.1.6).

Records: ``user`` / ``assistant`` (``message`` in Anthropic Messages format, ``uuid``/``parentUuid``),
``system`` (``compact_boundary`` with ``compactMetadata {trigger, preTokens}``, ``api_error``, ...),
``summary``, ``file-history-snapshot``, ``queue-operation``. Claude Code writes one assistant record per
content block, all sharing ``message.id`` and the usage: they are merged into one message (one model
call). ``tool_result`` blocks arrive in user records and become ``tool`` messages. Sidechain (sub-agent)
records are another context: they are counted, not imported. After a ``compact_boundary`` the user
record flagged ``isCompactSummary`` carries the tool's summary.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compbench.errors import TranscriptError
from compbench.formats.jsonio import as_text, iter_jsonl, json_args
from compbench.transcript import (
    Media,
    Message,
    Part,
    Reasoning,
    RecordedCompaction,
    Text,
    ToolCall,
    ToolResult,
    Transcript,
    Usage,
)

NAME = "claude-code"
IGNORED = frozenset({"summary", "file-history-snapshot", "queue-operation", "progress"})


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    return '"sessionId"' in head and ('"parentUuid"' in head or '"leafUuid"' in head)


def anthropic_usage(u: Any) -> Usage | None:
    """Anthropic usage (input excludes the cache) as compbench Usage (input includes it)."""
    if not isinstance(u, dict):
        return None

    def n(k: str) -> int:
        v = u.get(k, 0)
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    read, write = n("cache_read_input_tokens"), n("cache_creation_input_tokens")
    return Usage(input=n("input_tokens") + read + write, output=n("output_tokens"), cache_read=read, cache_write=write)


class _State:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.messages: list[Message] = []
        self.compactions: list[RecordedCompaction] = []
        self.warnings: list[str] = []
        self.meta: dict[str, Any] = {"path": str(path)}
        self.calls: dict[str, str] = {}  # tool_use id -> tool name
        self.unknown: dict[str, int] = {}
        self.sidechain = 0
        self.api_errors = 0
        self.open_id: str | None = None  # message.id of the assistant message being merged
        self.boundary: dict[str, Any] | None = None

    def add(self, m: Message) -> None:
        self.messages.append(m)
        self.open_id = None


def _uid(r: dict[str, Any], st: _State) -> str:
    uid = r.get("uuid")
    return uid if isinstance(uid, str) else f"m{len(st.messages)}"


def _blocks(content: Any, path: Path, line: int) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return content
    raise TranscriptError(path, line, "message.content as a string or a list of content blocks")


def _assistant(st: _State, r: dict[str, Any], line: int) -> None:
    msg = r.get("message")
    if not isinstance(msg, dict):
        raise TranscriptError(st.path, line, "an assistant record with a 'message' object")
    parts: list[Part] = []
    for b in _blocks(msg.get("content", []), st.path, line):
        if not isinstance(b, dict):
            raise TranscriptError(st.path, line, "content blocks as objects")
        t = b.get("type")
        if t == "text" and isinstance(b.get("text"), str):
            parts.append(Text(b["text"]))
        elif t == "thinking":
            parts.append(Reasoning(str(b.get("thinking", ""))))
        elif t == "redacted_thinking":
            parts.append(Reasoning(str(b.get("data", "")), encrypted=True))
        elif t in ("tool_use", "server_tool_use"):
            cid, name = b.get("id"), b.get("name")
            if not isinstance(cid, str) or not isinstance(name, str):
                raise TranscriptError(st.path, line, "a tool_use block with string 'id' and 'name'")
            st.calls[cid] = name
            parts.append(ToolCall(cid, name, json_args(b.get("input", {}))))
        elif t in ("web_search_tool_result",):
            parts.append(Text(as_text(b.get("content"))))
    mid = msg.get("id") if isinstance(msg.get("id"), str) else None
    usage = anthropic_usage(msg.get("usage"))
    meta = {"model": msg.get("model"), "timestamp": r.get("timestamp")}
    if mid is not None and mid == st.open_id and st.messages:
        last = st.messages[-1]
        st.messages[-1] = Message(last.id, "assistant", last.parts + tuple(parts), usage or last.usage, last.meta)
        return
    uid = _uid(r, st)
    st.add(Message(uid, "assistant", tuple(parts), usage, {k: v for k, v in meta.items() if v}))
    st.open_id = mid
    if "model" not in st.meta and isinstance(msg.get("model"), str) and msg["model"] != "<synthetic>":
        st.meta["model"] = msg["model"]


def _user(st: _State, r: dict[str, Any], line: int) -> None:
    msg = r.get("message")
    if not isinstance(msg, dict):
        raise TranscriptError(st.path, line, "a user record with a 'message' object")
    uid = _uid(r, st)
    texts: list[Part] = []
    results: list[ToolResult] = []
    for b in _blocks(msg.get("content", ""), st.path, line):
        if not isinstance(b, dict):
            raise TranscriptError(st.path, line, "content blocks as objects")
        t = b.get("type")
        if t == "text" and isinstance(b.get("text"), str):
            texts.append(Text(b["text"]))
        elif t == "image":
            src = b.get("source")
            texts.append(Media("image", str(src.get("media_type", "")) if isinstance(src, dict) else ""))
        elif t == "tool_result":
            cid = b.get("tool_use_id")
            if not isinstance(cid, str):
                raise TranscriptError(st.path, line, "a tool_result block with a string 'tool_use_id'")
            orphan = cid not in st.calls
            if orphan:
                st.warnings.append(f"line {line}: tool result {cid} has no matching tool call (kept, flagged orphan)")
            results.append(ToolResult(cid, st.calls.get(cid, ""), as_text(b.get("content")),
                                      bool(b.get("is_error", False)), orphan))
    meta: dict[str, Any] = {"timestamp": r.get("timestamp")} if r.get("timestamp") else {}
    if r.get("isMeta"):
        meta["is_meta"] = True
    if r.get("isCompactSummary"):
        meta["compaction"] = "summary"
    for k, res in enumerate(results):
        st.add(Message(uid if k == 0 and not texts else f"{uid}:{k}", "tool", (res,), None, meta))
    if texts:
        st.add(Message(uid, "user", tuple(texts), None, meta))
    if r.get("isCompactSummary") and st.boundary is not None and texts:
        b = st.boundary
        st.compactions.append(RecordedCompaction(
            index=len(st.messages) - 1, tool=NAME, trigger=b["trigger"], tokens_before=b["pre"],
            summary="\n".join(p.text for p in texts if isinstance(p, Text)), summary_id=uid,
            meta={"boundary_uuid": b["uuid"], "boundary_line": b["line"]}))
        st.boundary = None


def read(path: Path) -> Iterator[Transcript]:
    st = _State(path)
    session = None
    for line, r in iter_jsonl(path):
        t = r.get("type")
        if t in IGNORED:
            if t == "summary" and isinstance(r.get("summary"), str):
                st.meta.setdefault("title", r["summary"])
            continue
        if r.get("isSidechain"):
            st.sidechain += 1
            continue
        session = session or r.get("sessionId")
        for key, meta_key in (("cwd", "cwd"), ("version", "tool_version"), ("timestamp", "started_at")):
            if isinstance(r.get(key), str):
                st.meta.setdefault(meta_key, r[key])
        if t == "assistant":
            _assistant(st, r, line)
        elif t == "user":
            _user(st, r, line)
        elif t == "system":
            sub = r.get("subtype")
            if sub == "compact_boundary":
                raw = r.get("compactMetadata")
                cm: dict[str, Any] = raw if isinstance(raw, dict) else {}
                trig = cm.get("trigger")
                pre = cm.get("preTokens")
                st.boundary = {"trigger": trig if trig in ("auto", "manual") else "unknown",
                               "pre": pre if isinstance(pre, int) else None, "uuid": r.get("uuid"), "line": line}
            elif sub == "api_error":
                st.api_errors += 1
            st.open_id = None
        else:
            st.unknown[str(t)] = st.unknown.get(str(t), 0) + 1
    if not st.messages:
        raise TranscriptError(path, None, "at least one user or assistant record")
    for t, n in sorted(st.unknown.items()):
        st.warnings.append(f"skipped {n} records of unknown type {t!r}")
    st.meta.update({"sidechain_records": st.sidechain, "api_errors": st.api_errors})
    yield Transcript(str(session or path.stem), NAME, tuple(st.messages), st.meta, tuple(st.compactions),
                     tuple(st.warnings))
