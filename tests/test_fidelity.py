"""Fidelity on the real transcripts: a row per tool-made compaction, the figures the note relies on."""

from __future__ import annotations

from pathlib import Path

import pytest

from compbench.fidelity import fidelity, segment
from compbench.formats import read_all


@pytest.fixture(scope="module")
def rows(transcripts_dir: Path) -> list:  # type: ignore[type-arg]
    folders = [transcripts_dir / d for d in ("claude-code", "codex", "opencode", "pi")]
    return fidelity(read_all(folders))


def test_a_row_per_recorded_compaction_and_preset(rows: list) -> None:  # type: ignore[type-arg]
    seed = [r for r in rows if r.preset == "seed"]
    assert sorted((r.tool, r.n) for r in seed) == [("claude-code", 1), ("claude-code", 1), ("codex", 1),
                                                    ("opencode", 1), ("pi", 1), ("pi", 2)]
    assert {r.preset for r in rows} == {"seed", "current"}


def test_auto_triggers_of_current_presets(rows: list) -> None:  # type: ignore[type-arg]
    by = {(r.tool, r.n, r.preset, r.real_tokens): r for r in rows}
    cc = by[("claude-code", 1, "current", 155_548)]
    assert cc.d_steps is not None and abs(cc.d_steps) <= 2 and cc.kept_jaccard == 1.0
    pi2 = by[("pi", 2, "current", 185_014)]
    assert pi2.d_steps is not None and abs(pi2.d_steps) <= 2
    manual = [r for r in rows if r.trigger == "manual"]
    assert manual and all(r.our_step is None and "manual" in r.cause for r in manual)


def test_pi_first_compaction_is_inferred_manual_from_its_threshold(rows: list) -> None:  # type: ignore[type-arg]
    """pi records no trigger. Its first compaction (tokensBefore 175,004) is below pi's own threshold for a
    200k window (200,000 - 16,384 = 183,616): pi could not have triggered it, the user did. The second one
    (185,014) is above it and stays an auto compaction whose trigger is compared."""
    first = [r for r in rows if r.tool == "pi" and r.n == 1]
    assert first and all(r.trigger == "manual (inferred)" and r.our_step is None and r.d_steps is None
                         and "183,616" in r.cause for r in first)
    second = [r for r in rows if r.tool == "pi" and r.n == 2]
    assert second and all(r.trigger == "unknown" and r.d_steps is not None for r in second)


def test_segment_restarts_from_the_tools_state(transcripts_dir: Path) -> None:
    (t,) = read_all([transcripts_dir / "pi"])
    seg, _ = segment(t, 1)
    first = t.compactions[0]
    assert seg.messages[0].text == first.summary
    assert [m.id for m in seg.messages[1: 1 + len(first.kept_ids)]] == list(first.kept_ids)
    assert seg.compactions[0].tokens_before == 185_014
