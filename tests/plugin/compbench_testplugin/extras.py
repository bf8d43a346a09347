"""An executor and a metric from outside the package."""

from __future__ import annotations

from collections.abc import Iterator

from compbench.data.transcript import Transcript
from compbench.decide.metrics import Metric
from compbench.run.engine import Outcome
from compbench.run.executors import Job, run_local

SUMMARIZER_SHARE = Metric("summarizer_share", "summarizer input per input token", "summarizer_input_tokens",
                          "input_tokens", higher_is_better=False)


def serial(job: Job) -> Iterator[tuple[Transcript, Outcome]]:
    """Every transcript in this process, one after the other, whatever the job asks."""
    yield from run_local(Job(job.spec, job.transcripts))
