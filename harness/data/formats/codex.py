"""``compbench.data.formats.codex`` — Codex CLI rollout JSONL (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``;
followed: CLI 0.72–0.77 and 0.140–0.142.5).

Records ``{timestamp, type, payload}`` (``RolloutItem`` in codex-rs/protocol): ``session_meta`` (id, cwd,
cli_version, instructions), ``turn_context`` (model, policies), ``response_item`` (the model-visible
history: ``message`` with role user/assistant/developer, ``reasoning`` with ``encrypted_content``,
``function_call`` / ``function_call_output``, ``custom_tool_call`` / ``custom_tool_call_output``,
``local_shell_call``, ``web_search_call``, ``ghost_snapshot``), ``event_msg`` (``token_count`` and UI
echoes: ``user_message`` / ``agent_message`` duplicate response items and are not imported) and
``compacted`` (``message`` = the summary, empty when the compaction ran remotely and the summary is
encrypted; ``replacement_history`` = the new history, which names the user messages Codex kept).

Mapping decisions, checked on the real 0.72 and 0.77 files:

* Consecutive output items (reasoning, assistant message, tool calls) form one model call, one
  ``assistant`` message; an input item (user message, tool output) ends it.
* ``token_count`` carries ``last_token_usage`` in the OpenAI convention (``input_tokens`` includes
  ``cached_input_tokens``). Codex re-emits the previous count at the start of the next request, unchanged:
  only a count whose ``total_token_usage`` moved is a new call's usage. It goes to the model call it
  follows. A count with zero input (written right after a compaction) is no call.
* Developer messages become ``system`` messages; the initial-context user messages (AGENTS.md,
  ``<environment_context>``, ``<user_instructions>``) are flagged ``session_prefix``.
* A ``compacted`` record becomes a RecordedCompaction at the position of the next imported message; its
  ``tokens_before`` is the last call's input + output. Its trigger is ``auto`` when it falls inside a turn
  (after a tool output, where no user could type ``/compact``) and ``manual`` when the user's last input
  was ``/compact`` (0.77 records the command as a ``user_message`` event). Rollouts that record turns
  (``task_started`` / ``task_complete`` events, 0.14x) show a ``/compact`` otherwise: Codex runs it as a
  task of its own (``CompactTask``, codex-rs/core/src/tasks/compact.rs at 99d7cc05) that records no user
  input and makes no model call, so a compaction whose turn holds nothing else, before or after it, is
  ``manual``; a pre-turn auto compaction's turn goes on with the user's prompt. Otherwise ``auto``
  (Codex's default path), with the evidence in ``meta``.
* A ``reasoning`` item's ``encrypted_content`` that is no encrypted blob — a placeholder such as the
  ``REDACTED`` a checkpoint tool writes over it (Entire does, in 0.142.x rollouts it commits) — is not
  imported as one (Codex's estimate of a blob is its length): the item stays, an encrypted Reasoning
  part with no text, so the model call it belongs to is kept (``meta["reasoning_redacted"]``, warned).
  A real blob is a Fernet token (``gAAAAA…``, at least 100 base64 characters: 73 bytes of version,
  timestamp, IV, one cipher block and HMAC).
* Message ids are ``m<N>``: rollout items carry no ids.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from compbench.data.formats.child_sessions import codex_child
from compbench.data.formats.jsonio import as_text, iter_jsonl
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

NAME = "codex"
KNOWN_RECORDS = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})
# Initial context Codex injects as user messages (codex-rs/core: environment_context.rs, project_doc.rs).
PREFIX_MARKS = ("# AGENTS.md instructions", "<environment_context>", "<user_instructions>")
MANUAL_COMMAND = "/compact"  # the TUI slash command that runs a compaction by hand
TURN_STARTED = frozenset({"task_started", "turn_started"})  # event_msg types that open a turn
TURN_ENDED = frozenset({"task_complete", "turn_complete", "turn_aborted"})  # ... and that close it
BLOB_MIN_CHARS = 100  # the shortest Fernet token in base64 (73 bytes)
BLOB_RE = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")
COMPACT_TASK = "a turn of its own: no user input and no model call before or after it (Codex's /compact task)"


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """A rollout opens with its ``session_meta`` record (``{timestamp, type, payload}``)."""
    return first is not None and first.get("type") == "session_meta" and isinstance(first.get("payload"), dict)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


def _image(item: dict[str, Any]) -> Media:
    """An ``input_image`` item: a ``data:`` URL decoded to bytes, any other URL kept by name."""
    raw = item.get("image_url")
    url = raw if isinstance(raw, str) else ""
    if url.startswith("data:") and ";base64," in url:
        head, _, data = url.partition(";base64,")
        try:
            return Media("image", head[5:], base64.b64decode(data, validate=True))
        except (binascii.Error, ValueError):
            return Media("image", head[5:])
    return Media("image", name=url)


class _Builder:
    """Assembles messages; holds the model call being built until an input item or its usage closes it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.messages: list[Message] = []
        self.open: list[Part] | None = None  # parts of the model call being assembled
        self.open_line = 0
        self.calls: dict[str, str] = {}
        self.warnings: list[str] = []
        self.unknown_items: Counter[str] = Counter()
        self.last_total = 0  # input + output of the last recorded call
        self.last_input = ""  # text of the last user input, for the /compact check
        self.replay: list[tuple[str, str]] = []  # replacement history a rollout may re-emit after compaction
        self.replayed = 0
        self.compactions: list[RecordedCompaction] = []
        self.turn_start: int | None = None  # messages imported when the current turn began (None: no turn events)
        self.compact_only: int | None = None  # a compaction alone in its turn so far, awaiting the turn's end
        self.redacted = 0  # reasoning items whose encrypted_content is a placeholder

    def turn_started(self) -> None:
        self.turn_ended()  # a turn that never recorded its end ended here
        self.turn_start = len(self.messages)

    def turn_ended(self) -> None:
        """The turn's model call is over; a compaction that stayed alone in its turn was Codex's /compact task."""
        self.close()
        if self.compact_only is not None:
            c = self.compactions[self.compact_only]
            self.compactions[self.compact_only] = replace(c, trigger="manual", meta={
                **c.meta, "trigger_evidence": COMPACT_TASK})
        self.compact_only = None
        self.turn_start = None

    def went_on(self) -> None:
        """The turn of a compaction alone in it so far went on (a prompt, a model call): a pre-turn auto one."""
        if self.compact_only is not None:
            c = self.compactions[self.compact_only]
            self.compactions[self.compact_only] = replace(c, meta={
                **c.meta, "trigger_evidence": "at the start of a turn that went on with the user's prompt "
                                              "(Codex's pre-turn auto compaction)"})
        self.compact_only = None

    def close(self, usage: Usage | None = None) -> None:
        if self.open is not None:
            self.messages.append(Message(f"m{len(self.messages)}", "assistant", tuple(self.open), usage,
                                         {"line": self.open_line}))
        self.open = None

    def output(self, line: int, part: Part) -> None:
        self.replay = []
        self.went_on()
        if self.open is None:
            self.open, self.open_line = [], line
        self.open.append(part)

    def add(self, role: str, parts: tuple[Part, ...], meta: dict[str, Any]) -> None:
        self.close()
        self.messages.append(Message(f"m{len(self.messages)}", "tool" if role == "tool" else "user" if role == "user"
                                     else "system", parts, None, meta))

    def usage(self, u: Usage) -> None:
        """A new call's usage: the open call's, or the last call's if an input item closed it first."""
        self.last_total = u.total
        if self.open is not None:
            self.close(u)
            return
        for i in range(len(self.messages) - 1, -1, -1):
            m = self.messages[i]
            if m.role == "assistant":
                if m.usage is None:
                    self.messages[i] = Message(m.id, m.role, m.parts, u, m.meta)
                return
            if m.role == "user":
                return  # a new turn began: this count belongs to no imported call


