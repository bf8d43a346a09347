"""``round-chained``: seed 004's TypeScript compaction layer, to the letter.

Before each step (``prepareStep``): ``shouldCompact`` estimates the view with ``estimateMessagesTokens``
(2 per message + ceil(chars/4) of each text, tool name, ``JSON.stringify`` of tool args and results)
and compacts when it reaches ``floor((window − 2000 − 4000 − 5000) × 0.8)`` (93,600 for 128k) and there
are more than ``recentMessagesToKeep + 1`` messages. ``selectMessagesToCompact`` keeps ``messages[0]``
(the system slot) and the last 10 messages, moving the boundary back past tool results so no result is
orphaned, and skips a previous summary at ``messages[1]`` (detected by its ``## Session Summary``
prefix), which is passed to the summarizer instead. The new view is [messages[0], assistant summary,
kept...]. On failure the messages stay unchanged.

The seed treats index 0 as the system message; on a transcript without one, index 0 is whatever comes
first (usually the task), and it is kept verbatim exactly as the seed's code would keep it.
Estimates are cached per message, so a step costs O(new messages), not a re-count of the context.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compbench.session import Action, Compact, Entry, Insert, Keep, SessionView, Slot, SummaryRequest
from compbench.strategies.base import strategy
from compbench.transcript import Message, Text, ToolCall, ToolResult, Usage

SUMMARY_PREFIX = "## Session Summary"
SUMMARY_MAX_TOKENS = 1_000  # seed 004 generateSummary: maxTokens
MAX_CONTENT_CHARS = 2_000  # formatMessagesForSummary
MAX_RESULT_CHARS = 500
SYSTEM_PROMPT = """You are summarizing a coding agent's conversation history.
Your summary will replace the compacted messages, so preserve ALL information 
needed to continue the task successfully.

CRITICAL: Be thorough but concise. Missing information cannot be recovered."""
USER_PROMPT = """## Previous Summary
{previous}

## Original User Task
{task}

## Messages to Summarize
{messages}

## Instructions
Create a summary with these EXACT sections:

### Session Summary (Compaction Round {round})

