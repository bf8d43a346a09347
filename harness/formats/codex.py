"""Codex CLI rollout JSONL (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``; followed: CLI 0.72–0.77).

Records ``{timestamp, type, payload}``: ``session_meta`` (id, cwd, cli_version, instructions),
``turn_context`` (model, policies), ``response_item`` (the model-visible history: ``message`` with role
user/assistant/developer, ``reasoning`` with ``encrypted_content``, ``function_call`` /
``function_call_output``, ``custom_tool_call`` / ``custom_tool_call_output``, ``local_shell_call``,
``web_search_call``, ``ghost_snapshot``), ``event_msg`` (``token_count`` with ``last_token_usage`` — the
OpenAI convention, input includes cached — and UI echoes ``user_message`` / ``agent_message``, which
duplicate response items and are not imported), and ``compacted`` (``message`` = the summary, empty
when the compaction ran remotely and the summary is encrypted; ``replacement_history`` = the new history,
which names the user messages Codex kept).

Consecutive output items (reasoning, assistant message, tool calls) form one model call; the
``token_count`` that follows it is its usage. Developer messages become ``system`` messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compbench.errors import TranscriptError
from compbench.formats.jsonio import as_text, iter_jsonl
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

NAME = "codex"
OUTPUT_ITEMS = frozenset({"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"})
KNOWN_RECORDS = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    return first is not None and first.get("type") == "session_meta" and isinstance(first.get("payload"), dict)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


class _Builder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.messages: list[Message] = []
        self.open: list[Part] | None = None  # parts of the model call being assembled
        self.open_id = ""
        self.open_usage: Usage | None = None
        self.calls: dict[str, str] = {}
        self.warnings: list[str] = []
        self.last_total = 0

    def close(self) -> None:
        if self.open is not None:
            self.messages.append(Message(self.open_id, "assistant", tuple(self.open), self.open_usage))
        self.open, self.open_usage = None, None

    def output(self, line: int, part: Part) -> None:
        if self.open is None:
            self.open, self.open_id = [], f"r{line}"
        self.open.append(part)

    def add(self, m: Message) -> None:
        self.close()
        self.messages.append(m)


def _response_item(b: _Builder, line: int, p: dict[str, Any]) -> None:
    t = p.get("type")
    if t == "message":
        role = p.get("role")
        text = _text(p.get("content"))
        raw_content = p.get("content")
        content: list[Any] = raw_content if isinstance(raw_content, list) else []
        media = [Media("image") for c in content if isinstance(c, dict) and c.get("type") == "input_image"]
        if role == "assistant":
            b.output(line, Text(text))
        elif role in ("user", "developer", "system"):
            meta: dict[str, Any] = {}
            if text.lstrip().startswith(("# AGENTS.md instructions", "<environment_context>", "<user_instructions>")):
                meta["session_prefix"] = True  # Codex's initial context, not a user request
            b.add(Message(f"r{line}", "user" if role == "user" else "system", (Text(text), *media), None, meta))
        else:
            raise TranscriptError(b.path, line, f"a message role user|assistant|developer|system, found {role!r}")
    elif t == "reasoning":
        summary = "\n".join(s.get("text", "") for s in p.get("summary") or [] if isinstance(s, dict))
        if summary:
            b.output(line, Reasoning(summary))
        if p.get("encrypted_content"):
            b.output(line, Reasoning(str(p["encrypted_content"]), encrypted=True))
    elif t in ("function_call", "custom_tool_call", "local_shell_call"):
        cid = p.get("call_id") or p.get("id")
        if not isinstance(cid, str):
            raise TranscriptError(b.path, line, f"a {t} with a string 'call_id'")
        name = str(p.get("name") or ("local_shell" if t == "local_shell_call" else ""))
        args = p.get("arguments") if t == "function_call" else p.get("input") if t == "custom_tool_call" else p.get(
            "action")
        b.calls[cid] = name
        b.output(line, ToolCall(cid, name, args if isinstance(args, str) else as_text(args)))
    elif t == "web_search_call":
        b.output(line, ToolCall(str(p.get("id", f"ws{line}")), "web_search", as_text(p.get("action"))))
    elif t in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        cid = p.get("call_id")
        if not isinstance(cid, str):
            raise TranscriptError(b.path, line, f"a {t} with a string 'call_id'")
        out = p.get("output")
        if isinstance(out, dict):
            out = out.get("content", out)
        orphan = cid not in b.calls
        if orphan:
            b.warnings.append(f"line {line}: tool output {cid} has no matching call (kept, flagged orphan)")
        b.add(Message(f"r{line}", "tool", (ToolResult(cid, b.calls.get(cid, ""), as_text(out), False, orphan),)))
    elif t == "ghost_snapshot":
        return  # a git snapshot for /undo: never sent to the model
    else:
        b.warnings.append(f"line {line}: response item of unknown type {t!r} skipped")


def read(path: Path) -> Iterator[Transcript]:
    b = _Builder(path)
    meta: dict[str, Any] = {"path": str(path)}
    compactions: list[RecordedCompaction] = []
    unknown: dict[str, int] = {}
    sid = None
    for line, r in iter_jsonl(path):
        t, p = r.get("type"), r.get("payload")
        if t not in KNOWN_RECORDS:
            unknown[str(t)] = unknown.get(str(t), 0) + 1
            continue
        if not isinstance(p, dict):
            raise TranscriptError(path, line, f"a {t} record with a 'payload' object")
        if t == "session_meta":
            sid = p.get("id")
            for k, mk in (("cwd", "cwd"), ("cli_version", "tool_version"), ("timestamp", "started_at"),
                          ("model_provider", "provider"), ("originator", "originator")):
                if isinstance(p.get(k), str):
                    meta.setdefault(mk, p[k])
            if isinstance(p.get("instructions"), str) and p["instructions"]:
                meta["instructions_chars"] = len(p["instructions"])
        elif t == "turn_context":
            if isinstance(p.get("model"), str):
                meta.setdefault("model", p["model"])
        elif t == "response_item":
            _response_item(b, line, p)
        elif t == "event_msg":
            if p.get("type") == "token_count" and isinstance(p.get("info"), dict):
                u = p["info"].get("last_token_usage")
                if isinstance(u, dict) and isinstance(u.get("input_tokens"), int) and u["input_tokens"] > 0:
                    usage = Usage(input=u["input_tokens"], output=int(u.get("output_tokens") or 0),
                                  cache_read=int(u.get("cached_input_tokens") or 0),
                                  reasoning=int(u.get("reasoning_output_tokens") or 0))
                    b.last_total = usage.input + usage.output
                    if b.open is not None and b.open_usage is None:
                        b.open_usage = usage
                        b.close()
                    elif b.messages and b.messages[-1].role == "assistant" and b.messages[-1].usage is None:
                        last = b.messages[-1]
                        b.messages[-1] = Message(last.id, last.role, last.parts, usage, last.meta)
                if isinstance(p["info"].get("model_context_window"), int):
                    meta.setdefault("model_context_window", p["info"]["model_context_window"])
        elif t == "compacted":
            b.close()
            raw_history = p.get("replacement_history")
            history: list[Any] = raw_history if isinstance(raw_history, list) else []
            kept_texts = {_text(x.get("content")) for x in history
                          if isinstance(x, dict) and x.get("type") == "message" and x.get("role") == "user"}
            kept = tuple(m.id for m in b.messages if m.role == "user" and m.text in kept_texts)
            raw_summary = p.get("message")
            summary = raw_summary if isinstance(raw_summary, str) else ""
            encrypted = any(isinstance(x, dict) and x.get("type") == "compaction" for x in history)
            compactions.append(RecordedCompaction(
                index=len(b.messages), tool=NAME, trigger="auto", tokens_before=b.last_total or None, summary=summary,
                kept_ids=kept, meta={"line": line, "encrypted": encrypted and not summary,
                                     "replacement_items": len(history)}))
    b.close()
    if not b.messages:
        raise TranscriptError(path, None, "at least one response_item message")
    for t, n in sorted(unknown.items()):
        b.warnings.append(f"skipped {n} records of unknown type {t!r}")
    yield Transcript(str(sid or path.stem), NAME, tuple(b.messages), meta, tuple(compactions), tuple(b.warnings))
