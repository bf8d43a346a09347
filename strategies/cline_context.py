"""``compbench.strategies.cline_context`` — Cline's legacy ContextManager, the parts both ``cline`` and
``cline-condense`` use.

Read from cline/cline at 9ee618111d58 (the parent of 791d238996, "Move vscode to apps", the last commit
with these files under ``src/``; the copies under ``apps/vscode/src`` are identical up to the SDK
migration 94f5a47a59, which deleted them):

* ``src/core/context/context-management/context-window-utils.ts``: ``getContextWindowInfo``;
* ``src/core/context/context-management/ContextManager.ts``: the duplicate file-read rewrite
  (``getPossibleDuplicateFileReads``, ``applyFileReadContextHistoryUpdates``,
  ``calculateContextOptimizationMetrics``), ``getNextTruncationRange``, the truncation notice;
* ``src/core/prompts/responses.ts``: the notice texts.

Cline rewrites blocks of its Anthropic-format messages; compbench applies the same rules to the view's
API message groups (:mod:`.api_groups`) and expresses each rewrite as a prune mark on that part.

Which outputs are file reads: Cline recognises its own tool-result header ``[read_file for 'PATH']
Result:`` (and ``write_to_file`` / ``replace_in_file`` results holding ``<final_file_content>``, and
``<file_content path=...>`` mentions). Transcripts of other agents lack those headers, so compbench also
counts as a ``read_file`` a tool result whose call is named in ``read_tools`` and carries a path
argument; its whole output is replaced by the notice (there is no header to keep). Like Cline, only the
first block of a user message is looked at for a tool result, so of parallel results only the first one.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from compbench.sdk import Entry, Media, Text, ToolCall, ToolResult
from compbench.strategies.api_groups import block_text, group_parts

DUPLICATE_FILE_READ_NOTICE = ("[[NOTE] This file read has been removed to save space in the context window. "
                              "Refer to the latest file read for the most up to date version of this file.]")
CONTEXT_TRUNCATION_NOTICE = (  # responses.ts contextTruncationNotice
    "[NOTE] Some previous conversation history with the user has been removed to maintain optimal context "
    "window length. The initial user task has been retained for continuity, while intermediate conversation "
    "history has been removed. Keep this in mind as you continue assisting the user. Pay special attention to "
    "the user's latest messages.")
FIRST_USER_REPLACEMENT = "[Continue assisting the user!]"  # responses.ts processFirstUserMessageForTruncation
MIN_PERCENT_SAVED = 0.3  # ContextManager.attemptFileReadOptimizationCore: truncate when percentSaved < 0.3
DEFAULT_CONTEXT_WINDOW = 128_000  # context-window-utils.ts: info.contextWindow || 128_000
READ_TOOLS = ("read_file", "Read", "read", "view", "str_replace_based_edit_tool")  # compbench mapping
PATH_KEYS = ("path", "file_path", "filePath", "absolute_path")  # compbench mapping

_HEADER = re.compile(r"^\[([^\s]+) for '([^']+)'\] Result:")
_FINAL_FILE = re.compile(r"(<final_file_content path=\"[^\"]*\">)[\s\S]*?(</final_file_content>)")
_MENTION = re.compile(r"<file_content path=\"([^\"]*)\">([\s\S]*?)</file_content>")

READ_FILE, ALTER_FILE, FILE_MENTION = 2, 3, 4  # ContextManager.ts EditType


def max_allowed_size(context_window: int) -> float:
    """``getContextWindowInfo``: the window minus a buffer fixed for three window sizes."""
    w = context_window or DEFAULT_CONTEXT_WINDOW
    if w == 64_000:  # deepseek models
        return w - 27_000
    if w == 128_000:  # most models
        return w - 30_000
    if w == 200_000:  # claude models
        return w - 40_000
    return max(w - 40_000, w * 0.8)


@dataclass(frozen=True)
class Occurrence:
    """One file read found in a block: where, its kind, the text it is replaced by (or the match)."""

    group: int
    kind: int
    entry: Entry
    part: int
    search: str  # the matched text (file mentions), "" otherwise
    replacement: str


def _calls(entries: Sequence[Entry]) -> dict[str, ToolCall]:
    return {p.id: p for e in entries if e.role == "assistant" for p in e.message.parts if isinstance(p, ToolCall)}


def _call_path(call: ToolCall | None, read_tools: Sequence[str]) -> str | None:
    if call is None or call.name not in read_tools:
        return None
    try:
        args = json.loads(call.args)
    except ValueError:
        return None
    if not isinstance(args, dict):
        return None
    for key in PATH_KEYS:
        if isinstance(args.get(key), str) and args[key]:
            return str(args[key])
    return None


def find_reads(entries: Sequence[Entry], grouped: Sequence[Sequence[int]], start: int, kinds: dict[str, int],
               read_tools: Sequence[str]) -> dict[str, list[Occurrence]]:
    """``getPossibleDuplicateFileReads`` over groups ``start..``: every read of a path, in order.

    ``kinds`` maps the first entry id of a group Cline already rewrote to its EditType: such a group is
    skipped, except a file-mention block, which is searched again for mentions not yet replaced. An
    occurrence with part -1 is a read whose rewrite Cline records but cannot show (a header-only block
    with no content block after it).
    """
    calls = _calls(entries)
    reads: dict[str, list[Occurrence]] = {}

    def add(path: str, o: Occurrence) -> None:
        reads.setdefault(path, []).append(o)

    for gi in range(start, len(grouped)):
        first = entries[grouped[gi][0]]
        if first.role == "assistant" or kinds.get(first.id, FILE_MENTION) != FILE_MENTION:
            continue
        blocks = group_parts(entries, grouped[gi])
        e0, j0, p0 = blocks[0] if blocks else (first, -1, Text(""))
        text0 = block_text(e0, j0, p0) if blocks else None
        if not text0:
            continue
        found = False
        header = _HEADER.match(text0)
        if header:
            tool, path = header.group(1), header.group(2)
            index = 0 if len(text0) > header.end() else 1  # newer format: content in the header's block
            if tool == "read_file":
                if index == 0:
                    add(path, Occurrence(gi, READ_FILE, e0, j0, "", header.group(0) + "\n" + DUPLICATE_FILE_READ_NOTICE))
                else:
                    e1, j1 = (blocks[1][0], blocks[1][1]) if len(blocks) > 1 else (e0, -1)
                    add(path, Occurrence(gi, READ_FILE, e1, j1, "", DUPLICATE_FILE_READ_NOTICE))
                found = True
            elif tool in ("replace_in_file", "write_to_file"):
                target: tuple[Entry, int, str] | None = (e0, j0, text0)
                if index == 1 and not isinstance(p0, ToolResult):  # older format: content in the next block
                    nxt = blocks[1] if len(blocks) > 1 else None
                    target = (nxt[0], nxt[1], nxt[2].text) if nxt and isinstance(nxt[2], Text) else None
                if target is not None:
                    e, j, text = target
                    if _FINAL_FILE.search(text):
                        new = _FINAL_FILE.sub(lambda m: f"{m.group(1)} {DUPLICATE_FILE_READ_NOTICE} {m.group(2)}",
                                              text, count=1)
                        add(path, Occurrence(gi, ALTER_FILE, e, j, "", new))
                    found = True
        elif isinstance(p0, ToolResult):
            read = _call_path(calls.get(p0.call_id), read_tools)
            if read is not None:  # compbench: another agent's read tool (no Cline header to keep)
                add(read, Occurrence(gi, READ_FILE, e0, j0, "", DUPLICATE_FILE_READ_NOTICE))
                found = True
        if found:
            continue
        for e, j, p in blocks[:3]:  # file mentions: "search over indices 0-2 inclusive"
            matches = list(_MENTION.finditer(block_text(e, j, p) or ""))
            for m in matches:
                if m.group(2) != DUPLICATE_FILE_READ_NOTICE:  # not replaced by an earlier rewrite
                    new = f'<file_content path="{m.group(1)}">{DUPLICATE_FILE_READ_NOTICE}</file_content>'
                    add(m.group(1), Occurrence(gi, FILE_MENTION, e, j, m.group(0), new))
            if matches:
                break  # at most one file-mention block a message
    return reads


def rewrites(reads: dict[str, list[Occurrence]]) -> dict[tuple[str, int], tuple[Occurrence, str]]:
    """``applyFileReadContextHistoryUpdates``: every read of a path but the last is rewritten; several
    mentions in one block are replaced one after the other in that block's text."""
    out: dict[tuple[str, int], tuple[Occurrence, str]] = {}
    for occurrences in reads.values():
        for o in occurrences[:-1]:
            key = (o.entry.id, o.part)
            if o.part < 0:
                continue
            if o.kind == FILE_MENTION:
                base = out[key][1] if key in out else block_text(o.entry, o.part, o.entry.message.parts[o.part])
                out[key] = (o, (base or "").replace(o.search, o.replacement, 1))
            else:
                out[key] = (o, o.replacement)
    return out


def _chars(e: Entry, j: int) -> int:
    p = e.message.parts[j]
    text = block_text(e, j, p)
    if text is not None and (isinstance(p, (Text, ToolResult)) or j in e.pruned):
        return len(text)
    if isinstance(p, Media) and p.data:
        return 4 * math.ceil(len(p.data) / 3)  # base64 length of the image data
    return 0


def percent_saved(entries: Sequence[Entry], counted: Sequence[int], changed: dict[tuple[str, int], str]) -> float:
    """``calculateContextOptimizationMetrics``: characters the rewrites save over the characters of the
    messages in context (text blocks, tool results, base64 images), before the rewrites."""
    total = saved = 0
    for i in counted:
        e = entries[i]
        for j in range(len(e.message.parts)):
            n = _chars(e, j)
            total += n
            if (e.id, j) in changed:
                saved += n - len(changed[(e.id, j)])
    return 0.0 if total == 0 else saved / total

