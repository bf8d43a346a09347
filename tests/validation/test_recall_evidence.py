"""What a summary dropped of the needs, beside what the recorded agent did after it: the test the recall bar must
pass. A hand-made session whose summary drops a user's constraint and a path: the user states the constraint
again and the agent's next edit fails."""

from __future__ import annotations

import math

import pytest

from compbench.data.transcript import Message, RecordedCompaction, Text, Transcript
from compbench.measure.tokens import TokenCounter
from compbench.validation.reacquisition import at_compactions as reacquisition
from compbench.validation.recall_evidence import BEHAVIOURS, AtCompaction, at_compactions, correlations
from helpers import assistant, tool, user

RULE = "never touch settings/prod_overrides.yaml"


def _session(summary: str, encrypted: bool = False) -> Transcript:
    msgs = [user("u1", f"fix the loader; {RULE}"), assistant("a1", "look", [("c1", "Bash", {"command": "ls src"})]),
            tool("t1", "c1", "src/app/config_loader.py\nsrc/app/settings_schema.py"), assistant("a2", "ok"),
            Message("s", "user", (Text(summary),)), user("u2", f"remember: {RULE}"),
            assistant("a3", "editing", [("c3", "Edit", {"file_path": "src/app/config_loader.py", "old_string": "a",
                                                        "new_string": "b"})]),
            tool("t3", "c3", "error: not found", is_error=True),
            assistant("a4", "now src/app/settings_schema.py, leaving settings/prod_overrides.yaml alone")]
    meta = {"encrypted": True} if encrypted else {}
    return Transcript("x", "claude-code", tuple(msgs),
                      compactions=(RecordedCompaction(4, "claude-code", "auto", 1000, summary, meta=meta),))


def _at(t: Transcript, counter: TokenCounter) -> list[AtCompaction]:
    return at_compactions(t, reacquisition(t, counter.index(t).part_tokens))


def test_a_dropped_constraint_the_user_states_again_and_an_error_after_are_counted(o200k: TokenCounter) -> None:
    (r,) = _at(_session("Summary: we are fixing the loader."), o200k)
    assert (r.needs, r.lacked, r.lacked_share) == (2, 2, 1.0)
    got = dict(zip(BEHAVIOURS, r.behaviour, strict=True))
    assert got["user repeats"] == 1 and got["excess errors"] == 1.0  # none in the calls before
    # a summary that keeps the constraint: the user's repeat is no repeat of a lacked fact
    (kept,) = _at(_session(f"Summary: fixing the loader; {RULE}."), o200k)
    assert kept.lacked == 1 and dict(zip(BEHAVIOURS, kept.behaviour, strict=True))["user repeats"] == 0


def test_an_encrypted_summary_is_left_out(o200k: TokenCounter) -> None:
    assert _at(_session("opaque", encrypted=True), o200k) == []


def test_correlations_rank_each_behaviour_against_the_share_and_the_count_lacked() -> None:
    rows = [AtCompaction("t", k, "fit", 10, k, (k * 10.0, -k, 0.0, 1.0, 0.0)) for k in range(1, 6)]
    rows.append(AtCompaction("t", 9, "fit", 0, 0, (99.0, 99.0, 99.0, 99.0, 99.0)))  # no needs: left out
    got = correlations(rows)
    assert got["excess re-reads"] == pytest.approx((1.0, 1.0, 5))
    assert got["orientation reads"][0] == pytest.approx(-1.0)
    assert math.isnan(got["excess errors"][0])  # no spread: no figure
