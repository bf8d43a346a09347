"""``make bench``'s table and its real-logs row: each row beside its goal (met at the goal, not met past it), and a
row over real logs that runs where ../shared holds them and says why it did not where it does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from compbench import bench


@pytest.mark.parametrize(("value", "met"), [(2.99, True), (3.0, True), (3.01, False)])
def test_a_ceiling_is_met_at_the_goal_and_not_past_it(value: float, met: bool) -> None:
    table = bench.engine_table({"samples_every_ratio": value})
    row = next(x for x in table.splitlines() if "real samples" in x)
    assert row == f"| every default configuration on the real samples | {value}× | ≤ 3.0 " \
                  f"{'(met)' if met else '(not met)'} |"


@pytest.mark.parametrize(("value", "met"), [(1.79, False), (1.8, True), (1.81, True)])
def test_a_floor_is_met_at_the_goal_and_above_it(value: float, met: bool) -> None:
    row = next(x for x in bench.engine_table({"workers_speedup": value}).splitlines() if "--workers" in x)
    assert row.endswith(f"≥ 1.8 {'(met)' if met else '(not met)'} |")


def test_the_real_logs_row_says_why_it_was_skipped(tmp_path: Path) -> None:
    why = bench.real_ratio(("none",), shared=tmp_path)
    assert isinstance(why, str) and str(tmp_path) in why
    table = bench.engine_table({"real_every_ratio_skipped": why})
    assert f"| every default configuration on real logs (../shared) | skipped: {why} | ≤ 3.0 |" in table
    assert "real logs" not in bench.engine_table({})  # a row not measured is not printed


def test_the_real_logs_row_runs_over_the_folders_present(tmp_path: Path) -> None:
    from compbench.data.formats.native import write
    from compbench.data.synth import generate

    (tmp_path / "transcripts").mkdir()
    write(list(generate(2, seed=3, turns=8)), tmp_path / "transcripts" / "two.jsonl")
    assert bench.real_logs(tmp_path) == [tmp_path / "transcripts"]  # real-compactions absent: the one present
    got = bench.real_ratio(("none", "opencode"), shared=tmp_path)
    assert not isinstance(got, str)
    what, ratio = got
    assert what.startswith("2 real transcripts (transcripts), ") and "2 configurations" in what
    assert ratio > 1  # a run costs more than tokenizing once


@pytest.mark.parametrize("child", ["MEMORY_CHILD", "BIG_CHILD"])
def test_the_bench_childrens_imports_name_what_the_package_has(child: str) -> None:
    """The memory and big-transcript rows run as code in a child process, beyond mypy's and the layers' reach:
    their imports are checked here (the layering moved write_run and RunSpec under compbench.run)."""
    code = getattr(bench, child)
    imports = "\n".join(line for line in code.splitlines() if line.startswith(("from ", "import ")))
    exec(compile(imports, child, "exec"), {})


def test_the_rerun_rows_run_through_the_cli_and_give_shares_of_the_first_run(tmp_path: Path) -> None:
    from compbench import bench_report
    from compbench.data.formats.native import write
    from compbench.data.synth import generate

    (tmp_path / "logs").mkdir()
    write(list(generate(3, seed=5, turns=8)), tmp_path / "logs" / "three.jsonl")
    got: dict[str, object] = {}
    bench_report.rerun(got.__setitem__, [tmp_path / "logs"])
    assert str(got["rerun"]).startswith("3 real logs as a dataset") and "first run of 2" in str(got["rerun"])
    for key in ("rerun_share", "rerun_new_share"):
        value = got[key]
        assert isinstance(value, float) and 0 <= value < 1
    table = bench.engine_table({"rerun_share": 0.05, "rerun_new_share": 0.0501})
    assert "| a re-run over an unchanged dataset (share of its first run) | 5.0% | ≤ 5% (met) |" in table
    assert "share of the first) | 5.0% | ≤ 5% (not met) |" in table
