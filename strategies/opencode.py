"""``opencode``: OpenCode's compaction (seeds 000 + 001; 001 is the precise one).

After each step, ``isOverflow``: total = input + cache.read + output (OpenCode's input excludes the
cache, so in compbench's convention total = input + output) against usable = limit.input, else
context − min(limit.output, 32000) (32000 when the output limit is unknown); never when the context
limit is 0 or ``auto`` is off. Overflow queues a compaction marker, executed before the next call (so
the step's tool results are in the history, as OpenCode runs tools before its next loop iteration): a
tool-less summarizer gets the history, the marker rendered as "What did we do so far?", and the final
instruction of seed 000 §6.2; the summary becomes an assistant message flagged ``summary``, then "Continue
if you have next steps" after an automatic compaction. ``filterCompacted`` keeps only the latest pivot:
the view becomes [marker, summary, continue].

Prune (seed 001): when a new user prompt arrives (OpenCode prunes when its session loop ends), walk the
view backwards; skip until the second-newest user turn; stop at a summary message or an already pruned
output; over completed, unprotected tool outputs estimate round(chars/4); beyond PRUNE_PROTECT (40,000)
collect; apply only if the collected estimate exceeds PRUNE_MINIMUM (20,000).

``preset=current`` (sst/opencode today): the reserve is min(20,000, model max output), a verbatim tail
of clamp(usable × 0.25, 2,000, 15,000) tokens stays after the summary, and prune is off by default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compbench.session import Action, Compact, Insert, Keep, Prune, SessionView, SummaryRequest
from compbench.strategies.base import strategy
from compbench.tokens import chars4_round
from compbench.transcript import Message, Text, ToolResult, Usage

PRUNE_MINIMUM = 20_000  # seed 001
PRUNE_PROTECT = 40_000  # seed 001
PRUNE_PROTECTED_TOOLS = ("skill",)  # seed 001
OUTPUT_TOKEN_MAX = 32_000  # seed 001: min(model.limit.output, 32000) || 32000
PLACEHOLDER = "[Old tool result content cleared]"  # seed 000 §5.2
MARKER_TEXT = "What did we do so far?"  # seed 000 §6.3
CONTINUE_TEXT = "Continue if you have next steps"  # seed 000 §4.3
SYSTEM_PROMPT = """You are a helpful AI assistant tasked with summarizing conversations.

When asked to summarize, provide a detailed but concise summary of the conversation.
Focus on information that would be helpful for continuing the conversation, including:
- What was done
- What is currently being worked on
- Which files are being modified
- What needs to be done next
- Key user requests, constraints, or preferences that should persist
- Important technical decisions and why they were made

