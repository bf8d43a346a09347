"""``compbench.strategies.pi_summary`` — pi's summary requests: the prompts, ``serializeConversation`` and the file
lists (pi-mono ``packages/coding-agent/src/core/compaction/{compaction,utils}.ts`` and ``messages.ts`` at commit
83378aad; the seed's prompt and prefix from seed 002). Kept apart from :mod:`compbench.strategies.pi`, which decides
when and where to cut, because this is text to send, pinned verbatim by tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from compbench.sdk import Message, Reasoning, Text, ToolCall, ToolResult

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


def js_len(text: str) -> int:
    """JavaScript ``String.length``: UTF-16 code units (astral characters count 2)."""
    return len(text.encode("utf-16-le")) // 2


def _args(call: ToolCall) -> dict[str, Any]:
    try:
        args = json.loads(call.args)
    except (json.JSONDecodeError, RecursionError):
        return {}
    return args if isinstance(args, dict) else {}


def stringify(raw: str) -> str:
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
