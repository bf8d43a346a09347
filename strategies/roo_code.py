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
maxTokens || 8192`` and ``maxTokens`` from ``getModelMaxOutputTokens`` (:mod:`.roo_code_limits`: 8,192 for
Claude's hybrid-reasoning models, 16,384 with a reasoning budget, a GPT-5 model's full limit, else the
limit capped at 20% of the window). When ``autoCondenseContext`` is on and ``100 * prev / window >= threshold``
(a profile's own threshold, ``profileThresholds[id]`` of 5-100, replaces the global percent, and the forced 75%
below too) or
``prev > allowed``, the conversation is condensed: the messages since the last summary (the summary
included; messages hidden by an earlier truncation included too, as Roo Code passes its whole stored
history) are sent with tool calls and results written as text, after ``SUMMARY_PROMPT`` as the system
prompt and before the ``CONDENSE`` instruction; the answer becomes one *user* message
``"## Conversation Summary\\n" + summary`` (plus the ``<command>`` blocks of the task message) and every
older message is hidden: a fresh start. If condensing is off or fails and ``prev > allowed``, the sliding
window hides ``floor((visible - 1) * 0.5)`` rounded down to even of the visible messages after the first
one (condensed messages count as visible there, as in the source) and inserts the marker
``[Sliding window truncation: N messages hidden to reduce context]``.

