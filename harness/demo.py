"""``compbench.demo`` — ``make demo``: replay the bundled samples through every strategy, print the table, write the
report.

Everything offline: the calibrated summarizer, tiktoken files from litellm's package, the sample
dataset in ``datasets/samples``. The run is the one ``compbench run`` makes on the samples with its defaults:
each transcript in the window its tool used for its recorded model, with its own hidden prompt, so the demo's
first screen is what a user's first run shows (a 32k window for every transcript, as the demo once forced,
opened with 29 of 32 strategies making calls a real API refuses). Output goes under ``out/demo`` in the
repository, not the cwd.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from compbench.errors import CompbenchError

if TYPE_CHECKING:
    from compbench.run.spec import RunSpec

ROOT = Path(__file__).resolve().parents[1]


def demo_spec(dataset: Path) -> RunSpec:
    """The demo's run: every runnable strategy over ``dataset`` as ``compbench run`` replays it by default (each
    transcript at its own window and hidden prompt, token counts corrected to the recorded model's family, the
    recorded cache lifetime, the calibrated summarizer, the settings sweep of the tools present);
    tests/golden/demo_figures.json pins its figures."""
    from compbench.data.importing import scan_dataset
    from compbench.measure.facts.sources import gold_file_for
    from compbench.run.spec import RunSpec, with_settings
    from compbench.strategies import runnable

    gold = gold_file_for(dataset)
    return with_settings(RunSpec(strategies=tuple(runnable()), limits=None, system_tokens=None, token_correction="auto",
                                 cache_ttl="auto", gold=str(gold) if gold else None,
                                 boilerplate=scan_dataset(str(dataset))))


def main() -> int:
    from compbench.data.dataset import default_dataset
    from compbench.data.importing import iter_transcripts
    from compbench.decide.summary import summary_table
    from compbench.run.write import write_run

    dataset = default_dataset()
    run_dir = ROOT / "out" / "demo" / "run"
    spec = demo_spec(dataset)
    shown = dataset.relative_to(ROOT) if dataset.is_relative_to(ROOT) else dataset
    print(f"compbench demo: {shown} through {len(spec.strategies)} strategies, as `compbench run` replays them: "
          "each transcript in its own tool's window, calibrated summarizer (offline heuristic)\n", flush=True)
    try:
        from compbench.decide.sweep import next_configurations

        manifest = write_run(run_dir, spec, str(dataset), iter_transcripts(str(dataset)), workers=2, force=True,
                             widen=next_configurations, again=lambda: iter_transcripts(str(dataset)))
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
    print("\n" + next_steps(Path(sys.executable).parent, run_dir))
    return 0


def _shown(p: Path) -> str:
    """``p`` relative to the working directory when it is under it (what a user types), else absolute."""
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


def next_steps(bindir: Path, run_dir: Path) -> str:
    """What to type after ``make demo``: the command lives in the project's virtual environment, which the
    user's shell does not have on its PATH (``compbench`` alone is "command not found"), then the same steps
    on their own logs."""
    activate, exe = _shown(bindir / "activate"), _shown(bindir / "compbench")
    return "\n".join([
        f"compbench is installed in {_shown(bindir.parent)}, not on your PATH: run `source {activate}` first (then "
        f"type `compbench ...`), or call `{exe}` directly.",
        "Next:",
        f"  {exe} compare {_shown(run_dir)}        the verdict and the ranking in your terminal",
        "On your own logs:",
        f"  {exe} datasets import ~/.claude/projects ~/.codex/sessions ~/.local/share/opencode --out mine "
        "--on-error skip-lines",
        f"  {exe} run mine --out out/mine                 every strategy, each log in its own tool's window",
        f"  {exe} compare out/mine --by source            per agent: its own strategy beside the best alternative",
        f"  {exe} report out/mine --out out/mine.html",
    ])


if __name__ == "__main__":
    sys.exit(main())
