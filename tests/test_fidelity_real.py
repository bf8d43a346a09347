"""Fidelity on today's tools (../shared/real-compactions: Claude Code 2.1.x, Codex 0.14x): every auto
compaction matched to the step by its version's preset, the window each row used, and what the logs
leave out. The trigger decisions rest on recorded usage and the tools' own estimates, not on our
tokenizer, so the cheap chars4 counter changes none of them."""

from __future__ import annotations

from pathlib import Path

from compbench.fidelity import segment
from compbench.formats import read_all


def test_segment_index_skips_the_tools_own_records(real_compactions_dir: Path) -> None:
    """A second compaction's position in its segment: Claude Code's summary record of the first is dropped
    from the tail, so it is not counted either (it was: the comparison then ran one message late)."""
    (t,) = read_all([real_compactions_dir / "claude-code" /
                     "entireio__cli__entire-adff0201aecb-0__9d7a9d52-7eb4-427d-847d-ee5451884f3d.jsonl"])
    seg, _ = segment(t, 1)
    rc = seg.compactions[0]
    before = seg.messages[rc.index - 1]
    assert before.role == "assistant" and before.usage is not None and before.usage.input == 166_190
    assert t.messages[t.compactions[1].index - 1].id == before.id  # the last message before the tool's summary
