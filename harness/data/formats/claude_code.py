"""``compbench.data.formats.claude_code`` — Claude Code session JSONL (``~/.claude/projects/*/SESSION.jsonl``; followed:
CLI 2.0.60–2.1.49).

Records: ``user`` / ``assistant`` (``message`` in Anthropic Messages format, ``uuid``/``parentUuid``),
``system`` (``compact_boundary`` with ``compactMetadata {trigger, preTokens, ...}``, 2.1's
``microcompact_boundary``, ``api_error``, ``local_command``, ``turn_duration``, ``stop_hook_summary``, ...)
and bookkeeping entries (:data:`BOOKKEEPING`). The same records as one JSON array (a hook's
``json.dump(records, indent=2)`` copy, e.g. ``logs/chat.json``) are read the same way.

Mapping decisions, each taken from the real files (not from documentation, which does not exist):

* Claude Code writes one assistant record per content block, all sharing ``message.id``; their usage
  grows as the response streams (the last record holds the final ``output_tokens``). They are merged into
  one message (one model call) carrying the last record's usage, converted from Anthropic's convention
  (``input_tokens`` excludes the cache) to compbench's (``input`` includes it).
* ``tool_result`` blocks arrive in user records and become ``tool`` messages; an image inside a result is
  a :class:`Media` part beside the :class:`ToolResult`, never base64 text (it would be counted as context).
* Sidechain (sub-agent) records are another context: counted in ``meta["sidechain_records"]``, not imported
  with the main conversation. A file of sidechain records only (a sub-agent's own file) is imported as
  that sub-agent's transcript, ``<sessionId>/<agentId>``.
* ``isMeta`` user records (the local-command caveat) stay user messages flagged ``is_meta``; slash-command
  and ``<local-command-stdout>`` user records are user messages flagged ``local_command`` (and ``command``).
  ``system`` records (``local_command`` echoes of UI-only commands such as ``/config``, ``turn_duration``,
  ``api_error``) are UI events, not conversation: counted by subtype in ``meta["system_records"]``.
* Synthetic assistant messages (``model: "<synthetic>"``, ``isApiErrorMessage``: e.g. the rate-limit
  notice) are kept, flagged ``synthetic``, without usage: no API call produced them.
* A ``compact_boundary`` restarts the ``parentUuid`` chain (``logicalParentUuid`` links back); the user
  record flagged ``isCompactSummary`` that follows holds the summary. Claude Code summarizes the whole
  history (``kept_ids`` empty) unless 2.1's metadata names a preserved segment; metadata keys beyond
  trigger and preTokens (``postTokens``, ``precomputed``, ...) are kept in its meta, with the boundary's
  ``version`` (``tool_version``: a resumed session can compact under a newer CLI than its first record's).
  ``/autocompact``'s report of the window and its source (``Auto-compact window: auto (500k tokens)``) goes to
  ``meta["autocompact_window"]``. A ``microcompact_boundary`` (tool results cleared, no summary) is listed in
  ``meta["microcompactions"]``.
* A response that wrote to Anthropic's 1-hour prompt cache is flagged ``cache_ttl: "1h"`` (the lifetime Claude
  Code asked for; 5 minutes otherwise). A file whose first record's ``parentUuid`` is not in it is a slice of
  a longer session (``meta["starts_mid_chain"]``): its first recorded prompt holds history the file lacks.
* Unknown record types, and known ones that may reach the model but are not modelled (``attachment``,
  ...), are counted in ``meta["unknown_records"]`` / ``meta["unmodelled_records"]`` and warned, never fatal.
  An ``attachment`` between a compaction's summary and the next call or prompt is what the tool attached with
  that compaction (2.1.217 persists it; earlier versions do not): its text goes to the compaction's
  ``meta["attached"]`` (a file as the Read call and result it stands for), except what announces again the
  context the session's first call carried (deferred tools, agents, MCP instructions, SessionStart hooks),
  counted in ``meta["attached_in_overhead"]``: a replay counts that in the hidden overhead.
* The conversation is the ``parentUuid`` chain that ends at the last user/assistant record; rewound
  branches are dropped and a resumed session's file names the sessions it continues (``claude_chain.py``).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compbench.data.formats.claude_chain import drop_rewound, lineage, preserved_uuids
from compbench.data.formats.jsonio import as_text, iter_records, json_args
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

NAME = "claude-code"
# Bookkeeping records with no model-visible content, by the entry types Claude Code 2.0-2.1 writes to a
# session file (titles, tags, agent settings, PR links, file and attribution snapshots, the input queue,
# modes, worktree state, progress of running tools): passed over silently.
BOOKKEEPING = frozenset({
    "summary", "custom-title", "ai-title", "last-prompt", "task-summary", "tag", "agent-name", "agent-color",
    "agent-setting", "pr-link", "file-history-snapshot", "attribution-snapshot", "queue-operation",
    "speculation-accept", "mode", "permission-mode", "worktree-state", "bridge-session", "fork-context-ref",
    "isolation-latch", "progress"})
# Entry types that can change what the model sees but are not modelled here: counted and reported.
NOT_MODELLED = frozenset({"attachment", "content-replacement", "marble-origami-commit", "marble-origami-snapshot",
                          "marble-origami-reset"})
# compactMetadata keys read into RecordedCompaction fields; any other key is kept in its meta.
COMPACT_FIELDS = frozenset({"trigger", "preTokens"})
SNIFF_ARRAY_RECORDS = 64  # records of an array document looked at (bookkeeping records come first)
SYNTHETIC_MODEL = "<synthetic>"  # Claude Code's model name for messages it writes itself (API errors)
COMMAND_RE = re.compile(r"<command-name>\s*(/[^<\s]*)\s*</command-name>")
LOCAL_COMMAND_MARKS = ("<command-name>", "<local-command-stdout>", "<local-command-stderr>")


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """Claude Code's conversation records carry ``sessionId`` and ``parentUuid``, a title ``leafUuid``.

    Bookkeeping records written first (``file-history-snapshot``, ``queue-operation``) carry neither: the
    detector looks past them to the next records. Without a parsed record, the head's text is the evidence.
    """
    if first is not None:
        return isinstance(first.get("sessionId"), str) and ("parentUuid" in first or "leafUuid" in first)
    return '"sessionId"' in head and ('"parentUuid"' in head or '"leafUuid"' in head)


def sniff_document(doc: Any) -> bool:
    """A JSON array of the session's records (a hook's ``json.dump(records, indent=2)`` copy of the log)."""
    return isinstance(doc, list) and any(
        isinstance(r, dict) and sniff("", r) for r in doc[:SNIFF_ARRAY_RECORDS])


def anthropic_usage(u: Any) -> Usage | None:
    """Anthropic usage (input excludes the cache) as compbench Usage (input includes it)."""
    if not isinstance(u, dict):
        return None

    def n(k: str) -> int:
        v = u.get(k, 0)
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    read, write = n("cache_read_input_tokens"), n("cache_creation_input_tokens")
    return Usage(input=n("input_tokens") + read + write, output=n("output_tokens"), cache_read=read, cache_write=write)


def _media(block: dict[str, Any]) -> Media:
    """An Anthropic image block: base64 sources decoded to bytes, URL sources kept by name."""
    src = block.get("source")
    if not isinstance(src, dict):
        return Media("image")
    mime = src.get("media_type") if isinstance(src.get("media_type"), str) else ""
    data = b""
    if src.get("type") == "base64" and isinstance(src.get("data"), str):
        try:
            data = base64.b64decode(src["data"], validate=True)
        except (binascii.Error, ValueError):
            data = b""  # a redacted or damaged payload: the image is still there, its bytes are not
    name = src["url"] if isinstance(src.get("url"), str) else ""
    return Media("image", str(mime), data, name)


class _State:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.messages: list[Message] = []
        self.compactions: list[RecordedCompaction] = []
        self.warnings: list[str] = []
        self.meta: dict[str, Any] = {"path": str(path)}
        self.calls: dict[str, str] = {}  # tool_use id -> tool name
        self.unknown: Counter[str] = Counter()
        self.unmodelled: Counter[str] = Counter()
        self.unknown_blocks: Counter[str] = Counter()
        self.sessions: list[str] = []  # distinct sessionIds of conversation records, in file order
        self.session_of: dict[str, str] = {}  # message id -> the session whose record it came from
        self.microcompactions: list[dict[str, Any]] = []
        self.system: Counter[str] = Counter()
        self.sidechain = 0
        self.by_response: dict[str, int] = {}  # message.id -> index of its merged assistant message
        self.links: list[tuple[str, str]] = []  # (uuid, parentUuid) of conversation records (branch detection)
        self.boundary: dict[str, Any] | None = None
        self.parent: dict[str, str | None] = {}  # record uuid -> parent (logical parent across a compaction)
        self.prompts: set[str] = set()  # uuids of user records that are prompts (not tool results or notes)
        self.last: str | None = None  # uuid of the last user/assistant record
        self.attach_to: int | None = None  # the compaction whose attachments may follow (until a call or a prompt)

    def uid(self, r: dict[str, Any]) -> str:
        uid = r.get("uuid")
        return uid if isinstance(uid, str) and uid else f"m{len(self.messages)}"


def _blocks(content: Any, path: Path, line: int) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list) and all(isinstance(b, dict) for b in content):
        return content
    raise TranscriptError(path, line, "message.content as a string or a list of content-block objects")


def _assistant(st: _State, r: dict[str, Any], line: int) -> None:
    msg = r.get("message")
    if not isinstance(msg, dict):
        raise TranscriptError(st.path, line, "an assistant record with a 'message' object")
    parts: list[Part] = []
    for b in _blocks(msg.get("content", []), st.path, line):
        t = b.get("type")
        if t == "text":
            if not isinstance(b.get("text"), str):
                raise TranscriptError(st.path, line, "a text block with a string 'text'")
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
        elif t == "web_search_tool_result":
            parts.append(Text(as_text(b.get("content"))))
        else:
            st.unknown_blocks[str(t)] += 1
    model = msg.get("model") if isinstance(msg.get("model"), str) else None
    synthetic = model == SYNTHETIC_MODEL or bool(r.get("isApiErrorMessage"))
    usage = None if synthetic else anthropic_usage(msg.get("usage"))
    mid = msg.get("id") if isinstance(msg.get("id"), str) else None
    at = st.by_response.get(mid) if mid is not None else None
    if at is not None:  # another content block of a response already imported: same model call
        last = st.messages[at]
        st.messages[at] = Message(last.id, "assistant", last.parts + tuple(parts), usage or last.usage, last.meta)
        return
    meta: dict[str, Any] = {k: v for k, v in (("model", model), ("timestamp", r.get("timestamp"))) if v}
    if not synthetic and _one_hour(msg.get("usage")):
        meta["cache_ttl"] = "1h"
    if synthetic:
        meta["synthetic"] = True
        if isinstance(r.get("error"), str):
            meta["api_error"] = r["error"]
    if mid is not None:
        st.by_response[mid] = len(st.messages)
        meta["response_id"] = mid
    st.messages.append(Message(st.uid(r), "assistant", tuple(parts), usage, meta))
    if model and not synthetic:
        st.meta.setdefault("model", model)


def _one_hour(u: Any) -> bool:
    """The response wrote to Anthropic's 1-hour prompt cache (``usage.cache_creation.ephemeral_1h_input_tokens``):
    the lifetime Claude Code asked for (5 minutes, the API's default, otherwise)."""
    cc = u.get("cache_creation") if isinstance(u, dict) else None
    n = cc.get("ephemeral_1h_input_tokens") if isinstance(cc, dict) else None
    return isinstance(n, int) and not isinstance(n, bool) and n > 0


def _user_meta(r: dict[str, Any], text: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"timestamp": r["timestamp"]} if isinstance(r.get("timestamp"), str) else {}
    if r.get("isMeta"):
        meta["is_meta"] = True
    if any(mark in text for mark in LOCAL_COMMAND_MARKS):
        meta["local_command"] = True
        cmd = COMMAND_RE.search(text)
        if cmd:
            meta["command"] = cmd.group(1)
    return meta


def _user(st: _State, r: dict[str, Any], line: int) -> None:
    msg = r.get("message")
    if not isinstance(msg, dict):
        raise TranscriptError(st.path, line, "a user record with a 'message' object")
    uid = st.uid(r)
    parts: list[Part] = []
    results: list[tuple[Part, ...]] = []
    for b in _blocks(msg.get("content", ""), st.path, line):
        t = b.get("type")
        if t == "text":
            if not isinstance(b.get("text"), str):
                raise TranscriptError(st.path, line, "a text block with a string 'text'")
            parts.append(Text(b["text"]))
        elif t == "image":
            parts.append(_media(b))
        elif t == "tool_result":
            results.append(_tool_result(st, b, line))
        else:
            st.unknown_blocks[str(t)] += 1
    text = "\n".join(p.text for p in parts if isinstance(p, Text))
    meta = _user_meta(r, text)
    if meta.get("local_command") and (shown := autocompact_window(text)) is not None:
        st.meta["autocompact_window"] = {**shown, "line": line}
    for k, res in enumerate(results):
        st.messages.append(Message(uid if k == 0 and not parts else f"{uid}:{k}", "tool", res, None, dict(meta)))
    if not parts:
        return
    if not results and not r.get("isMeta") and not r.get("isCompactSummary") and isinstance(r.get("uuid"), str):
        st.prompts.add(r["uuid"])
    if r.get("isCompactSummary"):
        meta["compaction"] = "summary"
    st.messages.append(Message(uid, "user", tuple(parts), None, meta))
    if r.get("isCompactSummary"):
        b = st.boundary or {"trigger": "unknown", "pre": None, "uuid": None, "line": None, "logical_parent": None,
                             "version": None, "extra": {}, "kept": []}
        kept = set(b["kept"])
        meta = {k: v for k, v in (("boundary_uuid", b["uuid"]), ("boundary_line", b["line"]),
                                  ("logical_parent_uuid", b["logical_parent"]), ("tool_version", b["version"]),
                                  ("compact_metadata", b["extra"])) if v}
        st.compactions.append(RecordedCompaction(
            index=len(st.messages) - 1, tool=NAME, trigger=b["trigger"], tokens_before=b["pre"], summary=text,
            summary_id=uid, kept_ids=tuple(m.id for m in st.messages if m.id.split(":", 1)[0] in kept), meta=meta))
        st.boundary = None
        st.attach_to = len(st.compactions) - 1


# /autocompact's report of the window and where it comes from (2.1.217: ``Auto-compact window: auto``, ``auto (500k
# tokens)`` from the server, ``200k tokens (from CLAUDE_CODE_AUTO_COMPACT_WINDOW)``, ``300k tokens (from settings)``)
AUTOCOMPACT_REPORT = re.compile(r"Auto-compact window: (?:(auto)(?: \(([\d.,]+[km]?) tokens\))?|([\d.,]+[km]?) tokens "
                                r"\(from (CLAUDE_CODE_AUTO_COMPACT_WINDOW|settings)\))", re.I)


def autocompact_window(text: str) -> dict[str, Any] | None:
    """The window ``/autocompact`` reported, with its source (``auto``, ``server``, ``env``, ``settings``) and its
    tokens where it names them; None when the text holds no such report (the last one counts)."""
    found = list(AUTOCOMPACT_REPORT.finditer(text))
    if not found:
        return None
    m = found[-1]
    tokens = _tokens(m.group(2) or m.group(3) or "")
    source = ("server" if m.group(2) else "auto") if m.group(1) else (
        "env" if m.group(4).upper().startswith("CLAUDE") else "settings")
    return {"source": source, "text": m.group(0).split(": ", 1)[1], **({"tokens": tokens} if tokens else {})}


def _tokens(text: str) -> int | None:
    """``500k``, ``1m``, ``200,000`` as Claude Code prints token counts; None for none."""
    t = text.lower().replace(",", "")
    scale = 1_000 if t.endswith("k") else 1_000_000 if t.endswith("m") else 1
    try:
        return round(float(t.rstrip("km")) * scale) if t else None
    except ValueError:
        return None


def _prompt(r: dict[str, Any]) -> bool:
    """A user record that is a prompt the user typed (not a tool result, a meta note, a summary or a local
    command's echo)."""
    if r.get("isMeta") or r.get("isCompactSummary"):
        return False
    msg = r.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list) or any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
        return False
    text = "".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
    return bool(text.strip()) and not any(mark in text for mark in LOCAL_COMMAND_MARKS)


