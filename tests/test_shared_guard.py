"""The guard of the tests that read ../shared (conftest): they skip only where ../shared is absent and CI is not
set; under CI, or where ../shared is present but the file is not, they fail; a glob that finds nothing fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import need_shared, shared_glob, shared_present


def test_a_present_path_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    (tmp_path / "a.jsonl").write_text("{}\n")
    assert shared_present(tmp_path / "a.jsonl", tmp_path)
    assert need_shared(tmp_path / "a.jsonl") == tmp_path / "a.jsonl"


def test_absent_shared_outside_ci_may_skip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    assert shared_present(tmp_path / "shared" / "x", tmp_path / "shared") is False


def test_absent_under_ci_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="CI is set"):
        shared_present(tmp_path / "shared" / "x", tmp_path / "shared")


def test_an_empty_ci_variable_is_not_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "")
    assert shared_present(tmp_path / "shared" / "x", tmp_path / "shared") is False


def test_a_file_missing_from_a_present_shared_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    (tmp_path / "shared").mkdir()
    with pytest.raises(pytest.fail.Exception, match="moved or renamed"):
        shared_present(tmp_path / "shared" / "x", tmp_path / "shared")


def test_a_glob_that_finds_nothing_fails(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("{}")
    with pytest.raises(AssertionError, match="would check nothing"):
        shared_glob(tmp_path, "*.jsonl")
    assert shared_glob(tmp_path, "*.json") == [tmp_path / "a.json"]
