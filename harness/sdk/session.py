"""``compbench.sdk.session`` — The session a strategy acts on: the model-visible view and the actions that change it.

The log is append-only: recorded messages are never edited or deleted. What the model sees is a
*view*, a list of :class:`Entry` values referring to recorded messages (with pruned parts hidden
behind placeholders) or to messages a strategy inserted (summaries, markers). Strategies read the view
through :class:`SessionView` and answer with :data:`Action` values; only the loop applies them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias, TypeVar

from compbench.data.transcript import Message, Part, Role, Text, ToolCall, ToolResult, Usage
from compbench.sdk.context import IdentityMemo, ReplayContext, RoundCache
from compbench.sdk.counting import Counter
from compbench.sdk.events import Event

Origin: TypeAlias = Literal["recorded", "summary", "marker", "synthetic"]
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class ModelLimits:
    """The simulated model's window. ``max_input`` is set when a model has a dedicated input limit."""

    context_window: int
    max_output: int
    max_input: int | None = None

    @property
    def input_limit(self) -> int:
        """The largest prompt the API accepts: the dedicated input limit, else the whole window."""
        return self.max_input if self.max_input else self.context_window


@dataclass(frozen=True, slots=True)
class Entry:
    """One message in the model-visible view.

    ``message`` is the stored message, never altered; ``pruned`` maps part indices to the
    placeholder the model sees instead (a tool output's text, or a tool call's new arguments: a
    cleared or truncated input keeps its call); ``tokens`` counts the message as the model sees it.
    ``index`` is the message's position in the transcript (-1 for inserted messages).
    """

    message: Message
    tokens: int
    part_tokens: tuple[int, ...]
    origin: Origin = "recorded"
    index: int = -1
    pruned: Mapping[int, str] = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash((self.message.id, self.index))

    @property
    def id(self) -> str:
        return self.message.id

    @property
    def role(self) -> Role:
        return self.message.role

    def rendered(self) -> Message:
        """The message as the model sees it: pruned tool outputs replaced by their placeholders."""
        if not self.pruned:
            return self.message
        parts: list[Part] = []
        for i, p in enumerate(self.message.parts):
            if i in self.pruned:
                if isinstance(p, ToolResult):
                    parts.append(replace(p, output=self.pruned[i]))
                elif isinstance(p, ToolCall):
                    parts.append(replace(p, args=self.pruned[i]))
                else:
                    parts.append(Text(self.pruned[i]))
            else:
                parts.append(p)
        return replace(self.message, parts=tuple(parts))


