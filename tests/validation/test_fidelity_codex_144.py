"""Fidelity on real Codex 0.144 code-mode rollouts (../shared/incoming/codex-0.144: four gpt-5.6-sol sessions, five
automatic remote compactions, their reasoning redacted). Read in place, never copied; skipped without ../shared.

The trigger: ``current`` (their version's preset) on the window Codex recorded at each compaction (258,400, so
272,000 and a limit of 244,800; one session recorded 353,400 before it was resumed) with the reasoning stood in
(:mod:`compbench.run.missing_usage`). Re-acquisition: the reads inside ``exec`` scripts are seen, so what the agent
read again after each compaction is observed (it was 0 on all five when scripts were opaque)."""

from __future__ import annotations

import pytest
from conftest import SHARED, need_shared

from compbench.data.formats import read_all
from compbench.data.transcript import Message, Reasoning, Transcript
from compbench.validation.fidelity import Row, fidelity

INCOMING = SHARED / "incoming" / "codex-0.144"


@pytest.fixture(scope="module")
def logs() -> list[Transcript]:
    need_shared(INCOMING, "the Codex 0.144 rollouts")
    return list(read_all([INCOMING]))


@pytest.fixture(scope="module")
def rows(logs: list[Transcript]) -> list[Row]:
    return fidelity(logs, tokenizer="chars4")


def test_five_of_five_compactions_within_two_calls(rows: list[Row]) -> None:
    """019f53c2 is one call early: its exec output counted at its recorded item's size (the ``input_text`` list and
    metadata Codex serializes) puts the call before 36 tokens over 244,800, where the text alone left it 12 under."""
    own = {(r.transcript[:8], r.n): r.d_steps for r in rows if r.preset == "current"}
    assert own == {("019f5d29", 1): 0, ("019f53c2", 1): -1, ("019f5ccd", 1): 0, ("019f5ce9", 1): 0,
                   ("019f5ce9", 2): 0}
    assert all("the version this preset models" in r.cause for r in rows if r.preset == "current")


def test_019f5d29_lands_because_cumulative_reasoning_items_are_each_counted(
        logs: list[Transcript], monkeypatch: pytest.MonkeyPatch) -> None:
    """Its earlier turns hold three calls whose later reasoning items repeat the earlier items' summaries (858, 130
    and 822 reasoning tokens): stood in as an envelope each (a slice, not the reasoning so far), the count stays
    874 tokens under 244,800 where Codex compacted and reaches it 10 calls late."""
    from compbench.run import missing_usage

    def sliced(m: Message, reasoning: int) -> list[int]:
        n = sum(1 for p in m.parts if isinstance(p, Reasoning) and p.encrypted)
        return [missing_usage.blob_chars(reasoning)] + [missing_usage.blob_chars(0)] * (max(n, 1) - 1)

    (t,) = [t for t in logs if t.id.startswith("019f5d29")]
    calls = t.messages[: t.compactions[0].index]
    turn = max(i for i, m in enumerate(calls) if m.role == "user" and "address pr feedback" in m.text)
    moved = [i for i, m in enumerate(calls) if missing_usage.item_blobs(m, 100) != sliced(m, 100)]
    assert (len(moved), sum(i < turn for i in moved)) == (4, 3)  # three in the earlier turns, counted
    monkeypatch.setattr(missing_usage, "item_blobs", sliced)
    (row,) = [r for r in fidelity([t], tokenizer="chars4") if r.preset == "current"]
    assert row.d_steps == 10


def test_the_window_is_the_one_in_force_at_the_compactions(rows: list[Row]) -> None:
    assert {(r.transcript[:8], r.window, r.window_source) for r in rows if r.preset == "current"} == {
        ("019f5d29", 272_000, "recorded model_context_window 258,400 = 95% of 272,000"),
        ("019f53c2", 272_000, "recorded model_context_window 258,400 in force at its compactions = 95% of 272,000"),
        ("019f5ccd", 272_000, "recorded model_context_window 258,400 = 95% of 272,000"),
        ("019f5ce9", 272_000, "recorded model_context_window 258,400 = 95% of 272,000")}


def test_reads_inside_exec_scripts_are_observed_again_after_the_compactions(rows: list[Row]) -> None:
    """Where the agent read a file or searched again through a script after the compaction (019f5ce9's two), the
    re-read is observed; the other sessions went on to other work (their scripts re-read nothing they had)."""
    observed = {(r.transcript[:8], r.n): r.reacq_observed for r in rows if r.preset == "current"}
    assert {k for k, v in observed.items() if v} == {("019f5ce9", 1), ("019f5ce9", 2)}
    assert sum(observed.values()) > 1_000
    assert sum(1 for r in rows if r.preset == "current" and r.reacq_predicted) == 4


def test_every_exec_script_is_read_into_its_calls(logs: list[Transcript]) -> None:
    """858 tools.* calls in 850 scripts (counted on the raw files: one a ``tools.NAME(`` written), 409 of them
    exec_command, 405 with the command written as a literal."""
    assert sum(int(t.meta.get("exec_inner_calls", 0)) for t in logs) == 858
    assert all(not any("unknown type" in w for w in t.warnings) for t in logs)
