"""``compbench.strategies.none`` — ``none``: never compacts. The reference every saving and every overflow is measured
against."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compbench.sdk import NEVER, Action, SessionView, Tool, Usage, Wake
from compbench.sdk.registry import strategy


@dataclass(frozen=True)
class NoneParams:
    """No parameters: the full history is always sent."""


class NoCompaction:
    name = "none"

    def before_step(self, s: SessionView) -> Sequence[Action]:
        return ()

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        return NEVER


# mini-swe-agent keeps its whole history (a context-window error ends the run): its own behaviour is none's.
TOOL = Tool("mini-swe-agent", ("mini-swe-agent",))


@strategy("none", params=NoneParams, upstream="reference",
          summary="never compacts: the cost and overflow baseline", tool=TOOL)
def none(p: NoneParams) -> NoCompaction:
    return NoCompaction()
