"""The results cache: a re-run reads what it replayed before, byte for byte; a transcript, configuration, strategy
version or engine version that changed is replayed again; the key is the content, not the dataset."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from compbench.data.synth import generate
from compbench.data.transcript import Message, Text, Transcript
from compbench.errors import UsageError
from compbench.run import cache as results_cache
from compbench.run.cache import ResultsCache, TemplateReads, cache_root, same_reads, size_cap
from compbench.run.estimate import Meter
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits

TABLES = ("results", "steps", "compactions", "prunes", "facts")
SPEC = RunSpec(strategies=("none", "truncate", "observation-masking"), limits=ModelLimits(6_000, 1_000),
               tokenizer="chars4", summarizer="extractive")


def data(n: int = 5, seed: int = 4) -> list[Transcript]:
    return list(generate(n, seed=seed, turns=24, log_lines=20, code_lines=30))


def run(out: Path, transcripts: Sequence[Transcript], cache: ResultsCache | None, spec: RunSpec = SPEC,
        dataset: str = "synth") -> Meter:
    meter = Meter()
    write_run(out, spec, dataset, list(transcripts), cache=cache, meter=meter)
    return meter


def same_bytes(a: Path, b: Path) -> None:
    for t in TABLES:
        assert (a / f"{t}.parquet").read_bytes() == (b / f"{t}.parquet").read_bytes(), t

    def manifest(d: Path) -> dict[str, Any]:
        m = json.loads((d / "manifest.json").read_text())
        m.pop("created_at")  # the one field that varies (compbench.run.write._manifest)
        return dict(m)

    assert manifest(a) == manifest(b)


def test_a_rerun_reads_every_transcript_and_writes_the_same_bytes(tmp_path: Path) -> None:
    logs = data()
    run(tmp_path / "plain", logs, None)
    store = ResultsCache(tmp_path / "cache")
    cold = run(tmp_path / "cold", logs, store)
    assert (store.hits, store.written, cold.replays) == (0, 5, 5)
    warm_store = ResultsCache(tmp_path / "cache")
    warm = run(tmp_path / "warm", logs, warm_store)
    assert (warm_store.hits, warm_store.written, warm.replays) == (5, 0, 0)
    same_bytes(tmp_path / "plain", tmp_path / "cold")
    same_bytes(tmp_path / "plain", tmp_path / "warm")


def test_one_more_log_in_another_dataset_hits_every_transcript_already_held(tmp_path: Path) -> None:
    logs = data(6)
    run(tmp_path / "first", logs[:5], ResultsCache(tmp_path / "cache"), dataset="mine")
    store = ResultsCache(tmp_path / "cache")
    again = [logs[0], logs[5], *logs[1:5]]  # imported again, the new log among the others
    meter = run(tmp_path / "again", again, store, dataset="mine-imported-again")
    assert (store.hits, meter.replays) == (5, 1)
    run(tmp_path / "plain", again, None, dataset="mine-imported-again")
    same_bytes(tmp_path / "plain", tmp_path / "again")


def _edited(t: Transcript) -> Transcript:
    first = t.messages[0]
    return dataclasses.replace(t, messages=(Message(first.id, first.role, (Text(first.text + " (edited)"),)),
                                            *t.messages[1:]))


def _bumped(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    from compbench.sdk.registry import STRATEGIES, get

    monkeypatch.setitem(STRATEGIES._items, name, dataclasses.replace(get(name), version="2"))


@pytest.mark.parametrize("change", ["transcript", "configuration", "strategy version", "engine version", "none"])
def test_what_changed_is_replayed_again(change: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = data(3)
    run(tmp_path / "first", logs, ResultsCache(tmp_path / "cache"))
    spec = SPEC
    if change == "transcript":
        logs = [logs[0], _edited(logs[1]), logs[2]]
    elif change == "configuration":
        spec = dataclasses.replace(SPEC, strategies=("none", "truncate", "observation-masking:keep_last_turns=2"))
    elif change == "strategy version":
        _bumped(monkeypatch, "truncate")
    elif change == "engine version":
        monkeypatch.setattr(results_cache, "engine_version", lambda: "another engine")
    store = ResultsCache(tmp_path / "cache")
    meter = run(tmp_path / "again", logs, store, spec)
    replayed = {"transcript": 1, "configuration": 3, "strategy version": 3, "engine version": 3, "none": 0}[change]
    assert (meter.replays, store.hits) == (replayed, 3 - replayed)


def test_a_version_bump_of_a_strategy_not_in_the_run_changes_nothing(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    logs = data(2)
    run(tmp_path / "first", logs, ResultsCache(tmp_path / "cache"))
    _bumped(monkeypatch, "opencode")
    store = ResultsCache(tmp_path / "cache")
    assert run(tmp_path / "again", logs, store).replays == 0 and store.hits == 2


def test_rebuild_replays_everything_and_refreshes_the_entries(tmp_path: Path) -> None:
    logs = data(2)
    run(tmp_path / "first", logs, ResultsCache(tmp_path / "cache"))
    store = ResultsCache(tmp_path / "cache", read=False)
    assert run(tmp_path / "rebuilt", logs, store).replays == 2 and (store.hits, store.written) == (0, 2)
    assert len(store.entries()) == 2  # the fresh rows replaced the old ones under the same key


def _templates(lines: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    from compbench.data.boilerplate import Templates

    return Templates(lines, {k: 5 for k in lines}).to_json()


def test_templates_count_only_through_what_a_replay_read_of_them(tmp_path: Path) -> None:
    """A template line holding one of a transcript's fact anchors changes its rows (its fact is boilerplate): that
    transcript is replayed again; a line that holds none changes nothing, for every transcript."""
    logs = data(3)
    first = ResultsCache(tmp_path / "cache")
    run(tmp_path / "first", logs, first)
    source = logs[0].source
    (entry,) = first._dir(first.key(_digest(logs[0]), results_cache.config_key(SPEC))).glob("*.bin")
    read = _header(entry)["reads"][source]
    assert read and not any(read.values()), "with no template line, the anchors a replay would look up are recorded"
    unrelated = dataclasses.replace(SPEC, boilerplate=_templates({source: ("nothing any fact anchors on here",)}))
    store = ResultsCache(tmp_path / "cache")
    assert run(tmp_path / "unrelated", logs, store, unrelated).replays == 0 and store.hits == 3
    mine = max(read, key=len)
    related = dataclasses.replace(SPEC, boilerplate=_templates({source: (f"a template line with {mine} in it",)}))
    store = ResultsCache(tmp_path / "cache")
    meter = run(tmp_path / "related", logs, store, related)
    assert meter.replays >= 1 and store.hits <= 2
    run(tmp_path / "plain", logs, None, related)
    same_bytes(tmp_path / "plain", tmp_path / "related")


def _header(p: Path) -> dict[str, Any]:
    return ResultsCache._split(p.read_bytes())[0]


def _digest(t: Transcript) -> str:
    from compbench.data.transcript import to_json

    return results_cache.transcript_hash(to_json(t))


def test_the_recorded_reads_answer_as_the_text_would() -> None:
    from compbench.data.boilerplate import Templates

    t = TemplateReads.of(Templates({"x": ("do not modify the tests",)}, {"x": 3}))
    text = t.text("x")
    assert "modify the tests" in text and "/testbed" not in text
    assert "anything" not in t.text("y") and bool(t.text("y"))  # never empty: its anchors are still looked up
    reads = t.taken()
    assert reads == {"x": {"modify the tests": True, "/testbed": False}, "y": {"anything": False}}
    assert t.taken() == {}
    assert same_reads(reads, Templates({"x": ("do not modify the tests!",)}, {}))
    assert not same_reads(reads, Templates({"x": ("keep /testbed",)}, {}))
    assert not same_reads(reads, Templates({"x": ("do not modify the tests",), "y": ("anything",)}, {}))
    with pytest.raises(TypeError):
        _ = t.text("x") + "more"  # a reading the record would miss fails instead


def test_where_the_cache_lives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COMPBENCH_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_root() == tmp_path / "home" / ".cache" / "compbench"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG spec: a relative path is invalid
    assert cache_root() == tmp_path / "home" / ".cache" / "compbench"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "compbench"
    monkeypatch.setenv("COMPBENCH_CACHE_DIR", str(tmp_path / "env"))
    assert cache_root() == tmp_path / "env"
    assert cache_root(tmp_path / "named") == tmp_path / "named"


@pytest.mark.parametrize(("raw", "size"), [("", 2 * 2**30), ("0", 0), ("1", 1), ("500M", 500 * 2**20),
                                           ("2G", 2 * 2**30), ("1.5k", 1536)])
def test_the_size_cap(raw: str, size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPBENCH_CACHE_MAX", raw)
    assert size_cap() == size


@pytest.mark.parametrize("raw", ["lots", "-1", "2X"])
def test_a_bad_size_cap_is_one_line(raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPBENCH_CACHE_MAX", raw)
    with pytest.raises(UsageError, match="COMPBENCH_CACHE_MAX"):
        size_cap()


def test_the_prune_removes_the_least_recently_used_down_to_the_cap(tmp_path: Path) -> None:
    import os

    store = ResultsCache(tmp_path / "cache")
    run(tmp_path / "r", data(4), store)
    entries = sorted(store.entries(), key=lambda e: str(e[2]))
    for age, (_, _, p) in enumerate(entries):  # the first one used longest ago
        os.utime(p, (1_000_000 + age, 1_000_000 + age))
    sizes = [size for _, size, _ in entries]
    total = sum(sizes)
    assert store.prune(total) == (0, total)  # at the cap: nothing goes
    removed, kept = store.prune(total - 1)  # just above it: down to PRUNED_TO of the cap, oldest first
    left = {p for _, _, p in store.entries()}
    assert removed >= 1 and kept <= (total - 1) * results_cache.PRUNED_TO and kept == sum(
        size for _, size, p in entries if p in left)
    assert entries[0][2] not in left and entries[-1][2] in left
    assert store.prune(0) == (len(left), 0) and not store.entries()


def test_a_damaged_entry_is_a_miss_and_is_replaced(tmp_path: Path) -> None:
    logs = data(2)
    store = ResultsCache(tmp_path / "cache")
    run(tmp_path / "first", logs, store)
    for _, _, p in store.entries():
        p.write_bytes(p.read_bytes()[:-20])  # cut short (a full disk, a crash mid-copy)
    again = ResultsCache(tmp_path / "cache")
    run(tmp_path / "again", logs, again)
    run(tmp_path / "plain", logs, None)
    same_bytes(tmp_path / "plain", tmp_path / "again")
