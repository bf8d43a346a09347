"""``codex``: Codex CLI's compaction (seed 002 + codex-rs/core/src/compact.rs).

After a step, when the tokens in the context (last usage input + output) reach the auto-compact token
limit, the whole history is summarized with Codex's compaction prompt; the new history is the initial
context (system/developer messages and the session-prefix user messages: AGENTS.md instructions and
the environment context), then the most recent user messages up to 20,000 tokens (counted as Codex's
``approx_token_count``: bytes / 4; the message that straddles the budget is truncated to fit), then one
user message with the summary behind Codex's summary prefix. A failed summary leaves the history
unchanged (Codex retries with backoff first: that is the summarizer backend's job here).

The limit: the model's ``auto_compact_token_limit`` when given. Otherwise the seed preset uses seed
002's per-model values — 180,000 for 200k-input models, 244,000 for the GPT-5 family's 272k input
window — and ``preset=current`` derives it as Codex's ``get_model_info`` does, 90% of the model's
input window (the window Codex reports; litellm lists GPT-5 models as 272k input + 128k output).
Usage is compared as ``tokens_in_context_window``: input + output of the last call.
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
SEED_LIMITS = {200_000: 180_000, 272_000: 244_000}  # seed 002: "180k for some models, 244k for others"


@dataclass(frozen=True)
class CodexParams:
    auto_compact_token_limit: int | None = None
    per_model_limits: bool = True  # seed 002: 180k / 244k; off: limit_ratio x input window
    limit_ratio: float = 0.9
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
        window = s.limits.input_limit
        if self.p.per_model_limits and window in SEED_LIMITS:
            return SEED_LIMITS[window]
        return self.p.limit_ratio * window

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
          presets={"current": {"per_model_limits": False}})
def codex(p: CodexParams) -> Codex:
    return Codex(p)
