"""``compbench.strategies.round_chained`` — ``round-chained``: seed 004's TypeScript compaction layer (Vercel AI SDK
``prepareStep``).

To the letter in its functions (estimator, threshold, selection, prompts, chaining, failure), except for
the life of the compacted view. The messages ``prepareStep`` returns are what that one step sends (AI SDK
``prepare-step.ts``); the next step is built again from the SDK's own list (initial messages and every
response), so run literally the seed would re-summarize the whole history at every step past the
threshold, the compacted view persisting only through its database (``markMessagesCompacted``, with the
``compactedMessageIds`` the seed leaves empty). Modelled is the design's intent, a persistent compacted
view ("Messages [Summary₁, 41..80] accumulate"): the compacted view replaces the history, later steps
append to it. The window is the seed's: ``prepareStep`` calls ``shouldCompact(stepMessages)`` with no
config, so ``DEFAULT_CONFIG``'s 128k applies whatever the model (threshold 93,600); ``preset=window``
(``model_context_limit=none``) follows the simulated window, as a caller passing ``getContextLimit`` would.

Pre-turn trigger: ``messages.length > recentMessagesToKeep + 1`` and ``estimateMessagesTokens(messages)
>= floor((modelContextLimit - systemReserve - outputReserve - safetyBuffer) * thresholdPercent)``
(93,600 for 128k). The estimator is the seed's: per message 2 + ``ceil(length / 4)`` of every text, tool
name, ``JSON.stringify(args)`` and ``JSON.stringify(result)``. Selection keeps ``messages[0]`` (the seed
assumes it is the system message) and the last ``keepLast`` messages, moving the boundary back over
``tool`` messages; a previous summary at ``messages[1]`` (an assistant string starting with ``## Session
Summary``) is passed to the summarizer, not re-summarized. New view: ``[messages[0], summary, ...kept]``.
A failed summary leaves the messages unchanged (``safeCompact``).

Faithful quirks, kept on purpose and pinned by tests:

* ``messages`` is the view as is. With no system message in the transcript, index 0 is the first user
  message: the seed still treats it as "system", so it is kept verbatim forever and never summarized.
* The round number comes from the last *saved* event: ``safeCompact`` also saves the round-0 event of a
  no-op compaction, so after a no-op the next summary is round 1 again.
* The instruction asks for ``### Session Summary (...)`` (three hashes) while detection wants ``## Session
  Summary``; the seed's own summary template uses two. The request carries ``meta["heading"]`` with the
  two-hash form (the extractive summarizer honours it); a real model following the instruction literally
  would produce an undetectable summary, which then gets summarized as an ordinary message.
* The original task is read from the *current* messages: after round 1 it is the first user message
  still in the view (or messages[0] itself), not necessarily the session's first request.

JavaScript fidelity: ``length`` counts UTF-16 code units (a non-BMP character counts 2);
``JSON.stringify`` of a string equals ``json.dumps(..., ensure_ascii=False)`` except for lone surrogates
(JS escapes them as ``\\udxxx``; reproduced). Tool arguments are re-serialized compactly as
``JSON.stringify(JSON.parse(args))`` would: integer-like keys first, JS number formatting; integers beyond
2**53 are rounded as doubles; arguments that are not JSON are treated as one string. A slice that would cut
a surrogate pair drops the half (JS would keep a lone surrogate, which could not be stored as UTF-8).
Reasoning parts are not context (the API does not resend them) and are left out.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from compbench.sdk import (
    Action,
    Compact,
    CompactionEvent,
    Entry,
    Insert,
    Keep,
    Media,
    Message,
    Reasoning,
    SessionView,
    Slot,
    SummaryRequest,
    Text,
    ToolCall,
    ToolResult,
    Usage,
    Wake,
)
from compbench.sdk.registry import param, strategy

MODEL_CONTEXT_LIMIT = 128_000  # seed 004 DEFAULT_CONFIG.modelContextLimit
SYSTEM_RESERVE = 2_000  # seed 004 DEFAULT_CONFIG.systemReserve
OUTPUT_RESERVE = 4_000  # seed 004 DEFAULT_CONFIG.outputReserve
SAFETY_BUFFER = 5_000  # seed 004 DEFAULT_CONFIG.safetyBuffer
THRESHOLD_PERCENT = 0.80  # seed 004 DEFAULT_CONFIG.thresholdPercent
RECENT_MESSAGES_TO_KEEP = 10  # seed 004 DEFAULT_CONFIG.recentMessagesToKeep
MAX_TOKENS = 1_000  # seed 004 generateSummary maxTokens ("some buffer over 800 target")
ROLE_TOKENS = 2  # seed 004 estimateMessagesTokens: "Role contributes ~2 tokens"
RESULT_PREVIEW = 500  # seed 004 formatMessagesForSummary: JSON.stringify(result).slice(0, 500)
CONTENT_LIMIT = 2_000  # seed 004 formatMessagesForSummary: "Truncate very long content"
SUMMARY_PREFIX = "## Session Summary"  # seed 004 selectMessagesToCompact detection

SYSTEM_PROMPT = """You are summarizing a coding agent's conversation history.
Your summary will replace the compacted messages, so preserve ALL information 
needed to continue the task successfully.

