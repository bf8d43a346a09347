"""Dataset storage (parquet written atomically, streamed back, HF/pandas loadable) and calibration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compbench.data import dataset as ds
from compbench.data import importing
from compbench.data.transcript import (
    Media,
    Message,
    Reasoning,
    RecordedCompaction,
    Text,
    Transcript,
    Usage,
    to_json,
    to_jsonl,
)
from compbench.errors import TranscriptError, UsageError
from compbench.measure.token_accuracy import CalibrationRow, calibrate
from compbench.measure.tokens import TokenCounter
from compbench.measure.usage import p90, pairs
from helpers import assistant, tool, user


def rich(id: str = "t1") -> Transcript:
    """Every part kind, usage, meta, a recorded compaction and a warning: the round trip must keep all."""
    msgs = (
        Message("s", "system", (Text("You are a coding agent."),)),
        user("u1", "fix the bug in app.py"),
        Message("a1", "assistant", (Reasoning("think", encrypted=True), *assistant(
            "a1", "reading", [("c1", "read", {"path": "app.py"}), ("c2", "bash", {"cmd": "ls"})]).parts),
            Usage(1_000, 50, 800, 0, 10), {"model": "m1"}),
        tool("r1", "c1", "print('hi')"),
        tool("r2", "c2", "boom", is_error=True),
        Message("u2", "user", (Text("look"), Media("image", "image/png", b"\x89PNG\x00\xff", "x.png"))),
        Message("a2", "assistant", (Text("done"),), Usage(1_400, 20)),
    )
    return Transcript(id, "compbench", msgs, {"model": "m1", "cwd": "/w"},
                      (RecordedCompaction(5, "pi", "auto", 1_200, "summary text", "", ("u2",)),), ("a warning",))


def simple(id: str, n_turns: int = 1) -> Transcript:
    msgs: list[Message] = []
    for i in range(n_turns):
        msgs += [user(f"{id}u{i}", f"question {i} of {id}"), assistant(f"{id}a{i}", f"answer {i}")]
    return Transcript(id, "compbench", tuple(msgs))


def write_native(path: Path, *ts: Transcript) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(to_jsonl(t) for t in ts), encoding="utf-8")
    return path


# --- writing and reading -------------------------------------------------------------------------------


def test_round_trip_is_lossless_and_summary_columns_are_exact(tmp_path: Path) -> None:
    src = write_native(tmp_path / "src" / "a.jsonl", rich("t1"), simple("t2", 2))
    out = tmp_path / "ds"
    report = importing.write_dataset(out, [tmp_path / "src"])
    assert (report.transcripts, report.formats, report.errors) == (2, {"compbench": 2}, [])
    assert list(importing.iter_transcripts(out)) == [rich("t1"), simple("t2", 2)]
    assert list(importing.iter_transcripts(src)) == [rich("t1"), simple("t2", 2)]  # raw file, on the fly

    df = importing.load_summary(out)
    assert "transcript" not in df.columns
    row = df.iloc[0].to_dict()
    assert row == {"id": "t1", "source": "compbench", "path": "src/a.jsonl", "n_messages": 7, "n_user": 2,
                   "n_assistant": 2, "n_tool": 2, "n_tool_calls": 2, "n_tool_results": 2, "n_compactions": 1,
                   "recorded_input_tokens": 2_400, "recorded_last_input": 1_400, "recorded_max_input": 1_400,
                   "model": "m1", "n_warnings": 1}
    assert df["n_messages"].tolist() == [7, 4]
    assert df["recorded_input_tokens"].tolist() == [2_400, 0]
    # The same summary comes from raw files (path relative to the argument's parent).
    assert importing.load_summary(tmp_path / "src").to_dict("records") == df.to_dict("records")


def test_manifest_and_fingerprint_are_deterministic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ts = [rich("t1"), simple("t2")]
    write_native(tmp_path / "src" / "a.jsonl", *ts)
    importing.write_dataset(tmp_path / "one", [tmp_path / "src"])
    monkeypatch.chdir(tmp_path / "src")  # another working directory, a relative argument: same bytes
    importing.write_dataset(tmp_path / "two", ["."])
    meta = json.loads((tmp_path / "one" / "dataset.json").read_text())
    expected = ds.fingerprint_of(to_json(t) for t in ts)
    boilerplate = meta.pop("boilerplate")
    assert meta == {"format_version": 1, "created_by": "compbench 0.1.0", "n_transcripts": 2,
                    "formats": {"compbench": 2}, "fingerprint": expected, "errors": []}
    assert boilerplate["templates"] == {"lines": {}, "transcripts": {"compbench": 2}}
    assert (tmp_path / "two" / "dataset.json").read_text() == (tmp_path / "one" / "dataset.json").read_text()
    assert ds.fingerprint(tmp_path / "one") == expected
    assert ds.fingerprint(tmp_path / "src") is None
    import hashlib

    assert expected == hashlib.sha256("".join(to_json(t) + "\n" for t in ts).encode()).hexdigest()
    assert ds.fingerprint_of([to_json(ts[1]), to_json(ts[0])]) != expected  # order matters


def test_loads_with_pandas_and_hf_datasets(tmp_path: Path) -> None:
    write_native(tmp_path / "a.jsonl", rich("t1"), simple("t2"))
    importing.write_dataset(tmp_path / "ds", [tmp_path / "a.jsonl"])
    import pandas as pd

    full = pd.read_parquet(tmp_path / "ds" / "data.parquet")
    assert full["transcript"].tolist() == [to_json(rich("t1")), to_json(simple("t2"))]
    assert full["path"].tolist() == ["a.jsonl", "a.jsonl"]
    datasets = pytest.importorskip("datasets")
    hf = datasets.load_dataset("parquet", data_files=str(tmp_path / "ds" / "data.parquet"),
                               cache_dir=str(tmp_path / "hf-cache"), split="train")
    assert hf.num_rows == 2
    assert hf[0]["id"] == "t1" and hf[0]["n_tool_calls"] == 2
    assert hf[1]["transcript"] == to_json(simple("t2"))


def test_rows_are_written_in_bounded_groups_and_streamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow.parquet as pq

    ts = [simple(f"t{i}") for i in range(5)]
    write_native(tmp_path / "a.jsonl", *ts)
    monkeypatch.setattr(importing, "ROW_GROUP_ROWS", 2)
    importing.write_dataset(tmp_path / "rows", [tmp_path / "a.jsonl"])
    assert pq.ParquetFile(tmp_path / "rows" / "data.parquet").num_row_groups == 3  # 2 + 2 + 1
    monkeypatch.setattr(importing, "ROW_GROUP_ROWS", 64)
    monkeypatch.setattr(importing, "ROW_GROUP_BYTES", 1)  # every transcript exceeds it: one per group
    importing.write_dataset(tmp_path / "bytes", [tmp_path / "a.jsonl"])
    assert pq.ParquetFile(tmp_path / "bytes" / "data.parquet").num_row_groups == 5

    # Reading asks pyarrow for batches of READ_BATCH_ROWS transcript payloads only.
    calls: list[tuple[int, list[str]]] = []
    original = pq.ParquetFile.iter_batches

    def spy(self: pq.ParquetFile, batch_size: int, columns: list[str]):  # type: ignore[no-untyped-def]
        calls.append((batch_size, columns))
        return original(self, batch_size=batch_size, columns=columns)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spy)
    it = importing.iter_transcripts(tmp_path / "rows")
    assert next(it) == ts[0]
    assert calls == [(ds.READ_BATCH_ROWS, ["transcript"])]
    assert list(it) == ts[1:]


def test_failed_import_leaves_nothing_and_keeps_the_old_dataset(tmp_path: Path) -> None:
    good = write_native(tmp_path / "in" / "a.jsonl", simple("t1"))
    bad = tmp_path / "in" / "b.jsonl"
    bad.write_text(to_jsonl(simple("t2")).splitlines()[0] + "\n{not json\n", encoding="utf-8")
    out = tmp_path / "ds"
    with pytest.raises(TranscriptError) as e:
        importing.write_dataset(out, [tmp_path / "in"])
    assert (e.value.path, e.value.line) == (str(bad), 2)
    assert e.value.expected.startswith("a JSON object")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]  # no dataset, no temporary sibling

    importing.write_dataset(out, [good])
    (out / "gold_facts.jsonl").write_text("{}\n")  # a file kept beside the data
    before = (out / "dataset.json").read_text()
    with pytest.raises(UsageError, match=r"is already a dataset; .* pass --force to replace it"):
        importing.write_dataset(out, [good])  # never replaced silently
    with pytest.raises(TranscriptError):
        importing.write_dataset(out, [tmp_path / "in"], force=True)
    assert (out / "dataset.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", "in"]

    importing.write_dataset(out, [tmp_path / "in"], on_error="skip", force=True)  # a rebuild keeps the file beside it
    assert (out / "gold_facts.jsonl").read_text() == "{}\n"


def test_skip_records_errors_in_the_manifest(tmp_path: Path) -> None:
    write_native(tmp_path / "in" / "a.jsonl", simple("t1"))
    (tmp_path / "in" / "b.jsonl").write_text(to_jsonl(simple("t2")).splitlines()[0] + "\n{not json\n")
    (tmp_path / "in" / "c.json").write_text("[1, 2]")
    warnings: list[str] = []
    report = importing.write_dataset(tmp_path / "ds", [tmp_path / "in"], on_error="skip", warn=warnings.append)
    assert report.transcripts == 1
    errors = json.loads((tmp_path / "ds" / "dataset.json").read_text())["errors"]
    assert [(Path(e["file"]).name, e["line"]) for e in errors] == [("b.jsonl", 2), ("c.json", 1)]
    assert errors[0]["expected"] == "a JSON object (Expecting property name enclosed in double quotes at column 2)"
    assert warnings == [f"skipped {tmp_path / 'in' / 'b.jsonl'}:2: {errors[0]['expected']}",
                        f"skipped {tmp_path / 'in' / 'c.json'}:1: {errors[1]['expected']}"]
    assert [t.id for t in importing.iter_transcripts(tmp_path / "ds")] == ["t1"]


def test_duplicates_files_and_ids(tmp_path: Path) -> None:
    a = write_native(tmp_path / "in" / "a.jsonl", simple("t1"))
    write_native(tmp_path / "in" / "b.jsonl", simple("t1", 2))
    # The same file reached twice is read once.
    assert importing.write_dataset(tmp_path / "once", [a, a]).transcripts == 1
    with pytest.raises(TranscriptError, match=r"b\.jsonl: a transcript id not imported before \('t1' also "
                                              r"comes from in/a\.jsonl\)"):
        importing.write_dataset(tmp_path / "dup", [tmp_path / "in"])
    report = importing.write_dataset(tmp_path / "dup", [tmp_path / "in"], on_error="skip")
    assert report.transcripts == 1 and report.errors[0]["file"] == "in/b.jsonl"


def test_refuses_bad_outputs_and_inputs_before_work(tmp_path: Path) -> None:
    src = write_native(tmp_path / "a.jsonl", simple("t1"))
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    with pytest.raises(UsageError, match="is not a compbench dataset"):
        importing.write_dataset(other, [src])
    assert [p.name for p in other.iterdir()] == ["keep.txt"]
    with pytest.raises(UsageError, match="is a file"):
        importing.write_dataset(src, [src])
    with pytest.raises(UsageError, match="nothing to import"):
        importing.write_dataset(tmp_path / "empty", [tmp_path / "notes"])
    assert not (tmp_path / "empty").exists()
    with pytest.raises(UsageError, match="no such dataset, file or directory"):
        list(importing.iter_transcripts(tmp_path / "missing"))


def test_a_dataset_is_an_import_source_and_its_files_are_not_reimported(tmp_path: Path) -> None:
    write_native(tmp_path / "in" / "a.jsonl", simple("t1"))
    importing.write_dataset(tmp_path / "in" / "ds", [tmp_path / "in" / "a.jsonl"])
    # in/ds/dataset.json is not tried as a transcript; in/ds as an argument yields its rows
    assert importing.write_dataset(tmp_path / "copy", [tmp_path / "in"]).transcripts == 1
    assert [t.id for t in importing.iter_transcripts(tmp_path / "copy")] == ["t1"]
    importing.write_dataset(tmp_path / "copy2", [tmp_path / "in" / "ds"])
    assert ds.fingerprint(tmp_path / "copy2") == ds.fingerprint(tmp_path / "in" / "ds")


def test_newer_manifest_is_refused(tmp_path: Path) -> None:
    write_native(tmp_path / "a.jsonl", simple("t1"))
    importing.write_dataset(tmp_path / "ds", [tmp_path / "a.jsonl"])
    meta = tmp_path / "ds" / "dataset.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "format_version": 2}))
    with pytest.raises(TranscriptError, match="dataset format_version <= 1, found 2"):
        list(importing.iter_transcripts(tmp_path / "ds"))


def test_import_stays_light() -> None:
    import subprocess
    import sys

    code = ("import sys, compbench.data.dataset, compbench.measure.token_accuracy, compbench.cli.datasets;"
            "print(sorted(m for m in ('pandas', 'pyarrow', 'datasets', 'litellm') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_real_pi_and_opencode_rows(tmp_path: Path, transcripts_dir: Path) -> None:
    pytest.importorskip("compbench.data.formats.pi")
    pytest.importorskip("compbench.data.formats.opencode")
    report = importing.write_dataset(tmp_path / "ds", [transcripts_dir / "pi", transcripts_dir / "opencode"])
    assert report.formats == {"opencode": 2, "pi": 1}
    rows = {r["source"] + ":" + r["id"][:12]: r for r in importing.load_summary(tmp_path / "ds").to_dict("records")}
    pi = rows["pi:ffae836b-942"]
    assert pi["path"] == "pi/pi-mono__before-compaction.jsonl"
    assert [pi[k] for k in ("n_messages", "n_user", "n_assistant", "n_tool", "n_tool_calls", "n_compactions",
                            "recorded_input_tokens", "recorded_last_input", "recorded_max_input", "model")] == [
        990, 58, 484, 448, 454, 2, 56_382_684, 167_988, 184_915, "claude-opus-4-5"]
    oc = rows["opencode:ses_39b7f9e8"]
    assert [oc[k] for k in ("n_messages", "n_tool_calls", "n_compactions", "recorded_max_input", "model")] == [
        70, 47, 1, 118_767, "gpt-5.3-codex"]
    # argument order, then file order; the round trip through parquet is lossless on real data too
    read = importing.iter_transcripts
    assert list(read(tmp_path / "ds")) == list(read(transcripts_dir / "pi")) + list(read(transcripts_dir / "opencode"))


# --- calibration ---------------------------------------------------------------------------------------


def said(id: str, role: str, chars: int, usage: int | None = None, **meta: str) -> Message:
    """A message of ``chars`` characters: chars/4 tokens exactly when ``chars`` is a multiple of 4."""
    return Message(id, role, (Text("x" * chars),), None if usage is None else Usage(usage), meta)  # type: ignore[arg-type]


def calibration_set() -> list[Transcript]:
    a = Transcript("a", "x", (
        said("u0", "user", 40), said("a0", "assistant", 20, 110),        # counted 10: (110, 10), diff 100
        said("u1", "user", 80), said("a1", "assistant", 20, 139),        # counted 35: diff 104
        said("u2", "user", 40), said("a2", "assistant", 20, 141),        # counted 50: diff 91
        said("a3", "assistant", 20), said("a4", "assistant", 20, 0),     # no usage / zero input: not calls
    ))
    b = Transcript("b", "x", (
        said("u0", "user", 400), said("a0", "assistant", 20, 300),       # counted 100: diff 200
        said("u1", "user", 40), said("a1", "assistant", 20, 999),        # after the compaction: excluded
    ), compactions=(RecordedCompaction(2, "pi"),))
    c = Transcript("c", "y", (
        said("u0", "user", 40), said("s", "user", 400, compaction="summary"),  # compaction machinery: skipped
        said("a0", "assistant", 20, 60),                                 # counted 10: diff 50
    ))
    return [a, b, c]


def test_pairs_stop_at_the_first_compaction_and_skip_machinery() -> None:
    counter = TokenCounter("chars4", message_overhead=0)
    a, b, c = calibration_set()
    assert pairs(a, counter) == [(110, 10), (139, 35), (141, 50)]
    assert pairs(b, counter) == [(300, 100)]
    assert pairs(c, counter) == [(60, 10)]
    assert pairs(a, TokenCounter("chars4", message_overhead=4)) == [(110, 14), (139, 47), (141, 70)]


def test_calibrate_hand_computed_medians() -> None:
    cal = calibrate(calibration_set(), ["chars4-round", "chars4"], message_overhead=0)
    rows = cal.rows
    # each session its own overhead: a's diffs 100, 104, 91 -> 100; b's 200; c's 50. Errors |c + oh - r| / r:
    # source x: 0/110, 4/139, 9/141 (a), 0/300 (b) -> median (0 + 4/139) / 2; p90 = ceil(0.9 * 4) = 4th = 9/141;
    # the overhead column is the median of the sessions' overheads (100, 200)
    x = CalibrationRow("chars4-round", "x", 4, 150.0, (0 + 4 / 139) / 2, 9 / 141, 2)
    y = CalibrationRow("chars4-round", "y", 1, 50.0, 0.0, 0.0, 1)
    assert [r.tokenizer for r in rows] == ["chars4-round", "chars4-round", "chars4", "chars4"]
    assert rows[0] == x and rows[1] == y
    assert rows[2:] == [CalibrationRow("chars4", "x", *vars_of(x)), CalibrationRow("chars4", "y", *vars_of(y))]
    assert cal.corrections == []  # corrections are of the default tokenizer's counts only
    assert calibrate([], ["chars4"]).rows == []
    assert calibrate(iter(calibration_set()), ["chars4"], 0).rows == rows[2:]  # a one-pass iterator suffices


def vars_of(r: CalibrationRow) -> tuple[int, float, float, float, int]:
    return r.calls, r.overhead, r.median_error, r.p90_error, r.sessions


def test_p90_is_nearest_rank() -> None:
    assert p90([5.0]) == 5.0
    assert p90([float(i) for i in range(10, 0, -1)]) == 9.0  # ceil(9.0) = 9th of 1..10
    assert p90([float(i) for i in range(1, 21)]) == 18.0
    assert p90([float(i) for i in range(1, 12)]) == 10.0  # ceil(9.9) = 10th of 1..11


def test_calibration_on_real_pi(transcripts_dir: Path) -> None:
    pytest.importorskip("compbench.data.formats.pi")
    rows = calibrate(importing.iter_transcripts(transcripts_dir / "pi"), ["o200k_base", "chars4"]).rows
    assert [(r.tokenizer, r.source, r.calls, r.overhead) for r in rows] == [
        ("o200k_base", "pi", 171, 30_122.0), ("chars4", "pi", 171, 31_235.0)]
    assert round(rows[0].median_error, 3) == 0.046 and round(rows[0].p90_error, 3) == 0.188


def test_a_dataset_carries_its_boilerplate_scan_and_a_run_reads_it_instead_of_the_transcripts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan made while importing is the one a run would make; a run over the dataset reads it from
    dataset.json (not a transcript read); a dataset scanned under other settings, or raw files, are scanned."""
    from compbench.data import boilerplate as bp

    template = "Please follow the repository contribution rules exactly"
    ts = [Transcript(f"t{i}", "compbench", (user(f"u{i}", f"{template}\ntask number {i} is here"),
                                              assistant(f"a{i}", "ok"))) for i in range(4)]
    write_native(tmp_path / "src" / "a.jsonl", *ts)
    importing.write_dataset(tmp_path / "data", [tmp_path / "src"])
    fresh = bp.scan(importing.iter_transcripts(tmp_path / "data")).to_json()
    assert fresh["lines"] == {"compbench": [template.lower()]}

    def unread(*a: object, **k: object) -> None:
        raise AssertionError("the transcripts were read")

    with monkeypatch.context() as m:
        m.setattr(importing, "iter_transcripts", unread)
        assert importing.scan_dataset(str(tmp_path / "data")) == fresh
    assert importing.scan_dataset(str(tmp_path / "src")) == fresh  # raw files: scanned
    with monkeypatch.context() as m:
        m.setattr(bp, "SHARE", 0.9)  # today's scan differs from the stored one: scanned again
        assert importing.scan_dataset(str(tmp_path / "data")) == bp.scan(ts).to_json()
        m.setattr(importing, "iter_transcripts", unread)
        with pytest.raises(AssertionError, match="were read"):
            importing.scan_dataset(str(tmp_path / "data"))