ATTACHMENT_KEYS_NOT_SENT = frozenset({"type", "toolUseID", "hookName", "hookEvent", "uuid", "displayPath", "itemCount"})


def _strings(v: Any) -> list[str]:
    if isinstance(v, str):
        return [v] if v.strip() else []
    if isinstance(v, list):
        return [x for item in v for x in _strings(item)]
    if isinstance(v, dict):
        return [x for k, item in v.items() if k not in ATTACHMENT_KEYS_NOT_SENT for x in _strings(item)]
    return []


# Attachments that announce again, after a compaction, what the session's first call carried (its deferred tools,
# agents, skills, MCP servers' instructions, the SessionStart hooks' output): a replay counts that context in the
# hidden overhead, fitted on the first call, for every row alike; adding it again would count it twice
SESSION_CONTEXT = frozenset({"deferred_tools_delta", "agent_listing_delta", "mcp_instructions_delta", "skill_listing"})


def session_context(a: Any) -> bool:
    return isinstance(a, dict) and ((isinstance(a.get("type"), str) and a["type"] in SESSION_CONTEXT)
                                   or a.get("hookEvent") == "SessionStart")


def attachment_text(a: Any) -> str:
    """What an ``attachment`` record that follows a compaction puts before the model, as text (Claude Code sends
    an attachment as a ``<system-reminder>`` in a user message; the wording here is ours, its content the
    record's): a re-attached file as the Read call and result it stands for (line-numbered as Read shows a
    file), a file too large as its note, anything else (deferred tools, agents, MCP instructions, a hook's
    output) by the text it carries; "" for one that carries none (an empty task list)."""
    if not isinstance(a, dict):
        return ""
    kind = a.get("type")
    if kind == "file":
        content = a.get("content")
        file = content.get("file") if isinstance(content, dict) else None
        body = file.get("content") if isinstance(file, dict) else None
        path = str(a.get("filename") or (file.get("filePath") if isinstance(file, dict) else "") or "")
        if not isinstance(body, str):
            return ""
        numbered = "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(body.split("\n"), 1))
        return (f"<system-reminder>\nCalled the Read tool with the following input: {json.dumps({'file_path': path})}"
                f"\n</system-reminder>\n<system-reminder>\nResult of calling the Read tool: "
                f"{json.dumps(numbered, ensure_ascii=False)}\n</system-reminder>")
    if kind == "compact_file_reference":
        return (f"<system-reminder>\nNote: {a.get('filename')} was read before the last conversation was "
                "summarized, but the contents are too large to include. Use Read tool if you need to access it."
                "\n</system-reminder>")
    texts = _strings(a)
    return "<system-reminder>\n" + "\n".join(texts) + "\n</system-reminder>" if texts else ""


