"""A CLI that meets a user where they are (issue 26): each friction a user met, and the behaviour that replaces
it. Runs are small synthetic ones (two agents, two models, long and short sessions) so every check is fast."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_openai import FakeOpenAI

from compbench.cli import cli
from compbench.data.synth import generate
from compbench.errors import UsageError
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits
from compbench.strategies import strategy
from helpers import KeepLast, invoke, register_keep_last

CLI = [sys.executable, "-c", "from compbench.cli import main; main()"]
LONG = "test-keep-last:keep=3,trigger=2500"  # a label long enough to need its room
NEVER = "test-keep-last:trigger=100000000"  # a trigger no transcript reaches: it never acts


def sessions() -> list:  # type: ignore[type-arg]
    """Four long sessions and four short ones the default trigger never reaches; half from Claude Code on
    model-a, half from Codex on model-b."""
    long = list(generate(4, seed=3, turns=30, log_lines=30, code_lines=40))
    short = list(generate(4, seed=5, turns=6, log_lines=3, code_lines=3))
    out = []
    for k, t in enumerate(long + short):
        src, model = ("claude-code", "model-a") if k % 2 else ("codex", "model-b")
        out.append(replace(t, id=f"{t.id}-{k}", source=src, meta={**t.meta, "model": model}))
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    register_keep_last()
    out = tmp_path_factory.mktemp("ux") / "run"
    spec = RunSpec(strategies=("none", "test-keep-last", "test-keep-last:keep=2", LONG, NEVER),
                   limits=ModelLimits(8_000, 1_000), tokenizer="chars4", token_correction="none")
    write_run(out, spec, "synth", sessions())
    return out


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run without none: configurations of one strategy, as tune writes them."""
    register_keep_last()
    out = tmp_path_factory.mktemp("ux") / "sweep"
    spec = RunSpec(strategies=("test-keep-last", "test-keep-last:keep=2"), limits=ModelLimits(8_000, 1_000),
                   tokenizer="chars4", token_correction="none")
    write_run(out, spec, "synth", sessions())
    return out


# --- compare: a default that fits 160 columns, verdict first; --wide; --by --------------------------------

def test_compare_fits_160_columns_with_the_verdict_first(run: Path) -> None:
    code, out = invoke("compare", run, "--resamples", "300")
    assert code == 0, out
    lines = out.splitlines()
    assert max(len(x) for x in lines) <= 160
    # the run mixes two tools' logs: each tool's verdict first, then the pooled pick, said to mix them
    assert lines[0].startswith("Per tool (each tool's logs on their own")
    assert "  Claude Code logs (4 transcripts)" in lines and "  Codex logs (4 transcripts)" in lines
    pooled = next(k for k, x in enumerate(lines) if x.startswith("All logs pooled (2 tools: Claude Code, Codex)"))
    assert lines[pooled + 2].startswith("best for highest effective savings with needed-fact recall ≥ 90%")
    header = next(k for k, x in enumerate(lines) if x.startswith("strategy "))
    assert all(not x.startswith("best for") for x in lines[header:])  # the verdict comes before the table
    assert "median" in lines[header] and "recall kept verbatim" not in out  # --wide has every metric
    # a strategy that acted on some transcripts is not a "!" line of its own (the acted column says it);
    # one that never acted is
    assert not any(x.startswith("!") and "acted on some" in x for x in lines)
    assert any(x.startswith("! never acted") and NEVER in x for x in lines)
    wide = invoke("compare", run, "--wide", "--resamples", "300")[1]
    assert "recall kept verbatim" in wide and "Δ effective savings vs" in wide and "(differences from none" in wide
    assert "acted on 4/8 transcripts" in wide


def test_compare_shows_the_median_and_json_carries_it(run: Path) -> None:
    data = json.loads(invoke("compare", run, "--format", "json", "--resamples", "300")[1])
    entry = data["test-keep-last"]
    spread = entry["spread"]["effective_savings"]
    assert spread["transcripts"] == 8 and spread["median_per_transcript"] is not None
    assert set(spread) == {"median_per_transcript", "transcripts", "top3_share", "dominated"}
    assert data[NEVER]["spread"]["effective_savings"]["median_per_transcript"] == 0.0


