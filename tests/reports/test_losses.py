"""Where needed-fact recall and re-acquisition disagree on a strategy's rank (the report's "what each loses")."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from compbench.reports.losses import APART, apart, disagreements, ranks, reacquired_share, section


def test_reacquisitions_share_is_pooled_over_the_reference_input() -> None:
    df = pd.DataFrame({"strategy": ["a", "a", "b"], "reacquired_tokens": [100, 300, 0],
                       "reference_input_tokens": [1_000, 3_000, 500]})
    assert reacquired_share(df, "a") == pytest.approx(0.1) and reacquired_share(df, "b") == 0
    assert math.isnan(reacquired_share(df, "c"))  # no rows: no figure


def test_ranks_best_first_ties_share_the_better_rank_and_a_missing_figure_ranks_nothing() -> None:
    recall = {"a": 0.95, "b": 0.90, "c": 0.90, "d": math.nan}
    share = {"a": 0.10, "b": 0.01, "c": 0.05, "d": 0.0}
    assert ranks(recall, share) == {"a": (1, 3), "b": (2, 1), "c": (2, 2)}


@pytest.mark.parametrize(("n", "far"), [(4, APART), (8, 2), (9, 3), (12, 3), (13, 4)])
def test_ranks_disagree_a_quarter_of_the_strategies_apart_and_never_closer_than_two(n: int, far: int) -> None:
    assert apart({str(k): (1, 1) for k in range(n)}) == far


def test_a_disagreement_is_said_at_the_boundary_not_below_it() -> None:
    found = {"sum": (1, 3), "mask": (3, 1), "near": (2, 2), "x": (4, 4)}  # 4 strategies: 2 places apart
    assert disagreements(found, ["sum", "mask", "near", "x", "absent"]) == [
        "sum: 1st by recall, 3rd by re-acquisition (it looks better by recall)",
        "mask: 3rd by recall, 1st by re-acquisition (it looks better by re-acquisition)"]
    assert disagreements({"a": (1, 2), "b": (2, 1)}, ["a", "b"]) == []  # neighbours swapping


def test_the_sections_cells_mark_the_rows_that_disagree() -> None:
    df = pd.DataFrame({"strategy": ["s1", "s2", "s3", "s4"], "reacquired_tokens": [400, 300, 200, 100],
                       "reference_input_tokens": [1_000] * 4})
    rows = [{"label": s} for s in ("s1", "s2", "s3", "s4")]
    cells, said, far = section(df, rows, {"s1": 0.99, "s2": 0.98, "s3": 0.97, "s4": 0.96})
    assert far == 2 and cells["s1"] == {"reacquired": "40.0%", "ranks": "1 / 4", "apart": "1"}
    assert cells["s2"] == {"reacquired": "30.0%", "ranks": "2 / 3", "apart": ""}  # one place: no disagreement
    assert [x.split(":")[0] for x in said] == ["s1", "s4"]