#### Original Task
[Preserve the user's original request verbatim]

#### Completed Work
| File/Component | Action | Description |
|----------------|--------|-------------|
[List each file touched with what was done]

#### Key Technical Decisions
- [Bullet list of choices that affect future work]
- [Include dependencies installed, patterns used, etc.]

#### Current State
- Working on: [what's in progress]
- Last completed: [most recent accomplishment]

#### Pending Work
- [ ] [Remaining items as checklist]

#### Errors & Resolutions
[Only include if errors were encountered. Format: error → resolution]

## Constraints
- Maximum 800 tokens
- Use tables and bullet points for density
- Include exact file paths
- No code blocks unless absolutely critical
- If previous summary exists, INTEGRATE (don't duplicate) its content"""


@dataclass(frozen=True)
class RoundChainedParams:
    system_reserve: int = 2_000
    output_reserve: int = 4_000
    safety_buffer: int = 5_000
    threshold_percent: float = 0.80
    recent_messages_to_keep: int = 10
    model_context_limit: int = 0  # 0: the simulated model's window


def estimate_tokens(text: str) -> int:
    """Seed 004 ``estimateTokens``: ``Math.ceil(text.length / 4)``."""
    return math.ceil(len(text) / 4)


def js_stringify(value: Any) -> str:
    """``JSON.stringify`` as JavaScript prints it: compact separators, non-ASCII unescaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _args(call: ToolCall) -> Any:
    try:
        return json.loads(call.args)
    except (json.JSONDecodeError, RecursionError):
        return call.args


def estimate_message(m: Message) -> int:
    """Seed 004 ``estimateMessagesTokens`` for one message."""
    total = 2
    for p in m.parts:
        if isinstance(p, Text):
            total += estimate_tokens(p.text)
        elif isinstance(p, ToolCall):
            total += estimate_tokens(p.name) + estimate_tokens(js_stringify(_args(p)))
        elif isinstance(p, ToolResult):
            total += estimate_tokens(js_stringify(p.output))
    return total


def calculate_threshold(p: RoundChainedParams, window: int) -> int:
    limit = p.model_context_limit or window
    return math.floor((limit - p.system_reserve - p.output_reserve - p.safety_buffer) * p.threshold_percent)


def format_messages_for_summary(messages: Sequence[Message]) -> str:
    out = []
    for idx, m in enumerate(messages):
        chunks = []
        for p in m.parts:
            if isinstance(p, Text):
                chunks.append(p.text)
            elif isinstance(p, ToolCall):
                chunks.append(f"[Tool: {p.name}({js_stringify(_args(p))})]")
            elif isinstance(p, ToolResult):
                chunks.append(f"[Result: {js_stringify(p.output)[:MAX_RESULT_CHARS]}...]")
        content = "\n".join(chunks)
        if len(content) > MAX_CONTENT_CHARS:
            content = content[:MAX_CONTENT_CHARS] + "\n[...truncated...]"
        out.append(f"[{idx}] {m.role.upper()}:\n{content}")
    return "\n\n---\n\n".join(out)


def select(entries: Sequence[Entry], keep_last: int) -> tuple[int, int, str | None] | None:
    """``selectMessagesToCompact``: (compaction start, boundary, previous summary), or None for a no-op."""
    if len(entries) <= keep_last + 1:
        return None
    boundary = len(entries) - keep_last
    while boundary > 1 and entries[boundary].role == "tool":
        boundary -= 1
    previous = None
    start = 1
    first = entries[1].message
    if first.role == "assistant" and len(first.parts) == 1 and isinstance(first.parts[0], Text) and \
            first.parts[0].text.startswith(SUMMARY_PREFIX):
        previous, start = first.parts[0].text, 2
    if boundary <= start:
        return None
    return start, boundary, previous


class RoundChained:
    name = "round-chained"

    def __init__(self, p: RoundChainedParams) -> None:
        self.p = p
        self.cache: dict[tuple[str, int], int] = {}
        self.round = 0

    def estimate(self, entries: Sequence[Entry]) -> int:
        total = 0
        for e in entries:
            key = (e.id, len(e.pruned))
            if key not in self.cache:
                self.cache[key] = estimate_message(e.rendered())
            total += self.cache[key]
        return total

    def before_step(self, s: SessionView) -> Sequence[Action]:
        entries = s.entries
        keep = self.p.recent_messages_to_keep
        if len(entries) <= keep + 1:
            return ()
        if self.estimate(entries) < calculate_threshold(self.p, s.limits.context_window):
            return ()
        sel = select(entries, keep)
        if sel is None:
            return ()
        start, boundary, previous = sel
        task = next((e.message.text for e in entries if e.role == "user" and e.message.text), "Unknown task")
        self.round += 1
        to_compact = s.rendered(start, boundary)
        prompt = USER_PROMPT.format(previous=previous or "None - this is the first compaction round.", task=task,
                                    messages=format_messages_for_summary(to_compact), round=self.round)
        request = SummaryRequest(SYSTEM_PROMPT, (Message("round-prompt", "user", (Text(prompt),)),), to_compact,
                                 SUMMARY_MAX_TOKENS, previous,
                                 {"heading": f"{SUMMARY_PREFIX} (Compaction Round {self.round})"})
        view: tuple[Slot, ...] = (Keep(entries[0].id), Insert("assistant", with_summary=True, origin="summary"),
                *(Keep(e.id) for e in entries[boundary:]))
        return [Compact(f"estimate over threshold (round {self.round})", view, request, on_failure="unchanged")]

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()


@strategy("round-chained", params=RoundChainedParams, source="seed 004",
          summary="chars/4 estimator, 80% of available, keep last 10 (tool pairs intact), chained round summaries")
def round_chained(p: RoundChainedParams) -> RoundChained:
    return RoundChained(p)
