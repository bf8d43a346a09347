"""``compbench.data.formats.goose_messages`` — Goose's ``Message`` objects as transcript messages, and the compactions
they record; shared by Goose's session store (``goose_db``), its legacy JSONL and JSON export
(``goose_session``).

Read against block/goose 9a91fccfb5d7 (February 2026): ``crates/goose/src/conversation/message.rs``
(``{id?, role, created, content: [{type, …}], metadata: {userVisible, agentVisible}}``; content types
``text``, ``image``, ``toolRequest`` ``{id, toolCall: {status, value: {name, arguments}} | {status, error}}``,
``toolResponse`` ``{id, toolResult: {status, value: {content, isError} | [content]} | {status, error}}``,
``thinking``, ``redactedThinking``, ``reasoning``, ``frontendToolRequest``, and the UI's
``systemNotification``, ``toolConfirmationRequest``, ``actionRequired``, ``conversationCompacted``) and
``crates/goose/src/context_mgmt/mod.rs`` (what a compaction leaves behind).

* **Roles.** A user message of tool responses is a ``tool`` message (its text, if any, a user message after
  it). Goose stores each tool call of a reply as its own assistant message, each followed by its result, all
  made in the same second: such a run is joined back into one call (one assistant message, one tool message),
  a heuristic on ``created`` that compbench's one-message-per-call model needs.
* **Compactions** (``compact_messages``, since October 2025): the old messages are flipped agent-invisible
  and kept; an agent-only user message holds the summary, an agent-only assistant message the continuation
  text ("Your context was compacted…"; "…at the user's request" for ``/compact``: ``trigger="manual"``;
  before February 2026 "The previous message contains a summary that was prepared…"), then a copy of the
  last user text (``kept_ids``: the message it copies). These messages are marked ``compaction`` (the
  replay's strategy compacts by itself). October 2025's also left a ``conversationCompacted`` marker.
* **Tool-pair summaries** (January–February 2026, and again later): an agent-only user message with no
  continuation after it replaces one old tool call and its result, which are flipped agent-invisible. Marked
  ``compaction="tool-pair"`` and counted in the meta (``tool_pair_summaries``); not a recorded compaction.
* **Usage** is per session only (the last call's and running totals): ``meta["session_usage"]``.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

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

CONTINUATIONS = ("Your context was compacted", "The previous message contains a summary that was prepared")
MANUAL = ("Your context was compacted at the user's request", "The previous message contains a summary that was "
          "prepared at the user's request")
UI_ONLY = frozenset({"systemNotification", "toolConfirmationRequest", "actionRequired", "conversationCompacted",
                     "summarizationRequested", "contextLengthExceeded"})
USAGE_NOTE = ("per session only: Goose keeps the last call's tokens and running totals per session, no per-call "
              "usage")
Fail = Callable[[str, str], Exception]  # (where, expected) -> the error to raise
# a session's token counters, in both stores (the database's columns, the session file's keys)
TOKENS = ("total_tokens", "input_tokens", "output_tokens", "accumulated_total_tokens", "accumulated_input_tokens",
          "accumulated_output_tokens")


def describe(meta: dict[str, Any], info: Mapping[str, Any], config: Any) -> None:
    """Add what both Goose stores record of a session: its title, and from its model configuration and
    counters the model, its context limit and the session's usage."""
    title = info.get("name") or info.get("description")
    if isinstance(title, str) and title:
        meta["title"] = title
    meta.update(model_meta(info, config))


