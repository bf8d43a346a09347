"""``compbench.measure.reacquire`` — Predicted re-acquisition: the content a strategy's view lost that the recorded
agent needs again, and what getting it back costs.

A loop observer (:class:`ContentTracker`) follows the view as :class:`~compbench.measure.facts.presence.
PresenceTracker` does, but over content (:mod:`compbench.measure.workset`): per key, how many visible parts
hold a delivery of it, and which inserted messages (a summary, the files a tool re-attaches after its
compaction) hold at least :data:`COVER` of its latest delivery's lines. The rules of
:mod:`compbench.measure.reacquire_rules` then say what the agent fetches again after a compaction:

* at each step, a use of a key whose content the view does not hold is a **re-acquisition** of the share of
  what the agent had of it that its class (an edit, an edit of a file it changed since its last read, a mention,
  a repeated line) has real agents read back; a
  later use of a class that reads back more (an edit after a mention) adds the difference. A re-attached file
  or a summary that carries the lines serves a use, except an edit under a tool that refuses to edit a file not
  read since its compaction (Claude Code: ``read_before_edit``; the tracker records such an edit with
  ``served`` and :func:`counted` keeps it for the strategies that declare the guard);
* at each compaction that removed content, the files of the segment it replaced that the view no longer holds
  and that the agent does not use again before it reads them (if ever) are re-read to orient, at the
  orientation share of what the agent had (recent reads more than older ones).

Every share is of the re-reads a compaction *causes*, fitted on real compactions (``reacquire_rates.json``).
Once re-acquired, a key stays at hand until the strategy's next compaction. In a replay the recorded agent's own
reads go on: content it read again anyway serves the uses after that read.

The cost (:func:`reacquisition_cost`): the re-acquired content enters the context and stays there until the
strategy's next compaction, and each step that re-acquires makes one extra call first (sending the context
of that step, writing the tool call). Before its first action a strategy's view is the whole history:
nothing is missing, and ``none`` never re-acquires anything. The replay itself goes on with the recorded
messages (the agent's trajectory is not re-simulated): the re-acquired tokens do not move a later trigger.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from compbench.data.calls import Kind
from compbench.measure.models import Prices
from compbench.measure.reacquire_rules import Klass, Rates, Served, orientation_class, pays, rates, served, use_class
from compbench.measure.workset import WorkingSet, content_lines
from compbench.sdk.events import CompactionEvent
from compbench.sdk.session import Action, Compact, Entry

COVER = 0.5  # share of a delivery's lines an inserted message must hold to hold its content
SOON = 10  # steps: a re-acquisition this soon after the content left the view counts as "soon"
NEVER = 1 << 62  # a message index no transcript reaches
CALL_TOKENS = 60  # the tool call an extra step writes, and its message overhead (a read call: ~40-80 tokens)


class Reacquisition(NamedTuple):
    """One key the agent gets back at ``step`` (for the recorded ``message``): ``klass`` why
    (:data:`compbench.measure.reacquire_rules.CLASSES`), ``tokens`` the expected tokens it reads back, ``since``
    the steps since it left the view, ``served`` what in the view would have served it were it not an edit
    under a read-before-edit guard (``""``: nothing)."""

    step: int
    message: int
    key: str
    kind: Kind
    klass: Klass
    tokens: int
    since: int
    served: Served


@dataclass
class ContentTracker:
    """A loop Observer counting, per content key, the visible parts and inserted messages that hold it.

    ``source``: the transcript's working set, or what builds it (:func:`compbench.measure.workset.later`). Built
    lazily, it is asked for only when the view first loses something or receives an inserted message: until then
    the tracker keeps the recorded messages it was given, and counts them once the working set exists. A replay
    that never acts (``none``, a strategy on a log that never reaches its thresholds) never builds one."""

    source: WorkingSet | Callable[[], WorkingSet]
    visible: dict[str, int] = field(default_factory=dict)
    covered: dict[str, int] = field(default_factory=dict)  # verbatim in an inserted message (restored files)
    carried: dict[str, int] = field(default_factory=dict)  # in a summary
    events: list[Reacquisition] = field(default_factory=list)
    acted: bool = False
    rates: Rates = field(default_factory=rates)

    def __post_init__(self) -> None:
        self._ws: WorkingSet | None = self.source if isinstance(self.source, WorkingSet) else None
        self._parts = self._ws.delivered if self._ws is not None else {}
        # the recorded entries added before the working set was built, each with the calls before it
        self._dormant: list[tuple[Entry, int]] | None = None if self._ws is not None else []
        self._inserted: dict[str, tuple[tuple[str, ...], bool]] = {}  # entry id -> (keys held, is a summary)
        self._gone: dict[str, int] = {}  # key -> the step its last visible part left
        self._back: dict[str, float] = {}  # key -> the share re-acquired since the strategy's last compaction
        self._read_at: dict[str, int] = {}  # key -> the calls before its latest delivery the view received
        self._step = 0
        self._message = 0
        self._latest = -1  # the latest recorded message the view received
        self._segment = 0  # the first message since the strategy's last compaction
        self._removed = 0  # parts removed by the action under way

    @property
    def ws(self) -> WorkingSet:
        """The working set (built now if it was not yet, and the recorded messages kept until now counted)."""
        if self._ws is None:
            self._wake()
        assert self._ws is not None
        return self._ws

    def _wake(self) -> None:
        source = self.source
        self._ws = ws = source if isinstance(source, WorkingSet) else source()
        self._parts = ws.delivered
        dormant, self._dormant = self._dormant or [], None
        for e, calls in dormant:
            self._count(e, calls)

    def fork(self) -> ContentTracker:
        """An independent copy for a forked trajectory (past events are shared: they no longer change). A trajectory
        forks where a configuration acts otherwise: the working set is built then, and the counts made once are
        copied, not the messages kept (each fork would count them again)."""
        if self._dormant is not None:
            self._wake()
        c = ContentTracker(self.source, dict(self.visible), dict(self.covered), dict(self.carried), list(self.events),
                           self.acted, self.rates)
        c._ws, c._parts, c._inserted, c._dormant = self._ws, self._parts, dict(self._inserted), None
        c._gone, c._back, c._read_at = dict(self._gone), dict(self._back), dict(self._read_at)
        c._step, c._message, c._latest = self._step, self._message, self._latest
        c._segment, c._removed = self._segment, self._removed
        return c

    # -- the view --------------------------------------------------------------------------------------

    def added(self, e: Entry) -> None:
        if e.index >= 0:
            self._latest = max(self._latest, e.index)
            if self._dormant is not None:
                self._dormant.append((e, self._step + 1))
            else:
                self._count(e, self._step + 1)
            return
        keys, summary = self._holds(e)
        target = self.carried if summary else self.covered
        for key in keys:
            target[key] = target.get(key, 0) + 1

    def _count(self, e: Entry, calls: int) -> None:
        """A recorded entry joined the view with ``calls`` calls before it: its deliveries are visible."""
        for part, key in self._parts.get(e.index, ()):
            if part not in e.pruned:
                self.visible[key] = self.visible.get(key, 0) + 1
                self._read_at[key] = calls  # calls before it, as a transcript counts them

    def removed(self, e: Entry) -> None:
        if self._dormant is not None:
            self._wake()
        self.acted = True
        if e.index >= 0:
            for part, key in self._parts.get(e.index, ()):
                if part not in e.pruned:
                    self._drop(key)
            return
        keys, summary = self._holds(e)
        target = self.carried if summary else self.covered
        for key in keys:
            target[key] -= 1

    def part_hidden(self, e: Entry, part: int) -> None:
        if e.index < 0:
            return
        if self._dormant is not None:
            self._wake()
        self.acted = True
        for p, key in self._parts.get(e.index, ()):
            if p == part:
                self._drop(key)

    def _drop(self, key: str) -> None:
        self._removed += 1
        n = self.visible.get(key, 0) - 1
        self.visible[key] = n
        if n <= 0:  # the first call without it is the next one
            self._gone[key] = self._step + 1

    def _holds(self, e: Entry) -> tuple[tuple[str, ...], bool]:
        """The keys whose latest delivery (before now) an inserted message holds, and whether it is a summary."""
        found = self._inserted.get(e.id)
        if found is None:
            text = e.message.text
            lines = content_lines(text) if len(text) >= 16 else frozenset()
            keys: list[str] = []
            if lines:
                for key in self.ws.latest:
                    d = self.ws.before(key, self._latest + 1)
                    if d is not None and len(d.lines & lines) >= COVER * len(d.lines):
                        keys.append(key)
            found = self._inserted[e.id] = (tuple(keys), e.origin == "summary")
        return found

    # -- the steps -------------------------------------------------------------------------------------

    def step(self, step: int, message_index: int) -> None:
        self._step, self._message = step, message_index
        if not self.acted:
            return
        for use in self.ws.uses.get(message_index, ()):
            key = use.key
            if self.visible.get(key, 0) > 0:
                continue
            d = self.ws.before(key, message_index)
            if d is None:
                continue
            klass = use_class(use.how, d.kind, changed=use.how == "edit" and self.ws.changed(key, message_index))
            share = self.rates.share(klass)
            paid = self._back.get(key, 0.0)
            if key in self._back and paid >= share:
                continue
            by = served(kept=False, attached=self.covered.get(key, 0) > 0, summarized=self.carried.get(key, 0) > 0)
            if by and not pays(use.how, by, read_before_edit=True):
                continue  # served by the view whatever the tool's guard
            self._back[key] = share
            tokens = round((share - paid) * self.ws.had(key, message_index))
            if tokens > 0:
                self.events.append(Reacquisition(step, message_index, key, d.kind, klass, tokens,
                                                 step - self._gone.get(key, step), by))

    def action(self, seq: int, done: bool, entries: Sequence[Entry], act: Action) -> None:
        if not done:
            self._removed = 0
            return
        if isinstance(act, Compact):
            self._back.clear()  # what was re-acquired is summarized or dropped with the rest
            if self._removed:
                self._orient()
            self._segment = self._latest + 1

    def _orient(self) -> None:
        """The orientation re-reads right after a compaction: the files of the segment it replaced that the view
        no longer holds verbatim and that the agent does not use again before it reads them (if ever)."""
        now, step = self._latest + 1, self._step + 1
        ws = self.ws
        for key in ws.latest:
            if self.visible.get(key, 0) > 0:
                continue
            d = ws.before(key, now)
            if d is None or d.kind != "file" or d.message < self._segment:
                continue
            until = ws.next_delivery(key, now)
            if ws.used_between(key, now, NEVER if until is None else until):
                continue
            klass = orientation_class(step - self._read_at.get(key, step), self.rates)
            tokens = self.rates.expected(klass, ws.had(key, now))
            if tokens > 0:
                self._back[key] = self.rates.share(klass)
                self.events.append(Reacquisition(step, now, key, d.kind, klass, tokens,
                                                 step - self._gone.get(key, step), ""))


@dataclass(frozen=True, slots=True)
class Cost:
    """What re-acquiring cost one replay: ``content`` tokens read back, ``input`` tokens the calls sent
    because of it (the extra calls, and the content riding along until the next compaction), ``output``
    tokens of the extra calls, ``usd`` all of it priced with the prompt cache."""

    count: int = 0
    content: int = 0
    content_soon: int = 0
    input: int = 0
    output: int = 0
    usd: float = 0.0


def reacquisition_cost(events: Sequence[Reacquisition], steps: Sequence[Any], compactions: Sequence[CompactionEvent],
                       prices: Prices, call_tokens: int = CALL_TOKENS) -> Cost:
    """Price ``events`` against the replay's own steps (``StepRecord``: ``input``, ``cache_read``)."""
    if not events:
        return Cost()
    n_steps = len(steps)
    cuts = sorted({c.step for c in compactions if c.ok and c.replaced_ids})
    by_step: dict[int, list[Reacquisition]] = {}
    for r in events:
        by_step.setdefault(r.step, []).append(r)
    content = sum(r.tokens for r in events)
    soon = sum(r.tokens for r in events if r.since <= SOON)
    input_tokens = output = 0
    usd = 0.0
    for k, here in by_step.items():
        s = steps[k] if k < n_steps else None
        context = int(getattr(s, "input", 0))
        cached = min(int(getattr(s, "cache_read", 0)), context)
        nxt = next((c for c in cuts if c > k), n_steps)
        ride = max(nxt - k, 1)  # steps that carry the content: from this one to the next compaction
        added = sum(r.tokens for r in here) + call_tokens
        input_tokens += context + added * ride
        output += call_tokens
        usd += (cached * prices.cache_read + (context - cached) * prices.input + call_tokens * prices.output
                + added * prices.cache_write + added * (ride - 1) * prices.cache_read)
    return Cost(len(events), content, soon, input_tokens, output, usd)