def _message(b: _Builder, line: int, p: dict[str, Any]) -> None:
    role = p.get("role")
    content = p.get("content")
    if not isinstance(content, (list, str)):
        raise TranscriptError(b.path, line, "a message 'content' list")
    text = _text(content)
    if role == "assistant":
        b.output(line, Text(text))
        return
    if role not in ("user", "developer", "system"):
        raise TranscriptError(b.path, line, f"a message role user|assistant|developer|system, found {role!r}")
    if b.replay and b.replay[0] == (str(role), text):
        b.replay.pop(0)  # history re-emitted after a compaction: already imported
        b.replayed += 1
        return
    b.replay = []
    media = [_image(c) for c in content if isinstance(c, dict) and c.get("type") == "input_image"]
    meta: dict[str, Any] = {"line": line}
    if text.lstrip().startswith(PREFIX_MARKS):
        meta["session_prefix"] = True  # Codex's initial context, not a user request
    elif role == "user":
        b.last_input = text
        b.went_on()
    b.add("user" if role == "user" else "system", (Text(text), *media), meta)


def _response_item(b: _Builder, line: int, p: dict[str, Any]) -> None:
    t = p.get("type")
    if not isinstance(t, str):
        t = f"<{type(t).__name__}>"
    if t == "message":
        _message(b, line, p)
    elif t == "reasoning":
        summary = p.get("summary")
        text = "\n".join(s["text"] for s in summary if isinstance(s, dict) and isinstance(s.get("text"), str)) \
            if isinstance(summary, list) else ""
        if text:
            b.output(line, Reasoning(text))
        blob = p.get("encrypted_content")
        if isinstance(blob, str) and blob:
            if len(blob) >= BLOB_MIN_CHARS and BLOB_RE.fullmatch(blob):
                b.output(line, Reasoning(blob, encrypted=True))
            else:  # a placeholder where the blob was: the call still made it, its size is unknown
                b.output(line, Reasoning("", encrypted=True))
                b.redacted += 1
    elif t in CALL_ITEMS:
        cid = p.get("call_id") or p.get("id")
        if not isinstance(cid, str):
            raise TranscriptError(b.path, line, f"a {t} with a string 'call_id'")
        name = p.get("name") if isinstance(p.get("name"), str) else "local_shell" if t == "local_shell_call" else ""
        args = p.get("arguments") if t == "function_call" else p.get("input") if t == "custom_tool_call" else p.get(
            "action")
        if t == "function_call" and not isinstance(args, str):
            raise TranscriptError(b.path, line, "a function_call with string 'arguments'")
        b.calls[cid] = str(name)
        b.output(line, ToolCall(cid, str(name), args if isinstance(args, str) else json.dumps(args)))
    elif t == "web_search_call":
        b.output(line, ToolCall(str(p.get("id") or f"ws{line}"), "web_search", json.dumps(p.get("action"))))
    elif t in OUTPUT_ITEMS:
        _tool_output(b, line, p)
    elif t == "ghost_snapshot":
        return  # a git snapshot for /undo: never sent to the model
    else:
        b.unknown_items[str(t)] += 1


