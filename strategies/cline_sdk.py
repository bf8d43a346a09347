"""``compbench.strategies.cline_sdk`` — ``cline-sdk``: the Cline SDK's agentic compaction (the default of today's Cline
CLI).

Source: cline/cline at 21cb8d2525bc, ``sdk/packages/core/src/extensions/context/compaction.ts``
(``createContextCompactionPrepareTurn``: before every model request), ``compaction-shared.ts``
(constants, ``findCutIndex``, ``serializeMessage``, ``buildSummaryRequest``, ``buildSummaryMessage``),
``agentic-compaction.ts`` and ``sdk/packages/shared/src/llms/tokens.ts`` (``CHARS_PER_TOKEN = 3``);
``apps/cli/src/utils/compaction-mode.ts`` makes ``agentic`` the default.

* Its own estimator: ``ceil(len(JSON.stringify(message)) / 3)`` a message (compbench writes the message
  as ``{"role", "content": [blocks]}`` in Anthropic's block shapes); the request adds the run's system
  overhead (Cline's system prompt and tool schemas).
* Trigger: request tokens ``>= 0.9 * maxInput``; ``maxInput`` = the model's input limit (capped by the
  window) or, with only a window, ``0.9 * window``.
* Target (auto): ``floor(0.5 * maxInput)`` with >= 5 user/assistant pairs and a max output below
  maxInput, else ``floor(0.7 * trigger)``; never above ``trigger - 1``. The verbatim tail keeps
  ``min(20,000, target - overhead)`` estimated tokens, never summarizing the latest typed user prompt and
  starting on an assistant message or a typed user message (not on tool results).
* The head, after the previous summary, is serialized ``[User]: ...`` / ``[Bot]: ...`` / ``[Bot tool
  calls]: name(k=json)`` / ``[Tool result]: ...`` (tool results and thinking cut at 2,000 characters) into
  ``buildSummaryRequest`` (goal / state / highlights / next / files, the previous summary, the
  conversation) with the system prompt "Summarize the provided coding session into a concise continuation
  note with detailed next steps.", output capped at 4,096 tokens; the summary becomes one user message
  ``"Context summary:\\n\\n" + summary`` before the tail. The "## Files" section is appended by Cline
  only when the summary lacks one; the prompt asks for it, so compbench assumes it is there.

Not modelled: the budget projection that trims the summarizer's input when it exceeds the summarizer's
window, and the deterministic ``basic`` compaction Cline falls back to when the agentic one fails (here a
failed summary leaves the view unchanged).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compbench.sdk import (
    NEVER,
    Action,
    Compact,
    Entry,
    Insert,
    Keep,
    Media,
    Message,
    Reasoning,
    SessionView,
    Slot,
    SummaryRequest,
    Text,
    ToolCall,
    ToolResult,
    Usage,
    Wake,
)
from compbench.sdk.registry import param, strategy
from compbench.strategies.api_groups import head_end

CHARS_PER_TOKEN = 3  # shared/src/llms/tokens.ts
CONTEXT_WINDOW_INPUT_RATIO = 0.9  # compaction-shared.ts
COMPACTION_TRIGGER_RATIO = 0.9  # compaction-shared.ts
DEFAULT_TARGET_RATIO = 0.7  # compaction-shared.ts
LONG_CONVERSATION_TARGET_RATIO = 0.5  # compaction.ts
DEFAULT_PRESERVE_RECENT_TOKENS = 20_000  # compaction-shared.ts
DEFAULT_SUMMARY_MAX_OUTPUT_TOKENS = 4_096  # compaction-shared.ts
TOOL_RESULT_CHAR_LIMIT = 2_000  # compaction-shared.ts (also thinking, file blocks)
SUMMARY_SYSTEM = "Summarize the provided coding session into a concise continuation note with detailed next steps."
SUMMARY_PREFIX = "Context summary:\n\n"  # buildSummaryMessage
READ_TOOLS, EDIT_TOOLS = ("read_files",), ("editor", "apply_patch")  # extractFileOps: Cline's own tool names
PATH_KEYS = ("path", "file_path", "target_file", "new_file_path", "old_file_path")  # collectPaths
SUMMARY_REQUEST = """Summarize this session for continuation. Be concise and factual.

## Goal
One sentence: what is being built or fixed.

## State
- Done: completed steps
- In Progress: current work
- Blocked: blockers or open questions

## Highlights
Key technical choices or notable findings (omit if none).

## Next
Immediate next steps.

