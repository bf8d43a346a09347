"""Summarizer backends: the extractive heuristic, and the litellm path with its cache, retries and faults."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compbench.errors import CompbenchError
from compbench.session import SummaryRequest
from compbench.summarizers import get
from compbench.summarizers.extractive import CHARS_PER_TOKEN, facts_of, summarize_messages
from compbench.summarizers.llm import LLMSummarizer
from helpers import assistant, tool, user

SPAN = (
    user("u1", "Fix the failing test in tests/test_api.py. Never touch the migrations."),
    assistant("a1", "Reading.", [("c1", "read", {"file_path": "src/api/views.py"})]),
    tool("t1", "c1", "def view(): ..."),
    assistant("a2", "Editing.", [("c2", "edit", {"file_path": "src/api/views.py", "old": "a", "new": "b"}),
                                 ("c3", "bash", {"command": "pytest tests/test_api.py -x"})]),
    tool("t2", "c2", "ok"),
    tool("t3", "c3", "E   AssertionError: 404 != 200\nFAILED tests/test_api.py::test_get - AssertionError"),
    user("u2", "Also add a changelog entry."),
    assistant("a3", "Done: views fixed, changelog next."),
)


def req(budget: int | None = 500, prompt: tuple[Any, ...] = SPAN) -> SummaryRequest:
    return SummaryRequest("Summarize.", prompt, SPAN, budget)


def test_extractive_facts_split_modified_from_read() -> None:
    f = facts_of(SPAN)
    assert f["modified"] == ["src/api/views.py"] and f["read"] == []
    assert f["commands"] == ["pytest tests/test_api.py -x"]
    assert f["errors"][0] == "E AssertionError: 404 != 200"
    assert f["requests"][0].startswith("Fix the failing test") and f["last"] == ["Done: views fixed, changelog next."]


def test_extractive_summary_fits_budget_and_keeps_priorities() -> None:
    text = summarize_messages(SPAN, 500)
    assert text.startswith("## User requests\n- Fix the failing test")
    assert "## Files modified\n- src/api/views.py" in text and "AssertionError" in text
    for budget in (5, 20, 40, 80):
        small = summarize_messages(SPAN, budget)
        assert len(small) <= budget * CHARS_PER_TOKEN
    assert summarize_messages(SPAN, 20).startswith("## User requests")
    assert summarize_messages(SPAN, 500) == summarize_messages(SPAN, 500)


class Fake:
    """A fault-injecting stand-in for litellm.completion: raises the queued errors, then answers."""

    def __init__(self, *faults: Exception, text: str = "the summary") -> None:
        self.faults = list(faults)
        self.text = text
        self.calls = 0

    def __call__(self, **kw: Any) -> Any:
        self.calls += 1
        if self.faults:
            raise self.faults.pop(0)
        from types import SimpleNamespace as NS

        return NS(choices=[NS(message=NS(content=self.text))], usage=NS(prompt_tokens=321, completion_tokens=12))


def named(name: str) -> Exception:
    return type(name, (Exception,), {})(f"{name} happened")


def test_retries_transient_faults_with_backoff_then_caches(tmp_path: Path) -> None:
    sleeps: list[float] = []
    fake = Fake(named("RateLimitError"), named("InternalServerError"))
    s = LLMSummarizer("gpt-x", tmp_path, completion=fake, sleep=sleeps.append, api_key="sk-SECRET123")
    r = s.summarize(req())
    assert (r.text, r.input_tokens, r.output_tokens, r.attempts, r.error) == ("the summary", 321, 12, 3, None)
    assert len(sleeps) == 2 and 0.5 <= sleeps[0] <= 1.0 and 1.0 <= sleeps[1] <= 2.0
    again = s.summarize(req())
    assert again.cached and again.text == "the summary" and fake.calls == 3
    files = list(tmp_path.rglob("*.json"))
    assert files and all("sk-SECRET123" not in f.read_text() for f in files)
    assert "SECRET" not in repr(s)


@pytest.mark.parametrize("fault, expected", [
    (named("AuthenticationError"), "AuthenticationError: AuthenticationError happened"),
    (None, "empty summary"),
])
def test_permanent_faults_are_returned_not_raised(tmp_path: Path, fault: Exception | None, expected: str) -> None:
    fake = Fake(*([fault] if fault else []), text="" if fault is None else "x")
    r = LLMSummarizer("gpt-x", tmp_path, completion=fake, sleep=lambda _: None).summarize(req())
    assert r.error == expected and r.text == "" and fake.calls == 1


def test_malformed_response_and_exhausted_retries(tmp_path: Path) -> None:
    bad = LLMSummarizer("gpt-x", tmp_path, completion=lambda **kw: object(), sleep=lambda _: None)
    assert bad.summarize(req()).error == "ValueError: malformed response: no choices[0].message.content"
    fake = Fake(*[named("Timeout") for _ in range(10)])
    r = LLMSummarizer("gpt-x", tmp_path, completion=fake, sleep=lambda _: None, retries=2).summarize(req())
    assert r.error == "Timeout: Timeout happened" and r.attempts == 3 and fake.calls == 3


def test_cache_only_answers_from_cache_and_fails_clearly_on_a_miss(tmp_path: Path) -> None:
    LLMSummarizer("gpt-x", tmp_path, completion=Fake()).summarize(req())
    assert json.loads((tmp_path / "models.json").read_text()) == ["gpt-x"]
    ci = get(f"cache-only:{tmp_path}")
    assert ci.summarize(req()).text == "the summary"
    with pytest.raises(CompbenchError, match="no cached response"):
        ci.summarize(req(budget=99))


def test_litellm_mock_response_goes_through_the_real_client(tmp_path: Path) -> None:
    s = get("litellm:gpt-4o-mini", cache_dir=str(tmp_path), mock_response="mocked summary")
    r = s.summarize(req())
    assert r.text == "mocked summary" and r.error is None and r.attempts == 1
