"""``compbench.bench_report`` — ``make bench``, the user's scale: a run of 2,000 synthetic transcripts × 9 strategies
through the CLI with its progress in a log (not a terminal), then its HTML report, timed and weighed; and the report
of the bundled samples. Targets (issue 18): progress with a total and the time left in the log, a report built in
under a minute and under 20 MB."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPORT_SECONDS = 60.0
REPORT_MB = 20.0
WINDOW = 8_000  # small enough that every strategy acts (or shows it cannot) on 40-turn synthetic sessions


def _cli(*args: str, stderr: Any = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from compbench.cli import main; main()", *args], check=True,
                          stdout=subprocess.PIPE, stderr=stderr, text=True, env=env)


def report_figures(run: Path, out: Path) -> tuple[float, float]:
    """Seconds and megabytes of ``compbench report`` on ``run`` (a process of its own, imports included)."""
    t = time.perf_counter()
    _cli("report", str(run), "--out", str(out), stderr=subprocess.PIPE)
    return time.perf_counter() - t, out.stat().st_size / 2**20


def scale(show: Callable[[str, Any], None], strategies: Sequence[str], n: int = 2_000, workers: int = 2) -> None:
    """The run of ``n`` synthetic transcripts × ``strategies`` with its log, then its report."""
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        _cli("datasets", "synth", "--n", str(n), "--seed", "1", "--turns", "40", "--out", str(root / "synth"))
        log = root / "run.log"
        args = ["run", str(root / "synth"), *(x for s in strategies for x in ("--strategy", s)),
                "--context-window", str(WINDOW), "--workers", str(workers), "--out", str(root / "run")]
        t = time.perf_counter()
        with log.open("w") as err:  # a file, not a terminal: what CI and `2> run.log` see
            _cli(*args, stderr=err, env={**os.environ, "COMPBENCH_PROGRESS_SECONDS": "10"})
        run_s = time.perf_counter() - t
        lines = [x for x in log.read_text().splitlines() if x.startswith("replayed ")]
        with_total = [x for x in lines if re.match(rf"replayed [\d,]+/{n:,} transcripts", x)]
        with_eta = [x for x in with_total if " left" in x]
        show("scale_run", f"{n} synthetic transcripts x {len(strategies)} strategies in {run_s:.0f} s "
                          f"(--workers {workers}, window {WINDOW:,})")
        show("scale_progress_lines", f"{len(lines)} lines in the log, {len(with_total)} with the total, "
                                     f"{len(with_eta)} with the time left; last: {lines[-1] if lines else '-'}")
        secs, mb = report_figures(root / "run", root / "report.html")
        show("scale_report", f"{secs:.1f} s, {mb:.1f} MB (targets: < {REPORT_SECONDS:.0f} s, < {REPORT_MB:.0f} MB)")
        if not (with_total and with_eta and secs < REPORT_SECONDS and mb < REPORT_MB):
            show("scale_warning", "a target is missed (see the lines above)")


def samples(show: Callable[[str, Any], None], strategies: Sequence[str]) -> None:
    """The report of the bundled samples through every strategy."""
    from compbench.data.dataset import default_dataset

    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        _cli("run", str(default_dataset()), *(x for s in strategies for x in ("--strategy", s)),
             "--context-window", "32000", "--out", str(root / "run"), "--quiet", stderr=subprocess.PIPE)
        secs, mb = report_figures(root / "run", root / "report.html")
        show("samples_report", f"{secs:.1f} s, {mb:.2f} MB ({len(strategies)} strategies)")


RERUN_SHARE = 0.05  # issue 42: a re-run costs at most this share of the first run (beyond what is new)


def _cpu(*args: str, env: dict[str, str]) -> float:
    """CPU seconds of ``compbench ARGS`` in a process of its own (its imports included, its workers too)."""
    import resource

    def used() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    before = used()
    _cli(*args, stderr=subprocess.PIPE, env=env)
    return used() - before


def rerun(show: Callable[[str, Any], None], logs: Sequence[Path] | None = None) -> None:
    """Issue 42's re-run rows, as a user meets them through the CLI (every default configuration, each log at its
    own window, one worker, CPU time): the real logs (the bundled samples where they are absent) imported as a
    dataset and run once, then again unchanged (``rerun_share``: its share of the first run), then with one more
    log, the median-sized one left out before (``rerun_new_share``: what it cost beyond that log's own run, alone,
    as a share of the first run)."""
    from compbench.data.dataset import default_dataset
    from compbench.data.formats.native import write
    from compbench.data.importing import iter_transcripts, transcripts
    from compbench.data.transcript import to_json

    data = list(transcripts(logs)) if logs else list(iter_transcripts(default_dataset()))
    new = sorted(data, key=lambda t: (len(to_json(t)), t.id))[len(data) // 2]
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        for name, part in (("fewer", [t for t in data if t is not new]), ("all", data), ("new", [new])):
            write(part, root / f"{name}.jsonl")
            _cli("datasets", "import", str(root / f"{name}.jsonl"), "--out", str(root / name), stderr=subprocess.PIPE)

        def run(dataset: str, cache: str) -> float:
            env = {**os.environ, "COMPBENCH_CACHE_DIR": str(root / cache), "COMPBENCH_PROGRESS_SECONDS": "3600"}
            return _cpu("run", str(root / dataset), "--out", str(root / f"run-{dataset}-{cache}"), "--force", env=env)

        first = run("fewer", "cache")
        again = run("fewer", "cache")
        plus_one = run("all", "cache")
        alone = run("new", "other-cache")
    what = f"{len(data)} real logs" if logs else f"{len(data)} bundled samples"
    show("rerun", f"{what} as a dataset, every default configuration: first run of {len(data) - 1} {first:.1f} s, "
                  f"unchanged {again:.1f} s; with one more ({new.id}) {plus_one:.1f} s, that log alone {alone:.1f} s "
                  "(CPU, imports included)")
    show("rerun_share", round(again / first, 4))
    show("rerun_new_share", round(max(0.0, plus_one - alone) / first, 4))


def rerun_only(table: Callable[[dict[str, Any]], str], logs: Sequence[Path] | None) -> int:
    """``python -m compbench.bench --rerun``: the re-run rows alone, then their lines of the bench's table."""
    results: dict[str, Any] = {}

    def show(name: str, value: Any) -> None:
        results[name] = value
        print(f"{name}: {value}", flush=True)

    rerun(show, logs)
    print(table(results))
    return 0


