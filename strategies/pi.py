"""``pi``: the pi coding agent's compaction (seed 002, "Our Implementation Plan"; ``preset=current``:
pi-mono ``packages/coding-agent/src/core/compaction/compaction.ts`` at commit 83378aad).

Seed: after an assistant message, ``contextTokens > contextWindow − reserveTokens`` (16,384) with
contextTokens = the last usage's input + output + cacheRead + cacheWrite; keep the most recent
``keepRecentTokens`` (20,000) verbatim, cutting only before a user message; never cross the previous
compaction's boundary; the summarizer sees the whole current context (so a new summary folds in the
previous one) with ``maxTokens = 0.8 × reserveTokens``; the summary becomes a user message with pi's
prefix. :func:`session_context` is the seed's session loader (latest compaction, keepLastMessages,
boundary rule) on which the seed's three worked examples are pinned.

Current: cut points are user *and* assistant messages (never tool results); a cut inside a turn
summarizes that turn's prefix separately; the summarizer sees only the messages to summarize,
serialized in ``<conversation>`` tags, with the previous summary in ``<previous-summary>`` tags and the
UPDATE prompt; read/modified files are appended; the summary message is wrapped in ``<summary>`` tags.
Known simplification: the split turn's two summaries are one summarizer request here (both spans in it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compbench.session import Action, Compact, Entry, Insert, Keep, SessionView, Slot, SummaryRequest
from compbench.strategies.base import strategy
from compbench.transcript import Media, Message, Reasoning, Text, ToolCall, ToolResult, Usage

RESERVE_TOKENS = 16_384  # seed 002 / DEFAULT_COMPACTION_SETTINGS
KEEP_RECENT_TOKENS = 20_000
SEED_PREFIX = ("Another language model worked on this task and produced a summary. Use this to continue the work "
               "without duplicating effort:\n\n")  # seed 002 "Summary Injection"
SEED_PROMPT = """You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.

Include:
- Current progress and key decisions made
- Important context, constraints, or user preferences
- Absolute file paths of any relevant files that were read or modified
- What remains to be done (clear next steps)
- Any critical data, examples, or references needed to continue

Be concise, structured, and focused on helping the next LLM seamlessly continue the work."""  # seed 002
CURRENT_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
CURRENT_SUFFIX = "\n</summary>"  # messages.ts COMPACTION_SUMMARY_PREFIX / SUFFIX
SUMMARIZATION_PROMPT = """The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.

Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or "(none)" if not applicable]

Keep each section concise. Preserve exact file paths, function names, and error messages."""
UPDATE_PROMPT = """The messages above are NEW conversation messages to incorporate into the existing summary provided in <previous-summary> tags.

Update the existing structured summary with new information. RULES:
- PRESERVE all existing information from the previous summary
- ADD new progress, decisions, and context from the new messages
- UPDATE the Progress section: move items from "In Progress" to "Done" when completed
- UPDATE "Next Steps" based on what was accomplished
- PRESERVE exact file paths, function names, and error messages
- If something is no longer relevant, you may remove it

Use this EXACT format:

## Goal
[Preserve existing goals, add new ones if the task expanded]

## Constraints & Preferences
- [Preserve existing, add new ones discovered]

## Progress
### Done
- [x] [Include previously done items AND newly completed items]

### In Progress
- [ ] [Current work - update based on progress]

### Blocked
- [Current blockers - remove if resolved]

## Key Decisions
- **[Decision]**: [Brief rationale] (preserve all previous, add new)

## Next Steps
1. [Update based on current state]

## Critical Context
- [Preserve important context, add new if needed]

