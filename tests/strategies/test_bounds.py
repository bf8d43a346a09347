"""The bounds strategies leave to ``param(lo=…, hi=…)`` (compbench.sdk.registry.check_bounds) rather than check
by hand: each still refused just past its bound, in one line naming the parameter, and accepted at it."""

from __future__ import annotations

import pytest

from compbench.errors import UsageError
from compbench.strategies import resolve

BOUNDS = [  # (strategy, parameter, the bound, a value just past it)
    ("observation-masking", "keep_last_turns", "0", "-1"),
    ("swe-agent", "n", "1", "0"),
    ("swe-agent", "polling", "1", "0"),
    ("langchain-clear-tool-uses", "keep", "0", "-1"),
    ("langchain-clear-tool-uses", "clear_at_least", "0", "-1"),
    ("langchain", "chars_per_token", "0.1", "0.09"),
    ("anthropic-context-editing", "keep", "0", "-1"),
    ("anthropic-context-editing", "keep_thinking_turns", "0", "-1"),
    ("anthropic-context-editing", "clear_at_least", "0", "-1"),
    ("anthropic-context-editing", "trigger_value", "1", "0"),
]


@pytest.mark.parametrize(("name", "param", "bound", "past"), BOUNDS)
def test_just_past_the_bound_is_refused(name: str, param: str, bound: str, past: str) -> None:
    with pytest.raises(UsageError, match=rf"strategy '{name}': {param}={past} is (below its minimum|negative)"):
        resolve(f"{name}:{param}={past}")


@pytest.mark.parametrize(("name", "param", "bound", "past"), BOUNDS)
def test_the_bound_itself_is_accepted(name: str, param: str, bound: str, past: str) -> None:
    c = resolve(f"{name}:{param}={bound}")
    assert getattr(c.params, param) == float(bound)
    c.create()  # and the strategy builds with it
