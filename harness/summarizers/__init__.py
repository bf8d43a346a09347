"""Summarizer backends: ``summarize(request) -> SummaryResult``.

Backends (``calibrated``, ``extractive``, ``litellm:MODEL``, ``cache-only:DIR``, ``mock``) are looked up by spec
string with :func:`get`; their modules import lazily so litellm loads only when a litellm summarizer is
used. A backend reports failures in the result (``error``), never by raising: the loop records the
failure on the compaction event and runs the strategy's failure path.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Protocol

from compbench.errors import UsageError
from compbench.session import SummaryRequest

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


def get(spec: str, **options: object) -> Summarizer:
    """The summarizer a spec names: ``calibrated``, ``extractive``, ``mock``, ``litellm:MODEL``,
    ``cache-only:DIR``."""
    kind, _, arg = spec.partition(":")
    if kind not in BACKENDS:
        raise UsageError(f"unknown summarizer {spec!r}; known: calibrated, extractive, litellm:MODEL, "
                         "cache-only:DIR, mock")
    mod = importlib.import_module(BACKENDS[kind])
    summarizer: Summarizer = mod.create(kind, arg, **options)
    return summarizer
