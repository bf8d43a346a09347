"""``compbench.strategies.cline_condense`` — ``cline-condense``: Cline's auto-condense, the main model summarizing
through its ``summarize_task`` tool.

Source: cline/cline at 9ee618111d58 (parent of 791d238996): ``src/core/task/index.ts`` (the
``useAutoCondense`` branch before each request), ``ContextManager.ts`` (``shouldCompactContextWindow``,
``attemptFileReadOptimization``, ``getNextTruncationRange(..., "none")``,
``triggerApplyStandardContextTruncationNoticeChange``), ``tools/handlers/SummarizeTaskHandler.ts`` and
``prompts/contextManagement.ts`` (:mod:`.cline_prompts`). Cline uses it when ``useAutoCondense`` is on
(off by default) and the model is of its "next-gen" families.

Before a request, on the previous request's usage: ``in + out + cache writes + cache reads >=
maxAllowedSize`` (``thresholdPercentage`` is gone since 9fd2b99be4, so the threshold is maxAllowedSize);
not when only two messages followed the last condense (no summary of a summary); duplicate file reads are
rewritten first (:mod:`.cline_context`) and, if that saves >= 30% of the characters, there is no condense.
Otherwise the request carries the ``summarize_task`` instructions appended to the new user message and the
*main* model answers with a ``summarize_task`` call holding the summary (the request here: the view as the
model saw it, then the instructions; Cline's system prompt and tools are the run's system overhead).
The handler then hides everything after the first user/assistant pair, rewrites the first user message's
first text block to ``[Continue assisting the user!]`` and the first assistant's to the truncation notice
(once each; prune marks made right after the compaction, ``after_compaction``), and the next request hides the condense request and the call too, so the model continues
from ``[first pair, "[summarize_task] Result:\\n" + continuationPrompt(context)]``: of the model's answer only the
call's ``context`` parameter is the summary (``SummarizeTaskHandler``), not its ``<thinking>`` analysis nor its
``task_progress``; an offline summarizer's answer, which has no call, is taken whole. compbench places that
result as one user message (the XML tool format's text block; not modelled: the handler's automatic read
of up to 8 "Required Files", which needs the workspace). A failed summary leaves the view as it was.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from compbench.sdk import (
    NEVER,
    Action,
    Compact,
    CompactionEvent,
    Entry,
    Insert,
    Keep,
    Message,
    Prune,
    SessionView,
    Slot,
    SummaryRequest,
    Text,
    Usage,
    Wake,
)
from compbench.sdk.registry import param, strategy
from compbench.strategies.api_groups import groups, head_end
from compbench.strategies.cline import ClineState, first_text_mark, usage_total
from compbench.strategies.cline_context import (
    CONTEXT_TRUNCATION_NOTICE,
    FIRST_USER_REPLACEMENT,
    MIN_PERCENT_SAVED,
    READ_TOOLS,
    max_allowed_size,
)
from compbench.strategies.cline_prompts import CONTINUATION_AFTER, CONTINUATION_BEFORE, summarize_task


@dataclass(frozen=True)
class ClineCondenseParams:
    min_percent_saved: float = param(MIN_PERCENT_SAVED, "Skip the condense when rewriting duplicate file reads "
                                                        "saves at least this share of the characters.", hi=1)
    read_tools: tuple[str, ...] = param(READ_TOOLS, "Other agents' tools whose output counts as a read of their "
                                                    "path argument (compbench's mapping; Cline reads headers).")
    cwd: str = param("", "Working directory named in the summarize_task prompt's Required Files section.")
    focus_chain: bool = param(True, "Include the task_progress checklist instructions (Cline's focus chain, on "
                                    "by default).")


class ClineCondense:
    name = "cline-condense"

    def __init__(self, p: ClineCondenseParams) -> None:
        self.p = p
        self.state = ClineState(p.read_tools)
        self.condensed = False  # conversationHistoryDeletedRange is set
        self.marks: tuple[tuple[str, int, str], ...] = ()  # the first pair's rewrites, once the summary exists

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        """Before a request whose previous one used the window's allowed size."""
        if not s.limits.context_window:
            return NEVER
        return Wake(usage=math.ceil(max_allowed_size(s.limits.context_window)))

    def after_compaction(self, s: SessionView, event: CompactionEvent) -> Sequence[Action]:
        """The handler ran (the summary came back): it records the deleted range and rewrites the first
        user and assistant messages, once each."""
        marks, self.marks = self.marks, ()
        if not event.ok or not event.reason.startswith("cline: auto-condense"):
            return ()
        self.condensed = self.state.noticed = self.state.first_user_replaced = True
        return (Prune(marks, "cline: first pair rewritten"),) if marks else ()

    def active_messages(self, s: SessionView) -> int:
        """Messages after the first pair, up to the last assistant message (the new user message, which
        Cline has not appended yet when it checks, excluded)."""
        grouped = groups(s.entries, head_end(s.entries))
        n = len(grouped)
        if grouped and s.entries[grouped[-1][0]].role != "assistant":
            n -= 1
        return n - 2

    def before_step(self, s: SessionView) -> Sequence[Action]:
        u = s.last_usage
        if u is None or not s.limits.context_window:
            return ()
        if usage_total(u) < max_allowed_size(s.limits.context_window):
            return ()
        if self.condensed and self.active_messages(s) <= 2:
            return ()
        actions: list[Action] = []
        targets, saved = self.state.dedupe(s)
        if targets:
            actions.append(Prune(tuple(targets), "cline: duplicate file reads"))
        if saved is not None and saved >= self.p.min_percent_saved:
            return actions
        actions.append(self.condense(s, {(t[0], t[1]): t[2] for t in targets}, saved))
        return actions

    def condense(self, s: SessionView, marks: dict[tuple[str, int], str], saved: float | None) -> Compact:
        entries = s.entries
        head = head_end(entries)
        grouped = groups(entries, head)
        shown = tuple(_marked(e, marks).rendered() for e in entries[head:])
        instructions = Message("cline-summarize-task", "user", (Text(summarize_task(self.p.cwd, self.p.focus_chain)),))
        request = SummaryRequest(system="", prompt=(*shown, instructions), source=shown,
                                 meta={"model": "main", "tool": "summarize_task"})
        user0 = entries[grouped[0][0]] if grouped else None
        assistant1 = entries[grouped[1][0]] if len(grouped) > 1 else None
        rewrites: list[tuple[str, int, str]] = []
        if user0 is not None and not self.state.first_user_replaced:
            rewrites += [(user0.id, j, t) for j, t in first_user_mark(user0)]
        if assistant1 is not None and not self.state.noticed:
            rewrites += [(assistant1.id, j, t) for j, t in first_text_mark(assistant1, CONTEXT_TRUNCATION_NOTICE)]
        self.marks = tuple(rewrites)
        first_pair = [i for g in grouped[:2] for i in g]
        view: list[Slot] = [*(Keep(e.id) for e in entries[:head]), *(Keep(entries[i].id) for i in first_pair),
                            Insert("user", CONTINUATION_BEFORE, CONTINUATION_AFTER, with_summary=True,
                                   origin="summary")]
        return Compact("cline: auto-condense (summarize_task)", tuple(view), request, on_failure="unchanged",
                       meta={"percent_saved": saved, "model": "main"}, summary_tag="context")


def _marked(e: Entry, marks: dict[tuple[str, int], str]) -> Entry:
    """The entry with this request's file-read rewrites (decided in the same step, applied just before)."""
    ours = {j: t for (i, j), t in marks.items() if i == e.id}
    return replace(e, pruned={**e.pruned, **ours}) if ours else e


def first_user_mark(e: Entry) -> tuple[tuple[int, str], ...]:
    """``applyFirstUserMessageReplacement``: a non-empty text block 0 becomes ``[Continue assisting the user!]``."""
    parts = e.message.parts
    return ((0, FIRST_USER_REPLACEMENT),) if parts and isinstance(parts[0], Text) and parts[0].text else ()


@strategy("cline-condense", params=ClineCondenseParams,
          upstream="cline/cline 9ee618111d58 (auto-condense, summarize_task; before 791d238996)",
          summary="previous request >= maxAllowedSize: the main model writes a summarize_task summary; the first "
                  "pair and the summary stay")
def cline_condense(p: ClineCondenseParams) -> ClineCondense:
    return ClineCondense(p)
