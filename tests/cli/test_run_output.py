"""Each friction a new user met (issue 18), and the behaviour that replaces it."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from compbench.cli import cli
from compbench.data.synth import generate
from compbench.data.transcript import Transcript
from compbench.errors import UsageError
from helpers import register_keep_last

CLI = [sys.executable, "-c", "from compbench.cli import main; main()"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("data") / "synth"
    r = CliRunner().invoke(cli, ["datasets", "synth", "--n", "24", "--turns", "16", "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from compbench.run.spec import RunSpec
    from compbench.run.write import write_run
    from compbench.sdk.session import ModelLimits

    register_keep_last()
    root = tmp_path_factory.mktemp("runs")
    data = list(generate(6, seed=3, turns=30, log_lines=30, code_lines=40))
    for name, keep in (("a", 6), ("b", 2)):
        spec = RunSpec(strategies=("none", f"test-keep-last:keep={keep}"), limits=ModelLimits(8_000, 1_000),
                       tokenizer="chars4")
        write_run(root / name, spec, "synth", data)
    return root / "a", root / "b"


# --- run: progress with a total and the time left, also in a log -------------------------------------------

def test_progress_in_a_log_has_the_total_and_the_time_left() -> None:
    from compbench.progress import Progress

    now = [0.0]
    log = io.StringIO()
    p = Progress(log, total=10, done=2, tty=False, every=5.0, clock=lambda: now[0])
    for _ in range(8):
        now[0] += 2.0
        p.tick("t")
    p.close()
    lines = log.getvalue().splitlines()
    assert lines[0].startswith("replayed 5/10 transcripts (50%) in 6s, about 10s left")  # 3 in 6 s: 5 left
    assert lines[-1].startswith("replayed 10/10 transcripts (100%) in 16s")
    assert all("\r" not in line for line in lines)


def test_run_logs_progress_when_stderr_is_a_file(dataset: Path, tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    with log.open("w") as err:
        p = subprocess.run([*CLI, "run", str(dataset), "--strategy", "none", "--strategy", "truncate",
                            "--context-window", "3000", "--tokenizer", "chars4", "--out", str(tmp_path / "run")],
                           stdout=subprocess.DEVNULL, stderr=err, env={**os.environ, "COMPBENCH_PROGRESS_SECONDS": "0"},
                           timeout=300)
    assert p.returncode == 0
    text = log.read_text()
    assert "replayed 1/24 transcripts" in text and "left" in text and "replayed 24/24 transcripts (100%)" in text


# --- run --resume: options from the run, differences named ------------------------------------------------

def _interrupted(dataset: Path, out: Path) -> None:
    """A run started from the CLI's spec and stopped after its first committed batch."""
    from compbench.cli.options import spec_of
    from compbench.data.importing import iter_transcripts
    from compbench.run.write import write_run

    replay = {"summarizer": "calibrated", "model": None, "context_window": 3000, "max_output": None,
              "tokenizer": "chars4", "message_overhead": 4, "token_correction": "auto", "system_tokens": None,
              "cache_ttl": "5m", "price_model": None, "prices_file": None, "api_base": None, "api_key": None,
              "cache_dir": None}
    path = str(dataset)
    spec = spec_of(("none", "truncate"), replay, path)

    def stop_after(n: int) -> Iterator[Transcript]:
        for k, t in enumerate(iter_transcripts(path)):
            if k == n:
                raise RuntimeError("interrupted")
            yield t

    with pytest.raises(RuntimeError):
        write_run(out, spec, path, stop_after(20))
    assert (out.with_name(out.name + ".partial") / "batches" / "000000.json").exists()


