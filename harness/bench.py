"""``compbench.bench`` — ``make bench``: speed and memory of replays, as ratios against a reference measured in the same
run.

The reference is the physical limit of a replay: tokenizing every message of the dataset once. Every
other figure is divided by a time measured here, on this machine, in this process, so the ratios
compare across machines. Times of work done in this process are its CPU time (``time.process_time``):
on a machine shared with other jobs the wall clock measures the neighbours as much as the work, while
the CPU time of a single-threaded replay stays what it costs. Only the workers' speedup, which is about
the wall clock, is timed by it (and is meaningful on an idle machine only: the load is printed beside
it). Results print as ``name: value`` lines and go to ``out/bench.json``; the last lines are issue 27's
table (each row, its ratio and its goal).
"""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TOKENIZER = "o200k_base"
WINDOW = 32_000
# The run ratio is measured on the same nine strategies from one change to the next; each strategy's own
# ratio (``strategy_ratios``) shows what every other one costs.
BASE_STRATEGIES = ("opencode", "codex", "claude-code", "pi", "go-replace", "round-chained", "observation-masking",
                   "truncate", "none")


def _timed(fn: Callable[[], Any], repeat: int = 1, clock: Callable[[], float] = time.process_time) -> float:
    best = math.inf
    for _ in range(repeat):
        t = clock()
        fn()
        best = min(best, clock() - t)
    return best


def _write_dataset(path: Path, transcripts: Sequence[Any]) -> None:
    from compbench.data.formats.native import write

    write(transcripts, path)


def tokenize_once(transcripts: Sequence[Any]) -> float:
    from compbench.measure.tokens import TokenCounter

    counter = TokenCounter(TOKENIZER)
    return _timed(lambda: [counter.index(t) for t in transcripts], repeat=3)


def run_time(dataset: Path | Sequence[Path], strategies: Sequence[str], workers: int = 1, repeat: int = 1,
             own_windows: bool = False, clock: Callable[[], float] = time.process_time) -> float:
    """Seconds of a whole run (the boilerplate scan, the replays, the tables written). ``own_windows``: the
    run a user gets by default (each transcript's own window and hidden overhead, the token correction of
    its model family) instead of one ``WINDOW`` for all. ``dataset``: a native file, or raw logs (files and
    folders, read through the import pipeline a run over them uses, merges included)."""
    from compbench.data.boilerplate import scan
    from compbench.data.formats import read_all
    from compbench.data.importing import transcripts
    from compbench.run.spec import RunSpec
    from compbench.run.write import write_run
    from compbench.sdk.session import ModelLimits

    def read() -> Any:
        return read_all([dataset]) if isinstance(dataset, Path) else transcripts(dataset)

    def once() -> None:  # the dataset scan for boilerplate is part of a run's cost
        boilerplate = scan(read()).to_json()
        if own_windows:
            spec = RunSpec(strategies=tuple(strategies), limits=None, system_tokens=None, tokenizer=TOKENIZER,
                           boilerplate=boilerplate)
        else:
            spec = RunSpec(strategies=tuple(strategies), limits=ModelLimits(WINDOW, 4_096), tokenizer=TOKENIZER,
                           boilerplate=boilerplate)
        write_run(Path(d) / "run", spec, str(dataset), read(), workers, force=True)

    with tempfile.TemporaryDirectory() as d:
        return _timed(once, repeat, clock)


def samples_ratio(every: Sequence[str]) -> tuple[int, int, float, float, float]:
    """The run ratio on the bundled real transcripts: real messages are larger than synthetic ones, so
    the tokenizer's share of a run is larger. Returns (transcripts, tokens, tokenize seconds, seconds of
    the nine base strategies at ``WINDOW``, seconds of ``every`` configuration as a user's first run
    replays them: each transcript at its own window)."""
    from compbench.data.importing import iter_transcripts
    from compbench.measure.tokens import TokenCounter

    samples = ROOT / "datasets" / "samples"
    data = list(iter_transcripts(samples))
    counter = TokenCounter(TOKENIZER)
    tokens = sum(sum(counter.index(t).message_tokens) for t in data)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "samples.jsonl"
        _write_dataset(path, data)
        return (len(data), tokens, tokenize_once(data), run_time(path, BASE_STRATEGIES, repeat=2),
                run_time(path, every, repeat=2, own_windows=True))


# Real logs beside the checkout (../shared, as the project's machines and CI lay it out): what a user's first run
# reads. Never copied into the project; the row is skipped, with the reason, where they are absent.
SHARED = ROOT.parent / "shared"
REAL_LOGS = ("transcripts", "real-compactions")