def model_meta(info: Mapping[str, Any], config: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(config, dict):
        if isinstance(config.get("model_name"), str):
            out["model"] = config["model_name"]
        limit = config.get("context_limit")
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            out["context_window"] = limit
        fast = config.get("fast_model_config")  # ModelConfig.fast_model_config: the model of complete_fast
        if isinstance(fast, dict) and isinstance(fast.get("model_name"), str) and fast["model_name"]:
            out["fast_model"] = fast["model_name"]
    usage = {k: info[k] for k in TOKENS if isinstance(info.get(k), int) and not isinstance(info.get(k), bool)}
    if usage:
        out["session_usage"] = usage
    return out


@dataclass(frozen=True)
class Raw:
    """One stored Goose message, checked: where it is (for errors), and its parts."""

    id: str
    role: str
    created: int
    content: tuple[Mapping[str, Any], ...]
    user_visible: bool
    agent_visible: bool
    where: str


def raw(d: Any, where: str, default_id: str, fail: Fail) -> Raw:
    """A stored ``Message`` (a dict), or the error naming where it is and what was expected."""
    if not isinstance(d, dict) or d.get("role") not in ("user", "assistant") or not isinstance(d.get("content"), list):
        raise fail(where, "a Goose message: role user|assistant and a 'content' list")
    created = d.get("created", 0)
    if isinstance(created, bool) or not isinstance(created, int):
        raise fail(where, "an integer 'created' time")
    meta: dict[str, Any] = d["metadata"] if isinstance(d.get("metadata"), dict) else {}
    content: list[Mapping[str, Any]] = []
    for c in d["content"]:
        if not isinstance(c, dict) or not isinstance(c.get("type"), str):
            raise fail(where, "content items with a string 'type'")
        content.append(c)
    mid = d["id"] if isinstance(d.get("id"), str) and d["id"] else default_id
    return Raw(mid, d["role"], created, tuple(content), meta.get("userVisible", True) is not False,
               meta.get("agentVisible", True) is not False, where)


def _text(c: Mapping[str, Any]) -> str:
    return c["text"] if isinstance(c.get("text"), str) else ""


def _for_model(item: Any) -> bool:
    """MCP content the model reads: not one annotated for the user's eyes only."""
    ann = item.get("annotations") if isinstance(item, dict) else None
    audience = ann.get("audience") if isinstance(ann, dict) else None
    return not isinstance(audience, list) or "assistant" in audience


def _result(c: Mapping[str, Any], names: Mapping[str, str], r: Raw, fail: Fail) -> ToolResult:
    call = c.get("id") if isinstance(c.get("id"), str) else ""
    res = c.get("toolResult")
    if not call or not isinstance(res, dict):
        raise fail(r.where, "a toolResponse with a string 'id' and a 'toolResult' object")
    if res.get("status") == "error":
        return ToolResult(call, names.get(call, ""), str(res.get("error", "")), is_error=True)
    value = res.get("value")
    items = value.get("content") if isinstance(value, dict) else value
    if not isinstance(items, list):
        raise fail(r.where, "a toolResult value with a 'content' list")
    texts = [i["text"] for i in items if isinstance(i, dict) and isinstance(i.get("text"), str) and _for_model(i)]
    error = isinstance(value, dict) and value.get("isError") is True
    return ToolResult(call, names.get(call, ""), "\n".join(texts), is_error=error)


def _call(c: Mapping[str, Any], key: str, r: Raw, fail: Fail) -> ToolCall:
    call = c.get("id") if isinstance(c.get("id"), str) else ""
    req = c.get(key)
    if not call or not isinstance(req, dict):
        raise fail(r.where, f"a tool request with a string 'id' and a '{key}' object")
    value = req.get("value")
    if req.get("status") == "success" and isinstance(value, dict) and isinstance(value.get("name"), str):
        args = value.get("arguments")
        return ToolCall(call, value["name"], json.dumps(args if args is not None else {}, ensure_ascii=False))
    return ToolCall(call, "", json.dumps({"error": str(req.get("error", ""))}, ensure_ascii=False))


def parts(r: Raw, names: dict[str, str], fail: Fail, skipped: dict[str, int]) -> tuple[list[Part], list[Part]]:
    """The message's model-visible parts, and (for a user message) its tool results apart."""
    out: list[Part] = []
    results: list[Part] = []
    for c in r.content:
        kind = c["type"]
        if kind == "text":
            out.append(Text(_text(c)))
        elif kind == "image":
            try:
                data = base64.b64decode(str(c.get("data", "")), validate=True)
            except (binascii.Error, ValueError):
                data = b""
            out.append(Media("image", str(c.get("mimeType", "")), data))
        elif kind in ("toolRequest", "frontendToolRequest"):
            call = _call(c, "toolCall", r, fail)
            names[call.id] = call.name
            out.append(call)
        elif kind == "toolResponse":
            results.append(_result(c, names, r, fail))
        elif kind in ("thinking", "reasoning"):
            text = c.get("thinking") if kind == "thinking" else c.get("text")
            if isinstance(text, str) and text:
                out.append(Reasoning(text))
        elif kind == "redactedThinking":
            out.append(Reasoning(str(c.get("data", "")), encrypted=True))
        elif kind not in UI_ONLY:
            skipped[kind] = skipped.get(kind, 0) + 1
    return out, results


def _kind(msgs: Sequence[Raw], i: int) -> str:
    """What Goose's context management made of message ``i`` ('' for an ordinary message)."""
    r = msgs[i]
    if any(c["type"] == "conversationCompacted" for c in r.content):
        return "marker"
    nxt = msgs[i + 1] if i + 1 < len(msgs) else None
    if r.role == "user" and not r.user_visible and r.agent_visible:
        if nxt is not None and nxt.role == "assistant" and not nxt.user_visible and _continuation(nxt):
            return "summary"
        return "tool-pair"
    if r.role == "assistant" and not r.user_visible and _continuation(r):
        return "continue"
    return ""


def _continuation(r: Raw) -> bool:
    return any(_text(c).startswith(CONTINUATIONS) for c in r.content if c["type"] == "text")


def build(sid: str, stored: Sequence[Raw], meta: dict[str, Any], fail: Fail) -> Transcript:
    """The transcript of one session's stored messages (in store order)."""
    messages: list[Message] = []
    names: dict[str, str] = {}
    skipped: dict[str, int] = {}
    last_prompt: tuple[str, str] | None = None  # (message id, text) of the latest user text message
    copying: tuple[str, str] | None = None  # after a continuation: the prompt whose copy may follow
    for i, r in enumerate(stored):
        kind = _kind(stored, i)
        body, results = parts(r, names, fail, skipped)
        extra: dict[str, Any] = {"created": r.created}
        if not r.agent_visible:
            extra["goose_agent_visible"] = False
        if kind:
            extra["compaction"] = kind
        text = "\n".join(p.text for p in body if isinstance(p, Text))
        if kind == "continue":
            manual = any(_text(c).startswith(MANUAL) for c in r.content if c["type"] == "text")
            extra["goose_continuation"] = "manual" if manual else "auto"
            copying = None if manual else last_prompt
        elif copying is not None and r.role == "user" and not results and text == copying[1] and body:
            extra.update(compaction="continue", copies=copying[0])
            copying = None
        elif not kind:
            copying = None
        if results:
            messages.append(Message(r.id, "tool", tuple(results), None, extra))
            if body:
                messages.append(Message(f"{r.id}:text", "user", tuple(body), None, extra))
        else:
            messages.append(Message(r.id, r.role, tuple(body), None, extra))  # type: ignore[arg-type]
        if r.role == "user" and not results and not kind and body and all(isinstance(p, Text) for p in body):
            last_prompt = (r.id, text)
    messages = _join_calls(messages)
    compactions = []
    for k, m in enumerate(messages):
        how = m.meta.get("goose_continuation")
        if how is None:
            continue
        summary = next((x for x in reversed(messages[:k]) if x.meta.get("compaction") == "summary"), None)
        copy = messages[k + 1] if k + 1 < len(messages) and messages[k + 1].meta.get("copies") else None
        compactions.append(RecordedCompaction(
            index=k + (2 if copy else 1), tool="goose", trigger="manual" if how == "manual" else "auto",
            summary=summary.text if summary else "", summary_id=summary.id if summary else "",
            kept_ids=(str(copy.meta["copies"]),) if copy else ()))
    warnings = [f"skipped {n} content item{'s' * (n != 1)} of unknown type {k!r}" for k, n in sorted(skipped.items())]
    pairs = sum(1 for m in messages if m.meta.get("compaction") == "tool-pair")
    if pairs:
        meta["tool_pair_summaries"] = pairs
    if not messages:
        warnings.append("the session has no messages")
    return Transcript(sid, "goose", tuple(messages), meta, tuple(compactions), tuple(warnings))


def _join_calls(messages: list[Message]) -> list[Message]:
    """Goose's one-message-per-tool-call run, made by one reply in one second, back into one call (see above)."""

    def same_call(first: Message, m: Message) -> bool:
        return (m.role == "assistant" and not m.meta.get("compaction") and bool(m.parts)
                and m.meta.get("created") == first.meta.get("created")
                and all(isinstance(p, (ToolCall, Reasoning)) for p in m.parts))

    out: list[Message] = []
    i = 0
    while i < len(messages):
        m = messages[i]
        if m.role != "assistant" or m.meta.get("compaction"):
            out.append(m)
            i += 1
            continue
        calls, results = list(m.parts), list[Part]()
        carrier: Message | None = None  # the first result message: it carries them all
        j = i + 1
        while j < len(messages):
            nxt = messages[j]
            if same_call(m, nxt):
                calls += nxt.parts
            elif nxt.role == "tool" and j + 1 < len(messages) and same_call(m, messages[j + 1]):
                results += nxt.parts
                carrier = carrier or nxt
            else:
                break
            j += 1
        if j == i + 1:
            out.append(m)
            i += 1
            continue
        out.append(replace(m, parts=tuple(calls)))
        if j < len(messages) and messages[j].role == "tool":
            results += messages[j].parts
            carrier = carrier or messages[j]
            j += 1
        if carrier is not None:
            out.append(replace(carrier, parts=tuple(results)))
        i = j
    return out
