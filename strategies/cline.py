"""``compbench.strategies.cline`` — ``cline``: Cline's legacy context management (duplicate file reads rewritten, then
truncation).

Source: cline/cline at 9ee618111d58 (the parent of 791d238996), read in full:
``src/core/context/context-management/ContextManager.ts`` (``getNewContextMessagesAndMetadata``,
``getNextTruncationRange``, ``applyContextHistoryUpdates``), ``context-window-utils.ts``
(``getContextWindowInfo``) and ``src/core/task/index.ts`` (where it runs: before every API request,
``useAutoCondense`` off, its default). Shared rules live in :mod:`.cline_context`.

Before each request, on the *previous* request's usage: ``tokensIn + tokensOut + cacheWrites +
cacheReads >= maxAllowedSize`` (compbench's ``u.input`` already holds the cache reads and writes, so
``u.input + u.output``). Then, in this order:

1. Duplicate file reads are rewritten: every read of a path but the latest becomes the notice
   (``[[NOTE] This file read has been removed ...]``). These rewrites stay (prune marks).
2. If nothing was rewritten, or the rewrites save < 30% of the characters in context, the history is
   truncated: the first user/assistant pair stays; of the messages after it (and after what earlier
   truncations removed) ``floor(n / 4) * 2`` are removed, or ``floor(n * 3 / 4 / 2) * 2`` when
   ``total / 2 > maxAllowedSize`` (the brief's "three quarters if still over"); the removed range is moved
   back one message when it would end on a user message, so user/assistant alternation holds. The first
   assistant message's first text block becomes the truncation notice, once. The first message after
   the removed range loses its tool results (they answer calls that are gone); compbench empties them
   (an empty result stays where Cline leaves a message without its tool-result blocks).

Messages are counted as Cline's Anthropic-format messages (:mod:`.api_groups`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from compbench.sdk import NEVER, Action, Compact, Entry, Keep, Prune, SessionView, Text, Tool, ToolResult, Usage, Wake
from compbench.sdk.registry import param, strategy
from compbench.strategies.api_groups import groups, head_end
from compbench.strategies.cline_context import (
    CONTEXT_TRUNCATION_NOTICE,
    MIN_PERCENT_SAVED,
    READ_TOOLS,
    find_reads,
    max_allowed_size,
    percent_saved,
    rewrites,
)

Target = tuple[str, int, str]


@dataclass(frozen=True)
class ClineParams:
    dedupe: bool = param(True, "Rewrite all but the latest read of each file before truncating (Cline's "
                               "file-read optimization).")
    min_percent_saved: float = param(MIN_PERCENT_SAVED, "Truncate anyway when the rewrites save less than this "
                                                        "share of the characters in context.", hi=1)
    read_tools: tuple[str, ...] = param(READ_TOOLS, "Other agents' tools whose output counts as a read of their "
                                                    "path argument (compbench's mapping; Cline reads headers).")


def usage_total(u: Usage) -> int:
    """``tokensIn + tokensOut + cacheWrites + cacheReads``: compbench's input includes the cache parts."""
    return u.input + u.output


class ClineState:
    """What Cline remembers between requests: which messages it rewrote and whether it truncated."""

    def __init__(self, read_tools: Sequence[str]) -> None:
        self.read_tools = tuple(read_tools)
        self.kinds: dict[str, int] = {}  # first entry id of a rewritten user message -> EditType
        self.noticed = False  # contextHistoryUpdates.has(1): the first assistant message was rewritten
        self.first_user_replaced = False  # contextHistoryUpdates.has(0)
        self.truncated = False  # a deleted range exists that removed something

    def dedupe(self, s: SessionView) -> tuple[list[Target], float | None]:
        """The read rewrites of this request and the share they save (None: nothing rewritten)."""
        entries = s.entries
        head = head_end(entries)
        grouped = groups(entries, head)
        reads = find_reads(entries, grouped, 2, self.kinds, self.read_tools)
        if not any(len(v) > 1 for v in reads.values()):
            return [], None
        for occurrences in reads.values():
            for o in occurrences[:-1]:
                first = entries[grouped[o.group][0]].id
                self.kinds.setdefault(first, o.kind)
        changed = rewrites(reads)
        saved = percent_saved(entries, range(head, len(entries)), {k: v[1] for k, v in changed.items()})
        return [(key[0], key[1], text) for key, (_, text) in changed.items()], saved


