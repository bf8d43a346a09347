"""``compbench.data.formats.codex`` — Codex CLI rollout JSONL (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``;
followed: CLI 0.72–0.77, 0.140–0.142.5 and 0.144 code mode; 0.147's remote v2 from its source).

Records ``{timestamp, type, payload}`` (``RolloutItem`` in codex-rs/protocol): ``session_meta`` (id, cwd,
cli_version, instructions), ``turn_context`` (model, policies), ``response_item`` (the model-visible
history: ``message`` with role user/assistant/developer, ``reasoning`` with ``encrypted_content``,
``function_call`` / ``function_call_output``, ``custom_tool_call`` / ``custom_tool_call_output``,
``local_shell_call``, ``web_search_call``, ``ghost_snapshot``), ``event_msg`` (``token_count`` and UI
echoes: ``user_message`` / ``agent_message`` duplicate response items and are not imported) and
``compacted`` (``message`` = the summary, empty when the compaction ran remotely and the summary is
encrypted; ``replacement_history`` = the new history, which names the user messages Codex kept:
:mod:`.codex_compacted`), and from 0.144 ``world_state``.

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
* Code mode (0.144, ``tool_mode: code_mode_only`` models): a ``custom_tool_call`` named ``exec`` is imported as
  written (its JavaScript is what the model wrote and is counted), its output from the ``custom_tool_call_output``
  parts; the tool calls the script makes are listed in the call's message ``meta["inner_calls"]``
  (:mod:`.codex_exec`), which the working set reads as the plain calls they stand for.
* ``world_state`` (0.144; ``WorldStateSnapshot``, codex-rs/core/src/context/world_state/mod.rs at 0b755b19,
  written by session/world_state.rs at 137985bf): the "compact comparison state" of each model-visible
  section, written at the session's start and after each compaction, that Codex diffs the next context update
  against. What the model is sent of it is rendered as the messages the rollout records (AGENTS.md as a user
  message, the developer instructions; after a compaction, inside the replacement history), and Codex's own
  estimate of the new history leaves it out (the zero-input ``token_count`` after a compaction: base
  instructions + the history's items): no message is made of it; ``meta["world_states"]`` counts them.
* ``event_msg`` ``context_compacted`` follows its ``compacted`` record after whatever was written with it (one
  record in 0.77, three in 0.142, four in 0.144: ``world_state``, ``turn_context``, the estimate): each is paired
  with the oldest compaction still without one (``meta["event_line"]``); one with none before it is warned.
  The zero-input count right after a compaction is Codex's estimate of the new history (``estimate_after``).
* ``thread_settings_applied`` (0.144) gives the model, provider and reasoning effort where ``turn_context`` lacks
  them. The ``model_context_window`` of ``task_started`` and ``token_count`` can change mid-session (the catalogue
  is the server's): every value is listed (``model_context_windows``) and each compaction keeps the one in force.
* Remote compaction v2 (0.147+): a ``compaction_trigger`` response item marks the request (its compaction is
  ``meta["remote"] = "v2"``); a ``compaction`` item after it with no ``compacted`` record is made a compaction.
* Message ids are ``m<N>``: rollout items carry no ids.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compbench.data.formats import codex_exec
from compbench.data.formats.child_sessions import codex_child
from compbench.data.formats.codex_builder import INNER_CALLS, TOOL, Builder, image, is_blob
from compbench.data.formats.codex_compacted import (
    compacted,
    compaction_item,
    context_compacted,
    estimate_after,
    text_of,
)
from compbench.data.formats.jsonio import as_text, iter_jsonl
from compbench.data.transcript import (
    Part,
    Reasoning,
    Text,
    ToolCall,
    ToolResult,
    Transcript,
    Usage,
)
from compbench.errors import TranscriptError

NAME = TOOL
KNOWN_RECORDS = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted", "world_state"})
CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})
# Initial context Codex injects as user messages (codex-rs/core: environment_context.rs, project_doc.rs).
PREFIX_MARKS = ("# AGENTS.md instructions", "<environment_context>", "<user_instructions>")
TURN_STARTED = frozenset({"task_started", "turn_started"})  # event_msg types that open a turn
TURN_ENDED = frozenset({"task_complete", "turn_complete", "turn_aborted"})  # ... and that close it
# response items that are no history the model is sent: a remote v2 compaction's request marker (the compaction
# follows), the item a compaction's output is (inside a compacted record's history), a UI marker of one
COMPACTION_ITEMS = frozenset({"compaction_trigger", "compaction", "context_compaction"})


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """A rollout opens with its ``session_meta`` record (``{timestamp, type, payload}``)."""
    return first is not None and first.get("type") == "session_meta" and isinstance(first.get("payload"), dict)


def _message(b: Builder, line: int, p: dict[str, Any]) -> None:
    role = p.get("role")
    content = p.get("content")
    if not isinstance(content, (list, str)):
        raise TranscriptError(b.path, line, "a message 'content' list")
    text = text_of(content)
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
    media = [image(c) for c in content if isinstance(c, dict) and c.get("type") == "input_image"]
    meta: dict[str, Any] = {"line": line}
    if text.lstrip().startswith(PREFIX_MARKS):
        meta["session_prefix"] = True  # Codex's initial context, not a user request
    elif role == "user":
        b.last_input = text
        b.went_on()
    b.add("user" if role == "user" else "system", (Text(text), *media), meta)


def _response_item(b: Builder, line: int, p: dict[str, Any]) -> None:
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
            if is_blob(blob):
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
        if t == "custom_tool_call" and name == codex_exec.NAME and isinstance(args, str):
            made = codex_exec.inner_calls(args)  # code mode: the calls the script makes, for the working set
            if made:
                b.inner[cid] = [[c.name, c.args] for c in made]
    elif t == "web_search_call":
        b.output(line, ToolCall(str(p.get("id") or f"ws{line}"), "web_search", json.dumps(p.get("action"))))
    elif t in OUTPUT_ITEMS:
        _tool_output(b, line, p)
    elif t == "ghost_snapshot":
        return  # a git snapshot for /undo: never sent to the model
    elif t in COMPACTION_ITEMS:
        compaction_item(b, line, p, t)
    else:
        b.unknown_items[str(t)] += 1


def _tool_output(b: Builder, line: int, p: dict[str, Any]) -> None:
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
        media = [image(x) for x in out if isinstance(x, dict) and x.get("type") == "input_image"]
        out = [x for x in out if not (isinstance(x, dict) and x.get("type") == "input_image")]
    orphan = cid not in b.calls
    if orphan:
        b.warnings.append(f"line {line}: tool output {cid} has no matching call (kept, flagged orphan)")
    result = ToolResult(cid, b.calls.get(cid, ""), as_text(out), is_error, orphan)
    meta: dict[str, Any] = {"line": line}
    if not media:  # the item's size as Codex serializes it (its estimate of an item; images are estimated apart)
        meta["wire_bytes"] = len(json.dumps(p, ensure_ascii=False, separators=(",", ":")).encode())
    b.add("tool", (result, *media), meta)


def _token_count(b: Builder, line: int, p: dict[str, Any], prev_total: list[str]) -> None:
    info = p.get("info")
    if not isinstance(info, dict):
        return  # written before the first response: no usage yet
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


def _window(b: Builder, value: Any, meta: dict[str, Any]) -> None:
    """A recorded ``model_context_window`` (``task_started``, ``token_count``): the one in force from here. The
    catalogue behind it is fetched from the server, so one session can record two (353,400, then 258,400)."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        b.window = value
        meta.setdefault("model_context_window", value)
        seen = meta.setdefault("model_context_windows", [])
        if value not in seen:
            seen.append(value)