class Trackers:
    """The two observers of one replay, facts and content, told of every change in turn (the loop takes one)."""

    __slots__ = ("content", "presence")

    def __init__(self, presence: Any, content: ContentTracker) -> None:
        self.presence = presence
        self.content = content

    def fork(self) -> Trackers:
        return Trackers(self.presence.fork(), self.content.fork())

    def added(self, e: Entry) -> None:
        self.presence.added(e)
        self.content.added(e)

    def removed(self, e: Entry) -> None:
        self.presence.removed(e)
        self.content.removed(e)

    def part_hidden(self, e: Entry, part: int) -> None:
        self.presence.part_hidden(e, part)
        self.content.part_hidden(e, part)

    def step(self, step: int, message_index: int) -> None:
        self.presence.step(step, message_index)
        self.content.step(step, message_index)

    def action(self, seq: int, done: bool, entries: Sequence[Entry], act: Action) -> None:
        self.presence.action(seq, done, entries, act)
        self.content.action(seq, done, entries, act)


def counted(events: Sequence[Reacquisition], read_before_edit: bool) -> list[Reacquisition]:
    """The events a strategy pays: an edit of a file its summary quoted or it re-attached is served by the view
    unless the tool insists on a read (the tracker records those with ``served``, the strategy decides)."""
    return [r for r in events if read_before_edit or not r.served]


def columns(events: Sequence[Reacquisition], steps: Sequence[Any], compactions: Sequence[CompactionEvent],
            prices: Prices) -> dict[str, Any]:
    """The results columns of one replay's re-acquisition."""
    c = reacquisition_cost(events, steps, compactions, prices)
    return {"reacquisitions": c.count, "reacquired_content_tokens": c.content,
            "reacquired_content_tokens_soon": c.content_soon, "reacquired_tokens": c.input,
            "reacquired_output_tokens": c.output, "reacquired_cost_usd": c.usd}
