"""``keep-last``: over a trigger, summarize all but the last messages. Written from ``compbench.sdk`` alone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compbench.sdk import (
    Action,
    Compact,
    CompactionEvent,
    Insert,
    Keep,
    SessionView,
    SummaryRequest,
    Usage,
    param,
    strategy,
)


@dataclass(frozen=True)
class KeepLastParams:
    keep: int = param(6, "Messages kept verbatim, newest first (a tool result stays with its call).")
    trigger: int = param(3_000, "Context tokens at which it compacts, before a call.")


class KeepLast:
    name = "keep-last"

    def __init__(self, p: KeepLastParams) -> None:
        self.p = p
        self.applied = 0  # its compactions the loop applied (told by last_event)

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if isinstance(s.last_event, CompactionEvent) and s.last_event.ok:
            self.applied += 1
        if s.context_tokens < self.p.trigger:
            return ()
        c = self.manual(s)
        return (c,) if c is not None else ()

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def manual(self, s: SessionView) -> Compact | None:
        """``/compact``: the same compaction, asked by the user."""
        if len(s.entries) <= self.p.keep + 1:
            return None
        cut = len(s.entries) - self.p.keep
        while cut > 1 and s.entries[cut].role == "tool":
            cut -= 1
        request = SummaryRequest("Summarize the conversation so far.", s.rendered(), s.rendered(1, cut), 300)
        view = (Keep(s.entries[0].id), Insert("user", "Summary so far:\n", with_summary=True, origin="summary"),
                *(Keep(e.id) for e in s.entries[cut:]))
        return Compact("over trigger", view, request)


@strategy("keep-last", params=KeepLastParams, upstream="compbench-testplugin 1.0",
          summary="over a trigger, summarize all but the last messages", presets={"eager": {"trigger": 1_000}})
def keep_last(p: KeepLastParams) -> KeepLast:
    return KeepLast(p)