def _tool_output(b: _Builder, line: int, p: dict[str, Any]) -> None:
    cid = p.get("call_id")
    if not isinstance(cid, str):
        raise TranscriptError(b.path, line, f"a {p.get('type')} with a string 'call_id'")
    out = p.get("output")
    is_error = False
    if isinstance(out, dict):  # FunctionCallOutputPayload serialized whole: {content, success}
        is_error = out.get("success") is False
        out = out.get("content", out)
    media: list[Part] = []
    if isinstance(out, list):  # content items: text and images
        media = [_image(x) for x in out if isinstance(x, dict) and x.get("type") == "input_image"]
        out = [x for x in out if not (isinstance(x, dict) and x.get("type") == "input_image")]
    orphan = cid not in b.calls
    if orphan:
        b.warnings.append(f"line {line}: tool output {cid} has no matching call (kept, flagged orphan)")
    result = ToolResult(cid, b.calls.get(cid, ""), as_text(out), is_error, orphan)
    b.add("tool", (result, *media), {"line": line})


def _token_count(b: _Builder, line: int, p: dict[str, Any], prev_total: list[str], meta: dict[str, Any]) -> None:
    info = p.get("info")
    if not isinstance(info, dict):
        return  # written before the first response: no usage yet
    if isinstance(info.get("model_context_window"), int):
        meta.setdefault("model_context_window", info["model_context_window"])
    total = json.dumps(info.get("total_token_usage"), sort_keys=True)
    repeated = total == prev_total[0]
    prev_total[0] = total
    u = info.get("last_token_usage")
    if repeated or not isinstance(u, dict):
        return
    fields = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")
    vals = [u.get(k, 0) for k in fields]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        raise TranscriptError(b.path, line, "token_count usage fields as integers")
    if vals[0] > 0:
        b.usage(Usage(input=vals[0], output=vals[2], cache_read=vals[1], reasoning=vals[3]))