def test_compare_by_source_model_and_project(run: Path) -> None:
    code, out = invoke("compare", run, "--by", "source", "--resamples", "300")
    assert code == 0, out
    assert "== Claude Code logs: 4 transcripts ==" in out and "== Codex logs: 4 transcripts ==" in out
    # a tool's logs read as it ran, its own strategy, the best other one (neither record nor own in this run)
    assert "  as it ran: not in this run (add --strategy recorded)" in out
    assert "  Claude Code's own strategy (claude-code) is not in this run" in out
    assert "as it ran replays" not in out  # no recorded row, nothing to tell apart
    assert max(len(x) for x in out.splitlines()) <= 160
    data = json.loads(invoke("compare", run, "--by", "model", "--format", "json", "--resamples", "300")[1])
    assert data["by"] == "model" and set(data["groups"]) == {"model-a", "model-b"}
    group = data["groups"]["model-a"]
    assert group["transcripts"] == 4 and "none" in group["strategies"] and group["verdict"].startswith("For your")
    project = json.loads(invoke("compare", run, "--by", "project", "--format", "json", "--resamples", "300")[1])
    import pandas as pd

    projects = set(pd.read_parquet(run / "results.parquet")["project"])
    assert set(project["groups"]) == projects and sum(g["transcripts"] for g in project["groups"].values()) == 8
    from compbench.decide.breakdown import group_name

    assert group_name("project", "") == "project (not recorded)"


def test_compare_a_run_without_none_measures_from_the_strategys_default(run: Path, sweep: Path) -> None:
    code, out = invoke("compare", sweep, "--resamples", "300")
    assert code == 0 and "is not a strategy of this run" not in out
    wide = invoke("compare", sweep, "--wide", "--resamples", "300")[1]
    assert "Δ effective savings vs" in wide and "(differences from test-keep-last, 1 of" in wide
    code, out = invoke("compare", sweep, "--baseline", "none", "--resamples", "300")
    assert code == 2 and "--baseline 'none' is not a strategy of this run" in out  # given, so it is said


# --- gate -------------------------------------------------------------------------------------------------

def test_gate_says_skip_for_a_figure_without_a_value_and_never_fails_a_min_of_zero(run: Path) -> None:
    code, out = invoke("gate", run, "--strategy", NEVER, "--min", "needed_recall=0", "--resamples", "300")
    assert code == 0, out
    assert "nan" not in out
    assert f"SKIP {NEVER}: needed_recall has no value: it never acted on any of its 8 transcripts" in out
    assert "0 passed, 0 failed, 1 without a value (skipped)" in out


def test_gate_thresholds_are_fractions_or_percentages_and_a_fail_reads_as_one(run: Path) -> None:
    code, out = invoke("gate", run, "--strategy", "test-keep-last:keep=2", "--max", "overflows=0",
                       "--resamples", "300")
    assert "≤ the maximum 0" in out or "is above the maximum 0" in out  # the threshold is printed, 0 included
    code, out = invoke("gate", run, "--min", "needed_recall=90", "--resamples", "300")
    assert code == 2 and "thresholds are fractions: write 0.9 or 90%" in out
    code, out = invoke("gate", run, "--strategy", "test-keep-last:keep=2", "--min", "needed_recall=99.5%",
                       "--resamples", "300")
    assert code == 1
    fail = next(x for x in out.splitlines() if x.startswith("FAIL"))
    assert "is below the minimum 99.5%" in fail and ">=" not in fail
    code, out = invoke("gate", run, "--strategy", "test-keep-last:keep=2", "--min", "needed_recall=1%",
                       "--resamples", "300", "--allow-few")  # a small run: the few rule is tests/decide's
    assert code == 0 and "≥ the minimum 1%" in out


# --- tune -------------------------------------------------------------------------------------------------

def test_tune_without_an_objective_names_the_best_and_each_change_from_the_default(tmp_path: Path) -> None:
    from compbench.data.formats.native import write

    register_keep_last()
    data = tmp_path / "d.jsonl"
    write(sessions(), data)
    r = CliRunner().invoke(cli, ["tune", str(data), "--strategy", "test-keep-last", "--grid", "keep=2,4",
                                 "--context-window", "8000", "--tokenizer", "chars4", "--out", str(tmp_path / "t"),
                                 "--resamples", "300"])
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "Δ vs default" in out and "(the default)" in out and " pp [" in out
    assert "(the default objective; --objective sets another)" in out  # a best, or why none meets it
    assert "replayed 8 transcripts in" in r.stderr  # progress (raw files: no total known in advance)
    assert "3 configurations (the default test-keep-last among them)" in r.stderr


