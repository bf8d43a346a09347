"""``codex``: Codex CLI's compaction (seed 002 + codex-rs/core/src/compact.rs).

After a step, when the tokens in the context (last usage input + output) reach the auto-compact token
limit, the whole history is summarized with Codex's compaction prompt; the new history is the initial
context (system/developer messages and the session-prefix user messages: AGENTS.md instructions and
the environment context), then the most recent user messages up to 20,000 tokens (counted as Codex's
``approx_token_count``: bytes / 4; the message that straddles the budget is truncated to fit), then one
user message with the summary behind Codex's summary prefix. A failed summary leaves the history
unchanged (Codex retries with backoff first: that is the summarizer backend's job here).

The limit: the model's ``auto_compact_token_limit`` when given; otherwise seed 002's per-model values
(180k for 200k windows, 244k for 272k ones) sit inside an effective window of 95%, so the seed preset
compacts at 95% of the window; ``preset=current`` derives the limit as Codex's source does today, 90%
of the window.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from compbench.session import Action, Compact, Insert, Keep, SessionView, SummaryRequest
from compbench.strategies.base import strategy
from compbench.transcript import Message, Text, Usage

COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000  # compact.rs
COMPACT_PROMPT = """You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.

Include:
- Current progress and key decisions made
- Important context, constraints, or user preferences
- What remains to be done (clear next steps)
- Any critical data, examples, or references needed to continue

Be concise, structured, and focused on helping the next LLM seamlessly continue the work."""  # templates/compact/prompt.md
SUMMARY_PREFIX = ("Another language model started to solve this problem and produced a summary of its thinking "
                  "process. You also have access to the state of the tools that were used by that language model. "
                  "Use this to build on the work that has already been done and avoid duplicating work. Here is the "
                  "summary produced by the other language model, use the information in this summary to assist with "
                  "your own analysis:")  # templates/compact/summary_prefix.md
TRUNCATED = "…[truncated]"


@dataclass(frozen=True)
class CodexParams:
    auto_compact_token_limit: int | None = None
    limit_ratio: float = 0.95  # seed: effective_context_window_percent; current: 0.9 (derived default)
    user_message_max_tokens: int = COMPACT_USER_MESSAGE_MAX_TOKENS


def approx_tokens(text: str) -> int:
    """Codex ``approx_token_count``: UTF-8 bytes / 4, rounded up."""
    return math.ceil(len(text.encode()) / 4)


def truncate_to_tokens(text: str, tokens: int) -> str:
    data = text.encode()[: max(0, tokens * 4)]
    return data.decode("utf-8", errors="ignore") + TRUNCATED


class Codex:
    name = "codex"

    def __init__(self, p: CodexParams) -> None:
        self.p = p

    def limit(self, s: SessionView) -> float:
        if self.p.auto_compact_token_limit is not None:
            return self.p.auto_compact_token_limit
        return self.p.limit_ratio * s.limits.context_window

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        if not s.limits.context_window or u.input + u.output < self.limit(s):
            return ()
        entries = s.entries
        initial = [e for e in entries if e.role == "system" or e.message.meta.get("session_prefix")]
        users = [e for e in entries if e.role == "user" and e.origin == "recorded"
                 and not e.message.meta.get("session_prefix")]
        selected: list[Keep | Insert] = []
        budget = self.p.user_message_max_tokens
        for e in reversed(users):  # the most recent first
            if budget <= 0:
                break
            text = e.message.text
            need = approx_tokens(text)
            if need <= budget:
                selected.append(Keep(e.id))
                budget -= need
            else:
                selected.append(Insert("user", truncate_to_tokens(text, budget), origin="synthetic"))
                budget = 0
        selected.reverse()
        prompt = (*s.rendered(), Message("codex-compact", "user", (Text(COMPACT_PROMPT),)))
        head = {e.id for e in initial}
        request = SummaryRequest("", prompt, tuple(e.rendered() for e in entries if e.id not in head))
        view = (*(Keep(e.id) for e in initial), *selected,
                Insert("user", SUMMARY_PREFIX + "\n", with_summary=True, origin="summary"))
        return [Compact("auto compact token limit", view, request, on_failure="unchanged")]

    def before_step(self, s: SessionView) -> Sequence[Action]:
        return ()


@strategy("codex", params=CodexParams, source="seed 002 + codex-rs/core/src/compact.rs",
          summary="token-limit trigger; initial context + recent user messages <= 20k tokens + prefixed summary",
          presets={"current": {"limit_ratio": 0.9}})
def codex(p: CodexParams) -> Codex:
    return Codex(p)
