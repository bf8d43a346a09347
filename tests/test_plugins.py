"""Third-party plug-ins through entry points: the package in ``tests/plugin`` (a strategy written against
``compbench.sdk`` alone, an importer, a summarizer, an executor, a metric) is put on the path with a
dist-info made from its own pyproject (what ``pip install -e tests/plugin`` makes), and driven through the
CLI in a fresh process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from helpers import TESTS

PLUGIN = TESTS / "plugin"


def install(root: Path, name: str, groups: dict[str, dict[str, str]], path: Path | None = None) -> str:
    """A dist-info for ``name`` declaring ``groups`` under ``root``: the PYTHONPATH entries that install it."""
    dist = root / f"{name.replace('-', '_')}-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = [f"[{g}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) for g, eps in groups.items()]
    (dist / "entry_points.txt").write_text("\n".join(lines))
    return os.pathsep.join(str(p) for p in (root, path) if p is not None)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    project = tomllib.loads((PLUGIN / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    root = tmp_path_factory.mktemp("site")
    return {**os.environ, "PYTHONPATH": install(root, project["name"], project["entry-points"], PLUGIN)}


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from compbench.data.formats.native import write
    from compbench.data.synth import generate

    d = tmp_path_factory.mktemp("data")
    write(list(generate(3, seed=11, turns=30, log_lines=30, code_lines=30)), d / "synth.jsonl")
    return d


def compbench(env: dict[str, str], *args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    code = "import sys; from compbench.cli import main; sys.argv[0] = 'compbench'; main()"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, env=env,
                          cwd=cwd)


REPLAY = ("--context-window", "6000", "--max-output", "1000", "--tokenizer", "chars4")


def test_the_plugin_strategy_is_listed_and_shown(env: dict[str, str]) -> None:
    listed = compbench(env, "strategies", "list")
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if x.startswith("keep-last "))
    assert "compbench-testplugin 1.0" in line and "[presets: eager]" in line and "[/compact]" in line
    shown = compbench(env, "strategies", "show", "keep-last")
    assert shown.returncode == 0, shown.stderr
    assert "upstream: compbench-testplugin 1.0" in shown.stdout and "supports: manual" in shown.stdout
    assert "Messages kept verbatim, newest first" in shown.stdout and "preset 'eager'" in shown.stdout


def test_the_plugin_strategy_runs_with_the_plugin_summarizer(env: dict[str, str], data: Path, tmp_path: Path) -> None:
    run = compbench(env, "run", data, "--strategy", "keep-last:keep=4", "--strategy", "none", "--summarizer",
                    "shout:SAID: ", *REPLAY, "--out", tmp_path / "run", "--quiet")
    assert run.returncode == 0, run.stderr
    import pandas as pd

    results = pd.read_parquet(tmp_path / "run" / "results.parquet")
    assert set(results["strategy"]) == {"keep-last:keep=4", "none"}
    assert results[results["name"] == "keep-last"]["compactions"].sum() > 0
    summaries = pd.read_parquet(tmp_path / "run" / "compactions.parquet")["summary"]
    assert len(summaries) and all(s.startswith("SAID: ") and s == s.upper() for s in summaries)
    typo = compbench(env, "run", data, "--strategy", "none", "--summarizer", "shuot", *REPLAY, "--out", tmp_path / "x")
    assert typo.returncode == 2 and "did you mean 'shout'?" in typo.stderr and "shout[:PREFIX]" in typo.stderr


def test_tune_sweeps_the_plugin_and_its_block_configures_the_next_run(env: dict[str, str], data: Path,
                                                                       tmp_path: Path) -> None:
    tuned = compbench(env, "tune", data, "--strategy", "keep-last", "--grid", "keep=2,4,8", "--objective",
                      "max net_savings s.t. recall >= 0", *REPLAY, "--out", tmp_path / "tune", "--resamples", "200")
    assert tuned.returncode == 0, tuned.stderr
    best = next(x for x in tuned.stdout.splitlines() if x.startswith("best for")).split(": ", 1)[1].split(" (")[0]
    block = tuned.stdout[tuned.stdout.index("[tool.compbench.strategy.keep-last]"):].split("\n\n")[0]
    assert best.startswith("keep-last:keep=")
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(f"[project]\nname = 'mine'\n\n{block}\n", encoding="utf-8")
    again = compbench(env, "run", data, "--strategy", "keep-last", *REPLAY, "--out", tmp_path / "run", "--quiet",
                      cwd=project)
    assert again.returncode == 0, again.stderr
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert [s["label"] for s in manifest["strategies"]] == [best]  # the pasted block is what --strategy means


def test_the_plugin_importer_reads_its_format(env: dict[str, str], tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    rows = [{"linelog": "s1", "role": "user", "text": "fix src/app.py"},
            {"linelog": "s1", "role": "assistant", "text": "done"}]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    imported = compbench(env, "datasets", "import", log, "--out", tmp_path / "ds")
    assert imported.returncode == 0, imported.stderr
    meta = json.loads((tmp_path / "ds" / "dataset.json").read_text(encoding="utf-8"))
    assert meta["formats"] == {"linelog": 1} and meta["n_transcripts"] == 1
    forced = compbench(env, "datasets", "validate", log, "--format", "linelog")
    assert forced.returncode == 0, forced.stderr
    typo = compbench(env, "datasets", "validate", log, "--format", "linelogg")
    assert typo.returncode == 2 and "did you mean 'linelog'?" in typo.stderr


def test_a_plugin_cannot_take_a_builtin_name(tmp_path: Path, env: dict[str, str]) -> None:
    groups = {"compbench.strategies": {"opencode": "compbench_testplugin.keep_last"}}
    clash = install(tmp_path / "site", "clash", groups, PLUGIN)
    out = compbench({**env, "PYTHONPATH": clash}, "strategies", "list")
    assert out.returncode == 2
    assert out.stderr.strip() == ("error: the compbench.strategies entry point 'opencode' of clash takes the name of a "
                                  "built-in strategy; rename it")


def test_a_plugin_executor_runs_and_a_plugin_metric_gates(env: dict[str, str], data: Path, tmp_path: Path) -> None:
    run = compbench(env, "run", data, "--strategy", "claude-code", "--executor", "serial", *REPLAY,
                    "--out", tmp_path / "run", "--quiet")
    assert run.returncode == 0, run.stderr
    gate = compbench(env, "gate", tmp_path / "run", "--max", "summarizer_share=10", "--resamples", "200",
                     "--allow-few")  # a small run: passed, marked few
    assert gate.returncode == 0, gate.stderr
    assert "PASS claude-code: summarizer_share = " in gate.stdout
