"""``--source`` / ``--where`` on run, tune, compare and report (issue 31): one tool's logs, or a slice of them, without
importing them again; the filter is the run's (a resumed run keeps it), and a bad one is one line and exit 2."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from compbench.cli import cli
from compbench.data.synth import generate
from helpers import invoke, register_keep_last

REPLAY = ["--context-window", "8000", "--tokenizer", "chars4", "--token-correction", "none"]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six sessions, three of Claude Code (two long) and three of Codex, in one native file."""
    from compbench.data.formats.native import write

    register_keep_last()
    long = list(generate(4, seed=3, turns=30, log_lines=30, code_lines=40))
    short = list(generate(2, seed=5, turns=6, log_lines=3, code_lines=3))
    out = []
    for k, t in enumerate(long + short):
        src, model = ("claude-code", "claude-sonnet-4-5") if k % 2 else ("codex", "gpt-5")
        out.append(replace(t, id=f"s{k}", source=src, meta={**t.meta, "model": model}))
    path = tmp_path_factory.mktemp("select") / "d.jsonl"
    write(out, path)
    return path


def ids(run: Path) -> set[str]:
    return set(pd.read_parquet(run / "results.parquet")["transcript_id"])


def test_run_replays_only_the_selected_transcripts_and_records_the_filter(data: Path, tmp_path: Path) -> None:
    code, out = invoke("run", data, "--strategy", "none", "--strategy", "test-keep-last", *REPLAY,
                       "--source", "claude code", "--where", "steps>=10", "--out", tmp_path / "r")
    assert code == 0, out
    assert ids(tmp_path / "r") == {"s1", "s3"}  # Claude Code's long sessions (s5 is short)
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["spec"]["select"] == 'source="claude code" and steps>=10'
    assert manifest["dataset"]["transcripts"] == 2
    assert "transcripts: the 2 of" in out and "where source=\"claude code\" and steps>=10" in out
    code, out = invoke("run", data, "--strategy", "none", *REPLAY, "--source", "goose", "--out", tmp_path / "g")
    assert code == 2 and "matches 'source=goose' (it holds source: codex, claude-code)" in out
    assert not (tmp_path / "g").exists()


def test_bad_filters_are_one_line_before_any_work(data: Path, tmp_path: Path) -> None:
    for args, said in ((("--where", "steps"), "cannot read 'steps'"),
                       (("--where", "window>=200k"), "no field 'window' before a replay"),
                       (("--where", "modle~x"), "did you mean 'model'")):
        code, out = invoke("run", data, "--strategy", "none", *REPLAY, *args, "--out", tmp_path / "x")
        assert code == 2 and said in out and len(out.strip().splitlines()) == 1, out
        assert not (tmp_path / "x").exists()


