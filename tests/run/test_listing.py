"""A dataset's transcripts by reference (compbench.run.listing): an unchanged data file is not parsed again, a changed
one always is (at each boundary of its identity), and a worker reads the transcripts it replays itself."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from compbench.data import dataset as ds
from compbench.data.synth import generate
from compbench.data.transcript import Message, Text, Transcript, to_json
from compbench.errors import TranscriptError
from compbench.run import listing
from compbench.run.listing import Ref, fresh, hashed
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits

TABLES = ("results", "steps", "compactions", "prunes", "facts")
SPEC = RunSpec(strategies=("none", "truncate"), limits=ModelLimits(6_000, 1_000), tokenizer="chars4")


def hand_made(text: str, tid: str = "t1") -> Transcript:
    return Transcript(tid, "compbench", (Message("m1", "user", (Text(text),)),
                                         Message("m2", "assistant", (Text("done"),))))


def write_dataset(d: Path, transcripts: list[Transcript], group: int = 64) -> Path:
    """A dataset directory written by hand, uncompressed: one character changed in a payload keeps the file's size."""
    d.mkdir(parents=True, exist_ok=True)
    (d / ds.META_FILE).write_text(json.dumps({"format_version": 1}))
    table = pa.table({"transcript": pa.array([to_json(t) for t in transcripts], pa.large_string())})
    tmp = d / "tmp.parquet"
    pq.write_table(table, tmp, compression="none", use_dictionary=False, write_statistics=False, row_group_size=group)
    tmp.replace(d / ds.DATA_FILE)  # a new inode, as an import writes it
    return d / ds.DATA_FILE


