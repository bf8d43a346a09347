"""cline-condense keeps only the ``context`` parameter of the model's ``summarize_task`` call as the summary
(cline/cline 9ee618111d58 ``SummarizeTaskHandler``: ``continuationPrompt(block.params.context)``), not its
``<thinking>`` analysis nor its ``task_progress``; an answer without the call (an offline summarizer's) is the
summary as it is; an unclosed ``<context>`` (the stream ended) runs to the end."""

from __future__ import annotations

import pytest

from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact
from compbench.strategies import resolve
from compbench.strategies.cline_prompts import CONTINUATION_AFTER, CONTINUATION_BEFORE
from compbench.summarizers.mock import MockSummarizer
from helpers import long_session, run, transcript

ANSWER = ("<thinking>Analysis: the user wants README.md and cli.py changed.</thinking>\n"
          "<summarize_task>\n<context>\n1. Primary Request and Intent: add --verbose to cli.py\n</context>\n"
          "<task_progress>\n- [x] read cli.py\n- [ ] docs\n</task_progress>\n</summarize_task>")


@pytest.mark.parametrize(("answer", "summary"), [
    (ANSWER, "1. Primary Request and Intent: add --verbose to cli.py"),  # the call: its context only
    ("1. Primary Request and Intent: add --verbose", "1. Primary Request and Intent: add --verbose"),  # no call
    ("<summarize_task>\n<context>\nhalf of a summ", "half of a summ"),  # cut short: to the end
    ("<context></context>", ""),  # an empty context parameter
])
def test_summary_is_the_context_parameter(answer: str, summary: str) -> None:
    assert Compact("x", (), summary_tag="context").summary_of(answer) == summary
    assert Compact("x", ()).summary_of(answer) == answer  # other strategies keep the whole answer


def test_replay_inserts_only_the_context(chars4: TokenCounter) -> None:
    tr = run(transcript(*long_session(30)), resolve("cline-condense").create(), chars4, window=1_000,
             max_output=100, summarizer=MockSummarizer(ANSWER))
    first = tr.compactions[0]
    assert first.ok and first.summary == "1. Primary Request and Intent: add --verbose to cli.py"
    assert "<thinking>" not in first.summary and "task_progress" not in first.summary
    assert first.summarizer_output == chars4.count_text(ANSWER)  # the whole answer is paid for
    assert first.summary_tokens == chars4.count_text(first.summary)
    summ = MockSummarizer(ANSWER)
    run(transcript(*long_session(30)), resolve("cline-condense").create(), chars4, window=1_000, max_output=100,
        summarizer=summ)
    assert summ.requests[1].source[2].text == CONTINUATION_BEFORE + first.summary + CONTINUATION_AFTER
