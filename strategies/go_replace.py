"""``compbench.strategies.go_replace`` — ``go-replace``: a Go agent's full replacement (seed 003); ``preset=current``
follows Crush.

Seed 003: before each turn, ``ContextTokens >= threshold`` (200,000; 0 disables) where ContextTokens is
the last call's prompt + completion tokens. The history is cleaned (every tool call gets a result —
"Tool no response" when missing — and a trailing tool message gets an "Understood." reply), the
7-section prompt is appended, and the history becomes [system, user: summary + "Last request from user
was: …"]. Tokens are recounted afterwards (the loop recounts the view).

``preset=current`` is Crush (charmbracelet/crush ``internal/agent/agent.go`` and
``templates/summary.md`` at commit 37f36e93). A StopWhen condition after each step fires when
``contextWindow − (PromptTokens + CompletionTokens) <= threshold``: 20,000 for windows over 200,000,
``int(window × 0.2)`` otherwise (since v0.13.0: 2aedcb7fa replaced a ``percentage > 80`` check), never for an
unknown (0) window (from v0.55.1, 741c18a21: before it a 0 window compacted after every step). The window is
catwalk's for the recorded provider and model on the session's day; a model catwalk does not list has the user's
configured window, not in the log (``compbench.measure.models`` says so and marks it unknown). A Crush step
includes its tool results, so here it applies in ``after_step`` when the step made no tool calls (the run ends) and in
the next ``before_step``, after the results, otherwise. PromptTokens is InputTokens + CacheReadTokens,
the whole prompt for OpenAI-style usage; for Anthropic-style usage Crush leaves cache writes out, while
the whole prompt (``u.input``) is used here. The summarizer gets ``summary.md`` as its system prompt,
the history without the agent's system prompt, and "Provide a detailed summary of our conversation
above."; the history then starts at the summary (an assistant message re-roled as user). When the
step had tool calls the run is re-queued as the user message "The previous session was interrupted
because it got too long, the initial user request was: `<prompt>`".

``preset=0.12`` is Crush before v0.13.0 (v0.1.0 of 2025-07-29 to v0.12.3, read at v0.12.3: ``internal/tui/tui.go``,
``internal/llm/agent/agent.go`` ``Summarize``, ``internal/llm/prompt/summarize.md``): only when a run is done (its
response finished, no tool call pending) and ``PromptTokens + CompletionTokens >= window × 0.95`` does Crush open the
compact dialog, which asks the user first (compbench assumes the answer yes: the log shows only the compactions that
were confirmed); ``remaining <= int(window × 0.05)`` for every window is the same test. The summarizer gets
``summarize.md`` as its system prompt and the history with "Provide a detailed but concise summary of our conversation
above. Focus on …"; the summary, an assistant message re-roled as user when sent, starts the history (no re-queue:
the run was over). Not modelled: the "Current working directory of the persistent shell" line appended to the summary
(the directory is not in the log). The v0.13.0 betas of 2025-10-23 to 10-26 compacted past 80% (``percentage > 80``);
a session's date cannot tell them from v0.12.x, so those dates get ``0.12``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
    Tool,
    ToolCall,
    ToolResult,
    Usage,
    Wake,
)
from compbench.sdk.registry import param, strategy

DEFAULT_COMPACT_THRESHOLD = 200_000  # seed 003
LARGE_WINDOW = 200_000  # Crush agent.go largeContextWindowThreshold
LARGE_WINDOW_BUFFER = 20_000  # Crush agent.go largeContextWindowBuffer
SMALL_WINDOW_RATIO = 0.2  # Crush agent.go smallContextWindowRatio
NO_RESPONSE = "Tool no response"  # seed 003 §6 fillMissingToolResponses
UNDERSTOOD = "Understood."  # seed 003 §6 ensureAssistantAfterTools
LAST_REQUEST = "\n\nLast request from user was: "  # seed 003 §3 step 4
CRUSH_PROMPT = "Provide a detailed summary of our conversation above."  # Crush buildSummaryPrompt (no todos)
CRUSH_012_THRESHOLD_RATIO = 0.05  # v0.12.3 tui.go: tokens >= contextWindow * 0.95, i.e. 5% or less remaining
CRUSH_012_PROMPT = ("Provide a detailed but concise summary of our conversation above. Focus on information that would "
                    "be helpful for continuing the conversation, including what we did, what we're doing, which files "
                    "we're working on, and what we're going to do next.")  # v0.12.3 agent.go Summarize
CRUSH_012_SYSTEM = """You are a helpful AI assistant tasked with summarizing conversations.