def _tool_result(st: _State, b: dict[str, Any], line: int) -> tuple[Part, ...]:
    """One tool_result block: its text as the ToolResult, its images as Media parts beside it."""
    cid = b.get("tool_use_id")
    if not isinstance(cid, str):
        raise TranscriptError(st.path, line, "a tool_result block with a string 'tool_use_id'")
    orphan = cid not in st.calls
    if orphan:
        st.warnings.append(f"line {line}: tool result {cid} has no matching tool call (kept, flagged orphan)")
    content = b.get("content")
    images: list[Part] = []
    if isinstance(content, list):
        images = [_media(x) for x in content if isinstance(x, dict) and x.get("type") == "image"]
        content = [x for x in content if not (isinstance(x, dict) and x.get("type") == "image")]
    out = ToolResult(cid, st.calls.get(cid, ""), as_text(content), b.get("is_error") is True, orphan)
    return (out, *images)


def _system(st: _State, r: dict[str, Any], line: int) -> None:
    sub = str(r.get("subtype"))
    st.system[sub] += 1
    if sub == "compact_boundary":
        raw = r.get("compactMetadata")
        cm: dict[str, Any] = raw if isinstance(raw, dict) else {}
        trig, pre = cm.get("trigger"), cm.get("preTokens")
        st.boundary = {"trigger": trig if trig in ("auto", "manual") else "unknown", "pre": _int(pre),
                       "uuid": r.get("uuid"), "line": line, "logical_parent": r.get("logicalParentUuid"),
                       "version": r["version"] if isinstance(r.get("version"), str) else None,
                       "extra": {k: v for k, v in sorted(cm.items()) if k not in COMPACT_FIELDS},
                       "kept": preserved_uuids(st, cm)}
    elif sub == "microcompact_boundary":  # 2.1: old tool results cleared in place, no summary
        raw = r.get("microcompactMetadata")
        mm: dict[str, Any] = raw if isinstance(raw, dict) else {}
        cleared = mm.get("compactedToolIds")
        st.microcompactions.append({k: v for k, v in (
            ("line", line), ("trigger", mm.get("trigger")), ("pre_tokens", _int(mm.get("preTokens"))),
            ("tokens_saved", _int(mm.get("tokensSaved"))),
            ("cleared_tool_results", len(cleared) if isinstance(cleared, list) else None)) if v is not None})


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def read(path: Path) -> Iterator[Transcript]:
    """The main conversation; a file holding only sub-agent records (Claude Code writes each sub-agent to
    its own ``agent-<id>.jsonl``, under ``<session>/subagents/`` in later versions) is that sub-agent's
    conversation: its own context window, imported as its own transcript ``<session>/<agentId>``, linked to its
    session (:mod:`.claude_code_subagents`). A compaction's own summarizer call (``agent-acompact-*.jsonl``) is no
    session: it is read with the compaction it made."""
    from compbench.data.formats.claude_code_subagents import is_summarizer_call, linked

    if is_summarizer_call(path):
        raise TranscriptError(path, None, "a session, not a compaction's own summarizer call (an agent-acompact file "
                                          "is read with its session's compaction: import the session's file)")
    try:
        t = _read(path, sidechain=False)
    except _OnlySidechain:
        t = _read(path, sidechain=True)
    yield linked(t, path)


