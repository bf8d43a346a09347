"""``compbench.strategies.anthropic_compaction`` — ``anthropic-compaction``: the Messages API's server-side compaction
at a token threshold, ``compact_20260112`` (beta ``compact-2026-01-12``).

Source: the Claude API docs page "Compaction at a token threshold"
(platform.claude.com/docs/en/build-with-claude/compaction-threshold, as fetched 2026-09-22), and the SDK
type docs of ``BetaCompactionBlockParam`` ("When content is None, the block represents a failed
compaction. The server treats these as no-ops").

- Trigger: ``{"type": "input_tokens", "value": 150000}`` by default, ``input_tokens`` the only type,
  ``value`` at least 50,000. The API "detects when input tokens reach your specified trigger threshold"
  (the 2026-02 edition said "exceed"; the current one, ``>=``, is followed). The check runs at the start
  of a sampling iteration, so here before a step, on the prompt the call would send.
- It "generates a summary of the current conversation", creates a ``compaction`` block at the start of
  the assistant response and "continues the response with the compacted context"; on later requests all
  content blocks before the block are dropped. So the whole conversation is summarized, the latest user
  message and tool results included; only the system prompt (a request parameter, here the view's leading
  system messages) survives. The new view: system, then the summary as the assistant's compaction block,
  then the recorded response. ``pause_after_compaction`` (re-inserting recent turns) is the client's
  choice, not modelled.
- The prompt: "The default summarization prompt varies by model"; the one the docs quote ("some models
  use") is :data:`DEFAULT_PROMPT`. ``instructions`` replaces it completely (it does not supplement it).
  It is sent after the transcript, as a user turn.
- Cost: "Compaction requires an additional sampling step". The top-level ``input_tokens`` /
  ``output_tokens`` do not include it; the compaction iteration is reported apart in ``usage.iterations``
  and billed as its own sampling step at the model's rates ("sum across all entries"). The summary
  request here is that iteration: its tokens land in compbench's summarizer_input/output, apart from the
  step's input, as the API reports them. The same model summarizes (no cheaper model can be chosen).
  compbench prices summarizer tokens as uncached input; the API's compaction iteration reads the same
  prompt prefix and may be served from the prompt cache, so compbench's figure is an upper bound.
- Failure: the block comes back with ``content: null`` (the docs name a model calling a tool instead of
  summarizing), which the server treats as a no-op: the history is left as it was, the iteration is still
  billed, and the next request over the threshold compacts again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compbench.errors import UsageError
from compbench.sdk import Action, Compact, Insert, Keep, Message, SessionView, Slot, SummaryRequest, Text, Usage, Wake
from compbench.sdk.registry import param, strategy

TRIGGER = 150_000  # docs: trigger default {"type": "input_tokens", "value": 150000}
MIN_TRIGGER = 50_000  # docs: "value must be at least 50,000 tokens"
DEFAULT_PROMPT = (  # docs: "some models use the following prompt" (the default varies by model)
    "You have written a partial transcript for the initial task above. Please write a summary of the transcript. "
    "The purpose of this summary is to provide continuity so you can continue to make progress towards solving the "
    "task in a future context, where the raw history above may not be accessible and will be replaced with this "
    "summary. Write down anything that would be helpful, including the state, next steps, learnings etc. You must "
    "wrap your summary in a <summary></summary> block.")
NO_TOOLS_INSTRUCTIONS = (  # docs, Current limitations: the instructions that keep the summarizer from calling tools
    "Summarize the transcript inside <summary></summary> tags. Include relevant information in the summary for "
    "continuing the task in the next context window. Do not call any tools while writing this summary; respond "
    "with text only.")


@dataclass(frozen=True)
class AnthropicCompactionParams:
    """``compact_20260112``'s parameters (``trigger`` = {type: input_tokens, value: trigger})."""

    trigger: int = param(TRIGGER, "Input tokens at which the API compacts (trigger.value; at least 50,000).")
    instructions: str = param("", "Custom summarization prompt; replaces the default prompt completely (empty: "
                              "the default).")

    def __post_init__(self) -> None:
        if self.trigger < MIN_TRIGGER:
            raise UsageError(f"anthropic-compaction: trigger must be at least {MIN_TRIGGER:,} input tokens "
                             f"(the API's minimum), got {self.trigger:,}")


class AnthropicCompaction:
    name = "anthropic-compaction"

    def __init__(self, p: AnthropicCompactionParams) -> None:
        self.p = p

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        return Wake(tokens=self.p.trigger)

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if s.context_tokens < self.p.trigger:
            return ()
        return [self.compact(s)]

    def prompt(self) -> str:
        return self.p.instructions or DEFAULT_PROMPT

    def compact(self, s: SessionView) -> Compact:
        """Everything but the system prompt is summarized; the compaction block replaces it."""
        head = 0
        while head < len(s.entries) and s.entries[head].role == "system":
            head += 1
        request = SummaryRequest(system="", prompt=(*s.rendered(), Message("anthropic-compaction", "user",
                                                                           (Text(self.prompt()),))),
                                 source=s.rendered(head))
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in s.entries[:head]),
                                  Insert("assistant", with_summary=True, origin="summary",
                                         meta={"block": "compaction"}))
        return Compact("auto", view, request, on_failure="unchanged",
                       meta={"trigger": self.p.trigger, "input_tokens": s.context_tokens})


@strategy("anthropic-compaction", params=AnthropicCompactionParams,
          upstream="Claude API docs, Compaction at a token threshold (compact_20260112; fetched 2026-09-22)",
          summary="server-side: at 150k input tokens the whole conversation becomes one compaction block",
          presets={"minimum": {"trigger": MIN_TRIGGER},
                   "no-tools": {"instructions": NO_TOOLS_INSTRUCTIONS}})
def anthropic_compaction(p: AnthropicCompactionParams) -> AnthropicCompaction:
    return AnthropicCompaction(p)
