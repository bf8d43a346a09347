"""``compbench.strategies.roo_code`` — ``roo-code``: Roo Code's context management (condense to a fresh start; sliding
window as the fallback).

Source: RooCodeInc/Roo-Code at cb836567180a, read in full: ``src/core/context-management/index.ts``
(``manageContext``, ``truncateConversation``, ``TOKEN_BUFFER_PERCENTAGE``), ``src/core/condense/index.ts``
(``summarizeConversation``, ``getEffectiveApiHistory``, ``getMessagesSinceLastSummary``), the call in
``src/core/task/Task.ts`` (``attemptApiRequest``: before every request; ``autoCondenseContext = true``,
``autoCondenseContextPercent = 100`` by default), ``src/shared/api.ts`` (``getModelMaxOutputTokens``) and
``packages/core/src/message-utils/consolidateTokenUsage.ts`` (``contextTokens = tokensIn + tokensOut``
of the last request, tokensIn holding the cache tokens). Prompts: :mod:`.roo_code_prompts`.

Before a request: ``prev = contextTokens + tokens of the last message`` (the user message just added,
which the previous request did not hold); ``allowed = window * (1 - 0.1) - reserved`` with ``reserved =
maxTokens || 8192``. When ``autoCondenseContext`` is on and ``100 * prev / window >= threshold`` or
``prev > allowed``, the conversation is condensed: the messages since the last summary (the summary
included; messages hidden by an earlier truncation included too, as Roo Code passes its whole stored
history) are sent with tool calls and results written as text, after ``SUMMARY_PROMPT`` as the system
prompt and before the ``CONDENSE`` instruction; the answer becomes one *user* message
``"## Conversation Summary\\n" + summary`` (plus the ``<command>`` blocks of the task message) and every
older message is hidden: a fresh start. If condensing is off or fails and ``prev > allowed``, the sliding
window hides ``floor((visible - 1) * 0.5)`` rounded down to even of the visible messages after the first
one (condensed messages count as visible there, as in the source) and inserts the marker
``[Sliding window truncation: N messages hidden to reduce context]``.

Messages are counted as Roo Code's Anthropic-format messages (:mod:`.api_groups`). Not modelled, for
want of a workspace: the environment details and the tree-sitter folded file context appended to the
summary. ``reserved_output`` 0 applies ``getModelMaxOutputTokens``' rule for a model with a known
output limit (min(max output, ceil(20% of the window)); Anthropic hybrid-reasoning models use 8192).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from compbench.data.transcript import Message, Text, ToolCall, ToolResult, Usage
from compbench.replay.session import Action, Compact, Entry, Insert, Keep, SessionView, Slot, SummaryRequest
from compbench.sdk.registry import param, strategy
from compbench.strategies.api_groups import head_end, side
from compbench.strategies.roo_code_prompts import (
    ACTIVE_WORKFLOWS,
    CONDENSE,
    DEFERRED_TOOL_RESULT,
    SUMMARY_HEADING,
    SUMMARY_PROMPT,
    TRUNCATION_MARKER,
)

TOKEN_BUFFER_PERCENTAGE = 0.1  # context-management/index.ts
ANTHROPIC_DEFAULT_MAX_TOKENS = 8_192  # packages/types/src/providers/anthropic.ts
MIN_CONDENSE_THRESHOLD, MAX_CONDENSE_THRESHOLD = 5, 100  # condense/index.ts: a profile's threshold range
TRUNCATE_FRACTION = 0.5  # manageContext: truncateConversation(messages, 0.5, taskId)
_COMMAND = re.compile(r"<command[^>]*>[\s\S]*?</command>")


@dataclass(frozen=True)
class RooCodeParams:
    auto_condense: bool = param(True, "Condense with the model when a threshold is reached (autoCondenseContext); "
                                      "off leaves only the sliding window.")
    threshold_percent: int = param(100, "Condense at this percent of the window (autoCondenseContextPercent, or a "
                                        "profile's threshold of 5-100).", hi=100)
    reserved_output: int = param(0, "Tokens reserved for the reply (maxTokens); 0 follows getModelMaxOutputTokens "
                                    "from the model's output limit.")
    custom_condensing_prompt: str = param("", "Replaces the CONDENSE instruction (customSupportPrompts.CONDENSE).")


@dataclass
class Stored:
    """One message of Roo Code's stored history: recorded entries (one API message) or an inserted one."""

    entries: list[Entry]
    kind: str = "msg"  # "msg" | "summary" | "marker"
    truncated: bool = False
    insert: Insert | None = None  # an inserted message not yet in the view

    @property
    def role(self) -> str:
        return "user" if self.kind != "msg" else side(self.entries[0])


