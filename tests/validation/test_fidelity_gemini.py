"""Fidelity for Gemini CLI: the ``gemini-cli`` strategy (its presets) beside the compressions Gemini CLI's logs
record. Where the log records usage (chat recordings) the trigger is compared; where it records the new
history (v0.44+) the kept set and the summary too; an export holds only the history after the compression,
so only the snapshot is there to show. The trigger decisions rest on recorded usage, not on our tokenizer,
so the cheap chars4 counter changes none of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from compbench.data.formats import read_all
from compbench.validation.fidelity import Row, fidelity
from helpers import FIXTURES

DATA = FIXTURES / "gemini-cli"
RECORDINGS = ["session-2025-12-01T10-00-aaaa1111.json", "session-2026-02-10T09-00-bbbb2222.json",
              "session-2026-03-01T08-00-cccc3333.jsonl", "session-2026-06-01T12-00-dddd4444.jsonl"]


@pytest.fixture(scope="module")
def rows() -> list[Row]:
    return fidelity(read_all([DATA / n for n in RECORDINGS]), tokenizer="chars4")


def test_every_auto_compression_is_matched_within_two_steps(rows: list[Row]) -> None:
    auto = [r for r in rows if r.trigger == "auto"]
    assert {(r.transcript[:8], r.n) for r in auto} == {("aaaa1111", 1), ("bbbb2222", 1), ("cccc3333", 1),
                                                      ("dddd4444", 1)}
    assert all(r.d_steps is not None and abs(r.d_steps) <= 2 for r in auto)
    assert {r.preset for r in auto} == {"seed", "0.26", "0.18", "0.17"}
    assert all(r.window == 1_048_576 and "Gemini CLI's tokenLimit" in r.window_source for r in rows)


def test_the_kept_set_and_summary_are_compared_where_the_log_records_them(rows: list[Row]) -> None:
    (v44,) = [r for r in rows if r.transcript.startswith("dddd4444") and r.preset == "seed"]
    assert v44.kept_jaccard == 1.0 and v44.real_summary_tokens and v44.facts_our_summary != "–"
    assert "the version this preset models" in v44.cause  # 0.44+: today's preset
    older = [r for r in rows if not r.transcript.startswith("dddd4444")]
    assert all(r.kept_jaccard is None and "kept set not compared" in r.cause for r in older)


def test_a_manual_compress_is_asked_of_the_strategy_where_the_user_asked(rows: list[Row]) -> None:
    manual = [r for r in rows if r.trigger == "manual"]
    assert {(r.transcript[:8], r.n) for r in manual} == {("bbbb2222", 2)}
    assert all(r.our_step is None and r.rebuilt_tokens for r in manual)


def test_the_real_export_shows_its_compression(real_logs_dir: Path) -> None:
    rows = fidelity(read_all([real_logs_dir / "gemini-cli"]), tokenizer="chars4")
    assert [(r.transcript, r.n, r.preset) for r in rows] == [
        ("jaymcortest__unidoku__rut", 1, p) for p in ("seed", "0.26", "0.18", "0.17")]
    r = rows[0]
    assert r.real_summary_tokens and r.real_summary_tokens > 500 and r.our_step is None
    assert "holds only the history after this compaction" in r.cause and "gemini-cli up to 0.20" in r.cause
