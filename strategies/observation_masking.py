"""``observation-masking``: keep the tool outputs of the last M turns, mask older ones, never summarize.

The baseline of JetBrains' "The Complexity Trap" (2025), which found it as good as LLM summaries at a
fraction of the cost on SWE-bench Verified; it follows SWE-agent's ``LastNObservations`` history
processor, whose placeholder reads ``Old environment output: (N lines omitted)``. A turn here is one
assistant step with its tool results. Masking acts only on outputs that have newly aged out, so a step
costs O(new outputs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compbench.session import Action, Prune, SessionView
from compbench.strategies.base import strategy
from compbench.transcript import ToolResult, Usage

PLACEHOLDER = "Old environment output: ({lines} lines omitted)"  # SWE-agent LastNObservations


@dataclass(frozen=True)
class ObservationMaskingParams:
    keep_last_turns: int = 10
    placeholder: str = PLACEHOLDER


class ObservationMasking:
    name = "observation-masking"

    def __init__(self, p: ObservationMaskingParams) -> None:
        self.p = p
        self.done = 0  # view positions below this are already decided

    def before_step(self, s: SessionView) -> Sequence[Action]:
        entries = s.entries
        seen = 0
        cutoff = 0
        for i in range(len(entries) - 1, -1, -1):
            if entries[i].role == "assistant":
                seen += 1
                if seen == self.p.keep_last_turns:
                    cutoff = i
                    break
        else:
            return ()
        targets = []
        for i in range(min(self.done, cutoff), cutoff):
            e = entries[i]
            for j, part in enumerate(e.message.parts):
                if isinstance(part, ToolResult) and j not in e.pruned:
                    lines = len(part.output.splitlines())
                    targets.append((e.id, j, self.p.placeholder.format(lines=lines)))
        self.done = max(self.done, cutoff)
        return [Prune(tuple(targets), "observation masking")] if targets else ()

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()


@strategy("observation-masking", params=ObservationMaskingParams, source="JetBrains 'The Complexity Trap' (2025)",
          summary="keep the last M turns' tool outputs, mask older ones; never summarizes")
def observation_masking(p: ObservationMaskingParams) -> ObservationMasking:
    return ObservationMasking(p)