When the provider still refuses the request (the context exceeds the window), ``Task.attemptApiRequest``
calls ``handleContextWindowExceededError``: ``manageContext`` again with condensing forced on and the
threshold at ``FORCED_CONTEXT_REDUCTION_PERCENT = 75`` (``contextTokens`` is then the last request's, or a
condense's ``newContextTokens``: the system prompt, the summary message and the tool definitions, counted by the
provider; compbench's hidden overhead stands for the system prompt and the tool schemas together), and retries, at most ``MAX_CONTEXT_WINDOW_RETRIES = 3`` times a request;
compbench does it where the request would overflow: before it, or right after its own action left the
context over the window. ``manual`` is the Condense Context button (``condenseContext``: no fallback).

``condense="keep-last-3"`` (``preset=3.42``, and ``preset=kilo`` with Kilo Code's reserve rule) is the
condense before 3.43 (04fc2a02ef, Kilo-Org/kilocode-legacy 56b73d3bdad4): the messages since the last
summary up to the last ``N_MESSAGES_TO_KEEP = 3`` are summarized with ``SUMMARY_PROMPT_V1`` as the system
prompt (tool blocks as they are), the summary becomes an *assistant* message before those 3, the model sees
the first message, the summary and what follows; a condense is refused when a summary is among the kept
messages or when the summary and the kept messages (with the system prompt) would not be smaller than the
context (``condense_context_grew``).

Messages are counted as Roo Code's Anthropic-format messages (:mod:`.api_groups`). Not modelled, for
want of a workspace: the environment details and the tree-sitter folded file context appended to the
summary, and the tool_use blocks 3.3x copied into its summary for the kept tool results.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from compbench.sdk import (
    Action,
    Compact,
    CompactionEvent,
    Counter,
    Entry,
    Insert,
    Keep,
    Message,
    SessionView,
    Setting,
    Slot,
    SummaryRequest,
    Text,
    Tool,
    ToolCall,
    ToolResult,
    Transcript,
    Usage,
    joined_text,
)
from compbench.sdk.registry import param, strategy
from compbench.strategies.api_groups import head_end, side
from compbench.strategies.roo_code_limits import reserved_output
from compbench.strategies.roo_code_prompts import (
    ACTIVE_WORKFLOWS,
    CONDENSE,
    DEFERRED_TOOL_RESULT,
    SUMMARIZE_V1,
    SUMMARY_HEADING,
    SUMMARY_PROMPT,
    SUMMARY_PROMPT_V1,
    TRUNCATION_MARKER,
)

TOKEN_BUFFER_PERCENTAGE = 0.1  # context-management/index.ts
MIN_CONDENSE_THRESHOLD, MAX_CONDENSE_THRESHOLD = 5, 100  # condense/index.ts: a profile's threshold range
TRUNCATE_FRACTION = 0.5  # manageContext: truncateConversation(messages, 0.5, taskId)
FORCED_CONTEXT_REDUCTION_PERCENT = 75  # Task.ts: the threshold of handleContextWindowExceededError
MAX_CONTEXT_WINDOW_RETRIES = 3  # Task.ts: context-window retries of one request
N_MESSAGES_TO_KEEP = 3  # condense/index.ts before 3.43
_COMMAND = re.compile(r"<command[^>]*>[\s\S]*?</command>")


@dataclass(frozen=True)
class RooCodeParams:
    auto_condense: bool = param(True, "Condense with the model when a threshold is reached (autoCondenseContext); "
                                      "off leaves only the sliding window.")
    threshold_percent: int = param(100, "Condense at this percent of the window (autoCondenseContextPercent, or a "
                                        "profile's threshold of 5-100).", hi=100)
    profile_threshold: int = param(-1, "profileThresholds[the current profile]: 5-100 replaces both "
                                       "autoCondenseContextPercent and the 75% of the forced condense after a "
                                       "context-window error (-1, or out of range: the global percent).", lo=None)
    reserved_output: int = param(0, "Tokens reserved for the reply (maxTokens); 0 follows getModelMaxOutputTokens "
                                    "for the model and its output limit.")
    custom_condensing_prompt: str = param("", "Replaces the CONDENSE instruction (customSupportPrompts.CONDENSE; "
                                              "before 3.43 the system prompt).")
    model: str = param("", "The model id Roo Code ran (getModelMaxOutputTokens reads it); empty: the transcript's "
                           "recorded model.")
    reasoning_budget: bool = param(False, "enableReasoningEffort on a hybrid-reasoning model: reserve model_max_tokens "
                                          "(16,384 when 0).")
    model_max_tokens: int = param(0, "settings.modelMaxTokens, the reply budget with a reasoning budget (0: 16,384).")
    hybrid_clamp: bool = param(True, "Reserve 8,192 for Claude's hybrid-reasoning models whatever their limit (Roo "
                                     "Code; Kilo Code removed it).")
    condense: Literal["fresh-start", "keep-last-3"] = param(
        "fresh-start", "fresh-start: one summary user message replaces everything (3.43+); keep-last-3: first "
                       "message + summary + the last 3 messages (before 3.43, Kilo Code).")


@dataclass
class Stored:
    """One message of Roo Code's stored history: recorded entries (one API message) or an inserted one."""

    entries: list[Entry]
    kind: str = "msg"  # "msg" | "summary" | "marker"
    truncated: bool = False
    insert: Insert | None = None  # an inserted message not yet in the view
    condensed: bool = False  # keep-last-3: tagged with the condenseParent of a summary

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


def as_text(m: Message, counter: Counter | None = None) -> Message:
    """``transformMessagesForCondensing``: tool calls and results become text blocks. With ``counter``, a result's
    block is counted as its header line's count and its output's (:func:`~compbench.sdk.joined_text`: the header
    ends with a newline; an output that begins with ``/``, or with whitespace reaching a newline, is counted
    whole), so a condense reads the output's count its message was indexed with instead of tokenizing it again."""
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
            head = f"[Tool Result{' (Error)' if p.is_error else ''}]\n"
            parts.append(Text(head + p.output) if counter is None else joined_text(counter, (head, p.output)))
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
        self.retries = 0  # context-window retries of the current request
        self.awaiting_fallback = False  # a condense with a fallback is out: its failure is not the end
        self.context_after: int | None = None  # contextTokens after our condense (its newContextTokens)
        self.count: Callable[[str], int] = len  # the counter's count_text (the v1 growth check counts the summary)
        self.system_tokens = 0

    # --- the stored history, kept in step with the view ---------------------------------------------------
    def sync(self, s: SessionView) -> None:
        """Take in the messages that joined the view, and the outcome of our last action, if one applied:
        a new summary in the view means the condense worked, otherwise the truncation (its fallback) did."""
        self.count, self.system_tokens = s.counter.count_text, s.system_tokens
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
        model = self.p.model or str(s.meta.get("model") or "")
        return reserved_output(model, s.limits.max_output, s.limits.context_window,
                               reasoning_budget=self.p.reasoning_budget, model_max_tokens=self.p.model_max_tokens,
                               hybrid_clamp=self.p.hybrid_clamp)

    def threshold(self) -> int:
        t = self.p.threshold_percent
        return t if MIN_CONDENSE_THRESHOLD <= t <= MAX_CONDENSE_THRESHOLD else 100

    def effective(self, percent: int) -> int:
        """``manageContext``'s ``effectiveThreshold``: the profile's threshold where it sets a valid one, else the
        percent the caller passed (the global one, or 75 from ``handleContextWindowExceededError``)."""
        t = self.p.profile_threshold
        return t if MIN_CONDENSE_THRESHOLD <= t <= MAX_CONDENSE_THRESHOLD else percent

    def prev_tokens(self, s: SessionView) -> int | None:
        """``contextTokens`` (the last request's in + out, or the newContextTokens of a condense since) plus the
        tokens of the messages after the last assistant one."""
        u = s.last_usage
        base = self.context_after if self.context_after is not None else (u.input + u.output if u else 0)
        if not base:
            return None
        entries = s.entries
        last = len(entries)
        while last > 0 and entries[last - 1].role != "assistant":
            last -= 1
        return base + sum(e.tokens for e in entries[last:])

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        self.sync(s)
        return ()

    def before_step(self, s: SessionView) -> Sequence[Action]:
        self.sync(s)
        self.retries, self.context_after = 0, None
        actions = self.manage(s, self.threshold(), self.p.auto_condense, {})
        if actions:
            return actions
        return self.forced(s) if s.context_tokens > s.limits.input_limit else ()

    def manage(self, s: SessionView, threshold: int, auto: bool, extra: dict[str, object]) -> tuple[Action, ...]:
        """``manageContext``: condense at the threshold or over the allowed tokens, else (or when the condense
        fails) the sliding window over the allowed tokens."""
        window = s.limits.context_window
        prev = self.prev_tokens(s)
        if prev is None or not window:
            return ()
        allowed = window * (1 - TOKEN_BUFFER_PERCENTAGE) - self.reserved(s)
        threshold = self.effective(threshold)
        meta = {"prev_context_tokens": prev, "allowed_tokens": allowed, **extra}
        truncation = self.truncate(s, meta) if prev > allowed else None
        if auto and (100 * prev / window >= threshold or prev > allowed):
            condense = self.condense(s, meta, truncation)
            if condense is not None:
                self.awaiting_fallback = truncation is not None
                return (condense,)
        return (truncation,) if truncation is not None else ()

    def forced(self, s: SessionView) -> tuple[Action, ...]:
        """``handleContextWindowExceededError``: the provider refused the request; condense forced on at 75%."""
        if self.retries >= MAX_CONTEXT_WINDOW_RETRIES:
            return ()
        self.retries += 1
        return self.manage(s, FORCED_CONTEXT_REDUCTION_PERCENT, True, {"context_window_exceeded": self.retries})

    def after_compaction(self, s: SessionView, event: CompactionEvent) -> Sequence[Action]:
        """The request is retried after what was done: still over the window, the provider refuses it again."""
        if not event.reason.startswith("roo-code") or event.phase != "before":
            return ()
        if not event.ok and self.awaiting_fallback:  # the sliding window is applied next
            self.awaiting_fallback = False
            return ()
        self.awaiting_fallback = False
        self.sync(s)
        if event.ok and event.summary:
            self.context_after = self.system_tokens + event.summary_tokens  # condense_context's newContextTokens
        return self.forced(s) if s.context_tokens > s.limits.input_limit else ()

    def manual(self, s: SessionView) -> Compact | None:
        """The Condense Context button (``condenseContext``): a condense now; a failure is only reported."""
        self.sync(s)
        prev = self.prev_tokens(s) or 0
        return self.condense(s, {"prev_context_tokens": prev, "manual": True}, None)

    # --- condense -----------------------------------------------------------------------------------------
    def condense(self, s: SessionView, meta: dict[str, object], fallback: Compact | None) -> Compact | None:
        if self.p.condense == "keep-last-3":
            return self.condense_v1(s, meta, fallback)
        last_summary = max((k for k, r in enumerate(self.stored) if r.kind == "summary"), default=-1)
        since = self.stored[max(last_summary, 0):]
        if len(since) <= 1 or (last_summary >= 0 and len(since) <= 2):
            return None  # condense_not_enough_messages / condensed_recently: an error, no request
        source = tuple(e.rendered() for r in since for e in r.entries)
        calls = {p.id for m in source for p in m.parts if isinstance(p, ToolCall)}
        answered = {p.call_id for m in source for p in m.parts if isinstance(p, ToolResult)}
        orphans = sorted(calls - answered)
        prompt: list[Message] = [as_text(m, s.counter) for m in source]
        if orphans:
            prompt.append(as_text(Message("roo-deferred", "user", tuple(
                ToolResult(c, "", DEFERRED_TOOL_RESULT) for c in orphans)), s.counter))
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

    def condense_v1(self, s: SessionView, meta: dict[str, object], fallback: Compact | None) -> Compact | None:
        """Before 3.43: summarize up to the last 3 messages, the summary an assistant message before them."""
        keep_start = max(len(self.stored) - N_MESSAGES_TO_KEEP, 0)
        before = self.stored[:keep_start]
        last = max((k for k, r in enumerate(before) if r.kind == "summary"), default=-1)
        span = before[max(last, 0):]
        if last >= 0 and span and span[0].role != "user" and self.stored:
            span = [self.stored[0], *span]  # getMessagesSinceLastSummary: the first message before a summary
        if len(span) <= 1 or any(r.kind == "summary" for r in self.stored[keep_start:]):
            return None  # condense_not_enough_messages / condensed_recently
        source = tuple(e.rendered() for r in span for e in r.entries)
        prompt = (*source, Message("roo-condense", "user", (Text(SUMMARIZE_V1),)))
        request = SummaryRequest(self.p.custom_condensing_prompt.strip() or SUMMARY_PROMPT_V1, prompt, source)
        kept = sum(e.tokens for r in self.stored[keep_start:] for e in r.entries)
        history = [*self.stored[:1], *(replace(r, condensed=True) for r in self.stored[1:keep_start]),
                   Stored([], "summary", insert=Insert("assistant", with_summary=True, origin="summary")),
                   *self.stored[keep_start:]]
        self.outcomes["summary"] = history
        return Compact("roo-code: condense (keep the last 3)", self.view_of(s, history), request,
                       on_failure="unchanged", meta={**meta, "kept_tokens": kept}, fallback=fallback)

    def accept(self, a: Compact, summary: str) -> str | None:
        """Before 3.43 a condense that would not shrink the context fails (``condense_context_grew``)."""
        if not a.reason.startswith("roo-code: condense (keep") or "kept_tokens" not in a.meta:
            return None
        new = self.count(summary) + self.system_tokens + int(str(a.meta["kept_tokens"]))
        prev = int(str(a.meta.get("prev_context_tokens", 0)))
        return f"condense_context_grew ({new:,} >= {prev:,} tokens)" if new >= prev else None

    # --- the sliding window -------------------------------------------------------------------------------
    def truncate(self, s: SessionView, meta: dict[str, object]) -> Compact | None:
        visible = [k for k, r in enumerate(self.stored) if not r.truncated and r.kind != "marker"]
        raw = math.floor((len(visible) - 1) * TRUNCATE_FRACTION)
        remove = raw - raw % 2
        if remove <= 0:
            return None
        hidden = set(visible[1:remove + 1])
        history = [replace(r, truncated=True) if k in hidden else r for k, r in enumerate(self.stored)]
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
        """``getEffectiveApiHistory`` (then, before 3.43, ``getMessagesSinceLastSummary``): from the last summary
        on (3.43+: orphaned tool results dropped; before: after the first message), or every message not
        condensed or truncated; truncation markers stay visible."""
        last_summary = max((k for k, r in enumerate(history) if r.kind == "summary"), default=-1)
        if self.p.condense == "keep-last-3":
            effective = [r for r in history if not r.truncated and not r.condensed]
            at = max((k for k, r in enumerate(effective) if r.kind == "summary"), default=-1)
            shown = [*effective[:1], *effective[at:]] if at > 0 else effective
        else:
            shown = [r for r in history[max(last_summary, 0):] if not r.truncated]
            if last_summary >= 0:
                calls = {p.id for r in shown for e in r.entries for p in e.message.parts if isinstance(p, ToolCall)}
                shown = [replace(r, entries=[e for e in r.entries if not _orphaned(e, calls)]) if r.role == "user"
                         else r for r in shown]
        slots: list[Slot] = [Keep(e.id) for e in s.entries[:head_end(s.entries)]]
        for r in shown:
            slots += [r.insert] if r.insert is not None else [Keep(e.id) for e in r.entries]
        return tuple(slots)


def _orphaned(e: Entry, calls: set[str]) -> bool:
    results = [p for p in e.message.parts if isinstance(p, ToolResult)]
    return bool(results) and len(results) == len(e.message.parts) and all(p.call_id not in calls for p in results)


def _roo_log(t: Transcript) -> tuple[str | None, str] | None:
    """Kilo Code's logs run Kilo Code's rules; a Roo Code log whose summaries are assistant messages ran 3.42."""
    if t.source == "kilo-code":
        return "kilo", "a Kilo Code log: Kilo Code's rules"
    if any(str(rc.meta.get("layout") or "").startswith("assistant summary") for rc in t.compactions):
        return "3.42", "the log's summaries are assistant messages: Roo Code before 3.43"
    return None


# What Roo Code's users set (Settings > Context; globalSettings autoCondenseContext / autoCondenseContextPercent,
# per profile profileThresholds; RooCodeInc/Roo-Code cb836567 context-management/index.ts).
TOOL = Tool(
    "Roo Code", ("roo-code", "kilo-code"), log_preset=_roo_log, recorded_preset=lambda source, layout: recorded_preset(source, layout),
    preset_versions={"3.42": "before 3.43", "kilo": "Kilo Code"},
    settings=(Setting("threshold_percent", "autoCondenseContextPercent", "Roo Code settings (Context: automatically "
                      "trigger intelligent context condensing)", "100",
                      '{"globalSettings": {"autoCondenseContextPercent": {value}}}', sweep=(70, 85),
                      note="at 100 it condenses only near the window (0.9 x window less the output reserve); a "
                      "profile's own threshold (5-100) comes first"),
              Setting("auto_condense", "autoCondenseContext", "Roo Code settings (Context)", "true",
                      '{"globalSettings": {"autoCondenseContext": {value}}}',
                      note="off: the sliding window only (half the messages hidden)")))


@strategy("roo-code", params=RooCodeParams,
          upstream="RooCodeInc/Roo-Code cb836567180a (src/core/context-management/index.ts, src/core/condense/index.ts)",
          summary="prev tokens > 0.9 window - reserved (or >= threshold %): condense to one summary user message "
                  "(fresh start); else hide half of the visible messages after the first",
          presets={"no-condense": {"auto_condense": False}, "3.42": {"condense": "keep-last-3"},
                   "kilo": {"condense": "keep-last-3", "hybrid_clamp": False}}, tool=TOOL)
def roo_code(p: RooCodeParams) -> RooCode:
    return RooCode(p)


def recorded_preset(source: str, layout: str) -> str | None:
    """The preset that models what a Roo Code / Kilo Code log shows: Kilo Code's rules, or the condense before
    3.43 where the summary is an assistant message (``RecordedCompaction.meta["layout"]``)."""
    if source == "kilo-code":
        return "kilo"
    if source == "roo-code" and layout.startswith("assistant summary"):
        return "3.42"
    return None
