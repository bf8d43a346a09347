"""``compbench.summarizers.mock`` — A deterministic summarizer for tests: echoes a fixed text or a digest of what it was
given.

It goes through the same result accounting as the real backends (tokens filled in by the loop).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compbench.sdk.context import ReplayContext
from compbench.sdk.session import SummaryRequest
from compbench.summarizers import SummaryResult, summarizer


class MockSummarizer:
    name = "mock"

    def __init__(self, text: str | Callable[[SummaryRequest], str] | None = None,
                 error: str | None = None) -> None:
        self._text = text
        self._error = error
        self.requests: list[SummaryRequest] = []

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        self.requests.append(request)
        if self._error is not None:
            return SummaryResult("", error=self._error)
        if callable(self._text):
            return SummaryResult(self._text(request))
        if self._text is not None:
            return SummaryResult(self._text)
        return SummaryResult(f"SUMMARY of {len(request.source)} messages")


@summarizer("mock", deterministic=False, usage="mock[:TEXT]", summary="content-free summaries (the floor)")
def create(arg: str, context: ReplayContext, **options: Any) -> MockSummarizer:
    return MockSummarizer(arg or None)
