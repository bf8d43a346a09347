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
A split turn is two requests, as in pi: the history before the turn (with the previous summary) and
the turn's prefix (TURN_PREFIX prompt, budget 0.5 × reserveTokens), joined by "**Turn Context (split
turn):**"; when the turn's prefix is all there is since the last compaction, the history part is the
literal "No prior history." and pi drops the previous summary (compact() only passes it to the history
request). The compaction's details (readFiles, modifiedFiles, carried over from the previous
compaction) are in ``Compact.meta``.

Facts from the history (pi-mono): the first implementation (c89b1ec3, 2025-12-04) already wrapped the
summary in ``<summary>`` tags with the "compacted into the following summary" prefix — the seed's
"Another language model…" prefix is the plan's wording, kept for the seed preset with a blank line
before the summary — and found the cut from differences of recorded assistant usages; the seed preset
uses the chars/4 estimator the plan calls for and today's code uses.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compbench.session import Action, Compact, Entry, Followup, Insert, Keep, SessionView, Slot, SummaryRequest
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
SUMMARIZATION_SYSTEM_PROMPT = """You are a context summarization assistant. Your task is to read a conversation between a user and an AI coding assistant, then produce a structured summary following the exact format specified.

Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary."""  # utils.ts
TURN_PREFIX_PROMPT = """This is the PREFIX of a turn that was too large to keep. The SUFFIX (recent work) is retained.

Summarize the prefix to provide context for the retained suffix:

## Original Request
[What did the user ask for in this turn?]

## Early Progress
- [Key decisions and work done in the prefix]

## Context for Suffix
- [Information needed to understand the retained recent work]

Be concise. Focus on what's needed to understand the kept suffix."""  # compaction.ts
SPLIT_TURN_JOINER = "\n\n---\n\n**Turn Context (split turn):**\n\n"  # compaction.ts compact()
NO_PRIOR_HISTORY = "No prior history."  # compact(), when the turn prefix is all there is to summarize


@dataclass(frozen=True)
class PiParams:
    reserve_tokens: int = RESERVE_TOKENS
    keep_recent_tokens: int = KEEP_RECENT_TOKENS
    enabled: bool = True
    cut_at_assistant: bool = False  # current: user and assistant messages are valid cut points
    current_format: bool = False  # current: serialized prompt, UPDATE prompt, <summary> message, file lists
    custom_instructions: str = ""


def js_len(text: str) -> int:
    """JavaScript ``String.length``: UTF-16 code units (astral characters count 2)."""
    return len(text.encode("utf-16-le")) // 2


def estimate_tokens(m: Message) -> int:
    """compaction.ts ``estimateTokens``: ceil(chars / 4) per role. User: text; assistant: text, thinking,
    tool name + ``JSON.stringify(arguments)``; tool result: text + 4,800 per image."""
    chars = 0
    for p in m.parts:
        if isinstance(p, Text):
            chars += js_len(p.text)
        elif m.role == "assistant" and isinstance(p, Reasoning):
            chars += js_len(p.text)
        elif m.role == "assistant" and isinstance(p, ToolCall):
            chars += js_len(p.name) + js_len(_stringify(p.args))
        elif m.role == "tool" and isinstance(p, ToolResult):
            chars += js_len(p.output)
        elif m.role == "tool" and isinstance(p, Media):
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


def _args(call: ToolCall) -> dict[str, Any]:
    try:
        args = json.loads(call.args)
    except (json.JSONDecodeError, RecursionError):
        return {}
    return args if isinstance(args, dict) else {}


def _stringify(raw: str) -> str:
    """The arguments as pi holds them (parsed) re-stringified; unparseable ones as recorded."""
    try:
        return _js(json.loads(raw))
    except (json.JSONDecodeError, RecursionError):
        return raw


def _js(value: Any) -> str:
    """``JSON.stringify``: no spaces after separators, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def serialize(messages: Sequence[Message]) -> str:
    """utils.ts ``serializeConversation``: the summarizer reads a transcript, not a conversation to continue."""
    out = []
    for m in messages:
        if m.role == "user":
            text = "".join(p.text for p in m.parts if isinstance(p, Text))
            if text:
                out.append(f"[User]: {text}")
        elif m.role == "assistant":
            texts = [p.text for p in m.parts if isinstance(p, Text)]
            thinking = [p.text for p in m.parts if isinstance(p, Reasoning) and not p.encrypted]
            calls = [f"{p.name}(" + ", ".join(f"{k}={_js(v)}" for k, v in _args(p).items()) + ")"
                     for p in m.parts if isinstance(p, ToolCall)]
            if thinking:
                out.append("[Assistant thinking]: " + "\n".join(thinking))
            if texts:
                out.append("[Assistant]: " + "\n".join(texts))
            if calls:
                out.append("[Assistant tool calls]: " + "; ".join(calls))
        elif m.role == "tool":
            text = "".join(p.output for p in m.parts if isinstance(p, ToolResult))
            if text:
                if len(text) > TOOL_RESULT_MAX_CHARS:
                    text = text[:TOOL_RESULT_MAX_CHARS] + f"\n\n[... {len(text) - TOOL_RESULT_MAX_CHARS} more characters truncated]"
                out.append(f"[Tool result]: {text}")
    return "\n\n".join(out)


def file_lists(messages: Sequence[Message], read: Sequence[str] = (),
               modified: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """utils.ts ``extractFileOpsFromMessage`` + ``computeFileLists``: read/write/edit calls' ``path``,
    seeded with the previous compaction's details; files both read and modified count as modified."""
    r, w = set(read), set(modified)
    for m in messages:
        if m.role != "assistant":
            continue
        for p in m.parts:
            if isinstance(p, ToolCall):
                path = _args(p).get("path")
                if isinstance(path, str) and path:
                    if p.name == "read":
                        r.add(path)
                    elif p.name in ("write", "edit"):
                        w.add(path)
    return sorted(r - w), sorted(w)