## Files
Read: {read}
Edited: {edited}"""  # buildSummaryRequest


@dataclass(frozen=True)
class ClineSdkParams:
    preserve_recent_tokens: int = param(DEFAULT_PRESERVE_RECENT_TOKENS, "Estimated tokens kept verbatim at the end "
                                                                        "(capped by the compaction target).")
    trigger_ratio: float = param(COMPACTION_TRIGGER_RATIO, "Compact when the request reaches this share of the "
                                                           "usable input.", hi=1)


def estimate(chars: int) -> int:
    return max(1, math.ceil(chars / CHARS_PER_TOKEN))


def _args(call: ToolCall) -> Any:
    try:
        return json.loads(call.args)
    except ValueError:
        return {}


def message_size(m: Message) -> int:
    """A recorded message's estimate (the wake's weight: what it adds to a request)."""
    return estimate(len(as_json(m)))


def as_json(m: Message) -> str:
    """The message as ``JSON.stringify`` writes it (Anthropic block shapes, no spaces)."""
    blocks: list[dict[str, Any]] = []
    for p in m.parts:
        if isinstance(p, Text):
            blocks.append({"type": "text", "text": p.text})
        elif isinstance(p, Reasoning) and not p.encrypted:
            blocks.append({"type": "thinking", "thinking": p.text})
        elif isinstance(p, ToolCall):
            blocks.append({"type": "tool_use", "id": p.id, "name": p.name, "input": _args(p)})
        elif isinstance(p, ToolResult):
            blocks.append({"type": "tool_result", "tool_use_id": p.call_id, "content": p.output})
        elif isinstance(p, Media):
            blocks.append({"type": "image", "mediaType": p.mime or p.kind})
    role = "assistant" if m.role == "assistant" else "user"
    return json.dumps({"role": role, "content": blocks}, separators=(",", ":"), ensure_ascii=False)


def truncate_text(text: str, limit: int = TOOL_RESULT_CHAR_LIMIT) -> str:
    return text if len(text) <= limit else f"{text[:limit]}\n...[truncated {len(text) - limit} chars]"


def serialize(m: Message) -> str:
    """``serializeMessage``."""
    who = "User" if m.role != "assistant" else "Bot"
    lines: list[str] = []
    for p in m.parts:
        if isinstance(p, Text):
            lines.append(f"[{who}]: {p.text}")
        elif isinstance(p, Reasoning):
            lines.append("[Bot thinking]: [redacted]" if p.encrypted else f"[Bot thinking]: {truncate_text(p.text)}")
        elif isinstance(p, ToolCall):
            args = _args(p)
            inputs = ", ".join(f"{k}={json.dumps(v, separators=(',', ':'), ensure_ascii=False)}"
                               for k, v in (args.items() if isinstance(args, dict) else ()))
            lines.append(f"[Bot tool calls]: {p.name}({inputs})")
        elif isinstance(p, ToolResult):
            lines.append(f"[Tool result]: {truncate_text(p.output)}")
        elif isinstance(p, Media):
            lines.append(f"[{who} image]: {p.mime or p.kind}")
    return "\n".join(lines)


def file_ops(messages: Sequence[Message]) -> tuple[list[str], list[str]]:
    """``extractFileOps``: paths of Cline's read_files / editor / apply_patch calls, sorted, unique."""
    read: set[str] = set()
    edited: set[str] = set()
    for m in messages:
        for p in m.parts:
            if isinstance(p, ToolCall) and p.name in READ_TOOLS + EDIT_TOOLS:
                args = _args(p)
                paths = [str(args[k]).strip() for k in PATH_KEYS if isinstance(args, dict) and isinstance(
                    args.get(k), str) and str(args[k]).strip()]
                (read if p.name in READ_TOOLS else edited).update(paths)
    return sorted(read), sorted(edited)


def is_turn_start(e: Entry) -> bool:
    """A typed user message: not tool results only, not a compaction summary."""
    parts = e.message.parts
    tool_only = bool(parts) and all(isinstance(p, ToolResult) for p in parts)
    return e.role in ("user", "system") and not tool_only and e.origin != "summary"


