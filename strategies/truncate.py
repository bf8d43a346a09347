"""``truncate``: drop the oldest whole turns until the next call fits. The simplest baseline: no summary.

A turn starts at a user message and runs to the next one (an assistant message is never separated
from its tool results). Leading system messages always stay. If even the last turn alone does not
fit, it is kept and the call overflows, which the report shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compbench.session import Action, Compact, Keep, SessionView
from compbench.strategies.base import strategy
from compbench.transcript import Usage

DEFAULT_RESERVE_OUTPUT = 4_096


@dataclass(frozen=True)
class TruncateParams:
    reserve_output: int = DEFAULT_RESERVE_OUTPUT  # room left for the reply, capped at the model's max output


class Truncate:
    name = "truncate"

    def __init__(self, p: TruncateParams) -> None:
        self.p = p

    def before_step(self, s: SessionView) -> Sequence[Action]:
        reserve = min(self.p.reserve_output, s.limits.max_output) if s.limits.max_output else self.p.reserve_output
        budget = s.limits.input_limit - reserve
        if s.context_tokens <= budget:
            return ()
        entries = s.entries
        head = 0
        while head < len(entries) and entries[head].role == "system":
            head += 1
        starts = [i for i in range(head + 1, len(entries)) if entries[i].role == "user"]
        cut, dropped, prev = head, 0, head
        for start in starts:  # the smallest cut at a turn start that makes the call fit
            dropped += sum(e.tokens for e in entries[prev:start])
            prev = cut = start
            if s.context_tokens - dropped <= budget:
                break
        if cut == head:
            return ()
        kept = [Keep(e.id) for e in entries[:head]] + [Keep(e.id) for e in entries[cut:]]
        return [Compact("over budget: oldest turns dropped", tuple(kept))]

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()


@strategy("truncate", params=TruncateParams, source="baseline",
          summary="drop the oldest whole turns until the next call fits; never summarizes")
def truncate(p: TruncateParams) -> Truncate:
    return Truncate(p)