@pytest.fixture
def unparsed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the transcripts listing parses."""
    parsed: list[int] = []
    real = listing._parse

    def counting(payload: Any) -> Any:
        parsed.append(1)
        return real(payload)

    monkeypatch.setattr(listing, "_parse", counting)
    monkeypatch.setattr(listing, "RACY_SECONDS", 0.0)  # files written by the test a moment ago
    return parsed


def test_refs_say_what_reading_would(tmp_path: Path) -> None:
    ts = list(generate(5, seed=2, turns=6))
    write_dataset(tmp_path / "d", ts, group=2)  # rows 1|2 and 3|4 at the edges of row groups
    refs = listing.listing(tmp_path / "d", tmp_path / "cache")
    assert [r.id for r in refs] == [t.id for t in ts] and [r.row for r in refs] == [0, 1, 2, 3, 4]
    assert [(r.digest, r.size) for r in refs] == [hashed(t) for t in ts]
    assert [to_json(r.load()) for r in reversed(refs)] == [to_json(t) for t in reversed(ts)]


def test_an_unchanged_dataset_is_not_parsed_again(tmp_path: Path, unparsed: list[int],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    write_dataset(tmp_path / "d", [hand_made("alpha"), hand_made("beta", "t2")])
    first = listing.listing(tmp_path / "d", tmp_path / "cache")
    assert len(unparsed) == 2
    monkeypatch.setattr(listing, "file_hash", lambda p: pytest.fail("hashed an unchanged file"))
    assert listing.listing(tmp_path / "d", tmp_path / "cache") == first and len(unparsed) == 2


def test_a_touched_file_of_the_same_bytes_is_hashed_not_parsed(tmp_path: Path, unparsed: list[int]) -> None:
    data = write_dataset(tmp_path / "d", [hand_made("alpha")])
    first = listing.listing(tmp_path / "d", tmp_path / "cache")
    st = data.stat()
    os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    again = listing.listing(tmp_path / "d", tmp_path / "cache")
    assert len(unparsed) == 1 and [r.digest for r in again] == [r.digest for r in first]
    assert again[0].identity == listing.identity(data)  # kept under its new identity: trusted without hashing next


@pytest.mark.parametrize(("new_text", "same_size"), [
    ("alphb", True),  # one character changed: same size, the mtime set back to the old one
    ("alphab", False),  # one character more: a different size at the same mtime
])
def test_a_changed_file_is_read_again_even_at_the_same_size_or_mtime(tmp_path: Path, unparsed: list[int],
                                                                    new_text: str, same_size: bool) -> None:
    data = write_dataset(tmp_path / "d", [hand_made("alpha")])
    old = data.stat()
    first = listing.listing(tmp_path / "d", tmp_path / "cache")
    write_dataset(tmp_path / "d", [hand_made(new_text)])
    os.utime(data, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert (data.stat().st_size == old.st_size) is same_size and data.stat().st_mtime_ns == old.st_mtime_ns
    again = listing.listing(tmp_path / "d", tmp_path / "cache")
    assert len(unparsed) == 2
    assert again[0].digest == hashed(hand_made(new_text))[0] != first[0].digest


KEPT = {"identity": [100, 5_000, 5_000, 7], "racy": False, "sha256": "same"}


@pytest.mark.parametrize(("now", "racy", "content", "holds"), [
    ((100, 5_000, 5_000, 7), False, "other", True),  # the same identity: trusted, the bytes never hashed
    ((100, 5_000, 5_000, 7), True, "other", False),  # the same identity, listed while racy: the bytes decide
    ((100, 5_000, 5_000, 7), True, "same", True),
    ((100, 5_001, 5_000, 7), False, "other", False),  # the mtime 1 ns on, the size the same
    ((101, 5_000, 5_000, 7), False, "other", False),  # the size 1 byte more, the mtime the same
    ((99, 5_000, 5_000, 7), False, "other", False),  # 1 byte less
    ((100, 5_000, 5_001, 7), False, "other", False),  # written with the mtime set back: the ctime moved
    ((100, 5_000, 5_000, 8), False, "other", False),  # replaced by another file (a rename)
    ((100, 5_001, 5_001, 7), False, "same", True),  # touched, the same bytes
])
def test_a_listing_holds_at_its_identity_or_its_bytes(now: tuple[int, ...], racy: bool, content: str,
                                                      holds: bool) -> None:
    asked: list[int] = []

    def bytes_hash() -> str:
        asked.append(1)
        return content

    assert fresh({**KEPT, "racy": racy}, now, bytes_hash) is holds
    assert bool(asked) is (racy or now != tuple(KEPT["identity"]))


@pytest.mark.parametrize(("age", "racy"), [(2.0, True), (2.000_001, False), (1.999_999, True)])
def test_a_file_written_just_before_its_listing_is_racy(age: float, racy: bool) -> None:
    now = 10**12
    written = now - int(age * 1e9)
    assert listing._racy((1, written, written, 1), now) is racy


def test_a_dataset_imported_again_with_one_more_log_parses_only_that_log(tmp_path: Path, unparsed: list[int]) -> None:
    logs = [hand_made("alpha"), hand_made("beta", "t2"), hand_made("gamma", "t3")]
    write_dataset(tmp_path / "mine", logs[:2])
    listing.listing(tmp_path / "mine", tmp_path / "cache")
    again = [logs[2], *logs[:2]]  # the new one first
    refs = listing.listing(write_dataset(tmp_path / "again", again).parent, tmp_path / "cache")
    assert len(unparsed) == 3  # two, then the new one
    assert [(r.id, r.row, r.digest) for r in refs] == [(t.id, k, hashed(t)[0]) for k, t in enumerate(again)]
    assert [to_json(r.load()) for r in refs] == [to_json(t) for t in again]


def test_a_ref_to_a_file_written_since_is_one_line(tmp_path: Path) -> None:
    write_dataset(tmp_path / "d", [hand_made("alpha")])
    (ref,) = listing.listing(tmp_path / "d", tmp_path / "cache")
    write_dataset(tmp_path / "d", [hand_made("gamma")])
    with pytest.raises(TranscriptError, match="it was written since: run again"):
        ref.load()


def test_no_listing_is_kept_when_told_not_to(tmp_path: Path) -> None:
    write_dataset(tmp_path / "d", [hand_made("alpha")])
    listing.listing(tmp_path / "d", tmp_path / "cache", keep=False)
    assert not (tmp_path / "cache").exists()


def _tables(out: Path) -> dict[str, bytes]:
    return {t: (out / f"{t}.parquet").read_bytes() for t in TABLES}


@pytest.mark.parametrize(("workers", "concurrency"), [(1, 1), (2, 1), (1, 3)])
def test_workers_read_their_own_transcripts_and_write_the_same_bytes(tmp_path: Path, workers: int, concurrency: int,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    ts = list(generate(6, seed=5, turns=10, log_lines=6, code_lines=6))
    write_dataset(tmp_path / "d", ts, group=2)
    write_run(tmp_path / "whole", SPEC, "d", ts)
    refs = listing.listing(tmp_path / "d", tmp_path / "cache")
    main, real = os.getpid(), listing.read_row

    def elsewhere(ref: Ref) -> Transcript:
        assert workers == 1 or os.getpid() != main, "a transcript read in the main process"
        return real(ref)

    monkeypatch.setattr(listing, "read_row", elsewhere)  # the workers are forked with it
    write_run(tmp_path / "refs", SPEC, "d", refs, workers=workers, concurrency=concurrency)
    assert _tables(tmp_path / "refs") == _tables(tmp_path / "whole")


OPTIONS = ["--strategy", "none", "--strategy", "truncate", "--context-window", "3000", "--tokenizer", "chars4",
           "--summarizer", "extractive"]


def test_a_run_reads_the_same_bytes_with_and_without_the_cache_and_parses_nothing_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from compbench.cli import cli

    write_dataset(tmp_path / "d", list(generate(4, seed=6, turns=10)))
    cache = ["--results-cache", str(tmp_path / "cache")]
    for name, extra in (("plain", ["--no-cache"]), ("cold", cache)):
        r = CliRunner().invoke(cli, ["run", str(tmp_path / "d"), *OPTIONS, *extra, "--out", str(tmp_path / name)])
        assert r.exit_code == 0, r.output
    assert (tmp_path / "cache" / listing.LISTINGS).is_dir()
    monkeypatch.setattr(listing, "_parse", lambda payload: pytest.fail("parsed a transcript of an unchanged dataset"))
    monkeypatch.setattr(listing, "read_row", lambda ref: pytest.fail("read a transcript the cache holds"))
    warm = CliRunner().invoke(cli, ["run", str(tmp_path / "d"), *OPTIONS, *cache, "--out", str(tmp_path / "warm")])
    assert warm.exit_code == 0, warm.output
    assert "results cache: 4 transcripts read from" in warm.stderr
    assert _tables(tmp_path / "plain") == _tables(tmp_path / "cold") == _tables(tmp_path / "warm")
