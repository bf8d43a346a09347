"""Fidelity on the real transcripts: a row per tool-made compaction, the figures the note relies on."""

from __future__ import annotations

from pathlib import Path

import pytest

from compbench.data.formats import read_all
from compbench.data.recorded import segment
from compbench.validation.fidelity import fidelity

# claude-code's presets by version besides "current" (claude_code_versions.PRESET_VERSIONS)
CLAUDE_CODE = ("2.0", "2.1.21", "2.1.84", "2.1.92", "2.1.138", "2.1.191", "2.1.217", "2.1.223", "2.1.260", "2.1.299")


@pytest.fixture(scope="module")
def rows(transcripts_dir: Path) -> list:  # type: ignore[type-arg]
    folders = [transcripts_dir / d for d in ("claude-code", "codex", "opencode", "pi")]
    return fidelity(read_all(folders))


def test_a_row_per_recorded_compaction_and_preset(rows: list) -> None:  # type: ignore[type-arg]
    seed = [r for r in rows if r.preset == "seed"]
    assert sorted((r.tool, r.n) for r in seed) == [("claude-code", 1), ("claude-code", 1), ("codex", 1),
                                                    ("opencode", 1), ("pi", 1), ("pi", 2)]
    assert {r.preset for r in rows} == {"seed", "current", "0.77", "0.147", "1.3", "1.4", *CLAUDE_CODE}
    assert {r.tool for r in rows if r.preset in ("1.3", "1.4")} == {"opencode"}  # OpenCode's; its kilo preset is not
    assert {r.tool for r in rows if r.preset in ("0.77", "0.147")} == {"codex"}  # codex's own version presets
    assert {r.tool for r in rows if r.preset in CLAUDE_CODE} == {"claude-code"}


def test_auto_triggers_of_version_presets(rows: list) -> None:  # type: ignore[type-arg]
    by = {(r.tool, r.n, r.preset, r.real_tokens): r for r in rows}
    cc = by[("claude-code", 1, "2.0", 155_548)]
    assert cc.d_steps == 0 and cc.kept_jaccard == 1.0 and "the version this preset models" in cc.cause
    # 2.1's rule (167,000 on 200k) does not fit 2.0.76: it never reaches its threshold there
    assert by[("claude-code", 1, "current", 155_548)].d_steps is None
    # pi compacts after 163 calls, where pi's entry is: the seed in the after-hook of call 162 (0-based,
    # the message_end check), today's pi in the before-hook of call 163 (the prompt after the run's end);
    # the seed keeps exactly what the tool kept: it measures keepRecentTokens as the recording's pi did
    for preset in ("seed", "current"):
        assert (by[("pi", 2, preset, 185_014)].our_step, by[("pi", 2, preset, 185_014)].d_steps) == (163, 0)
    assert by[("pi", 2, "seed", 185_014)].kept_jaccard == 1.0
    manual = [r for r in rows if r.trigger == "manual"]
    assert manual and all(r.our_step is None and "manual" in r.cause for r in manual)


def test_codex_trigger_counts_earlier_encrypted_reasoning(rows: list) -> None:  # type: ignore[type-arg]
    """The 0.77 rollout compacted after a call that reported 210,652 tokens, not after the one before
    (201,114), against a 244,800 limit (272,000 * 9 / 10): only with the 39,108 tokens Codex estimates
    for the encrypted reasoning before the last user message (read from the file) do both hold:
    201,114 + 39,108 = 240,222 < 244,800 <= 249,760 = 210,652 + 39,108. Today's Codex also counts the
    5,335 tokens of the shell output after 201,114 and compacts one call earlier; the seed counts
    neither and never reaches its limit."""
    by = {(r.tool, r.preset): r for r in rows if r.tool == "codex"}
    assert (by["codex", "0.77"].real_step, by["codex", "0.77"].our_step, by["codex", "0.77"].d_steps) == (170, 170, 0)
    assert by["codex", "current"].d_steps == -1
    assert by["codex", "seed"].our_step is None and "never compacted" in by["codex", "seed"].cause
    # the remote compaction kept the same user messages Codex's local rebuild keeps
    assert by["codex", "0.77"].kept_jaccard == 1.0


