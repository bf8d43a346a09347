"""What a run derives from its own tables is remembered under exactly them and the code (compbench.run.derived): a
re-run over an unchanged dataset prints the same summary without computing it, anything changed computes it again."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from compbench.cli import cli
from compbench.run import derived
from compbench.run.derived import remembered


def test_an_answer_is_kept_under_its_input_and_the_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []

    def make(value: str) -> str:
        made.append(value)
        return value

    assert remembered(tmp_path, "summary", "abc", lambda: make("one")) == "one"
    assert remembered(tmp_path, "summary", "abc", lambda: make("two")) == "one"  # kept
    assert remembered(tmp_path, "summary", "abd", lambda: make("three")) == "three"  # another input
    assert remembered(tmp_path, "widen", "abc", lambda: make("four")) == "four"  # another derivation
    monkeypatch.setattr(derived, "code_version", lambda: "another compbench")
    assert remembered(tmp_path, "summary", "abc", lambda: make("five")) == "five"  # another code version
    assert remembered(None, "summary", "abc", lambda: make("six")) == "six"  # no cache: nothing kept
    assert made == ["one", "three", "four", "five", "six"]


def test_the_oldest_entries_go_past_the_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(derived, "KEEP", 2)
    for k in range(3):
        remembered(tmp_path, "summary", str(k), lambda: "x")
    assert len(list((tmp_path / derived.DERIVED).glob("*.json"))) == 2


OPTIONS = ["--strategy", "none", "--strategy", "truncate", "--context-window", "3000", "--tokenizer", "chars4",
           "--summarizer", "extractive"]


def test_a_rerun_prints_the_summary_it_remembers_and_a_changed_run_computes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from compbench.decide import summary

    data = tmp_path / "synth"
    made = CliRunner().invoke(cli, ["datasets", "synth", "--n", "4", "--turns", "10", "--out", str(data)])
    assert made.exit_code == 0, made.output
    args = ["run", str(data), *OPTIONS, "--results-cache", str(tmp_path / "cache")]
    first = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "a")])
    assert first.exit_code == 0, first.output
    real = summary.summary_table
    calls: list[Path] = []

    def counted(run: Path) -> str:
        calls.append(run)
        return real(run)

    monkeypatch.setattr(summary, "summary_table", counted)
    again = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "b")])
    assert again.exit_code == 0, again.output
    assert calls == [] and again.stdout.replace("/b\n", "/a\n") == first.stdout
    other = CliRunner().invoke(cli, [*args[:-2], "--context-window", "2999", *args[-2:], "--out", str(tmp_path / "c")])
    assert other.exit_code == 0, other.output
    assert calls == [tmp_path / "c"]  # one token less of window: other tables, computed
