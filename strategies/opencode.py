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
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from compbench.sdk import (
    Action,
    Compact,
    Entry,
    Insert,
    Keep,
    Media,
    Message,
    ModelLimits,
    Prune,
    Reasoning,
    SessionView,
    Setting,
    SummaryRequest,
    Text,
    Tool,
    ToolCall,
    ToolResult,
    Usage,
    Wake,
    chars4_round,
)
from compbench.sdk.registry import param, strategy
from compbench.strategies.opencode_prompts import (
    ANCHOR_NEW,
    ANCHOR_UPDATE,
    CONTINUE_TEXT,
    CONTINUE_TEXT_CURRENT,
    INSTRUCTION,
    MARKER_TEXT,
    SUMMARY_TEMPLATE,
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

__all__ = ["PLACEHOLDER", "OpenCode", "OpenCodeParams"]

OUTPUT_TOKEN_MAX = 32_000  # seed 001: min(model.limit.output, 32000) || 32000

# --- preset current ------------------------------------------------------------------------------------
COMPACTION_BUFFER = 20_000  # current: session/overflow.ts 08f74b9b, reserve beside a dedicated input limit
TAIL_RATIO = 0.25  # current: compaction.ts preserveRecentBudget, floor(usable * 0.25)
MIN_PRESERVE_RECENT_TOKENS = 2_000  # current: compaction.ts
MAX_PRESERVE_RECENT_TOKENS = 15_000  # current: compaction.ts preserveRecentBudget
TOOL_OUTPUT_MAX_CHARS = 2_000  # current: compaction.ts serialize() clips each tool output
PROMPTS = ("seed", "anchored")

Extra = Mapping[str, Mapping[int, str]]  # prune marks decided in the same before_step, not yet applied


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
    tail: bool = param(False, "Keep a verbatim tail of recent turns after the summary (today's compaction).")
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
        if limits.max_input:
            usable = max(0, limits.max_input - min(self.p.input_buffer, self.ceiling(s)))
        else:
            usable = max(0, limits.context_window - self.ceiling(s))
        self._usable_for, self._usable = limits, usable
        return usable

    def is_overflow(self, s: SessionView, u: Usage) -> bool:
        if not self.p.auto or s.limits.context_window == 0:
            return False
        total = u.input + u.output if self.p.count_cache_write else u.input - u.cache_write + u.output
        return total >= self.usable(s) if self.p.at_limit else total > self.usable(s)

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
            usage = self.usable(s) if self.p.at_limit else self.usable(s) + 1
        return Wake(usage=usage, user=self.p.prune)

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
            shown = _rendered(head, extra)
            marker = Message("opencode-marker", "user", (Text(MARKER_TEXT),))
            instruction = Message("opencode-instruction", "user", (Text(INSTRUCTION),))
            request = SummaryRequest(SYSTEM_PROMPT, (*shown, marker, instruction), shown, self.ceiling(s), previous)
        else:
            conversation = [e for e in head if e.origin not in ("marker", "summary")]
            text = build_prompt(previous, serialize(conversation, extra))
            prompt = Message("opencode-compaction", "user", (Text(text),))
            request = SummaryRequest(SYSTEM_PROMPT_CURRENT, (prompt,), _rendered(conversation, extra),
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
        """Current ``preserveRecentBudget``: clamp(floor(usable × 0.25), 2,000, 15,000)."""
        return min(MAX_PRESERVE_RECENT_TOKENS, max(MIN_PRESERVE_RECENT_TOKENS, int(self.usable(s) * TAIL_RATIO)))

    def tail_start(self, s: SessionView, history: Sequence[Entry]) -> int:
        """Current ``select``: where the verbatim tail begins in ``history`` (``len`` = no tail).

        Previous markers and summaries are not turns (OpenCode hides them from the selection); a turn is
        a user message and what follows it. A split never starts at a tool result: OpenCode keeps a call
        and its result in one message, so a message-level cut cannot orphan a result; ours must not.
        """
        budget = self.tail_budget(s)
        pos = [i for i, e in enumerate(history) if e.origin not in ("marker", "summary")]
        msgs = [history[i] for i in pos]
        starts = [k for k, e in enumerate(msgs) if e.role == "user"]
        total, keep = 0, -1
        for start, end in reversed(list(zip(starts, [*starts[1:], len(msgs)], strict=True))):
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


# --- current: the summarizer's view of the head, and the tail's size estimate ----------------------------


def _rendered(entries: Sequence[Entry], extra: Extra) -> tuple[Message, ...]:
    """Messages as the model sees them, with prune marks decided in this same step applied."""
    out = []
    for e in entries:
        if e.id in extra:
            e = replace(e, pruned={**e.pruned, **extra[e.id]})
        out.append(e.rendered())
    return tuple(out)


def _clip(text: str) -> str:
    return text if len(text) <= TOOL_OUTPUT_MAX_CHARS else text[:TOOL_OUTPUT_MAX_CHARS] + "\n[truncated]"


def serialize(entries: Sequence[Entry], extra: Extra | None = None) -> str:
    """Current ``serialize``: one block a message (a call and its results share one), joined by blank lines."""
    blocks: list[str] = []
    for m in _rendered(entries, extra or {}):
        lines: list[str] = []
        if m.role == "user":
            text = "\n".join(p.text for p in m.parts if isinstance(p, Text) and p.text)
            lines += [f"[User]: {text}"] if text else []
            lines += [f"[Attached {p.mime or p.kind}: {p.name or 'file'}]" for p in m.parts if isinstance(p, Media)]
        for p in m.parts if m.role != "user" else ():
            if isinstance(p, Text) and p.text:
                lines.append(f"[Assistant]: {p.text}")
            elif isinstance(p, Reasoning) and p.text and not p.encrypted:
                lines.append(f"[Assistant reasoning]: {p.text}")
            elif isinstance(p, ToolCall):
                lines.append(f"[Assistant tool call]: {p.name}({p.args})")
            elif isinstance(p, ToolResult):
                lines.append(f"[Tool error]: {p.output}" if p.is_error else f"[Tool result]: {_clip(p.output)}")
        if not lines:
            continue
        if m.role == "tool" and blocks:
            blocks[-1] += "\n" + "\n".join(lines)
        else:
            blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def build_prompt(previous: str | None, conversation: str) -> str:
    """Core ``buildPrompt``: anchor (new, or update the previous summary), template, conversation."""
    anchor = ANCHOR_UPDATE.format(summary=previous) if previous else ANCHOR_NEW
    return "\n\n".join(x for x in (anchor, SUMMARY_TEMPLATE, conversation) if x)


def estimate(entries: Sequence[Entry]) -> int:
    """``Token.estimate(JSON.stringify(toModelMessages(turn)))``: chars/4 of compact JSON model messages.

    The message shape approximates the AI SDK's (role + typed content parts); lengths count code points
    where JavaScript counts UTF-16 units, so non-BMP text differs slightly.
    """
    msgs: list[dict[str, Any]] = []
    for m in (e.rendered() for e in entries):
        content: list[dict[str, Any]] = []
        for p in m.parts:
            if isinstance(p, Text):
                content.append({"type": "text", "text": p.text})
            elif isinstance(p, Reasoning) and not p.encrypted:
                content.append({"type": "reasoning", "text": p.text})
            elif isinstance(p, ToolCall):
                content.append({"type": "tool-call", "toolCallId": p.id, "toolName": p.name, "input": p.args})
            elif isinstance(p, ToolResult):
                content.append({"type": "tool-result", "toolCallId": p.call_id, "toolName": p.name,
                                "output": {"type": "text", "value": p.output}})
            elif isinstance(p, Media):
                content.append({"type": "file", "mediaType": p.mime or p.kind})
        msgs.append({"role": m.role, "content": content})
    return chars4_round(json.dumps(msgs, separators=(",", ":"), ensure_ascii=False))


# What OpenCode's users set (opencode.json "compaction"; anomalyco/opencode session/overflow.ts and compaction.ts
# at 08f74b9b): OPENCODE_DISABLE_AUTOCOMPACT / OPENCODE_DISABLE_PRUNE force the switches off.
# The versions each preset models, as far as real logs show: OpenCode 1.2.5's /compact kept no tail, as the seed
# (../shared/transcripts/opencode); 1.4.3's automatic compaction came past input - 20,000 on a model with an input
# limit, as preset current's overflow.ts (issue 32's held-out log); 1.3.x is inferred to be current's
PRESET_VERSIONS = {"seed": "1.2.x and earlier (1.2.5's log)", "current": "1.3 on (1.4.3's log; 1.3.x inferred)"}
TOOL = Tool(
    "OpenCode", ("opencode",), newest="current", version_preset=lambda v: version_preset(v),
    preset_versions=PRESET_VERSIONS,
    settings=(Setting("prune", "compaction.prune", "opencode.json", "on in the seeds' description, off in today's "
                      "code", '{"compaction": {"prune": {value}}}', sweep=(True, False),
                      note="protects the newest 40,000 estimated tokens of tool output; prunes only when it saves "
                      "20,000"),
              Setting("auto", "compaction.auto", "opencode.json", "true", '{"compaction": {"auto": {value}}}',
                      note="false (or OPENCODE_DISABLE_AUTOCOMPACT=1) never compacts by itself"),
              Setting("input_buffer", "compaction.reserved", "opencode.json", "min(20,000, the model's output "
                      "limit)", '{"compaction": {"reserved": {value}}}',
                      note="used only for a model that declares an input limit")))


@strategy("opencode", params=OpenCodeParams, source="seeds 000 + 001; current: anomalyco/opencode 08f74b9b",
          summary="post-step overflow, tool-less summary pivot, tool-output pruning (PROTECT 40k / MIN_PRUNE 20k)",
          presets={"current": {
              "input_buffer": COMPACTION_BUFFER,  # session/overflow.ts 08f74b9b
              "at_limit": True,  # session/overflow.ts 08f74b9b: tokenCount >= usable
              "count_cache_write": True,  # session/overflow.ts 08f74b9b: tokens.total || ... + cache.write
              "tail": True,  # session/compaction.ts select(), preserveRecentBudget
              "prompt": "anchored",  # core/src/session/compaction.ts 8b9b5784 buildPrompt + SUMMARY_TEMPLATE
              "prune": False,  # session/compaction.ts: if (!cfg.compaction?.prune) return
              "continue_text": CONTINUE_TEXT_CURRENT,  # session/compaction.ts fd78ec63
          }}, tool=TOOL)
def opencode(p: OpenCodeParams) -> OpenCode:
    return OpenCode(p)


def version_preset(version: str) -> str:
    """The preset of a recorded OpenCode version (``major.minor.patch``): ``seed`` before 1.3, else ``current``."""
    import re

    m = re.match(r"\s*(\d+)\.(\d+)", version)
    if m is None:
        return "current"
    return "seed" if (int(m.group(1)), int(m.group(2))) < (1, 3) else "current"

