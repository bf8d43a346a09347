"""``compbench.strategies.opencode_serialize`` — OpenCode's text of a compaction's head and its size estimate.

Today's summarizer gets the head as one serialized user message (core ``serialize`` and ``buildPrompt``, 8b9b5784),
and the tail, Kilo Code's preflight and prune size things in OpenCode's chars/4 estimate of its JSON model messages;
kept apart from :mod:`compbench.strategies.opencode`, which decides when and what to compact.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from compbench.sdk import Entry, Media, Message, Reasoning, Text, ToolCall, ToolResult, chars4_round
from compbench.strategies.opencode_prompts import ANCHOR_NEW, ANCHOR_UPDATE, SUMMARY_TEMPLATE

TOOL_OUTPUT_MAX_CHARS = 2_000  # current: compaction.ts serialize() clips each tool output
Extra = Mapping[str, Mapping[int, str]]  # prune marks decided in the same before_step, not yet applied


# --- current: the summarizer's view of the head, and the tail's size estimate ----------------------------


def rendered(entries: Sequence[Entry], extra: Extra) -> tuple[Message, ...]:
    """Messages as the model sees them, with prune marks decided in this same step applied."""
    out = []
    for e in entries:
        if e.id in extra:
            e = replace(e, pruned={**e.pruned, **extra[e.id]})
        out.append(e.rendered())
    return tuple(out)


def _clip(text: str) -> str:
    return text if len(text) <= TOOL_OUTPUT_MAX_CHARS else text[:TOOL_OUTPUT_MAX_CHARS] + "\n[truncated]"


def serialize(entries: Sequence[Entry], extra: Extra | None = None) -> str:
    """Current ``serialize``: one block a message (a call and its results share one), joined by blank lines."""
    blocks: list[str] = []
    for m in rendered(entries, extra or {}):
        lines: list[str] = []
        if m.role == "user":
            text = "\n".join(p.text for p in m.parts if isinstance(p, Text) and p.text)
            lines += [f"[User]: {text}"] if text else []
            lines += [f"[Attached {p.mime or p.kind}: {p.name or 'file'}]" for p in m.parts if isinstance(p, Media)]
        for p in m.parts if m.role != "user" else ():
            if isinstance(p, Text) and p.text:
                lines.append(f"[Assistant]: {p.text}")
            elif isinstance(p, Reasoning) and p.text and not p.encrypted:
                lines.append(f"[Assistant reasoning]: {p.text}")
            elif isinstance(p, ToolCall):
                lines.append(f"[Assistant tool call]: {p.name}({p.args})")
            elif isinstance(p, ToolResult):
                lines.append(f"[Tool error]: {p.output}" if p.is_error else f"[Tool result]: {_clip(p.output)}")
        if not lines:
            continue
        if m.role == "tool" and blocks:
            blocks[-1] += "\n" + "\n".join(lines)
        else:
            blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def build_prompt(previous: str | None, conversation: str) -> str:
    """Core ``buildPrompt``: anchor (new, or update the previous summary), template, conversation."""
    anchor = ANCHOR_UPDATE.format(summary=previous) if previous else ANCHOR_NEW
    return "\n\n".join(x for x in (anchor, SUMMARY_TEMPLATE, conversation) if x)


def estimate(entries: Sequence[Entry]) -> int:
    """``Token.estimate(JSON.stringify(toModelMessages(turn)))``: chars/4 of compact JSON model messages.

    The message shape approximates the AI SDK's (role + typed content parts); lengths count code points
    where JavaScript counts UTF-16 units, so non-BMP text differs slightly.
    """
    msgs: list[dict[str, Any]] = []
    for m in (e.rendered() for e in entries):
        content: list[dict[str, Any]] = []
        for p in m.parts:
            if isinstance(p, Text):
                content.append({"type": "text", "text": p.text})
            elif isinstance(p, Reasoning) and not p.encrypted:
                content.append({"type": "reasoning", "text": p.text})
            elif isinstance(p, ToolCall):
                content.append({"type": "tool-call", "toolCallId": p.id, "toolName": p.name, "input": p.args})
            elif isinstance(p, ToolResult):
                content.append({"type": "tool-result", "toolCallId": p.call_id, "toolName": p.name,
                                "output": {"type": "text", "value": p.output}})
            elif isinstance(p, Media):
                content.append({"type": "file", "mediaType": p.mime or p.kind})
        msgs.append({"role": m.role, "content": content})
    return chars4_round(json.dumps(msgs, separators=(",", ":"), ensure_ascii=False))