def real_logs(shared: Path = SHARED) -> list[Path] | str:
    """The folders of real logs the real-logs row runs over, or why it cannot run."""
    found = [shared / name for name in REAL_LOGS if (shared / name).is_dir()]
    return found if found else f"no real logs at {shared}/{{{','.join(REAL_LOGS)}}}"


def _logs() -> list[Path] | None:
    return None if isinstance(found := real_logs(), str) else found


def real_ratio(every: Sequence[str], shared: Path = SHARED) -> tuple[str, float] | str:
    """A user's first run on real logs: every default configuration over ../shared's transcripts and real
    compactions, read and imported as ``compbench run`` reads raw logs, at each transcript's own window; its
    ratio to tokenizing every message once. Returns (what was run, ratio), or why it was skipped."""
    from compbench.data.importing import transcripts
    from compbench.measure.tokens import TokenCounter

    paths = real_logs(shared)
    if isinstance(paths, str):
        return paths
    data = list(transcripts(paths))
    counter = TokenCounter(TOKENIZER)
    tokens = sum(sum(counter.index(t).message_tokens) for t in data)
    ref = tokenize_once(data)
    secs = run_time(paths, every, own_windows=True)
    what = (f"{len(data)} real transcripts ({', '.join(p.name for p in paths)}), {tokens} tokens, "
            f"{len(every)} configurations: {secs:.1f} s against {ref:.2f} s")
    return what, round(secs / ref, 2)


def naive_vs_ours(transcript: Any) -> tuple[float, float]:
    """Seconds for a replay that re-counts the whole context every step vs our incremental replay."""
    from compbench.measure.tokens import TokenCounter
    from compbench.replay.trajectories import replay
    from compbench.replay.viewstate import ReplayConfig
    from compbench.sdk.session import ModelLimits
    from compbench.strategies import resolve
    from compbench.summarizers.extractive import ExtractiveSummarizer

    counter = TokenCounter(TOKENIZER)

    def naive() -> None:
        view: list[Any] = []
        for m in transcript.messages:
            if m.role == "assistant":
                sum(counter.message(x) for x in view)  # seed 004's estimateMessagesTokens, every step
            view.append(m)

    def ours() -> None:
        replay(transcript, resolve("none").create(), ExtractiveSummarizer(),
               ReplayConfig(ModelLimits(10**9, 4_096)), counter)

    return _timed(naive), _timed(ours)


def scaling(sizes: Sequence[int]) -> list[tuple[int, float]]:
    """Replay time (all strategies, tokenization included) against transcript size in tokens."""
    from compbench.data.synth import session
    from compbench.measure.tokens import TokenCounter
    from compbench.run.engine import Replayer
    from compbench.run.spec import RunSpec
    from compbench.sdk.session import ModelLimits

    counter = TokenCounter(TOKENIZER)
    r = Replayer(RunSpec(strategies=BASE_STRATEGIES, limits=ModelLimits(WINDOW, 4_096), tokenizer=TOKENIZER))
    out = []
    for target in sizes:
        turns = max(2, round(target / 420))  # ~420 tokens per synthetic turn at these sizes
        t = session(11, target, turns=turns, log_lines=12, code_lines=16)
        tokens = sum(counter.index(t).message_tokens)
        out.append((tokens, _timed(lambda: r.run(t))))  # noqa: B023 (called before t changes)
    return out


def fitted_exponent(points: Sequence[tuple[int, float]]) -> float:
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


