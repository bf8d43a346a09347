"""``compbench.strategies.deepagents`` — ``deepagents``: Deep Agents' summarization as ``create_deep_agent`` sets it up
(deepagents 0.7.32 on PyPI, langchain-ai/deepagents ``libs/deepagents/deepagents/middleware/summarization.py`` and
``graph.py``): ``create_summarization_middleware(model, backend)`` around LangChain's middleware.

- Defaults (``compute_summarization_defaults``): a model whose profile has ``max_input_tokens`` (compbench's
  window is that profile) gets ``trigger=("fraction", 0.85)``, ``keep=("fraction", 0.10)`` and tool-argument
  truncation at the same fractions; a model without one gets ``("tokens", 170000)``, ``("messages", 6)`` and
  truncation at / keeping 20 messages, and no input budget, which is read from the profile
  (``preset=no-profile``). The factory does not trim what the summarizer sees
  (``trim_tokens_to_summarize=None``). The default model is ``claude-sonnet-4-6`` (``ChatAnthropic``), so
  the approximate counter runs at 3.3 characters per token.
- Counting (``wrap_model_call``): the request's system message and tools are counted with the messages
  (compbench's hidden system tokens stand for the tools), usage-scaled as LangChain does. It summarizes on
  the trigger, or when the count is over the input budget ``int(max_input * 0.95) - max_tokens`` (the model's
  ``max_tokens`` defaults to its profile's max output), or when the provider rejects the call as too long.
- Before that, in messages older than the truncation ``keep``, the string arguments of ``write_file`` /
  ``edit_file`` calls longer than 2,000 characters become their first 20 characters +
  ``"...(argument truncated)"`` (a prune of the call's arguments; Deep Agents redoes it on each request
  copy, which only differs from a lasting prune in the call that also summarizes).
- The summary: LangChain's prompt with Deep Agents' media-reference block, over the whole span; the
  evicted messages are offloaded to ``/conversation_history/{session_id}.md`` and the summary message
  says so (the session id is random there, a fixed one of the same length here). The state is not
  rewritten (a ``_summarization_event`` records the cutoff) but the model sees the same list:
  ``[summary, *kept]``.
- Not modelled: clipping large trailing tool results to files when the summarized request is still over
  budget, and the ``ContextOverflowError`` a still-oversized request raises.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from compbench.data.transcript import ToolCall
from compbench.errors import UsageError
from compbench.replay.session import NEXT_QUESTION, Action, Prune, SessionView, Wake
from compbench.sdk.registry import param, strategy
from compbench.strategies.langchain import LangChainSummarization, parse_clauses, system_head
from compbench.strategies.langchain_messages import ANTHROPIC_CHARS_PER_TOKEN, LCMessage
from compbench.strategies.langchain_prompts import DEEPAGENTS_SUMMARY_PROMPT

PROFILE_TRIGGER = "fraction:0.85"  # compute_summarization_defaults, model with a profile
PROFILE_KEEP = "fraction:0.1"
NO_PROFILE_TRIGGER = "tokens:170000"  # compute_summarization_defaults, model without a profile
NO_PROFILE_KEEP = "messages:6"
NO_PROFILE_TRUNCATE = "messages:20"  # truncate_args_settings trigger and keep without a profile
MAX_ARG_LENGTH = 2000  # _DeepAgentsSummarizationMiddleware: max_length default
TRUNCATION_TEXT = "...(argument truncated)"  # truncation_text default
TRUNCATE_TOOLS = ("write_file", "edit_file")  # _truncate_args: only these tools' arguments
INPUT_BUDGET = 0.95  # _input_budget: 5% headroom below max_input_tokens, less the configured output
SESSION_ID = "session_" + "0" * 32  # stands for f"session_{uuid.uuid4().hex}"
HISTORY_PATH = f"/conversation_history/{SESSION_ID}.md"  # _get_history_path under the default StateBackend
SUMMARY_PREFIX = ("You are in the middle of a conversation that has been summarized.\n\nThe full conversation "
                  f"history has been saved to {HISTORY_PATH} should you need to refer back to it for details.\n\n"
                  "A condensed summary follows:\n\n<summary>\n")  # _build_new_messages_with_path
SUMMARY_SUFFIX = "\n</summary>"


@dataclass(frozen=True)
class DeepAgentsParams:
    """``create_summarization_middleware``'s settings for a model with a profile."""

    trigger: str = param(PROFILE_TRIGGER, "When to summarize: kind:value thresholds (tokens, messages, fraction), "
                         "& = all, | = any.")
    keep: str = param(PROFILE_KEEP, "What stays verbatim: messages:N, tokens:N or fraction:F of max input.")
    trim_tokens_to_summarize: int | None = param(None, "Newest tokens of the span the summarizer sees (none: all).")
    chars_per_token: float = param(ANTHROPIC_CHARS_PER_TOKEN, "The approximate counter's characters per token (the "
                                   "default model is an Anthropic chat model: 3.3).")
    truncate_trigger: str = param(PROFILE_TRIGGER, "When write_file/edit_file arguments in old messages are "
                                  "truncated (one kind:value; empty: never).")
    truncate_keep: str = param(PROFILE_KEEP, "Newest messages whose arguments are never truncated.")
    max_arg_length: int = param(MAX_ARG_LENGTH, "Longer string arguments are truncated to 20 characters + the "
                                "truncation text.")
    input_budget: float = param(INPUT_BUDGET, "Also summarize above this share of max input, less max output "
                                "(0: no budget, a model without a profile).")
    summary_prompt: str = param("", "Summary prompt template with {messages} (empty: Deep Agents' default).")

    def __post_init__(self) -> None:
        parse_clauses(self.trigger)
        for what in ("keep", "truncate_keep") + (("truncate_trigger",) if self.truncate_trigger else ()):
            clauses = parse_clauses(getattr(self, what), what)
            if len(clauses) != 1 or len(clauses[0]) != 1:
                raise UsageError(f"deepagents: {what} takes one kind:value, got {getattr(self, what)!r}")
        if self.summary_prompt and "{messages}" not in self.summary_prompt:
            raise UsageError("summary_prompt must contain {messages}")