When asked to summarize, provide a detailed but concise summary of the conversation.
Focus on information that would be helpful for continuing the conversation, including:

- What was done
- What is currently being worked on
- Which files are being modified
- What needs to be done next

Your summary should be comprehensive enough to provide context but concise enough to be quickly understood.
"""  # v0.12.3 internal/llm/prompt/summarize.md (embedded verbatim)
CRUSH_REQUEUE = ("The previous session was interrupted because it got too long, the initial user request "
                 "was: `{}`")  # Crush agent.go Run, after Summarize
CRUSH_SYSTEM = """You are summarizing a conversation to preserve context for continuing work later.

**Critical**: This summary will be the ONLY context available when the conversation resumes. Assume all previous messages will be lost. Be thorough.

**Required sections**:

## Current State

- What task is being worked on (exact user request)
- Current progress and what's been completed
- What's being worked on right now (incomplete work)
- What remains to be done (specific next steps, not vague)

## Files & Changes

- Files that were modified (with brief description of changes)
- Files that were read/analyzed (why they're relevant)
- Key files not yet touched but will need changes
- File paths and line numbers for important code locations

## Technical Context

- Architecture decisions made and why
- Patterns being followed (with examples)
- Libraries/frameworks being used
- Commands that worked (exact commands with context)
- Commands that failed (what was tried and why it didn't work)
- Environment details (language versions, dependencies, etc.)

## Strategy & Approach

- Overall approach being taken
- Why this approach was chosen over alternatives
- Key insights or gotchas discovered
- Assumptions made
- Any blockers or risks identified

## Exact Next Steps

Be specific. Don't write "implement authentication" - write:

1. Add JWT middleware to src/middleware/auth.js:15
2. Update login handler in src/routes/user.js:45 to return token
3. Test with: npm test -- auth.test.js

**Tone**: Write as if briefing a teammate taking over mid-task. Include everything they'd need to continue without asking questions. No emojis ever.

**Length**: No limit. Err on the side of too much detail rather than too little. Critical context is worth the tokens.
"""  # Crush internal/agent/templates/summary.md (embedded verbatim, trailing newline included)
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
    threshold: int = param(
        DEFAULT_COMPACT_THRESHOLD,
        "Compact before a turn whose context exceeds this many tokens (seed 003: 200,000).")
    mode: str = param(
        "threshold",
        "'threshold' (seed 003: pre-turn, replace the history) or 'remaining' (Crush: by the tokens "
        "left in the window).")
    large_window: int = param(
        LARGE_WINDOW, "Windows above this size use a fixed buffer, smaller ones a ratio (Crush: 200,000).")
    remaining_tokens: int = param(
        LARGE_WINDOW_BUFFER, "Tokens left in a large window below which Crush compacts (20,000).")
    remaining_ratio: float = param(
        SMALL_WINDOW_RATIO, "Share of a small window left below which Crush compacts (0.2).", hi=1)
    run_end_only: bool = param(
        False, "Check only when a run is done, not after a step with tool calls (Crush before v0.13.0).")
    legacy_prompt: bool = param(False, "Crush v0.12's summarize.md and request text instead of today's.")


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


def remaining_threshold(window: int, p: GoReplaceParams) -> int:
    """Crush: a fixed buffer for large windows, a share of the window for small ones."""
    return p.remaining_tokens if window > p.large_window else int(window * p.remaining_ratio)


def _text(e: Entry) -> str:
    return "".join(p.text for p in e.message.parts if isinstance(p, Text))


class GoReplace:
    name = "go-replace"

    def __init__(self, p: GoReplaceParams) -> None:
        self.p = p
        self.pending: tuple[bool, str] | None = None  # Crush: (step had tool calls, the run's prompt)

    def should_compact(self, s: SessionView) -> bool:
        """Seed 003 pre-turn check: the last call's prompt + completion tokens (0 before any call)."""
        u = s.last_usage
        tokens = u.input + u.output if u else 0
        return self.p.threshold > 0 and tokens >= self.p.threshold

    def wake(self, s: SessionView) -> Wake:
        """Seed: before a step whose last usage reached the threshold. Crush: after a step whose usage left
        the remaining tokens at the threshold (a summary waiting for the step's tool results is asked for
        at the next question)."""
        if self.p.mode == "remaining":
            if self.pending is not None:
                return NEXT_QUESTION
            window = s.limits.context_window
            return Wake(usage=window - remaining_threshold(window, self.p)) if window else NEVER
        return Wake(usage=self.p.threshold) if self.p.threshold > 0 else NEVER

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if self.p.mode == "remaining":
            return self._crush(s)
        if not s.entries or not self.should_compact(s):
            return ()
        entries = s.entries
        system = [entries[0]] if entries[0].role == "system" else []
        last_user = next((_text(e) for e in reversed(entries) if e.role == "user"), "")
        history = clean_history(s.rendered())
        prompt = (*history, Message("compaction-prompt", "user", (Text(COMPACTION_PROMPT),)))
        request = SummaryRequest(system="", prompt=prompt, source=tuple(history[len(system):]))
        after = LAST_REQUEST + last_user if last_user else ""
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in system),
                                  Insert("user", "", after, with_summary=True, origin="summary"))
        return [Compact("context tokens >= threshold", view, request, on_failure="unchanged")]

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        if self.p.mode != "remaining":
            return ()
        window = s.limits.context_window
        tokens = u.input + u.output  # PromptTokens + CompletionTokens (see the module docstring)
        if window and window - tokens <= remaining_threshold(window, self.p):
            last = s.entries[-1].message if s.entries else None
            calls = last is not None and any(isinstance(p, ToolCall) for p in last.parts)
            prompt = next((_text(e) for e in reversed(s.entries) if e.role == "user" and e.origin != "summary"), "")
            if calls and self.p.run_end_only:
                return ()  # v0.12: the dialog opens only once the run's response is done
            self.pending = (calls, prompt)
            if not calls:  # the run is over: summarize now, before the next user message
                return self._crush(s)
        return ()

    def _crush(self, s: SessionView) -> Sequence[Action]:
        """Crush ``Summarize`` once the triggering step is over (with tool calls: after their results)."""
        if self.pending is None:
            return ()
        calls, prompt = self.pending
        self.pending = None
        system = [e for e in s.entries if e.role == "system"]
        history = tuple(e.rendered() for e in s.entries if e.role != "system")
        system_prompt, text = (CRUSH_012_SYSTEM, CRUSH_012_PROMPT) if self.p.legacy_prompt else (CRUSH_SYSTEM,
                                                                                                CRUSH_PROMPT)
        request = SummaryRequest(system_prompt, (*history, Message("crush-summary", "user", (Text(text),))), history)
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in system),
                                  Insert("user", with_summary=True, origin="summary"))
        if calls:
            view += (Insert("user", CRUSH_REQUEUE.format(prompt), origin="synthetic"),)
        return [Compact("remaining tokens <= threshold", view, request, on_failure="unchanged",
                        meta={"requeued": calls})]


