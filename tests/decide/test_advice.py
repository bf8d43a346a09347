"""The evidence gate (compbench.decide.advice): each condition met and not met at its boundary, manual compactions
set aside, and a whole run whose advice appears only once enough transcripts reach the setting."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from compbench.decide import advice
from compbench.decide.stats import Estimate
from compbench.decide.toolverdict import Change
from compbench.sdk.tools import Accepts, Setting


def transcripts(checked: int, within: int, auto: int | None = None, calibrated: int = 0, manual: int = 0) -> Any:
    """One row per transcript: ``checked`` compactions compared, ``within`` of them within 2 calls."""
    rows = []
    for k in range(max(checked, 1)):
        rows.append({"transcript_id": f"t{k}", "strategy": "x", "auto_compactions": 1 if k < (auto or checked) else 0,
                     "trigger_checked": 1 if k < checked else 0, "trigger_within": 1 if k < within else 0,
                     "window_calibrated": k < calibrated, "manual_compactions": 1 if k < manual else 0})
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("checked", "within", "met"), [(10, 9, True), (10, 8, False), (10, 10, True), (20, 17, False),
                                                        (20, 18, True)])
def test_reproduction_needs_ninety_percent_within_two_calls(checked: int, within: int, met: bool) -> None:
    c = advice.reproduction(transcripts(checked, within), None)
    assert c.met == met
    assert f"{within} of {checked}" in c.text
    if not met:
        assert c.text.startswith("the strategy does not reproduce your tool's compactions on these logs")


def test_reproduction_without_usage_or_without_compactions() -> None:
    unplaced = transcripts(0, 0, auto=1)
    assert not advice.reproduction(unplaced, None).met
    assert "cannot be placed" in advice.reproduction(unplaced, None).text
    none = transcripts(0, 0, auto=0).assign(auto_compactions=0)
    assert advice.reproduction(none, None).met  # nothing to check against: the logs have none
    calibrated = advice.reproduction(transcripts(4, 4, calibrated=2), None)
    assert calibrated.met and "after calibrating the window from the log on 2 transcripts" in calibrated.text


@pytest.mark.parametrize(("median", "met"), [(0.199, True), (0.2, True), (0.201, False)])
def test_reproduction_holds_the_self_check_to_its_margin(median: float, met: bool) -> None:
    assert advice.reproduction(transcripts(5, 5), (5, median, 0.3)).met == met


def test_manual_compactions_are_set_aside() -> None:
    rows = transcripts(10, 8, manual=2)  # the two misses are the transcripts the user compacted by hand
    assert advice.manual_set_aside(rows) == (2, 2)
    assert len(advice.comparable(rows)) == 8
    # only the transcripts compacted automatically or never count: 6 of 8 within
    assert advice.reproduction(rows, None).text.endswith("(6 of 8 of your tool's automatic compactions within 2 "
                                                         "calls)")


@pytest.mark.parametrize(("acted", "met"), [(4, False), (5, True), (6, True)])
def test_reach_needs_five_transcripts(acted: int, met: bool) -> None:
    rows = pd.DataFrame([{"transcript_id": f"t{k}", "strategy": "s", "manual_compactions": 0,
                          "first_action_step": 3 if k < acted else -1} for k in range(8)])
    c = advice.reach(rows, "s")
    assert c.met == met
    if not met:
        assert c.text == f"too few transcripts reach the threshold ({acted} of 5 needed)"


def change(value: float, lo: float, hi: float, n: int = 20) -> Change:
    return Change("s", "", {"effective_savings": Estimate(value, lo, hi, n), "cost": Estimate(-1.0, -2.0, -0.5, n)})


@pytest.mark.parametrize(("d", "error", "met", "said"), [
    (change(0.10, 0.05, 0.15), 0.04, True, "better than as it ran"),
    (change(0.10, 0.05, 0.15), 0.05, False, "within the replay's own error (5.0%"),
    (change(0.10, -0.01, 0.15), 0.0, False, "not better than as it ran"),
    (change(-0.10, -0.15, -0.05), 0.0, False, "not better than as it ran"),
    (change(0.10, 0.05, 0.15, n=4), 0.0, False, "not better than as it ran"),  # few: not significant
])
def test_better_is_significant_positive_and_above_the_replays_error(d: Change, error: float, met: bool,
                                                                     said: str) -> None:
    c = advice.better(d, (10, error, error), True)
    assert c.met == met and said in c.text


def test_better_needs_as_it_ran() -> None:
    assert advice.better(change(0.1, 0.05, 0.15), None, False).text == \
        "as it ran is not in this run (add --strategy recorded)"


PCT = Setting("pct", "MY_PCT", "env", "unset", "export MY_PCT={value}", sweep=(60.0, 80.0),
              accepts=Accepts(10.0, 100.0))


@pytest.mark.parametrize(("best", "tried", "met", "said"), [
    (80.0, [60.0, 80.0, 92.8], True, "between values tried"),
    (60.0, [60.0, 80.0, 92.8], False, "the lowest of 60, 80, 92.8; the tool accepts down to 10"),
    (92.8, [60.0, 80.0, 92.8], False, "the highest"),
    (10.0, [10.0, 20.0, 92.8], True, "at the tool's limit (10)"),
    (True, [True, False], True, "a switch"),
])
def test_interior_or_at_the_tools_limit(best: Any, tried: list[Any], met: bool, said: str) -> None:
    c = advice.interior(PCT, best, tried)
    assert c.met == met and said in c.text


def test_a_setting_most_logs_versions_ignore_is_not_advised() -> None:
    from dataclasses import replace

    since = replace(PCT, honoured=lambda v: "" if v >= "2.0" else "read from 2.0")
    ok, limits = advice.honoured(since, ["2.1", "2.1", "1.9"])
    assert ok.met and limits == ("not read by 1.9: read from 2.0",)
    bad, _ = advice.honoured(since, ["1.8", "1.9", "2.1"])
    assert not bad.met and "most of these logs' versions do not read it" in bad.text


@pytest.mark.parametrize(("unknown", "calibrated", "met"), [(3, 0, True), (5, 0, True), (6, 0, False), (6, 6, True)])
def test_windows_no_table_gives_and_no_compaction_shows_fail_it_once_they_are_most(unknown: int, calibrated: int,
                                                                                  met: bool) -> None:
    rows = transcripts(10, 10).assign(window_known=[k >= unknown for k in range(10)],
                                      window_calibrated=[k < calibrated for k in range(10)])
    c = advice.reproduction(rows, None)
    assert c.met == met
    guessed = unknown - calibrated
    if met and guessed:
        assert f"{guessed} transcripts at a window no table gives" in c.text
    if not met:
        assert f"the window of {guessed} of 10 transcripts is not in the tool's own model table" in c.text