def _event(b: Builder, line: int, p: dict[str, Any], prev_total: list[str], meta: dict[str, Any]) -> None:
    kind = p.get("type")
    kind = kind if isinstance(kind, str) else ""  # not a string: an event we do not know
    if kind == "token_count":
        info = p.get("info")
        if isinstance(info, dict):
            _window(b, info.get("model_context_window"), meta)
        estimate_after(b, p)
        _token_count(b, line, p, prev_total)
    elif kind == "user_message" and isinstance(p.get("message"), str):
        b.last_input = p["message"]  # /compact appears here only: it is a command, not history
    elif kind in TURN_STARTED:
        _window(b, p.get("model_context_window"), meta)
        b.turn_started()
    elif kind in TURN_ENDED:
        b.turn_ended()
    elif kind == "context_compacted":
        context_compacted(b, line)
    elif kind == "thread_settings_applied":  # 0.144+: the thread's settings, written at each turn and compaction
        settings = p.get("thread_settings")
        if isinstance(settings, dict):
            for k, mk in (("model", "model"), ("model_provider_id", "provider"), ("reasoning_effort", "effort")):
                if isinstance(settings.get(k), str):
                    meta.setdefault(mk, settings[k])


def read(path: Path) -> Iterator[Transcript]:
    b = Builder(path)
    meta: dict[str, Any] = {"path": str(path)}
    unknown: Counter[str] = Counter()
    prev_total = [""]
    sid = None
    world_states = 0
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
            _event(b, line, p, prev_total, meta)
        elif t == "world_state":
            world_states += 1  # the baseline Codex diffs the next context update against: no model input
        else:
            compacted(b, line, p)
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
    if b.stray_events:
        b.warnings.append(f"{b.stray_events} context_compacted events follow no compacted record (no compaction "
                          "made of them)")
    if world_states:
        meta["world_states"] = world_states
    inner = sum(len(v) for m in b.messages for v in (m.meta.get(INNER_CALLS) or {}).values())
    if inner:
        meta["exec_inner_calls"] = inner
    meta["session_id"] = sid
    if b.replayed:
        meta["replayed_items_skipped"] = b.replayed
    yield Transcript(str(sid or path.stem), NAME, tuple(b.messages), meta, tuple(b.compactions), tuple(b.warnings))