def js_string(v: object) -> str:
    """``String(value)`` / ``JSON.stringify(value, null, 2)`` as toolUseToText formats an argument."""
    if isinstance(v, (dict, list)):
        return json.dumps(v, indent=2, ensure_ascii=False)
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def as_text(m: Message) -> Message:
    """``transformMessagesForCondensing``: tool calls and results become text blocks."""
    parts: list[Text] = []
    for p in m.parts:
        if isinstance(p, ToolCall):
            try:
                args = json.loads(p.args)
            except ValueError:
                args = p.args
            body = "\n".join(f"{k}: {js_string(v)}" for k, v in args.items()) if isinstance(args, dict) \
                else js_string(args)
            parts.append(Text(f"[Tool Use: {p.name}]\n{body}"))
        elif isinstance(p, ToolResult):
            parts.append(Text(f"[Tool Result{' (Error)' if p.is_error else ''}]\n{p.output}"))
        elif isinstance(p, Text):
            parts.append(p)
    return Message(m.id, "assistant" if m.role == "assistant" else "user", tuple(parts))


class RooCode:
    name = "roo-code"

    def __init__(self, p: RooCodeParams) -> None:
        self.p = p
        self.stored: list[Stored] = []
        self.known: set[str] = set()
        self.outcomes: dict[str, list[Stored]] = {}  # the history after our condense / truncation applied
        self.seen = 0  # s.compactions when last synced

    # --- the stored history, kept in step with the view ---------------------------------------------------
    def sync(self, s: SessionView) -> None:
        """Take in the messages that joined the view, and the outcome of our last action, if one applied:
        a new summary in the view means the condense worked, otherwise the truncation (its fallback) did."""
        entries = s.entries
        fresh = [e for e in entries[head_end(entries):] if e.id not in self.known]
        if self.outcomes and s.compactions > self.seen:
            condensed = any(e.origin == "summary" for e in fresh)
            self.stored = self.outcomes["summary" if condensed else "marker"]
        elif "unseen" in self.outcomes:  # a truncation that changed nothing visible (no condense applied)
            self.stored = self.outcomes["unseen"]
        self.outcomes, self.seen = {}, s.compactions
        for e in fresh:
            self.known.add(e.id)
            pending = [r for r in self.stored if r.insert is not None and r.kind == e.origin]
            if pending:
                pending[0].entries, pending[0].insert = [e], None
            elif self.stored and self.stored[-1].kind == "msg" and not self.stored[-1].truncated \
                    and self.stored[-1].role == side(e):
                self.stored[-1].entries.append(e)
            else:
                self.stored.append(Stored([e]))
        for r in self.stored:
            r.insert = None  # an inserted message that never became visible (a marker before the summary)

    def reserved(self, s: SessionView) -> int:
        if self.p.reserved_output:
            return self.p.reserved_output
        out = s.limits.max_output
        return min(out, math.ceil(s.limits.context_window * 0.2)) if out else ANTHROPIC_DEFAULT_MAX_TOKENS

    def threshold(self) -> int:
        t = self.p.threshold_percent
        return t if MIN_CONDENSE_THRESHOLD <= t <= MAX_CONDENSE_THRESHOLD else 100

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        self.sync(s)
        return ()

    def before_step(self, s: SessionView) -> Sequence[Action]:
        self.sync(s)
        u, window = s.last_usage, s.limits.context_window
        if u is None or not window or not (u.input + u.output):
            return ()
        entries = s.entries
        last = len(entries)
        while last > 0 and entries[last - 1].role != "assistant":
            last -= 1
        prev = u.input + u.output + sum(e.tokens for e in entries[last:])
        allowed = window * (1 - TOKEN_BUFFER_PERCENTAGE) - self.reserved(s)
        meta = {"prev_context_tokens": prev, "allowed_tokens": allowed}
        truncation = self.truncate(s, meta) if prev > allowed else None
        if self.p.auto_condense and (100 * prev / window >= self.threshold() or prev > allowed):
            condense = self.condense(s, meta, truncation)
            if condense is not None:
                return (condense,)
        return (truncation,) if truncation is not None else ()

    # --- condense: a fresh start --------------------------------------------------------------------------
    def condense(self, s: SessionView, meta: dict[str, float], fallback: Compact | None) -> Compact | None:
        last_summary = max((k for k, r in enumerate(self.stored) if r.kind == "summary"), default=-1)
        since = self.stored[max(last_summary, 0):]
        if len(since) <= 1 or (last_summary >= 0 and len(since) <= 2):
            return None  # condense_not_enough_messages / condensed_recently: an error, no request
        source = tuple(e.rendered() for r in since for e in r.entries)
        calls = {p.id for m in source for p in m.parts if isinstance(p, ToolCall)}
        answered = {p.call_id for m in source for p in m.parts if isinstance(p, ToolResult)}
        orphans = sorted(calls - answered)
        prompt: list[Message] = [as_text(m) for m in source]
        if orphans:
            prompt.append(as_text(Message("roo-deferred", "user", tuple(
                ToolResult(c, "", DEFERRED_TOOL_RESULT) for c in orphans))))
        instruction = self.p.custom_condensing_prompt.strip() or CONDENSE
        prompt.append(Message("roo-condense", "user", (Text(instruction),)))
        request = SummaryRequest(SUMMARY_PROMPT, tuple(prompt), source)
        first = self.stored[0].entries[0].message.text if self.stored and self.stored[0].entries else ""
        blocks = "\n".join(_COMMAND.findall(first))
        after = "\n\n" + ACTIVE_WORKFLOWS.format(blocks=blocks) if blocks else ""
        summary = Insert("user", SUMMARY_HEADING, after, with_summary=True, origin="summary")
        history = [*self.stored, Stored([], "summary", insert=summary)]  # all before it: condensed
        self.outcomes["summary"] = history
        return Compact("roo-code: condense (fresh start)", self.view_of(s, history), request, on_failure="unchanged",
                       meta=meta, fallback=fallback)

    # --- the sliding window -------------------------------------------------------------------------------
    def truncate(self, s: SessionView, meta: dict[str, float]) -> Compact | None:
        visible = [k for k, r in enumerate(self.stored) if not r.truncated and r.kind != "marker"]
        raw = math.floor((len(visible) - 1) * TRUNCATE_FRACTION)
        remove = raw - raw % 2
        if remove <= 0:
            return None
        hidden = set(visible[1:remove + 1])
        history = [Stored(r.entries, r.kind, True) if k in hidden else r for k, r in enumerate(self.stored)]
        at = visible[remove + 1] if remove + 1 < len(visible) else len(history)
        marker = Insert("user", TRUNCATION_MARKER.format(n=remove), origin="marker")
        history.insert(at, Stored([], "marker", insert=marker))
        view = self.view_of(s, history)
        kept = [x.id for x in view if isinstance(x, Keep)]
        if len(kept) == len(view) and kept == [e.id for e in s.entries]:
            # it hid only messages a summary already hides: the model sees nothing new, Roo Code's history
            # records it all the same (the next truncation counts from there)
            self.outcomes["unseen"] = history
            return None
        self.outcomes["marker"] = history
        return Compact("roo-code: sliding window truncation", view, meta={**meta, "messages_removed": remove})

    def view_of(self, s: SessionView, history: list[Stored]) -> tuple[Slot, ...]:
        """``getEffectiveApiHistory``: from the last summary on (orphaned tool results dropped), or every
        message not condensed or truncated; truncation markers stay visible."""
        last_summary = max((k for k, r in enumerate(history) if r.kind == "summary"), default=-1)
        shown = [r for r in history[max(last_summary, 0):] if not r.truncated]
        if last_summary >= 0:
            calls = {p.id for r in shown for e in r.entries for p in e.message.parts if isinstance(p, ToolCall)}
            shown = [replace(r, entries=[e for e in r.entries if not _orphaned(e, calls)]) if r.role == "user" else r
                     for r in shown]
        slots: list[Slot] = [Keep(e.id) for e in s.entries[:head_end(s.entries)]]
        for r in shown:
            slots += [r.insert] if r.insert is not None else [Keep(e.id) for e in r.entries]
        return tuple(slots)


def _orphaned(e: Entry, calls: set[str]) -> bool:
    results = [p for p in e.message.parts if isinstance(p, ToolResult)]
    return bool(results) and len(results) == len(e.message.parts) and all(p.call_id not in calls for p in results)


@strategy("roo-code", params=RooCodeParams,
          source="RooCodeInc/Roo-Code cb836567180a (src/core/context-management/index.ts, src/core/condense/index.ts)",
          summary="prev tokens > 0.9 window - reserved (or >= threshold %): condense to one summary user message "
                  "(fresh start); else hide half of the visible messages after the first",
          presets={"no-condense": {"auto_condense": False}})
def roo_code(p: RooCodeParams) -> RooCode:
    return RooCode(p)