def _compacted(b: _Builder, line: int, p: dict[str, Any]) -> None:
    mid_turn = b.open is not None or (bool(b.messages) and b.messages[-1].role == "tool")
    b.close()
    raw = p.get("replacement_history")
    history = [x for x in raw if isinstance(x, dict)] if isinstance(raw, list) else []
    kept_texts = {_text(x.get("content")) for x in history if x.get("type") == "message" and x.get("role") == "user"}
    kept = tuple(m.id for m in b.messages if m.role == "user" and not m.meta.get("compaction")
                 and m.text in kept_texts)
    raw_summary = p.get("message")
    summary = raw_summary if isinstance(raw_summary, str) else ""
    encrypted = not summary and any(x.get("type") == "compaction" for x in history)
    trigger: Literal["auto", "manual"]
    if mid_turn:
        trigger, evidence = "auto", "inside a turn (after a tool output or a model call)"
    elif b.last_input.strip().startswith(MANUAL_COMMAND):
        trigger, evidence = "manual", f"the user's last input was {MANUAL_COMMAND}"
    else:
        trigger, evidence = "auto", "between turns, no /compact input recorded (Codex's default path assumed)"
    b.replay = [(str(x.get("role")), _text(x.get("content"))) for x in history
                if x.get("type") == "message" and x.get("role") in ("user", "developer", "system")]
    if trigger == "auto" and not mid_turn and b.turn_start == len(b.messages):
        b.compact_only = len(b.compactions)  # nothing else in its turn yet: decided when the turn goes on or ends
        evidence = "at the start of a turn the log ends in (no user input or model call after it)"
    meta: dict[str, Any] = {"line": line, "encrypted": encrypted, "replacement_items": len(history),
                            "trigger_evidence": evidence}
    # the new history's messages that are no kept message (the developer instructions and the initial context
    # Codex puts back): the recorded row inserts them, as the tool sent them
    imported = {m.text for m in b.messages if m.role == "user" and not m.meta.get("compaction")}
    added = [[str(x.get("role")), _text(x.get("content"))] for x in history if x.get("type") == "message"
             and (x.get("role") in ("developer", "system")
                  or (x.get("role") == "user" and _text(x.get("content")) not in imported))]
    if added:
        meta["replacement"] = added
    blobs = [x.get("encrypted_content") for x in history if x.get("type") == "compaction"]
    if encrypted and blobs and all(isinstance(x, str) for x in blobs):
        meta["encrypted_chars"] = sum(len(x) for x in blobs if isinstance(x, str))  # sized as Codex sizes it
    b.compactions.append(RecordedCompaction(index=len(b.messages), tool=NAME, trigger=trigger,
                                            tokens_before=b.last_total or None, summary=summary, kept_ids=kept,
                                            meta=meta))


def read(path: Path) -> Iterator[Transcript]:
    b = _Builder(path)
    meta: dict[str, Any] = {"path": str(path)}
    unknown: Counter[str] = Counter()
    prev_total = [""]
    sid = None
    for line, r in iter_jsonl(path):
        t, p = r.get("type"), r.get("payload")
        if not isinstance(t, str):
            t = f"<{type(t).__name__}>"  # not a string: an unknown record type
        if t not in KNOWN_RECORDS:
            unknown[str(t)] += 1
            continue
        if not isinstance(p, dict):
            raise TranscriptError(path, line, f"a {t} record with a 'payload' object")
        if t == "session_meta":
            sid = sid or p.get("id")
            for k, mk in (("cwd", "cwd"), ("cli_version", "tool_version"), ("timestamp", "started_at"),
                          ("model_provider", "provider"), ("originator", "originator")):
                if isinstance(p.get(k), str):
                    meta.setdefault(mk, p[k])
            if sid == p.get("id"):  # a spawned agent's rollout names its parent (the first session_meta)
                for k, v in codex_child(p).items():
                    meta.setdefault(k, v)
            if isinstance(p.get("instructions"), str) and p["instructions"]:
                meta["instructions_chars"] = len(p["instructions"])
        elif t == "turn_context":
            if isinstance(p.get("model"), str):
                meta.setdefault("model", p["model"])
        elif t == "response_item":
            _response_item(b, line, p)
        elif t == "event_msg":
            kind = p.get("type")
            kind = kind if isinstance(kind, str) else ""  # not a string: an event we do not know
            if kind == "token_count":
                _token_count(b, line, p, prev_total, meta)
            elif kind == "user_message" and isinstance(p.get("message"), str):
                b.last_input = p["message"]  # /compact appears here only: it is a command, not history
            elif kind in TURN_STARTED:
                b.turn_started()
            elif kind in TURN_ENDED:
                b.turn_ended()
        else:
            _compacted(b, line, p)
    b.close()
    if not b.messages:
        raise TranscriptError(path, None, "at least one response_item message")
    for kind, n in sorted(unknown.items()):
        b.warnings.append(f"skipped {n} records of unknown type {kind!r}")
    for kind, n in sorted(b.unknown_items.items()):
        b.warnings.append(f"skipped {n} response items of unknown type {kind!r}")
    if b.redacted:
        meta["reasoning_redacted"] = b.redacted
        b.warnings.append(f"{b.redacted} reasoning items' encrypted_content is a placeholder, not an encrypted blob "
                          "(redacted): imported without the blob")
    meta["session_id"] = sid
    if b.replayed:
        meta["replayed_items_skipped"] = b.replayed
    yield Transcript(str(sid or path.stem), NAME, tuple(b.messages), meta, tuple(b.compactions), tuple(b.warnings))
