"""A run end to end on synthetic sessions, then compare and gate on it (exit codes are the interface)."""

from __future__ import annotations

import json
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


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    register_keep_last()
    root = tmp_path_factory.mktemp("runs")
    data = list(generate(6, seed=3, turns=30, log_lines=30, code_lines=40))
    out = []
    for name, keep in (("a", 6), ("b", 2)):
        spec = RunSpec(strategies=("none", f"test-keep-last:keep={keep}"), limits=ModelLimits(8_000, 1_000),
                       tokenizer="chars4")
        write_run(root / name, spec, "synth", data)
        out.append(root / name)
    return out[0], out[1]


def test_run_directory_tables_and_determinism(runs: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = runs
    manifest = json.loads((a / "manifest.json").read_text())
    assert manifest["dataset"]["transcripts"] == 6 and manifest["errors"] == []
    r = pd.read_parquet(a / "results.parquet")
    assert list(dict.fromkeys(r["strategy"])) == ["none", "test-keep-last:keep=6"]
    none = r[r["strategy"] == "none"]
    # none never acts: no need is scored, so its recall is undefined (never a perfect score by default)
    assert (none["savings"] == 0).all() and none["needed_recall"].isna().all() and (none["needs"] == 0).all()
    kl = r[r["strategy"] != "none"]
    assert (kl["compactions"] > 0).all() and (kl["savings"] > 0).all()
    c = pd.read_parquet(a / "compactions.parquet")
    assert set(c.columns) >= {"summary", "kept_ids", "lost_facts", "retention", "tokens_before", "tokens_after"}
    f = pd.read_parquet(a / "facts.parquet")
    assert {"planted", "derived"} <= set(f["source"])
    data = list(generate(6, seed=3, turns=30, log_lines=30, code_lines=40))
    spec = RunSpec(strategies=("none", "test-keep-last:keep=6"), limits=ModelLimits(8_000, 1_000), tokenizer="chars4")
    write_run(tmp_path / "again", spec, "synth", data)
    for table in ("results", "steps", "compactions", "prunes", "facts"):
        assert (a / f"{table}.parquet").read_bytes() == (tmp_path / "again" / f"{table}.parquet").read_bytes()


def test_compare_one_run_and_two_runs(runs: tuple[Path, Path]) -> None:
    a, b = runs
    res = CliRunner().invoke(cli, ["compare", str(a), "--format", "json", "--resamples", "500"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["none"]["net_savings"]["value"] == 0.0
    assert 0 < data["test-keep-last:keep=6"]["net_savings"]["value"] < 1
    # within one run: each strategy's paired difference from none (or --baseline), and who acted
    assert data["test-keep-last:keep=6"]["acted"] == "6/6"
    vs = data["test-keep-last:keep=6"]["vs_none"]["net_savings"]
    assert vs["diff"] == pytest.approx(data["test-keep-last:keep=6"]["net_savings"]["value"]) and vs["significant"]
    md = CliRunner().invoke(cli, ["compare", str(a), "--format", "markdown", "--resamples", "500"])
    assert md.output.startswith("| strategy | acted | group | net savings |") and "Δ net savings vs none" in md.output
    bad = CliRunner().invoke(cli, ["compare", str(a), "--baseline", "nope", "--resamples", "500"])
    assert bad.exit_code != 0 and "not a strategy of this run" in str(bad.exception)
    two = CliRunner().invoke(cli, ["compare", str(a), str(b), "--format", "json", "--resamples", "500"])
    assert two.exit_code == 0 and json.loads(two.output)["strategies"]["none"]["net_savings"]["diff"] == 0.0


def test_gate_pass_fail_and_baseline_regression(runs: tuple[Path, Path]) -> None:
    a, b = runs
    ok = CliRunner().invoke(cli, ["gate", str(a), "--min", "net_savings=0.01", "--resamples", "500"])
    assert ok.exit_code == 0, ok.output
    bad = CliRunner().invoke(cli, ["gate", str(a), "--min", "net_savings=0.99", "--resamples", "500"])
    assert bad.exit_code == 1 and "FAIL test-keep-last:keep=6: net_savings" in bad.output
    # keeping 2 instead of 6 messages loses facts the agent needs: a regression against baseline a
    reg = CliRunner().invoke(cli, ["gate", str(b), "--baseline", str(a), "--strategy", "test-keep-last",
                                   "--max-drop", "needed_recall=0.0", "--resamples", "500"])
    assert reg.exit_code == 1 and "needed_recall change vs baseline" in reg.output


def test_gate_bad_usage_is_exit_2(runs: tuple[Path, Path]) -> None:
    from compbench.cli import main

    a, _ = runs
    import subprocess
    import sys

    for args in (["--min", "nonsense=1"], ["--min", "net_savings"], ["--max-drop", "needed_recall=0.1"], []):
        p = subprocess.run([sys.executable, "-c", "from compbench.cli import main; main()", "gate", str(a), *args],
                           capture_output=True, text=True)
        assert p.returncode == 2 and p.stderr.startswith("error: "), (args, p.stderr)
    assert main


def test_tune_helpers_grid_random_pareto_objective() -> None:
    from compbench.decide.stats import Estimate
    from compbench.decide.tune import choose, grid_specs, pareto, parse_objective, random_specs

    register_keep_last()
    assert grid_specs("test-keep-last", ["keep=2,4", "trigger=100"]) == [
        "test-keep-last:keep=2,trigger=100", "test-keep-last:keep=4,trigger=100"]
    r1 = random_specs("test-keep-last", 5, ["keep=1:9"], seed=4)
    assert r1 == random_specs("test-keep-last", 5, ["keep=1:9"], seed=4) and all(":keep=" in s for s in r1)
    assert pareto({"a": (0.5, 0.9), "b": (0.6, 0.8), "c": (0.4, 0.8), "d": (0.6, 0.9)}) == ["d"]
    assert pareto({"a": (0.5, 0.9), "b": (0.6, 0.8), "c": (0.4, 0.8)}) == ["b", "a"]
    obj = parse_objective("max net_savings s.t. recall >= 0.85")
    assert obj.metric == "net_savings" and obj.constraints == (("needed_recall", ">=", 0.85),)

    def e(v: float) -> Estimate:
        return Estimate(v, v, v, 1)

    agg = {"a": {"net_savings": e(0.5), "needed_recall": e(0.9)}, "b": {"net_savings": e(0.7), "needed_recall": e(0.8)}}
    assert choose(agg, obj) == "a"
    assert choose(agg, parse_objective("max net_savings")) == "b"


def test_pytest_plugin_fixture_passes_and_fails(runs: tuple[Path, Path], pytester: pytest.Pytester) -> None:
    a, _ = runs
    pytester.makepyfile(f'''
        def test_ok(compbench_gate):
            checks = compbench_gate({str(a)!r}, min={{"net_savings": 0.01}}, resamples=300)
            assert checks and all(c.passed for c in checks)

        def test_fails(compbench_gate):
            compbench_gate({str(a)!r}, min={{"net_savings": 0.99}}, resamples=300)
    ''')
    result = pytester.runpytest_subprocess()  # the plug-in loads through its pytest11 entry point
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*compbench gate failed:*", "*FAIL test-keep-last:keep=6: net_savings*"])


def test_price_file_overrides_the_table_and_compression_is_recorded(tmp_path: Path) -> None:
    import subprocess
    import sys

    from compbench.data.formats.native import write

    data = tmp_path / "d.jsonl"
    write(generate(2, seed=3, turns=24, log_lines=20, code_lines=20), data)
    prices = tmp_path / "p.json"
    prices.write_text('{"input": 1, "output": 0, "cache_read": 0, "cache_write": 1}')  # $1 per million written
    cmd = [sys.executable, "-c", "from compbench.cli import main; main()", "run", str(data), "--strategy", "none",
           "--strategy", "opencode", "--context-window", "4000", "--max-output", "500", "--tokenizer", "chars4",
           "--prices", str(prices), "--out", str(tmp_path / "run"), "--quiet"]
    assert subprocess.run(cmd, capture_output=True, text=True).returncode == 0
    r = pd.read_parquet(tmp_path / "run" / "results.parquet")
    none = r[r["strategy"] == "none"].iloc[0]
    # every prompt token is a cache write ($1/M), a free cache read, or (a prompt too short to cache) plain
    # input ($1/M): cost = (input - reads) / 1e6; without a cache every input token is paid
    assert none["cost_usd"] == pytest.approx((none["input_tokens"] - none["cache_read_tokens"]) / 1e6)
    assert none["cost_usd_nocache"] == pytest.approx(none["input_tokens"] / 1e6)
    c = pd.read_parquet(tmp_path / "run" / "compactions.parquet")
    ok = c[c["ok"]]
    assert len(ok) and (ok["compression"] == 1 - ok["summary_tokens"] / ok["replaced_tokens"]).all()
    prices.write_text('{"input": 1}')
    bad = subprocess.run([*cmd[:-3], "--out", str(tmp_path / "run2")], capture_output=True, text=True)
    assert bad.returncode == 2 and "cache_write" in bad.stderr and not (tmp_path / "run2").exists()