CRITICAL: Be thorough but concise. Missing information cannot be recovered."""  # seed 004 generateSummary, verbatim (trailing space included)

NO_PREVIOUS = "None - this is the first compaction round."  # seed 004
UNKNOWN_TASK = "Unknown task"  # seed 004 extractOriginalTask

USER_PROMPT = """## Previous Summary
{previous}

## Original User Task
{task}

## Messages to Summarize
{messages}

## Instructions
Create a summary with these EXACT sections:

### Session Summary (Compaction Round {round})

#### Original Task
[Preserve the user's original request verbatim]

#### Completed Work
| File/Component | Action | Description |
|----------------|--------|-------------|
[List each file touched with what was done]

#### Key Technical Decisions
- [Bullet list of choices that affect future work]
- [Include dependencies installed, patterns used, etc.]

#### Current State
- Working on: [what's in progress]
- Last completed: [most recent accomplishment]

#### Pending Work
- [ ] [Remaining items as checklist]

#### Errors & Resolutions
[Only include if errors were encountered. Format: error \u2192 resolution]

## Constraints
- Maximum 800 tokens
- Use tables and bullet points for density
- Include exact file paths
- No code blocks unless absolutely critical
- If previous summary exists, INTEGRATE (don't duplicate) its content"""  # seed 004 generateSummary, verbatim


@dataclass(frozen=True)
class RoundChainedParams:
    """Seed 004's ``CompactionConfig`` (``DEFAULT_CONFIG``); ``model_context_limit`` None = the simulated window."""

    model_context_limit: int | None = param(
        MODEL_CONTEXT_LIMIT,
        "The window the threshold is computed from (seed 004's 128k whatever the model; None: the "
        "simulated window).")
    system_reserve: int = param(SYSTEM_RESERVE, "Tokens reserved for the system prompt.")
    output_reserve: int = param(OUTPUT_RESERVE, "Tokens reserved for the reply.")
    safety_buffer: int = param(SAFETY_BUFFER, "Extra tokens kept free.")
    threshold_percent: float = param(THRESHOLD_PERCENT, "Compact at this share of the available tokens (0.8).", hi=1)
    recent_messages_to_keep: int = param(
        RECENT_MESSAGES_TO_KEEP, "Newest messages kept verbatim, with their tool-call pairs (10).")
    max_tokens: int = param(MAX_TOKENS, "Output budget of the round summary.")


# --- JavaScript semantics -----------------------------------------------------------------------------

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")


def js_len(s: str) -> int:
    """``String.prototype.length``: UTF-16 code units."""
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def js_slice(s: str, n: int) -> str:
    """``s.slice(0, n)`` in UTF-16 units; a cut surrogate pair loses its half (see module docstring)."""
    if len(s) <= n or js_len(s) == len(s):
        return s[:n]
    units = 0
    for i, ch in enumerate(s):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > n:
            return s[:i]
    return s


def estimate_tokens(text: str) -> int:
    """Seed 004 ``estimateTokens``: ``Math.ceil(text.length / 4)``, 0 for empty text."""
    return math.ceil(js_len(text) / 4) if text else 0


def _escape_surrogate(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def _js_number(x: float) -> str:
    """``Number.prototype.toString`` (ECMA-262 Number::toString) from Python's shortest repr."""
    if x != x or x in (math.inf, -math.inf):
        return "null"  # JSON.stringify(NaN/Infinity)
    if x == 0:
        return "0"
    if x < 0:
        return "-" + _js_number(-x)
    _, digits_t, exp = Decimal(repr(x)).normalize().as_tuple()
    digits = "".join(map(str, digits_t))
    k = len(digits)
    n = k + int(exp)  # value = 0.digits * 10**n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    e = n - 1
    mant = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mant}e{'+' if e >= 0 else '-'}{abs(e)}"


def js_stringify(v: Any) -> str:
    """``JSON.stringify`` of a parsed JSON value (compact, JS key order and number formatting)."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v) if abs(v) < 2**53 else _js_number(float(v))
    if isinstance(v, float):
        return _js_number(v)
    if isinstance(v, str):
        return _LONE_SURROGATE.sub(_escape_surrogate, json.dumps(v, ensure_ascii=False))
    if isinstance(v, list):
        return "[" + ",".join(js_stringify(x) for x in v) + "]"
    if isinstance(v, dict):
        index_keys = sorted((k for k in v if _ARRAY_INDEX.fullmatch(k) and int(k) < 2**32 - 1), key=int)
        keys = index_keys + [k for k in v if k not in set(index_keys)]
        return "{" + ",".join(js_stringify(k) + ":" + js_stringify(v[k]) for k in keys) + "}"
    raise TypeError(f"not a JSON value: {type(v).__name__}")


def _reject_constant(name: str) -> Any:
    raise ValueError(name)  # JSON.parse rejects NaN/Infinity


def args_json(args: str) -> str:
    """``JSON.stringify(part.args)`` where ``args`` is the object the model's JSON text parses to."""
    try:
        return js_stringify(json.loads(args, parse_constant=_reject_constant))
    except (ValueError, RecursionError):
        return js_stringify(args)  # not JSON (or absurdly deep): the SDK would carry the raw text


# --- the seed's functions over the view ---------------------------------------------------------------


def _content_string(m: Message) -> str | None:
    """The message's ``content`` when it would be a plain string (text parts only), else None."""
    if m.parts and all(isinstance(p, Text) for p in m.parts):
        return "\n".join(p.text for p in m.parts if isinstance(p, Text))
    return None


def estimate_message(m: Message) -> int:
    """Seed 004 ``estimateMessagesTokens`` for one message."""
    total = ROLE_TOKENS
    for p in m.parts:
        if isinstance(p, Text):
            total += estimate_tokens(p.text)
        elif isinstance(p, ToolCall):
            total += estimate_tokens(p.name) + estimate_tokens(args_json(p.args))
        elif isinstance(p, ToolResult):
            total += estimate_tokens(js_stringify(p.output))
    return total


def calculate_threshold(p: RoundChainedParams, window: int) -> int:
    """Seed 004 ``calculateThreshold``: floor((limit - reserves) * percent)."""
    limit = p.model_context_limit if p.model_context_limit is not None else window
    return math.floor((limit - p.system_reserve - p.output_reserve - p.safety_buffer) * p.threshold_percent)


def format_messages_for_summary(messages: Sequence[Message]) -> str:
    """Seed 004 ``formatMessagesForSummary``."""
    blocks = []
    for idx, m in enumerate(messages):
        pieces = []
        for p in m.parts:
            if isinstance(p, Text):
                pieces.append(p.text)
            elif isinstance(p, ToolCall):
                pieces.append(f"[Tool: {p.name}({args_json(p.args)})]")
            elif isinstance(p, ToolResult):
                pieces.append(f"[Result: {js_slice(js_stringify(p.output), RESULT_PREVIEW)}...]")
            elif isinstance(p, Media):
                pieces.append("")
        content = "\n".join(pieces)
        if js_len(content) > CONTENT_LIMIT:
            content = js_slice(content, CONTENT_LIMIT) + "\n[...truncated...]"
        blocks.append(f"[{idx}] {m.role.upper()}:\n{content}")
    return "\n\n---\n\n".join(blocks)


def original_task(messages: Sequence[Message]) -> str:
    """Seed 004 ``extractOriginalTask``: the first user message with string content."""
    for m in messages:
        if m.role == "user":
            text = _content_string(m)
            if text is not None:
                return text
    return UNKNOWN_TASK


def select(entries: Sequence[Entry], keep_last: int) -> tuple[int, int, str | None] | None:
    """Seed 004 ``selectMessagesToCompact`` over view entries: ``(compactionStartIndex, boundaryIndex,
    previousSummary)`` (compact ``[start, boundary)``), or None when it returns nothing to compact."""
    if len(entries) <= keep_last + 1:
        return None
    boundary = len(entries) - keep_last
    while boundary > 1 and entries[boundary].role == "tool":
        boundary -= 1
    previous = None
    start = 1
    second = _content_string(entries[1].message) if entries[1].role == "assistant" else None
    if second is not None and second.startswith(SUMMARY_PREFIX):
        previous, start = second, 2
    if boundary <= start:
        return None
    return start, boundary, previous


def _visible(m: Message) -> Message:
    """Drop reasoning: the API does not resend it, so the seed's message array never holds it."""
    if any(isinstance(p, Reasoning) for p in m.parts):
        return Message(m.id, m.role, tuple(p for p in m.parts if not isinstance(p, Reasoning)), m.usage, m.meta)
    return m


# Estimates of unpruned recorded messages, shared through the run's replay context: the replays of one
# transcript (a grid, a diverged shadow replayed again) estimate each message once.
ESTIMATES = "round-chained.estimate"


class RoundChained:
    """One instance per replay: caches per-message estimates and the saved round number."""

    name = "round-chained"

    def __init__(self, p: RoundChainedParams) -> None:
        self.p = p
        self._last_round = 0  # getLastCompactionEvent(sessionId)?.round ?? 0
        self._saved = -1  # the seq of the last compaction event read into _last_round
        self._estimates: dict[tuple[str, int, int], int] = {}
        self._sum = 0
        self._sum_n = 0
        self._at: tuple[SessionView, int] | None = None  # the view and revision the running sum is of

    def _estimate(self, s: SessionView) -> int:
        """``estimateMessagesTokens(view)`` as a running sum: while the view's revision is unchanged the loop
        only appends to it, so only new entries are estimated (each once)."""
        entries = s.entries
        n = self._sum_n
        if self._at is None or self._at[0] is not s or self._at[1] != s.revision:
            n, self._sum, self._at = 0, 0, (s, s.revision)
        shared = s.memo(ESTIMATES)
        for e in entries[n:]:
            if not e.pruned:  # a recorded message's estimate, shared with the transcript's other replays
                est = shared.get(e.message)
                if est is None:
                    est = shared.put(e.message, estimate_message(_visible(e.message)))
                self._sum += est
                continue
            key = (e.id, e.index, len(e.pruned))
            est = self._estimates.get(key)
            if est is None:
                est = self._estimates[key] = estimate_message(_visible(e.rendered()))
            self._sum += est
        self._sum_n = len(entries)
        return self._sum

    def before_step(self, s: SessionView) -> Sequence[Action]:
        ev = s.last_event  # its own last compaction: saved with its round when the summary succeeded
        if isinstance(ev, CompactionEvent) and ev.ok and ev.seq != self._saved:
            self._saved, self._last_round = ev.seq, int(ev.meta["round"])
        keep = self.p.recent_messages_to_keep
        if len(s.entries) <= keep + 1:  # shouldCompact: nothing to compact
            return ()
        if self._estimate(s) < calculate_threshold(self.p, s.limits.context_window):
            return ()
        sel = select(s.entries, keep)
        if sel is None:
            self._last_round = 0  # safeCompact saves compact()'s round-0 event of a no-op
            return ()
        start, boundary, previous = sel
        round_ = self._last_round + 1
        messages = [_visible(m) for m in s.rendered()]
        source = tuple(messages[start:boundary])
        prompt = USER_PROMPT.format(previous=previous if previous is not None else NO_PREVIOUS,
                                    task=original_task(messages), messages=format_messages_for_summary(source),
                                    round=round_)
        request = SummaryRequest(
            system=SYSTEM_PROMPT, prompt=(Message("round-chained:prompt", "user", (Text(prompt),)),),
            source=source, max_output_tokens=self.p.max_tokens, previous_summary=previous,
            meta={"heading": f"{SUMMARY_PREFIX} (Compaction Round {round_})", "round": round_})
        ids = [e.id for e in s.entries]
        new_view: tuple[Slot, ...] = (Keep(ids[0]), Insert("assistant", with_summary=True, origin="summary",
                                                           meta={"round": round_}),
                                      *(Keep(i) for i in ids[boundary:]))
        return (Compact(f"estimate over threshold (round {round_})", new_view, request, on_failure="unchanged",
                        meta={"round": round_, "compacted": boundary - start}),)

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        """Its estimate of the view reaches the threshold: each new message adds its own estimate."""
        threshold = calculate_threshold(self.p, s.limits.context_window)
        return Wake(grown=(message_estimate, threshold - self._estimate(s)))


def message_estimate(m: Message) -> int:
    """A recorded message's estimate as the view carries it (the wake's weight)."""
    return estimate_message(_visible(m))


@strategy("round-chained", params=RoundChainedParams, upstream="seed 004",
          summary="chars/4 estimator, 80% of available, keep last 10 with tool pairs, chained round summaries",
          presets={"window": {"model_context_limit": None}})
def round_chained(p: RoundChainedParams) -> RoundChained:
    return RoundChained(p)
