"""``compbench.data.formats.opencode`` — OpenCode ``opencode export`` JSON: ``{info, messages: [{info, parts}]}`` (read
against v1.2.5).

OpenCode stores one assistant *message* per agent turn segment, but a message may hold several model
calls ("steps", delimited by ``step-start`` / ``step-finish`` parts). compbench counts one assistant
message per model call, so each step becomes its own assistant Message (usage from its ``step-finish``)
followed by a ``tool`` Message with that step's results. The model-visible rendering follows
``MessageV2.toModelMessages`` (packages/opencode/src/session/message-v2.ts): a ``compaction`` part is
sent as "What did we do so far?", a ``subtask`` part as "The following tool was executed by the user",
``ignored`` text and text/plain or directory file parts (already inlined as synthetic text) are not
sent, and a pending/running tool reads "[Tool execution was interrupted]". Pruned outputs
(``state.time.compacted``) are kept verbatim and listed in the tool message's ``meta["pruned_parts"]``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from compbench.data.formats.child_sessions import opencode_child
from compbench.data.formats.jsonio import json_args, load_json
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
    Usage,
)
from compbench.errors import TranscriptError

NAME = "opencode"

COMPACTION_PROMPT = "What did we do so far?"  # message-v2.ts toModelMessages, compaction part
SUBTASK_PROMPT = "The following tool was executed by the user"  # message-v2.ts, subtask part
INTERRUPTED = "[Tool execution was interrupted]"  # message-v2.ts, pending/running tool state
CONTINUE_PREFIX = "Continue if you have next steps"  # session/compaction.ts, the auto-continue message
INLINED_MIMES = ("text/plain", "application/x-directory")  # message-v2.ts: converted to synthetic text
SILENT_PARTS = frozenset({"step-start", "step-finish", "patch", "snapshot", "agent", "retry"})

_SESSION_ID = re.compile(r'"(?:id|sessionID)"\s*:\s*"ses_')


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """An export is one JSON object with ``info`` and ``messages`` and OpenCode's ``ses_`` ids."""
    if first is not None:
        info = first.get("info")
        return isinstance(info, dict) and isinstance(first.get("messages"), list) and str(
            info.get("id", "")).startswith("ses_")
    return head.lstrip().startswith("{") and '"info"' in head and '"messages"' in head and bool(
        _SESSION_ID.search(head))


@dataclass
class _Ctx:
    """Per-file state: where errors point, and what was skipped."""

    path: Path
    text: str | None = None
    skipped: Counter[str] = field(default_factory=Counter)
    ids: set[str] = field(default_factory=set)

    def unique(self, mid: str) -> str:
        """Message ids stay unique even when a (damaged) file repeats a part id."""
        out, n = mid, 1
        while out in self.ids:
            out, n = f"{mid}#{n}", n + 1
        self.ids.add(out)
        return out

    def fail(self, expected: str, near: object = None) -> TranscriptError:
        return TranscriptError(self.path, self._line(near), expected)

    def _line(self, near: object) -> int | None:
        """The line of a source id in the (indented) document: whole-JSON errors still name a line."""
        if not isinstance(near, str) or not near:
            return None
        if self.text is None:
            self.text = self.path.read_bytes().decode("utf-8", errors="replace")
        at = self.text.find(f'"{near}"')
        return None if at < 0 else self.text.count("\n", 0, at) + 1


@dataclass
class _Step:
    """One model call inside an OpenCode assistant message."""

    start_id: str | None
    parts: list[Part] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)
    result_ids: list[str] = field(default_factory=list)
    media: list[Media] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    finish: dict[str, Any] | None = None


def read(path: Path) -> Iterator[Transcript]:
    doc = load_json(path)
    ctx = _Ctx(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("info"), dict) or not isinstance(
            doc.get("messages"), list):
        raise ctx.fail("an OpenCode export object with 'info' (object) and 'messages' (list)")
    info: dict[str, Any] = doc["info"]
    sid = info.get("id")
    if not isinstance(sid, str) or not sid:
        raise ctx.fail("info.id: the session id (string)")
    yield _build(ctx, info, doc["messages"])


