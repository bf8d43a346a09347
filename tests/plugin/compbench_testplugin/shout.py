"""``shout``: a summarizer that answers with the span's user messages in capitals."""

from __future__ import annotations

from typing import Any

from compbench.sdk.context import ReplayContext
from compbench.sdk.session import SummaryRequest
from compbench.summarizers import SummaryResult, summarizer


class Shout:
    name = "shout"

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        said = " / ".join(m.text for m in request.source if m.role == "user")
        return SummaryResult(f"{self.prefix}{said.upper()}")


@summarizer("shout", deterministic=True, usage="shout[:PREFIX]", summary="the span's user messages, shouted")
def create(arg: str, context: ReplayContext, **options: Any) -> Shout:
    return Shout(arg)