class DeepAgents(LangChainSummarization):
    name = "deepagents"
    prompt_template = DEEPAGENTS_SUMMARY_PROMPT

    def __init__(self, p: DeepAgentsParams) -> None:
        super().__init__(p)
        self.dp = p
        self.truncate = parse_clauses(p.truncate_trigger, "truncate_trigger")[0][0] if p.truncate_trigger else None
        (((self.truncate_kind, self.truncate_value),),) = parse_clauses(p.truncate_keep, "truncate_keep")
        self.truncated: set[tuple[str, int]] = set()

    def wake(self, s: SessionView) -> Wake:
        """Its argument truncation and input budget act without a summary trigger: asked every question."""
        return NEXT_QUESTION

    def total(self, s: SessionView, system: list[LCMessage], messages: list[LCMessage]) -> int:
        """``_count_tokens``: the system message and tools with the messages, usage-scaled."""
        return self.count([*system, *messages], prefix=s.system_tokens)

    def before_step(self, s: SessionView) -> Sequence[Action]:
        head = system_head(s)
        everything = self.messages(s, 0)
        system = [m for m in everything if m.entry < head]
        messages = everything[len(system):]
        total = self.total(s, system, messages)
        actions: list[Action] = []
        targets, messages = self.truncate_args(s, messages, total)
        if targets:
            actions.append(Prune(tuple(targets), "truncate_args"))
            total = self.total(s, system, messages)
        over_budget = self.dp.input_budget > 0 and total > max(
            0, int(s.limits.input_limit * self.dp.input_budget) - s.limits.max_output)
        if self.should_summarize(s, messages, total) or over_budget or s.context_tokens > s.limits.input_limit:
            act = self.summarize(s, head, messages, prefix=SUMMARY_PREFIX, suffix=SUMMARY_SUFFIX)
            if act is not None:
                actions.append(act)
        return actions

    def truncate_args(self, s: SessionView, messages: list[LCMessage],
                      total: int) -> tuple[list[tuple[str, int, str]], list[LCMessage]]:
        """``_truncate_args``: long write_file/edit_file arguments before the truncation cutoff."""
        if self.truncate is None:
            return [], messages
        kind, value = self.truncate
        limit = len(messages) if kind == "messages" else total
        if limit < (value if kind == "messages" else self.threshold(s, kind, value)):
            return [], messages
        cutoff = self.truncate_cutoff(s, messages)
        targets: list[tuple[str, int, str]] = []
        out = list(messages)
        for i in range(min(cutoff, len(messages))):
            m = messages[i]
            if m.type != "ai" or not m.tool_calls:
                continue
            calls = tuple(self.truncate_call(c) if c.get("name") in TRUNCATE_TOOLS else c for c in m.tool_calls)
            if calls == m.tool_calls:
                continue
            out[i] = replace(m, tool_calls=calls)
            e = s.entries[m.entry]
            for new, old in zip(calls, m.tool_calls, strict=True):
                if new is not old:
                    j = next(j for j, p in enumerate(e.message.parts) if isinstance(p, ToolCall) and p.id == old["id"])
                    if (e.id, j) not in self.truncated:
                        self.truncated.add((e.id, j))
                        targets.append((e.id, j, json.dumps(new["args"], ensure_ascii=False)))
        return targets, out

    def truncate_call(self, call: dict[str, object]) -> dict[str, object]:
        args = call.get("args")
        if not isinstance(args, dict):
            return call
        new = {k: v[:20] + TRUNCATION_TEXT if isinstance(v, str) and len(v) > self.dp.max_arg_length else v
               for k, v in args.items()}
        return {**call, "args": new} if new != args else call

    def truncate_cutoff(self, s: SessionView, messages: Sequence[LCMessage]) -> int:
        """``_determine_truncate_cutoff_index``: messages before it may be truncated."""
        if self.truncate_kind == "messages":
            keep = int(self.truncate_value)
            return len(messages) if len(messages) <= keep else len(messages) - keep
        target = max(1, self.threshold(s, self.truncate_kind, self.truncate_value))
        kept = 0
        for i in range(len(messages) - 1, -1, -1):
            tokens = self.count([messages[i]], scaled=False)
            if kept + tokens > target:
                return i + 1
            kept += tokens
        return 0


@strategy("deepagents", params=DeepAgentsParams,
          source="langchain-ai/deepagents create_summarization_middleware (deepagents 0.7.32)",
          summary="at 85% of max input (or over 95% less output) summarize all but the newest 10% of it",
          presets={"no-profile": {"trigger": NO_PROFILE_TRIGGER, "keep": NO_PROFILE_KEEP,
                                  "truncate_trigger": NO_PROFILE_TRUNCATE, "truncate_keep": NO_PROFILE_TRUNCATE,
                                  "input_budget": 0.0}})
def deepagents(p: DeepAgentsParams) -> DeepAgents:
    return DeepAgents(p)
