"""The gate says what it does not check (issue 31): a strategy with calls over the window passes its thresholds
with a warning line, --fail-on-overflow (or the gate table's fail-on-overflow) fails it, and the reference none,
left out unless named, is said to be left out."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from compbench.cli import cli
from compbench.data.synth import generate
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits
from helpers import register_keep_last

NEVER = "test-keep-last:trigger=100000000"  # never acts: every call past the window is refused
WITHIN = "test-keep-last:trigger=1500"  # compacts well before the window


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    register_keep_last()
    out = tmp_path_factory.mktemp("gate") / "run"
    spec = RunSpec(strategies=("none", WITHIN, NEVER), limits=ModelLimits(4_000, 500),
                   tokenizer="chars4", token_correction="none")
    write_run(out, spec, "synth", list(generate(4, seed=3, turns=30, log_lines=30, code_lines=40)))
    return out


def gate(*args: object, cwd: Path | None = None) -> tuple[int, str]:
    extra = ["--config", str(cwd)] if cwd else []
    # the run's 4 transcripts are all there is: held to 4, not the default 5 (tests/decide/test_gate_selection.py)
    r = CliRunner().invoke(cli, ["gate", *(str(a) for a in args), *extra, "--resamples", "300",
                                 "--min-transcripts", "4"])
    if r.exception and not isinstance(r.exception, SystemExit):
        return 2, str(r.exception)
    return r.exit_code, r.output


def test_the_run_has_one_strategy_over_the_window_and_one_within(run: Path) -> None:
    r = pd.read_parquet(run / "results.parquet")
    over = r.groupby("strategy")["overflows"].sum()
    assert over[NEVER] > 0 and over[WITHIN] == 0 and over["none"] == over[NEVER]


def test_calls_over_the_window_are_said_and_none_is_said_to_be_left_out(run: Path, tmp_path: Path) -> None:
    code, out = gate(run, "--min", "needed_recall=0", cwd=tmp_path)
    assert code == 0, out
    calls = int(pd.read_parquet(run / "results.parquet").query("strategy == @NEVER")["overflows"].sum())
    warning = next(x for x in out.splitlines() if x.startswith("warning:"))
    assert f"{NEVER} has {calls:,} calls over the window" in warning and "--fail-on-overflow" in warning
    assert not any(x.startswith(f"warning: {WITHIN} ") for x in out.splitlines())  # within the window: quiet
    assert "note: not gated: none (the reference every saving is measured against); name one with --strategy" in out
    # named, none is gated (and warned about like any other): no note that it is left out
    code, out = gate(run, "--strategy", "none", "--max", "overflows=100000", cwd=tmp_path)
    assert "not gated" not in out and "warning: none has" in out


def test_fail_on_overflow_fails_exactly_the_strategies_with_a_call_over_the_window(run: Path, tmp_path: Path) -> None:
    code, out = gate(run, "--fail-on-overflow", cwd=tmp_path)  # a gate of its own, no threshold needed
    assert code == 1, out
    assert f"FAIL {NEVER}: " in out and "calls over the window on 4 transcripts" in out
    assert f"PASS {WITHIN}: no call over the window" in out and "warning:" not in out
    code, out = gate(run, "--strategy", WITHIN, "--fail-on-overflow", cwd=tmp_path)
    assert code == 0 and "1 passed, 0 failed" in out
    # the gate table turns it on; the flag's absence keeps the file's value
    (tmp_path / "compbench.toml").write_text("[gate]\nfail-on-overflow = true\n")
    code, out = gate(run, "--min", "needed_recall=0", cwd=tmp_path)
    assert code == 1 and f"FAIL {NEVER}: " in out
    (tmp_path / "compbench.toml").write_text('[gate]\nfail-on-overflow = "yes"\n')
    code, out = gate(run, "--min", "needed_recall=0", cwd=tmp_path)
    assert code == 2 and "'fail-on-overflow' must be true or false" in out