def first_text_mark(e: Entry, text: str) -> tuple[tuple[int, str], ...]:
    """``setTextInBlock`` on block 0: only a text block or a tool result can take the text."""
    parts = e.message.parts
    return ((0, text),) if parts and isinstance(parts[0], (Text, ToolResult)) else ()


class Cline:
    name = "cline"

    def __init__(self, p: ClineParams) -> None:
        self.p = p
        self.state = ClineState(p.read_tools)

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        """Before a request whose previous one used the window's allowed size."""
        if not s.limits.context_window:
            return NEVER
        return Wake(usage=math.ceil(max_allowed_size(s.limits.context_window)))

    def before_step(self, s: SessionView) -> Sequence[Action]:
        u = s.last_usage
        if u is None or not s.limits.context_window:
            return ()
        total = usage_total(u)
        allowed = max_allowed_size(s.limits.context_window)
        if total < allowed:
            return ()
        keep = "quarter" if total / 2 > allowed else "half"
        actions: list[Action] = []
        saved: float | None = None
        if self.p.dedupe:
            targets, saved = self.state.dedupe(s)
            if targets:
                actions.append(Prune(tuple(targets), "cline: duplicate file reads"))
        if saved is not None and saved >= self.p.min_percent_saved:
            return actions
        return actions + self.truncate(s, keep, saved)

    def truncate(self, s: SessionView, keep: str, saved: float | None) -> list[Action]:
        """``getNextTruncationRange`` + the notice + the orphaned tool results of the new first message:
        the rewrites as prune marks, then the range hidden."""
        entries = s.entries
        head = head_end(entries)
        grouped = groups(entries, head)
        if len(grouped) < 2:
            return []
        rest = len(grouped) - 2
        remove = (rest // 4) * 2 if keep == "half" else (rest * 3 // 4 // 2) * 2
        end = 2 + remove - 1
        if end < len(grouped) and entries[grouped[end][0]].role != "assistant":
            end -= 1
        hidden = [i for g in grouped[2:end + 1] for i in g]
        self.state.truncated = self.state.truncated or bool(hidden)
        marks: list[Target] = []
        assistant = entries[grouped[1][0]]
        if not self.state.noticed:
            self.state.noticed = True
            marks += [(assistant.id, j, text) for j, text in first_text_mark(assistant, CONTEXT_TRUNCATION_NOTICE)]
        if self.state.truncated and end + 1 < len(grouped) and entries[grouped[end + 1][0]].role != "assistant":
            for i in grouped[end + 1]:
                e = entries[i]
                marks += [(e.id, j, "") for j, p in enumerate(e.message.parts)
                          if isinstance(p, ToolResult) and e.pruned.get(j) != ""]
        actions: list[Action] = [Prune(tuple(marks), "cline: truncation notice")] if marks else []
        if hidden:
            gone = {entries[i].id for i in hidden}
            meta = {"keep": keep, "removed_messages": end - 1, "percent_saved": saved}
            actions.append(Compact(f"cline: truncation ({keep})", tuple(Keep(e.id) for e in entries if e.id not in gone),
                                   meta=meta))
        return actions


# Cline's legacy extension has no setting for its truncation (Auto Compact, when on, is cline-condense).
TOOL = Tool("Cline", ("cline",))


@strategy("cline", params=ClineParams, upstream="cline/cline 9ee618111d58 (legacy ContextManager, before 791d238996)",
          summary="previous request >= window - 27k/30k/40k (or max(w-40k, 0.8w)): rewrite duplicate file reads, "
                  "then keep the first pair and drop half (or three quarters) of the rest", tool=TOOL)
def cline(p: ClineParams) -> Cline:
    return Cline(p)
