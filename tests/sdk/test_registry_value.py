"""Configured.value: a parameter read from a configuration, a composed strategy's stage by name or position."""

from __future__ import annotations

import pytest

from compbench.errors import UsageError
from compbench.strategies import resolve


def test_a_stage_parameter_by_name_or_position_and_a_plain_one() -> None:
    set_ = resolve("gemini-cli:gemini-cli-compression.threshold=0.3")
    assert set_.value("gemini-cli-compression.threshold") == 0.3
    position = next(k for k, s in enumerate(set_.params.stages, 1) if s.startswith("gemini-cli-compression"))
    assert set_.value(f"{position}.threshold") == 0.3
    assert resolve("gemini-cli").value("gemini-cli-compression.threshold") == 0.5
    assert resolve("claude-code:autocompact_pct_override=60").value("autocompact_pct_override") == 60


@pytest.mark.parametrize("param", ["no_such", "gemini-cli-compression.no_such", "nostage.threshold", "99.threshold"])
def test_a_parameter_the_configuration_lacks_is_a_usage_error(param: str) -> None:
    with pytest.raises(UsageError, match="no parameter"):
        resolve("gemini-cli").value(param)
