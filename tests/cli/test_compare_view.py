"""What compare and tune print reads the way it is meant (issue 31): a difference's word never contradicts its
sign, a label is never cut inside a value, a figure over no transcript is no figure, every figure of --wide fits
160 columns, and tune's help names the objective its output uses."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from compbench.cli import cli
from compbench.cli.compare_view import (
    WIDTH,
    _diff,
    fit_labels,
    label_pieces,
    reading,
    shared_part,
    wide_tables,
)
from compbench.data.synth import generate
from compbench.decide.compare import fmt, fmt_diff
from compbench.decide.headline import PRIMARY
from compbench.decide.metrics import BY_NAME, METRICS
from compbench.decide.stats import Estimate
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits
from helpers import invoke, register_keep_last

NEVER = "test-keep-last:trigger=100000000"  # a trigger no transcript reaches: it never acts


def sessions() -> list:  # type: ignore[type-arg]
    long = list(generate(6, seed=3, turns=30, log_lines=30, code_lines=40))
    return [replace(t, id=f"{t.id}-{k}", source="claude-code" if k % 2 else "codex") for k, t in enumerate(long)]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    register_keep_last()
    out = tmp_path_factory.mktemp("view") / "run"
    spec = RunSpec(strategies=("none", "test-keep-last", "test-keep-last:keep=2", NEVER),
                   limits=ModelLimits(8_000, 1_000), tokenizer="chars4", token_correction="none")
    write_run(out, spec, "synth", sessions())
    return out


# --- a difference reads as it is: a word for better / worse / not significant, beside its own sign ----------

SAVINGS, COST = BY_NAME["effective_savings"], BY_NAME["cost"]


def test_a_rise_in_savings_is_better_and_a_rise_in_cost_is_worse_whatever_the_sign() -> None:
    up = Estimate(0.132, 0.09, 0.17, 20)
    down = Estimate(-0.143, -0.2, -0.1, 20)
    assert _diff(up, SAVINGS) == "better +13.2 pp [+9.0, +17.0]"  # asv printed "- +13.2 pp"
    assert _diff(down, SAVINGS) == "worse -14.3 pp [-20.0, -10.0]"  # and "+ -14.3 pp"
    assert reading(Estimate(0.3, 0.1, 0.5, 20), COST) == "worse"
    assert reading(Estimate(-0.3, -0.5, -0.1, 20), COST) == "better"


def test_not_significant_at_and_around_the_boundaries() -> None:
    assert reading(Estimate(0.05, 0.0, 0.1, 20), SAVINGS) == "n.s."  # the interval touches 0
    assert reading(Estimate(0.05, 0.0001, 0.1, 20), SAVINGS) == "better"  # just above it
    assert reading(Estimate(0.05, -0.0001, 0.1, 20), SAVINGS) == "n.s."  # just below it
    assert reading(Estimate(0.05, 0.01, 0.1, 4), SAVINGS) == "n.s."  # excluding 0 on 4 units: too few
    assert reading(Estimate(0.05, 0.01, 0.1, 5), SAVINGS) == "better"  # on 5: enough


def test_no_mark_ever_contradicts_its_sign_in_compare_or_tune(run: Path, tmp_path: Path) -> None:
    contradiction = re.compile(r"(^|\s)[-+~] [-+]?\d")  # asv's mark before a signed figure
    code, out = invoke("compare", run, "--baseline", "test-keep-last", "--resamples", "300")
    assert code == 0, out
    assert not contradiction.search(out) and "better / worse: significantly" in out
    assert re.search(r"(better|worse|n\.s\.) [-+]?\d", out)
    from compbench.data.formats.native import write

    register_keep_last()
    data = tmp_path / "d.jsonl"
    write(sessions(), data)
    r = CliRunner().invoke(cli, ["tune", str(data), "--strategy", "test-keep-last", "--set", "trigger=2500",
                                 "--grid", "keep=2,4", "--context-window", "8000", "--tokenizer", "chars4",
                                 "--out", str(tmp_path / "t"), "--resamples", "300"])
    assert r.exit_code == 0, r.output
    assert not contradiction.search(r.stdout) and "better / worse: significantly" in r.stdout
    assert re.search(r"(better|worse|n\.s\.) [-+]?\d", r.stdout)
    # configurations named by what differs; the shared part said once; the best pasted whole
    assert "configurations of test-keep-last:trigger=2500: each row names only" in r.stdout
    rows = [x.split()[0] for x in r.stdout.splitlines() if x.startswith(("keep=", "(default)"))]
    assert set(rows) == {"keep=2", "keep=4", "(default)"}
    assert "…" not in r.stdout


def test_two_runs_pair_with_the_same_words(run: Path) -> None:
    data = json.loads(invoke("compare", run, run, "--format", "json", "--resamples", "300")[1])
    entry = data["strategies"]["test-keep-last"]["effective_savings"]
    assert entry["reads"] == "not significant" and entry["diff"] == 0.0  # a run against itself
    code, out = invoke("compare", run, run, "--resamples", "300")
    assert code == 0 and "n.s. 0.0 pp" in out and max(len(x) for x in out.splitlines()) <= WIDTH


# --- tune's help names the objective its output ranks by ----------------------------------------------------

def test_tune_help_names_the_headline_objective() -> None:
    text = " ".join(CliRunner().invoke(cli, ["tune", "--help"]).output.split())
    assert f'default: "{PRIMARY}"' in text and "max effective_savings" in PRIMARY
    assert "net_savings s.t." not in text  # the former default, which the output never used
    report = " ".join(CliRunner().invoke(cli, ["report", "--help"]).output.split())
    assert PRIMARY in report and "highest net savings" not in report


# --- labels: wrapped between parameters, never cut inside a value --------------------------------------------

LABEL = "claude-code:preset=current,large_window=400000"


def test_a_label_breaks_only_between_its_parameters() -> None:
    assert label_pieces(LABEL, len(LABEL)) == [LABEL]  # at its length: whole
    assert label_pieces(LABEL, len(LABEL) - 1) == ["claude-code:preset=current,", "  large_window=400000"]
    assert label_pieces(LABEL, 12) == ["claude-code:", "  preset=current,", "  large_window=400000"]  # a part
    # longer than the room stays whole on its line, never cut
    pipeline = "pipeline:stages=observation-masking>claude-code,observation-masking.keep_last_turns=5"
    pieces = label_pieces(pipeline, 30)
    assert "".join(p.strip() for p in pieces) == pipeline and all("…" not in p for p in pieces)
    rows = fit_labels([[LABEL, "1", "2"], ["none", "3", "4"]], len(LABEL) - len("claude-code:preset=current,"))
    assert rows == [["claude-code:preset=current,", "1", "2"], ["  large_window=400000", "", ""],
                    ["none", "3", "4"]]


def test_a_sweep_is_named_by_what_differs() -> None:
    labels = ["claude-code:preset=current", LABEL, "claude-code:preset=current,large_window=1000000"]
    shared, short = shared_part(labels)
    assert shared == "claude-code:preset=current"
    assert short == {labels[0]: "(default)", LABEL: "large_window=400000",
                     labels[2]: "large_window=1000000"}
    assert shared_part(["opencode", "codex"]) == ("", {"opencode": "opencode", "codex": "codex"})  # others: whole


# --- a figure over no transcript is no figure ------------------------------------------------------------------

def test_an_interval_over_no_transcript_is_no_figure() -> None:
    assert fmt(Estimate(-0.265, -0.299, -0.224, 0), SAVINGS) == "– (n=0)"
    assert fmt(Estimate(-0.265, -0.299, -0.224, 1), SAVINGS) == "-26.5% [-29.9%, -22.4%] (n=1, few)"
    assert fmt_diff(Estimate(0.0, 0.0, 0.0, 0), SAVINGS) == "– (n=0)"


def test_a_saving_rests_on_the_transcripts_where_the_strategy_acted_or_spent(run: Path) -> None:
    import pandas as pd

    from compbench.decide.bootstrap import batch, changed

    data = json.loads(invoke("compare", run, "--format", "json", "--resamples", "300")[1])
    assert data[NEVER]["effective_savings"]["n"] == 0 and data["none"]["effective_savings"]["n"] == 0
    code, out = invoke("compare", run, "--resamples", "300")
    assert code == 0, out
    never = next(x for x in out.splitlines() if x.startswith(NEVER))
    assert "– (n=0)" in never and "[0.0%, 0.0%]" not in never
    # a strategy that never acted but paid for summaries it dropped: its cost rests on those transcripts
    rows = pd.DataFrame({"first_action_step": [-1, -1, 3], "transcript_id": ["a", "b", "c"]})
    spent = changed(rows, pd.Series([100.0, 130.0, 50.0]).to_numpy(), pd.Series([100.0, 100.0, 100.0]).to_numpy())
    assert spent.tolist() == [False, True, True]
    r = pd.read_parquet(run / "results.parquet")
    r = r[r["strategy"] == NEVER].copy()
    r["summarizer_input_tokens"] = [1_000] + [0] * (len(r) - 1)  # one dropped summary on one transcript
    e = batch(r, [SAVINGS], 300).estimates[NEVER]["effective_savings"]
    assert e.n == 1 and e.value < 0 and fmt(e, SAVINGS).endswith("(n=1, few)")


# --- --wide: every figure, in tables that fit a terminal; csv for the rest -----------------------------------

def test_wide_keeps_every_figure_within_160_columns(run: Path) -> None:
    code, out = invoke("compare", run, "--wide", "--resamples", "300")
    assert code == 0, out
    lines = out.splitlines()
    assert max(len(x) for x in lines) <= WIDTH
    flat = " ".join(out.split())
    for m in METRICS:  # every metric's title, perhaps wrapped over header lines
        assert all(word in flat for word in m.title.split()), m.title
    assert "(figures, 1 of" in out and "--format csv" in out
    default = invoke("compare", run, "--resamples", "300")[1]
    assert "--format csv: every figure in one table" in " ".join(default.split())
    rows = list(csv.reader(io.StringIO(invoke("compare", run, "--format", "csv", "--resamples", "300")[1])))
    header = rows[0]
    for m in METRICS:
        assert {m.name, f"{m.name}_lo", f"{m.name}_hi", f"{m.name}_n", f"{m.name}_vs_none"} <= set(header)
    never = next(r for r in rows if r[0] == NEVER)
    assert never[header.index("effective_savings")] == "" and never[header.index("effective_savings_n")] == "0"


def test_wide_tables_pack_columns_and_wrap_long_titles() -> None:
    labels = [LABEL, "none"]
    figures = [(f"a figure with a long title number {k}", ["12.3% [1.0%, 20.0%]", "–"]) for k in range(9)]
    lines = wide_tables(labels, [("acted", ["1/2", "0/2"], True)], figures, width=100)
    assert max(len(x) for x in lines) <= 100
    assert sum(x.startswith("(figures, ") for x in lines) >= 2
    labelled = [x for x in lines if x.startswith(("claude-code:", "  large_window=400000"))]
    assert len(labelled) == 2 * sum(x.startswith("(figures, ") for x in lines)  # the label in every table, whole
    assert not any("…" in x for x in lines)