Keep each section concise. Preserve exact file paths, function names, and error messages."""
TOOL_RESULT_MAX_CHARS = 2_000  # utils.ts serializeConversation


@dataclass(frozen=True)
class PiParams:
    reserve_tokens: int = RESERVE_TOKENS
    keep_recent_tokens: int = KEEP_RECENT_TOKENS
    enabled: bool = True
    cut_at_assistant: bool = False  # current: user and assistant messages are valid cut points
    current_format: bool = False  # current: serialized prompt, UPDATE prompt, <summary> message, file lists
    custom_instructions: str = ""


def estimate_tokens(m: Message) -> int:
    """pi ``estimateTokens``: ceil(chars / 4) over text, thinking, tool name + JSON args; images 4,800 chars."""
    chars = 0
    for p in m.parts:
        if isinstance(p, Text):
            chars += len(p.text)
        elif isinstance(p, Reasoning) and not p.encrypted:
            chars += len(p.text)
        elif isinstance(p, ToolCall):
            chars += len(p.name) + len(p.args)
        elif isinstance(p, ToolResult):
            chars += len(p.output)
        elif isinstance(p, Media):
            chars += 4_800
    return math.ceil(chars / 4)


# --- the seed's session loader: its worked examples are pinned on this --------------------------------


@dataclass(frozen=True)
class CompactionEvent:
    summary: str
    keep_last_messages: int


def session_context(entries: Sequence[str | CompactionEvent]) -> list[str]:
    """Seed 002 session loader. Messages are named by role initial (u, a, t).

    The latest compaction's summary comes first; then the last ``keepLastMessages`` messages before it,
    never crossing the previous compaction, and moved back to the start of their turn when the first
    kept message is not a user message (never cut mid-turn); then every message after it.
    """
    last = max((i for i, e in enumerate(entries) if isinstance(e, CompactionEvent)), default=-1)
    if last < 0:
        return [e for e in entries if isinstance(e, str)]
    event = entries[last]
    assert isinstance(event, CompactionEvent)
    prev = max((i for i, e in enumerate(entries[:last]) if isinstance(e, CompactionEvent)), default=-1)
    before = [e for e in entries[prev + 1:last] if isinstance(e, str)]
    start = max(0, len(before) - event.keep_last_messages) if event.keep_last_messages else len(before)
    while 0 < start < len(before) and not before[start].startswith("u"):
        start -= 1  # turn boundary: a turn starts at a user message
    after = [e for e in entries[last + 1:] if isinstance(e, str)]
    return [f"[{event.summary}]", *before[start:], *after]


def _serialize(messages: Sequence[Message]) -> str:
    """utils.ts ``serializeConversation``."""
    out = []
    for m in messages:
        if m.role == "user":
            text = "".join(p.text for p in m.parts if isinstance(p, Text))
            if text:
                out.append(f"[User]: {text}")
        elif m.role == "assistant":
            texts = [p.text for p in m.parts if isinstance(p, Text)]
            thinking = [p.text for p in m.parts if isinstance(p, Reasoning) and not p.encrypted]
            calls = []
            for p in m.parts:
                if isinstance(p, ToolCall):
                    try:
                        args: Any = json.loads(p.args)
                    except (json.JSONDecodeError, RecursionError):
                        args = {}
                    items = args.items() if isinstance(args, dict) else []
                    calls.append(f"{p.name}(" + ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}"
                                                         for k, v in items) + ")")
            if thinking:
                out.append("[Assistant thinking]: " + "\n".join(thinking))
            if texts:
                out.append("[Assistant]: " + "\n".join(texts))
            if calls:
                out.append("[Assistant tool calls]: " + "; ".join(calls))
        elif m.role == "tool":
            for p in m.parts:
                if isinstance(p, ToolResult):
                    text = p.output
                    if len(text) > TOOL_RESULT_MAX_CHARS:
                        text = text[:TOOL_RESULT_MAX_CHARS] + f"\n\n[... {len(p.output) - TOOL_RESULT_MAX_CHARS} more characters truncated]"
                    out.append(f"[Tool result]: {text}")
    return "\n\n".join(out)


def _file_ops(messages: Sequence[Message]) -> str:
    read: dict[str, None] = {}
    modified: dict[str, None] = {}
    for m in messages:
        for p in m.parts:
            if isinstance(p, ToolCall) and m.role == "assistant":
                try:
                    args = json.loads(p.args)
                except (json.JSONDecodeError, RecursionError):
                    continue
                path = args.get("path") if isinstance(args, dict) else None
                if isinstance(path, str):
                    if p.name == "read":
                        read[path] = None
                    elif p.name in ("write", "edit"):
                        modified[path] = None
    only_read = sorted(r for r in read if r not in modified)
    sections = []
    if only_read:
        sections.append("<read-files>\n" + "\n".join(only_read) + "\n</read-files>")
    if modified:
        sections.append("<modified-files>\n" + "\n".join(sorted(modified)) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


class Pi:
    name = "pi"

    def __init__(self, p: PiParams) -> None:
        self.p = p
        self.boundary: set[str] = set()  # ids in the view at the last compaction: never cut there
        self.previous: str | None = None

    def find_cut(self, entries: Sequence[Entry], start: int) -> int:
        """``findCutPoint``: walk back accumulating estimates; cut at the closest valid point at or after
        the entry where keepRecentTokens is reached (seed: user messages only)."""
        valid = [i for i in range(start, len(entries)) if entries[i].role == "user" or (
            self.p.cut_at_assistant and entries[i].role == "assistant")]
        if not valid:
            return start
        cut = valid[0]
        acc = 0
        for i in range(len(entries) - 1, start - 1, -1):
            acc += estimate_tokens(entries[i].rendered())
            if acc >= self.p.keep_recent_tokens:
                cut = next((c for c in valid if c >= i), cut)
                break
        return cut

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        if not self.p.enabled or not s.limits.context_window:
            return ()
        if u.input + u.output <= s.limits.context_window - self.p.reserve_tokens:
            return ()
        entries = s.entries
        head = 0
        while head < len(entries) and entries[head].role == "system":
            head += 1
        summaries = [e for e in entries if e.origin == "summary"]
        if not summaries:
            self.boundary = set()  # the last compaction failed: nothing to protect
        self.previous = self._unwrap(summaries[-1].message.text) if summaries else None
        start = head
        while start < len(entries) and (entries[start].id in self.boundary or entries[start].origin == "summary"):
            start += 1  # never cross the previous compaction: its summary and kept messages
        cut = self.find_cut(entries, start)
        split = self.p.cut_at_assistant and cut < len(entries) and entries[cut].role != "user"
        turn_start = cut
        if split:
            turn_start = next((i for i in range(cut, start - 1, -1) if entries[i].role == "user"), cut)
        budget = math.floor(0.8 * self.p.reserve_tokens)
        if self.p.current_format:
            to_summarize = s.rendered(start, cut)
            text = f"<conversation>\n{_serialize(to_summarize)}\n</conversation>\n\n"
            if self.previous:
                text += f"<previous-summary>\n{self.previous}\n</previous-summary>\n\n"
            base = UPDATE_PROMPT if self.previous else SUMMARIZATION_PROMPT
            if self.p.custom_instructions:
                base += f"\n\nAdditional focus: {self.p.custom_instructions}"
            prompt: tuple[Message, ...] = (Message("pi-compaction", "user", (Text(text + base),)),)
            after = _file_ops(to_summarize) + CURRENT_SUFFIX
            insert = Insert("user", CURRENT_PREFIX, after, with_summary=True, origin="summary")
        else:
            to_summarize = s.rendered(head, cut)
            instruction = SEED_PROMPT + (f"\n\n{self.p.custom_instructions}" if self.p.custom_instructions else "")
            prompt = (*s.rendered(), Message("pi-compaction", "user", (Text(instruction),)))
            insert = Insert("user", SEED_PREFIX, with_summary=True, origin="summary")
        request = SummaryRequest("", prompt, to_summarize, budget, self.previous,
                                 {"split_turn": split, "turn_start": turn_start})
        kept = entries[cut:]
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in entries[:head]), insert, *(Keep(e.id) for e in kept))
        self.boundary = {e.id for e in kept}
        return [Compact("context over window - reserveTokens", view, request, on_failure="unchanged",
                        meta={"kept_messages": len(kept), "split_turn": split})]

    def _unwrap(self, text: str) -> str:
        for prefix in (SEED_PREFIX, CURRENT_PREFIX):
            if text.startswith(prefix):
                text = text[len(prefix):]
        return text.removesuffix(CURRENT_SUFFIX)

    def before_step(self, s: SessionView) -> Sequence[Action]:
        return ()


@strategy("pi", params=PiParams, source="seed 002 (pi plan); current: pi-mono compaction.ts",
          summary="reserveTokens 16384, keepRecentTokens 20000, cut at turn boundaries, chained summaries",
          presets={"current": {"cut_at_assistant": True, "current_format": True}})
def pi(p: PiParams) -> Pi:
    return Pi(p)
