"""``compbench.strategies.langchain`` — ``langchain``: LangChain's ``SummarizationMiddleware`` (langchain 1.5.0 on PyPI,
the release of langchain-ai/langchain ``libs/langchain_v1``; ``langchain/agents/middleware/summarization.py``).

Before every model call (``before_model``) the state's messages are counted with the model-tuned
``count_tokens_approximately`` (chars / 4, or / 3.3 for an Anthropic chat model, ceil per message,
+ 3 per message, scaled by the last AI message's reported ``total_tokens`` up to 1.25x). It summarizes
when any ``trigger`` clause is met: a clause is a dict of thresholds that must all be reached (AND), a
list of clauses is an OR; ``tokens`` and ``fraction`` (of the model profile's ``max_input_tokens``) are
also met when the last AI message's reported total reaches them. With no trigger (the default) it never
summarizes: ``langchain`` as seeded never acts, the documented example is ``preset=docs``.

What is kept: ``keep`` (``("messages", 20)``; or ``tokens`` / ``fraction``, found by binary search on
the unscaled count); a cutoff that lands on a tool result moves back to the AI message that called it,
so a call is never split from its results. Everything before the cutoff is summarized, but the
summarizer sees only ``trim_messages(..., max_tokens=trim_tokens_to_summarize (4000), strategy="last",
start_on="human", allow_partial=True, include_system=True)`` of it, rendered with
``get_buffer_string(format="xml")`` into :data:`DEFAULT_SUMMARY_PROMPT`, sent as one human message. When
the trimmed span is empty (no human message in its last 4,000 tokens: common in agent loops) no model is
called and the summary is the fixed "Previous conversation was too long to summarize.". The state becomes
``[HumanMessage("Here is a summary of the conversation to date:\\n\\n" + summary), *preserved]``; the
agent's system prompt is a request parameter, not state (here: the view's leading system messages, kept,
not counted). A failed summary call is retried (3 attempts) and then raises: the agent run fails; here the
view is left as it was and the failure recorded. The retry on ``ContextOverflowError`` (the middle of the
history cut out) is not modelled: the 4,000-token trim keeps the summary prompt small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from compbench.errors import UsageError
from compbench.sdk import (
    NEVER,
    NEXT_QUESTION,
    Action,
    Compact,
    Entry,
    Insert,
    Keep,
    Message,
    SessionView,
    Slot,
    SummaryRequest,
    Text,
    Usage,
    Wake,
)
from compbench.sdk.registry import param, strategy
from compbench.strategies.langchain_messages import (
    ANTHROPIC_CHARS_PER_TOKEN,
    CHARS_PER_TOKEN,
    LCMessage,
    buffer_string_xml,
    count_tokens_approximately,
    entry_messages,
    source_messages,
    trim_last,
)
from compbench.strategies.langchain_prompts import DEFAULT_SUMMARY_PROMPT

MESSAGES_TO_KEEP = 20  # summarization.py: _DEFAULT_MESSAGES_TO_KEEP
TRIM_TOKEN_LIMIT = 4000  # summarization.py: _DEFAULT_TRIM_TOKEN_LIMIT
SUMMARY_PREFIX = "Here is a summary of the conversation to date:\n\n"  # summarization.py: _build_new_messages
TOO_LONG = "Previous conversation was too long to summarize."  # summarization.py: _create_summary
NO_HISTORY = "No previous conversation history."  # summarization.py: _create_summary
KINDS = ("tokens", "messages", "fraction")

Clause = tuple[tuple[str, float], ...]


def parse_clauses(text: str, what: str = "trigger") -> tuple[Clause, ...]:
    """``kind:value`` thresholds; ``&`` joins thresholds that must all be met, ``|`` joins clauses."""
    clauses: list[Clause] = []
    for raw in filter(None, (c.strip() for c in text.split("|"))):
        clause: list[tuple[str, float]] = []
        for item in raw.split("&"):
            kind, _, value = item.strip().partition(":")
            try:
                number = float(value)
            except ValueError:
                raise UsageError(f"{what}: expected kind:value (kind one of {', '.join(KINDS)}), got {item!r}") from None
            if kind not in KINDS:
                raise UsageError(f"{what}: unsupported kind {kind!r} (one of {', '.join(KINDS)})")
            if kind == "fraction" and not 0 < number <= 1:
                raise UsageError(f"Fractional {what} values must be between 0 and 1, got {value}.")
            if kind != "fraction" and (number <= 0 or number != int(number)):
                raise UsageError(f"{what} {kind} must be a positive integer, got {value}")
            clause.append((kind, number))
        clauses.append(tuple(clause))
    return tuple(clauses)


@dataclass(frozen=True)
class LangChainParams:
    """``SummarizationMiddleware``'s arguments, as spec text: ``trigger=tokens:4000&messages:10|fraction:0.8``."""

    trigger: str = param("", "When to summarize: kind:value thresholds (tokens, messages, fraction), & = all of "
                         "them, | = any clause; empty (the default) never summarizes.")
    keep: str = param(f"messages:{MESSAGES_TO_KEEP}", "What stays verbatim after a summary: messages:N, tokens:N "
                      "or fraction:F of the model's max input.")
    trim_tokens_to_summarize: int | None = param(TRIM_TOKEN_LIMIT, "The summarizer sees only the newest this many "
                                                 "tokens of the span, starting on a human message (none: all).")
    chars_per_token: float = param(CHARS_PER_TOKEN, "The approximate counter's characters per token (3.3 when the "
                                   "model is an Anthropic chat model).", lo=0.1)
    summary_prompt: str = param("", "Summary prompt template with {messages} (empty: LangChain's default).")

    def __post_init__(self) -> None:
        parse_clauses(self.trigger)
        keep = parse_clauses(self.keep, "keep")
        if len(keep) != 1 or len(keep[0]) != 1:
            raise UsageError(f"keep takes one kind:value, got {self.keep!r}")
        if self.summary_prompt and "{messages}" not in self.summary_prompt:
            raise UsageError("summary_prompt must contain {messages}")


