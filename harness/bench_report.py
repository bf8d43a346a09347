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
