"""``compbench.strategies.api_groups`` — compbench messages as an Anthropic-format tool sees them: alternating user /
assistant messages.

Cline and Roo Code keep their history in Anthropic's format, where one user message carries every tool
result of the previous assistant message and one assistant message carries its text and all its tool
calls. Their rules count and index *those* messages ("keep the first pair", "remove an even number").
A compbench view can hold several messages on one side in a row (a ``tool`` message per result, Claude
Code's one record per content block), so those rules are applied to *groups*: maximal runs of view
entries on the same side, assistant or user (``user``, ``tool`` and non-leading ``system`` messages).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from compbench.sdk import Entry, Part, Text, ToolResult

Side = Literal["user", "assistant"]


def head_end(entries: Sequence[Entry]) -> int:
    """Where the leading system messages end: the tools' system prompts are not history messages."""
    k = 0
    while k < len(entries) and entries[k].role == "system":
        k += 1
    return k


def side(e: Entry) -> Side:
    return "assistant" if e.role == "assistant" else "user"


def groups(entries: Sequence[Entry], start: int = 0) -> list[list[int]]:
    """View positions from ``start`` on, in runs of one side (each run is one API message)."""
    out: list[list[int]] = []
    for i in range(start, len(entries)):
        if out and side(entries[out[-1][-1]]) == side(entries[i]):
            out[-1].append(i)
        else:
            out.append([i])
    return out


def group_parts(entries: Sequence[Entry], group: Sequence[int]) -> list[tuple[Entry, int, Part]]:
    """The content blocks of one API message: (entry, part index, part) in order."""
    return [(entries[i], j, p) for i in group for j, p in enumerate(entries[i].message.parts)]


def block_text(e: Entry, j: int, p: Part) -> str | None:
    """The text of a text block or of a tool result as the model sees it now, else None."""
    if j in e.pruned:
        return e.pruned[j]
    if isinstance(p, Text):
        return p.text
    if isinstance(p, ToolResult):
        return p.output
    return None
