"""Nothing imports with most of its content dropped: read / held (``compbench.data.formats.coverage``) on the real
files, on a file whose format is claimed but whose content the importer does not read, and the measure itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compbench.data.formats import iter_files, read
from compbench.data.formats.coverage import MIN_DROPPED, MIN_RATIO, held, held_value, ratio
from compbench.errors import TranscriptError
from helpers import main_cli


def test_held_counts_each_distinct_string_once_decoded(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text('{"k": "a\\nb", "k2": "\\u00e9t\\u00e9", "k3": ["a\\nb", 7, null], "k": "a\\nb"}')
    assert held(p) == len("k") + len("a\nb") + len("k2") + len("été") + len("k3")  # "a\nb" and "k" once
    assert held_value({"key": "a\nb", "k2": "été", "k3": ["a\nb", 7]}) == 6
    md = tmp_path / "x.md"
    md.write_text("## USER\n\nhi", encoding="utf-8")
    assert held(md) == len("## USER\n\nhi")


def test_every_real_file_reads_well_above_the_rule(transcripts_dir: Path, real_compactions_dir: Path,
                                                   real_logs_dir: Path) -> None:
    """The rule's margin, measured: the lowest real file (a Claude Code session with 2.9 M characters of
    sub-agent progress records) reads 0.17 of what it holds, more than three times the rule."""
    ratios = {}
    for f in iter_files([transcripts_dir, real_compactions_dir, real_logs_dir]):
        r = ratio(f, list(read(f, check=False)))
        if r is not None:
            ratios[f.name] = r
    assert len(ratios) == 54 and min(ratios.values()) > 3 * MIN_RATIO  # the Crush store is no text: not measured


def mostly_unread(path: Path) -> Path:
    """A pi session whose entries are mostly of a type pi's importer does not read (a future entry type with a
    large payload): claimed by structure, almost nothing imported."""
    recs = [{"type": "session", "id": "s1", "cwd": "/w", "timestamp": "2026-01-01T00:00:00Z", "version": 3},
            {"type": "message", "id": "e1", "parentId": None, "message": {"role": "user", "content": "hi"}}]
    recs += [{"type": "future_entry", "id": f"f{i}", "parentId": "e1" if i == 0 else f"f{i - 1}",
              "payload": f"{i} " + "z" * 2_000} for i in range(20)]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def test_an_import_that_drops_most_of_the_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    p = mostly_unread(tmp_path / "s.jsonl")
    with pytest.raises(TranscriptError) as e:
        list(read(p))
    assert "read as pi, it gives" in e.value.expected and "heuristic" in e.value.expected
    code, out, _ = main_cli(capsys, monkeypatch, "datasets", "validate", p)
    assert code == 2 and out.startswith(f"FAIL  {p}: an import that reads the file's content: read as pi")
    code, _, err = main_cli(capsys, monkeypatch, "datasets", "import", p, "--out", tmp_path / "ds")
    assert code == 2 and "read as pi" in err
    ok = tmp_path / "ok.jsonl"
    ok.write_text(p.read_text().replace('"content": "hi"', '"content": "' + "hi " * 9_000 + '"'), encoding="utf-8")
    assert len(list(read(ok))) == 1  # the same file with a long prompt imports
    code, _, err = main_cli(capsys, monkeypatch, "datasets", "import", p, ok, "--out", tmp_path / "ds2",
                            "--on-error", "skip", "--keep-empty")  # its one prompt has no reply
    assert code == 0 and "read as pi" in err  # skipped and said


def test_a_named_format_imports_with_a_warning_and_a_small_file_is_never_refused(tmp_path: Path) -> None:
    p = mostly_unread(tmp_path / "s.jsonl")
    (t,) = read(p, "pi")
    assert any("most of the file was not imported" in w for w in t.warnings)
    small = tmp_path / "small.jsonl"
    small.write_text("".join(p.read_text().splitlines(keepends=True)[:4]), encoding="utf-8")
    (s,) = read(small)  # 4,000 characters unread: under MIN_DROPPED, mostly ids whatever the format
    assert held(small) - 2 < MIN_DROPPED and s.messages
