"""``compbench.sdk.protocols`` — The strategy protocols of :mod:`compbench.sdk`: what a strategy is, and its optional
capabilities.

Kept apart from the facade so that :mod:`compbench.sdk.registry` can name them without importing the
facade (which re-exports the registry). :func:`asking_every_question` is the switch a wake is checked with:
the replays started inside it ask every strategy every question, as if none had a ``wake``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal, Protocol

from compbench.data.transcript import Usage
from compbench.sdk.events import CompactionEvent
from compbench.sdk.session import Action, Compact, SessionView, Wake


class Strategy(Protocol):
    """A compaction strategy; one instance per replay, so it may keep small private state."""

    name: str

    def before_step(self, s: SessionView) -> Sequence[Action]: ...

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]: ...


class ManualCompaction(Protocol):
    """A strategy whose tool has a user-issued compaction (``/compact``): what it does when asked now
    (fidelity runs it where a recorded ``/compact`` happened)."""

    def manual(self, s: SessionView) -> Compact | None: ...


class CompactionCheck(Protocol):
    """A strategy whose tool looks at the summary before using it (Gemini CLI rejects a compression that
    would grow the context): ``accept`` returns None to apply the compaction, or the reason it is
    rejected (the view stays as it was; the event records the reason as its error).

    Called once a compaction's summary requests succeeded. It may update the strategy's own state (a flag
    that stops later attempts), and must depend only on its arguments and that state."""

    def accept(self, a: Compact, summary: str) -> str | None: ...


class CompactionFollowup(Protocol):
    """A strategy whose next move depends on what a compaction produced (aider summarizes again, one level
    deeper, when the summary and the kept tail still exceed its budget): asked right after each of its
    compactions is applied, before anything else happens; what it returns is applied next."""

    def after_compaction(self, s: SessionView, event: CompactionEvent) -> Sequence[Action]: ...


class Wakeful(Protocol):
    """A strategy that can say, having just answered a question with nothing, when it could next act: the
    loop asks it nothing until then (a threshold on the context, on the last usage, a new user message,
    a number of entries or steps; see :class:`compbench.sdk.session.Wake`). Without it a strategy is
    asked before and after every step.

    Skipping the questions in between must change nothing: every hook asked there would have returned no
    action, and the strategy's later answers do not depend on having been asked (state it keeps from
    step to step is what the view shows again when it is next asked: ``last_usage``, the entries). Called
    on the view of the question just answered, before anything else changes it.

    Return ``Wake.never()`` when no view that only grows can make it act, ``Wake.next_question()`` when it
    cannot say; a wake is checked by replaying with and without it (:func:`asking_every_question`,
    :func:`compbench.testing.wake_differences`, ``compbench strategies check``)."""

    def wake(self, s: SessionView) -> Wake: ...


class Composed(Protocol):
    """Strategies composed in order (mask → prune → summarize): the loop asks each stage in turn, on the view
    the previous stages' actions left; the composed object's own hooks are never called."""

    stages: Sequence[Strategy]


Capability = Literal["manual", "accept", "after_compaction", "stages", "wake"]
CAPABILITIES: Mapping[Capability, str] = {
    "manual": "/compact: a compaction the user asks for",
    "accept": "checks a summary before using it (may reject the compaction)",
    "after_compaction": "acts again on what its own compaction produced",
    "stages": "composed of strategies asked in turn",
    "wake": "says when it can next act (the replay skips asking it until then)",
}


def capabilities(strategy: object) -> frozenset[Capability]:
    """The optional capabilities ``strategy`` has (see the module docstring)."""
    found: set[Capability] = set()
    for c in CAPABILITIES:
        value = getattr(strategy, c, None)
        if (c == "stages" and value) or (c != "stages" and callable(value)):
            found.add(c)
    return frozenset(found)


def stages_of(strategy: Strategy) -> Sequence[Strategy]:
    """A composed strategy's stages; any other strategy is its own single stage."""
    stages: Sequence[Strategy] | None = getattr(strategy, "stages", None)
    return stages if stages else (strategy,)


def optional(strategy: object, capability: Capability) -> Callable[..., Any] | None:
    """The method of an optional capability (``manual``, ``accept``, ``after_compaction``, ``wake``), or None."""
    method = getattr(strategy, capability, None)
    return method if callable(method) else None


def reads_before_edit(strategy: Strategy) -> bool:
    """Does the strategy's tool refuse an edit of a file not read since its compaction (Claude Code)? A
    strategy declares it with a ``read_before_edit`` attribute; a composition has it when a stage does.
    Re-acquisition then counts such an edit even when a summary quoted the file."""
    return any(bool(getattr(s, "read_before_edit", False)) for s in stages_of(strategy))


_EVERY_QUESTION: ContextVar[bool] = ContextVar("compbench_every_question", default=False)


@contextmanager
def asking_every_question() -> Iterator[None]:
    """Within this block, the replays this thread starts ignore every strategy's ``wake``: each stage is
    asked before and after every step. The reference a wake is checked against — the same tables with and
    without it — and nothing else (a run asked every question costs a question per step per strategy)."""
    token = _EVERY_QUESTION.set(True)
    try:
        yield
    finally:
        _EVERY_QUESTION.reset(token)


def wake_of(strategy: object) -> Callable[[SessionView], Wake] | None:
    """The ``wake`` the loop consults for ``strategy`` (a stage): its method, or None when it has none or when
    replaying inside :func:`asking_every_question`."""
    if _EVERY_QUESTION.get():
        return None
    return optional(strategy, "wake")