# --- actions -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """What a strategy asks a summarizer for.

    ``system`` and ``prompt`` are exactly what a real model would be sent (the strategy's prompts);
    ``source`` is the span being summarized as the model saw it, which offline summarizers read;
    ``max_output_tokens`` is the budget (None: the model's own output limit). ``answer``: the summary is
    already known (a log recorded the tool's own): the loop charges the request and the answer as the tool
    paid for them, and asks no summarizer. ``cache_write``: the tool marks the request for the provider's
    prompt cache (pi-ai's ``cache_control`` on it), so what it sends is written there at the cache-write price
    although no later call reads it; False (the default): plain input, as a request sent without a cache mark.
    """

    system: str
    prompt: tuple[Message, ...]
    source: tuple[Message, ...]
    max_output_tokens: int | None = None
    previous_summary: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    answer: str | None = None
    cache_write: bool = False


@dataclass(frozen=True, slots=True)
class Keep:
    """Keep the view entry with this message id, verbatim (with its prune marks)."""

    id: str


@dataclass(frozen=True, slots=True)
class Insert:
    """Insert a new message: ``before + summary + after`` when ``with_summary``, else ``before``."""

    role: Role
    before: str = ""
    after: str = ""
    with_summary: bool = False
    origin: Origin = "synthetic"
    meta: Mapping[str, Any] = field(default_factory=dict)

    def text(self, summary: str) -> str:
        return self.before + summary + self.after if self.with_summary else self.before


Slot: TypeAlias = Keep | Insert


PREVIOUS_ANSWER = "previous_answer"  # Message.meta key: the loop puts the answer so far in this message


@dataclass(frozen=True, slots=True)
class Followup:
    """A further summary request whose answer is appended after ``joiner`` (pi's split-turn prefix), or,
    with ``replaces``, sent after the answer so far and taking its place (Gemini CLI's verification turn:
    a blank answer keeps the earlier one). The loop writes the answer so far into every prompt message
    whose ``meta`` has :data:`PREVIOUS_ANSWER` before sending the request."""

    request: SummaryRequest
    joiner: str = ""
    replaces: bool = False


@dataclass(frozen=True, slots=True)
class Compact:
    """Replace the view by ``new_view``; entries not kept are hidden (they stay in the log).

    ``request`` None means no summary is needed (truncation), or that ``summary_text`` stands in for
    one (pi's "No prior history."). ``followups`` are asked too and joined after it, as one summary;
    the tool sends them in parallel, so the latency is the slowest one's (a ``replaces`` follow-up waits
    for the answer it checks: latencies add up). When a summary request fails, ``on_failure`` decides:
    ``"unchanged"`` leaves the view as it was (seed 004, Codex after its retries), ``"apply"`` applies
    the new view with an empty summary; ``fallback`` is applied in its stead when the summary request
    fails, as the tool's own failure path (Roo Code's sliding window after a failed condense, aider's
    emptied history after a failed summary). ``prune`` marks parts of kept entries with placeholders as
    part of the compaction (Gemini CLI truncates old tool outputs in the history it keeps): they apply
    only when the new view does. A strategy with an ``accept`` method
    (:class:`compbench.sdk.protocols.CompactionCheck`) may still reject the compaction once its summary is known.
    ``summary_tag``: when the answer holds ``<tag>...</tag>`` (or an unclosed ``<tag>`` running to its end), only
    that content is the summary (Cline keeps the ``context`` parameter of its ``summarize_task`` call); an answer
    without it is the summary as it is.
    """

    reason: str
    new_view: tuple[Slot, ...]
    request: SummaryRequest | None = None
    on_failure: Literal["unchanged", "apply"] = "unchanged"
    meta: Mapping[str, Any] = field(default_factory=dict)
    followups: tuple[Followup, ...] = ()
    summary_text: str = ""
    prune: tuple[tuple[str, int, str], ...] = ()
    fallback: Compact | Prune | None = None
    summary_tag: str = ""

    def summary_of(self, answer: str) -> str:
        """The part of the summarizer's answer that becomes the summary (see ``summary_tag``)."""
        if not self.summary_tag:
            return answer
        start = answer.rfind(f"<{self.summary_tag}>")
        if start < 0:
            return answer
        body = answer[start + len(self.summary_tag) + 2:]
        end = body.find(f"</{self.summary_tag}>")
        return (body[:end] if end >= 0 else body).strip()


@dataclass(frozen=True, slots=True)
class Prune:
    """Hide tool outputs: each target is ``(message id, part index, placeholder)``; on a tool call the
    placeholder replaces its arguments (the call itself stays). A part already pruned keeps its placeholder,
    unless ``replace``: then the new one takes its place (OpenHands masks an observation it had only cut)."""

    targets: tuple[tuple[str, int, str], ...]
    reason: str = "prune"
    replace: bool = False


Action: TypeAlias = Compact | Prune


# --- when to ask a strategy again ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Wake:
    """When a strategy that has just answered nothing must next be asked (its ``wake``,
    :class:`compbench.sdk.protocols.Wakeful`): at the first question — before a step, after one — where any
    condition set here holds. Nothing set (``Wake()``, :meth:`never`, :data:`NEVER`): never again on this
    transcript unless an action changes the view (``none``); :meth:`next_question` (:data:`NEXT_QUESTION`,
    ``Wake(step=0)``): at the very next question, as if it had no wake.

    ``tokens``: the view's :attr:`SessionView.context_tokens` reaches this; ``usage``: the last step's usage,
    ``input + output``, reaches this; ``user``: a recorded user message joined the view since; ``entries``:
    the view holds this many entries; ``step``: :attr:`SessionView.step` reaches this (``step=0``: at the
    next question, :data:`NEXT_QUESTION`); ``grown``: ``(weight, n)``, the recorded messages that joined
    since weigh ``n`` by ``weight`` (a module-level function of a recorded message, its upper bound on what
    the message adds to the strategy's own count: its estimate of the tokens, its events; the loop sums it
    over the transcript once, so the wake is a search in those prefix sums).

    The conditions are a strategy's *necessary* conditions for acting while the view only grows by recorded
    messages: any action applied to the view (the strategy's or, in a composition, another stage's) wakes
    every stage. Waking early only costs a question answered with nothing (and another ``wake``); waking
    late changes the replay, which the strategy's tests rule out by replaying with and without its wake
    conditions (:func:`compbench.testing.wake_differences`, ``compbench strategies check``)."""

    tokens: int | None = None
    usage: int | None = None
    user: bool = False
    entries: int | None = None
    step: int | None = None
    grown: tuple[Callable[[Message], int], int] | None = None

    @staticmethod
    def never() -> Wake:
        """Never again on this transcript, unless an action changes the view: the strategy cannot act on a
        view that only grows (``none``; a strategy whose one compaction is behind it). Same as ``Wake()``."""
        return NEVER

    @staticmethod
    def next_question() -> Wake:
        """At the very next question (before or after a step), as if the strategy had no wake: for an answer
        that depends on something no condition here describes. Same as ``Wake(step=0)``."""
        return NEXT_QUESTION

    @property
    def is_never(self) -> bool:
        """No condition set: only an action applied to the view wakes the strategy."""
        return (self.tokens is None and self.usage is None and not self.user and self.entries is None
                and self.step is None and self.grown is None)


NEXT_QUESTION = Wake(step=0)  # ask me at the next question (Wake.next_question())
NEVER = Wake()  # never again while the view only grows (Wake.never())


# --- the strategy's read-only window onto the session -----------------------------------------------


class SessionView:
    """What a strategy may look at: the current view, the limits, the counter, the step.

    The entries are the loop's live list, typed read-only; a strategy must not mutate it and must not
    look at recorded messages that have not happened yet (it cannot: they are not here).

    ``revision`` counts the changes actions made to the view (an applied compaction, a prune that hid
    something): while it is unchanged the view has only grown by recorded messages appended at its end, so
    incremental state kept since may be extended rather than rebuilt; :meth:`unchanged_below` says, across
    revisions, how much of it still holds (the view diff). ``last_event`` is the event of this strategy's own
    last action (``ok``: applied with its summary; ``applied``: the view changed), or None before it first
    acts: what a strategy asked for and whether it happened, without counting.
    """

    def __init__(self, entries: Sequence[Entry], limits: ModelLimits, counter: Counter,
                 system_tokens: int = 0, context: ReplayContext | None = None,
                 round_cache: RoundCache | None = None) -> None:
        self._entries = entries
        self.limits = limits
        self.counter = counter
        self.system_tokens = system_tokens
        self.step = 0
        self.context_tokens = 0
        self.last_usage: Usage | None = None
        self.compactions = 0
        self.revision = 0
        self._lowest: list[int] = []  # per revision, the lowest position its change touched (the view diff)
        self.last_event: Event | None = None
        self.meta: Mapping[str, Any] = {}
        self.context = context if context is not None else ReplayContext()
        self._round = round_cache if round_cache is not None else RoundCache()

    @property
    def entries(self) -> Sequence[Entry]:
        return self._entries

    def fork(self, entries: Sequence[Entry], round_cache: RoundCache) -> SessionView:
        """This view's state over ``entries`` (a copy of its own), for a forked trajectory."""
        v = SessionView(entries, self.limits, self.counter, self.system_tokens, self.context, round_cache)
        v.step, v.context_tokens, v.last_usage = self.step, self.context_tokens, self.last_usage
        v.compactions, v.revision, v.last_event, v.meta = self.compactions, self.revision, self.last_event, self.meta
        v._lowest = list(self._lowest)
        return v

    def changed(self, lowest: int) -> None:
        """The loop's: an action changed the view, no entry below position ``lowest`` (a new revision)."""
        self.revision += 1
        self._lowest.append(lowest)

    def unchanged_below(self, revision: int) -> int:
        """The view diff since ``revision`` (a value :attr:`revision` had on this view): every position below
        the number returned holds the very :class:`Entry` it held then (entries appended since aside), so
        state a strategy derived from those entries still holds and only what lies from there on needs
        building again. ``revision`` itself: no limit (the view only grew). A revision counted by hand, without
        :meth:`changed` (a test's view), says nothing of where: 0."""
        if len(self._lowest) != self.revision:
            return 0
        low = 1 << 62
        for x in self._lowest[revision:]:
            if x < low:
                low = x
        return low

    def count(self, text: str) -> int:
        return self.counter.count_text(text)

    def rendered(self, start: int = 0, stop: int | None = None) -> tuple[Message, ...]:
        """The view's messages as the model sees them (placeholders applied)."""
        return tuple(e.rendered() for e in self._entries[start:stop])

    def position(self, message_id: str) -> int:
        for i in range(len(self._entries) - 1, -1, -1):
            if self._entries[i].id == message_id:
                return i
        raise KeyError(message_id)

    def per_round(self, key: Hashable, compute: Callable[[], V]) -> V:
        """``compute()`` on the view as it is now, shared with the configurations asked the same question
        (a tuning grid's shadows): ``key`` must name everything the value depends on besides the view."""
        return self._round.get(key, compute)

    def memo(self, name: str) -> IdentityMemo[Any, Any]:
        """A per-object memo (keyed by a recorded message or part) shared by every replay of this transcript
        in the run, forgotten when the transcript is done (:class:`compbench.sdk.context.ReplayContext`)."""
        return self.context.memo(name)
