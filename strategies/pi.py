"""``compbench.strategies.pi`` — ``pi``: the pi coding agent's compaction (seed 002, "Our Implementation Plan";
``preset=current``: pi-mono at commit 83378aad, 2026-03-15:
``packages/coding-agent/src/core/compaction/compaction.ts`` and ``core/agent-session.ts``). The summary requests'
texts are in :mod:`compbench.strategies.pi_summary`.

Seed: after every assistant message (``message_end``), ``contextTokens > contextWindow − reserveTokens``
(16,384) with contextTokens = the last usage's input + output + cacheRead + cacheWrite; keep the recent
``keepRecentTokens`` (20,000) verbatim, cutting only before a user message; never cross the previous
compaction's boundary; the summarizer sees the whole current context (so a new summary folds in the
previous one) with ``maxTokens = 0.8 × reserveTokens``; the summary becomes a user message with pi's prefix.

Where the seed cuts (:func:`seed_cut`). The plan keeps "the last keepLastMessages messages" and never cuts
mid-turn; its worked example keeps u6's whole turn when the count lands on a6: the cut moves *back* to
the user message opening the turn, as in pi's implementation of the plan (c89b1ec3, "the turn boundary
at or before the assistant we want to keep"). The plan does not say how keepRecentTokens is measured;
that implementation walked back over the assistant messages' reported usages, and so does the seed
preset: the oldest kept assistant is the one after the first whose usage is ``>= keepRecentTokens`` below
the newest. (On the real pi session, recorded by that version, this keeps exactly what pi kept, both
times; chars/4 estimates did not.) Taken literally the rule fails on the commonest session there is, one
prompt followed by many tool calls: the turn starts at the first message, so the first compaction
summarizes nothing and only adds its summary, and every later one keeps just what came since the previous
one (the turn began before that boundary). The turn rule exists so that a tool result is never separated
from the assistant message that called it; so when it leaves nothing to summarize, or the turn began
before the previous compaction, the cut is the oldest kept assistant message itself. That keeps every call
with its results and about keepRecentTokens, and it is what pi shipped five days later (a38e6190: "Can
cut at user, assistant ... messages (never tool results)"). The summary prefix is the plan's ("Another
language model…"); the code wrapped it in ``<summary>`` tags from c89b1ec3 on, as ``preset=current`` does.

Current: cut points are user *and* assistant messages, the cut moving *forward* to the first one at or
after the budget's last message (``findCutPoint``); a cut inside a turn summarizes that turn's prefix
separately. The threshold is checked at ``agent_end`` and before a new prompt (``_checkCompaction``), not
after each message: in a replay that is ``before_step`` when the view ends with newly recorded user
messages right after an assistant message (after a tool result they are steering messages, delivered
inside the run), and the compaction works on the session *without* them, which are kept after it. A
prompt the provider refuses (context overflow) is compacted and retried: ``before_step`` when the call
about to be made is larger than the model's input limit. Its threshold uses ``model.contextWindow``, the
overflow the provider's limit. The summarizer request is the serialized ``<conversation>`` with the
previous summary to UPDATE; read/modified files are appended; the details carried to the next compaction
are in ``Compact.meta``.

The prompt cache (``cache_write``, issue 41). ``generateSummary`` and ``generateTurnPrefixSummary`` call
``completeSimple`` with their own system prompt (``SUMMARIZATION_SYSTEM_PROMPT``) and the conversation serialized
as one text: nothing of the session's cached prefix is sent again, so the request reads nothing from the cache.
Their options name no ``cacheRetention``, so pi-ai's default applies (``resolveCacheRetention``: "short", or
"long" with ``PI_CACHE_RETENTION=long``), and its Anthropic provider marks the system prompt and the last user
message with ``cache_control``: the whole request is *written* to the cache (5 minutes, 1.25x the input price;
1 hour, 2x, on api.anthropic.com with "long") although no later call reads it. Read at pi-mono 83378aad
(``packages/coding-agent/src/core/compaction/compaction.ts`` ``generateSummary``, ``generateTurnPrefixSummary``;
``packages/ai/src/providers/anthropic.ts`` ``resolveCacheRetention``, ``getCacheControl``, ``buildParams``,
``convertMessages``) and in the newest published packages, ``@mariozechner/pi-coding-agent`` 0.73.1
(``dist/core/compaction/compaction.js``: the same calls, no ``cacheRetention``) with ``@mariozechner/pi-ai`` 0.73.1
(``dist/providers/anthropic.js``: the same default). So ``preset=current`` writes its summary requests to the
cache (charged at the cache-write price of the session's cache model; OpenAI and Gemini have no premium) and
reads none. A pi that sent them with ``cacheRetention: "none"`` (issue 41 reports one; no source or package read
shows it) is ``cache_write=false``. The seed keeps the plan's request: the whole context under the session's
own system prompt, which reads the session's cached prefix and writes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from compbench.sdk import (
    Action,
    Compact,
    CompactionEvent,
    Entry,
    Followup,
    Insert,
    Keep,
    Media,
    Message,
    Reasoning,
    SessionView,
    Setting,
    Slot,
    SummaryRequest,
    Text,
    Tool,
    ToolCall,
    ToolResult,
    Usage,
)
from compbench.sdk.registry import param, strategy
from compbench.strategies.pi_summary import (
    CURRENT_PREFIX,
    CURRENT_SUFFIX,
    NO_PRIOR_HISTORY,
    SEED_PREFIX,
    SEED_PROMPT,
    SPLIT_TURN_JOINER,
    SUMMARIZATION_PROMPT,
    SUMMARIZATION_SYSTEM_PROMPT,
    TURN_PREFIX_PROMPT,
    UPDATE_PROMPT,
    file_lists,
    format_file_ops,
    js_len,
    serialize,
    stringify,
)

RESERVE_TOKENS = 16_384  # seed 002 / compaction.ts DEFAULT_COMPACTION_SETTINGS
KEEP_RECENT_TOKENS = 20_000  # seed 002 / compaction.ts DEFAULT_COMPACTION_SETTINGS
SUMMARY_BUDGET = 0.8  # seed 002 / generateSummary: maxTokens = floor(0.8 * reserveTokens)
TURN_PREFIX_BUDGET = 0.5  # generateTurnPrefixSummary: floor(0.5 * reserveTokens)
IMAGE_CHARS = 4_800  # estimateTokens: an image counts as 4,800 characters


@dataclass(frozen=True)
class PiParams:
    reserve_tokens: int = param(
        RESERVE_TOKENS,
        "Tokens kept free for the reply: compact when the context exceeds window - reserveTokens "
        "(16,384).")
    keep_recent_tokens: int = param(
        KEEP_RECENT_TOKENS, "Tokens of the newest messages kept verbatim after a compaction (20,000).")
    enabled: bool = param(True, "Automatic compaction on (settings.compaction.enabled).")
    cut_at_assistant: bool = param(
        False, "Allow cuts before assistant messages too, moving forward (today's findCutPoint).")
    current_format: bool = param(
        False, "Today's serialized prompt, UPDATE prompt for chained summaries, <summary> message and file lists.")
    trigger: Literal["message_end", "agent_end"] = param(
        "message_end",
        "When the threshold is checked: after every assistant message ('message_end', seed) or at a "
        "run's end and before a prompt ('agent_end', today).")
    overflow_retry: bool = param(False, "Compact and retry when a prompt exceeds the provider's limit (today).")
    custom_instructions: str = param("", "Text added to the summary prompt (/compact's argument).")
    cache_write: bool = param(
        False, "The summary requests are written to the provider's prompt cache (pi-ai's default cacheRetention "
               "'short', today) and paid at the cache-write price; false: sent unmarked, as plain input.")


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
            chars += js_len(p.name) + js_len(stringify(p.args))
        elif m.role == "tool" and isinstance(p, ToolResult):
            chars += js_len(p.output)
        elif m.role == "tool" and isinstance(p, Media):
            chars += IMAGE_CHARS
    return math.ceil(chars / 4)


def budget_reached(entries: Sequence[Entry], start: int, stop: int, keep: int) -> int | None:
    """Walking back from ``stop``, the entry at which the estimates reach ``keepRecentTokens`` (``>=``), or
    None when everything since ``start`` is recent."""
    acc = 0
    for i in range(stop - 1, start - 1, -1):
        acc += estimate_tokens(entries[i].rendered())
        if acc >= keep:
            return i
    return None


def seed_cut(entries: Sequence[Entry], head: int, start: int, stop: int, keep: int,
             usages: Mapping[str, int]) -> int:
    """The seed's cut in ``entries[start:stop]`` (``head``: the first non-system entry), measured as pi
    measured it when the plan was built (c89b1ec3 ``findCutPoint``): walking back over the assistant
    messages' reported usages, the first whose difference from the newest reaches keepRecentTokens marks
    the oldest kept assistant as the one after it; the cut is the user message opening that one's turn.
    See the module docstring for where the turn rule cannot hold. Never a tool result."""
    users = [k for k in range(start, stop) if entries[k].role == "user"]
    calls = [(k, usages[entries[k].id]) for k in range(stop - 1, start - 1, -1) if entries[k].id in usages]
    recent = next((k for k in range(start, stop) if entries[k].role != "tool"), stop)  # keep all in range
    if not calls:  # "No usage info, keep last turn only"
        return users[-1] if users and users[-1] > head else recent
    newest = calls[0][1]
    for j in range(1, len(calls)):
        if newest - calls[j][1] >= keep:
            last_kept = calls[j - 1][0]
            turn = next((u for u in reversed(users) if u <= last_kept), None)
            if turn is not None and turn > head:  # the whole turn, with something before it to summarize
                return turn
            return last_kept  # one long turn: cut before the kept step's assistant message (a38e6190)
    return recent


def current_cut(entries: Sequence[Entry], start: int, stop: int, keep: int) -> int:
    """``findCutPoint``: the first user or assistant message at or after the budget's last message
    (default: the first one in range, i.e. keep everything)."""
    valid = [i for i in range(start, stop) if entries[i].role in ("user", "assistant")]
    if not valid:
        return start
    reached = budget_reached(entries, start, stop, keep)
    if reached is None:
        return valid[0]
    return next((c for c in valid if c >= reached), valid[0])


class Pi:
    name = "pi"

    def __init__(self, p: PiParams) -> None:
        self.p = p
        self.boundary: set[str] = set()  # kept ids of the last applied compaction: never cut there
        self.files: tuple[list[str], list[str]] = ([], [])  # its details (readFiles, modifiedFiles)
        # what the last proposed compaction sets once it applies (the loop applies it before asking again)
        self.proposed: tuple[set[str], tuple[list[str], list[str]]] | None = None
        self.usage_at = 0  # applied compactions when the last usage was reported (older usage is stale)
        self.usages: dict[str, int] = {}  # contextTokens each assistant message reported (seed: the cut)

    def _settle(self, s: SessionView) -> None:
        """Did the last proposed compaction apply? Its event says (a failed one changes nothing)."""
        if self.proposed is not None:
            if isinstance(s.last_event, CompactionEvent) and s.last_event.ok:
                self.boundary, self.files = self.proposed
            self.proposed = None

    def _over(self, s: SessionView, u: Usage) -> bool:
        """``shouldCompact``: contextTokens > contextWindow − reserveTokens, on the model's *context
        window* (``model.contextWindow``), not its input limit."""
        return u.input + u.output > s.limits.context_window - self.p.reserve_tokens

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        self._settle(s)
        self.usage_at = s.compactions
        last = s.entries[-1] if s.entries else None
        if last is not None and last.role == "assistant" and last.message.meta.get("stop_reason") != "aborted":
            self.usages[last.id] = u.input + u.output  # getAssistantUsage skips aborted messages
        if self.p.trigger != "message_end" or not self.p.enabled or not s.limits.context_window:
            return ()
        if not self._over(s, u):
            return ()
        return self._compact(s, "contextTokens > contextWindow - reserveTokens")

    def before_step(self, s: SessionView) -> Sequence[Action]:
        self._settle(s)
        if not self.p.enabled or not s.limits.context_window:
            return ()
        if self.p.trigger == "agent_end":
            stop = self.new_prompt(s)
            u = s.last_usage
            if stop is not None and u is not None and self.usage_at == s.compactions and self._over(s, u):
                return self._compact(s, "agent_end: contextTokens > contextWindow - reserveTokens", stop)
        if self.p.overflow_retry and s.context_tokens > s.limits.input_limit:
            return self._compact(s, "context overflow: compact and retry")
        return ()

    @staticmethod
    def new_prompt(s: SessionView) -> int | None:
        """Where the user messages that just arrived begin, when they follow an assistant message (the
        run ended: ``agent_end``, then the new prompt); None otherwise (after a tool result they are
        steering messages, inside the run)."""
        entries = s.entries
        stop = len(entries)
        while stop > 0 and entries[stop - 1].role == "user" and entries[stop - 1].origin == "recorded":
            stop -= 1
        if stop == len(entries) or stop == 0 or entries[stop - 1].role != "assistant":
            return None
        return stop

    def _compact(self, s: SessionView, reason: str, stop: int | None = None) -> Sequence[Action]:
        c = self.compact(s, reason, stop)
        return (c,) if c is not None else ()

    def manual(self, s: SessionView) -> Compact | None:
        """``/compact``: the same cut and summary, asked by the user."""
        self._settle(s)
        return self.compact(s, "manual")

    def compact(self, s: SessionView, reason: str, stop: int | None = None) -> Compact | None:
        """pi's ``compact()`` over ``entries[:stop]`` (the messages from ``stop`` on arrived after the
        check and are kept after the summary): cut at ``keepRecentTokens``, summarize what precedes it.
        None when nothing has happened since the last compaction ("Already compacted")."""
        entries = s.entries
        n = len(entries) if stop is None else stop
        head = 0
        while head < n and entries[head].role == "system":
            head += 1
        start = head
        while start < n and (entries[start].id in self.boundary or entries[start].origin == "summary"):
            start += 1  # never cross the previous compaction: its summary and kept messages
        if start >= n:
            return None
        keep = self.p.keep_recent_tokens
        cut = current_cut(entries, start, n, keep) if self.p.cut_at_assistant else seed_cut(
            entries, head, start, n, keep, self.usages)
        summaries = [e for e in entries[:n] if e.origin == "summary"]
        previous = _unwrap(summaries[-1].message.text) if summaries else None
        split = cut < n and entries[cut].role != "user"
        meta: dict[str, Any] = {"kept_messages": len(entries) - cut, "split_turn": split}
        if self.p.current_format:
            request, followups, fixed, insert, files = self._current(s, start, cut, previous, meta)
        else:
            request, followups, fixed, insert, files = self._seed(s, head, cut, n, previous)
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in entries[:head]), insert, *(Keep(e.id) for e in entries[cut:]))
        self.proposed = ({e.id for e in entries[cut:n]}, files)
        return Compact(reason, view, request, on_failure="unchanged", meta=meta, followups=followups,
                       summary_text=fixed)

    def _seed(self, s: SessionView, head: int, cut: int, n: int, previous: str | None) -> tuple[
            SummaryRequest, tuple[Followup, ...], str, Insert, tuple[list[str], list[str]]]:
        """Seed 002: the whole current context and the plan's prompt; the summary as a prefixed user message."""
        instruction = SEED_PROMPT + (f"\n\nAdditional focus: {self.p.custom_instructions}"
                                     if self.p.custom_instructions else "")
        prompt = (*s.rendered(0, n), Message("pi-compaction", "user", (Text(instruction),)))
        request = SummaryRequest("", prompt, s.rendered(head, cut), math.floor(SUMMARY_BUDGET * self.p.reserve_tokens),
                                 previous, {"split_turn": False})
        return request, (), "", Insert("user", SEED_PREFIX, with_summary=True, origin="summary"), ([], [])

    def _current(self, s: SessionView, start: int, cut: int, previous: str | None, meta: dict[str, Any]) -> tuple[
            SummaryRequest | None, tuple[Followup, ...], str, Insert, tuple[list[str], list[str]]]:
        """Today's ``compact()``: history and split-turn prefix asked separately and joined."""
        entries = s.entries
        turn_start = cut
        if cut < len(entries) and entries[cut].role != "user":  # findTurnStartIndex
            turn_start = next((i for i in range(cut, start - 1, -1) if entries[i].role == "user"), cut)
        split = turn_start != cut
        meta["split_turn"] = split
        history, prefix = s.rendered(start, turn_start), s.rendered(turn_start, cut)
        read, modified = file_lists(s.rendered(start, cut), *self.files)
        meta |= {"read_files": read, "modified_files": modified}
        insert = Insert("user", CURRENT_PREFIX, format_file_ops(read, modified) + CURRENT_SUFFIX,
                        with_summary=True, origin="summary")
        followups: tuple[Followup, ...] = ()
        if split:  # compact(): history and turn prefix asked in parallel, joined
            turn = f"<conversation>\n{serialize(prefix)}\n</conversation>\n\n{TURN_PREFIX_PROMPT}"
            followups = (Followup(SummaryRequest(
                SUMMARIZATION_SYSTEM_PROMPT, (Message("pi-turn-prefix", "user", (Text(turn),)),), prefix,
                math.floor(TURN_PREFIX_BUDGET * self.p.reserve_tokens), None, {"turn_prefix": True},
                cache_write=self.p.cache_write), SPLIT_TURN_JOINER),)
        source = history if split else s.rendered(start, cut)
        if not source:  # the split turn is all there is since the last compaction: the previous summary is dropped
            return None, followups, NO_PRIOR_HISTORY, insert, (read, modified)
        text = f"<conversation>\n{serialize(source)}\n</conversation>\n\n"
        if previous:
            text += f"<previous-summary>\n{previous}\n</previous-summary>\n\n"
        base = UPDATE_PROMPT if previous else SUMMARIZATION_PROMPT
        if self.p.custom_instructions:
            base += f"\n\nAdditional focus: {self.p.custom_instructions}"
        request = SummaryRequest(SUMMARIZATION_SYSTEM_PROMPT, (Message("pi-compaction", "user", (Text(text + base),)),),
                                 source, math.floor(SUMMARY_BUDGET * self.p.reserve_tokens), previous,
                                 {"split_turn": split, "history_messages": len(history)},
                                 cache_write=self.p.cache_write)
        return request, followups, "", insert, (read, modified)


