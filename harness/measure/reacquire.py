"""``compbench.measure.reacquire`` — Predicted re-acquisition: the content a strategy's view lost that the recorded
agent needs again, and what getting it back costs.

A loop observer (:class:`ContentTracker`) follows the view as :class:`~compbench.measure.facts.presence.
PresenceTracker` does, but over content (:mod:`compbench.measure.workset`): per key, how many visible parts
hold a delivery of it, and which inserted messages (a summary, the files a tool re-attaches after its
compaction) hold at least :data:`COVER` of its latest delivery's lines. At each step, every use of a key whose
content is in none of them is a **re-acquisition**: the agent would have read, listed or searched again
before going on. A summary that carries the lines serves a use, except an edit under a tool that refuses to
edit a file not read since its compaction (Claude Code: ``read_before_edit``; the tracker records such an edit
with ``carried`` and :func:`counted` keeps it for the strategies that declare it). Once re-acquired, a key
stays at hand until the strategy's next compaction.

The cost (:func:`reacquisition_cost`): the re-acquired content enters the context and stays there until the
strategy's next compaction, and each step that re-acquires makes one extra call first (sending the context
of that step, writing the tool call). Before its first action a strategy's view is the whole history:
nothing is missing, and ``none`` never re-acquires anything. The replay itself goes on with the recorded
messages (the agent's trajectory is not re-simulated): the re-acquired tokens do not move a later trigger.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from compbench.data.calls import Kind
from compbench.measure.models import Prices
from compbench.measure.workset import Delivery, How, WorkingSet, content_lines
from compbench.sdk.events import CompactionEvent
from compbench.sdk.session import Action, Compact, Entry

COVER = 0.5  # share of a delivery's lines an inserted message must hold to hold its content
SOON = 10  # steps: a re-acquisition this soon after the content left the view counts as "soon"
CALL_TOKENS = 60  # the tool call an extra step writes, and its message overhead (a read call: ~40-80 tokens)


class Reacquisition(NamedTuple):
    """One key the agent must get back at ``step`` (for the recorded ``message``): ``tokens`` is the size of
    its latest delivery, ``since`` the steps since it left the view, ``carried`` a summary held its lines
    but the use needed the file read (an edit under ``read_before_edit``)."""

    step: int
    message: int
    key: str
    kind: Kind
    how: How
    tokens: int
    since: int
    carried: bool


@dataclass
class ContentTracker:
    """A loop Observer counting, per content key, the visible parts and inserted messages that hold it."""

    ws: WorkingSet
    visible: dict[str, int] = field(default_factory=dict)
    covered: dict[str, int] = field(default_factory=dict)  # verbatim in an inserted message (restored files)
    carried: dict[str, int] = field(default_factory=dict)  # in a summary
    events: list[Reacquisition] = field(default_factory=list)
    acted: bool = False

    def __post_init__(self) -> None:
        parts: dict[int, list[tuple[int, str]]] = {}
        for d in self.ws.deliveries:
            parts.setdefault(d.message, []).append((d.part, d.key))
        self._parts = {i: tuple(v) for i, v in parts.items()}
        self._inserted: dict[str, tuple[tuple[str, ...], bool]] = {}  # entry id -> (keys held, is a summary)
        self._gone: dict[str, int] = {}  # key -> the step its last visible part left
        self._back: set[str] = set()  # re-acquired since the strategy's last compaction
        self._step = 0
        self._message = 0

    def fork(self) -> ContentTracker:
        """An independent copy for a forked trajectory (past events are shared: they no longer change)."""
        c = ContentTracker(self.ws, dict(self.visible), dict(self.covered), dict(self.carried), list(self.events),
                           self.acted)
        c._parts, c._inserted = self._parts, dict(self._inserted)
        c._gone, c._back = dict(self._gone), set(self._back)
        c._step, c._message = self._step, self._message
        return c

    # -- the view --------------------------------------------------------------------------------------

    def added(self, e: Entry) -> None:
        if e.index >= 0:
            for part, key in self._parts.get(e.index, ()):
                if part not in e.pruned:
                    self.visible[key] = self.visible.get(key, 0) + 1
            return
        keys, summary = self._holds(e)
        target = self.carried if summary else self.covered
        for key in keys:
            target[key] = target.get(key, 0) + 1

    def removed(self, e: Entry) -> None:
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
        self.acted = True
        for p, key in self._parts.get(e.index, ()):
            if p == part:
                self._drop(key)

    def _drop(self, key: str) -> None:
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
                    d = self.ws.before(key, self._message + 1)
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
            if self.visible.get(key, 0) > 0 or self.covered.get(key, 0) > 0 or key in self._back:
                continue
            carried = self.carried.get(key, 0) > 0
            if carried and use.how != "edit":
                continue
            d: Delivery | None = self.ws.before(key, message_index)
            if d is None:
                continue
            self._back.add(key)
            self.events.append(Reacquisition(step, message_index, key, d.kind, use.how, d.tokens,
                                             step - self._gone.get(key, step), carried))

    def action(self, seq: int, done: bool, entries: Sequence[Entry], act: Action) -> None:
        if done and isinstance(act, Compact):
            self._back.clear()  # what was re-acquired is summarized or dropped with the rest


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
    """The events a strategy pays: an edit its summary quoted the file for is served by the summary unless
    the tool insists on a read (the tracker records those with ``carried``, the strategy decides)."""
    return [r for r in events if read_before_edit or not r.carried]


def columns(events: Sequence[Reacquisition], steps: Sequence[Any], compactions: Sequence[CompactionEvent],
            prices: Prices) -> dict[str, Any]:
    """The results columns of one replay's re-acquisition."""
    c = reacquisition_cost(events, steps, compactions, prices)
    return {"reacquisitions": c.count, "reacquired_content_tokens": c.content,
            "reacquired_content_tokens_soon": c.content_soon, "reacquired_tokens": c.input,
            "reacquired_output_tokens": c.output, "reacquired_cost_usd": c.usd}
