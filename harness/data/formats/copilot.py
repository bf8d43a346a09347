"""``compbench.data.formats.copilot`` — GitHub Copilot CLI session logs
(``~/.copilot/session-state/<session-id>/events.jsonl``).

Field names follow the CLI's published event schema (github/copilot-sdk ``nodejs/src/generated/
session-events.ts`` at cc0438d66) and the shape of real ``events.jsonl`` files: one event a line,
``{type, data, id, timestamp, parentId, agentId?}``.

Mapping decisions:

* ``session.start`` gives the transcript id (``data.sessionId``; else the session folder's name), the CLI
  version, the selected model and the working directory. ``session.model_change`` records later models.
* ``user.message`` is a user message; its text is ``transformedContent`` when recorded (what the model was
  sent: the CLI wraps the prompt, e.g. with the current time), else ``content``. ``system.message`` is a
  system message.
* ``assistant.message`` is one model call: ``content`` as text, ``reasoningText`` as Reasoning (the opaque
  or encrypted reasoning as encrypted Reasoning), ``toolRequests`` as tool calls. Messages sharing an
  ``apiCallId`` are chunks of one call, merged. The log keeps only ``outputTokens`` (``assistant.usage`` is
  ephemeral, never written), so there is no recorded Usage: it is kept in the message's meta.
* ``tool.execution_complete`` is a tool message: ``result.content`` (what the model is sent;
  ``detailedContent`` is for the UI), or ``error.message`` flagged as an error.
* ``session.compaction_complete`` with ``success`` is a RecordedCompaction at that point: ``summaryContent``
  the summary, ``preCompactionTokens`` (else the start event's ``currentTokens``) the tokens before; trigger
  ``manual`` for ``/compact``, ``auto`` for the threshold, context-limit, memory and model-switch triggers.
  The CLI compacts in the background from ``session.compaction_start`` while the agent goes on: the messages
  recorded between start and complete were not in what it summarized and stay verbatim (``kept_ids``; an
  inference from the documented background compaction, not from the CLI's code). A failed compaction is
  listed in ``meta["failed_compactions"]``.
* Events of a sub-agent (``agentId`` set) are another context: counted, not imported. Other events (turns,
  hooks, permissions, usage info, ...) are counted by type in ``meta["events"]``; a type outside the schema's
  namespaces is also warned.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from compbench.data.formats.jsonio import as_text, iter_jsonl, json_args
from compbench.data.transcript import (
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

NAME = "copilot"
PRODUCER = "copilot-agent"
# Namespaces of the schema's event types (``abort`` has none); a type outside them is unknown.
NAMESPACES = frozenset({
    "session", "user", "assistant", "tool", "subagent", "hook", "system", "skill", "permission", "user_input",
    "elicitation", "sampling", "mcp", "mcp_app", "external_tool", "command", "commands", "auto_mode_switch",
    "exit_plan_mode", "session_limits_exhausted", "pending_messages", "capabilities", "model", "factory", "ui",
    "tool_search", "abort"})
AUTO_TRIGGERS = frozenset({"threshold", "context_limit_retry", "memory_pressure", "model_switch"})


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """A ``session.start`` event written by ``copilot-agent``, or any schema event with its envelope."""
    if first is None:
        return '"type":"session.start"' in head.replace(" ", "") and f'"{PRODUCER}"' in head
    t, data = first.get("type"), first.get("data")
    if not isinstance(t, str) or not isinstance(data, dict):
        return False
    if t == "session.start":
        return "copilotVersion" in data or data.get("producer") == PRODUCER
    return "." in t and t.split(".", 1)[0] in NAMESPACES and "parentId" in first and "id" in first


class _Builder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.messages: list[Message] = []
        self.compactions: list[RecordedCompaction] = []
        self.warnings: list[str] = []
        self.meta: dict[str, Any] = {"path": str(path)}
        self.calls: dict[str, str] = {}  # toolCallId -> tool name (from the assistant's request)
        self.started: dict[str, str] = {}  # toolCallId -> tool name (from tool.execution_start)
        self.by_call: dict[str, int] = {}  # apiCallId -> index of its merged assistant message
        self.events: Counter[str] = Counter()
        self.unknown: Counter[str] = Counter()
        self.subagent = 0
        self.compacting: tuple[int, dict[str, Any]] | None = None  # where a compaction started, its data

    def fail(self, line: int, expected: str) -> TranscriptError:
        return TranscriptError(self.path, line, expected)


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _user(b: _Builder, line: int, ev: dict[str, Any], data: dict[str, Any]) -> None:
    text = _str(data.get("transformedContent")) or _str(data.get("content"))
    if text is None:
        raise b.fail(line, "a user.message with a string 'content'")
    meta: dict[str, Any] = {k: v for k, v in (("timestamp", _str(ev.get("timestamp"))),
                                             ("source", _str(data.get("source")))) if v}
    if isinstance(data.get("attachments"), list) and data["attachments"]:
        meta["attachments"] = len(data["attachments"])
    b.messages.append(Message(str(ev.get("id") or f"m{len(b.messages)}"), "user", (Text(text),), None, meta))


def _assistant(b: _Builder, line: int, ev: dict[str, Any], data: dict[str, Any]) -> None:
    content = data.get("content", "")
    if not isinstance(content, str):
        raise b.fail(line, "an assistant.message with a string 'content'")
    parts: list[Part] = []
    if isinstance(data.get("reasoningText"), str) and data["reasoningText"]:
        parts.append(Reasoning(data["reasoningText"]))
    for k in ("reasoningOpaque", "encryptedContent"):
        if isinstance(data.get(k), str) and data[k]:
            parts.append(Reasoning(data[k], encrypted=True))
    if content:
        parts.append(Text(content))
    requests = data.get("toolRequests", [])
    if not isinstance(requests, list):
        raise b.fail(line, "'toolRequests' as a list")
    for req in requests:
        cid, name = (req.get("toolCallId"), req.get("name")) if isinstance(req, dict) else (None, None)
        if not isinstance(cid, str) or not isinstance(name, str):
            raise b.fail(line, "a tool request with string 'toolCallId' and 'name'")
        b.calls[cid] = name
        parts.append(ToolCall(cid, name, json_args(req.get("arguments", {}))))
    out = _int(data.get("outputTokens"))
    api = _str(data.get("apiCallId"))
    at = b.by_call.get(api) if api else None
    if at is not None:  # another chunk of a call already imported
        last = b.messages[at]
        meta = dict(last.meta)
        if out is not None:
            meta["output_tokens"] = meta.get("output_tokens", 0) + out
        b.messages[at] = Message(last.id, "assistant", last.parts + tuple(parts), None, meta)
        return
    meta = {k: v for k, v in (("model", _str(data.get("model"))), ("timestamp", _str(ev.get("timestamp"))),
                              ("output_tokens", out)) if v is not None}
    if api:
        b.by_call[api] = len(b.messages)
    b.messages.append(Message(str(ev.get("id") or f"m{len(b.messages)}"), "assistant", tuple(parts), None, meta))


def _tool(b: _Builder, line: int, ev: dict[str, Any], data: dict[str, Any]) -> None:
    cid = data.get("toolCallId")
    if not isinstance(cid, str):
        raise b.fail(line, "a tool.execution_complete with a string 'toolCallId'")
    result, error = data.get("result"), data.get("error")
    if isinstance(result, dict) and "content" in result:
        output = as_text(result["content"])
    elif isinstance(error, dict):
        output = as_text(error.get("message"))
    else:
        output = as_text(result)
    orphan = cid not in b.calls
    if orphan:
        b.warnings.append(f"line {line}: tool result {cid} has no matching tool request (kept, flagged orphan)")
    name = b.calls.get(cid) or b.started.get(cid, "")
    res = ToolResult(cid, name, output, data.get("success") is False, orphan)
    meta = {"user_requested": True} if data.get("isUserRequested") is True else {}
    b.messages.append(Message(str(ev.get("id") or f"m{len(b.messages)}"), "tool", (res,), None, meta))


def _compaction(b: _Builder, line: int, data: dict[str, Any]) -> None:
    start_at, start = b.compacting or (len(b.messages), {})
    b.compacting = None
    if data.get("success") is not True:
        b.meta.setdefault("failed_compactions", []).append(
            {"line": line, "error": _str(data.get("error")) or "no summary"})
        return
    raw = _str(data.get("trigger")) or _str(start.get("trigger"))
    trigger: Literal["auto", "manual", "unknown"] = (
        "manual" if raw == "manual" else "auto" if raw in AUTO_TRIGGERS else "unknown")
    before = _int(data.get("preCompactionTokens")) or _int(start.get("currentTokens"))
    meta = {k: v for k, v in (
        ("line", line), ("raw_trigger", raw), ("post_tokens", _int(data.get("postCompactionTokens"))),
        ("messages_removed", _int(data.get("messagesRemoved"))),
        ("pre_messages", _int(data.get("preCompactionMessagesLength"))),
        ("token_limit", _int(data.get("tokenLimit")) or _int(start.get("tokenLimit"))),
        ("checkpoint", _int(data.get("checkpointNumber")))) if v is not None}
    b.compactions.append(RecordedCompaction(
        index=len(b.messages), tool=NAME, trigger=trigger, tokens_before=before,
        summary=_str(data.get("summaryContent")) or "", kept_ids=tuple(m.id for m in b.messages[start_at:]),
        meta=meta))


def _session(b: _Builder, t: str, data: dict[str, Any]) -> None:
    if t == "session.start":
        for key, meta_key in (("sessionId", "session_id"), ("copilotVersion", "tool_version"),
                              ("startTime", "started_at"), ("selectedModel", "model")):
            if isinstance(data.get(key), str) and data[key]:
                b.meta.setdefault(meta_key, data[key])
        ctx = data.get("context")
        if isinstance(ctx, dict):
            for key, meta_key in (("cwd", "cwd"), ("branch", "git_branch"), ("repository", "repository")):
                if isinstance(ctx.get(key), str):
                    b.meta.setdefault(meta_key, ctx[key])
    elif t == "session.model_change" and isinstance(data.get("newModel"), str):
        b.meta.setdefault("model", data["newModel"])
        b.meta.setdefault("models", []).append(data["newModel"])
    elif t == "session.shutdown" and isinstance(data.get("modelMetrics"), dict):
        b.meta["model_metrics"] = data["modelMetrics"]
    elif t == "session.context_cleared":
        b.warnings.append(f"the context was cleared after message {len(b.messages)}: imported as one conversation")


def read(path: Path) -> Iterator[Transcript]:
    b = _Builder(path)
    for line, ev in iter_jsonl(path):
        t, data = ev.get("type"), ev.get("data", {})
        if not isinstance(t, str):
            t = f"<{type(t).__name__}>"
        if not isinstance(data, dict):
            raise b.fail(line, f"a {t} event with a 'data' object")
        if isinstance(ev.get("agentId"), str) and ev["agentId"]:
            b.subagent += 1  # a sub-agent's own context
            continue
        if t == "user.message":
            _user(b, line, ev, data)
        elif t == "assistant.message":
            _assistant(b, line, ev, data)
        elif t == "tool.execution_complete":
            _tool(b, line, ev, data)
        elif t == "system.message":
            text = data.get("content")
            if not isinstance(text, str):
                raise b.fail(line, "a system.message with a string 'content'")
            b.messages.append(Message(str(ev.get("id") or f"m{len(b.messages)}"), "system", (Text(text),)))
        elif t == "session.compaction_start":
            b.compacting = (len(b.messages), data)
        elif t == "session.compaction_complete":
            _compaction(b, line, data)
        else:
            if t == "tool.execution_start" and isinstance(data.get("toolCallId"), str):
                b.started[data["toolCallId"]] = str(data.get("toolName", ""))
            elif t.startswith("session."):
                _session(b, t, data)
            (b.events if t.split(".", 1)[0] in NAMESPACES else b.unknown)[t] += 1
    if not b.messages:
        raise TranscriptError(path, None, "at least one user, assistant or tool event of the main agent")
    for t, n in sorted(b.unknown.items()):
        b.warnings.append(f"skipped {n} events of unknown type {t!r}")
    b.meta.update({"events": dict(sorted(b.events.items())), "subagent_events": b.subagent})
    if b.unknown:
        b.meta["unknown_events"] = dict(sorted(b.unknown.items()))
    sid = b.meta.get("session_id") or (path.parent.name if path.name == "events.jsonl" else path.stem)
    yield Transcript(str(sid), NAME, tuple(b.messages), b.meta, tuple(b.compactions), tuple(b.warnings))
