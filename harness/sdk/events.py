"""``compbench.sdk.events`` — What a replay records when a strategy acts: one event per compaction or prune.

The loop writes them into the trace, and shows a strategy the event of its own last action
(:attr:`compbench.sdk.session.SessionView.last_event`), so no strategy has to work out again whether what
it asked for was applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

Phase = Literal["before", "after", "manual"]
NOOP = "no-op: the compaction would replace nothing"  # the error of a compaction that was not applied


@dataclass(frozen=True, slots=True)
class CompactionEvent:
    """One compaction: what triggered it, what it replaced and kept, the summary and its cost.

    ``ok``: applied with its summary; ``applied``: the view changed (also a failed summary whose
    compaction applies anyway, ``on_failure="apply"``)."""

    seq: int
    step: int
    phase: Phase
    reason: str
    ok: bool
    tokens_before: int
    tokens_after: int
    replaced_ids: tuple[str, ...]
    kept_ids: tuple[str, ...]
    replaced_tokens: int
    summary: str
    summary_tokens: int
    summarizer_input: int
    summarizer_output: int
    error: str | None = None
    attempts: int = 0
    latency_ms: float = 0.0
    summary_budget: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    summarizer_cached: int = 0  # of summarizer_input, read from the session's prompt cache
    applied: bool = False
    summarizer_written: int = 0  # of summarizer_input, written to the prompt cache (requests marked cache_write)


@dataclass(frozen=True, slots=True)
class PruneEvent:
    """One prune: the parts it hid (those already hidden are left out) and the tokens that saved."""

    seq: int
    step: int
    phase: Phase
    reason: str
    parts: tuple[tuple[str, int], ...]
    tokens_hidden: int

    @property
    def applied(self) -> bool:
        return bool(self.parts)


Event: TypeAlias = CompactionEvent | PruneEvent
