"""Every user mistake of issue 15 ends in one line on stderr and exit 2, with nothing half-written."""

from __future__ import annotations

from pathlib import Path

import pytest

from compbench.data import importing
from compbench.data.transcript import Message, Text, Transcript, Usage, to_jsonl
from helpers import main_cli as cli
from helpers import one_line_error


def session(tid: str) -> Transcript:
    return Transcript(tid, "compbench", (
        Message(f"{tid}u", "user", (Text(f"question {tid}"),)),
        Message(f"{tid}a", "assistant", (Text("answer"),), Usage(50, 5)),
    ))


@pytest.fixture
def src(tmp_path: Path) -> Path:
    d = tmp_path / "in"
    d.mkdir()
    (d / "a.jsonl").write_text(to_jsonl(session("t1")), encoding="utf-8")
    return d


def test_import_never_replaces_a_dataset_without_force(src: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "ds"
    assert cli(capsys, monkeypatch, "datasets", "import", src, "--out", out)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    (src / "b.jsonl").write_text(to_jsonl(session("t2")), encoding="utf-8")
    code, stdout, err = cli(capsys, monkeypatch, "datasets", "import", src, "--out", out)
    assert one_line_error(code, err) == (f"{out} is already a dataset; choose another --out, or pass --force to "
                                         "replace it")
    assert stdout == "" and {p.name: p.read_bytes() for p in out.iterdir()} == before
    code, stdout, _ = cli(capsys, monkeypatch, "datasets", "import", src, "--out", out, "--force")
    assert code == 0 and stdout.startswith("imported 2 transcripts")


def test_inspect_of_nothing_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    code, stdout, err = cli(capsys, monkeypatch, "datasets", "inspect", tmp_path / "nonexistent")
    assert one_line_error(code, err) == f"{tmp_path / 'nonexistent'}: no such dataset, file or directory"
    assert stdout == ""
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not a transcript")
    code, stdout, err = cli(capsys, monkeypatch, "datasets", "inspect", tmp_path / "empty")
    assert one_line_error(code, err).endswith("no transcripts found (no transcript file, or none readable)")
    assert stdout == ""


def test_report_on_a_dataset_or_nothing_says_what_it_is(src: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    importing.write_dataset(tmp_path / "ds", [src])
    html = tmp_path / "r.html"
    code, _, err = cli(capsys, monkeypatch, "report", tmp_path / "ds", "--out", html)
    assert one_line_error(code, err).startswith(f"{tmp_path / 'ds'} is a dataset, not a run: replay it first")
    code, _, err = cli(capsys, monkeypatch, "report", tmp_path / "nope", "--out", html)
    assert one_line_error(code, err) == f"{tmp_path / 'nope'}: no such run directory"
    code, _, err = cli(capsys, monkeypatch, "report", src, "--out", html)
    assert one_line_error(code, err).startswith(f"{src} is not a run directory (no manifest.json)")
    assert not html.exists()


def test_report_out_in_a_missing_folder_is_an_error_not_a_new_tree(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "manifest.json").write_text("{}")
    out = tmp_path / "no" / "such" / "r.html"
    code, _, err = cli(capsys, monkeypatch, "report", run_dir, "--out", out)
    assert one_line_error(code, err) == f"{out.parent}: no such folder for --out {out}; create it first"
    assert not (tmp_path / "no").exists()


def test_a_failed_run_leaves_nothing_and_the_next_attempt_is_told_the_truth(
        src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    (src / "b.jsonl").write_text('{"type": "transcript", "format": "compbench"\n', encoding="utf-8")
    out = tmp_path / "run"
    args = ("run", src, "--strategy", "none", "--tokenizer", "chars4", "--quiet", "--out", out)
    code, _, err = cli(capsys, monkeypatch, *args)
    assert one_line_error(code, err).startswith(f"{src / 'b.jsonl'}:1: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]  # no run, no run.partial
    (src / "b.jsonl").unlink()
    (tmp_path / "run.partial").mkdir()  # what a crash (kill -9) leaves: resumable, and said so
    code, _, err = cli(capsys, monkeypatch, *args)
    assert one_line_error(code, err) == (f"{out} has an interrupted run (run.partial); pass --resume {out} to "
                                         "continue it, or --force to start again")
    assert cli(capsys, monkeypatch, *args, "--force")[0] == 0
    code, _, err = cli(capsys, monkeypatch, *args)
    assert one_line_error(code, err) == f"{out} exists; choose another --out, or pass --force to replace it"