def test_a_resumed_run_keeps_its_filter_and_names_a_different_one(data: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from collections.abc import Iterator

    from compbench.cli.options import spec_of
    from compbench.data.importing import iter_transcripts
    from compbench.data.transcript import Transcript
    from compbench.run.write import write_run
    from compbench.store import rundir

    monkeypatch.setattr(rundir, "BATCH", 1)
    replay = {"summarizer": "calibrated", "model": None, "context_window": 8000, "max_output": None,
              "tokenizer": "chars4", "message_overhead": 4, "token_correction": "none", "system_tokens": None,
              "cache_ttl": "5m", "price_model": None, "prices_file": None, "api_base": None, "api_key": None,
              "cache_dir": None}
    spec = spec_of(("none",), replay, str(data), "source=codex")

    def stop_after(n: int) -> Iterator[Transcript]:
        for k, t in enumerate(iter_transcripts(str(data))):
            if k == n:
                raise RuntimeError("interrupted")
            yield t

    out = tmp_path / "r"
    with pytest.raises(RuntimeError):
        write_run(out, spec, str(data), stop_after(3))  # s0 and s2 committed (s1 passed over)
    code, text = invoke("run", "--resume", out, "--source", "claude-code")
    assert code == 2 and "--source/--where 'source=codex' in the run, 'source=claude-code' given" in text
    code, text = invoke("run", "--resume", out, "--quiet")
    assert code == 0, text
    assert ids(out) == {"s0", "s2", "s4"}  # the run's own filter, without naming it again


def test_compare_and_report_select_from_a_finished_run(data: Path, tmp_path: Path) -> None:
    run = tmp_path / "r"
    code, out = invoke("run", data, "--strategy", "none", "--strategy", "test-keep-last", *REPLAY, "--out", run)
    assert code == 0, out
    code, out = invoke("compare", run, "--source", "codex", "--where", "model=gpt-*", "--resamples", "300")
    assert code == 0, out
    assert out.startswith(f"transcripts: 3 of 6 in {run}, those where source=codex and model=gpt-*")
    js = json.loads(invoke("compare", run, "--source", "codex", "--format", "json", "--resamples", "300")[1])
    assert js["test-keep-last"]["acted"].endswith("/3")
    code, out = invoke("compare", run, "--where", "window<8000", "--resamples", "300")
    assert code == 2 and "matches 'window<8000' (it holds window: 8000)" in out
    code, out = invoke("compare", run, "--where", "compactions>=1", "--resamples", "300")
    assert code == 2 and "compactions differs between the strategies of a transcript" in out
    two = json.loads(invoke("compare", run, run, "--source", "claude-code", "--format", "json",
                            "--resamples", "300")[1])
    assert two["strategies"]["test-keep-last"]["effective_savings"]["n"] <= 3
    html = tmp_path / "codex.html"
    code, out = invoke("report", run, "--out", html, "--source", "codex")
    assert code == 0, out
    text = html.read_text()
    assert "3 of 6 transcripts, those where source=codex" in text
    code, out = invoke("report", run, "--out", tmp_path / "x.html", "--where", "steps>")
    assert code == 2 and "cannot read" in out and not (tmp_path / "x.html").exists()


def test_tune_sweeps_one_tools_logs(data: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["tune", str(data), "--strategy", "test-keep-last", "--grid", "keep=2,4",
                                 *REPLAY, "--source", "claude-code", "--out", str(tmp_path / "t"),
                                 "--resamples", "300"])
    assert r.exit_code == 0, r.output
    assert ids(tmp_path / "t") == {"s1", "s3", "s5"}
    assert "the transcripts where source=claude-code" in r.stderr


def test_the_source_that_matched_nothing_is_named_by_run_compare_and_report(data: Path, tmp_path: Path) -> None:
    """``--where 'source=codex|pi'`` where no pi log exists: the codex logs are replayed and the pi alternative is
    said to match nothing, before the run (from the dataset's scan), once."""
    run = tmp_path / "r"
    r = CliRunner().invoke(cli, ["run", str(data), "--strategy", "none", *REPLAY, "--where", "source=codex|pi",
                                 "--out", str(run), "--quiet"])
    assert r.exit_code == 0, r.output
    assert r.stderr.splitlines().count("note: source=codex|pi: pi matched no transcript") == 1, r.stderr
    assert ids(run) == {"s0", "s2", "s4"}
    r = CliRunner().invoke(cli, ["run", str(data), "--strategy", "none", *REPLAY, "--where",
                                 "model=gpt-5|o3 and source=codex", "--out", str(tmp_path / "m"), "--quiet"])
    assert r.exit_code == 0 and "note: model=gpt-5|o3: o3 matched no transcript" in r.stderr, r.output
    for command in (["compare", str(run), "--resamples", "300"],
                    ["report", str(run), "--out", str(tmp_path / "r.html")]):
        r = CliRunner().invoke(cli, [*command, "--source", "codex", "--source", "goose"])
        assert r.exit_code == 0, r.output
        assert "note: source=codex|goose: goose matched no transcript" in r.stderr
