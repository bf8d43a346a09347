"""What ``tune`` prints beside compbench's ``[tool.compbench.strategy.NAME]`` block (issue 40, item 9): the same change
as the tool's users write it, where the tuned parameters are its settings (``Setting.paste``), and the tuned
parameters it has no setting for; and one notation for "not significant", the one compare's tables use."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from compbench.cli import cli
from compbench.cli.compare_view import MARKS
from compbench.decide.tune import changed, tool_lines

EXAMPLE = "example-keep-last"  # the example strategy: "my tool", whose trigger is MYTOOL_COMPACT_AT


def test_the_changed_parameters_and_their_lines_in_the_tool() -> None:
    assert changed(f"{EXAMPLE}:keep=3,trigger=20000", f"{EXAMPLE}:keep=3") == {"trigger": "20000"}
    assert changed(f"{EXAMPLE}:preset=1.2,trigger=20000", f"{EXAMPLE}:preset=1.2") == {"trigger": "20000"}
    assert changed(EXAMPLE, EXAMPLE) == {}
    assert tool_lines(f"{EXAMPLE}:trigger=20000", EXAMPLE) == (
        "my tool", [("MYTOOL_COMPACT_AT", "environment", "export MYTOOL_COMPACT_AT=20000")], [])
    assert tool_lines(f"{EXAMPLE}:keep=3,trigger=20000", EXAMPLE)[2] == ["keep"]
    assert tool_lines(f"{EXAMPLE}:keep=3", EXAMPLE) == ("my tool", [], ["keep"])
    name, lines, _ = tool_lines("pi:reserve_tokens=50000", "pi")
    assert name == "pi" and lines == [("compaction.reserveTokens", "~/.pi/agent/settings.json",
                                       '{"compaction": {"reserveTokens": 50000}}')]
    assert tool_lines("truncate:reserve_output=100", "truncate") == ("", [], [])  # no tool reproduced


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """A sweep of the example's trigger (and keep) on sessions its default (40,000 tokens) never reaches."""
    from compbench.data.formats.native import write
    from compbench.data.synth import generate

    root = tmp_path_factory.mktemp("tune-view")
    write(generate(5, seed=3, turns=30, log_lines=30, code_lines=40), root / "d.jsonl")
    r = CliRunner().invoke(cli, ["tune", str(root / "d.jsonl"), "--strategy", EXAMPLE, "--grid",
                                 "trigger=3000,40000", "--grid", "keep=3,4", "--objective", "max effective_savings",
                                 "--context-window", "8000", "--tokenizer", "chars4", "--token-correction", "none",
                                 "--out", str(root / "t"), "--resamples", "300"])
    assert r.exit_code == 0, r.output
    return r.stdout, root / "t"


def test_tune_prints_the_tools_own_line_beside_compbenchs_block(tuned: tuple[str, Path]) -> None:
    out = tuned[0].splitlines()
    assert f"  --strategy '{EXAMPLE}:keep=3,trigger=3000'" in out
    block = out.index(f"[tool.compbench.strategy.{EXAMPLE}]")
    assert out[block + 1:block + 3] == ["keep = 3", "trigger = 3000"]
    tool = out.index("in my tool itself (the same change, as its users set it):")
    assert tool == block + 4
    assert out[tool + 1:tool + 4] == [
        "# MYTOOL_COMPACT_AT: environment", "export MYTOOL_COMPACT_AT=3000",
        "# not a setting of my tool: keep (compbench's block above sets it; the tool keeps its own value)"]


def test_tune_and_compare_say_not_significant_alike(tuned: tuple[str, Path]) -> None:
    out, run = tuned
    table = [x for x in out.splitlines() if "(the default)" in x or " pp [" in x]
    assert table and all("~" not in x for x in table)
    words = {w for x in table for w in MARKS if f"{w} " in x}
    assert words and words <= set(MARKS)
    r = CliRunner().invoke(cli, ["compare", str(run), "--wide", "--resamples", "300"])
    assert r.exit_code == 0, r.output
    said = {w for w in MARKS if f" {w} " in r.stdout}
    assert said & words and " ~ " not in r.stdout
