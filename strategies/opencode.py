"""``compbench.strategies.opencode`` — ``opencode``: OpenCode's compaction (seeds 000 + 001; 001 is the precise one).

Seed preset, step by step:

* After each step, ``isOverflow`` on the step's usage: total = input + cache.read + output, where
  OpenCode's ``tokens.input`` excludes both cache reads and cache writes (the AI SDK's Anthropic
  ``inputTokens``). Cache writes are therefore *not* counted: in compbench's terms (``u.input`` is the
  whole prompt) total = ``u.input − u.cache_write + u.output``. With compbench's simulated usage every
  uncached prompt token is a cache write (Anthropic-style caching), so the count is the cached prefix plus
  the output: it lags the context by the step's new tokens, as OpenCode's did for Anthropic models; a
  recorded OpenAI-style usage has no cache writes and counts the whole prompt. Usable =
  ``limit.input || (context − min(limit.output, 32000) || 32000)``; never when the context limit is 0 or
  ``auto`` is off. (OpenCode skips the check after a summary step; no replayed step is one.)
* Overflow queues a compaction marker (``SessionCompaction.create``), executed before the next call:
  OpenCode runs the step's tools before its next loop iteration, so their results are in the history.
* The compaction: a tool-less summarizer with seed 000 §6.1's system prompt gets the view as the model
  saw it (pruned outputs as the placeholder), the marker rendered as "What did we do so far?" (§6.3),
  and the final instruction of §6.2. 000 and 001 give the same instruction (001 line-wrapped); seed 002's
  "Summarize our conversation above..." is a later OpenCode text, so the seed preset uses 000/001's. The
  budget is the model's output ceiling. ``filterCompacted`` then keeps only the latest pivot: the view
  becomes [marker, summary (flagged ``summary``), "Continue if you have next steps"]. On failure the
  view stays and the next overflow triggers again.
* Prune (:mod:`.opencode_prune`): OpenCode prunes when its session loop ends, i.e. after a prompt has
  been answered and before the next one exists. The replay sees that moment when a new recorded user
  prompt arrives: ``before_step`` then prunes the view *without* the prompt(s) that just arrived, so
  the selection is the one OpenCode made at the end of the previous turn.
* Recorded system messages stay at the head of the view and out of the summarizer's prompt: OpenCode's
  system prompt is not a message, it is re-sent on every call and never summarized.

``preset=current`` follows anomalyco/opencode (sst/opencode moved there), pinned at the commit of
``packages/opencode/src/session/overflow.ts`` read in full, 08f74b9bb5a7, for the trigger (whose count
and usable are also compaction.ts's ``isOverflow`` at fd78ec63). The repository is over the size a
snapshot may have here, so the other files were read one by one from a file index at the commits named
below; no single tree holding all of them was checked out:

* ``session/overflow.ts`` (08f74b9b): the count is ``tokens.total || input + output + cache.read +
  cache.write`` (cache writes counted: ``u.input + u.output``) and ``>=`` usable (was ``>``); with a
  dedicated input limit, usable = ``limit.input − min(COMPACTION_BUFFER 20,000, maxOutputTokens)``;
  without one it is still ``context − min(limit.output, 32000)``. (The 20k reserve therefore only
  matters with an input limit.)
* ``session/compaction.ts``: a verbatim tail of whole user turns, newest first, within
  ``clamp(floor(usable × 0.25), 2,000, 15,000)`` tokens estimated as chars/4 of the turn's JSON model
  messages; the first turn that does not fit may be split at a message boundary; a tail starting at the
  first message means no tail. The head is serialized as ``[User]: …`` / ``[Assistant]: …`` /
  ``[Tool result]: …`` (outputs clipped to 2,000 chars) into one user message: anchor text (or the
  previous summary to update), SUMMARY_TEMPLATE, the conversation (core ``buildPrompt``, 8b9b5784);
  system prompt ``agent/prompt/compaction.txt`` (4ab22439). View: [marker, summary, tail…, continue].
* ``prune`` defaults off (``if (!cfg.compaction?.prune) return``); the continue text gained "or stop and
  ask for clarification…" (compaction.ts fd78ec63).

Which version gets which preset, the user's keys (``compaction.tail_turns``, ``preserve_recent_tokens``,
``reserved``) and Kilo Code's ``threshold_percent`` are in :mod:`.opencode_versions`, read off the published
packages: ``preset=1.3`` (no tail), ``preset=1.4`` (a tail of at most 2 turns within 8,000 tokens, 1.4.0-1.18.16),
``preset=current`` (every turn within 15,000, 1.18.17 on), ``preset=kilo``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from compbench.sdk import (
    Action,
    Compact,
    Entry,
    Insert,
    Keep,
    Message,
    ModelLimits,
    Prune,
    SessionView,
    SummaryRequest,
    Text,
    Usage,
    Wake,
)
from compbench.sdk.registry import param, strategy
from compbench.strategies.opencode_prompts import (
    CONTINUE_TEXT,
    INSTRUCTION,
    MARKER_TEXT,
    SYSTEM_PROMPT,
    SYSTEM_PROMPT_CURRENT,
)
from compbench.strategies.opencode_prune import (
    PLACEHOLDER,
    PRUNE_MINIMUM,
    PRUNE_PROTECT,
    PRUNE_PROTECTED_TOOLS,
    Outputs,
    walk,
)
from compbench.strategies.opencode_serialize import Extra, build_prompt, estimate, rendered, serialize
from compbench.strategies.opencode_versions import PRESETS, TOOL, version_preset

__all__ = ["PLACEHOLDER", "OpenCode", "OpenCodeParams", "estimate", "serialize", "version_preset"]

OUTPUT_TOKEN_MAX = 32_000  # seed 001: min(model.limit.output, 32000) || 32000

# --- preset current ------------------------------------------------------------------------------------
TAIL_RATIO = 0.25  # current: compaction.ts preserveRecentBudget, floor(usable * 0.25)
MIN_PRESERVE_RECENT_TOKENS = 2_000  # current: compaction.ts
MAX_PRESERVE_RECENT_TOKENS = 15_000  # current: compaction.ts preserveRecentBudget
KILO_ESTIMATE_FACTOR = 1.3  # Kilo Code overflow.ts b32ab174 FACTOR: its estimate of an outgoing request, inflated
PROMPTS = ("seed", "anchored")


@dataclass(frozen=True)
class OpenCodeParams:
    auto: bool = param(
        True, "Compact automatically when a step's tokens overflow the usable window (compaction.auto).")
    prune: bool = param(
        True, "Hide old tool outputs at each new prompt, past the protected newest ones (compaction.prune).")
    protect: int = param(PRUNE_PROTECT, "Tokens of the newest tool outputs never pruned (PRUNE_PROTECT).")
    minimum: int = param(PRUNE_MINIMUM, "Prune only when at least this many tokens can be hidden (PRUNE_MINIMUM).")
    protected_tools: tuple[str, ...] = param(
        PRUNE_PROTECTED_TOOLS, "Tools whose outputs are never pruned (e.g. skill).")
    output_cap: int = param(OUTPUT_TOKEN_MAX, "Cap on the output reserve and the summary budget (OUTPUT_TOKEN_MAX).")
    input_buffer: int = param(
        0, "Tokens kept free below a dedicated input limit (today's COMPACTION_BUFFER; 0 in the seed).")
    at_limit: bool = param(
        False, "Overflow when the count reaches the usable window (today's >=) rather than exceeds it (seed's >).")
    count_cache_write: bool = param(
        False,
        "Count cache-write tokens in the overflow total (today); the seed counts input + cache "
        "reads + output.")
    tail: bool = param(False, "Keep a verbatim tail of recent turns after the summary (OpenCode 1.4 on).")
    tail_turns: int | None = param(
        None, "The newest user turns the tail may keep (compaction.tail_turns; 0 keeps none; none: every turn "
              "within the budget, as 1.18.17 on; 1.4.0-1.18.16 default to 2).")
    tail_tokens: int | None = param(
        None, "The tail's budget in OpenCode's chars/4 estimate (compaction.preserve_recent_tokens; none: "
              "clamp(usable / 4, 2,000, tail_max)).")
    tail_max: int = param(MAX_PRESERVE_RECENT_TOKENS, "The default tail budget's ceiling (15,000 from 1.18.17; "
                                                      "8,000 before).")
    reserved: int | None = param(
        None, "Tokens kept free below a model's input limit, used as given (compaction.reserved; none: "
              "min(input_buffer, the output ceiling)).")
    threshold_percent: float | None = param(
        None, "Kilo Code's compaction.threshold_percent: compact at this share of the input limit (or window) "
              "when below usable, after a step and before a turn's first request (none: OpenCode's rule).", hi=100)
    prompt: str = param(
        "seed",
        "The summary request: 'seed' (history + marker + the seed's prompt) or 'anchored' (today's "
        "serialized head + template).")
    continue_message: bool = param(
        True, "Add the synthetic 'continue' user message after an automatic compaction (seed 000).")
    continue_text: str = param(CONTINUE_TEXT, "The text of that continue message.")


class OpenCode:
    name = "opencode"

    def __init__(self, p: OpenCodeParams) -> None:
        if p.prompt not in PROMPTS:
            raise ValueError(f"opencode: prompt must be one of {PROMPTS}, got {p.prompt!r}")
        self.p = p
        self.pending = False  # a compaction marker queued by the last overflow
        self.seen_user = ""  # the newest prompt already pruned for
        self._outputs: dict[int, tuple[Message, Outputs]] = {}  # prune's per-message outputs, this replay
        self._usable_for: ModelLimits | None = None
        self._usable = 0

    # --- overflow ------------------------------------------------------------------------------------
    def ceiling(self, s: SessionView) -> int:
        """``Math.min(limit.output, cap) || cap``: the output reserve and the summary budget."""
        return min(s.limits.max_output, self.p.output_cap) or self.p.output_cap

    def usable(self, s: SessionView) -> int:
        limits = s.limits
        if limits is self._usable_for:  # asked after every step of every grid configuration
            return self._usable
        if not limits.context_window:
            usable = 0  # overflow.ts: a model with limit.context 0 has no usable window and never overflows
        elif limits.max_input:
            reserved = self.p.reserved if self.p.reserved is not None else min(self.p.input_buffer, self.ceiling(s))
            usable = max(0, limits.max_input - reserved)  # compaction.reserved used as given
        else:
            usable = max(0, limits.context_window - self.ceiling(s))
        self._usable_for, self._usable = limits, usable
        return usable

    def limit(self, s: SessionView) -> int:
        """What the count is compared with: usable, or below it Kilo Code's ``threshold_percent`` of the input limit
        (or the window) (``KiloSessionOverflow.limit``)."""
        usable = self.usable(s)
        pct, limits = self.p.threshold_percent, s.limits
        window = limits.max_input or limits.context_window
        if pct is None or not limits.context_window or not window:
            return usable
        return min(usable, int(window * (pct / 100)))

    def is_overflow(self, s: SessionView, u: Usage) -> bool:
        if not self.p.auto or s.limits.context_window == 0:
            return False
        total = u.input + u.output if self.p.count_cache_write else u.input - u.cache_write + u.output
        return total >= self.limit(s) if self.p.at_limit else total > self.limit(s)

    def preflight(self, s: SessionView) -> bool:
        """Kilo Code's check before a turn's first request, with ``threshold_percent`` set: its estimate of the
        request (chars/4 of the messages' JSON × 1.3; the tool schemas it adds are not in a log) at the limit."""
        if self.p.threshold_percent is None or not self.p.auto or not s.limits.context_window:
            return False
        return math.ceil(estimate(s.entries) * KILO_ESTIMATE_FACTOR) >= self.limit(s)

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        if self.is_overflow(s, u):
            self.pending = True
        return ()

    def wake(self, s: SessionView) -> Wake:
        """A queued compaction runs at the next question; an overflow needs a step whose usage (input +
        output, at least the count it checks: cache writes are left out in the seed) passes the usable
        window; a prune, a new prompt."""
        if self.pending:
            return Wake(step=0)
        usage = None
        if self.p.auto and s.limits.context_window:
            usage = self.limit(s) if self.p.at_limit else self.limit(s) + 1
        return Wake(usage=usage, user=self.p.prune or self.p.threshold_percent is not None)

    # --- the next iteration: prune at a new prompt, then run a queued compaction ----------------------
    def before_step(self, s: SessionView) -> Sequence[Action]:
        actions: list[Action] = []
        extra: dict[str, dict[int, str]] = {}
        stop = self.new_prompt(s)
        if self.p.prune and stop is not None:
            pruned = self.prune(s, stop)
            if pruned is not None:
                actions.append(pruned)
                for msg_id, part, text in pruned.targets:
                    extra.setdefault(msg_id, {})[part] = text
        if not self.pending and stop is not None and self.preflight(s):
            self.pending = True  # Kilo's PreflightError: the compaction runs before the request
        if self.pending:
            self.pending = False
            actions.append(self.compact(s, extra))
        return actions

    def new_prompt(self, s: SessionView) -> int | None:
        """Where the prompts that arrived since the last step begin, if the view ends with a new one."""
        entries = s.entries
        if not entries or entries[-1].role != "user" or entries[-1].origin != "recorded" \
                or entries[-1].id == self.seen_user:
            return None
        self.seen_user = entries[-1].id
        stop = len(entries) - 1
        while stop > 0 and entries[stop - 1].role == "user" and entries[stop - 1].origin == "recorded":
            stop -= 1
        return stop

    def prune(self, s: SessionView, stop: int | None = None) -> Prune | None:
        """Seed 001 ``prune`` over ``s.entries[:stop]`` (the view starts at the latest pivot)."""
        # the walk does not depend on protect/minimum: a grid's shadows on this view reuse the leader's
        w = s.per_round(("opencode.prune.walk", stop, self.p.protected_tools),
                        lambda: walk(s.entries[:stop], self.p.protected_tools, cache=self._outputs))
        return w.choose(self.p.protect, self.p.minimum)

    # --- compaction ----------------------------------------------------------------------------------
    def manual(self, s: SessionView) -> Compact:
        """``/compact`` (``auto: false``): the same compaction, without the "Continue" message."""
        return self.compact(s, auto=False)

    def compact(self, s: SessionView, extra: Extra | None = None, auto: bool = True) -> Compact:
        extra = extra or {}
        entries = s.entries
        systems = [e for e in entries if e.role == "system"]
        history = [e for e in entries if e.role != "system"]
        prior = [e for e in history if e.origin == "summary"]
        previous = prior[-1].message.text if prior else None
        tail = self.tail_start(s, history) if self.p.tail else len(history)
        head = history[:tail]
        if self.p.prompt == "seed":
            shown = rendered(head, extra)
            marker = Message("opencode-marker", "user", (Text(MARKER_TEXT),))
            instruction = Message("opencode-instruction", "user", (Text(INSTRUCTION),))
            request = SummaryRequest(SYSTEM_PROMPT, (*shown, marker, instruction), shown, self.ceiling(s), previous)
        else:
            conversation = [e for e in head if e.origin not in ("marker", "summary")]
            text = build_prompt(previous, serialize(conversation, extra))
            prompt = Message("opencode-compaction", "user", (Text(text),))
            request = SummaryRequest(SYSTEM_PROMPT_CURRENT, (prompt,), rendered(conversation, extra),
                                     self.ceiling(s), previous)
        view: list[Keep | Insert] = [
            *(Keep(e.id) for e in systems),
            Insert("user", MARKER_TEXT, origin="marker"),
            Insert("assistant", with_summary=True, origin="summary", meta={"summary": True}),
            *(Keep(e.id) for e in history[tail:]),
        ]
        if self.p.continue_message and auto:
            view.append(Insert("user", self.p.continue_text, origin="synthetic"))
        return Compact("overflow (auto)" if auto else "manual", tuple(view), request, on_failure="unchanged",
                       meta={"tail": len(history) - tail})

    def tail_budget(self, s: SessionView) -> int:
        """``preserveRecentBudget``: ``compaction.preserve_recent_tokens``, else clamp(floor(usable × 0.25), 2,000,
        tail_max)."""
        if self.p.tail_tokens is not None:
            return self.p.tail_tokens
        return min(self.p.tail_max, max(MIN_PRESERVE_RECENT_TOKENS, int(self.usable(s) * TAIL_RATIO)))

    def tail_start(self, s: SessionView, history: Sequence[Entry]) -> int:
        """Current ``select``: where the verbatim tail begins in ``history`` (``len`` = no tail).

        Previous markers and summaries are not turns (OpenCode hides them from the selection); a turn is
        a user message and what follows it. A split never starts at a tool result: OpenCode keeps a call
        and its result in one message, so a message-level cut cannot orphan a result; ours must not.
        """
        limit = self.p.tail_turns
        if limit is not None and limit <= 0:
            return len(history)  # compaction.tail_turns 0: no tail
        budget = self.tail_budget(s)
        pos = [i for i, e in enumerate(history) if e.origin not in ("marker", "summary")]
        msgs = [history[i] for i in pos]
        starts = [k for k, e in enumerate(msgs) if e.role == "user"]
        turns = list(zip(starts, [*starts[1:], len(msgs)], strict=True))
        recent = turns if limit is None else turns[-limit:]  # all.slice(-limit)
        total, keep = 0, -1
        for start, end in reversed(recent):
            size = estimate(msgs[start:end])
            if total + size <= budget:
                total += size
                keep = start
                continue
            remaining = budget - total
            if remaining > 0:
                for k in range(start + 1, end):
                    if msgs[k].role != "tool" and estimate(msgs[k:end]) <= remaining:
                        keep = k
                        break
            break
        if keep <= 0:
            return len(history)
        return pos[keep]


@strategy("opencode", params=OpenCodeParams, upstream="seeds 000 + 001; current: anomalyco/opencode 08f74b9b, packages "
          "1.14.34-1.18.34", version="2",
          summary="post-step overflow, tool-less summary pivot, tool-output pruning (PROTECT 40k / MIN_PRUNE 20k); "
                  "from 1.4 a verbatim tail of recent turns", presets=PRESETS, tool=TOOL)
def opencode(p: OpenCodeParams) -> OpenCode:
    return OpenCode(p)