MEMORY_CHILD = """
import sys, tempfile
from pathlib import Path
from compbench.run.write import write_run
from compbench.run.spec import RunSpec
from compbench.sdk.session import ModelLimits
from compbench.data.synth import generate
n = int(sys.argv[1])
spec = RunSpec(strategies=("none", "opencode", "truncate"), limits=ModelLimits(4_000, 1_000), tokenizer="chars4")
with tempfile.TemporaryDirectory() as d:
    write_run(Path(d) / "run", spec, "synth", generate(n, seed=2, turns=6, log_lines=8, code_lines=8))
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across fork and exec
print(next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


BIG_CHILD = """
import sys, tempfile, time
from pathlib import Path
from compbench.data.formats.native import write
from compbench.run.write import write_run
from compbench.run.spec import RunSpec
from compbench.sdk.session import ModelLimits
from compbench.data.importing import iter_transcripts
from compbench.data.synth import session
with tempfile.TemporaryDirectory() as d:
    f = Path(d) / "big.jsonl"
    write([session(0, 0, turns=20000, log_lines=420, code_lines=440)], f)
    size = f.stat().st_size / 2**20
    spec = RunSpec(strategies=("none", "opencode"), limits=ModelLimits(128_000, 4_096), tokenizer="chars4")
    t = time.perf_counter()
    write_run(Path(d) / "run", spec, str(f), iter_transcripts(f))
    hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    print(round(size), round(time.perf_counter() - t, 1), hwm // 1024)
"""


def big_transcript() -> str:
    out = subprocess.run([sys.executable, "-c", BIG_CHILD], check=True, capture_output=True, text=True)
    size, secs, rss = out.stdout.split()
    return f"{size} MB transcript imported and replayed (none, opencode) in {secs} s, peak RSS {rss} MB"


def peak_rss_mb(n: int) -> float:
    out = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(n)], check=True, capture_output=True, text=True)
    return int(out.stdout.strip().splitlines()[-1]) / 1024


def profile(scenario: str = "base", n: int = 120) -> int:
    """``make profile``: a run of ``make bench`` under pyinstrument, written as text and HTML to ``out/``:
    ``base`` the nine base strategies on the synthetic set, ``every`` every default configuration on the
    bundled samples at their own windows (``make profile PROFILE=every``).

    The run is profiled in-process after the imports, so the tree shows where replay time goes rather
    than import time (which ``run_s`` includes once)."""
    from pyinstrument import Profiler

    from compbench.data.importing import iter_transcripts
    from compbench.data.synth import generate
    from compbench.strategies import runnable

    if scenario not in ("base", "every"):
        print(f"unknown profile {scenario!r} (base, every)", file=sys.stderr)
        return 2
    every = scenario == "every"
    data = list(iter_transcripts(ROOT / "datasets" / "samples")) if every else list(generate(n, seed=1, turns=60))
    strategies = tuple(runnable()) if every else BASE_STRATEGIES
    out = ROOT / "out"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        dataset = Path(d) / "data.jsonl"
        _write_dataset(dataset, data)
        run_time(dataset, BASE_STRATEGIES[:1])  # warm the imports and the tokenizer
        p = Profiler(interval=0.001)
        p.start()
        run_time(dataset, strategies, own_windows=every)
        p.stop()
    (out / "profile.txt").write_text(p.output_text(unicode=False, color=False), encoding="utf-8")
    (out / "profile.html").write_text(p.output_html(), encoding="utf-8")
    print(p.output_text(unicode=False, color=False))
    print(f"written to {out / 'profile.txt'} and {out / 'profile.html'}")
    return 0


# issues 27 and 35: (row, the result it reads, the goal, whether the goal is a floor rather than a ceiling)
ENGINE_ROWS = (
    ("`none` alone", "none_ratio", 1.2, False),
    ("the nine base strategies (synthetic)", "run_ratio", 1.5, False),
    ("every default configuration on the real samples", "samples_every_ratio", 3.0, False),
    ("every default configuration on real logs (../shared)", "real_every_ratio", 3.0, False),
    ("tune, 100 configurations", "tune_ratio", 3.0, False),
    ("scaling exponent (time vs transcript size)", "scaling_exponent", 1.05, False),
    ("`--workers 2` speedup (wall clock)", "workers_speedup", 1.8, True),
    ("`--workers 2` speedup on two idle cores (from the CPU times)", "workers_speedup_cpu", 1.8, True),
    ("a re-run over an unchanged dataset (share of its first run)", "rerun_share", 0.05, False),
    ("a re-run with one new transcript (beyond its own run, share of the first)", "rerun_new_share", 0.05, False),
)


def engine_table(results: dict[str, Any]) -> str:
    """Issue 35's table: each row this bench can measure, as a ratio to tokenizing every message once (CPU
    time, same run), beside its goal; a row that could not run says why."""
    lines = ["| row | now | goal |", "| --- | --- | --- |"]
    for label, key, goal, floor in ENGINE_ROWS:
        share = key.endswith("_share")  # a share of the first run, not a ratio to tokenizing
        bound = f"{'≥' if floor else '≤'} {f'{goal:.0%}' if share else goal}"
        if key in results:
            value = results[key]
            met = value >= goal if floor else value <= goal
            shown = f"{value:.1%}" if share else f"{value}{'' if key == 'scaling_exponent' else '×'}"
            lines.append(f"| {label} | {shown} | {bound} {'(met)' if met else '(not met)'} |")
        elif f"{key}_skipped" in results:
            lines.append(f"| {label} | skipped: {results[f'{key}_skipped']} | {bound} |")
    return "\n".join(lines)


def main(argv: Sequence[str] = ()) -> int:
    from compbench.data.synth import generate
    from compbench.decide.tune import grid_specs
    from compbench.strategies import runnable

    if "--profile" in argv:
        rest = list(argv)[list(argv).index("--profile") + 1:]
        return profile(rest[0] if rest else "base")
    from compbench import bench_report

    cache = tempfile.TemporaryDirectory()  # the runs through the CLI keep their results here, never in the user's
    os.environ["COMPBENCH_CACHE_DIR"] = cache.name
    if "--rerun" in argv:  # issue 42's re-run rows only
        return bench_report.rerun_only(engine_table, _logs())
    if "--workers" in argv:  # the workers' row only, on the synthetic set
        return bench_report.workers_only(engine_table, 24 if "--quick" in argv else 120, BASE_STRATEGIES, WINDOW,
                                         TOKENIZER)
    quick = "--quick" in argv
    engine = "--engine" in argv  # issue 27's rows only (minutes, not a quarter of an hour)
    n = 24 if quick else 120
    results: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]}}

    def show(name: str, value: Any) -> None:
        results[name] = value
        print(f"{name}: {value}", flush=True)

    data = list(generate(n, seed=1, turns=60))
    with tempfile.TemporaryDirectory() as d:
        dataset = Path(d) / "synth.jsonl"
        _write_dataset(dataset, data)
        ref = tokenize_once(data)
        show("dataset", f"{n} synthetic transcripts, {sum(len(t.messages) for t in data)} messages")
        show("tokenize_once_s", round(ref, 3))
        show("none_ratio", round(run_time(dataset, ("none",), repeat=2) / ref, 2))
        run_s = run_time(dataset, BASE_STRATEGIES, repeat=2)  # best of 2: this VM's neighbours are noisy
        show("run_s", round(run_s, 3))
        show("run_ratio", round(run_s / ref, 2))
        configs = grid_specs("opencode", ["protect=5000,10000,20000,30000,40000,50000,60000,70000,80000,100000",
                                          "minimum=2000,5000,10000,15000,20000,25000,30000,40000,50000,60000"])
        sub = dataset.with_name("sub.jsonl")
        _write_dataset(sub, data[: max(4, n // 6)])
        tune_s = run_time(sub, configs, repeat=2)
        sub_ref = tokenize_once(data[: max(4, n // 6)])
        show("tune_configs", len(configs))
        show("tune_ratio", round(tune_s / sub_ref, 2))
        if not engine:  # each strategy alone (with the none reference every run replays) on the small set
            show("strategy_ratios", {name: round(run_time(sub, (name,)) / sub_ref, 2) for name in runnable()})
        n_s, tok_s, ref_s, run_samples, every_samples = samples_ratio(runnable())
        show("samples", f"{n_s} bundled real transcripts, {tok_s} tokens")
        show("samples_tokenize_once_s", round(ref_s, 3))
        show("samples_run_ratio", round(run_samples / ref_s, 2))
        show("samples_every_ratio", round(every_samples / ref_s, 2))
        real = real_ratio(runnable())
        if isinstance(real, str):
            show("real_every_ratio_skipped", real)
        else:
            show("real_logs", real[0])
            show("real_every_ratio", real[1])
        bench_report.workers_row(show, dataset, BASE_STRATEGIES, WINDOW, TOKENIZER)
    bench_report.rerun(show, _logs())
    naive = []
    for turns in () if engine else (20, 80, 320):
        from compbench.data.synth import session

        t = session(5, turns, turns=turns)
        a, b = naive_vs_ours(t)
        naive.append((turns, round(a / b, 1)))
    if naive:
        show("naive_ratio_by_turns", naive)
    pts = scaling([1_000, 10_000, 100_000] if quick else [1_000, 10_000, 100_000, 1_000_000])
    show("scaling_points", [(x, round(y, 4)) for x, y in pts])
    show("scaling_exponent", round(fitted_exponent(pts), 3))
    if engine:
        print(engine_table(results))
        return 0
    small, big = (100, 1_000) if quick else (1_000, 10_000)
    show(f"peak_rss_mb_{small}", round(peak_rss_mb(small), 1))
    show(f"peak_rss_mb_{big}", round(peak_rss_mb(big), 1))
    if not quick:
        show("big_transcript", big_transcript())

    # the user's scale: a run of 2,000 transcripts logging its progress, and its report (time and size)
    bench_report.scale(show, BASE_STRATEGIES, n=200 if quick else 2_000)
    bench_report.samples(show, list(runnable()))
    show("bench_peak_rss_mb", round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1))
    summary = (f"run {results['run_ratio']}x tokenize (target <= 1.3; real samples "
               f"{results['samples_run_ratio']}x), tune {results['tune_ratio']}x (<= 3), "
               f"naive/ours {naive[-1][1]}x at {naive[-1][0]} turns, scaling exponent {results['scaling_exponent']}, "
               f"memory {results[f'peak_rss_mb_{small}']} -> {results[f'peak_rss_mb_{big}']} MB, "
               f"workers x{results['workers_speedup']}; report of the scale run {results['scale_report']}")
    print(f"summary: {summary}")
    print(engine_table(results))
    out = ROOT / "out" / "bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