# Crush's only setting is on/off (options.disable_auto_summarize in crush.json): off is the `none` row.
CRUSH_20K_RULE = "2025-10-27"  # crush v0.13.0 (2aedcb7fa): the 20,000 / 20% remaining-tokens rule of preset=current
ANY_WINDOW = 10**9  # preset=0.12: no window is "large", the 5% share holds for every one
PRESETS: dict[str, dict[str, object]] = {
    "current": {"mode": "remaining"},
    "0.12": {"mode": "remaining", "remaining_ratio": CRUSH_012_THRESHOLD_RATIO, "large_window": ANY_WINDOW,
             "run_end_only": True, "legacy_prompt": True},
}
PRESET_VERSIONS = {"current": "Crush builds from 2025-10-27 (v0.13.0 on; read at 37f36e93)",
                   "0.12": "Crush builds before 2025-10-27 (v0.1.0-v0.12.3; read at v0.12.3)"}
TOOL = Tool("Crush", ("crush",), newest="current", version_preset=lambda v: version_preset(v) or None,
            preset_versions=PRESET_VERSIONS)


@strategy("go-replace", params=GoReplaceParams, upstream="seed 003 (a Go agent); current: Crush 37f36e93; 0.12: v0.12.3",
          summary="pre-turn threshold; history replaced by [system, summary + last user request]",
          presets=PRESETS, tool=TOOL, version="2")
def go_replace(p: GoReplaceParams) -> GoReplace:
    return GoReplace(p)


def version_preset(version: str) -> str:
    """The preset of a Crush build from the date its store records (``session of YYYY-MM-DD``: the build it ran is
    at most that recent): ``current`` from v0.13.0's date on, ``0.12`` before it; "" (the newest) for a text with no
    date."""
    import re

    m = re.search(r"\d{4}-\d{2}-\d{2}", version)
    if m is None:
        return ""
    return "current" if m.group(0) >= CRUSH_20K_RULE else "0.12"
