"""``compbench.strategies.copilot_cli`` — ``copilot-cli``: GitHub Copilot CLI's automatic compaction, a **documented
heuristic**: Copilot CLI is closed source (the ``@github/copilot`` package ships a minified bundle), so this strategy
follows what GitHub documents, not code read.

Sources (found with compbench's search, November 2026):

* GitHub's documentation, "Managing context in GitHub Copilot CLI" (github/docs
  ``content/copilot/concepts/agents/copilot-cli/context-management.md`` at 3c9bed0f): "When your conversation reaches
  approximately 80% of the context window's capacity, Copilot CLI automatically starts compacting the context in
  the background. This leaves a buffer of approximately 20% so that tool calls can continue to run while
  compaction is in progress. If the context fills to approximately 95% before compaction finishes, Copilot CLI
  pauses briefly to wait for compaction to complete before continuing." Compaction "takes a snapshot of the
  current conversation history", sends the full conversation with "a special prompt that asks it to generate a
  structured summary" (goals, what was done, key technical details, important files, next steps), "replaces the
  old conversation history with the summary, along with any original user instructions and the current state of
  any plans or to-do lists", and "keeps any messages that were added while compaction was running".
* The CLI's changelog (github/copilot-cli ``changelog.md`` at 01c23fd4), the version boundaries: **0.0.374**
  (2026-01-02) "Add auto-compaction at 95% token limit and ``/compact`` command"; **0.0.380** (2026-01-13)
  "Auto-compaction runs in background without blocking the conversation". Before 0.0.374 nothing compacts by
  itself (the older logs record ``session.truncation`` by a ``BasicTruncator``: old messages dropped, not modelled).

The model (``version_preset``): 0.0.380 on (``background``), before each model call, once the context reaches
``background_threshold`` (0.8) of the window the snapshot is taken (the view's messages so far) and summarized
while the call goes on; the compaction lands before the next call, keeping verbatim what that call added (the
summarizer's time is not in the log: one call is assumed). A context at ``blocking_threshold`` (0.95) or over when
the snapshot is taken compacts at once (the CLI waits). Preset ``0.0.374`` (0.0.374-0.0.379): no background
compaction, a blocking one at 95%. The view after it: the leading system messages, the summary as a user message,
what was kept. The threshold is on the view's tokens against the model's whole context window (the docs say "of
the context window's capacity"; how the CLI counts is not documented). The summary prompt below paraphrases the
documented sections; the CLI's own prompt is not public. The request has its own system prompt, so it reads
nothing from the session's cache: the one real ``session.compaction_complete`` quoted in ../shared/real-logs
FORMATS.md records ``compactionTokensUsed.cachedInput: 0``.

Checked against real compactions: none. compbench imports Copilot CLI's ``events.jsonl`` (:mod:`compbench.data.
formats.copilot`), but no Copilot CLI log is in ``../shared``; the one event quoted in FORMATS.md (a compaction that
started at 112,275 tokens) does not give the model's window, so it places no threshold. ``compbench fidelity`` on a
user's Copilot logs is the check. No setting: the threshold is not configurable (github/copilot-cli#1688 and #3026
ask for one).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from compbench.sdk import (
    Action,
    Compact,
    Insert,
    Keep,
    Message,
    SessionView,
    Slot,
    SummaryRequest,
    Text,
    Tool,
    Usage,
    Wake,
    param,
    strategy,
    version_tuple,
)

NAME = "copilot-cli"
BACKGROUND_THRESHOLD = 0.8  # docs: "approximately 80% of the context window's capacity" (0.0.380+)
BLOCKING_THRESHOLD = 0.95  # docs: "approximately 95%"; changelog 0.0.374: "auto-compaction at 95% token limit"
BACKGROUND_FROM = (0, 0, 380)  # changelog 0.0.380: "Auto-compaction runs in background"
AUTO_FROM = (0, 0, 374)  # changelog 0.0.374: "Add auto-compaction at 95% token limit"
SYSTEM = "You summarize a coding agent's conversation so that the agent can continue the work from the summary alone."
PROMPT = ("Write a structured summary of the conversation so far: the goals of the conversation, what was done, "
          "the key technical details, the important files, and the planned next steps.")  # the docs' sections
SUMMARY_PREFIX = "The earlier conversation was compacted into this summary:\n"


@dataclass(frozen=True)
class CopilotCliParams:
    background: bool = param(True, "Compact in the background from background_threshold, landing before the next "
                                   "call (0.0.380+); false: only the blocking compaction (0.0.374-0.0.379).")
    background_threshold: float = param(BACKGROUND_THRESHOLD, "Share of the context window at which the background "
                                                              "compaction starts (documented: about 80%).", hi=1)
    blocking_threshold: float = param(BLOCKING_THRESHOLD, "Share of the context window at which the CLI waits for "
                                                          "the compaction (documented: about 95%).", hi=1)


class CopilotCli:
    """One replay: ``snapshot`` is the id of the last message a background compaction summarizes (None: none runs)."""

    name = NAME

    def __init__(self, p: CopilotCliParams) -> None:
        self.p = p
        self.snapshot: str | None = None

    def threshold(self, s: SessionView, share: float) -> int:
        return math.ceil(share * s.limits.context_window)

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if self.snapshot is not None:  # the background compaction started before the last call lands now
            last, self.snapshot = self.snapshot, None
            try:
                stop = s.position(last) + 1
            except (KeyError, ValueError):
                return ()
            return self.compact(s, stop, "background compaction (started at 80% of the window) completed")
        if s.context_tokens >= self.threshold(s, self.p.blocking_threshold):
            return self.compact(s, len(s.entries), "context at 95% of the window: blocking compaction")
        if self.p.background and s.context_tokens >= self.threshold(s, self.p.background_threshold) and s.entries:
            self.snapshot = s.entries[-1].id  # the snapshot: summarized while this call goes on
        return ()

    def compact(self, s: SessionView, stop: int, reason: str) -> Sequence[Action]:
        entries = s.entries
        head = next((i for i, e in enumerate(entries) if e.role != "system"), len(entries))
        if stop <= head:
            return ()
        instruction = Message(f"{NAME}-prompt", "user", (Text(PROMPT),))
        span = s.rendered(head, stop)
        request = SummaryRequest(SYSTEM, (*span, instruction), span)
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in entries[:head]),
                                  Insert("user", SUMMARY_PREFIX, with_summary=True, origin="summary"),
                                  *(Keep(e.id) for e in entries[stop:]))
        return (Compact(reason, view, request, on_failure="unchanged"),)

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        """A background compaction under way lands at the next question; else at the threshold it starts from."""
        if self.snapshot is not None:
            return Wake.next_question()
        share = self.p.background_threshold if self.p.background else self.p.blocking_threshold
        return Wake(tokens=self.threshold(s, share))


def version_preset(version: str) -> str | None:
    """``0.0.374`` for 0.0.374-0.0.379 (blocking at 95% only), None (the defaults: background from 80%) from 0.0.380;
    before 0.0.374 no automatic compaction is modelled (None: the defaults, and fidelity finds none to compare)."""
    v = version_tuple(version)
    if v is None or v >= BACKGROUND_FROM or v < AUTO_FROM:
        return None
    return "0.0.374"


TOOL = Tool("Copilot CLI", ("copilot",), version_preset=version_preset,
            preset_versions={"seed": "0.0.380+ (background from ~80%, blocking at ~95%; docs)",
                             "0.0.374": "0.0.374-0.0.379 (blocking at ~95%; changelog)"})


@strategy(NAME, params=CopilotCliParams, tool=TOOL,
          upstream="documented heuristic (closed source): GitHub docs 'Managing context in GitHub Copilot CLI' "
                 "(github/docs 3c9bed0f), github/copilot-cli changelog 0.0.374 and 0.0.380",
          summary="documented heuristic (closed source): from ~80% of the window a background summary of the "
                  "history lands before the next call (blocking at ~95%); the system prompt, summary and newer "
                  "messages kept",
          presets={"0.0.374": {"background": False}})
def copilot_cli(p: CopilotCliParams) -> CopilotCli:
    return CopilotCli(p)
