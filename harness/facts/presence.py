"""Fact presence, tracked incrementally as the view changes, and the retention figures it yields.

Every part of a transcript is matched against the facts' anchors once (:class:`FactIndex`); the
:class:`PresenceTracker` then follows the replay loop (it is a loop ``Observer``) and keeps, per fact,
how many visible parts contain it. A step costs O(1) plus the facts of the messages it adds; only
inserted messages (summaries) are matched on the fly.

Needed facts: a fact is *needed* at step j when the recorded assistant message j mentions it (text or
tool-call arguments) and no user/tool message since the previous step re-introduced it, so the agent
had to rely on older context. Needed-fact recall is the share of such needs whose fact was present in
the prompt of step j.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from compbench.facts import Fact, normalize
from compbench.facts.derive import call_args
from compbench.session import Entry
from compbench.transcript import Message, Part, Text, ToolCall, ToolResult, Transcript


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def part_match_text(p: Part) -> str:
    """The text of a part as matching sees it: tool-call arguments decoded (no JSON escapes)."""
    if isinstance(p, Text):
        return p.text
    if isinstance(p, ToolCall):
        args = call_args(p)
        return p.name + " " + (" ".join(_strings(args)) if args else p.args)
    if isinstance(p, ToolResult):
        return p.output
    return ""


class Matcher:
    """All anchors against one normalized text: a substring test per anchor, done by ``str.__contains__``
    in C. Faster here than one big regex alternation, which Python tries at every position, and it finds
    overlapping anchors and anchors that prefix one another without special cases."""

    def __init__(self, facts: Sequence[Fact]) -> None:
        by_anchor: dict[str, set[str]] = {}
        for f in facts:
            for a in f.anchors:
                by_anchor.setdefault(a, set()).add(f.id)
        self.items = tuple((a, frozenset(ids)) for a, ids in sorted(by_anchor.items()))

    def facts_in(self, text: str) -> frozenset[str]:
        if not self.items or not text:
            return frozenset()
        norm = normalize(text)
        out: set[str] = set()
        for anchor, ids in self.items:
            if anchor in norm:
                out |= ids
        return frozenset(out)


@dataclass(frozen=True)
class FactIndex:
    """Per message, per part, the ids of the facts it contains; plus the needs of each step."""

    facts: tuple[Fact, ...]
    matcher: Matcher
    part_facts: tuple[tuple[frozenset[str], ...], ...]
    needs: dict[int, tuple[str, ...]]  # assistant message index -> fact ids needed there
    # per message, the fact ids of all its parts with multiplicity: what an unpruned entry adds in one loop
    message_facts: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def build(cls, t: Transcript, facts: Sequence[Fact]) -> FactIndex:
        matcher = Matcher(facts)
        part_facts = tuple(tuple(matcher.facts_in(part_match_text(p)) for p in m.parts) for m in t.messages)
        first: dict[str, int] = {}
        for i, parts in enumerate(part_facts):
            for ids in parts:
                for fid in ids:
                    first.setdefault(fid, i)
        fixed = tuple(_with_first(f, first.get(f.id, f.first_index)) for f in facts)
        flat = tuple(tuple(f for ids in parts for f in sorted(ids)) for parts in part_facts)
        return cls(fixed, matcher, part_facts, _needs(t.messages, part_facts, first), flat)


def _with_first(f: Fact, i: int) -> Fact:
    return f if f.first_index == i else Fact(f.id, f.kind, f.text, f.anchors, i, f.source, f.meta)


def _needs(messages: Sequence[Message], part_facts: Sequence[Sequence[frozenset[str]]],
           first: dict[str, int]) -> dict[int, tuple[str, ...]]:
    needs: dict[int, tuple[str, ...]] = {}
    fresh: set[str] = set()  # facts (re)introduced by user/tool messages since the previous step
    for i, m in enumerate(messages):
        if m.meta.get("compaction"):
            continue
        ids = set().union(*part_facts[i]) if part_facts[i] else set()
        if m.role == "assistant":
            needed = sorted(f for f in ids if first.get(f, i) < i and f not in fresh)
            if needed:
                needs[i] = tuple(needed)
            fresh = set()
        else:
            fresh |= ids
    return needs


@dataclass
class EventOutcome:
    """Facts present around one compaction; the replaced text is built only when asked for."""

    seq: int
    before: frozenset[str]
    before_entries: list[Entry] = field(default_factory=list)
    inserted_text: dict[str, str] = field(default_factory=dict)
    after: frozenset[str] = frozenset()
    after_ids: frozenset[str] = frozenset()

    @property
    def replaced_text(self) -> str:
        return "\n".join(self.inserted_text.get(e.id, "") if e.index < 0 else
                         "\n".join(part_match_text(p) for p in e.rendered().parts)
                         for e in self.before_entries if e.id not in self.after_ids)


@dataclass
class PresenceTracker:
    """A loop Observer counting, per fact, the visible parts that contain it."""

    index: FactIndex
    counts: dict[str, int] = field(default_factory=dict)
    inserted: dict[str, frozenset[str]] = field(default_factory=dict)
    inserted_text: dict[str, str] = field(default_factory=dict)
    need_hits: list[tuple[int, str, bool]] = field(default_factory=list)  # (step, fact id, present)
    events: list[EventOutcome] = field(default_factory=list)
    established: int = 0
    step_ratios: list[float] = field(default_factory=list)
    compacted: bool = False

    def _facts_of(self, e: Entry) -> Iterable[frozenset[str]]:
        if e.index < 0:
            return (self.inserted[e.id],)
        return (ids for j, ids in enumerate(self.index.part_facts[e.index]) if j not in e.pruned)

    def _add(self, ids: frozenset[str], k: int) -> None:
        for f in ids:
            self.counts[f] = self.counts.get(f, 0) + k

    def added(self, e: Entry) -> None:
        if e.index >= 0 and not e.pruned and self.index.message_facts:  # the common case, in one loop
            counts = self.counts
            for f in self.index.message_facts[e.index]:
                counts[f] = counts.get(f, 0) + 1
            return
        if e.index < 0 and e.id not in self.inserted:
            text = e.message.text
            self.inserted[e.id] = self.index.matcher.facts_in(text)
            self.inserted_text[e.id] = text
        for ids in self._facts_of(e):
            self._add(ids, 1)

    def removed(self, e: Entry) -> None:
        for ids in self._facts_of(e):
            self._add(ids, -1)

    def part_hidden(self, e: Entry, part: int) -> None:
        if e.index >= 0:
            self._add(self.index.part_facts[e.index][part], -1)

    def present(self) -> frozenset[str]:
        return frozenset(f for f, n in self.counts.items() if n > 0)

    def step(self, step: int, message_index: int) -> None:
        for f in self.index.needs.get(message_index, ()):
            self.need_hits.append((step, f, self.counts.get(f, 0) > 0))
        if self.compacted:
            est = sum(1 for f in self.index.facts if 0 <= f.first_index < message_index)
            if est:
                self.step_ratios.append(sum(1 for f in self.index.facts if 0 <= f.first_index < message_index
                                            and self.counts.get(f.id, 0) > 0) / est)

    def action(self, seq: int, done: bool, entries: Sequence[Entry], compaction: bool) -> None:
        if not compaction:
            return  # prunes change counts through part_hidden; retention is measured at compactions
        if not done:  # a C-level list copy: the text of what was replaced is built only if needed
            self.events.append(EventOutcome(seq, self.present(), list(entries), self.inserted_text))
        else:
            self.events[-1].after = self.present()
            self.events[-1].after_ids = frozenset(e.id for e in entries)
            self.compacted = True