# --- judge against a local OpenAI-compatible server ---------------------------------------------------------

ANSWER = json.dumps({"question": "Which file?", "answer": "src/app.py", "correct": True, "accuracy": 5,
                     "context_awareness": 5, "artifact_trail": 5, "completeness": 5, "continuity": 5})


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of two sessions from a file (judge replays the run's dataset again)."""
    from compbench.data.formats.native import write
    from compbench.data.importing import iter_transcripts

    register_keep_last()
    root = tmp_path_factory.mktemp("judge")
    write(list(generate(2, seed=3, turns=30, log_lines=30, code_lines=40)), root / "d.jsonl")
    spec = RunSpec(strategies=("none", "test-keep-last"), limits=ModelLimits(8_000, 1_000), tokenizer="chars4",
                   summarizer="extractive")
    write_run(root / "run", spec, str(root / "d.jsonl"), iter_transcripts(str(root / "d.jsonl")))
    return root / "run"


def no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for k in list(os.environ):
        if k.endswith("_API_KEY") or k.startswith(("OPENAI", "ANTHROPIC", "AZURE")):
            monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))


def test_judge_against_a_local_server_needs_no_key(small: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    no_keys(monkeypatch, tmp_path)
    server = FakeOpenAI(lambda n: ANSWER)
    try:
        r = CliRunner().invoke(cli, ["judge", str(small), "--agent", "litellm:llama3", "--api-base", server.url,
                                     "--max-events", "1", "--cache-dir", str(tmp_path / "cache")])
    finally:
        server.close()
    assert r.exit_code == 0, (r.output, r.exception)
    assert server.seen and all(c["model"] == "llama3" for c in server.seen)  # a bare name, sent as OpenAI's
    assert all(c["auth"] == "Bearer no-key-needed" for c in server.seen)
    assert "judge: made" in r.stderr and "model calls" in r.stderr  # progress


def test_judge_retries_visibly_a_bounded_number_of_times_then_stops(small: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    import compbench.summarizers.llm as llm

    no_keys(monkeypatch, tmp_path)
    monkeypatch.setattr(llm, "BACKOFF_BASE_S", 0.01)
    judged = small / "judged.parquet"
    before = judged.stat().st_mtime_ns if judged.exists() else None
    server = FakeOpenAI(lambda n: ANSWER, fail=True)
    start = time.monotonic()
    try:
        r = CliRunner().invoke(cli, ["judge", str(small), "--agent", "litellm:llama3", "--api-base", server.url,
                                     "--cache-dir", str(tmp_path / "cache")])
    finally:
        server.close()
    from compbench.cli.judge import GIVE_UP, RETRIES

    assert isinstance(r.exception, Exception) and "calls failed in a row, judge stopped" in str(r.exception)
    assert len(server.seen) == GIVE_UP * (RETRIES + 1)  # no hidden retries inside the client
    assert r.stderr.count("retrying (1/2)") == GIVE_UP and r.stderr.count("retrying (2/2)") == GIVE_UP
    assert time.monotonic() - start < 120
    assert (judged.stat().st_mtime_ns if judged.exists() else None) == before  # nothing written


def test_missing_credentials_are_not_retried_and_local_calls_get_a_placeholder_key(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from compbench.summarizers.llm import LOCAL_KEY, local_call, transient

    no_keys(monkeypatch, tmp_path)
    assert not transient("InternalServerError", "OpenAIException - Missing credentials. Please pass an `api_key`")
    assert transient("InternalServerError", "Error code: 500")
    assert local_call("llama3", "http://127.0.0.1:1/v1", None) == ("openai/llama3", LOCAL_KEY)
    assert local_call("llama3", "http://127.0.0.1:1/v1", "mine") == ("openai/llama3", "mine")
    assert local_call("gpt-4o-mini", None, None) == ("gpt-4o-mini", None)  # no endpoint: untouched
    monkeypatch.setenv("OPENAI_API_KEY", "sk-set")
    assert local_call("llama3", "http://127.0.0.1:1/v1", None) == ("openai/llama3", None)  # the set key is used


# --- fidelity: progress and a default that fits --------------------------------------------------------------

def test_fidelity_fits_160_columns_and_shows_its_progress() -> None:
    r = CliRunner().invoke(cli, ["fidelity"])
    assert r.exit_code == 0, r.output
    assert max(len(x) for x in r.stdout.splitlines()) <= 160
    assert "fidelity: read 14/14 transcripts (100%)" in r.stderr
    assert "--wide: every column" in r.stdout


def test_fidelitys_default_view_fits_its_widest_shape_and_wide_has_every_column() -> None:
    from compbench.cli.fidelity import COMPACT, compact_rows
    from compbench.cli.render import table
    from compbench.validation.fidelity import COLUMNS, Row

    widest = Row("claude-code", "x" * 80, 12, "manual (inferred)", "current", 12_345, 12_346, 1, 1_234_567,
                 1_234_568, 1, 0.5, 1, 1, 1, 1, "123/456", "123/456", 1, 1, 0.01, "c" * 300, 40_000,
                 "1234/5678", "1234/5678", "1234/5678", 1_000_000, "s" * 80, 99_999, 99_999, 999.99, 99_999, -99_999,
                 99_999)
    assert max(len(x) for x in table(list(COMPACT), compact_rows([widest]), "table").splitlines()) <= 160
    assert max(len(x) for x in table(list(COLUMNS), [widest.cells()], "table").splitlines()) > 160


def test_fidelity_items_walks_each_real_compaction_item_by_item() -> None:
    """``--items``: per real compaction its predicted, observed, natural and excess tokens, then its items (key,
    why, what the agent had, latest delivery, predicted, observed); the small ones summed in one line."""
    import json

    r = CliRunner().invoke(cli, ["fidelity", "--items"])
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "claude-code c7d2069e-c561-4759-8adf-b0745be78c29 #1 (auto, held-out): predicted " in out
    assert "key  " in out and "why" in out and "predicted  observed" in out
    assert "re-attached, but the read-before-edit guard needs a read" in out  # the guard rule, said where it acts
    assert "items under 100 tokens: predicted" in out
    assert "kept set" not in out  # the walk-through replaces the table
    j = CliRunner().invoke(cli, ["fidelity", "--items", "--format", "json"])
    found = json.loads(j.stdout)
    one = next(x for x in found if x["transcript"].startswith("c7d2069e"))
    assert {"key", "class", "held", "spared", "why", "had", "latest", "predicted", "observed"} <= set(one["items"][0])
    assert sum(x["predicted"] for x in one["items"]) > 0
    assert one["predicted"] == sum(x["predicted"] for x in one["items"]) and one["predicted_all"] >= one["predicted"]
    assert one["excess"] == one["observed"] - one["natural"] and one["natural"] > 0  # the curve over its 11 steps
    assert "natural" in out and "where nothing was compacted" in out


# --- strategy parameters -------------------------------------------------------------------------------------

def test_strategy_parameters_are_validated_at_and_beyond_their_bounds() -> None:
    from compbench.strategies import resolve

    with pytest.raises(UsageError, match=r"protect=-5 is negative"):
        resolve("opencode:protect=-5")
    assert resolve("opencode:protect=0").params.protect == 0  # the boundary itself
    with pytest.raises(UsageError, match=r"threshold_ratio=1.01 is above 1: it is a fraction between 0 and 1"):
        resolve("claude-code:threshold_ratio=1.01")
    with pytest.raises(UsageError, match=r"threshold_ratio=-0\.01 is negative"):
        resolve("claude-code:threshold_ratio=-0.01")
    assert resolve("claude-code:threshold_ratio=1").params.threshold_ratio == 1.0
    with pytest.raises(UsageError, match="a percentage between 0 and 100"):
        resolve("codex:effective_window_percent=101")
    with pytest.raises(UsageError, match="polling=0 is below its minimum 1"):
        resolve("swe-agent:polling=0")
    with pytest.raises(UsageError, match="removal_percentages=150"):
        resolve("goose:removal_percentages=0|150")
    with pytest.raises(UsageError, match="keep_last_turns=-1"):
        resolve("pipeline:stages=observation-masking>claude-code,observation-masking.keep_last_turns=-1")


def test_every_strategys_defaults_and_presets_are_within_bounds_and_a_bad_preset_is_refused() -> None:
    from dataclasses import dataclass

    from compbench.sdk.registry import check_bounds, get, names, param

    for name in names():
        info = get(name)
        check_bounds(name, info.defaults())
        for values in info.presets.values():
            check_bounds(name, info.params(**values))

    @dataclass(frozen=True)
    class P:
        share: float = param(0.5, "a share", hi=1)
        count: int = 3  # without param(): a count, never negative

    with pytest.raises(UsageError, match="share=2 is above 1"):
        strategy("test-bad-preset", params=P, source="t", summary="t", presets={"x": {"share": 2.0}})(KeepLast)
    with pytest.raises(UsageError, match="count=-1 is negative"):
        check_bounds("x", P(count=-1))


# --- datasets, messages ------------------------------------------------------------------------------------

def test_a_run_directory_given_as_transcripts_is_named_a_run(run: Path) -> None:
    for args in (["datasets", "inspect", run], ["datasets", "validate", run], ["fidelity", run]):
        p = subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=300)
        assert p.returncode == 2 and p.stderr.count("\n") == 1, (args, p.stderr)
        assert "is a run directory (the output of `compbench run`)" in p.stderr and "format" not in p.stderr


def test_a_broken_line_says_how_to_skip_it(tmp_path: Path) -> None:
    from compbench.data.formats.native import write

    data = tmp_path / "s.jsonl"
    write(list(generate(1, seed=1, turns=6)), data)
    lines = data.read_text().splitlines()
    lines.insert(2, '{"role": "user", "parts": [')  # a line cut short in the middle of the file
    data.write_text("\n".join(lines) + "\n")
    p = subprocess.run([*CLI, "datasets", "import", str(data), "--out", str(tmp_path / "ds")], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 2 and ":3:" in p.stderr and "rerun with --on-error skip-lines" in p.stderr
    v = subprocess.run([*CLI, "datasets", "validate", str(data)], capture_output=True, text=True, timeout=300)
    assert v.returncode == 2 and "--skip-lines (here) or `import --on-error skip-lines`" in v.stdout
    r = subprocess.run([*CLI, "run", str(data), "--strategy", "none", "--out", str(tmp_path / "r")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "datasets import PATH --out DIR --on-error skip-lines" in r.stderr


def test_json_errors_never_say_at_at(tmp_path: Path) -> None:
    from compbench.data.formats.jsonio import iter_records, load_json
    from compbench.errors import TranscriptError

    bad = tmp_path / "ctrl.json"
    bad.write_text('{"a": "b",\n "c": "x\x01y"}\n')
    with pytest.raises(TranscriptError, match="Invalid control character at column") as e:
        load_json(bad)
    assert "at at" not in str(e.value)
    array = tmp_path / "array.json"
    array.write_text('[{"a": "open]')
    with pytest.raises(TranscriptError) as e2:
        list(iter_records(array))
    assert "at at" not in str(e2.value) and "starting at column" in str(e2.value)


# --- after make demo ---------------------------------------------------------------------------------------

def test_the_demo_ends_with_how_to_reach_compbench_and_what_to_run_next(monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import compbench.demo as demo
    import compbench.reports.html as html
    import compbench.run.write as write

    class Manifest:
        class dataset:  # the shape of Manifest.dataset
            transcripts = 14

    monkeypatch.setattr(write, "write_run", lambda *a, **k: Manifest())
    monkeypatch.setattr(html, "write_report", lambda *a, **k: None)
    monkeypatch.setattr("compbench.decide.summary.summary_table", lambda run: "(table)")
    monkeypatch.chdir(demo.ROOT)
    monkeypatch.setattr(sys, "executable", str(demo.ROOT / ".venv" / "bin" / "python"))
    assert demo.main() == 0
    tail = capsys.readouterr().out.splitlines()[-8:]
    text = "\n".join(tail)
    assert "source .venv/bin/activate" in text and "`.venv/bin/compbench`" in text
    assert ".venv/bin/compbench datasets import ~/.claude/projects" in text and "--on-error skip-lines" in text
    assert ".venv/bin/compbench compare out/mine --by source" in text
    readme = (demo.ROOT / "README.md").read_text(encoding="utf-8")
    top = "\n".join(readme.splitlines()[:40])  # the README's first screen (tests/test_readme.py)
    assert "source .venv/bin/activate" in top and ".venv/bin/compbench run mine --out out/mine" in top
