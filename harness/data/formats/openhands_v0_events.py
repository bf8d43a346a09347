"""``compbench.data.formats.openhands_v0_events`` — OpenHands V0 events as the messages ``ConversationMemory`` sends
the model, and the condensations the event stream recorded.

Written from All-Hands-AI/OpenHands @ 156d068 (2025-11-28): ``events/serialization/event.py`` (``event_to_dict``:
``{id, timestamp, source, message, cause?, action|observation, args|content+extras, tool_call_metadata?,
llm_metrics?}``), ``events/tool.py`` (``ToolCallMetadata``: function_name, tool_call_id, the litellm
``model_response``, total_calls_in_response), ``memory/conversation_memory.py`` (what becomes a message),
``events/action/agent.py`` (``CondensationAction``), ``controller/state/state.py`` (what the history leaves out).

* ``system`` action: the system message. A user ``message``: a user message; the workspace context of the
  ``recall`` observation answering the first one is sent as a user message right after it, so its text
  joins that message (its ``RecallAction`` and observation are events of it: they are forgotten with it).
* Function calling: actions of one ``model_response.id`` are one model call: one assistant message whose
  text is the response's content and whose calls are the response's ``tool_calls`` (the model's own
  arguments); usage is the response's ``usage``. An agent ``finish`` is text (its thought and the
  response's content, as ConversationMemory renders it). Without metadata (a prompt-based agent), an agent
  action is its thought, with a call named after the action type whose arguments are its args, answered
  by the observation whose ``cause`` is the action.
* Observations answering a call: tool messages with what the model is sent (a command's output with its
  metadata lines, an error's "[Error occurred in processing last action]"). Not cut to
  ``max_message_chars`` here: that cut is the strategies' (it happens at every call, in ConversationMemory).
  Other observations are user messages (a user's command, a controller error). ``agent_state_changed``,
  ``null``, change-of-state actions and the like are not in the agent's history: counted, not imported.
* ``condensation`` action: a RecordedCompaction (forgotten ids, or an inclusive id range, mapped to the
  messages whose events they cover); a ``condensation_request`` before it makes the trigger ``unknown``.

The *flattened* history of resolver outputs (``dataclasses.asdict``: no id, source or tool-call metadata) is
read too: sources are inferred (a user message is the first one, or one a ``recall`` follows), calls are
rebuilt from the action types, and a condensation's ids cannot be mapped (its kept set is not recorded).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compbench.data.formats.jsonio import as_text
from compbench.data.formats.openhands_v1_events import message_offset
from compbench.data.transcript import (
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

TOOL = "openhands-v0"
NOT_HISTORY = frozenset({"agent_state_changed", "null", "change_agent_state", "pause", "resume", "stop", "push",
                         "send_pr", "start", "loop_recovery", "loop_detection", "user_rejected_null"})
TOOL_OF_ACTION = {  # codeact_agent/function_calling.py: the tool each action type comes from
    "run": "execute_bash", "run_ipython": "execute_ipython_cell", "edit": "str_replace_editor",
    "read": "str_replace_editor", "write": "str_replace_editor", "browse_interactive": "browser",
    "browse": "web_read", "think": "think", "delegate": "delegate_to_browsing_agent",
    "task_tracking": "task_tracker", "condensation_request": "request_condensation"}
ERROR_SUFFIX = "\n[Error occurred in processing last action]"  # conversation_memory.py ErrorObservation
ARG_NOISE = ("thought", "security_risk", "confirmation_state", "is_confirmed", "impl_source", "runnable",
             "translated_ipython_code", "blocking", "hidden", "is_static", "cwd")

Where = Callable[[int], TranscriptError]


def response_usage(u: Any) -> Usage | None:
    """A litellm ``usage`` (``prompt_tokens`` holds cached and cache-written tokens already)."""
    if not isinstance(u, dict):
        return None

    def n(d: Any, key: str) -> int:
        v = d.get(key) if isinstance(d, dict) else None
        return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0

    read = n(u.get("prompt_tokens_details"), "cached_tokens") or n(u, "cache_read_input_tokens")
    return Usage(input=max(n(u, "prompt_tokens"), read), output=n(u, "completion_tokens"), cache_read=read,
                 cache_write=n(u, "cache_creation_input_tokens"),
                 reasoning=n(u.get("completion_tokens_details"), "reasoning_tokens"))


def metrics_usage(u: Mapping[str, Any]) -> Usage:
    """A V0 ``TokenUsage`` record (``llm/metrics.py``)."""
    def n(key: str) -> int:
        v = u.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0

    return Usage(input=n("prompt_tokens"), output=n("completion_tokens"), cache_read=n("cache_read_tokens"),
                 cache_write=n("cache_write_tokens"))


def cmd_text(content: str, extras: Mapping[str, Any]) -> str:
    """``CmdOutputObservation.to_agent_observation``: prefix, output, suffix, then the metadata lines."""
    meta = extras.get("metadata") if isinstance(extras.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    out = f"{meta.get('prefix') or ''}{content}{meta.get('suffix') or ''}"
    if meta.get("working_dir"):
        out += f"\n[Current working directory: {meta['working_dir']}]"
    if meta.get("py_interpreter_path"):
        out += f"\n[Python interpreter: {meta['py_interpreter_path']}]"
    code = meta.get("exit_code", extras.get("exit_code", -1))
    if isinstance(code, int) and code != -1:
        out += f"\n[Command finished with exit code {code}]"
    return out


def recall_text(content: str, extras: Mapping[str, Any]) -> str:
    """The workspace context of a recall observation: what it carries as text (the templates around it are
    not reproduced)."""
    texts = [content] if content else []
    for key in ("repo_instructions", "additional_agent_instructions", "runtime_hosts", "working_dir", "date"):
        v = extras.get(key)
        if isinstance(v, str) and v:
            texts.append(v)
        elif isinstance(v, dict) and v:
            texts.append(json.dumps(v, ensure_ascii=False))
    knowledge = extras.get("microagent_knowledge")
    for k in knowledge if isinstance(knowledge, list) else []:
        if isinstance(k, dict) and isinstance(k.get("content"), str):
            texts.append(k["content"])
    return "\n\n".join(texts)


def _response(ev: Mapping[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The model response an action came from: its id, its message, the response."""
    meta = ev.get("tool_call_metadata")
    resp = meta.get("model_response") if isinstance(meta, dict) else None
    if not isinstance(resp, dict):
        return "", {}, {}
    choices = resp.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    msg = first.get("message") if isinstance(first, dict) else None
    return str(resp.get("id") or ""), msg if isinstance(msg, dict) else {}, resp