class ClineSdk:
    name = "cline-sdk"

    def __init__(self, p: ClineSdkParams) -> None:
        self.p = p
        self._sizes: dict[tuple[str, int], int] = {}

    def size(self, e: Entry) -> int:
        key = (e.id, len(e.pruned))
        if key not in self._sizes:
            self._sizes[key] = estimate(len(as_json(e.rendered())))
        return self._sizes[key]

    def max_input(self, s: SessionView) -> float:
        """``resolveEffectiveMaxInputTokens``."""
        w, m = s.limits.context_window, s.limits.max_input
        if m:
            return min(m, w) if w else m
        return w * CONTEXT_WINDOW_INPUT_RATIO

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        """A request estimated at the trigger: each new message adds its own estimate."""
        if not s.limits.context_window:
            return NEVER
        entries = s.entries
        request = s.system_tokens + sum(self.size(e) for e in entries[head_end(entries):])
        return Wake(grown=(message_size, math.ceil(self.max_input(s) * self.p.trigger_ratio) - request))

    def before_step(self, s: SessionView) -> Sequence[Action]:
        entries = s.entries
        head = head_end(entries)
        messages = list(entries[head:])
        if not s.limits.context_window or len(messages) < 2:
            return ()
        overhead = s.system_tokens
        request = overhead + sum(self.size(e) for e in messages)
        max_input = self.max_input(s)
        trigger = max_input * self.p.trigger_ratio
        if request < trigger:
            return ()
        pairs, pending = 0, False
        for e in messages:
            if e.role != "assistant":
                pending = True
            elif pending:
                pairs, pending = pairs + 1, False
        long = pairs >= 5 and 0 < s.limits.max_output < max_input
        wanted = math.floor(max_input * LONG_CONVERSATION_TARGET_RATIO) if long else math.floor(
            trigger * DEFAULT_TARGET_RATIO)
        target = max(1.0, min(wanted, max_input, max(1.0, trigger - 1)))
        message_target = max(1, math.floor(target - overhead))
        cut = self.cut_index(messages, min(self.p.preserve_recent_tokens, message_target))
        if cut <= 0 or cut >= len(messages):
            return ()
        return self.compact(s, messages, cut, {"request_tokens": request, "trigger": trigger, "target": target})

    def cut_index(self, messages: Sequence[Entry], preserve: int) -> int:
        """``findCutIndex``."""
        total, candidate = 0, len(messages)
        for i in range(len(messages) - 1, -1, -1):
            total += self.size(messages[i])
            candidate = i
            if total >= preserve:
                break
        if candidate <= 0:
            return 0
        last_turn = max((i for i, e in enumerate(messages) if is_turn_start(e)), default=0)
        cut = min(candidate, last_turn) if last_turn > 0 else candidate
        while cut > 0 and not (messages[cut].role == "assistant" or is_turn_start(messages[cut])):
            cut -= 1
        return cut

    def compact(self, s: SessionView, messages: Sequence[Entry], cut: int, meta: dict[str, float]) -> Sequence[Action]:
        head = messages[:cut]
        last = max((i for i, e in enumerate(head) if e.origin == "summary"), default=-1)
        previous = head[last].message.text.removeprefix(SUMMARY_PREFIX) if last >= 0 else None
        fold = [e.rendered() for e in head[last + 1:]]
        if not fold:
            return ()
        read, edited = file_ops([e.rendered() for e in head])
        text = SUMMARY_REQUEST.format(read=", ".join(read) or "none", edited=", ".join(edited) or "none")
        if previous and previous.strip():
            text += f"\n\nPrevious summary:\n{previous.strip()}"
        conversation = "\n\n".join(serialize(m) for m in fold).strip()
        text += f"\n\nConversation:\n{conversation or '(empty)'}"
        out = min(DEFAULT_SUMMARY_MAX_OUTPUT_TOKENS, s.limits.max_output) if s.limits.max_output else \
            DEFAULT_SUMMARY_MAX_OUTPUT_TOKENS
        request = SummaryRequest(SUMMARY_SYSTEM, (Message("cline-sdk-summary", "user", (Text(text),)),), tuple(fold),
                                 max_output_tokens=out, previous_summary=previous)
        entries = s.entries
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in entries[:head_end(entries)]),
                Insert("user", SUMMARY_PREFIX, with_summary=True, origin="summary"),
                *(Keep(e.id) for e in messages[cut:]))
        return (Compact("cline-sdk: agentic compaction", view, request, on_failure="unchanged",
                        meta={**meta, "kept": len(messages) - cut}),)


@strategy("cline-sdk", params=ClineSdkParams,
          upstream="cline/cline 21cb8d2525bc sdk/packages/core/src/extensions/context (agentic compaction)",
          summary="request >= 0.9 of the usable input (chars/3 estimate): the head after the last summary is "
                  "summarized, ~20k recent tokens stay verbatim")
def cline_sdk(p: ClineSdkParams) -> ClineSdk:
    return ClineSdk(p)