Your summary should be comprehensive enough to provide context but concise enough to be quickly understood."""
INSTRUCTION = ("Provide a detailed prompt for continuing our conversation above. Focus on information that would be "
               "helpful for continuing the conversation, including what we did, what we're doing, which files we're "
               "working on, and what we're going to do next considering new session will not have access to our "
               "conversation.")  # seed 000 §6.2 (001's "Default Summary Prompt" is the same text, line-wrapped)
TAIL_RATIO = 0.25  # current: verbatim tail = clamp(usable * 0.25, 2000, 15000)
TAIL_MIN, TAIL_MAX = 2_000, 15_000


@dataclass(frozen=True)
class OpenCodeParams:
    auto: bool = True
    prune: bool = True
    protect: int = PRUNE_PROTECT
    minimum: int = PRUNE_MINIMUM
    protected_tools: tuple[str, ...] = PRUNE_PROTECTED_TOOLS
    output_cap: int = OUTPUT_TOKEN_MAX
    tail: bool = False  # current: keep a verbatim tail after the summary
    continue_message: bool = True


class OpenCode:
    name = "opencode"

    def __init__(self, p: OpenCodeParams) -> None:
        self.p = p
        self.pending = False
        self.seen_user = ""

    def usable(self, s: SessionView) -> int:
        reserve = min(s.limits.max_output, self.p.output_cap) if s.limits.max_output else self.p.output_cap
        return s.limits.max_input or (s.limits.context_window - reserve)

    def is_overflow(self, s: SessionView, u: Usage) -> bool:
        if not self.p.auto or s.limits.context_window == 0:
            return False
        return u.input + u.output > self.usable(s)

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        if self.is_overflow(s, u):
            self.pending = True  # SessionCompaction.create: a marker queued for the next iteration
        return ()

    def before_step(self, s: SessionView) -> Sequence[Action]:
        actions: list[Action] = []
        if self.pending:
            self.pending = False
            actions.append(self.compact(s))
        elif self.p.prune and s.entries and s.entries[-1].role == "user" and s.entries[-1].origin == "recorded" \
                and s.entries[-1].id != self.seen_user:
            self.seen_user = s.entries[-1].id
            pruned = self.prune(s)
            if pruned is not None:
                actions.append(pruned)
        return actions

    def tail_start(self, s: SessionView) -> int:
        budget = max(TAIL_MIN, min(TAIL_MAX, int(self.usable(s) * TAIL_RATIO)))
        entries = s.entries
        acc, cut = 0, len(entries)
        for i in range(len(entries) - 1, -1, -1):
            if acc + entries[i].tokens > budget:
                break
            acc += entries[i].tokens
            cut = i
        while cut < len(entries) and entries[cut].role == "tool":
            cut += 1  # a tail never starts with an orphaned tool result
        return cut

    def compact(self, s: SessionView) -> Compact:
        marker = Message("opencode-marker", "user", (Text(MARKER_TEXT),))
        instruction = Message("opencode-instruction", "user", (Text(INSTRUCTION),))
        tail = self.tail_start(s) if self.p.tail else len(s.entries)
        request = SummaryRequest(SYSTEM_PROMPT, (*s.rendered(0, tail), marker, instruction), s.rendered(0, tail),
                                 min(s.limits.max_output, self.p.output_cap) if s.limits.max_output else
                                 self.p.output_cap)
        view: list[Keep | Insert] = [
            Insert("user", MARKER_TEXT, origin="marker"),
            Insert("assistant", with_summary=True, origin="summary", meta={"summary": True}),
            *(Keep(e.id) for e in s.entries[tail:]),
        ]
        if self.p.continue_message:
            view.append(Insert("user", CONTINUE_TEXT, origin="synthetic"))
        return Compact("overflow (auto)", tuple(view), request, on_failure="unchanged")

    def prune(self, s: SessionView) -> Prune | None:
        """Seed 001 ``prune``, over the view (which starts at the latest summary pivot)."""
        total = pruned = turns = 0
        targets: list[tuple[str, int, str]] = []
        entries = s.entries
        done = False
        for i in range(len(entries) - 1, -1, -1):
            e = entries[i]
            if e.role == "user":
                turns += 1
            if turns < 2:
                continue
            if e.role == "assistant" and e.origin == "summary":
                break
            for j in range(len(e.message.parts) - 1, -1, -1):
                part = e.message.parts[j]
                if not isinstance(part, ToolResult) or part.is_error:
                    continue  # only completed tool outputs
                if part.name in self.p.protected_tools:
                    continue
                if j in e.pruned:
                    done = True  # an already-compacted output: everything older was handled before
                    break
                estimate = chars4_round(part.output)
                total += estimate
                if total > self.p.protect:
                    pruned += estimate
                    targets.append((e.id, j, PLACEHOLDER))
            if done:
                break
        if pruned > self.p.minimum:
            return Prune(tuple(targets), "prune")
        return None


@strategy("opencode", params=OpenCodeParams, source="seeds 000 + 001; current: sst/opencode",
          summary="post-step overflow, tool-less summary pivot, tool-output pruning (PROTECT 40k / MIN_PRUNE 20k)",
          presets={"current": {"output_cap": 20_000, "tail": True, "prune": False}})
def opencode(p: OpenCodeParams) -> OpenCode:
    return OpenCode(p)
