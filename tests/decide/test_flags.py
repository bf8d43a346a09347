"""The run's flags on what its figures rest on: a prompt-cache model more than 5 points off the recording."""

from __future__ import annotations

import pandas as pd
import pytest

from compbench.decide.flags import cache_flags


def results(recorded: float, simulated: float) -> pd.DataFrame:
    return pd.DataFrame([{"transcript_id": "t", "source": "gemini-cli", "cache_calls": 10,
                          "recorded_cache_read": int(recorded * 1_000_000), "recorded_input": 1_000_000,
                          "simulated_cache_read": int(simulated * 1_000_000), "simulated_input": 1_000_000}])


@pytest.mark.parametrize(("recorded", "simulated", "flagged"), [
    (0.65, 0.971, True), (0.90, 0.95, False), (0.90, 0.950001, True), (0.95, 0.90, False), (0.95, 0.899, True)])
def test_an_agent_whose_cache_model_is_more_than_5_points_off_is_flagged(recorded: float, simulated: float,
                                                                          flagged: bool) -> None:
    got = cache_flags(results(recorded, simulated))
    assert bool(got) is flagged
    if flagged:
        assert got[0].startswith("gemini-cli: simulated ")
