"""``fidelity`` ends on one line per tool: the share of the real automatic compactions whose trigger its own strategy
fires within two calls, the kept-set agreement and the re-acquisition figures; it shows its progress as ``run`` does."""

from __future__ import annotations

from typing import Any

from click.testing import CliRunner

from compbench.cli import cli
from compbench.cli.fidelity import per_tool
from compbench.validation.fidelity import Row


def row(n: int, d_steps: int | None, *, trigger: str = "auto", cause: str = "", kept: float | None = 1.0,
        tool: str = "claude-code", preset: str = "current", reacq: tuple[int, int] | None = (10, 20)) -> Row:
    return Row(tool, "t1", n, trigger, preset, 10, None if d_steps is None else 10 + d_steps, d_steps, 1_000, 1_000,
               0, kept, 1, 1, 1, 1, "–", "–", 1, 1, 0.0, cause,
               reacq_predicted=reacq[0] if reacq else None, reacq_observed=reacq[1] if reacq else None)


def line(rows: list[Row], transcripts: Any = ()) -> str:
    out = per_tool(rows, transcripts)
    assert out[0].startswith("by tool:")
    return "\n".join(out[1:])


def test_a_trigger_agrees_within_two_calls_either_way_and_one_never_fired_disagrees() -> None:
    rows = [row(1, -2), row(2, 2), row(3, 0), row(4, 3), row(5, -3), row(6, None, cause="strategy never compacted")]
    assert "trigger within 2 calls 3/6 (50%)" in line(rows)


def test_compactions_the_log_cannot_place_and_manual_ones_are_not_counted() -> None:
    rows = [row(1, 1), row(2, None, cause="no per-call usage in the log: trigger not compared"),
            row(3, None, trigger="manual"), row(4, None, trigger="manual (inferred)")]
    text = line(rows)
    assert ("4 real compactions (2 automatic): trigger within 2 calls 1/1 (100%) (1 without the usage to place it)"
            in text)
    only_manual = line([row(1, None, trigger="manual")])
    assert "1 real compaction (0 automatic): no automatic one to place" in only_manual


def test_kept_set_and_reacquisition_figures_per_tool() -> None:
    rows = [row(1, 0, kept=0.2, reacq=(100, 50)), row(2, 0, kept=0.6, reacq=(300, 150)), row(3, 0, kept=None),
            row(1, 0, tool="codex", kept=None, reacq=None)]
    text = line(rows[:3]) + "\n" + line([row(1, 0, kept=None, reacq=None, tool="codex")])
    assert "kept set 0.40 (2)" in text and "re-acquisition 410 predicted / 220 observed (x1.86)" in text
    assert "codex: 1 real compaction" in text and "kept set –" in text and "re-acquisition –" in text


def test_each_real_compaction_counts_once_at_the_logs_own_preset() -> None:
    """A log of Claude Code 2.0.1 replays at the ``2.0`` preset: that row counts, not the other presets'."""
    from compbench.data.transcript import Transcript

    t = Transcript("t1", "claude-code", (), {"tool_version": "2.0.1"})
    rows = [row(1, 9, preset="seed"), row(1, 0, preset="2.0"), row(1, 9, preset="current")]
    assert "1 real compaction (1 automatic): trigger within 2 calls 1/1" in line(rows, [t])
    assert "trigger within 2 calls 0/1" in line([rows[0], rows[2]], [t])  # no row at its preset: the first


def test_fidelity_shows_progress_and_ends_on_the_tools_lines() -> None:
    r = CliRunner().invoke(cli, ["fidelity"])
    assert r.exit_code == 0, r.output
    assert "fidelity: compared 14/14 transcripts (100%)" in r.stderr
    assert "fidelity: checked the calibrated summarizer on 14/14 transcripts (100%)" in r.stderr
    tail = r.stdout.rstrip("\n").split("by tool:")[-1]
    assert "claude-code:" in tail and "pi:" in tail and "opencode:" in tail
    assert max(len(x) for x in r.stdout.splitlines()) <= 160


def test_each_tool_line_names_the_newest_version_its_strategy_models() -> None:
    from compbench.cli.fidelity import newest
    from compbench.sdk.registry import get

    text = line([row(1, 0)])
    tool = get("claude-code").tool
    assert tool is not None and tool.newest
    assert f"; newest modelled: claude-code preset {tool.newest}" in text
    assert newest("no-such-tool") == ""


def test_a_compaction_of_unknown_trigger_counts_as_automatic_as_in_a_run() -> None:
    """A log that does not say who asked (pi's) and was not found below the tool's threshold (that would read
    "manual (inferred)"): automatic, as compbench.run.trigger counts it."""
    text = line([row(1, 0, trigger="unknown"), row(2, None, trigger="manual (inferred)")])
    assert "2 real compactions (1 automatic): trigger within 2 calls 1/1 (100%)" in text


def test_agreement_per_preset_names_the_log_versions_it_covers() -> None:
    """Trigger agreement per tool *and version*: a newer version that misses shows under its own preset."""
    from compbench.data.transcript import Transcript

    ts = [Transcript("a", "codex", (), {"tool_version": "0.142.5"}),
          Transcript("b", "codex", (), {"tool_version": "0.144.1"}),
          Transcript("c", "codex", (), {"tool_version": "0.144.3"})]
    rows = [Row("codex", "a", 1, "auto", "0.142", 10, 10, 0, 1, 1, 0, None, 1, 1, 1, 1, "–", "–", 1, 1, 0.0, ""),
            Row("codex", "b", 1, "auto", "0.144", 10, 20, 10, 1, 1, 0, None, 1, 1, 1, 1, "–", "–", 1, 1, 0.0, ""),
            Row("codex", "c", 1, "auto", "0.144", 10, 11, 1, 1, 1, 0, None, 1, 1, 1, 1, "–", "–", 1, 1, 0.0, "")]
    text = line(rows, ts)
    assert "trigger within 2 calls 2/3 (67%)" in text
    first, second = text.index("preset 0.142 (logs 0.142.5)"), text.index("preset 0.144 (logs 0.144.1–0.144.3)")
    assert first < second
    assert "preset 0.144 (logs 0.144.1–0.144.3): 2 real, 2 automatic: trigger within 2 calls 1/2 (50%)" in text
    assert "preset 0.142 (logs 0.142.5): 1 real, 1 automatic: trigger within 2 calls 1/1 (100%)" in text


def test_one_preset_and_one_version_adds_no_line() -> None:
    assert "    preset" not in line([row(1, 0), row(2, 1)])