def from_document(path: Path, info: dict[str, Any], raw_messages: list[Any], where: str = "") -> Transcript:
    """A session given as the export document's ``info`` and ``messages`` (``opencode-db`` hydrates its
    rows into them). ``where`` prefixes errors instead of a line number (a database has no lines)."""
    if not where:
        return _build(_Ctx(path), info, raw_messages)
    try:
        return _build(_Ctx(path, text=""), info, raw_messages)
    except TranscriptError as e:
        raise TranscriptError(path, None, f"{where}: {e.expected}") from None


def _build(ctx: _Ctx, info: dict[str, Any], raw_messages: list[Any]) -> Transcript:
    messages: list[Message] = []
    compactions: list[RecordedCompaction] = []
    warnings: list[str] = []
    first_index: dict[str, int] = {}  # OpenCode message id -> our first message position
    last_count: int | None = None  # input + cache.read + output of the last step: OpenCode's isOverflow
    marker: tuple[int, str, dict[str, Any]] | None = None  # (position, source id, compaction part)
    after_summary = False
    model = ""
    for raw in raw_messages:
        if not isinstance(raw, dict) or not isinstance(raw.get("info"), dict) or not isinstance(
                raw.get("parts"), list):
            raise ctx.fail("a message object with 'info' (object) and 'parts' (list)")
        minfo: dict[str, Any] = raw["info"]
        mid = minfo.get("id")
        if not isinstance(mid, str) or not mid:
            raise ctx.fail("info.id of a message (string)")
        if mid in ctx.ids:
            raise ctx.fail(f"unique message ids (duplicate {mid!r})", mid)
        ctx.ids.add(mid)
        parts = [_part(ctx, p, mid) for p in raw["parts"]]
        role = minfo.get("role")
        first_index[mid] = len(messages)
        if role == "user":
            msg, comp_part = _user(ctx, minfo, parts)
            if comp_part is not None:
                msg = replace(msg, meta={**msg.meta, "compaction": "marker"})
                marker = (len(messages), mid, comp_part)
            elif after_summary and _is_continue(parts):
                msg = replace(msg, meta={**msg.meta, "compaction": "continue"})
                if compactions:
                    compactions[-1] = replace(compactions[-1], index=len(messages) + 1)
            messages.append(msg)
            after_summary = False
        elif role == "assistant":
            summary = minfo.get("summary") is True
            steps = _assistant(ctx, minfo, parts, messages, summary)
            if not model and isinstance(minfo.get("modelID"), str):
                model = minfo["modelID"]
            if summary:
                compactions.append(_compaction(ctx, minfo, steps, marker, last_count, first_index, messages))
                marker = None
            else:
                for m in steps:
                    if m.role == "assistant" and m.meta.get("overflow_count") is not None:
                        last_count = int(m.meta["overflow_count"])
            after_summary = summary
        else:
            ctx.skipped[f"role:{role}"] += 1
    if marker is not None:
        warnings.append(f"compaction marker {marker[1]} has no summary message (the compaction did not finish)")
    for kind, n in sorted(ctx.skipped.items()):
        warnings.append(f"skipped {n} records of unknown type {kind!r}")
    meta = opencode_child(_meta(ctx, info, model), messages)  # a sub-agent's child session: the agent it ran as
    return Transcript(str(info["id"]), NAME, tuple(messages), meta, tuple(compactions), tuple(warnings))


def _compaction(ctx: _Ctx, minfo: dict[str, Any], steps: list[Message], marker: tuple[int, str, dict[str, Any]] | None,
                last_count: int | None, first_index: dict[str, int], messages: list[Message]) -> RecordedCompaction:
    """The tool's compaction: marker (user) + summary (assistant, ``summary: true``) [+ continue]."""
    summary = "\n".join(m.text for m in steps if m.role == "assistant" and m.text)
    trigger: Any = "unknown"
    kept: tuple[str, ...] = ()
    meta: dict[str, Any] = {"summary_message": minfo["id"]}
    if marker is not None:
        pos, marker_id, part = marker
        auto = part.get("auto")
        trigger = "auto" if auto is True else "manual" if auto is False else "unknown"
        meta["marker_id"] = marker_id
        if isinstance(part.get("overflow"), bool):
            meta["overflow"] = part["overflow"]
        tail = part.get("tail_start_id")
        if isinstance(tail, str) and tail in first_index:  # newer OpenCode keeps a verbatim tail
            kept = tuple(m.id for m in messages[first_index[tail]:pos] if not m.meta.get("compaction"))
    return RecordedCompaction(index=len(messages), tool=NAME, trigger=trigger, tokens_before=last_count,
                              summary=summary, summary_id=steps[0].id if steps else "", kept_ids=kept, meta=meta)