def by_reference(dataset: Path, strategies: Sequence[str], window: int, tokenizer: str, workers: int = 1,
                 repeat: int = 1) -> tuple[float, float, float]:
    """Wall seconds (best of ``repeat``) of a run over the dataset directory ``dataset`` as ``compbench run`` makes
    it: its transcripts listed first (the run's read pass, not timed here: :mod:`compbench.run.listing`), then handed
    to the workers by reference, each worker reading the transcripts it replays; with the CPU seconds of that run in
    this process and in its workers."""
    import resource

    from compbench.data.importing import scan_dataset
    from compbench.run.listing import listing
    from compbench.run.spec import RunSpec
    from compbench.run.write import write_run
    from compbench.sdk.session import ModelLimits

    def children() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    best = (float("inf"), 0.0, 0.0)
    with tempfile.TemporaryDirectory() as d:
        refs = listing(dataset, Path(d), keep=False)
        spec = RunSpec(strategies=tuple(strategies), limits=ModelLimits(window, 4_096), tokenizer=tokenizer,
                       boilerplate=scan_dataset(str(dataset)))
        for _ in range(repeat):
            t, cpu, kids = time.perf_counter(), time.process_time(), children()
            write_run(Path(d) / "run", spec, str(dataset), refs, workers, force=True)
            best = min(best, (time.perf_counter() - t, time.process_time() - cpu, children() - kids))
    return best


def workers_row(show: Callable[[str, Any], None], native: Path, strategies: Sequence[str], window: int,
                tokenizer: str) -> None:
    """``--workers 2`` against one worker (wall clock, best of two each) on the transcripts of the native file
    ``native`` imported as a dataset (a user's: the workers read their own transcripts), with the load beside it.
    On a machine others load, the wall clock measures them too: the CPU seconds say what two idle cores would give
    (``workers_speedup_cpu``: one worker's CPU time over half of two workers' and their main process's, or over
    the main process's own where it alone is longer)."""
    from compbench.data.importing import write_dataset

    data = native.with_name("workers-dataset")
    write_dataset(data, [native])
    load = os.getloadavg()[0]
    wall1, cpu1, _ = by_reference(data, strategies, window, tokenizer, repeat=2)
    wall2, main2, workers2 = by_reference(data, strategies, window, tokenizer, workers=2, repeat=2)
    show("workers_speedup", round(wall1 / wall2, 2))
    # the wall clock measures the neighbours too: the load before and after, on this many cores
    show("load_average", f"{load:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    show("workers_cpu", f"one worker {cpu1:.2f} s; two: the main process {main2:.2f} s, the workers {workers2:.2f} s")
    show("workers_speedup_cpu", round(cpu1 / max((main2 + workers2) / 2, main2), 2))


def workers_only(table: Callable[[dict[str, Any]], str], n: int, strategies: Sequence[str], window: int,
                 tokenizer: str) -> int:
    """``python -m compbench.bench --workers``: the workers' row alone, then its line of the bench's table."""
    from compbench.data.formats.native import write
    from compbench.data.synth import generate

    results: dict[str, Any] = {}

    def show(name: str, value: Any) -> None:
        results[name] = value
        print(f"{name}: {value}", flush=True)

    with tempfile.TemporaryDirectory() as d:
        native = Path(d) / "synth.jsonl"
        write(list(generate(n, seed=1, turns=60)), native)
        workers_row(show, native, strategies, window, tokenizer)
    print(table(results))
    return 0
