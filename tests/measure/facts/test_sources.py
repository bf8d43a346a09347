"""Gold (hand-annotated) facts of four real transcripts: ``datasets/samples/gold_facts.jsonl``.

The facts were written by reading each transcript; this test only checks them mechanically against the
transcripts: every anchor occurs (normalized) in some message part, each fact has a first message, the
counts by kind are the ones annotated, and enough of them are *needed* later (an assistant message
mentions them after they were established, see :mod:`compbench.measure.facts.presence`).
"""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest
from conftest import need_shared

from compbench.data.facts import Fact, normalize
from compbench.data.formats import read
from compbench.data.formats.catalog import FORMATS
from compbench.data.transcript import Transcript
from compbench.measure.facts.presence import FactIndex, part_match_text
from compbench.measure.facts.sources import load_gold
from helpers import ROOT

GOLD = ROOT / "datasets" / "samples" / "gold_facts.jsonl"
# Needs are received facts the agent uses again after a gap: in 97b0ffde most gold facts are commands and
# addresses the agent typed itself (agent provenance), so only 2 of its 12 are needs; the others have 5+.
MIN_NEEDED = 2

# transcript id -> (format, path under the shared transcripts dir, expected facts by kind)
CASES: dict[str, tuple[str, str, dict[str, int]]] = {
    "ffae836b-9420-4060-ac13-7745215f90ff": (
        "pi", "pi/pi-mono__before-compaction.jsonl",
        {"decision": 7, "artifact": 5, "recall": 4, "continuation": 4}),
    "ses_39b7f9e89ffe7J0WzLzYrUt4eW": (
        "opencode", "opencode/dark-factory__session__curious-sailor__ses_39b7f9e89ffe7J0WzLzYrUt4eW.json",
        {"decision": 7, "artifact": 3, "recall": 5, "continuation": 2}),
    "97b0ffde-ece9-4977-91cb-5c8cdeabdf3f": (
        "claude-code", "claude-code/M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl",
        {"decision": 3, "artifact": 2, "recall": 5, "continuation": 2}),
    "django__django-15104": (
        "mini-swe-agent", "mini-swe-agent/django__django-15104.traj.json",
        {"decision": 3, "artifact": 3, "recall": 5, "continuation": 2}),
}


@pytest.fixture(scope="module")
def gold() -> dict[str, list[Fact]]:
    if not GOLD.is_file():
        pytest.skip(f"gold facts file not found at {GOLD}")
    return load_gold(GOLD)


_loaded: dict[str, Transcript] = {}


def _transcript(tid: str, transcripts_dir: Path) -> Transcript:
    fmt, rel, _ = CASES[tid]
    if importlib.util.find_spec(FORMATS[fmt]) is None:
        pytest.skip(f"the {fmt} importer ({FORMATS[fmt]}) is not available yet")
    path = transcripts_dir / rel
    need_shared(path, "transcript")
    if tid not in _loaded:
        _loaded[tid] = next(read(path))
    t = _loaded[tid]
    assert t.id == tid, f"{rel} imports as {t.id!r}, the gold file says {tid!r}"
    return t


def test_gold_file_covers_exactly_the_annotated_transcripts(gold: dict[str, list[Fact]]) -> None:
    assert set(gold) == set(CASES)
    ids = [f.id for facts in gold.values() for f in facts]
    assert len(ids) == len(set(ids)), "gold fact ids must be unique"
    for facts in gold.values():
        assert 10 <= len(facts) <= 20
        for f in facts:
            assert f.source == "gold" and f.id.startswith("g-")
            assert 1 <= len(f.anchors) <= 3 and all(len(a) >= 4 for a in f.anchors)


@pytest.mark.parametrize("tid", list(CASES))
def test_counts_by_kind(tid: str, gold: dict[str, list[Fact]]) -> None:
    assert dict(Counter(f.kind for f in gold[tid])) == CASES[tid][2]


@pytest.mark.parametrize("tid", list(CASES))
def test_every_anchor_occurs(tid: str, gold: dict[str, list[Fact]], transcripts_dir: Path) -> None:
    t = _transcript(tid, transcripts_dir)
    texts = [normalize(part_match_text(p)) for m in t.messages for p in m.parts]
    missing = [(f.id, a) for f in gold[tid] for a in f.anchors if not any(a in x for x in texts)]
    assert not missing, f"anchors not found in {tid}: {missing}"
    index = FactIndex.build(t, gold[tid])
    unplaced = [f.id for f in index.facts if f.first_index < 0]
    assert not unplaced, f"facts without a first message: {unplaced}"
    # gold facts are established in the conversation itself, never first by a recorded summary
    summaries = {i for i, m in enumerate(t.messages) if m.meta.get("compaction")}
    assert not [f.id for f in index.facts if f.first_index in summaries]


@pytest.mark.parametrize("tid", list(CASES))
def test_enough_facts_are_needed_later(tid: str, gold: dict[str, list[Fact]], transcripts_dir: Path) -> None:
    t = _transcript(tid, transcripts_dir)
    index = FactIndex.build(t, gold[tid])
    needed = {f for ids in index.needs.values() for f in ids}
    gold_ids = {f.id for f in gold[tid]}
    assert needed <= gold_ids
    assert len(needed) >= MIN_NEEDED, f"only {sorted(needed)} are needed later in {tid}"
