"""``compbench.sdk.counting`` — How a strategy counts: the view's counter, and the tools' own rough estimates.

A strategy sees sizes through :attr:`compbench.sdk.session.SessionView.counter`, the run's token counter
(:class:`compbench.measure.tokens.TokenCounter`: the tokenizer, the model family's correction, the
per-message overhead). This module says what a strategy may ask of it (:class:`Counter`), so the SDK names
the counter without depending on the measurement layer, and holds the character estimates the tools
themselves use (a tool that decides on ``length / 4`` must be replayed on ``length / 4``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from compbench.data.transcript import Message, Part


class Counter(Protocol):
    """What a strategy may ask of the view's token counter."""

    @property
    def message_overhead(self) -> int:
        """Tokens every message costs besides its parts (role, separators), corrected."""
        ...

    @property
    def sections_add_up(self) -> bool:
        """Whether texts that each end with a newline count, joined, as the sum of their counts (a BPE
        tokenizer never merges across such a boundary): a strategy may then count a long prompt section by
        section and reuse the sections' counts."""
        ...

    def count_text(self, text: str) -> int:
        """``text``'s tokens as the model sees them (with the family's correction)."""
        ...

    def count_raw(self, text: str) -> int:
        """``text``'s tokens under the tokenizer alone (no correction)."""
        ...

    def part(self, p: Part) -> int:
        """One part's tokens in context."""
        ...

    def message(self, m: Message, part_counts: Sequence[int] | None = None) -> int:
        """A message's tokens in context: its overhead and its parts (``part_counts`` when already known)."""
        ...

    def remember_raw(self, p: Part, raw: int) -> None:
        """Memoize a part's tokenizer count found another way (a prompt made of sections already counted)."""
        ...


def chars4(text: str) -> int:
    """Seed 004 ``estimateTokens``: ``Math.ceil(text.length / 4)``."""
    return math.ceil(len(text) / 4)


def chars4_round(text: str) -> int:
    """Seed 001 ``Token.estimate``: ``Math.max(0, Math.round(text.length / 4))`` (JS rounds .5 up)."""
    return max(0, math.floor(len(text) / 4 + 0.5))
