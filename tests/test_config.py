"""One configuration, one precedence: a flag > compbench.toml / [tool.compbench] > the defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from compbench.cli import cli
from compbench.config import apply_to_spec, find, strategy_block
from compbench.errors import UsageError


@pytest.fixture
def data(tmp_path: Path) -> Path:
    from compbench.data.formats.native import write
    from compbench.data.synth import generate

    d = tmp_path / "data"
    d.mkdir()
    write(list(generate(2, seed=2, turns=20)), d / "synth.jsonl")
    return d


def invoke(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def spec_of(run: Path) -> dict[str, object]:
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    return {"strategies": [s["label"] for s in manifest["strategies"]], **manifest["spec"]}


def test_a_flag_beats_the_file_which_beats_the_default(tmp_path: Path, data: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[tool.compbench.run]\ntokenizer = 'chars4'\ncontext-window = 6000\n"
                                            "system_tokens = 'auto'\n\n[tool.compbench.strategy.pi]\n"
                                            "keep_recent_tokens = 2000\n", encoding="utf-8")
    monkeypatch.chdir(project / "sub")  # found in a parent directory
    base = ("run", data, "--strategy", "pi", "--strategy", "none", "--quiet", "--out")
    assert invoke(*base, tmp_path / "a").exit_code == 0
    a = spec_of(tmp_path / "a")
    assert a["tokenizer"] == "chars4" and a["limits"] == {"context_window": 6000, "max_output": 16384,
                                                           "max_input": None}
    assert a["strategies"] == ["pi:keep_recent_tokens=2000", "none"]
    out = invoke(*base[:3], "pi:keep_recent_tokens=3000", "--strategy", "none", "--tokenizer", "cl100k_base",
                 "--quiet", "--out", tmp_path / "b")
    assert out.exit_code == 0, out.output
    b = spec_of(tmp_path / "b")
    assert b["tokenizer"] == "cl100k_base" and b["strategies"] == ["pi:keep_recent_tokens=3000", "none"]
    monkeypatch.chdir(tmp_path)  # no configuration: the defaults
    assert invoke(*base, tmp_path / "c", "--context-window", "6000").exit_code == 0
    c = spec_of(tmp_path / "c")
    assert c["tokenizer"] == "o200k_base" and c["strategies"] == ["pi", "none"]


def test_help_shows_the_configured_defaults_of_every_replaying_command(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "compbench.toml").write_text("[run]\nsummarizer = 'extractive'\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.compbench.run]\nsummarizer = 'mock'\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # compbench.toml comes first
    for command in ("run", "tune"):
        text = " ".join(invoke(command, "--help").output.split())
        assert "[default: extractive]" in text, command


def test_an_unknown_key_is_an_error_not_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "compbench.toml").write_text("[run]\ntokeniser = 'chars4'\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    out = invoke("run", "--out", tmp_path / "r")
    assert out.exit_code != 0 and isinstance(out.exception, UsageError)
    assert "[run] has no option 'tokeniser'; did you mean 'tokenizer'?" in str(out.exception)


def test_every_run_option_is_a_tune_option() -> None:
    """tune replays as run does: every option that shapes a replay is offered by both."""
    from compbench.cli.options import EXECUTION_NAMES, REPLAY_NAMES

    def options(name: str) -> set[str]:
        command = cli.get_command(None, name)  # type: ignore[arg-type]
        assert command is not None
        return {p.name for p in command.params if p.name}

    run, tune = options("run"), options("tune")
    assert set(REPLAY_NAMES) | set(EXECUTION_NAMES) <= run & tune
    # run's own: its strategies, resuming, quiet, the settings sweep it adds (tune sweeps its own grid) and the
    # results cache (a run's rows are kept per transcript and configuration; tune's grid is replayed afresh)
    assert run - tune == {"strategies", "resume_dir", "quiet", "no_settings", "no_cache", "rebuild_cache",
                          "results_cache"}


def test_a_tune_block_reads_back_as_the_configuration_it_prints(tmp_path: Path) -> None:
    for best in ("pi:preset=current,keep_recent_tokens=1000", "opencode:protected_tools=skill|read,prune=false",
                 "round-chained:model_context_limit=none", "pipeline:stages=truncate>claude-code,2.preset=current"):
        block = strategy_block(best)
        (tmp_path / "pyproject.toml").write_text(block + "\n", encoding="utf-8")
        name = best.partition(":")[0]
        from compbench.strategies import resolve

        assert resolve(apply_to_spec(find(tmp_path), name)).label == resolve(best).label, block
