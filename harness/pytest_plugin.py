"""``compbench.pytest_plugin`` — A pytest plug-in (entry point ``pytest11``): assert a run's retention inside your own
test suite.

    def test_compaction_keeps_what_the_agent_needs(compbench_gate):
        compbench_gate("runs/nightly", min={"needed_recall": 0.85, "effective_savings": 0.3})

The fixture applies the same checks as ``compbench gate`` (lower 95% bounds; ``max_drop`` against a
``baseline`` run) and fails the test with every failed figure. Nothing heavy is imported until used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "compbench: a test that checks a compbench run (for selection with -m)")


@pytest.fixture
def compbench_gate() -> Callable[..., list[Any]]:
    """``compbench_gate(run, min=..., max=..., baseline=..., max_drop=..., strategy=..., min_transcripts=5,
    allow_few=False)``: a figure on fewer than ``min_transcripts`` transcripts fails, as in ``compbench gate``."""

    def check(run: str | Path, *, min: Mapping[str, float] | None = None, max: Mapping[str, float] | None = None,
              baseline: str | Path | None = None, max_drop: Mapping[str, float] | None = None,
              strategy: tuple[str, ...] | str = (), resamples: int = 10_000, min_transcripts: int = 5,
              allow_few: bool = False) -> list[Any]:
        from compbench.decide.gate import run_gate
        from compbench.decide.metrics import metric

        for name in (*(min or {}), *(max or {}), *(max_drop or {})):
            metric(name)
        checks = run_gate(run, dict(min or {}), dict(max or {}), baseline, dict(max_drop or {}),
                          (strategy,) if isinstance(strategy, str) else tuple(strategy), resamples,
                          min_transcripts=min_transcripts, allow_few=allow_few)
        failed = [c for c in checks if not c.passed]
        if failed:
            pytest.fail("compbench gate failed:\n" + "\n".join(c.line() for c in failed), pytrace=False)
        return checks

    return check
