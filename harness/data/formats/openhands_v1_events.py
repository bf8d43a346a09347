"""``compbench.data.formats.openhands_v1_events`` — OpenHands V1 events as messages: what the software-agent-sdk
sends the model for each event, and the condensations it recorded.

Written from OpenHands/software-agent-sdk @ 611629e (2026-08-22): ``openhands-sdk/openhands/sdk/event/`` (``base.py``
``events_to_messages``, ``llm_convertible/{action,message,observation,system}.py``, ``condenser.py``),
``llm/message.py`` (content, tool calls, thinking blocks), ``llm/utils/metrics.py`` and ``telemetry.py`` (token
usage), ``conversation/state.py`` and ``event_store.py`` (the conversation tree).

* ``SystemPromptEvent``: a system message (the prompt, then its ``dynamic_context``); its tools are the hidden
  overhead (their count and names in ``meta``).
* ``MessageEvent``: a message of its ``llm_message.role``; ``extended_content`` is sent after the content, as
  ``to_llm_message`` does. An agent message is one model call (``llm_response_id``).
* ``ActionEvent``: consecutive actions of one ``llm_response_id`` are one model call (``events_to_messages``):
  one assistant message, the thought of the first as its text, each ``tool_call`` (id, name, the model's
  ``arguments`` string) a ToolCall. Thinking: the Anthropic ``thinking_blocks`` (redacted ones encrypted),
  else ``reasoning_content``, and the Responses reasoning item's summary (its ``encrypted_content`` encrypted).
* ``ObservationEvent`` / ``UserRejectObservation`` / ``AgentErrorEvent``: one tool message each, with the text
  the model is sent (``observation.content`` + ``extended_content``; "Action rejected: <reason>"; the error).
* ``Condensation``: a RecordedCompaction where it was recorded: the messages whose events are all still in
  the view are ``kept_ids``; the summary, its offset and the forgotten events in ``meta``; the condenser
  call's usage (joined by ``llm_response_id``) too. A ``CondensationRequest`` before it (a context-window
  error, or a user's condense) makes its trigger ``unknown`` (``meta["requested"]``); without one it is the
  condenser's own (``auto``). ``tokens_before`` is the last model call's prompt + completion before it.
* Usage is not on the events: ``token_usages`` (base state ``stats.usage_to_metrics``) are joined to the
  messages by response id. ``prompt_tokens`` already includes the cached tokens (litellm's convention;
  ``cache_hit_rate`` in metrics.py), except where cache reads exceed it (ACP reports them apart): added then.
* Other events (state updates, errors, pauses, hooks, ...) carry nothing the model is sent: counted by kind.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compbench.data.formats.jsonio import as_text
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
    Usage,
)
from compbench.errors import TranscriptError

TOOL = "openhands"
ROOT_PARENT_ID = "__root__"  # event/types.py
NOT_TREE_NODES = ("ConversationStateUpdateEvent", "ConversationErrorEvent")  # state.py _resolve_active_leaf
OBSERVATIONS = ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent")
ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant", "system": "system", "tool": "tool"}

Where = Callable[[int], TranscriptError]  # event index -> the error naming its file and line


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """One ``TokenUsage`` record, and the LLM (usage id) that made the call."""

    usage: Usage
    model: str
    usage_id: str
    context_window: int


def to_usage(u: Mapping[str, Any]) -> Usage:
    def n(key: str) -> int:
        v = u.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0

    prompt, read = n("prompt_tokens"), n("cache_read_tokens")
    if read > prompt:  # ACP reports cache reads apart from the prompt (metrics.py cache_hit_rate)
        prompt += read
    return Usage(input=prompt, output=n("completion_tokens"), cache_read=read, cache_write=n("cache_write_tokens"),
                 reasoning=n("reasoning_tokens"))


def usages_of(stats: Any) -> dict[str, TokenUsage]:
    """response id -> usage, from ``stats.usage_to_metrics.*.token_usages``."""
    out: dict[str, TokenUsage] = {}
    metrics = stats.get("usage_to_metrics") if isinstance(stats, dict) else None
    if not isinstance(metrics, dict):
        return out
    for usage_id, m in metrics.items():
        records = m.get("token_usages") if isinstance(m, dict) else None
        for u in records if isinstance(records, list) else ():
            if isinstance(u, dict) and isinstance(u.get("response_id"), str) and u["response_id"]:
                cw = u.get("context_window")
                out[u["response_id"]] = TokenUsage(to_usage(u), str(u.get("model") or m.get("model_name") or ""),
                                                   str(usage_id), cw if isinstance(cw, int) else 0)
    return out


def active_branch(events: Sequence[dict[str, Any]], leaf: str | None) -> tuple[list[dict[str, Any]], int]:
    """The events on the conversation's active branch (``path_to_root(leaf)``), in order, and how many are off
    it. Without any ``parent_id`` the log is one line (a conversation from before the tree)."""
    if not any(isinstance(e.get("parent_id"), str) for e in events):
        return list(events), 0
    by_id = {e["id"]: (i, e) for i, e in enumerate(events)}
    if leaf is None or leaf not in by_id:
        leaf = next((e["id"] for e in reversed(events) if e.get("kind") not in NOT_TREE_NODES), None)
    on: set[int] = set()
    cur = leaf
    while cur is not None and cur in by_id:
        i, e = by_id[cur]
        if i in on:
            break  # a cycle: the tree is damaged; what was walked is kept
        on.add(i)
        parent = e.get("parent_id")
        cur = None if parent == ROOT_PARENT_ID else parent if isinstance(parent, str) else (
            events[i - 1]["id"] if i > 0 else None)
    kept = [e for i, e in enumerate(events) if i in on]
    return kept, sum(1 for i, e in enumerate(events) if i not in on and e.get("kind") not in NOT_TREE_NODES)


def _texts(content: Any) -> tuple[list[str], int]:
    """The text blocks of a content list, and how many image blocks it had."""
    texts: list[str] = []
    images = 0
    for c in content if isinstance(content, list) else ():
        if isinstance(c, dict) and c.get("type") == "image":
            urls = c.get("image_urls")
            images += len(urls) if isinstance(urls, list) else 1
        elif isinstance(c, dict) and isinstance(c.get("text"), str):
            texts.append(c["text"])
        elif isinstance(c, str):
            texts.append(c)
    return texts, images


def _reasoning(ev: Mapping[str, Any]) -> list[Part]:
    parts: list[Part] = []
    blocks = ev.get("thinking_blocks")
    for b in blocks if isinstance(blocks, list) else ():
        if isinstance(b, dict) and isinstance(b.get("thinking"), str) and b["thinking"]:
            parts.append(Reasoning(b["thinking"]))
        elif isinstance(b, dict) and isinstance(b.get("data"), str) and b["data"]:
            parts.append(Reasoning(b["data"], encrypted=True))
    if not parts and isinstance(ev.get("reasoning_content"), str) and ev["reasoning_content"]:
        parts.append(Reasoning(ev["reasoning_content"]))
    item = ev.get("responses_reasoning_item")
    if isinstance(item, dict):
        shown = [s for k in ("summary", "content") for s in (item.get(k) or []) if isinstance(s, str) and s]
        if shown and not parts:
            parts.append(Reasoning("\n".join(shown)))
        if isinstance(item.get("encrypted_content"), str) and item["encrypted_content"]:
            parts.append(Reasoning(item["encrypted_content"], encrypted=True))
    return parts


def message_offset(kept: Sequence[str], events_of: Mapping[str, Sequence[Any]], offset: Any) -> int | None:
    """The summary's place among the kept messages: after those holding the view's first ``offset`` events."""
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        return None
    seen = 0
    for k, mid in enumerate(kept):
        if seen >= offset:
            return k
        seen += len(events_of.get(mid, (mid,)))
    return len(kept)


@dataclass
class Builder:
    """Messages and recorded condensations of one V1 event log, in order."""

    where: Where
    usages: dict[str, TokenUsage]
    messages: list[Message] = field(default_factory=list)
    compactions: list[RecordedCompaction] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)
    events_of: dict[str, tuple[str, ...]] = field(default_factory=dict)  # message id -> its event ids
    forgotten: set[str] = field(default_factory=set)  # events out of the view by now
    batch: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # pending ActionEvents of one response
    requested: int = 0  # CondensationRequests since the last Condensation
    last_call: Usage | None = None
    joined: set[str] = field(default_factory=set)
    tools: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)

    def add(self, i: int, ev: dict[str, Any]) -> None:
        kind = ev.get("kind")
        if not isinstance(kind, str) or not isinstance(ev.get("id"), str) or not ev["id"]:
            raise self.where(i)
        self.kinds[kind] += 1
        if kind == "ActionEvent":
            if self.batch and self.batch[-1][1].get("llm_response_id") != ev.get("llm_response_id"):
                self.flush()
            self.batch.append((i, ev))
            return
        self.flush()
        if kind == "SystemPromptEvent":
            self.system(i, ev)
        elif kind == "MessageEvent":
            self.message(i, ev)
        elif kind in OBSERVATIONS:
            self.observation(i, ev, kind)
        elif kind == "CondensationRequest":
            self.requested += 1
        elif kind == "Condensation":
            self.condensation(i, ev)

    def emit(self, mid: str, role: Role, parts: Sequence[Part], event_ids: Sequence[str], meta: dict[str, Any],
             response_id: Any = None) -> None:
        usage = None
        if isinstance(response_id, str) and response_id in self.usages:
            tu = self.usages[response_id]
            usage, self.last_call = tu.usage, tu.usage
            self.joined.add(response_id)
            if tu.model:
                meta["model"] = tu.model
                if tu.model not in self.models:
                    self.models.append(tu.model)
        if isinstance(response_id, str) and response_id:
            meta["llm_response_id"] = response_id
        self.events_of[mid] = tuple(event_ids)
        self.messages.append(Message(mid, role, tuple(parts), usage, meta))

    # --- the LLM-convertible events ---------------------------------------------------------------------------

    def system(self, i: int, ev: dict[str, Any]) -> None:
        prompt = ev.get("system_prompt")
        if not isinstance(prompt, dict) or not isinstance(prompt.get("text"), str):
            raise self.where(i)
        parts: list[Part] = [Text(prompt["text"])]
        dynamic = ev.get("dynamic_context")
        if isinstance(dynamic, dict) and isinstance(dynamic.get("text"), str) and dynamic["text"]:
            parts.append(Text(dynamic["text"]))
        tools = ev.get("tools")
        names = [str(t.get("name", "")) for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
        self.tools = names
        meta: dict[str, Any] = {"timestamp": ev.get("timestamp"), "tools": len(names)}
        if isinstance(tools, list):
            meta["tools_chars"] = len(json.dumps(tools, ensure_ascii=False))
        self.emit(ev["id"], "system", parts, [ev["id"]], meta)

    def message(self, i: int, ev: dict[str, Any]) -> None:
        msg = ev.get("llm_message")
        raw = msg.get("role") if isinstance(msg, dict) else None
        role = ROLES.get(raw) if isinstance(raw, str) else None
        if role is None or not isinstance(msg, dict):
            raise self.where(i)
        texts, images = _texts(msg.get("content"))
        extended, _ = _texts(ev.get("extended_content"))
        parts: list[Part] = _reasoning(msg) if role == "assistant" else []
        parts += [Text(t) for t in texts + extended if t]
        parts += [Media("image") for _ in range(images)]
        meta: dict[str, Any] = {"timestamp": ev.get("timestamp"), "source": ev.get("source")}
        if ev.get("activated_skills"):
            meta["activated_skills"] = ev["activated_skills"]
        self.emit(ev["id"], role, parts, [ev["id"]], meta, ev.get("llm_response_id") if role == "assistant" else None)

    def flush(self) -> None:
        """The pending ActionEvents of one response: one assistant message."""
        if not self.batch:
            return
        batch, self.batch = self.batch, []
        first = batch[0][1]
        parts: list[Part] = _reasoning(first)
        thought, _ = _texts(first.get("thought"))
        if "".join(thought):
            parts.append(Text("".join(thought)))
        for i, ev in batch:
            call = ev.get("tool_call")
            if isinstance(call, dict) and isinstance(call.get("id"), str) and isinstance(call.get("name"), str):
                args = call.get("arguments")
                parts.append(ToolCall(call["id"], call["name"], args if isinstance(args, str) else json.dumps(args)))
            elif isinstance(ev.get("tool_call_id"), str) and isinstance(ev.get("tool_name"), str):
                action = {k: v for k, v in (ev.get("action") or {}).items() if k != "kind"}
                parts.append(ToolCall(ev["tool_call_id"], ev["tool_name"], json.dumps(action, ensure_ascii=False)))
            else:
                raise self.where(i)
        meta: dict[str, Any] = {"timestamp": first.get("timestamp")}
        summaries = [ev["summary"] for _, ev in batch if isinstance(ev.get("summary"), str) and ev["summary"]]
        if summaries:
            meta["action_summaries"] = summaries
        self.emit(first["id"], "assistant", parts, [ev["id"] for _, ev in batch], meta, first.get("llm_response_id"))

    def observation(self, i: int, ev: dict[str, Any], kind: str) -> None:
        cid, name = ev.get("tool_call_id"), ev.get("tool_name")
        if not isinstance(cid, str) or not isinstance(name, str):
            raise self.where(i)
        error = False
        if kind == "ObservationEvent":
            obs = ev.get("observation")
            if not isinstance(obs, dict):
                raise self.where(i)
            texts, images = _texts(obs.get("content"))
            extended, _ = _texts(ev.get("extended_content"))
            output = "".join(texts) + "".join(extended)
            error = obs.get("is_error") is True
        elif kind == "UserRejectObservation":
            output, images = f"Action rejected: {ev.get('rejection_reason') or 'User rejected the action'}", 0
        else:
            output, images, error = as_text(ev.get("error")), 0, True
        meta: dict[str, Any] = {"timestamp": ev.get("timestamp"), "kind": kind}
        if images:
            meta["images"] = images
        self.emit(ev["id"], "tool", [ToolResult(cid, name, output, error)], [ev["id"]], meta)

    # --- the recorded condensation --------------------------------------------------------------------------------

    def condensation(self, i: int, ev: dict[str, Any]) -> None:
        ids = ev.get("forgotten_event_ids")
        if not isinstance(ids, list) or not all(isinstance(x, str) for x in ids):
            raise self.where(i)
        self.forgotten |= set(ids)
        kept = tuple(m.id for m in self.messages
                     if not any(e in self.forgotten for e in self.events_of.get(m.id, (m.id,))))
        summary = ev.get("summary") if isinstance(ev.get("summary"), str) else ""
        offset = ev.get("summary_offset")
        meta: dict[str, Any] = {"event": ev["id"], "timestamp": ev.get("timestamp"), "forgotten_events": len(ids),
                                "summary_event_offset": offset,
                                "summary_offset": message_offset(kept, self.events_of, offset),
                                "forgotten_summaries": sum(1 for x in ids if x.endswith("-summary"))}
        rid = ev.get("llm_response_id")
        if isinstance(rid, str) and rid in self.usages:
            self.joined.add(rid)
            u = self.usages[rid].usage
            meta["condenser_usage"] = {"input": u.input, "output": u.output}
        if self.requested:
            meta["requested"] = self.requested
        self.compactions.append(RecordedCompaction(
            index=len(self.messages), tool=TOOL, trigger="unknown" if self.requested else "auto",
            tokens_before=self.last_call.input + self.last_call.output if self.last_call else None,
            summary=summary or "", kept_ids=kept, meta=meta))
        self.requested = 0

    def finish(self) -> None:
        self.flush()
        unjoined = [r for r, u in self.usages.items() if r not in self.joined]
        if unjoined:
            self.warnings.append(f"{len(unjoined)} recorded token usages match no event's llm_response_id "
                                 "(calls whose events are not in this log)")
