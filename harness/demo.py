"""``make demo``: replay the bundled samples through every strategy, print the table, write the report.

Everything offline: the calibrated summarizer, tiktoken files from litellm's package, the sample
dataset in ``datasets/samples``. The simulated window is 32k tokens so that the short real
transcripts exercise compaction. Output goes under ``out/demo`` in the repository, not the cwd.
"""

from __future__ import annotations

import sys
from pathlib import Path

from compbench.errors import CompbenchError

ROOT = Path(__file__).resolve().parents[1]
WINDOW = 32_000
MAX_OUTPUT = 4_096


def main() -> int:
    from compbench.dataset import iter_transcripts
    from compbench.rundir import write_run
    from compbench.runs import RunSpec
    from compbench.session import ModelLimits
    from compbench.strategies import runnable
    from compbench.summary import summary_table

    dataset = ROOT / "datasets" / "samples"
    run_dir = ROOT / "out" / "demo" / "run"
    from compbench.facts.boilerplate import scan_dataset
    from compbench.facts.sources import gold_file_for

    gold = gold_file_for(dataset)
    spec = RunSpec(strategies=tuple(runnable()), limits=ModelLimits(WINDOW, MAX_OUTPUT),
                   gold=str(gold) if gold else None, boilerplate=scan_dataset(str(dataset)))
    print(f"compbench demo: {dataset.relative_to(ROOT)} through {len(spec.strategies)} strategies, "
          f"{WINDOW:,}-token window, calibrated summarizer (offline heuristic)\n", flush=True)
    try:
        manifest = write_run(run_dir, spec, str(dataset), iter_transcripts(str(dataset)), workers=2, force=True)
    except CompbenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(summary_table(run_dir))
    print(f"\n{manifest.dataset.transcripts} transcripts; run written to {run_dir}")
    try:
        from compbench.reports.html import write_report
    except ImportError:
        return 0
    report = ROOT / "out" / "demo" / "report.html"
    write_report(run_dir, report)
    print(f"report: {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
