"""``go-replace``: a Go agent's full replacement (seed 003); ``preset=current`` follows Crush.

Seed 003: before each turn, ``ContextTokens >= threshold`` (200,000; 0 disables) where ContextTokens is
the last call's prompt + completion tokens. The history is cleaned (every tool call gets a result —
"Tool no response" when missing — and a trailing tool message gets an "Understood." reply), the
7-section prompt is appended, and the history becomes [system, user: summary + "Last request from user
was: …"]. Tokens are recounted afterwards (the loop recounts the view).

``preset=current`` (Crush, charmbracelet/crush ``internal/llm/agent``): summarize when the tokens left
in the window fall to 20,000 for windows over 200,000, or to 20% of the window otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compbench.session import Action, Compact, Insert, Keep, SessionView, Slot, SummaryRequest
from compbench.strategies.base import strategy
from compbench.transcript import Message, Text, ToolCall, ToolResult, Usage

DEFAULT_COMPACT_THRESHOLD = 200_000  # seed 003
LARGE_WINDOW = 200_000  # Crush: largeContextWindowThreshold
LARGE_WINDOW_BUFFER = 20_000  # Crush: largeContextWindowBuffer
SMALL_WINDOW_RATIO = 0.2  # Crush: smallContextWindowRatio
NO_RESPONSE = "Tool no response"
UNDERSTOOD = "Understood."
LAST_REQUEST = "\n\nLast request from user was: "
COMPACTION_PROMPT = """Provide a detailed but concise summary of our conversation. Structure it as follows:

1. User's Primary Goals and Intent
   - Capture all explicit requests and objectives
   - Preserve exact priorities and constraints

2. Conversation Timeline and Progress
   - Chronological key phases
   - Initial requests and how addressed
   - Major decisions and rationale
   - Problems and solutions
   - Current state

3. Technical Context and Decisions
   - Technologies, frameworks, tools
   - Architectural patterns and design decisions
   - Key technical constraints
   - Important code patterns established

4. Files and Code Changes
   - Full file paths
   - Purpose and importance
   - Specific changes with key code snippets
   - Current state

5. Active Work and Last Actions (CRITICAL)
   - Specific task being addressed
   - Last completed action
   - Any partial work or mid-implementation state
   - Include relevant code snippets

6. Unresolved Issues and Pending Tasks
   - Errors still requiring attention
   - Tasks explicitly requested but not started
   - Decisions waiting for user input

7. Immediate Next Step
   - SPECIFIC next action based on:
     - User's most recent request
     - Current implementation state
     - Any ongoing interrupted work

Be precise with technical details, file names, and code.
The next agent reading this should be able to continue exactly
where we left off without asking clarifying questions."""  # seed 003 §4


@dataclass(frozen=True)
class GoReplaceParams:
    threshold: int = DEFAULT_COMPACT_THRESHOLD
    mode: str = "threshold"  # "threshold" (seed 003) | "remaining" (Crush)
    large_window: int = LARGE_WINDOW
    remaining_tokens: int = LARGE_WINDOW_BUFFER
    remaining_ratio: float = SMALL_WINDOW_RATIO


def clean_history(messages: Sequence[Message]) -> list[Message]:
    """Seed 003 ``cleanMessageHistory``: fillMissingToolResponses, then ensureAssistantAfterTools."""
    answered = {p.call_id for m in messages for p in m.parts if isinstance(p, ToolResult)}
    out: list[Message] = []
    for m in messages:
        out.append(m)
        missing = [p for p in m.parts if isinstance(p, ToolCall) and p.id not in answered]
        for k, call in enumerate(missing):
            out.append(Message(f"{m.id}:noresp{k}", "tool", (ToolResult(call.id, call.name, NO_RESPONSE),)))
    if out and out[-1].role == "tool":
        out.append(Message("understood", "assistant", (Text(UNDERSTOOD),)))
    return out


class GoReplace:
    name = "go-replace"

    def __init__(self, p: GoReplaceParams) -> None:
        self.p = p

    def should_compact(self, s: SessionView) -> bool:
        u = s.last_usage
        tokens = u.input + u.output if u else 0  # stats.ContextTokens = PromptTokens + CompletionTokens
        if self.p.mode == "remaining":
            w = s.limits.context_window
            reserve = self.p.remaining_tokens if w > self.p.large_window else w * self.p.remaining_ratio
            return u is not None and w - tokens <= reserve
        return self.p.threshold > 0 and tokens >= self.p.threshold

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if not s.entries or not self.should_compact(s):
            return ()
        entries = s.entries
        system = [entries[0]] if entries[0].role == "system" else []
        last_user = next((e.message.text for e in reversed(entries) if e.role == "user"), "")
        history = clean_history(s.rendered())
        prompt = (*history, Message("compaction-prompt", "user", (Text(COMPACTION_PROMPT),)))
        request = SummaryRequest(system="", prompt=prompt, source=tuple(history[len(system):]))
        after = LAST_REQUEST + last_user if last_user else ""
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in system), Insert("user", "", after, with_summary=True, origin="summary"))
        return [Compact("context tokens over threshold", view, request, on_failure="unchanged")]

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()


@strategy("go-replace", params=GoReplaceParams, source="seed 003 (a Go agent); current: Crush",
          summary="pre-turn threshold; history replaced by [system, summary + last user request]",
          presets={"current": {"mode": "remaining"}})
def go_replace(p: GoReplaceParams) -> GoReplace:
    return GoReplace(p)
