"""``compbench.strategies.observation_masking`` — ``observation-masking``: keep the tool outputs of the last M turns,
mask older ones, never summarize.

The baseline of JetBrains' "The Complexity Trap: Simple Observation Masking Is as Efficient as LLM
Summarization for Agent Context Management" (Lindenbauer et al., 2025), which keeps the observations of
the last M = 10 turns. Masking follows SWE-agent's ``LastNObservations`` history processor
(sweagent/agent/history_processors.py, commit 318f9091): an elided observation becomes
``Old environment output: ({n} lines omitted)`` with n = ``len(text.splitlines())``.

A turn is one assistant step with the tool results that follow it; tool results before the first
assistant message form a turn of their own. The view only grows under this strategy (it never compacts),
so the strategy keeps the view's turns as a queue and, before each step, masks only the outputs of the
turns that have just aged out: O(new messages) per step. Media parts of an observation are left alone
(SWE-agent appends "(k images omitted)"; compbench tool results carry text only).

Preset ``current``: SWE-agent's documented configuration of this processor (``n: 5``, "used in the
original paper to elide but the last 5 observations"); SWE-agent has one observation per step, so
``n`` observations are ``n`` turns.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from compbench.sdk import Action, Entry, Prune, SessionView, ToolResult, Usage, Wake
from compbench.sdk.registry import param, strategy

PLACEHOLDER = "Old environment output: ({lines} lines omitted)"  # SWE-agent LastNObservations
KEEP_LAST_TURNS = 10  # The Complexity Trap (2025): observations of the last M = 10 turns kept
SWE_AGENT_N = 5  # SWE-agent docs, history_processors: last_n_observations n: 5


@dataclass(frozen=True)
class ObservationMaskingParams:
    """``keep_last_turns`` = M; ``placeholder`` takes ``{lines}``, the masked output's line count."""

    keep_last_turns: int = param(
        KEEP_LAST_TURNS, "Turns whose tool outputs stay visible (the paper's M = 10); older outputs are masked.")
    placeholder: str = param(
        PLACEHOLDER, "What a masked output becomes; {lines} is its line count (SWE-agent's wording).")


Target = tuple[str, int, str]


class ObservationMasking:
    """One instance per replay: the turns still unmasked, oldest first, each with its outputs."""

    name = "observation-masking"

    def __init__(self, p: ObservationMaskingParams) -> None:
        self.p = p
        self.scanned = 0  # view positions already assigned to a turn
        self.turns: deque[list[Target]] = deque()
        self.due = 0  # the first step at which a turn can age out (its wake)

    def _outputs(self, e: Entry) -> list[Target]:
        return [(e.id, j, self.p.placeholder.format(lines=len(part.output.splitlines())))
                for j, part in enumerate(e.message.parts) if isinstance(part, ToolResult) and j not in e.pruned]

    def before_step(self, s: SessionView) -> Sequence[Action]:
        entries = s.entries
        if len(entries) < self.scanned:  # someone else rebuilt the view: start over (already masked parts skip)
            self.scanned, self.turns = 0, deque()
        for e in entries[self.scanned:]:
            if e.role == "assistant" or not self.turns:
                self.turns.append([])
            if e.role != "assistant":
                self.turns[-1].extend(self._outputs(e))
        self.scanned = len(entries)
        targets: list[Target] = []
        while len(self.turns) > self.p.keep_last_turns:
            targets.extend(self.turns.popleft())
        # each step adds one turn (its assistant message), a first turn may open before it: the turn that
        # ages out next does so this many steps from now
        held = len(self.turns)
        self.due = s.step + max(1, self.p.keep_last_turns + 1 - held - (held == 0))
        return (Prune(tuple(targets), "observation masking"),) if targets else ()

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        return Wake(step=self.due)


@strategy("observation-masking", params=ObservationMaskingParams,
          upstream="JetBrains 'The Complexity Trap' (2025) + SWE-agent LastNObservations",
          summary="keep the last M turns' tool outputs, mask older ones; never summarizes",
          presets={"current": {"keep_last_turns": SWE_AGENT_N}})
def observation_masking(p: ObservationMaskingParams) -> ObservationMasking:
    return ObservationMasking(p)