class _OnlySidechain(Exception):
    pass


def _report(st: _State) -> None:
    """What was not imported, counted in ``meta`` and said in ``warnings``: nothing is dropped silently."""
    branches = sum(1 for n in Counter(up for _, up in st.links).values() if n > 1)
    if branches:
        st.warnings.append(f"the parentUuid tree branches at {branches} records; imported in file order")
    for t, n in sorted(st.unknown.items()):
        st.warnings.append(f"skipped {n} records of unknown type {t!r}")
    for t, n in sorted(st.unmodelled.items()):
        st.warnings.append(f"skipped {n} {t!r} records (they can add to the model's context; not modelled)")
    for t, n in sorted(st.unknown_blocks.items()):
        st.warnings.append(f"skipped {n} content blocks of unknown type {t!r}")
    if st.unknown:
        st.meta["unknown_records"] = dict(sorted(st.unknown.items()))
    if st.unmodelled:
        st.meta["unmodelled_records"] = dict(sorted(st.unmodelled.items()))
    if st.microcompactions:
        st.meta["microcompactions"] = st.microcompactions


def _read(path: Path, sidechain: bool) -> Transcript:
    st = _State(path)
    agent = None
    uuids: set[str] = set()  # of every record, bookkeeping included (a progress record can be a parent)
    first_parent: str | None = None  # the parentUuid of the file's first record that has one
    for line, r in iter_records(path):
        t = r.get("type")
        if not isinstance(t, str):
            t = f"<{type(t).__name__}>"  # a type that is not a string is just an unknown record type
        if isinstance(r.get("uuid"), str):
            uuids.add(r["uuid"])
        if first_parent is None and "parentUuid" in r:
            first_parent = r["parentUuid"] if isinstance(r["parentUuid"], str) else ""
        if t in BOOKKEEPING:
            if t == "summary" and isinstance(r.get("summary"), str):
                st.meta.setdefault("title", r["summary"])
            continue
        if t == "attachment" and st.attach_to is not None and bool(r.get("isSidechain")) is sidechain:
            a = r.get("attachment")
            meta = st.compactions[st.attach_to].meta
            assert isinstance(meta, dict)
            if session_context(a):  # the session's start announced it: the hidden overhead counts it already
                meta["attached_in_overhead"] = meta.get("attached_in_overhead", 0) + 1
            elif text := attachment_text(a):  # attached with the compaction (2.1.217 persists it): the row sends it
                meta.setdefault("attached", []).append(text)
            continue
        if t not in ("user", "assistant", "system"):
            (st.unmodelled if t in NOT_MODELLED else st.unknown)[str(t)] += 1
            continue
        if bool(r.get("isSidechain")) is not sidechain:
            st.sidechain += 1
            continue
        sid = r.get("sessionId")
        if isinstance(sid, str) and sid and sid not in st.sessions:
            st.sessions.append(sid)
        before = len(st.messages)
        if agent is None and isinstance(r.get("agentId"), str) and r["agentId"]:
            agent = r["agentId"]
        for key, meta_key in (("cwd", "cwd"), ("version", "tool_version"), ("timestamp", "started_at"),
                              ("gitBranch", "git_branch")):
            if isinstance(r.get(key), str) and r[key]:
                st.meta.setdefault(meta_key, r[key])
        if isinstance(r.get("parentUuid"), str):
            st.links.append((str(r.get("uuid")), r["parentUuid"]))
        if isinstance(r.get("uuid"), str):
            up = r.get("parentUuid") if isinstance(r.get("parentUuid"), str) else r.get("logicalParentUuid")
            st.parent[r["uuid"]] = up if isinstance(up, str) else None
            if t != "system":
                st.last = r["uuid"]
        if t == "assistant" or (t == "user" and _prompt(r)):
            st.attach_to = None  # the tool's attachments come before the next call or the next prompt
        if t == "assistant":
            _assistant(st, r, line)
        elif t == "user":
            _user(st, r, line)
        else:
            _system(st, r, line)
        if isinstance(sid, str):
            st.session_of.update((m.id, sid) for m in st.messages[before:])
    if not st.messages:
        if st.sidechain and not sidechain:
            raise _OnlySidechain
        raise TranscriptError(path, None, "at least one user or assistant record")
    drop_rewound(st)
    if first_parent and first_parent not in uuids:  # a slice of a longer session (a checkpoint's copy)
        st.meta["starts_mid_chain"] = True
        st.warnings.append("the file starts mid-conversation: its first record's parent is not in it (the "
                           "history before it is missing; the first recorded prompt holds it)")
    _report(st)
    session, parents = lineage(st.sessions)
    st.meta.update({"session_id": session, "sidechain_records": st.sidechain, "api_errors": st.system["api_error"],
                    "system_records": dict(sorted(st.system.items()))})
    if parents:
        inherited = sum(1 for m in st.messages if st.session_of.get(m.id, session) != session)
        st.meta.update({"continues": parents, "inherited_messages": inherited})
        st.warnings.append(f"a resumed session: continues {', '.join(parents)}; its first {inherited} messages are "
                           "that history")
    tid = str(session or path.stem)
    if sidechain:
        del st.meta["sidechain_records"]
        st.meta.update({"sidechain": True, "agent_id": agent or path.stem})
        tid = f"{tid}/{agent or path.stem}"
    return Transcript(tid, NAME, tuple(st.messages), st.meta, tuple(st.compactions), tuple(st.warnings))
