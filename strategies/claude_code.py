"""``claude-code``: Claude Code's auto-compact (seed 002): near the window's end, summarize everything.

Seed 002: ``/compact`` (with optional custom instructions) or automatically at ~95% of the window; the
whole history is summarized by the model with the community-extracted prompt, and the session continues
from the summary. The summary message's wording is Claude Code's own, as recorded in a real session
file (``isCompactSummary`` record, CLI 2.0.76): a continuation preamble before it and an instruction to
continue after it. The check uses the last call's usage (input + cache + output).

Preset ``current``: Claude Code 2.0.x reserves an auto-compact buffer of 45,000 tokens on a 200k window
(its ``/context`` view shows "Autocompact buffer: 45.0k"), i.e. it compacts at 77.5% of the window; the
real session (CLI 2.0.76) compacted at 155,548 of 200,000. Older builds were observed near 83.5%.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compbench.session import Action, Compact, Insert, Keep, SessionView, Slot, SummaryRequest
from compbench.strategies.base import strategy
from compbench.transcript import Message, Text, Usage

THRESHOLD_RATIO = 0.95  # seed 002: "Triggers at ~95% context capacity"
COMPACT_PROMPT = """Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests and your previous actions. This summary will be used as context when continuing the conversation, so preserve critical information including:
- What was accomplished
- Current work in progress
- Files involved
- Next steps
- Key user requests or constraints"""  # seed 002, "Prompt (extracted from community)"
SUMMARY_PREFIX = ("This session is being continued from a previous conversation that ran out of context. "
                  "The conversation is summarized below:\n")  # real isCompactSummary record
SUMMARY_SUFFIX = (".\nPlease continue the conversation from where we left it off without asking the user any "
                  "further questions. Continue with the last task that you were asked to work on.")
MAX_SUMMARY_TOKENS = 20_000


@dataclass(frozen=True)
class ClaudeCodeParams:
    threshold_ratio: float = THRESHOLD_RATIO
    buffer_tokens: int = 0  # when > 0: trigger at window - buffer_tokens instead of the ratio
    custom_instructions: str = ""
    max_summary_tokens: int = MAX_SUMMARY_TOKENS
    auto: bool = True


class ClaudeCode:
    name = "claude-code"

    def __init__(self, p: ClaudeCodeParams) -> None:
        self.p = p
        self.pending = False

    def threshold(self, s: SessionView) -> float:
        w = s.limits.context_window
        return w - self.p.buffer_tokens if self.p.buffer_tokens > 0 else self.p.threshold_ratio * w

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        if self.p.auto and s.limits.context_window and u.input + u.output >= self.threshold(s):
            self.pending = True
        return ()

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if not self.pending:
            return ()
        self.pending = False
        return [self.compact(s, "auto")]

    def compact(self, s: SessionView, reason: str) -> Compact:
        head = []
        for e in s.entries:
            if e.role != "system":
                break
            head.append(e)
        instruction = COMPACT_PROMPT
        if self.p.custom_instructions:
            instruction += f"\n\nAdditional Instructions:\n{self.p.custom_instructions}"
        history = s.rendered()
        request = SummaryRequest(system="", prompt=(*history, Message("compact", "user", (Text(instruction),))),
                                 source=s.rendered(len(head)), max_output_tokens=self.p.max_summary_tokens)
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in head),
                Insert("user", SUMMARY_PREFIX, SUMMARY_SUFFIX, with_summary=True, origin="summary"))
        return Compact(reason, view, request, on_failure="unchanged")


@strategy("claude-code", params=ClaudeCodeParams, source="seed 002 + Claude Code session files",
          summary="at ~95% of the window, summarize the whole history into one continuation message",
          presets={"current": {"threshold_ratio": 0.775}})
def claude_code(p: ClaudeCodeParams) -> ClaudeCode:
    return ClaudeCode(p)
