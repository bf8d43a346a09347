"""``compbench.measure.facts.matching`` — A part's text as fact matching reads it, and the matcher of a transcript's
anchors: each part normalized once (:class:`compbench.measure.facts.presence.FactIndex` keeps the normalized texts),
every anchor looked for over all of them in one search.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from compbench.data.calls import call_text
from compbench.data.facts import Fact, normalize
from compbench.data.transcript import Part, Text, ToolCall, ToolResult
from compbench.memo import Memo

CALL_TEXTS_KEPT = 20_000  # calls remembered at most (the memo starts over past it)
CALL_TEXTS_CHARS = 64 * 2**20  # and characters of their texts
# a call's match text by value: decoded once, asked at every compaction
_CALL_TEXTS: Memo[ToolCall, str] = Memo(CALL_TEXTS_CHARS, CALL_TEXTS_KEPT, size=lambda _, text: len(text))
# a part's text normalized, by text: every compaction's check reads the view again
_NORMALIZED: Memo[str, str] = Memo(CALL_TEXTS_CHARS)


def normalized(text: str) -> str:
    """``normalize(text)``, remembered (bounded by :data:`CALL_TEXTS_CHARS` characters, then started over)."""
    norm = _NORMALIZED.find(text)
    return norm if norm is not None else _NORMALIZED.add(text, normalize(text))


def placeholder_text(p: Part, placeholder: str) -> str:
    """The match text of ``p`` pruned to ``placeholder``, as :meth:`compbench.sdk.session.Entry.rendered` renders
    it (without building the message): a tool output's or a call's arguments replaced, any other part a text."""
    if isinstance(p, ToolCall):  # part_match_text of the call with these arguments (only they decide its text)
        return p.name + " " + call_text(ToolCall(p.id, p.name, placeholder))
    return placeholder


def part_match_text(p: Part) -> str:
    """The text of a part as matching sees it: tool-call arguments decoded (no JSON escapes)."""
    if isinstance(p, Text):
        return p.text
    if isinstance(p, ToolCall):
        text = _CALL_TEXTS.find(p)
        return text if text is not None else _CALL_TEXTS.add(p, p.name + " " + call_text(p))
    if isinstance(p, ToolResult):
        return p.output
    return ""


MATCHED_CHARS = 16 * 2**20  # characters of distinct texts a matcher remembers the facts of


class Matcher:
    """All anchors against one normalized text: a substring test per anchor, done by ``str.__contains__``
    in C. Faster here than one big regex alternation, which Python tries at every position, and it finds
    overlapping anchors and anchors that prefix one another without special cases.

    The answer for a text is remembered (by value, bounded by :data:`MATCHED_CHARS`): a summary is matched
    when it joins the view, again in the span of every later compaction and in the retention figures, and
    the strategies of one transcript make many of the same texts (half of the questions on the samples)."""

    def __init__(self, facts: Sequence[Fact]) -> None:
        by_anchor: dict[str, set[str]] = {}
        for f in facts:
            for a in f.anchors:
                by_anchor.setdefault(a, set()).add(f.id)
        self.items = tuple((a, frozenset(ids)) for a, ids in sorted(by_anchor.items()))
        self._found: Memo[str, frozenset[str]] = Memo(MATCHED_CHARS)

    def facts_in(self, text: str) -> frozenset[str]:
        if not self.items or not text:
            return frozenset()
        found = self._found.find(text)
        if found is not None:
            return found
        return self._found.add(text, self._scan(normalize(text)))

    def _scan(self, norm: str) -> frozenset[str]:
        out: set[str] = set()
        for anchor, ids in self.items:
            if anchor in norm:
                out |= ids
        return frozenset(out)

    def facts_in_parts(self, texts: Sequence[str], norms: Sequence[str]) -> list[frozenset[str]]:
        """``facts_in`` of each of ``texts`` (``norms``: their normalized texts), in one pass per anchor over
        the texts joined, instead of one pass per text over every anchor: a normalized text holds no newline,
        so an anchor without one found in the joined texts lies inside one of them, and the search goes on
        from the next. What it finds is remembered as ``facts_in``'s answers are."""
        found: list[set[str] | None] = [None] * len(texts)
        if self.items:
            joined = "\n".join(norms)
            ends, at = [], -1
            for n in norms:
                at += len(n) + 1
                ends.append(at)  # the newline after each text (one past the joined text for the last)
            for anchor, ids in self.items:
                if not anchor:  # found in every text (facts_in of an empty text finds nothing)
                    for k, text in enumerate(texts):
                        if text:
                            found[k] = (found[k] or set()) | ids
                    continue
                if "\n" in anchor:  # never inside one normalized text
                    continue
                i = joined.find(anchor)
                while i >= 0:
                    k = bisect_right(ends, i)
                    hit = found[k]
                    if hit is None:
                        found[k] = set(ids)
                    else:
                        hit |= ids
                    i = joined.find(anchor, ends[k] + 1)
        out = [frozenset(x) if x else _NOTHING for x in found]
        if self.items:
            add, find = self._found.add, self._found.find
            for text, ids in zip(texts, out, strict=True):
                if text and find(text) is None:
                    add(text, ids)
        return out


_NOTHING: frozenset[str] = frozenset()