def test_resume_takes_the_runs_options_and_names_a_different_one(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _interrupted(dataset, out)
    bad = subprocess.run([*CLI, "run", "--resume", str(out), "--context-window", "9999", "--tokenizer", "o200k_base"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "--context-window 3000 in the run, 9999 given" in bad.stderr
    assert "--tokenizer chars4 in the run, o200k_base given" in bad.stderr
    ok = subprocess.run([*CLI, "run", "--resume", str(out), "--workers", "2", "--context-window", "3000"],
                        capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert "replayed 24/24 transcripts (100%)" in ok.stderr  # the total counts what was committed before
    r = pd.read_parquet(out / "results.parquet")
    assert len(r) == 48 and set(r["strategy"]) == {"none", "truncate"}


# --- compare two runs: exact labels, the unmatched listed, units of the single-run tables ----------------

def test_compare_two_runs_pairs_exact_labels_and_lists_the_rest(runs: tuple[Path, Path]) -> None:
    a, b = runs
    res = CliRunner().invoke(cli, ["compare", str(a), str(b), "--resamples", "300"])
    assert res.exit_code == 0, res.output
    assert "only in A" in res.output and "test-keep-last:keep=6" in res.output
    assert "only in B" in res.output and "test-keep-last:keep=2" in res.output
    data = json.loads(CliRunner().invoke(cli, ["compare", str(a), str(b), "--format", "json",
                                               "--resamples", "300"]).output)
    assert list(data["strategies"]) == ["none"]
    assert data["only_in_a"] == ["test-keep-last:keep=6"] and data["only_in_b"] == ["test-keep-last:keep=2"]
    paired = json.loads(CliRunner().invoke(cli, ["compare", str(a), str(b), "--format", "json", "--resamples", "300",
                                                 "--pair", "test-keep-last:keep=6", "test-keep-last:keep=2"]).output)
    assert "test-keep-last:keep=6 → test-keep-last:keep=2" in paired["strategies"]
    assert paired["only_in_a"] == [] and paired["only_in_b"] == []


def test_differences_are_percentage_points_and_never_negative_zero(runs: tuple[Path, Path]) -> None:
    from compbench.decide.compare import fmt_diff, signed
    from compbench.decide.metrics import BY_NAME
    from compbench.decide.stats import Estimate

    assert signed(-0.00001, 1) == "0.0" and signed(-0.04, 1) == "0.0" and signed(0.06, 1) == "+0.1"
    assert fmt_diff(Estimate(0.0123, 0.01, 0.015, 50), BY_NAME["needed_recall"]) == "+1.2 pp [+1.0, +1.5]"
    assert fmt_diff(Estimate(-0.0, -0.0, 0.0, 50), BY_NAME["compactions"]) == "0.00 [0.00, 0.00]"
    a, b = runs
    out = CliRunner().invoke(cli, ["compare", str(a), str(b), "--resamples", "300", "--pair",
                                   "test-keep-last:keep=6", "test-keep-last:keep=2"]).output
    assert "-0.0" not in out and " pp " in out and "0.0000" not in out
    # none against none: no transcript contributes to a saving's difference, so it has no figure
    assert "none" in out and "– (n=0)" in out
    single = CliRunner().invoke(cli, ["compare", str(a), "--wide", "--resamples", "300"]).output
    assert "Δ net savings vs" in single and " pp [" in single and "-0.0" not in single


# --- one metric vocabulary -----------------------------------------------------------------------------

def test_one_metric_vocabulary_with_the_old_names_as_aliases(runs: tuple[Path, Path]) -> None:
    from compbench.decide.gate import parse_thresholds
    from compbench.decide.metrics import metric
    from compbench.decide.tune import parse_objective

    a, _ = runs
    assert metric("recall").name == "needed_recall" and metric("retention_at_compaction").name == "retention"
    assert parse_thresholds(["recall=0.5"], "--min") == {"needed_recall": 0.5}
    obj = parse_objective("max net_savings s.t. recall >= 0.9")
    assert obj.constraints == (("needed_recall", ">=", 0.9),)
    gate = CliRunner().invoke(cli, ["gate", str(a), "--min", "recall=0.01", "--resamples", "300"])
    assert gate.exit_code == 0 and "needed_recall =" in gate.output
    cmp = CliRunner().invoke(cli, ["compare", str(a), "--metric", "recall", "--resamples", "300"])
    assert cmp.exit_code == 0 and "needed-fact recall" in cmp.output
    with pytest.raises(UsageError, match="did you mean 'needed_recall'"):
        metric("needed_recal")


# --- tune ----------------------------------------------------------------------------------------------

def test_tune_prints_enough_digits_to_decide() -> None:
    from compbench.decide.tune import decisive

    assert decisive(0.8998, 0.9, True) == "89.98%"  # never 90.0% beside a constraint it fails
    assert decisive(0.90004, 0.9, True) == "90.004%"
    assert decisive(0.9, 0.9, True) == "90.0%" and decisive(0.5, 0.9, True) == "50.0%"


def test_a_repeated_grid_key_is_an_error() -> None:
    from compbench.decide.tune import grid_specs

    register_keep_last()
    with pytest.raises(UsageError, match="--grid keep is given twice"):
        grid_specs("test-keep-last", ["keep=2", "keep=4"])


def test_a_grid_whose_configurations_are_identical_is_flagged() -> None:
    from compbench.decide.flags import flag_details, identical_configurations

    rows = [{"transcript_id": t, "strategy": s, "name": "x", "steps": 10, "compactions": 1, "prunes": 0,
             "pruned_parts": 0, "overflows": 0, "input_tokens": 100, "output_tokens": 5, "summarizer_input_tokens": 0,
             "summarizer_output_tokens": 0, "needs_present": 3, "cost_usd": 0.1, "failed_compactions": 0,
             "first_action_step": 2} for s in ("x:a=1", "x:a=2") for t in ("t1", "t2")]
    df = pd.DataFrame(rows)
    assert identical_configurations(df) == [["x:a=1", "x:a=2"]]
    assert [f.kind for f in flag_details(df)["x:a=2"]] == ["identical"]


# --- rankings: calls over the window count against a strategy everywhere ------------------------------

def test_overflows_rank_below_and_degenerate_is_flagged() -> None:
    from compbench.decide.ranking import frontier, order, standings

    def row(t: str, s: str, overflows: int, compactions: int, acted: int) -> dict[str, object]:
        return {"transcript_id": t, "strategy": s, "name": s, "steps": 10, "compactions": compactions, "prunes": 0,
                "overflows": overflows, "overflows_before_action": overflows if acted < 0 else 0,
                "failed_compactions": 0, "first_action_step": acted}

    df = pd.DataFrame([row(t, s, o, c, a) for t in ("t1", "t2") for s, o, c, a in (
        ("lossy", 0, 2, 3), ("never", 4, 0, -1), ("every", 0, 9, 0))])
    st = standings(df)
    assert (st["lossy"].tier_name, st["never"].tier_name, st["every"].tier_name) == (
        "sound", "refused calls", "degenerate")
    score = {"lossy": 0.3, "never": 0.9, "every": 0.95}  # the overflowing and the degenerate score best...
    assert order(score, st, score.__getitem__) == ["lossy", "every", "never"]  # ...and rank below
    points = {"lossy": (0.3, 0.7), "never": (0.0, 1.0), "every": (0.9, 0.5)}
    assert frontier(points, st) == ["lossy"]
    from compbench.decide.flags import flag_details

    kinds = {s: [f.kind for f in fs] for s, fs in flag_details(df).items()}
    assert kinds["never"] == ["never_acted", "beyond_window"] and kinds["every"] == ["degenerate"]


# --- columns, help, judge, calibration -----------------------------------------------------------------

def test_columns_never_run_together_above_a_billion() -> None:
    from compbench.cli.datasets import TABLE, format_table

    row = {k: 1_234_567_890_123 for k, _, _ in TABLE} | {"id": "t" * 60, "source": "claude-code"}
    lines = format_table([row, row], "o200k_base")
    cells = lines[1].split()
    assert len(cells) == len(TABLE) and cells[2] == "1,234,567,890,123"
    assert "  " in lines[1] and cells[0] == "t" * 60  # an id is never clipped (tests/cli/test_datasets.py)


def test_help_is_complete_lists_metrics_and_examples() -> None:
    from compbench.cli.tune import tune
    from compbench.decide.metrics import METRICS

    top = CliRunner().invoke(cli, ["--help"]).output
    assert "..." not in top.split("Commands:")[1] and "Start here" in top
    for command in ("compare", "gate", "tune", "report"):
        text = CliRunner().invoke(cli, [command, "--help"]).output
        assert "Examples:" in text and all(m.name in text for m in METRICS), command
    listing = CliRunner().invoke(cli, ["datasets", "--help"]).output.split("Commands:")[1]
    assert "..." not in listing and "validate" in listing  # no short help cut off with an ellipsis
    assert all(p.help for p in tune.params if not p.name == "dataset" and hasattr(p, "help"))


def test_judge_without_an_api_key_is_one_line_and_exit_2(runs: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = runs
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}  # no key of any provider
    p = subprocess.run([*CLI, "judge", str(a), "--agent", "litellm:gpt-4o-mini"], capture_output=True, text=True,
                       env=env, timeout=300)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("error: no API key for gpt-4o-mini")
    assert not (a / "judged.parquet").exists()


def test_calibrated_overhead_is_what_system_tokens_auto_uses() -> None:
    from compbench.cli.datasets import format_calibration
    from compbench.measure.token_accuracy import Calibration, CalibrationRow, CorrectionRow, OverheadRow, Spread

    z = Spread(0.01, 0.02)
    cal = Calibration([CalibrationRow("o200k_base", "pi", 10, 30_500.0, 0.01, 0.02, 1)],
                      [CorrectionRow("pi", "claude", "claude x1.235", 1, 10, 0.05, 0.1, 0.01, 0.02, 30_400)],
                      [OverheadRow("pi", 1, 10, 30_122, 1_011, z, z, z, z, None, None, ("s: poor",))])
    text = "\n".join(format_calibration(cal))
    assert "--system-tokens auto" in text and "30,122" in text and "1.011" in text and "! s: poor" in text
    run_help = " ".join(CliRunner().invoke(cli, ["run", "--help"]).output.split())
    assert "[default: auto]" in run_help and "--calibrate" in run_help


# --- empty sessions: left out of a run unless asked, and said ----------------------------------------------

def test_a_run_leaves_out_sessions_with_no_reply_unless_asked_and_resume_keeps_the_choice(tmp_path: Path) -> None:
    from compbench.data.formats.native import write
    from compbench.data.transcript import Message, Text

    synth = list(generate(3, seed=5, turns=6))
    empty = [Transcript(f"empty-{k}", "compbench", (Message(f"u{k}", "user", (Text("hello?"),)),)) for k in range(2)]
    raw = tmp_path / "mixed.jsonl"
    write([synth[0], *empty, *synth[1:]], raw)
    base = ["run", str(raw), "--strategy", "none", "--tokenizer", "chars4", "--context-window", "4000", "--quiet"]
    left = subprocess.run([*CLI, *base, "--out", str(tmp_path / "left")], capture_output=True, text=True, timeout=300)
    assert left.returncode == 0, left.stderr
    assert "warning: left out 2 empty sessions (no reply: nothing to replay); --keep-empty replays them" in left.stderr
    assert sorted(pd.read_parquet(tmp_path / "left" / "results.parquet")["transcript_id"]) == sorted(
        t.id for t in synth)
    assert json.loads((tmp_path / "left" / "manifest.json").read_text())["spec"]["keep_empty"] is False
    kept = subprocess.run([*CLI, *base, "--out", str(tmp_path / "kept"), "--keep-empty"], capture_output=True,
                          text=True, timeout=300)
    assert kept.returncode == 0 and "left out" not in kept.stderr
    assert len(pd.read_parquet(tmp_path / "kept" / "results.parquet")) == 5
    from compbench.cli.run import _check_resume
    from compbench.run.spec import RunSpec

    with pytest.raises(UsageError, match="--keep-empty False in the run, True given"):  # a resume keeps the choice
        _check_resume("left", RunSpec(strategies=("none",)), str(raw), {"keep_empty"}, {"keep_empty": True})
    from compbench.store.manifest import upgrade_spec

    assert RunSpec.from_manifest(upgrade_spec({"strategies": ["none"]}, 2)).keep_empty  # one from before: replayed