def manual_compaction(tokens_before: int, window: int) -> str:
    """pi records no trigger: a compaction whose recorded tokensBefore is at or below its own auto-compaction
    threshold (``contextTokens > contextWindow − reserveTokens``) was a manual /compact; why, or "" (fidelity)."""
    threshold = window - RESERVE_TOKENS
    if tokens_before > threshold:
        return ""
    return (f"tokensBefore {tokens_before:,} <= window - reserveTokens = {window:,} - "
            f"{RESERVE_TOKENS:,} = {threshold:,}: pi could not have compacted by itself, so a manual /compact "
            "(trigger not compared)")


def _unwrap(text: str) -> str:
    for prefix in (SEED_PREFIX, CURRENT_PREFIX):
        if text.startswith(prefix):
            text = text[len(prefix):]
    return text.removesuffix(CURRENT_SUFFIX)


# What pi's users set (~/.pi/agent/settings.json or <project>/.pi/settings.json; pi-mono 83378aad
# settings-manager.ts, compaction.ts): no value is checked.
TOOL = Tool(
    "pi", ("pi",), newest="current", manual_compaction=manual_compaction,
    settings=(Setting("reserve_tokens", "compaction.reserveTokens", "~/.pi/agent/settings.json (or .pi/settings.json "
                      "in the project, which wins)", "16384",
                      '{"compaction": {"reserveTokens": {value}}}', sweep=(50_000,),
                      note="compacts when the context passes the window less this; the summary may use 80% of it"),
              Setting("keep_recent_tokens", "compaction.keepRecentTokens", "~/.pi/agent/settings.json (or "
                      ".pi/settings.json in the project, which wins)", "20000",
                      '{"compaction": {"keepRecentTokens": {value}}}', sweep=(8_000, 40_000),
                      note="the newest turns kept verbatim, cut at a turn boundary")))


@strategy("pi", params=PiParams, upstream="seed 002 (pi plan); current: pi-mono 83378aad compaction.ts, agent-session.ts",
          summary="reserveTokens 16384, keepRecentTokens 20000, cut at turn boundaries, chained summaries",
          presets={"current": {"cut_at_assistant": True, "current_format": True, "trigger": "agent_end",
                               "overflow_retry": True, "cache_write": True}}, tool=TOOL, version="2")
def pi(p: PiParams) -> Pi:
    return Pi(p)
