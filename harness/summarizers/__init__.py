"""``compbench.summarizers`` — Summarizer backends: ``summarize(request) -> SummaryResult``.

Backends (``calibrated``, ``extractive``, ``litellm:MODEL``, ``cache-only:DIR``, ``mock``) are looked up by spec
string with :func:`get`; their modules import lazily so litellm loads only when a litellm summarizer is
used. A backend reports failures in the result (``error``), never by raising: the loop records the
failure on the compaction event and runs the strategy's failure path.

Each backend registers with ``@summarizer(name, deterministic=..., usage=...)`` on a factory
``(arg, context, **options) -> Summarizer``; other packages add theirs through the ``compbench.summarizers``
entry-point group. What a run needs to know about one is declared there, not guessed from its attributes:
``deterministic`` (the same request on the same transcript always gets the same summary, so a tuning
grid's replays may share a trajectory), and the factory is handed the run's
:class:`~compbench.sdk.context.ReplayContext`, which holds the transcript being replayed and its fact index
and forgets every per-transcript cache when the transcript is done.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from compbench.plugins import Registry
from compbench.sdk.context import ReplayContext
from compbench.sdk.session import SummaryRequest

ENTRY_POINT_GROUP = "compbench.summarizers"
BACKENDS: dict[str, str] = {
    "calibrated": "compbench.summarizers.calibrated",
    "extractive": "compbench.summarizers.extractive",
    "litellm": "compbench.summarizers.llm",
    "cache-only": "compbench.summarizers.llm",
    "mock": "compbench.summarizers.mock",
}


@dataclass(frozen=True, slots=True)
class SummaryResult:
    """A summarizer's answer. Token counts of None are filled in by the loop with the run's counter.

    ``latency_ms`` is the latency recorded when the response was first produced (cached with it), so
    reruns report the same figure and results stay byte-identical.
    """

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    error: str | None = None
    attempts: int = 1
    latency_ms: float = 0.0
    cached: bool = False


class Summarizer(Protocol):
    name: str

    def summarize(self, request: SummaryRequest) -> SummaryResult: ...


Factory = Callable[..., Summarizer]  # (arg: str, context: ReplayContext, **options) -> Summarizer
F = TypeVar("F", bound=Factory)


@dataclass(frozen=True)
class SummarizerInfo:
    """A registered backend: how to build it and what a run may rely on."""

    name: str
    factory: Factory
    deterministic: bool  # same request, same transcript -> same summary (replays may share a trajectory)
    usage: str  # how a spec names it: "litellm:MODEL"
    summary: str

    def create(self, arg: str = "", context: ReplayContext | None = None, **options: Any) -> Summarizer:
        return self.factory(arg, context if context is not None else ReplayContext(), **options)


SUMMARIZERS: Registry[SummarizerInfo] = Registry("summarizer", ENTRY_POINT_GROUP, BACKENDS,
                                                  spell=lambda n: SUMMARIZERS.get(n).usage)


def summarizer(name: str, *, deterministic: bool, usage: str = "", summary: str = "") -> Callable[[F], F]:
    """Register a summarizer factory ``(arg, context, **options) -> Summarizer`` under ``name`` (an error if
    taken). ``deterministic``: the same request on the same transcript always gets the same summary."""

    def deco(factory: F) -> F:
        SUMMARIZERS.register(name, SummarizerInfo(name, factory, deterministic, usage or name, summary),
                             factory.__module__)
        return factory

    return deco


def info(spec: str) -> SummarizerInfo:
    """The backend a spec names (``litellm:MODEL`` -> litellm's), with a did-you-mean when unknown."""
    return SUMMARIZERS.get(spec.partition(":")[0])


def get(spec: str, *, context: ReplayContext | None = None, **options: object) -> Summarizer:
    """The summarizer a spec names: ``calibrated``, ``extractive``, ``mock``, ``litellm:MODEL``,
    ``cache-only:DIR``, or a plug-in's; built with ``context`` (the run's) or a private one."""
    return info(spec).create(spec.partition(":")[2], context, **options)


DESCRIPTIONS = {  # what produced a run's summaries, in words beside recall
    "calibrated": "calibrated: an offline heuristic that keeps facts at the rates real tools' summaries kept them",
    "extractive": "extractive: an offline heuristic that copies the span's paths, commands and errors (optimistic)",
    "mock": "mock: content-free summaries (they carry nothing)",
}


def describe_summarizer(spec: str) -> str:
    """What produced a run's summaries, in words every table and report prints beside recall."""
    kind = spec.partition(":")[0]
    if kind == "litellm":
        return f"{spec}: a real model"
    if kind == "cache-only":
        return f"{spec}: a real model's recorded answers"
    return DESCRIPTIONS.get(kind, spec)
