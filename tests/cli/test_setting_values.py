"""A value of a tool's setting that the tool ignores is refused before a run (issue 40, item 9): one line naming
the range the tool takes, exit 2, nothing written; one it clamps, or that turns the feature off, is a warning
and the run goes on. Ranges come from each strategy's ``Setting(accepts=Accepts(...))``; the bounds every
configuration keeps (``param(lo=, hi=)``: a negative window) are refused where the spec is resolved."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from compbench.cli import cli
from compbench.cli.run import setting_values
from compbench.errors import UsageError
from compbench.sdk.tools import Accepts

PCT = "claude-code:autocompact_pct_override"
WINDOW = "claude-code:auto_compact_window"


@pytest.mark.parametrize(("value", "taken"), [(-0.5, False), (0, True), (0.5, True), (100, True), (100.5, False),
                                               (150, False)])
def test_claude_codes_override_is_taken_in_0_to_100_and_refused_outside(value: float, taken: bool) -> None:
    spec = f"{PCT}={value:g}"
    if taken:
        assert setting_values([spec]) == []
        return
    with pytest.raises(UsageError) as e:
        setting_values([spec])
    assert str(e.value) == (f"{spec}: CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (claude-code's autocompact_pct_override) "
                            "takes (0, 100], 0 leaves it unset; Claude Code ignores any other value, so "
                            f"{value:g} would replay as if it were unset")


@pytest.mark.parametrize(("value", "warned"), [(0, False), (99_999, True), (100_000, False), (1_000_000, False),
                                                (1_000_001, True)])
def test_a_window_claude_code_clamps_is_a_warning(value: int, warned: bool) -> None:
    said = setting_values([f"{WINDOW}={value}"])
    assert bool(said) == warned
    if warned:
        assert said[0].startswith(f"{WINDOW}={value}: CLAUDE_CODE_AUTO_COMPACT_WINDOW (claude-code's "
                                  "auto_compact_window) takes [100,000, 1,000,000], 0 leaves it unset; Claude Code "
                                  "2.1.221 and later clamp it into that range")


def test_a_strategy_without_a_tool_or_a_setting_without_a_range_is_not_checked() -> None:
    assert setting_values(["truncate", "codex:auto_compact_token_limit=5", "claude-code", "none"]) == []


def test_the_range_in_words_and_at_its_edges() -> None:
    a = Accepts(0, 1, open_lo=True, open_hi=True)
    assert a.text() == "(0, 1)" and not a.holds(0) and a.holds(0.001) and a.holds(0.999) and not a.holds(1)
    assert Accepts(20).text() == ">= 20" and Accepts(20).holds(20) and not Accepts(20).holds(19)
    assert Accepts(hi=5, open_hi=True).text() == "< 5" and Accepts().text() == "any value"
    assert Accepts(100_000, 1_000_000).text() == "[100,000, 1,000,000]"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from compbench.cli import main; main()", *args],
                          capture_output=True, text=True)


def test_run_refuses_before_any_work_and_a_negative_window_too(tmp_path: Path) -> None:
    out = tmp_path / "run"
    p = _cli("run", "--strategy", f"{PCT}=150", "--out", str(out), "--quiet")
    assert p.returncode == 2 and not out.exists()
    assert p.stderr.strip().splitlines() == [
        f"error: {PCT}=150: CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (claude-code's autocompact_pct_override) takes (0, 100], "
        "0 leaves it unset; Claude Code ignores any other value, so 150 would replay as if it were unset"]
    p = _cli("run", "--strategy", f"{WINDOW}=-5", "--out", str(out), "--quiet")
    assert p.returncode == 2 and "auto_compact_window=-5 is negative" in p.stderr and "expected >= 0" in p.stderr
    p = _cli("run", "--context-window", "-5", "--out", str(out), "--quiet")
    assert p.returncode == 2 and "-5 is not in the range x>=1" in p.stderr and not out.exists()


def test_a_clamped_value_warns_and_the_run_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["run", "--strategy", f"{WINDOW}=50000", "--no-settings", "--where",
                                 "id=97b0ffde*", "--out", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    assert f"warning: {WINDOW}=50000: CLAUDE_CODE_AUTO_COMPACT_WINDOW" in r.output
    assert (out / "results.parquet").exists()


def test_tune_refuses_a_grid_value_the_tool_ignores(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["tune", "--strategy", "claude-code", "--grid", "autocompact_pct_override=60,150",
                                 "--out", str(tmp_path / "t")])
    assert r.exit_code != 0 and isinstance(r.exception, UsageError) and not (tmp_path / "t").exists()
    assert "claude-code:autocompact_pct_override=150: CLAUDE_AUTOCOMPACT_PCT_OVERRIDE" in str(r.exception)