def _is_continue(parts: list[dict[str, Any]]) -> bool:
    texts = [p for p in parts if p["type"] == "text"]
    return bool(texts) and all(p.get("synthetic") is True for p in texts) and str(
        texts[0].get("text", "")).startswith(CONTINUE_PREFIX)


def _part(ctx: _Ctx, p: Any, mid: str) -> dict[str, Any]:
    if not isinstance(p, dict) or not isinstance(p.get("type"), str):
        raise ctx.fail("a part object with a string 'type'", mid)
    return p


def _str(ctx: _Ctx, p: dict[str, Any], key: str, near: str, default: str | None = None) -> str:
    v = p.get(key, default)
    if not isinstance(v, str):
        raise ctx.fail(f"a string '{key}' in a {p.get('type', 'message')} part", near)
    return v


def _user(ctx: _Ctx, minfo: dict[str, Any], parts: list[dict[str, Any]]) -> tuple[Message, dict[str, Any] | None]:
    mid: str = minfo["id"]
    out: list[Part] = []
    comp: dict[str, Any] | None = None
    meta: dict[str, Any] = {}
    for p in parts:
        t = p["type"]
        if t == "text":
            text = _str(ctx, p, "text", mid)
            if p.get("ignored") is True:
                meta["ignored_parts"] = meta.get("ignored_parts", 0) + 1
            else:
                out.append(Text(text))
        elif t == "file":
            media = _media(ctx, p, mid)
            if media.mime in INLINED_MIMES:
                meta.setdefault("attachments", []).append(media.name)
            else:
                out.append(media)
        elif t == "compaction":
            comp = p
            out.append(Text(COMPACTION_PROMPT))
        elif t == "subtask":
            out.append(Text(SUBTASK_PROMPT))
        elif t not in SILENT_PARTS:
            ctx.skipped[t] += 1
    if isinstance(minfo.get("agent"), str):
        meta["agent"] = minfo["agent"]
    _time(minfo, meta)
    return Message(mid, "user", tuple(out), None, meta), comp


def _time(minfo: dict[str, Any], meta: dict[str, Any]) -> None:
    t = minfo.get("time")
    if isinstance(t, dict) and isinstance(t.get("created"), int) and not isinstance(t["created"], bool):
        meta["time"] = t["created"]


def _media(ctx: _Ctx, p: dict[str, Any], near: str) -> Media:
    mime = _str(ctx, p, "mime", near, "")
    url = _str(ctx, p, "url", near, "")
    name = p.get("filename") if isinstance(p.get("filename"), str) else url
    data = b""
    if url.startswith("data:") and ";base64," in url:
        try:
            data = base64.b64decode(url.split(",", 1)[1], validate=True)
        except (binascii.Error, ValueError):
            raise ctx.fail("base64 data in a file part's data: URL", near) from None
    return Media("image" if mime.startswith("image/") else "file", mime, data, str(name))


def _assistant(ctx: _Ctx, minfo: dict[str, Any], parts: list[dict[str, Any]], messages: list[Message],
               summary: bool) -> list[Message]:
    """Append one assistant Message per step (and a tool Message per step with results)."""
    mid: str = minfo["id"]
    steps: list[_Step] = []
    cur: _Step | None = None
    for p in parts:
        t = p["type"]
        if t == "step-start":
            cur = _Step(p.get("id") if isinstance(p.get("id"), str) else None)
            steps.append(cur)
            continue
        if cur is None:
            cur = _Step(None)
            steps.append(cur)
        if t == "step-finish":
            cur.finish = p
        elif t == "text":
            cur.parts.append(Text(_str(ctx, p, "text", mid)))
        elif t == "reasoning":
            cur.parts.append(Reasoning(_str(ctx, p, "text", mid)))
        elif t == "tool":
            _tool(ctx, p, mid, cur)
        elif t not in SILENT_PARTS and t not in ("file", "compaction", "subtask"):
            ctx.skipped[t] += 1
    if not steps:
        steps.append(_Step(None))
    base: dict[str, Any] = {dst: minfo[src] for src, dst in (("modelID", "model"), ("providerID", "provider"),
                            ("agent", "agent"), ("mode", "mode")) if isinstance(minfo.get(src), str)}
    if minfo.get("error") is not None:
        base["error"] = minfo["error"]
    _time(minfo, base)
    if summary:
        base["compaction"] = "summary"
    out: list[Message] = []
    for k, st in enumerate(steps):
        aid = mid if k == 0 else ctx.unique(st.start_id or f"{mid}#{k}")
        meta = {**base, "opencode_id": mid, "step": k}
        usage = _usage(ctx, st.finish, mid, meta) if st.finish is not None else None
        out.append(Message(aid, "assistant", tuple(st.parts), usage, meta))
        if st.results:
            tmeta: dict[str, Any] = {"opencode_id": mid}
            if summary:
                tmeta["compaction"] = "summary"
            if st.pruned:
                tmeta["pruned_parts"] = st.pruned
            out.append(Message(ctx.unique(st.result_ids[0]), "tool", (*st.results, *st.media), None, tmeta))
    messages.extend(out)
    return out


