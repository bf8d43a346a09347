"""``claude-code``: Claude Code's auto-compact (seed 002): near the window's end, summarize everything.

Seed 002: ``/compact [instructions]`` or automatically at ~95% of the window; the whole history is
summarized with the community-extracted prompt and the session continues from the summary alone.
Custom instructions are appended as Claude Code does (``"\\n\\nAdditional Instructions:\\n" + text``,
from the prompt strings extracted from its binary, Yeyito777/Agent playground/claude-code-compact-prompt.md).

The check is after a step on the API-reported usage, input (with cache reads and writes) + output:
that sum is exactly the ``preTokens`` Claude Code records (the c7d2069e session: 8 + 2,067 + 152,760
input + 713 output = 155,548). The compaction runs before the next call, when the step's tool results
have been recorded, so they are summarized too. The new view: the leading system messages, then one user
message in Claude Code's own wording, copied from the real ``isCompactSummary`` record (CLI 2.0.76):
``PREFIX + summary + SUFFIX``. A failed summary leaves the view unchanged.

Preset ``current``: threshold = window - min(max_output, 32,000) - 13,000 (the output reserve and the
auto-compact buffer public analyses of Claude Code describe). With 20,000 as the reserve it gives
167,000 of 200k = the 83.5% users observed in older builds; with 32,000 (2.0.x, Sonnet 4.5) it gives
155,000 = 77.5%, which reproduces the real trigger: the step at 152,770 did not compact, the next at
155,548 did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compbench.session import Action, Compact, Insert, Keep, SessionView, Slot, SummaryRequest
from compbench.strategies.base import strategy
from compbench.transcript import Message, Text, Usage

THRESHOLD_RATIO = 0.95  # seed 002: "Triggers at ~95% context capacity"
OUTPUT_RESERVE = 32_000  # current: max output tokens reserved (2.0.x; 20,000 in older builds)
AUTOCOMPACT_BUFFER = 13_000  # current: auto-compact buffer below the effective window
MAX_SUMMARY_TOKENS = 20_000  # summary budget: Claude Code's compaction call caps output near 20k
COMPACT_PROMPT = """Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests and your previous actions. This summary will be used as context when continuing the conversation, so preserve critical information including:
- What was accomplished
- Current work in progress
- Files involved
- Next steps
- Key user requests or constraints"""  # seed 002, "Prompt (extracted from community)"
ADDITIONAL_INSTRUCTIONS = "\n\nAdditional Instructions:\n"  # Claude Code /compact <instructions>
SUMMARY_PREFIX = ("This session is being continued from a previous conversation that ran out of context. "
                  "The conversation is summarized below:\n")  # real isCompactSummary record (2.0.76)
SUMMARY_SUFFIX = (".\nPlease continue the conversation from where we left it off without asking the user any "
                  "further questions. Continue with the last task that you were asked to work on.")  # same record


@dataclass(frozen=True)
class ClaudeCodeParams:
    """Seed defaults; ``autocompact_buffer`` > 0 switches to the window - reserve - buffer threshold."""

    threshold_ratio: float = THRESHOLD_RATIO
    output_reserve: int = 0
    autocompact_buffer: int = 0
    custom_instructions: str = ""
    max_summary_tokens: int = MAX_SUMMARY_TOKENS


class ClaudeCode:
    name = "claude-code"

    def __init__(self, p: ClaudeCodeParams) -> None:
        self.p = p
        self.pending = False

    def threshold(self, s: SessionView) -> float:
        w = s.limits.context_window
        if self.p.autocompact_buffer > 0:
            return w - min(s.limits.max_output, self.p.output_reserve) - self.p.autocompact_buffer
        return self.p.threshold_ratio * w

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        if s.limits.context_window and u.input + u.output >= self.threshold(s):
            self.pending = True
        return ()

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if not self.pending:
            return ()
        self.pending = False
        return [self.compact(s, "auto")]

    def manual(self, s: SessionView) -> Compact:
        """``/compact``: the same summary of the whole view, asked by the user."""
        return self.compact(s, "manual")

    def instruction(self) -> str:
        extra = self.p.custom_instructions.strip()
        return COMPACT_PROMPT + (ADDITIONAL_INSTRUCTIONS + extra if extra else "")

    def compact(self, s: SessionView, reason: str) -> Compact:
        """The whole view is summarized; only the leading system messages survive verbatim."""
        head = 0
        while head < len(s.entries) and s.entries[head].role == "system":
            head += 1
        prompt = (*s.rendered(), Message("claude-code-compact", "user", (Text(self.instruction()),)))
        request = SummaryRequest(system="", prompt=prompt, source=s.rendered(head),
                                 max_output_tokens=self.p.max_summary_tokens)
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in s.entries[:head]),
                                  Insert("user", SUMMARY_PREFIX, SUMMARY_SUFFIX, with_summary=True, origin="summary"))
        return Compact(reason, view, request, on_failure="unchanged", meta={"threshold": self.threshold(s)})


@strategy("claude-code", params=ClaudeCodeParams, source="seed 002 + Claude Code session files (CLI 2.0.76)",
          summary="at ~95% of the window, summarize the whole history into one continuation message",
          presets={"current": {"output_reserve": OUTPUT_RESERVE, "autocompact_buffer": AUTOCOMPACT_BUFFER}})
def claude_code(p: ClaudeCodeParams) -> ClaudeCode:
    return ClaudeCode(p)
