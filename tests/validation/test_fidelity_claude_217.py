"""Fidelity on a hand-made session of 2.1.217's shape: a /compact that keeps the last response verbatim
(``compactMetadata.preservedSegment`` / ``preservedMessages``). The preset of the recorded version keeps what the
tool kept; the presets before it keep nothing of it."""

from __future__ import annotations

from compbench.data.formats import read_all
from compbench.validation.fidelity import fidelity
from helpers import FIXTURES


def test_the_kept_segment_is_compared_at_the_versions_preset() -> None:
    (t,) = read_all([FIXTURES / "shapes" / "claude-2.1.217-preserved.jsonl"])
    assert t.compactions[0].kept_ids == ("p-a3",)  # preservedMessages.uuids; the stop hook's record is no message
    rows = {r.preset: r for r in fidelity([t], tokenizer="chars4")}
    own = rows["2.1.217"]
    assert own.kept_jaccard == 1.0 and "recorded by claude-code 2.1.217, the version this preset models" in own.cause
    assert own.trigger == "manual" and own.real_step == 3
    for preset in ("current", "2.1.138", "2.1.21", "2.0", "seed"):
        assert rows[preset].kept_jaccard == 0.0, preset
    assert "the preset models claude-code 2.1.196-2.1.216" in rows["current"].cause