class Settings(Protocol):
    """What the summarization core reads (LangChain's params, and Deep Agents' which extend them)."""

    @property
    def trigger(self) -> str: ...
    @property
    def keep(self) -> str: ...
    @property
    def trim_tokens_to_summarize(self) -> int | None: ...
    @property
    def chars_per_token(self) -> float: ...
    @property
    def summary_prompt(self) -> str: ...


class LangChainSummarization:
    """One instance per replay: the usage each AI message reported, and per-entry message caches."""

    name = "langchain"
    prompt_template = DEFAULT_SUMMARY_PROMPT

    def __init__(self, p: Settings) -> None:
        self.p = p
        self.trigger = parse_clauses(p.trigger)
        (((self.keep_kind, self.keep_value),),) = parse_clauses(p.keep, "keep")
        self.usage: dict[str, int] = {}  # AI message id -> usage_metadata total_tokens
        self.lc_cache: dict[int, tuple[Entry, list[LCMessage]]] = {}
        self.memo: dict[int, tuple[LCMessage, float]] = {}
        # the view's messages as last built: the view and its revision, the list, where each entry's begin, the
        # lowest position each message id was built at, and where a changed usage asks to build again from
        self._lc_view: tuple[SessionView, int] | None = None
        self._lc_out: list[LCMessage] = []
        self._lc_starts: list[int] = []
        self._lc_first: dict[str, int] = {}
        self._lc_redo = 1 << 62

    # --- counting -----------------------------------------------------------------------------------------

    def messages(self, s: SessionView, start: int) -> list[LCMessage]:
        """The state's LangChain messages (view entries from ``start``), each entry converted once. The list
        of the whole view is kept as it grows and built again from where the view diff says it changed (or
        where an AI message's reported usage changed); the caller gets a copy of its part from ``start``."""
        entries = s.entries
        c, out, starts = self._lc_view, self._lc_out, self._lc_starts
        redo = min(s.unchanged_below(c[1]), self._lc_redo) if c is not None and c[0] is s else 0
        redo = min(redo, len(starts), len(entries))
        if redo < len(starts):
            del out[starts[redo]:], starts[redo:]
        first = self._lc_first
        for k in range(len(starts), len(entries)):
            e = entries[k]
            starts.append(len(out))
            if first.get(e.id, len(entries)) > k:
                first[e.id] = k
            hit = self.lc_cache.get(id(e))
            if hit is None or hit[0] is not e or (hit[1] and hit[1][0].total_tokens != self.usage.get(e.id)
                                                  and e.role == "assistant"):
                hit = (e, entry_messages(e, k, self.usage))
                self.lc_cache[id(e)] = hit
            elif hit[1] and hit[1][0].entry != k:  # the entry moved (after a compaction): re-anchor it
                hit = (e, [replace(m, entry=k) for m in hit[1]])
                self.lc_cache[id(e)] = hit
            out.extend(hit[1])
        self._lc_view, self._lc_redo = (s, s.revision), 1 << 62
        return out[starts[start]:] if start < len(starts) else []

    def count(self, messages: Sequence[LCMessage], scaled: bool = True, prefix: int = 0) -> int:
        return count_tokens_approximately(messages, chars_per_token=self.p.chars_per_token,
                                          use_usage_metadata_scaling=scaled, prefix_tokens=prefix, memo=self.memo)

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        if s.entries and s.entries[-1].role == "assistant":
            key, total = s.entries[-1].id, u.input + u.output
            if self.usage.get(key) != total and key in self._lc_first:  # its messages were made without it
                self._lc_redo = min(self._lc_redo, self._lc_first[key])
            self.usage[key] = total
        return ()

    def wake(self, s: SessionView) -> Wake:
        """Without a trigger it never summarizes automatically; with one, its count rests on the usage each
        AI message reported (recorded after every step): asked every question."""
        return NEVER if not self.trigger else NEXT_QUESTION

    # --- the trigger ----------------------------------------------------------------------------------------

    def threshold(self, s: SessionView, kind: str, value: float) -> int:
        if kind == "fraction":
            return max(1, int(s.limits.input_limit * value))
        return int(value)

    def reported(self, messages: Sequence[LCMessage], threshold: int) -> bool:
        """The last AI message's reported total reaches the threshold (``_should_summarize_based_on_...``)."""
        last = next((m for m in reversed(messages) if m.type == "ai"), None)
        return bool(last is not None and last.total_tokens and last.total_tokens >= threshold)

    def should_summarize(self, s: SessionView, messages: Sequence[LCMessage], total: int) -> bool:
        for clause in self.trigger:
            met = True
            for kind, value in clause:
                if kind == "messages":
                    met = len(messages) >= value
                else:
                    limit = self.threshold(s, kind, value)
                    met = total >= limit or self.reported(messages, limit)
                if not met:
                    break
            if met:
                return True
        return False

    # --- the cutoff -----------------------------------------------------------------------------------------

    def cutoff(self, s: SessionView, messages: list[LCMessage]) -> int:
        """``_determine_cutoff_index``: an index into ``messages``; 0 = nothing to summarize."""
        if self.keep_kind == "messages":
            keep = int(self.keep_value)
            return 0 if len(messages) <= keep else safe_cutoff_point(messages, len(messages) - keep)
        if not messages:
            return 0
        target = max(1, self.threshold(s, self.keep_kind, self.keep_value))
        if self.count(messages) <= target:
            return 0
        left, right, candidate = 0, len(messages), len(messages)
        for _ in range(len(messages).bit_length() + 1):
            if left >= right:
                break
            mid = (left + right) // 2
            if self.count(messages[mid:], scaled=False) <= target:
                candidate, right = mid, mid
            else:
                left = mid + 1
        if candidate == len(messages):
            candidate = left
        if candidate >= len(messages):
            if len(messages) == 1:
                return 0
            candidate = len(messages) - 1
        return safe_cutoff_point(messages, candidate)

    # --- the action -----------------------------------------------------------------------------------------

    def before_step(self, s: SessionView) -> Sequence[Action]:
        head = system_head(s)
        messages = self.messages(s, head)
        if not self.trigger or not self.should_summarize(s, messages, self.count(messages)):
            return ()
        act = self.summarize(s, head, messages)
        return [act] if act is not None else ()

    def summarize(self, s: SessionView, head: int, messages: list[LCMessage], reason: str = "auto",
                  prefix: str = SUMMARY_PREFIX, suffix: str = "") -> Compact | None:
        c = self.cutoff(s, messages)
        if c <= 0:
            return None
        first_kept = entry_boundary(messages, c, len(s.entries))
        span = [m for m in messages if m.entry < first_kept]
        trimmed = span if self.p.trim_tokens_to_summarize is None else trim_last(
            span, self.p.trim_tokens_to_summarize, self.count, allow_partial=True, start_on="human",
            include_system=True)
        request: SummaryRequest | None = None
        text = NO_HISTORY if not span else TOO_LONG if not trimmed else ""
        if not text:
            template = self.p.summary_prompt or self.prompt_template
            prompt = template.format(messages=buffer_string_xml(trimmed)).rstrip()
            request = SummaryRequest(system="", prompt=(Message("langchain-summary", "user", (Text(prompt),)),),
                                     source=source_messages(s.entries, trimmed),
                                     meta={"trimmed_messages": len(trimmed), "span_messages": len(span)})
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in s.entries[:head]),
                                  Insert("user", prefix, suffix, with_summary=True, origin="summary"),
                                  *(Keep(e.id) for e in s.entries[first_kept:]))
        return Compact(reason, view, request, on_failure="unchanged", summary_text=text,
                       meta={"cutoff_messages": c, "kept_from": first_kept})


