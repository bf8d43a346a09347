"""``compbench.sdk.counting`` — How a strategy counts: the view's counter, and the tools' own rough estimates.

A strategy sees sizes through :attr:`compbench.sdk.session.SessionView.counter`, the run's token counter
(:class:`compbench.measure.tokens.TokenCounter`: the tokenizer, the model family's correction, the
per-message overhead). This module says what a strategy may ask of it (:class:`Counter`), so the SDK names
the counter without depending on the measurement layer, and holds the character estimates the tools
themselves use (a tool that decides on ``length / 4`` must be replayed on ``length / 4``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Protocol

from compbench.data.transcript import Message, Part, Text


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


_NEWLINE_FIRST = re.compile(r"[^\S\r\n]*[\r\n]")  # whitespace reaching a newline before anything else


def joins_add_up(sections: Sequence[str]) -> bool:
    r"""Whether no join of ``sections`` is one a BPE tokenizer merges across: each non-empty section but the last
    ends with a newline, and the next non-empty one begins neither with ``/`` nor with whitespace that reaches a
    newline (``\n\n``, `` \r\n``; spaces before anything else are fine).

    Both tokenizers (o200k_base, cl100k_base) split a text with a regular expression before merging, and merge
    within its pieces only; the expression's alternatives are tried in order, without looking behind. A piece
    never goes on past a newline into what follows: a letter piece holds no newline (its one leading character
    may be anything but a newline) and a number piece neither; a punctuation piece ends at the newlines after it,
    and in o200k_base at the ``/`` after them (``[^\s\p{L}\p{N}]+[\r\n/]*``); a whitespace run that ends with
    the section's newline is matched by ``\s*[\r\n]+`` (``\s*[\r\n]`` in cl100k_base), tried before
    ``\s+(?!\S)`` and ``\s+``, and it takes the following whitespace only up to a newline in it. So where the
    next section begins with neither ``/`` nor whitespace holding a newline before its first other character, a
    piece ends at the join, each side splits as it does alone, and the count of the sections joined is the sum
    of their counts. (Python's ``\s`` holds for every character the tokenizers' ``\s`` means, and more: a
    stricter test.)
    """
    before = ""
    for x in sections:
        if not x:
            continue
        if before and (before[-1] != "\n" or x[0] == "/" or (x[0].isspace() and _NEWLINE_FIRST.match(x))):
            return False
        before = x
    return True


def joined_text(counter: Counter, sections: Sequence[str]) -> Text:
    """The text of ``sections`` joined, its tokenizer count remembered as the sum of theirs, each counted once
    by text, where that is the same number (:attr:`Counter.sections_add_up` and :func:`joins_add_up`): a prompt
    that sends again what an earlier one sent costs lookups for it, not a tokenizer pass."""
    part = Text("".join(sections))
    if counter.sections_add_up and joins_add_up(sections):
        count = counter.count_raw
        counter.remember_raw(part, sum(count(x) for x in sections if x))
    return part


def framed_text(counter: Counter, before: str, text: str, after: str) -> Text:
    """``before + text + after`` as one text, its tokenizer count remembered where it follows from ``text``'s
    own (counted once by text: a recorded tool output is, when its transcript was indexed) and a few short
    lines: with ``text = F + M + L`` cut after its first and its last newline, the count is ``count(before + F)
    + count(M) + count(L + after)`` and ``count(M) = count(text) - count(F) - count(L)``, each where
    :func:`joins_add_up` holds for those cuts (the same characters meet there, framed or not). A text without
    a newline, or whose cuts a tokenizer could merge across, is left to be counted whole."""
    part = Text(before + text + after)
    first, last = text.find("\n"), text.rfind("\n")
    if counter.sections_add_up and first >= 0:
        head, middle, tail = text[:first + 1], text[first + 1:last + 1], text[last + 1:]
        if joins_add_up((head, middle, tail)) and joins_add_up((before + head, middle, tail + after)):
            count = counter.count_raw
            inner = count(text) - count(head) - count(tail)
            counter.remember_raw(part, count(before + head) + inner + count(tail + after))
    return part


def chars4(text: str) -> int:
    """Seed 004 ``estimateTokens``: ``Math.ceil(text.length / 4)``."""
    return math.ceil(len(text) / 4)


def chars4_round(text: str) -> int:
    """Seed 001 ``Token.estimate``: ``Math.max(0, Math.round(text.length / 4))`` (JS rounds .5 up)."""
    return max(0, math.floor(len(text) / 4 + 0.5))