def test_manual_compactions_are_run_where_the_user_asked(rows: list) -> None:  # type: ignore[type-arg]
    """A /compact has no trigger to compare, but what the strategy keeps and summarizes there is compared:
    Claude Code and seed (and 1.3) OpenCode keep nothing verbatim, as the tools did; 1.4 on OpenCode keeps a tail
    that OpenCode 1.2.5 (the recording) did not; the calibration columns do not depend on the strategy."""
    manual = {(r.tool, r.preset): r for r in rows if r.trigger.startswith("manual")}
    assert set(manual) == {("claude-code", "seed"), ("claude-code", "current"),
                           *(("claude-code", p) for p in CLAUDE_CODE), ("opencode", "seed"), ("opencode", "current"),
                           ("opencode", "1.3"), ("opencode", "1.4"), ("pi", "seed"), ("pi", "current")}
    assert all(r.kept_jaccard is not None and r.rebuilt_tokens and r.our_budget for r in manual.values())
    assert manual["claude-code", "seed"].kept_jaccard == manual["opencode", "seed"].kept_jaccard == 1.0
    assert manual["opencode", "current"].kept_jaccard == manual["opencode", "1.4"].kept_jaccard == 0.0
    assert manual["opencode", "1.3"].kept_jaccard == 1.0  # 1.3 kept no tail either
    assert "recorded by opencode 1.2.5; the preset models opencode 1.18.17 on" in manual["opencode", "current"].cause
    assert "recorded by opencode 1.2.5, the version this preset models" in manual["opencode", "seed"].cause
    assert manual["pi", "seed"].kept_jaccard == 1.0
    assert len({(r.transcript, r.n, r.counted_before) for r in rows}) == len({(r.transcript, r.n) for r in rows})


def test_pi_first_compaction_is_inferred_manual_from_its_threshold(rows: list) -> None:  # type: ignore[type-arg]
    """pi records no trigger. Its first compaction (tokensBefore 175,004) is below pi's own threshold for a
    200k window (200,000 - 16,384 = 183,616): pi could not have triggered it, the user did. The second one
    (185,014) is above it and stays an auto compaction whose trigger is compared."""
    first = [r for r in rows if r.tool == "pi" and r.n == 1]
    assert first and all(r.trigger == "manual (inferred)" and r.our_step is None and r.d_steps is None
                         and "183,616" in r.cause for r in first)
    second = [r for r in rows if r.tool == "pi" and r.n == 2]
    assert second and all(r.trigger == "unknown" and r.d_steps is not None for r in second)


def test_rows_say_which_window_and_why(rows: list) -> None:  # type: ignore[type-arg]
    """The window is the tool's: Claude Code's 200k default, Codex's recorded effective window / 95%."""
    by_tool = {tool: {(x.window, x.window_source) for x in rows if x.tool == tool} for tool in {r.tool for r in rows}}
    assert {w for w, _ in by_tool["claude-code"]} == {200_000}
    assert all("Claude Code default 200k" in src for _, src in by_tool["claude-code"])
    assert by_tool["codex"] == {(272_000, "recorded model_context_window 258,400 = 95% of 272,000")}
    assert {w for w, _ in by_tool["pi"]} == {200_000}


def test_segment_restarts_from_the_tools_state(transcripts_dir: Path) -> None:
    (t,) = read_all([transcripts_dir / "pi"])
    seg, _ = segment(t, 1)
    first = t.compactions[0]
    assert seg.messages[0].text == first.summary
    assert [m.id for m in seg.messages[1: 1 + len(first.kept_ids)]] == list(first.kept_ids)
    assert seg.compactions[0].tokens_before == 185_014


def test_calibrated_keeps_what_real_summaries_keep(transcripts_dir: Path) -> None:
    """On every real compaction with a readable summary (../shared), the calibrated summarizer keeps a
    share of the span's facts within 10 points of the real summary's on the median; the extractive copy
    keeps far more (it copies the anchors)."""
    import statistics

    from compbench.data.formats import read_all
    from compbench.validation.summary_rates import kept_by_summarizers

    shared = transcripts_dir.parent
    rows = [k for t in read_all([str(shared / "transcripts"), str(shared / "real-compactions")])
            for k in kept_by_summarizers(t) if k.facts]
    assert len(rows) >= 19
    real = statistics.median(k.real / k.facts for k in rows)
    assert abs(statistics.median((k.calibrated - k.real) / k.facts for k in rows)) <= 0.10
    assert abs(statistics.median(k.calibrated / k.facts for k in rows) - real) <= 0.10
    assert statistics.median(k.extractive / k.facts for k in rows) > real + 0.25


def test_cli_takes_several_folders_and_prints_the_window(transcripts_dir: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`compbench fidelity A B`: the rows of both, each with its window and source; a missing folder is
    one line and exit 2 (through the real entry point)."""
    import json

    from helpers import main_cli

    def run(*args: str) -> tuple[int, str, str]:
        return main_cli(capsys, monkeypatch, "fidelity", *args)

    code, out, _ = run(str(transcripts_dir / "pi"), str(transcripts_dir / "claude-code"), "--format", "json",
                       "--tokenizer", "chars4")
    assert code == 0
    records = json.loads(out)
    assert {r["tool"] for r in records} == {"pi", "claude-code"}
    assert all(r["window"] == 200_000 and r["window_source"] for r in records)
    code, out, err = run(str(transcripts_dir / "pi"), str(tmp_path / "nope"))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "nope" in err
