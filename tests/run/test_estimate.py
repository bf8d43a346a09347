"""The cost of a run, said before it is paid: it grows with the transcripts' size and the configurations, falls with
the workers (up to the cores) and with what the results cache holds, follows the speed measured on this machine;
a run over about a minute prints it with the ways to make it shorter."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from compbench.cli import cli
from compbench.run import estimate as est
from compbench.run.estimate import Meter, Surveyed, configurations, estimate, record_speed, said, speed
from compbench.run.spec import RunSpec

SPEC = RunSpec(strategies=("none", "truncate"))


def items(*sizes: int, source: str = "codex") -> list[Surveyed]:
    return [Surveyed(f"t{k}", source, size, f"h{k}") for k, size in enumerate(sizes)]


def test_the_cost_grows_with_size_and_configurations() -> None:
    one = estimate(SPEC, items(1_000_000))
    assert one.replay_seconds == pytest.approx(1_000_000 * (est.PER_CHAR + 2 * est.PER_CHAR_CONFIG + est.READ_PER_CHAR))
    assert estimate(SPEC, items(2_000_000)).replay_seconds == pytest.approx(2 * one.replay_seconds)
    assert estimate(SPEC, items(1_000_000, 1_000_000)).replay_seconds == pytest.approx(2 * one.replay_seconds)
    more = dataclasses.replace(SPEC, strategies=("none", "truncate", "codex", "opencode"))
    assert estimate(more, items(1_000_000)).replay_seconds > one.replay_seconds
    assert estimate(SPEC, items(1_000_000), raw=True).replay_seconds > one.replay_seconds  # importing costs more


def test_workers_share_the_cost_up_to_the_cores_and_the_largest_transcript(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(est.os, "cpu_count", lambda: 4)
    even = items(*[1_000_000] * 8)
    alone = estimate(SPEC, even).wall_seconds
    assert estimate(SPEC, even, workers=2).wall_seconds == pytest.approx(alone / 2)
    assert estimate(SPEC, even, workers=8).wall_seconds == pytest.approx(alone / 4)  # 4 cores
    lopsided = items(7_000_000, 500_000, 500_000)
    e = estimate(SPEC, lopsided, workers=4)
    assert e.wall_seconds == pytest.approx(max(e.replay_seconds / 3, estimate(SPEC, items(7_000_000)).replay_seconds))


def test_the_speed_measured_here_scales_the_replays(tmp_path: Path) -> None:
    base = estimate(SPEC, items(1_000_000), root=tmp_path)
    (tmp_path / est.THROUGHPUT).write_text(json.dumps({"speed": 2.0}))
    fast = estimate(SPEC, items(1_000_000), root=tmp_path)
    read = 1_000_000 * est.READ_PER_CHAR  # reading is not a replay
    assert fast.replay_seconds - read == pytest.approx((base.replay_seconds - read) / 2)


def test_a_run_measures_its_speed_only_when_long_enough(tmp_path: Path) -> None:
    record_speed(tmp_path, Meter(10.0, est.MIN_MEASURED - 0.01, 3))
    assert not (tmp_path / est.THROUGHPUT).exists() and speed(tmp_path) == 1.0
    record_speed(tmp_path, Meter(10.0, est.MIN_MEASURED, 3))
    assert speed(tmp_path) == pytest.approx(5.0)  # the first measure is taken as it is
    record_speed(tmp_path, Meter(1.0, 2.0, 1))
    assert speed(tmp_path) == pytest.approx((1 - est.WEIGHT) * 5.0 + est.WEIGHT * 0.5)
    (tmp_path / est.THROUGHPUT).write_text("not json")
    assert speed(tmp_path) == 1.0


def test_settings_configurations_count_only_on_their_tools_logs() -> None:
    from compbench.run.spec import settings_sweep

    sweep = settings_sweep(("none", "codex"), ["codex"])
    assert sweep, "codex has settings a sweep tries"
    strategies = ("none", "codex", *sweep)
    assert configurations(strategies, sweep, "codex") == len(strategies)
    assert configurations(strategies, sweep, "claude-code") == 2


@pytest.mark.parametrize(("seconds", "say"), [(est.SAY_ABOVE - 0.1, False), (est.SAY_ABOVE, False),
                                              (est.SAY_ABOVE + 0.1, True)])
def test_only_a_run_over_a_minute_says_it_first(seconds: float, say: bool) -> None:
    e = est.Estimate(1, seconds, seconds, 0, 0.0, 2, 0, {"codex": (1, seconds)}, 1)
    assert said(e) is say


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("data") / "synth"
    r = CliRunner().invoke(cli, ["datasets", "synth", "--n", "6", "--turns", "12", "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


OPTIONS = ["--strategy", "none", "--strategy", "truncate", "--context-window", "3000", "--tokenizer", "chars4",
           "--summarizer", "extractive"]


def test_run_prints_the_estimate_and_how_to_shorten_it(dataset: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / est.THROUGHPUT).write_text(json.dumps({"speed": 1e-4}))  # a machine slow enough for a long run
    r = CliRunner().invoke(cli, ["run", str(dataset), *OPTIONS, "--results-cache", str(cache), "--out",
                                 str(tmp_path / "a")])
    assert r.exit_code == 0, r.output
    line = next(x for x in r.stderr.splitlines() if x.startswith("estimate: about"))
    assert "to replay 6 transcripts under 2 configurations" in line and "cache" not in line
    assert "to make it shorter: " in r.stderr and '--where "steps<=200"' in r.stderr
    assert "--strategy NAME" in r.stderr
    again = CliRunner().invoke(cli, ["run", str(dataset), *OPTIONS, "--results-cache", str(cache), "--out",
                                     str(tmp_path / "b")])
    assert again.exit_code == 0, again.output
    # at the same slow speed, a re-run that reads everything from the cache is short: unsaid
    assert "estimate:" not in again.stderr
    assert "results cache: 6 transcripts read from" in again.stderr


def test_a_short_run_starts_without_a_word(dataset: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["run", str(dataset), *OPTIONS, "--out", str(tmp_path / "a")])
    assert r.exit_code == 0, r.output
    assert "estimate:" not in r.stderr and "read 6/6 transcripts" in r.stderr


def test_a_cache_among_the_logs_is_refused(dataset: Path, tmp_path: Path) -> None:
    from compbench.errors import UsageError

    r = CliRunner().invoke(cli, ["run", str(dataset), *OPTIONS, "--results-cache", str(dataset / "cache"), "--out",
                                 str(tmp_path / "a")])
    assert isinstance(r.exception, UsageError) and "lies inside the logs" in str(r.exception)  # exit 2, one line
    assert not (dataset / "cache").exists()
    hidden = CliRunner().invoke(cli, ["run", str(dataset), *OPTIONS, "--results-cache", str(dataset / ".cache"),
                                      "--out", str(tmp_path / "b")])
    assert hidden.exit_code == 0, hidden.output  # a hidden folder is one reading the logs never opens


@pytest.mark.parametrize(("load", "busy"), [(0.0, 1.0), (1.0, 1.0), (1.5, 1.25), (3.0, 2.0)])
def test_a_busy_machine_stretches_the_wall_clock(load: float, busy: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two cores, one worker: a core is its own while the others want at most one (load 1); past that, it shares."""
    monkeypatch.setattr(est.os, "cpu_count", lambda: 2)
    e = estimate(SPEC, items(1_000_000), load=load)
    assert e.busy == pytest.approx(busy) and e.wall_seconds == pytest.approx(e.replay_seconds * busy)


@pytest.mark.parametrize(("listed", "read"), [(False, True), (True, False)])
def test_what_the_cache_holds_of_a_listed_dataset_costs_no_reading(tmp_path: Path, listed: bool, read: bool) -> None:
    from compbench.run.cache import ResultsCache, config_key

    cache = ResultsCache(tmp_path)
    cache.put(cache.key("h0", config_key(SPEC)), {}, {})
    (entry,) = [p for _, _, p in cache.entries()]
    e = estimate(SPEC, items(1_000_000, 1_000_000), cache=cache, listed=listed)
    assert (e.cached, e.replays) == (1, 1)
    loading = entry.stat().st_size * est.LOAD_PER_BYTE
    assert e.cached_seconds == pytest.approx(loading + (1_000_000 * est.READ_PER_CHAR if read else 0.0))
