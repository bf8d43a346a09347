"""``compbench.measure.facts.presence`` — Fact presence, tracked incrementally as the view changes, and the retention
figures it yields.

Every part of a transcript is matched against the facts' anchors once (:class:`FactIndex`); the
:class:`PresenceTracker` then follows the replay loop (it is a loop ``Observer``) and keeps, per fact,
how many visible parts contain it — verbatim (recorded messages, and text a strategy re-inserts word for
word) apart from *carried* (a summary). A step costs O(1) plus the facts of the messages it adds; only
inserted messages (summaries) are matched on the fly.

Provenance: a fact's first appearance decides it (a tool output: ``tool``; a user message: ``user``; the
model's text or call arguments: ``agent``; the system prompt: ``system``, which is boilerplate).

Needs: a fact is *needed* at step j when the recorded assistant message j mentions it (text or tool-call
arguments), the fact is task knowledge the agent *received* (user or tool provenance, not boilerplate),
it first appeared before j, and neither the previous step's message nor any message since mentions it,
so the agent had to rely on older context (a path it used one step ago is still at hand). A need is met
when the fact is in the prompt of step j, which holds the messages before j only; the agent's own
restatements count, since they come after the fact's source.
Needs are scored from the moment the strategy first hid anything (before that the view is the whole
history and nothing can be missing).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple, TypeVar, cast

from compbench.data.facts import Fact, Provenance, fact_key, normalize
from compbench.data.transcript import Message, Part, Text, ToolResult, Transcript
from compbench.measure.facts.matching import Matcher as Matcher
from compbench.measure.facts.matching import normalized, placeholder_text
from compbench.measure.facts.matching import part_match_text as part_match_text
from compbench.sdk.session import Action, Compact, Entry


@dataclass(frozen=True)
class FactIndex:
    """Per message, per part, the ids of the facts it contains; plus the needs of each step."""

    facts: tuple[Fact, ...]
    matcher: Matcher
    part_facts: tuple[tuple[frozenset[str], ...], ...]
    needs: dict[int, tuple[str, ...]]  # assistant message index -> fact ids needed there
    # per message, the fact ids of all its parts with multiplicity: what an unpruned entry adds in one loop
    message_facts: tuple[tuple[str, ...], ...] = ()
    # per message, per part, its match text normalized (:func:`part_match_text`): made once by ``build``, read
    # again by every compaction's check of what its summarizer saw (:meth:`EventOutcome.saw`)
    part_norms: tuple[tuple[str, ...], ...] = field(default=(), compare=False, repr=False)

    @cached_property
    def received_order(self) -> tuple[Fact, ...]:
        """Received facts in order of appearance (every replay's tracker walks them)."""
        return tuple(sorted((f for f in self.facts if f.received and f.first_index >= 0),
                            key=lambda f: (f.first_index, f.id)))

    @classmethod
    def build(cls, t: Transcript, facts: Sequence[Fact], boilerplate: Collection[str] = (),
              retyped: bool = True) -> FactIndex:
        """``boilerplate``: :func:`fact_key` values a dataset-wide scan found in most transcripts of one agent.
        ``retyped=False`` keeps the needs an agent meets by typing again (to measure that discount)."""
        matcher = Matcher(facts)
        texts = [part_match_text(p) for m in t.messages for p in m.parts]
        norms = [normalize(x) for x in texts]  # each part normalized once: matching, and what a summarizer saw
        found = matcher.facts_in_parts(texts, norms)
        part_facts, part_norms = _nested(t.messages, found), _nested(t.messages, norms)
        first: dict[str, tuple[int, Provenance]] = {}
        for i, (m, parts) in enumerate(zip(t.messages, part_facts, strict=True)):
            if m.meta.get("compaction"):
                continue
            for p, ids in zip(m.parts, parts, strict=True):
                for fid in ids:
                    if fid not in first:
                        first[fid] = (i, provenance_of(m.role, p))
        fixed = tuple(_placed(f, first.get(f.id), boilerplate) for f in facts)
        received = {f.id for f in fixed if f.received}
        flat = tuple(tuple(f for ids in parts for f in sorted(ids)) for parts in part_facts)
        firsts = {f.id: f.first_index for f in fixed}
        retypable = {f.id for f in fixed if f.kind == "recall"} if retyped else set()
        return cls(fixed, matcher, part_facts, _needs(t.messages, part_facts, firsts, received, retypable), flat,
                   part_norms)




T = TypeVar("T")


def _nested(messages: Sequence[Message], flat: Sequence[T]) -> tuple[tuple[T, ...], ...]:
    """``flat`` (one value per part, in order) per message."""
    out = []
    k = 0
    for m in messages:
        n = len(m.parts)
        out.append(tuple(flat[k:k + n]))
        k += n
    return tuple(out)


# A user-role part that is the harness's instructions, not the user's words: Codex sends the project's
# AGENTS.md and its environment context as user messages and re-sends them after every compaction (Claude
# Code, OpenCode, pi and Gemini CLI put their instructions files in the system prompt, which logs omit).
INSTRUCTION_MARKS = ("# agents.md instructions", "<user_instructions>", "<environment_context>")


def provenance_of(role: str, part: Part) -> Provenance:
    """Where a part's text came from: environment output, the user, the system prompt or the model. An
    instructions file injected as a user message is the system prompt's: the agent's harness states it on
    every call, so what it states (a test command, a path) is never a need, however long ago it was read."""
    if isinstance(part, ToolResult) or role == "tool":
        return "tool"
    if role == "system":
        return "system"
    if role == "user" and isinstance(part, Text) and part.text.lstrip()[:40].lower().startswith(INSTRUCTION_MARKS):
        return "system"
    return "user" if role == "user" else "agent"


def _placed(f: Fact, first: tuple[int, Provenance] | None, boilerplate: Collection[str]) -> Fact:
    """``f`` with its first appearance, provenance (an explicit one, as gold facts may give, is kept) and
    boilerplate flag."""
    index, prov = first if first is not None else (f.first_index, f.provenance)
    prov = cast(Provenance, f.meta.get("provenance", prov))
    bp = prov == "system" or fact_key(f) in boilerplate
    if (index, prov, bp) == (f.first_index, f.provenance, f.boilerplate):
        return f
    # dataclasses.replace, without its field-by-field introspection (a transcript places every fact)
    return Fact(f.id, f.kind, f.text, f.anchors, index, f.source, f.meta, prov, bp)


def _needs(messages: Sequence[Message], part_facts: Sequence[Sequence[frozenset[str]]],
           first: dict[str, int], received: Collection[str],
           retypable: Collection[str] = ()) -> dict[int, tuple[str, ...]]:
    """Per assistant message, the received facts it uses that it did not just see. A command or address the
    agent has already typed itself (``retypable`` facts in an earlier assistant message) is its own from then
    on: after real compactions that dropped one, agents typed it again without looking 20 times in 22
    (:mod:`compbench.validation.discounts`), against 20 in 68 for paths they had typed."""
    needs: dict[int, tuple[str, ...]] = {}
    fresh: set[str] = set()  # facts in the previous step's message and in every message since
    typed: set[str] = set()  # retypable facts the agent has written itself
    for i, m in enumerate(messages):
        if m.meta.get("compaction"):
            continue
        ids = set().union(*part_facts[i]) if part_facts[i] else set()
        if m.role == "assistant":
            needed = sorted(f for f in ids if f in received and first.get(f, i) < i and f not in fresh
                            and f not in typed)
            if needed:
                needs[i] = tuple(needed)
            fresh = ids
            if retypable:
                typed.update(f for f in ids if f in retypable)
        else:
            fresh |= ids
    return needs


class NeedHit(NamedTuple):
    """One need at one step: was the fact in the prompt verbatim, carried by a summary only, or carried
    only by the copy-upper-bound summary of the same span; ``scored``: the strategy had already acted;
    ``since``: calls since the strategy's last compaction (0: the first call after it; -1: none yet)."""

    step: int
    fact: str
    verbatim: bool
    carried: bool
    copied: bool
    scored: bool
    since: int = -1

    @property
    def present(self) -> bool:
        return self.verbatim or self.carried


@dataclass
class EventOutcome:
    """Facts present around one compaction or prune; the replaced text is built only when asked for.

    ``after`` is what the view holds after the event (verbatim or in a summary); ``after_verbatim`` the
    verbatim part; ``after_copy`` what it would hold had every summary also carried what an extractive copy
    of its span carries (the optimistic end). A prune (masking hides outputs at every step) is kept as
    counts only: how many facts were present before and how many of them it hid for good."""

    seq: int
    before: frozenset[str]
    kind: str = "compaction"
    before_entries: list[Entry] = field(default_factory=list)
    inserted_text: dict[str, str] = field(default_factory=dict)
    after: frozenset[str] = frozenset()
    after_verbatim: frozenset[str] = frozenset()
    after_copy: frozenset[str] = frozenset()
    after_ids: frozenset[str] = frozenset()
    present_before: int = 0
    lost: int = 0
    norms: Sequence[Sequence[str]] = ()  # the transcript's normalized part texts (FactIndex.part_norms)

    @property
    def seen_text(self) -> str:
        """The text of the whole view before the compaction: all a summarizer could see (a kept message
        included: Codex keeps the user's messages verbatim and its summary may name what they say)."""
        return "\n".join(self.inserted_text.get(e.id, "") if e.index < 0 else
                         "\n".join(part_match_text(p) for p in e.rendered().parts) for e in self.before_entries)

    def _seen_norms(self) -> list[str]:
        """The normalized text of each part of the view before the compaction, as :attr:`seen_text` joins them
        (an inserted message is one text): a recorded part's from the transcript's fact index (``norms``),
        normalized once per transcript; a pruned part's placeholder and an inserted text here (remembered)."""
        norms = self.norms
        out: list[str] = []
        for e in self.before_entries:
            if e.index < 0:
                out.append(normalized(self.inserted_text.get(e.id, "")))
                continue
            pruned = e.pruned
            if norms and not pruned:
                out.extend(norms[e.index])
                continue
            row = norms[e.index] if norms else None
            for j, p in enumerate(e.message.parts):
                if j in pruned:
                    out.append(normalized(placeholder_text(p, pruned[j])))
                else:
                    out.append(row[j] if row is not None else normalized(part_match_text(p)))
        return out

    def saw(self, wanted: Iterable[str]) -> frozenset[str]:
        """Which of ``wanted`` (normalized texts) the summarizer could have seen: the same answer as a test
        against ``normalize(seen_text)``, made on the parts' normalized texts joined by a space — which is that
        normalized whole, since normalizing folds the newlines that join them. A chain of small compactions (goose
        summarizes one tool pair at a time) would otherwise rebuild and normalize the whole view at every one."""
        left = set(wanted)
        found: set[str] = set()
        if "" in left:  # in any text at all (a text of whitespace too, whose normalized text is empty)
            left.discard("")
            if any(self.inserted_text.get(e.id, "") if e.index < 0 else
                   any(part_match_text(p) for p in e.rendered().parts) for e in self.before_entries):
                found.add("")
        if left:
            text = " ".join(n for n in self._seen_norms() if n)
            found |= {w for w in left if w in text}
        return frozenset(found)

    @property
    def kept_share(self) -> float:
        if self.kind == "prune":
            return (self.present_before - self.lost) / self.present_before if self.present_before else float("nan")
        return len(self.before & self.after) / len(self.before) if self.before else float("nan")


@dataclass
class PresenceTracker:
    """A loop Observer counting, per fact, the visible parts that contain it.

    ``counts``: verbatim parts (recorded messages, and inserted text that is not a summary: a re-inserted
    user message, a marker); ``carried``: summaries; ``copied``: summaries had they also carried what the
    extractive summarizer copies from the same request (``copy`` writes that text; None when the run's
    summarizer is the extractive one) and what the summaries they fold carried so. The copy never changes
    the trajectory: it is a counterfactual on presence only, the optimistic end of the summary's part."""

    index: FactIndex
    copy: Callable[[Compact], str] | None = None
    counts: dict[str, int] = field(default_factory=dict)
    carried: dict[str, int] = field(default_factory=dict)
    copied: dict[str, int] = field(default_factory=dict)
    inserted: dict[str, frozenset[str]] = field(default_factory=dict)
    inserted_copy: dict[str, frozenset[str]] = field(default_factory=dict)
    inserted_text: dict[str, str] = field(default_factory=dict)
    need_hits: list[NeedHit] = field(default_factory=list)
    events: list[EventOutcome] = field(default_factory=list)
    # per step after the first action: received facts established so far that are present (all, verbatim,
    # with the copy upper bound), as shares
    step_ratios: list[tuple[float, float, float]] = field(default_factory=list)
    compacted: bool = False
    acted: bool = False  # something was hidden: needs from here on are scored
    _pending_copy: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        # received facts in order of appearance; the first `_next` are established (appeared before the
        # current step). The counters follow presence incrementally: a step costs no pass over the facts.
        self._order = self.index.received_order
        self._next = 0
        self._established: set[str] = set()
        self._n_present = self._n_verbatim = self._n_upper = 0  # among established received facts
        self._n_any = 0  # facts present at all (any fact), and those an event in progress hid for good
        self._lost = 0
        self._calls = 0  # steps seen so far: the next call's number
        self._compacted_at = -1  # the first call after the last compaction
        self._copy_of: Compact | None = None  # the compaction in progress, whose copy is made when first needed

    def fork(self) -> PresenceTracker:
        """An independent copy for a forked trajectory (past events are shared: they no longer change)."""
        c = PresenceTracker(self.index, self.copy, dict(self.counts), dict(self.carried), dict(self.copied),
                            dict(self.inserted), dict(self.inserted_copy), dict(self.inserted_text),
                            list(self.need_hits), list(self.events), list(self.step_ratios), self.compacted,
                            self.acted, set(self._pending_copy))
        c._order, c._next, c._established = self._order, self._next, set(self._established)
        c._n_present, c._n_verbatim, c._n_upper = self._n_present, self._n_verbatim, self._n_upper
        c._n_any, c._lost = self._n_any, self._lost
        c._calls, c._compacted_at, c._copy_of = self._calls, self._compacted_at, self._copy_of
        return c

    def _facts_of(self, e: Entry) -> Iterable[frozenset[str]]:
        if e.index < 0:
            return (self.inserted[e.id],)
        return (ids for j, ids in enumerate(self.index.part_facts[e.index]) if j not in e.pruned)

    def _flip(self, f: str, which: int, on: bool) -> None:
        """``f``'s count in counts/carried/copied (``which`` 0/1/2) went from 0 to positive (``on``) or back:
        update the counters. Flips are rare (a fact's first and last visible part), increments are not."""
        now = [self.counts.get(f, 0) > 0, self.carried.get(f, 0) > 0, self.copied.get(f, 0) > 0]
        was = list(now)
        was[which] = not on
        present_was, present_now = was[0] or was[1], now[0] or now[1]
        if present_was != present_now:
            self._n_any += 1 if present_now else -1
            if not present_now:
                self._lost += 1
        if f in self._established:
            if present_was != present_now:
                self._n_present += 1 if present_now else -1
            if which == 0:
                self._n_verbatim += 1 if on else -1
            if (present_was or was[2]) != (present_now or now[2]):
                self._n_upper += 1 if present_now or now[2] else -1

    def _bump(self, which: int, ids: Iterable[str], k: int) -> None:
        d = (self.counts, self.carried, self.copied)[which]
        for f in ids:
            old = d.get(f, 0)
            d[f] = old + k
            if (old > 0) != (old + k > 0):
                self._flip(f, which, old + k > 0)

    def added(self, e: Entry) -> None:
        if e.index >= 0:
            if not e.pruned and self.index.message_facts:  # the common case, in one loop
                counts = self.counts
                for f in self.index.message_facts[e.index]:
                    old = counts.get(f, 0)
                    counts[f] = old + 1
                    if not old:
                        self._flip(f, 0, True)
                return
            for ids in self._facts_of(e):
                self._bump(0, ids, 1)
            return
        if e.id not in self.inserted:
            text = e.message.text
            self.inserted[e.id] = found = self.index.matcher.facts_in(text)
            self.inserted_text[e.id] = text
            if e.origin == "summary":
                if self._copy_of is not None:  # the copy of the compaction inserting it, made now it is used
                    if self.copy is not None:
                        self._pending_copy |= self.index.matcher.facts_in(self.copy(self._copy_of))
                    self._copy_of = None
                self.inserted_copy[e.id] = found | self._pending_copy
        ids = self.inserted[e.id]
        if e.origin == "summary":
            self._bump(1, ids, 1)
            self._bump(2, self.inserted_copy[e.id], 1)
        else:
            self._bump(0, ids, 1)

    def removed(self, e: Entry) -> None:
        self.acted = True
        if e.index < 0 and e.origin == "summary":
            self._bump(1, self.inserted[e.id], -1)
            copy = self.inserted_copy[e.id]
            self._bump(2, copy, -1)
            self._pending_copy |= copy  # a copy folding this summary carries what its copy carried
            return
        for ids in self._facts_of(e):
            self._bump(0, ids, -1)

    def part_hidden(self, e: Entry, part: int) -> None:
        if e.index >= 0:
            self.acted = True
            self._bump(0, self.index.part_facts[e.index][part], -1)

    def present(self) -> frozenset[str]:
        return frozenset(f for d in (self.counts, self.carried) for f, n in d.items() if n > 0)

    def verbatim(self) -> frozenset[str]:
        return frozenset(f for f, n in self.counts.items() if n > 0)

    def with_copy(self) -> frozenset[str]:
        return frozenset(f for d in (self.counts, self.copied) for f, n in d.items() if n > 0)

    def step(self, step: int, message_index: int) -> None:
        self._calls = step + 1
        counts, carried, copied = self.counts, self.carried, self.copied
        for f in self.index.needs.get(message_index, ()):
            self.need_hits.append(NeedHit(step, f, counts.get(f, 0) > 0, carried.get(f, 0) > 0,
                                          copied.get(f, 0) > 0, self.acted,
                                          step - self._compacted_at if self._compacted_at >= 0 else -1))
        order = self._order
        while self._next < len(order) and order[self._next].first_index < message_index:
            fid = order[self._next].id
            self._established.add(fid)
            v, c, u = counts.get(fid, 0) > 0, carried.get(fid, 0) > 0, copied.get(fid, 0) > 0
            self._n_present += v or c
            self._n_verbatim += v
            self._n_upper += v or c or u
            self._next += 1
        if self.acted and self._next:
            n = self._next
            self.step_ratios.append((self._n_present / n, self._n_verbatim / n, self._n_upper / n))

    def action(self, seq: int, done: bool, entries: Sequence[Entry], act: Action) -> None:
        if not isinstance(act, Compact):  # a prune: counts only (masking prunes at every step)
            if not done:
                self._lost = 0
                self.events.append(EventOutcome(seq, frozenset(), "prune", present_before=self._n_any))
            else:
                self.events[-1].lost = self._lost
            return
        if not done:  # a C-level list copy: the text of what was replaced is built only if needed
            self._pending_copy = set()
            # what an extractive copy of the request carries, made when a summary of it joins the view (a
            # compaction that fails or is refused, as each of aider's since 0.72, never needs it)
            self._copy_of = act if self.copy is not None and (act.request or act.summary_text) else None
            self.events.append(EventOutcome(seq, self.present(), "compaction", list(entries), self.inserted_text,
                                            norms=self.index.part_norms))
        else:
            ev = self.events[-1]
            ev.after, ev.after_verbatim, ev.after_copy = self.present(), self.verbatim(), self.with_copy()
            ev.after_ids = frozenset(e.id for e in entries)
            self.compacted = True
            self._compacted_at = self._calls
            self._pending_copy = set()
            self._copy_of = None
