"""The session a strategy acts on: the model-visible view and the actions that change it.

The log is append-only: recorded messages are never edited or deleted. What the model sees is a
*view*, a list of :class:`Entry` values referring to recorded messages (with pruned parts hidden
behind placeholders) or to messages a strategy inserted (summaries, markers). Strategies read the view
through :class:`SessionView` and answer with :data:`Action` values; only the loop applies them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

from compbench.tokens import TokenCounter
from compbench.transcript import Message, Part, Role, Text, ToolCall, ToolResult, Usage

Origin: TypeAlias = Literal["recorded", "summary", "marker", "synthetic"]


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
    ``max_output_tokens`` is the budget (None: the model's own output limit).
    """

    system: str
    prompt: tuple[Message, ...]
    source: tuple[Message, ...]
    max_output_tokens: int | None = None
    previous_summary: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


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


@dataclass(frozen=True, slots=True)
class Followup:
    """A further summary request whose answer is appended after ``joiner`` (pi's split-turn prefix)."""

    request: SummaryRequest
    joiner: str


@dataclass(frozen=True, slots=True)
class Compact:
    """Replace the view by ``new_view``; entries not kept are hidden (they stay in the log).

    ``request`` None means no summary is needed (truncation), or that ``summary_text`` stands in for
    one (pi's "No prior history."). ``followups`` are asked too and joined after it, as one summary;
    the tool sends them in parallel, so the latency is the slowest one's. When a summary request fails,
    ``on_failure`` decides: ``"unchanged"`` leaves the view as it was (seed 004, Codex after its
    retries), ``"apply"`` applies the new view with an empty summary.
    """

    reason: str
    new_view: tuple[Slot, ...]
    request: SummaryRequest | None = None
    on_failure: Literal["unchanged", "apply"] = "unchanged"
    meta: Mapping[str, Any] = field(default_factory=dict)
    followups: tuple[Followup, ...] = ()
    summary_text: str = ""


@dataclass(frozen=True, slots=True)
class Prune:
    """Hide tool outputs: each target is ``(message id, part index, placeholder)``; on a tool call the
    placeholder replaces its arguments (the call itself stays)."""

    targets: tuple[tuple[str, int, str], ...]
    reason: str = "prune"


Action: TypeAlias = Compact | Prune


# --- the strategy's read-only window onto the session -----------------------------------------------


class SessionView:
    """What a strategy may look at: the current view, the limits, the counter, the step.

    The entries are the loop's live list, typed read-only; a strategy must not mutate it and must not
    look at recorded messages that have not happened yet (it cannot: they are not here).
    """

    def __init__(self, entries: Sequence[Entry], limits: ModelLimits, counter: TokenCounter,
                 system_tokens: int = 0) -> None:
        self._entries = entries
        self.limits = limits
        self.counter = counter
        self.system_tokens = system_tokens
        self.step = 0
        self.context_tokens = 0
        self.last_usage: Usage | None = None
        self.compactions = 0
        self.meta: Mapping[str, Any] = {}
        # scratch space for one round of hooks (a leader and the grid configurations shadowing it): the
        # loop empties it before every round, so what is in it was computed on the current view
        self.shared: dict[Any, Any] = {}

    @property
    def entries(self) -> Sequence[Entry]:
        return self._entries

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