def format_file_ops(read: Sequence[str], modified: Sequence[str]) -> str:
    """utils.ts ``formatFileOperations``: appended to the summary text."""
    sections = []
    if read:
        sections.append("<read-files>\n" + "\n".join(read) + "\n</read-files>")
    if modified:
        sections.append("<modified-files>\n" + "\n".join(modified) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


class Pi:
    name = "pi"

    def __init__(self, p: PiParams) -> None:
        self.p = p
        self.boundary: set[str] = set()  # kept ids of the last applied compaction: never cut there
        self.files: tuple[list[str], list[str]] = ([], [])  # its details (readFiles, modifiedFiles)
        # what the last proposal would set, and the applied-compaction count it was proposed at
        self.proposed: tuple[set[str], tuple[list[str], list[str]], int] | None = None

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
        if self.proposed is not None:  # did the last compaction apply? (a failed one changes nothing)
            ids, done_files, at = self.proposed
            if s.compactions > at:
                self.boundary, self.files = ids, done_files
            self.proposed = None
        if not self.p.enabled or not s.limits.context_window:
            return ()
        if u.input + u.output <= s.limits.context_window - self.p.reserve_tokens:
            return ()
        return [self.compact(s, "contextTokens > contextWindow - reserveTokens")]

    def manual(self, s: SessionView) -> Compact:
        """``/compact``: the same cut and summary, asked by the user."""
        return self.compact(s, "manual")

    def compact(self, s: SessionView, reason: str) -> Compact:
        """pi's ``compact()``: cut at ``keepRecentTokens``, summarize what precedes the cut."""
        entries = s.entries
        head = 0
        while head < len(entries) and entries[head].role == "system":
            head += 1
        summaries = [e for e in entries if e.origin == "summary"]
        previous = self._unwrap(summaries[-1].message.text) if summaries else None
        start = head
        while start < len(entries) and (entries[start].id in self.boundary or entries[start].origin == "summary"):
            start += 1  # never cross the previous compaction: its summary and kept messages
        cut = self.find_cut(entries, start)
        turn_start = cut
        if self.p.cut_at_assistant and cut < len(entries) and entries[cut].role != "user":
            turn_start = next((i for i in range(cut, start - 1, -1) if entries[i].role == "user"), cut)
        split = turn_start != cut  # findTurnStartIndex found the user message that opened the turn
        budget = math.floor(0.8 * self.p.reserve_tokens)  # seed 002 / generateSummary maxTokens
        meta: dict[str, Any] = {"kept_messages": len(entries) - cut, "split_turn": split}
        followups: tuple[Followup, ...] = ()
        fixed = ""
        if self.p.current_format:
            history = s.rendered(start, turn_start)
            prefix = s.rendered(turn_start, cut)
            to_summarize = s.rendered(start, cut)
            read, modified = file_lists(to_summarize, *self.files)
            meta |= {"read_files": read, "modified_files": modified}
            insert = Insert("user", CURRENT_PREFIX, format_file_ops(read, modified) + CURRENT_SUFFIX,
                            with_summary=True, origin="summary")
            system = SUMMARIZATION_SYSTEM_PROMPT
            req_meta: dict[str, Any] = {"split_turn": split, "history_messages": len(history)}
            if split:  # compact(): history and turn prefix asked in parallel, joined
                turn = f"<conversation>\n{serialize(prefix)}\n</conversation>\n\n{TURN_PREFIX_PROMPT}"
                followups = (Followup(SummaryRequest(
                    system, (Message("pi-turn-prefix", "user", (Text(turn),)),), prefix,
                    math.floor(0.5 * self.p.reserve_tokens), None, {"turn_prefix": True}), SPLIT_TURN_JOINER),)
            source = history if split else to_summarize
            if source:
                text = f"<conversation>\n{serialize(source)}\n</conversation>\n\n"
                if previous:
                    text += f"<previous-summary>\n{previous}\n</previous-summary>\n\n"
                base = UPDATE_PROMPT if previous else SUMMARIZATION_PROMPT
                if self.p.custom_instructions:
                    base += f"\n\nAdditional focus: {self.p.custom_instructions}"
                prompt: tuple[Message, ...] = (Message("pi-compaction", "user", (Text(text + base),)),)
            else:  # the split turn is all there is since the last compaction: the previous summary is dropped
                fixed = NO_PRIOR_HISTORY
        else:
            to_summarize = source = s.rendered(head, cut)
            instruction = SEED_PROMPT + (f"\n\nAdditional focus: {self.p.custom_instructions}"
                                         if self.p.custom_instructions else "")
            prompt = (*s.rendered(), Message("pi-compaction", "user", (Text(instruction),)))
            insert = Insert("user", SEED_PREFIX, with_summary=True, origin="summary")
            system = ""
            req_meta = {"split_turn": False}
        request = SummaryRequest(system, prompt, source, budget, previous, req_meta) if not fixed else None
        kept = entries[cut:]
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in entries[:head]), insert, *(Keep(e.id) for e in kept))
        files = (meta.get("read_files", []), meta.get("modified_files", []))
        self.proposed = ({e.id for e in kept}, files, s.compactions)
        return Compact(reason, view, request, on_failure="unchanged", meta=meta, followups=followups,
                       summary_text=fixed)

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