def _args(ev: Mapping[str, Any]) -> dict[str, Any]:
    args = ev.get("args")
    if isinstance(args, dict):
        return args
    return {k: v for k, v in ev.items() if k not in ("action", "message", "id", "timestamp", "source", "cause",
                                                    "tool_call_metadata", "llm_metrics", "timeout")}


@dataclass
class V0Builder:
    """Messages and recorded condensations of one V0 history, in order. ``flat``: the resolver's flattened
    history (no ids, sources or tool-call metadata)."""

    where: Where
    flat: bool = False
    by_response: dict[str, Usage] = field(default_factory=dict)  # metrics.token_usages by response id
    messages: list[Message] = field(default_factory=list)
    compactions: list[RecordedCompaction] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    events_of: dict[str, list[int]] = field(default_factory=dict)  # message id -> its event ids
    forgotten: set[int] = field(default_factory=set)
    open_response: str = ""  # the response whose assistant message is the last one
    calls: dict[int, str] = field(default_factory=dict)  # action id -> synthesized call id (no metadata)
    requested: int = 0
    last_call: Usage | None = None
    first_user: str = ""
    models: list[str] = field(default_factory=list)
    usage_calls: int = 0  # model calls with a recorded usage

    def add(self, i: int, ev: dict[str, Any], next_ev: Mapping[str, Any] | None = None) -> None:
        if not isinstance(ev, dict) or not (isinstance(ev.get("action"), str)
                                            or isinstance(ev.get("observation"), str)):
            raise self.where(i)
        eid = ev["id"] if isinstance(ev.get("id"), int) and not isinstance(ev.get("id"), bool) else -(i + 1)
        if isinstance(ev.get("action"), str):
            self.counts[f"action:{ev['action']}"] += 1
            self.action(i, eid, ev, next_ev)
        else:
            self.counts[f"observation:{ev['observation']}"] += 1
            self.observation(i, eid, ev)

    def emit(self, mid: str, role: Role, parts: Sequence[Part], eid: int, meta: dict[str, Any],
             usage: Usage | None = None) -> None:
        if usage is not None:
            self.last_call = usage
            self.usage_calls += 1
        self.events_of[mid] = [eid]
        self.messages.append(Message(mid, role, tuple(parts), usage, {k: v for k, v in meta.items() if v is not None}))
        self.open_response = ""

    def source(self, ev: Mapping[str, Any], next_ev: Mapping[str, Any] | None) -> str:
        if isinstance(ev.get("source"), str):
            return str(ev["source"])
        if not self.first_user or (isinstance(next_ev, dict) and next_ev.get("action") == "recall"):
            return "user"  # inferred: the flattened history records no source
        return "agent"

    # --- actions ----------------------------------------------------------------------------------------------

    def action(self, i: int, eid: int, ev: dict[str, Any], next_ev: Mapping[str, Any] | None) -> None:
        kind, args = ev["action"], _args(ev)
        meta = {"timestamp": ev.get("timestamp"), "event_id": eid if eid >= 0 else None}
        mid = f"oh-{eid}" if eid >= 0 else f"oh-item-{i}"
        if kind in NOT_HISTORY:
            return
        if kind == "system":
            tools = args.get("tools")
            self.emit(mid, "system", [Text(as_text(args.get("content")))], eid,
                      {**meta, "tools": len(tools) if isinstance(tools, list) else None,
                       "openhands_version": args.get("openhands_version"), "agent_class": args.get("agent_class")})
            return
        if kind == "recall":
            if self.messages and self.messages[-1].id == self.first_user:
                self.events_of[self.first_user].append(eid)
            elif self.messages and self.messages[-1].role == "user":
                self.events_of[self.messages[-1].id].append(eid)
            return
        if kind == "condensation":
            self.condensation(i, eid, args)
            return
        if kind == "condensation_request" and not ev.get("tool_call_metadata"):
            self.requested += 1
            return
        src = self.source(ev, next_ev)
        if kind == "message" and src != "agent":
            self.emit(mid, "user", [Text(as_text(args.get("content", ev.get("content"))))], eid, meta)
            if not self.first_user:
                self.first_user = mid
            return
        rid, msg, resp = _response(ev)
        if kind == "condensation_request":
            self.requested += 1
        if rid and rid == self.open_response:  # another call of the same response: already in its message
            self.events_of[self.messages[-1].id].append(eid)
            return
        usage = response_usage(resp.get("usage")) if rid else None
        if rid and rid in self.by_response:
            usage = self.by_response[rid]
        model = resp.get("model") if rid else None
        if isinstance(model, str) and model and model not in self.models:
            self.models.append(model)
        meta.update({"model": model if isinstance(model, str) else None, "response_id": rid or None})
        thought = as_text(args.get("thought")) if args.get("thought") else ""
        content: str = msg["content"] if isinstance(msg.get("content"), str) else ""
        parts: list[Part] = []
        reasoning = msg.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            parts.append(Reasoning(reasoning))
        if kind in ("message", "finish") or (kind not in TOOL_OF_ACTION and kind != "call_tool_mcp"):
            if kind == "message":
                text = as_text(args.get("content"))
            elif thought:
                text = thought + ("\n" + content if content and content != thought else "")
            else:
                text = content
            if kind == "finish" and not text:
                text = as_text(args.get("final_thought") or args.get("outputs") or "")
            parts.append(Text(text))
            self.emit(mid, "assistant", parts, eid, meta, usage)
            self.open_response = rid
            return
        calls = msg.get("tool_calls") if isinstance(msg.get("tool_calls"), list) else []
        text = content if rid else thought
        if text and text.strip():
            parts.append(Text(text))
        if calls:
            for c in calls:
                fn = c.get("function") if isinstance(c, dict) else None
                if not isinstance(fn, dict) or not isinstance(c.get("id"), str):
                    raise self.where(i)
                parts.append(ToolCall(c["id"], str(fn.get("name") or ""), as_text(fn.get("arguments"))))
        else:
            tmeta = ev.get("tool_call_metadata")
            name = tmeta.get("function_name") if isinstance(tmeta, dict) else None
            cid = tmeta.get("tool_call_id") if isinstance(tmeta, dict) else None
            if not isinstance(cid, str):
                cid = f"oh-call-{eid if eid >= 0 else i}"
                self.calls[eid] = cid
            if not isinstance(name, str):
                name = args.get("name") if kind == "call_tool_mcp" else TOOL_OF_ACTION[kind]
            shown = {k: v for k, v in args.items() if k not in ARG_NOISE}
            parts.append(ToolCall(cid, str(name), json.dumps(shown, ensure_ascii=False)))
        self.emit(mid, "assistant", parts, eid, meta, usage)
        self.open_response = rid

    # --- observations -----------------------------------------------------------------------------------------

    def observation(self, i: int, eid: int, ev: dict[str, Any]) -> None:
        kind = ev["observation"]
        extras = ev.get("extras") if isinstance(ev.get("extras"), dict) else {
            k: v for k, v in ev.items() if k not in ("observation", "content", "message")}
        assert isinstance(extras, dict)
        content = as_text(ev.get("content"))
        meta = {"timestamp": ev.get("timestamp"), "event_id": eid if eid >= 0 else None, "observation": kind}
        mid = f"oh-{eid}" if eid >= 0 else f"oh-item-{i}"
        if kind in NOT_HISTORY:
            return
        if kind == "recall":
            text = recall_text(content, extras)
            last = self.messages[-1] if self.messages else None
            if last is not None and last.role == "user" and text:
                self.messages[-1] = Message(last.id, "user", (*last.parts, Text(text)), last.usage,
                                            {**last.meta, "recall": True})
                self.events_of[last.id].append(eid)
            return
        text = cmd_text(content, extras) if kind == "run" else content
        if kind == "error":
            text += ERROR_SUFFIX
        tmeta = ev.get("tool_call_metadata")
        cid = tmeta.get("tool_call_id") if isinstance(tmeta, dict) else None
        name = tmeta.get("function_name") if isinstance(tmeta, dict) else None
        cause = ev.get("cause")
        if not isinstance(cid, str) and isinstance(cause, int) and cause in self.calls:
            cid = self.calls[cause]
        if not isinstance(cid, str) and self.flat and self.messages and self.messages[-1].role == "assistant":
            pending = [p for p in self.messages[-1].parts if isinstance(p, ToolCall)]
            answered = {p.call_id for m in self.messages for p in m.parts if isinstance(p, ToolResult)}
            cid = next((p.id for p in pending if p.id not in answered), None)
            name = name or next((p.name for p in pending if p.id == cid), None)
        if isinstance(cid, str):
            if not isinstance(name, str):
                name = next((p.name for m in reversed(self.messages) for p in m.parts
                             if isinstance(p, ToolCall) and p.id == cid), "")
            self.emit(mid, "tool", [ToolResult(cid, str(name), text, kind == "error")], eid, meta)
        else:
            self.emit(mid, "user", [Text(text)], eid, {**meta, "uncalled_observation": True})

    # --- the recorded condensation ----------------------------------------------------------------------------

    def visible(self) -> tuple[str, ...]:
        """The messages the model is sent once the forgotten events are gone (``ConversationMemory``): a tool
        result only with the call that asked for it, and the system and first user messages put back when they
        were forgotten (``_ensure_system_message``, ``_ensure_initial_user_message``)."""
        kept = {m.id for m in self.messages if not any(e in self.forgotten for e in self.events_of.get(m.id, []))}
        owner = {p.id: m.id for m in self.messages for p in m.parts if isinstance(p, ToolCall)}
        for m in self.messages:
            results = [p for p in m.parts if isinstance(p, ToolResult)]
            if m.id in kept and results and any(owner.get(r.call_id) not in kept for r in results):
                kept.discard(m.id)
        system = next((m.id for m in self.messages if m.role == "system"), None)
        kept |= {x for x in (system, self.first_user) if x}
        return tuple(m.id for m in self.messages if m.id in kept)

    def condensation(self, i: int, eid: int, args: Mapping[str, Any]) -> None:
        ids = args.get("forgotten_event_ids")
        start, end = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
        if isinstance(ids, list) and all(isinstance(x, int) for x in ids):
            gone = set(ids)
        elif isinstance(start, int) and isinstance(end, int):
            gone = set(range(start, end + 1))
        else:
            raise self.where(i)
        meta: dict[str, Any] = {"event_id": eid if eid >= 0 else None, "forgotten_events": len(gone),
                                "summary_event_offset": args.get("summary_offset")}
        if self.flat:
            kept: tuple[str, ...] = ()
            meta["kept_unknown"] = "the flattened history records no event ids"
        else:
            self.forgotten |= gone
            kept = self.visible()
            meta["summary_offset"] = message_offset(kept, self.events_of, args.get("summary_offset"))
        if self.requested:
            meta["requested"] = self.requested
        summary = args.get("summary")
        self.compactions.append(RecordedCompaction(
            index=len(self.messages), tool=TOOL, trigger="unknown" if self.requested else "auto",
            tokens_before=self.last_call.input + self.last_call.output if self.last_call else None,
            summary=summary if isinstance(summary, str) else "", kept_ids=kept,
            meta={k: v for k, v in meta.items() if v is not None}))
        self.requested = 0
