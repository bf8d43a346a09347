"""``compbench.sdk.trace`` — What one replay recorded: a record per simulated model call, and the trace of the whole
replay (its steps, compactions, prunes and views)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from compbench.sdk.events import CompactionEvent, PruneEvent


class StepRecord(NamedTuple):
    """One simulated model call. A NamedTuple: one is built per step per replay, and a frozen dataclass's
    ``__init__`` (a guarded ``object.__setattr__`` per field) made that a visible share of a tuning sweep."""

    step: int
    message_id: str
    message_index: int
    input: int
    output: int
    cache_read: int
    cache_write: int
    visible: int
    epoch: int
    overflow: bool


@dataclass(frozen=True, slots=True)
class Trace:
    """Everything a replay did. ``epochs[k]`` lists the view's ids when epoch k began (after an event);
    a step's visible ids are its epoch's ids plus the recorded messages appended since."""

    transcript_id: str
    strategy: str
    steps: tuple[StepRecord, ...]
    compactions: tuple[CompactionEvent, ...]
    prunes: tuple[PruneEvent, ...]
    epochs: tuple[tuple[str, ...], ...]
    epoch_starts: tuple[int, ...]
    final_view: tuple[str, ...]