def system_head(s: SessionView) -> int:
    """The view's leading system messages: the agent's system prompt, a request parameter, not state."""
    head = 0
    while head < len(s.entries) and s.entries[head].role == "system":
        head += 1
    return head


def safe_cutoff_point(messages: Sequence[LCMessage], cutoff: int) -> int:
    """``_find_safe_cutoff_point``: a cutoff on a tool result moves back to the AI message that called it
    (forward past the tool results when none did)."""
    if cutoff >= len(messages) or messages[cutoff].type != "tool":
        return cutoff
    ids: set[str] = set()
    idx = cutoff
    while idx < len(messages) and messages[idx].type == "tool":
        if messages[idx].tool_call_id:
            ids.add(messages[idx].tool_call_id)
        idx += 1
    for i in range(cutoff - 1, -1, -1):
        m = messages[i]
        if m.type == "ai" and m.tool_calls and ids & {tc.get("id") for tc in m.tool_calls if tc.get("id")}:
            return i
    return idx


def entry_boundary(messages: Sequence[LCMessage], cutoff: int, n_entries: int) -> int:
    """The view position of the first kept entry: a cutoff inside one entry's messages (its tool results
    split from text it also carries) moves to the next entry, summarizing more, as the source leans."""
    if cutoff >= len(messages):
        return n_entries
    k = messages[cutoff].entry
    if cutoff > 0 and messages[cutoff - 1].entry == k:
        nxt = next((m.entry for m in messages[cutoff:] if m.entry != k), None)
        return nxt if nxt is not None else n_entries
    return k


@strategy("langchain", params=LangChainParams,
          upstream="langchain-ai/langchain SummarizationMiddleware (langchain 1.5.0, libs/langchain_v1)",
          summary="before each call, on a trigger (none by default) summarize all but the last 20 messages",
          presets={"docs": {"trigger": "tokens:4000", "keep": "messages:20"},
                   "anthropic": {"chars_per_token": ANTHROPIC_CHARS_PER_TOKEN}})
def langchain(p: LangChainParams) -> LangChainSummarization:
    return LangChainSummarization(p)