def _tool(ctx: _Ctx, p: dict[str, Any], mid: str, st: _Step) -> None:
    call_id = _str(ctx, p, "callID", mid)
    name = _str(ctx, p, "tool", mid)
    state = p.get("state")
    if not isinstance(state, dict):
        raise ctx.fail("a tool part's 'state' object", call_id)
    status = state.get("status")
    st.parts.append(ToolCall(call_id, name, json_args(state.get("input", {}))))
    if status == "completed":
        result = ToolResult(call_id, name, _str(ctx, state, "output", call_id, ""))
        times = state.get("time")
        if isinstance(times, dict) and times.get("compacted") is not None:
            st.pruned.append(call_id)
        atts = state.get("attachments")
        if isinstance(atts, list):
            st.media += [_media(ctx, a, call_id) for a in atts if isinstance(a, dict)]
    elif status == "error":
        result = ToolResult(call_id, name, _str(ctx, state, "error", call_id, ""), is_error=True)
    elif status in ("pending", "running"):
        result = ToolResult(call_id, name, INTERRUPTED, is_error=True)
    else:
        raise ctx.fail("a tool state status of pending|running|completed|error", call_id)
    st.results.append(result)
    st.result_ids.append(p["id"] if isinstance(p.get("id"), str) and p["id"] else f"{call_id}:result")


def _usage(ctx: _Ctx, finish: dict[str, Any], mid: str, meta: dict[str, Any]) -> Usage:
    """OpenCode's tokens.input excludes the cache: Usage.input adds cache.read and cache.write back."""
    tokens = finish.get("tokens")
    cache = tokens.get("cache", {}) if isinstance(tokens, dict) else None
    if not isinstance(tokens, dict) or not isinstance(cache, dict):
        raise ctx.fail("step-finish 'tokens' with a 'cache' object", mid)
    vals = {}
    for key, src in (("input", tokens), ("output", tokens), ("reasoning", tokens), ("read", cache), ("write", cache)):
        v = src.get(key, 0)
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ctx.fail(f"a non-negative integer token count '{key}' in step-finish", mid)
        vals[key] = v
    if isinstance(finish.get("reason"), str):
        meta["finish"] = finish["reason"]
    if isinstance(finish.get("cost"), (int, float)) and not isinstance(finish["cost"], bool):
        meta["cost"] = finish["cost"]
    meta["overflow_count"] = vals["input"] + vals["read"] + vals["output"]
    return Usage(input=vals["input"] + vals["read"] + vals["write"], output=vals["output"], cache_read=vals["read"],
                 cache_write=vals["write"], reasoning=vals["reasoning"])


def _meta(ctx: _Ctx, info: dict[str, Any], model: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"path": str(ctx.path)}
    if model:
        meta["model"] = model
    for src, dst in (("directory", "cwd"), ("version", "tool_version"), ("title", "title"), ("slug", "slug"),
                     ("projectID", "project_id"), ("parentID", "parent_session")):
        if isinstance(info.get(src), str):
            meta[dst] = info[src]
    t = info.get("time")
    created = t.get("created") if isinstance(t, dict) else None
    if isinstance(created, (int, float)) and not isinstance(created, bool) and 0 <= created < 1e14:
        when = datetime.fromtimestamp(created / 1000, UTC)
        meta["started_at"] = when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return meta
