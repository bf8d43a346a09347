"""``compbench.strategies.truncate`` — ``truncate``: drop the oldest whole turns until the next call fits. The simplest
baseline: no summary.

Before each step: the call needs ``view tokens + system overhead + reserve`` where ``reserve =
min(limits.max_output, reserve_output)``; if that exceeds the input limit, the oldest turns are dropped,
one at a time, until it fits. A turn starts at a user message and runs to the next one, so an assistant
message never loses its tool results (a user message holding only tool results, as Anthropic's format
has them, does not start a turn). Messages before the first turn start (after the leading system
messages) form a turn of their own. Leading system messages always stay. If even the last turn alone
does not fit, it is kept and the call overflows, which the report shows.

There is no upstream tool to follow: ``current`` equals the seed preset and exists so every strategy
accepts ``preset=current``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compbench.sdk import Action, Compact, Entry, Keep, SessionView, ToolResult, Usage, Wake
from compbench.sdk.registry import param, strategy

RESERVE_OUTPUT = 4_096  # compbench's default max_output (tests/helpers.run, ModelLimits examples)


@dataclass(frozen=True)
class TruncateParams:
    """``reserve_output``: room left for the reply, capped at the model's max output."""

    reserve_output: int = param(
        RESERVE_OUTPUT, "Room left for the reply when choosing what to drop, at most the model's max output.")


def starts_turn(e: Entry) -> bool:
    """A user message with something besides tool results opens a turn."""
    return e.role == "user" and not all(isinstance(p, ToolResult) for p in e.message.parts)


class Truncate:
    """One instance per replay: remembers the view's turn starts so an overflowing single-turn session
    costs O(new messages) per step, not a rescan."""

    name = "truncate"

    def __init__(self, p: TruncateParams) -> None:
        self.p = p
        self._scanned = 0
        self._starts: list[int] = []  # view positions of turn starts (after the leading system messages)
        self._head = 0
        self._at: tuple[SessionView, int] | None = None  # the view and revision the scan is of

    def reserve(self, s: SessionView) -> int:
        return min(s.limits.max_output, self.p.reserve_output) if s.limits.max_output > 0 else self.p.reserve_output

    def _scan(self, s: SessionView) -> None:
        """Turn starts of the view, extended over what was appended since (the view only grew unless its
        revision changed)."""
        entries = s.entries
        if self._at is None or self._at[0] is not s or self._at[1] != s.revision:
            self._scanned, self._at = 0, (s, s.revision)
        if self._scanned == 0:
            self._starts, self._head = [], 0
            while self._head < len(entries) and entries[self._head].role == "system":
                self._head += 1
        for i in range(max(self._scanned, self._head + 1), len(entries)):
            if starts_turn(entries[i]):
                self._starts.append(i)
        self._scanned = len(entries)

    def before_step(self, s: SessionView) -> Sequence[Action]:
        entries = s.entries
        self._scan(s)
        budget = s.limits.input_limit - self.reserve(s)
        need = s.context_tokens  # view tokens + system overhead
        if need <= budget or not self._starts:  # fits, or a single turn: nothing whole can go (overflow)
            return ()
        head = cut = self._head
        for start in self._starts:
            need -= sum(e.tokens for e in entries[cut:start])
            cut = start
            if need <= budget:
                break
        kept = (*(Keep(e.id) for e in entries[:head]), *(Keep(e.id) for e in entries[cut:]))
        return (Compact("over budget: oldest turns dropped", kept, meta={"dropped": cut - head}),)

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        """It drops turns only before a call over its budget."""
        return Wake(tokens=s.limits.input_limit - self.reserve(s) + 1)


@strategy("truncate", params=TruncateParams, upstream="baseline",
          summary="drop the oldest whole turns until the next call fits; never summarizes",
          presets={"current": {}})
def truncate(p: TruncateParams) -> Truncate:
    return Truncate(p)
